"""Engines execute a CheckPlan. ``duckdb`` is embedded and the default."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from tscontract.contract.catalog import Catalog, load_catalog
from tscontract.contract.loader import load_contract
from tscontract.contract.model import Contract
from tscontract.errors import InputError
from tscontract.plan.checks import build_plan
from tscontract.report.model import ValidationReport

ENGINES = ("duckdb",)


def validate(
    contract: Contract | str | Path,
    data: Any,
    *,
    catalog: Catalog | str | Path | None = None,
    now: datetime | None = None,
    engine: str = "duckdb",
    examples: int = 5,
    bounds: Any = None,
    progress: Any = None,
) -> ValidationReport:
    """Validate ``data`` against every clause of ``contract``; a lazy report of all failures.

    ``data`` is a path or list of paths (Parquet, CSV, JSON lines), a
    ``db.duckdb::table`` reference, or a pandas / polars DataFrame or Arrow table.
    ``now`` is the instant freshness is judged at (default: the current time).
    """
    if not isinstance(contract, Contract):
        contract = load_contract(contract)
    if catalog is not None and not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    if engine != "duckdb":
        raise InputError(f"unknown engine {engine!r}; available: {', '.join(ENGINES)}")
    from tscontract.engines.duckdb import DuckDBEngine

    plan = build_plan(contract, catalog, bounds)
    return DuckDBEngine().run(plan, data, now=now, examples=examples, progress=progress)
