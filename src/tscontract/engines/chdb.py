"""The CheckPlan on in-process ClickHouse (chdb): the same checks, the same SQL, generated for ClickHouse.

:class:`ChdbConnection` stands where the embedded engine's DuckDB connection
stands. The validation run (engines/duckdb.py) issues its statements to it; each
is generated for ClickHouse by sql/dialects.py (TscClickHouse) and run in one chdb session
(time zone UTC, SQL's NULL semantics). Temporary tables are ``Memory`` tables
of that session, views its views; results come back as Arrow, so instants arrive
as UTC and decimals exact.

The data is Parquet files, read where they are by ClickHouse's ``file()`` (a DataFrame or
Arrow table is written to one temporary Parquet file first). Rows
are numbered as the files hold them (``_row_number``, from 0 in each file, after
the rows of the files before it), so failing examples name the rows DuckDB names.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import sqlglot.expressions as exp

from tscontract.engines.base import Progress, SharedRun, shown_data
from tscontract.engines.connection import memory_limit
from tscontract.engines.inputs.sources import SOURCE_VIEW, Source, _to_arrow, file_kind, paths_of
from tscontract.engines.run import HANDLERS
from tscontract.engines.sandbox import SqlTimeout, contract_sql_timeout_s
from tscontract.engines.translated import TranslatedConnection
from tscontract.errors import InputError, display_path
from tscontract.plan.checks import CheckPlan
from tscontract.plan.result import ValidationReport
from tscontract.shown import engine_message
from tscontract.sql.columns import ident, sql_string
from tscontract.sql.dialects import TscClickHouse, transpile
from tscontract.typemap.physical import CLICKHOUSE_NAMES

# SQL's NULL semantics where ClickHouse's defaults differ: an outer join's missing side is NULL (not
# the type's default), an aggregate over no row is NULL (not 0), a cast keeps NULL; instants in UTC;
# a name in a query is the input's column, not an alias of the same SELECT (``x AS x`` then ``CAST(x ...)``);
# every column of a file may hold NULL, as in DuckDB, whatever the file says (a required Parquet column
# would be a column whose lag() at a series' first point is 1970, not NULL)
SETTINGS = {
    "schema_inference_make_columns_nullable": "1",
    "prefer_column_name_to_alias": "1",
    "session_timezone": "'UTC'",
    "join_use_nulls": "1",
    "aggregate_functions_null_for_empty": "1",
    "cast_keep_nullable": "1",
    "union_default_mode": "'ALL'",
}


_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "KI": 2**10, "MI": 2**20, "GI": 2**30, "TI": 2**40}


def memory_bytes(limit: str) -> int:
    """The memory limit (``--memory-limit``, ``TSCONTRACT_MEMORY_LIMIT``: 512MB, 2GiB, 80%) in bytes."""
    import os

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%|[KMGT]I?)?B?\s*", limit.upper())
    if match is None or float(match[1]) <= 0:
        raise InputError(f"memory limit {limit!r}: give a size such as 512MB, 2GiB or 80% (--memory-limit)")
    if match[2] == "%":
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * float(match[1]) / 100)
    return int(float(match[1]) * _UNITS[match[2] or ""])


def duckdb_type(ch_type: str) -> str:
    """A ClickHouse column type named as the column checks name physical types (DuckDB's names)."""
    base = ch_type
    while match := re.fullmatch(r"(?:Nullable|LowCardinality)\((.*)\)", base):
        base = match[1]
    base = re.sub(r"^FixedString\(\d+\)$", "FixedString", base)
    if base in CLICKHOUSE_NAMES:
        return CLICKHOUSE_NAMES[base]
    match = re.fullmatch(r"Decimal(?:32|64|128|256)?\((\d+), *(\d+)\)", base)
    if match:
        return f"DECIMAL({match[1]},{match[2]})"
    match = re.fullmatch(r"DateTime(?:64)?(?:\(\s*(?:\d+\s*)?(?:,\s*)?('([^']*)')?\s*\))?", base)
    if match:  # an instant where the file says it is one (UTC-adjusted); else a wall-clock time with no zone
        digits = re.match(r"DateTime64\(\s*(\d+)", base)
        nanos = bool(digits and int(digits[1]) > 6)  # checked to the nanosecond and shown in full, as DuckDB does
        if match[2]:
            return "TIMESTAMPTZ_NS" if nanos else "TIMESTAMP WITH TIME ZONE"
        return "TIMESTAMP_NS" if nanos else "TIMESTAMP"
    return base.upper()


# ---------------------------------------------------------------------------- connection
class ChdbConnection(TranslatedConnection):
    """The subset of a DuckDB connection the validation run uses, on a chdb session."""

    engine_name = "chdb"
    # small tables from Python above this many rows go in as Arrow (relations.small_table): sqlglot takes
    # about a second to parse and generate a catalog of 500 series as literals, a Parquet file 20 ms
    literal_rows = 100

    def __init__(self) -> None:
        try:
            from chdb import session
        except ImportError:
            raise InputError("the chdb engine needs chdb: pip install 'tscontract[chdb]'") from None
        self.session = session.Session()
        self.columns: dict[str, str] = {}  # the source's, with their DuckDB types
        self.untyped: set[str] = set()  # views with a column that is NULL throughout (no storable type)
        self.statements: list[str] = []  # as run, for a post-mortem and the tests
        # the memory DuckDB may use bounds ClickHouse's too; aggregates and sorts spill to disk from half of it
        limit = memory_bytes(memory_limit())
        spill = f"max_bytes_before_external_group_by = {limit // 2}, max_bytes_before_external_sort = {limit // 2}"
        settings = ", ".join(f"{k} = {v}" for k, v in SETTINGS.items())
        self.run(f"SET {settings}, max_memory_usage = {limit}, {spill}")
        self.run("CREATE DATABASE IF NOT EXISTS __tsc")
        self.run("USE __tsc")

    def run(self, sql: str) -> list[tuple[Any, ...]]:
        """ClickHouse ``sql`` as is; the rows it returns."""
        self.statements.append(sql)
        table = self.session.query(sql, "ArrowTable")
        if table is None or not table.num_columns:
            return []
        columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
        return list(zip(*columns, strict=True))

    def untrusted(self, sql: str) -> list[tuple[Any, ...]]:
        """A contract's own query, stopped by ClickHouse after ``TSCONTRACT_SQL_TIMEOUT`` seconds (SqlTimeout)."""
        seconds = contract_sql_timeout_s()
        query = transpile(sql, TscClickHouse(columns=self.columns))
        try:
            return self.run(f"{query} SETTINGS max_execution_time = {seconds:g}, timeout_overflow_mode = 'throw'")
        except Exception as exc:
            if "TIMEOUT_EXCEEDED" in str(exc) or "Timeout exceeded" in str(exc):
                raise SqlTimeout(seconds) from None
            raise

    def create(self, kind: str, name: str, query: exp.Expression) -> None:
        self.run(f"DROP {kind} IF EXISTS {ident(name)}")
        sql = transpile(query, TscClickHouse(columns=self.columns))
        # a column that is NULL throughout (DuckDB's bare NULL): ClickHouse cannot store its type
        untyped = any(
            isinstance(e.unalias(), exp.Null) for select in query.find_all(exp.Select) for e in select.expressions
        ) or any(t.name in self.untyped for t in query.find_all(exp.Table))
        if kind == "VIEW":
            self.run(f"CREATE VIEW {ident(name)} AS {sql}")
            if untyped:
                self.untyped.add(name)
        else:
            self.run(f"CREATE TABLE {ident(name)} ENGINE = Memory AS {self.storable(sql) if untyped else sql}")

    def storable(self, sql: str) -> str:
        """``sql`` with a column that is NULL on every row typed as text (DuckDB's bare NULL is storable)."""
        untyped = [str(r[0]) for r in self.run(f"DESCRIBE ({sql})") if str(r[1]) == "Nullable(Nothing)"]
        if not untyped:
            return sql
        typed = ", ".join(f"CAST({ident(c)} AS Nullable(String)) AS {ident(c)}" for c in untyped)
        return f"SELECT * REPLACE ({typed}) FROM ({sql})"

    def query(self, tree: exp.Expr) -> list[tuple[Any, ...]]:
        return self.run(transpile(tree, TscClickHouse(columns=self.columns)))

    def register(self, name: str, table: Any) -> None:
        """An Arrow table as a table (relations.small_table, for large ones), through a Parquet file."""
        import pyarrow.parquet as pq

        self.run(f"DROP TABLE IF EXISTS {ident(name)}")
        with tempfile.TemporaryDirectory(prefix="tscontract-chdb-") as tmp:
            path = Path(tmp) / "rows.parquet"
            pq.write_table(table, path)
            self.run(f"CREATE TABLE {ident(name)} ENGINE = Memory AS SELECT * FROM {_file(path)}")

    def close(self) -> None:
        self.session.close()


# ---------------------------------------------------------------------------- source
def open_chdb_source(con: ChdbConnection, data: Any, shown: list[str] | None = None) -> Source:
    """Parquet files as the view ``__tsc_source``, columns by name, rows numbered (``__row``) in file order.

    ``shown``: how the report names the data (default: the files).
    """
    items = [data] if isinstance(data, str | Path) else list(data)
    if not items:
        raise InputError("no data given")
    paths = paths_of(items)
    files = [display_path(p) for p in paths]
    if file_kind(paths) != "parquet":
        raise InputError(f"the chdb engine reads Parquet files: {', '.join(files)}")
    schemas: list[dict[str, str]] = []
    counts: list[int] = []
    for path, name in zip(paths, files, strict=True):
        if path.stat().st_size == 0:
            raise InputError(f"{name}: empty file")
        table = _file(path)
        try:
            schema = {str(r[0]): str(r[1]) for r in con.run(f"DESCRIBE TABLE {table}")}
            # ClickHouse reads a timestamp not adjusted to UTC as UTC: the file's own schema says which are naive
            for column, digits in _naive_timestamps(path).items():
                schema[column] = f"DateTime64({digits})"
            schemas.append(schema)
            counts.append(int(con.run(f"SELECT count() FROM {table}")[0][0]))
        except Exception as exc:
            raise InputError(f"cannot read {name}: {engine_message(exc)}") from None
    columns: dict[str, str] = {}
    for schema in schemas:
        for column, ch_type in schema.items():
            columns.setdefault(column, ch_type)
    parts, offset = [], 1
    for path, schema, count in zip(paths, schemas, counts, strict=True):
        selects = [f"_row_number + {offset} AS __row"]
        for column, ch_type in columns.items():
            typed = ch_type if ch_type.startswith("Nullable(") else f"Nullable({ch_type})"
            selects.append(ident(column) if column in schema else f"CAST(NULL AS {typed}) AS {ident(column)}")
        parts.append(f"SELECT {', '.join(selects)} FROM {_file(path)}")
        offset += count
    con.columns = {c: duckdb_type(t) for c, t in columns.items()}
    con.run(f"DROP VIEW IF EXISTS {SOURCE_VIEW}")
    con.run(f"CREATE VIEW {SOURCE_VIEW} AS {' UNION ALL '.join(parts)}")
    return Source(dict(con.columns), text=False, has_row_number=True, description=shown or files)


def _open_data(con: ChdbConnection, data: Any, tmp: Path) -> Source:
    """Parquet files as they are; a pandas / polars DataFrame or Arrow table as one Parquet file in ``tmp``."""
    arrow = _to_arrow(data)
    if arrow is None:
        return open_chdb_source(con, data)
    import pyarrow.parquet as pq

    path = tmp / "data.parquet"
    pq.write_table(arrow, path)
    return open_chdb_source(con, path, [f"<{type(data).__name__}>"])


def _naive_timestamps(path: Path) -> dict[str, int]:
    """The file's timestamp columns without a zone, and their fraction digits (9 for nanoseconds, else 6)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return {
        f.name: 9 if f.type.unit == "ns" else 6
        for f in pq.read_schema(path)
        if pa.types.is_timestamp(f.type) and f.type.tz is None
    }


def _file(path: Path) -> str:
    return f"file({sql_string(str(path.resolve()))}, Parquet)"


# ---------------------------------------------------------------------------- engine
class ChdbEngine(SharedRun):
    """Executes a :class:`CheckPlan` on in-process ClickHouse through the embedded engine's validation run."""

    name = "chdb"
    HANDLERS = HANDLERS  # the validation run judges every kind (engines/run/)

    def run(self, plan: CheckPlan, data: Any, **options: Any) -> ValidationReport:
        with tempfile.TemporaryDirectory(prefix="tscontract-chdb-") as tmp:  # a frame is written as Parquet here
            self.tmp = Path(tmp)
            return super().run(plan, data, **options)

    def connect(self, data: Any, progress: Progress) -> ChdbConnection:
        return ChdbConnection()

    def open(self, con: ChdbConnection, data: Any, plan: CheckPlan) -> Source:
        return _open_data(con, data, self.tmp)

    def refused(self, exc: Exception, data: Any) -> InputError | None:
        if not type(exc).__module__.startswith("chdb"):
            return None
        return InputError(f"chdb could not validate {shown_data(data)}: {engine_message(exc)}")
