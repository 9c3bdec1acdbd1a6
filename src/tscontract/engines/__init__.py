"""Engines execute a CheckPlan. ``duckdb`` is embedded and the default."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from tscontract.contract.catalog import Catalog, instant_option, load_catalog
from tscontract.contract.loader import load_contract
from tscontract.contract.model import Contract
from tscontract.errors import InputError
from tscontract.plan.checks import build_plan
from tscontract.plan.result import ValidationReport

ENGINES = ("duckdb", "spark", "postgres", "chdb")


def checked_coverage(
    coverage: tuple[datetime | None, datetime | None] | None,
) -> tuple[datetime | None, datetime | None] | None:
    """``coverage`` (``--from/--to``) when both ends are UTC-offset instants in order; else an input error."""
    if coverage is not None:
        start, end = coverage
        for moment in (start, end):
            if moment is not None and moment.tzinfo is None:
                raise InputError("coverage instants need a UTC offset")
        if start is not None and end is not None and start >= end:
            raise InputError("coverage: --from must be before --to")
    return coverage


def validate(
    contract: Contract | str | Path,
    data: Any,
    *,
    catalog: Catalog | str | Path | None = None,
    now: datetime | str | None = None,
    engine: str = "duckdb",
    examples: int = 5,
    bounds: Any = None,
    progress: Any = None,
    spark_master: str | None = None,
    spark_conf: dict[str, str] | None = None,
    coverage: tuple[datetime | None, datetime | None] | None = None,
    mapping: Any = None,
    all_series: bool = False,
) -> ValidationReport:
    """Validate ``data`` against every clause of ``contract``; a lazy report of all failures.

    ``data`` is a path or list of paths (Parquet, CSV, JSON lines), a
    ``db.duckdb::table`` reference, or a pandas / polars DataFrame (a polars LazyFrame is
    collected once) or Arrow table.
    ``now`` is the instant freshness is judged at (default: the current time): a timezone-aware
    datetime or RFC 3339 text (as ``--now``).
    ``engine="spark"`` runs the same plan on Spark (``spark_master``, default ``local[*]``;
    ``spark_conf`` settings for the session); ``data`` may then also be ``spark:TABLE`` or
    a pyspark DataFrame.
    ``engine="postgres"`` runs the plan inside PostgreSQL on ``data`` =
    ``postgresql://user@host:port/db#schema.table`` (a URL like that picks it by itself).
    ``engine="chdb"`` runs the plan on in-process ClickHouse (chdb) over Parquet files.
    ``coverage=(start, end)`` is the period the batch covers at least (``--from/--to``): cadence
    and completeness expect points over all of it, not only between each series' first and
    last point (by default: every session or completeness window the batch touches, whole).
    ``mapping`` (a mapping file or :class:`tscontract.engines.inputs.mapping.Mapping`): ``data`` is raw
    (a vendor's file), converted exactly as ``ingest --mapping`` converts it; DuckDB engine only.
    ``all_series``: every series of the catalog is expected (a store, not a batch of some series):
    one with no point fails freshness as never arrived.
    """
    checked_coverage(coverage)
    now = instant_option(now, "now")
    if not isinstance(contract, Contract):
        contract = load_contract(contract)
    if catalog is not None and not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    from tscontract.engines.postgres import is_postgres_url

    if engine == "duckdb" and is_postgres_url(data):  # the data lives in PostgreSQL: validate it there
        engine = "postgres"
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; available: {', '.join(ENGINES)}")
    plan = build_plan(contract, catalog, bounds, all_series=all_series)
    if mapping is not None:
        from tscontract.engines.duckdb import validate_mapped
        from tscontract.engines.inputs.mapping import Mapping, load_mapping

        if engine != "duckdb":
            raise InputError("a mapping converts raw files in DuckDB: validate them with --engine duckdb")
        loaded = mapping if isinstance(mapping, Mapping) else load_mapping(mapping)
        return validate_mapped(plan, data, loaded, now=now, examples=examples, progress=progress, coverage=coverage)
    if engine == "postgres":
        from tscontract.engines.postgres import PostgresEngine

        return PostgresEngine().run(plan, data, now=now, examples=examples, progress=progress, coverage=coverage)
    if engine == "chdb":
        from tscontract.engines.chdb import ChdbEngine

        return ChdbEngine().run(plan, data, now=now, examples=examples, progress=progress, coverage=coverage)
    if engine == "spark":
        from tscontract.engines.spark import SparkEngine

        return SparkEngine(spark_master, spark_conf).run(
            plan, data, now=now, examples=examples, progress=progress, coverage=coverage
        )
    from tscontract.engines.duckdb import DuckDBEngine

    return DuckDBEngine().run(plan, data, now=now, examples=examples, progress=progress, coverage=coverage)
