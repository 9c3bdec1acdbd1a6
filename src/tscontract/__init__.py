"""tscontract: executable data contracts for time series.

The public API is small::

    from tscontract import load_contract, load_catalog, lint

    contract = load_contract("examples/plant_sensor/contract.yaml")
    catalog = load_catalog("examples/plant_sensor/catalog.yaml")
    report = lint(contract, catalog)
"""

from __future__ import annotations

__version__ = "0.1.0"

from tscontract.contract.catalog import Catalog, load_catalog, parse_catalog, parse_catalog_csv
from tscontract.contract.lint import LintReport, lint
from tscontract.contract.loader import load_contract, parse_contract
from tscontract.contract.model import Contract
from tscontract.engines import validate
from tscontract.errors import CatalogError, ContractError, InputError, TscontractError

__all__ = [
    "Catalog",
    "CatalogError",
    "Contract",
    "ContractError",
    "InputError",
    "LintReport",
    "TscontractError",
    "__version__",
    "lint",
    "load_catalog",
    "load_contract",
    "parse_catalog",
    "parse_catalog_csv",
    "parse_contract",
    "validate",
]
