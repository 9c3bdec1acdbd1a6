"""Engines execute a CheckPlan. ``duckdb`` is embedded and the default.

``ENGINES`` maps each engine's name to its ``"module:Class"`` (an :class:`~tscontract.engines.base.Engine`),
imported on first use: start-up stays small and an engine's dependencies (pyspark, psycopg, chdb) load
only when it runs. An engine owns its options (``OPTIONS``); ``validate()`` hands them over by name.
"""

from __future__ import annotations

from datetime import datetime
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tscontract.contract.catalog import Catalog, instant_option, load_catalog
from tscontract.contract.loader import load_contract
from tscontract.contract.model import Contract
from tscontract.engines.inputs.tables import is_table_url, windowed
from tscontract.engines.urls import is_postgres_url
from tscontract.errors import InputError
from tscontract.plan.checks import build_plan
from tscontract.plan.result import ValidationReport

if TYPE_CHECKING:
    from tscontract.engines.base import Engine

ENGINES: dict[str, str] = {
    "duckdb": "tscontract.engines.duckdb:DuckDBEngine",
    "spark": "tscontract.engines.spark:SparkEngine",
    "postgres": "tscontract.engines.postgres:PostgresEngine",
    "chdb": "tscontract.engines.chdb:ChdbEngine",
}
# the options validate() names for the CLI's sake -> the engine option each one is
_OPTION_FLAGS = {"master": "--spark-master", "conf": "--spark-conf", "mapping": "--mapping"}


def engine_class(name: str) -> type[Engine]:
    """The engine called ``name``, imported now; an input error naming the engines for an unknown name."""
    if name not in ENGINES:
        raise InputError(f"unknown engine {name!r}; available: {', '.join(ENGINES)}")
    module, attr = ENGINES[name].split(":")
    found: type[Engine] = getattr(import_module(module), attr)
    return found


def make_engine(name: str, options: dict[str, Any]) -> Engine:
    """The engine ``name`` with ``options`` (None: not given); an option it does not take is an input error."""
    cls = engine_class(name)
    given = {k: v for k, v in options.items() if v is not None}
    for option in given:
        if option not in cls.OPTIONS:
            if option == "mapping":
                raise InputError("a mapping converts raw files in DuckDB: validate them with --engine duckdb")
            flag = _OPTION_FLAGS.get(option, option)
            raise InputError(f"{flag} is an option of another engine; the {name} engine takes none such")
    return cls(**given)


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

    ``data`` is a path or list of paths (Parquet, CSV, JSON lines; local or ``s3://bucket/prefix/*.parquet``),
    an ``iceberg://CATALOG/NAMESPACE.TABLE[@SNAPSHOT]`` or ``delta://PATH[@VERSION]`` table (whose rows in
    ``coverage`` alone are read, the window pushed down to the scan), a
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
    if engine == "duckdb" and is_postgres_url(data):  # the data lives in PostgreSQL: validate it there
        engine = "postgres"
    if is_table_url(data):  # an Iceberg or Delta table: --from/--to select the rows read (engines/inputs/tables.py)
        if engine not in ("duckdb", "spark"):
            raise InputError(f"{engine}: reads no iceberg:// or delta:// table; validate it with --engine duckdb")
        data = windowed(data, contract.time.column, coverage)
    options = {"master": spark_master, "conf": spark_conf, "mapping": mapping}
    if mapping is not None:
        from tscontract.engines.inputs.mapping import Mapping, load_mapping  # pydantic models: loaded when used

        options["mapping"] = mapping if isinstance(mapping, Mapping) else load_mapping(mapping)
    runner = make_engine(engine, options)
    plan = build_plan(contract, catalog, bounds, all_series=all_series)
    return runner.run(plan, data, now=now, examples=examples, progress=progress, coverage=coverage)
