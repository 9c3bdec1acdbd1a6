"""tscontract: executable data contracts for time series.

The public API is small::

    from tscontract import load_contract, load_catalog, lint

    contract = load_contract("examples/plant_sensor/contract.yaml")
    catalog = load_catalog("examples/plant_sensor/catalog.yaml")
    report = lint(contract, catalog)

Each name is imported on first use (PEP 562), so ``import tscontract`` and
``tscontract --help`` do not pay for the contract reader (pydantic, lark, sqlglot) or
the engines.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_WHERE = {
    "Catalog": "tscontract.contract.catalog",
    "load_catalog": "tscontract.contract.catalog",
    "parse_catalog": "tscontract.contract.catalog",
    "parse_catalog_csv": "tscontract.contract.catalog",
    "LintReport": "tscontract.contract.lint",
    "lint": "tscontract.contract.lint",
    "load_contract": "tscontract.contract.loader",
    "parse_contract": "tscontract.contract.loader",
    "Contract": "tscontract.contract.model",
    "validate": "tscontract.engines",
    "export": "tscontract.interop.exports",
    "CatalogError": "tscontract.errors",
    "ContractError": "tscontract.errors",
    "InputError": "tscontract.errors",
    "TscontractError": "tscontract.errors",
}

if TYPE_CHECKING:
    from tscontract.contract.catalog import Catalog, load_catalog, parse_catalog, parse_catalog_csv
    from tscontract.contract.lint import LintReport, lint
    from tscontract.contract.loader import load_contract, parse_contract
    from tscontract.contract.model import Contract
    from tscontract.engines import validate
    from tscontract.errors import CatalogError, ContractError, InputError, TscontractError
    from tscontract.interop.exports import export

__all__ = [
    "Catalog",
    "CatalogError",
    "Contract",
    "ContractError",
    "InputError",
    "LintReport",
    "TscontractError",
    "__version__",
    "export",
    "lint",
    "load_catalog",
    "load_contract",
    "parse_catalog",
    "parse_catalog_csv",
    "parse_contract",
    "validate",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'tscontract' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value  # imported once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
