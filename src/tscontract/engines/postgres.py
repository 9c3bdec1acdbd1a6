"""The CheckPlan inside PostgreSQL: the data stays in the database.

:class:`PostgresConnection` stands where the embedded engine's DuckDB connection
stands. The validation run (engines/duckdb.py) issues its statements to it; each
is generated for PostgreSQL by sql/dialects.py (TscPostgres) and runs in one session
(time zone UTC). Temporary tables are PostgreSQL ``TEMP`` tables of that session;
the small tables the run builds from Python (catalog, calendars, bounds) go in
with ``COPY``. What comes back to Python: counts, the failing examples, and the
few aggregates the time checks read -- never the table's rows.

The table is the source view ``__tsc_source``; its rows are numbered
(``__row``, the row number failing examples name) in physical order, by
``ctid``: for a table loaded once and only appended to, the order it was
loaded in (a CSV copied in keeps its line order). Updates, ``VACUUM FULL`` or
``CLUSTER`` move rows, and with them their numbers. A view or foreign table has
no ``ctid``: its rows are numbered in the contract key's order.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import sqlglot.expressions as exp

from tscontract.engines.base import Progress, SharedRun
from tscontract.engines.inputs.sources import SOURCE_VIEW, Source
from tscontract.engines.run import HANDLERS
from tscontract.engines.sandbox import contract_sql_timeout_s
from tscontract.engines.translated import TranslatedConnection
from tscontract.engines.urls import table_url
from tscontract.errors import InputError
from tscontract.plan.checks import CheckPlan
from tscontract.shown import engine_message
from tscontract.sql.columns import ident
from tscontract.sql.dialects import TscPostgres, postgres_session_sql, transpile
from tscontract.typemap.physical import ARROW_POSTGRES, POSTGRES_NAMES

_NUMERIC_OID = 1700


def duckdb_type(pg_type: str) -> str:
    """A PostgreSQL column type (``format_type``) named as the column checks name physical types."""
    base = re.sub(r"\(\d+\)", "", pg_type)  # timestamp(3) with time zone, varchar(12)
    if base in POSTGRES_NAMES:
        return POSTGRES_NAMES[base]
    match = re.fullmatch(r"numeric\((\d+),(\d+)\)", pg_type)
    if match:
        return f"DECIMAL({match[1]},{match[2]})"
    return pg_type.upper()  # numeric without precision, json, uuid, ...: no declared type takes them as is


def split_url(url: str) -> tuple[str, list[str], str]:
    """``postgresql://...#schema.table`` as (connection URL, [schema,] table, the URL shown without password)."""
    conninfo, sep, table = url.partition("#")
    if not sep or not table:
        raise InputError(
            f"{shown_url(conninfo)}: name the table after '#': postgresql://user@host:port/db#schema.table"
        )
    parts = table.split(".")
    if len(parts) > 2 or not all(parts):
        raise InputError(f"{table!r}: a table is named table or schema.table")
    return conninfo, parts, f"{shown_url(conninfo)}#{table}"


def shown_url(conninfo: str) -> str:
    """The connection URL as messages and reports show it: no password."""
    parts = urlsplit(conninfo)
    if parts.password is None:
        return conninfo
    host = parts.hostname or ""
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, parts.query, parts.fragment))


def contract_sql_timeout_ms() -> int:
    """How long one SQL check may run on the server (``TSCONTRACT_SQL_TIMEOUT`` seconds, else 300)."""
    return max(1, int(contract_sql_timeout_s() * 1000))


# ---------------------------------------------------------------------------- connection
class PostgresConnection(TranslatedConnection):
    """The subset of a DuckDB connection the validation run uses, on a PostgreSQL session."""

    engine_name = "PostgreSQL"

    def __init__(self, conninfo: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise InputError("the PostgreSQL engine needs psycopg: pip install 'tscontract[postgres]'") from None
        try:
            self.pg = psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
        except Exception as exc:
            raise InputError(f"cannot connect to {shown_url(conninfo)}: {engine_message(exc)}") from None
        self.columns: dict[str, str] = {}  # the source's, with their DuckDB types
        self.statements: list[str] = []  # as run, for a post-mortem and the tests
        self.rows_fetched = 0  # rows that came back to Python: counts, examples, aggregates
        self.pg.execute("SET TimeZone = 'UTC'")
        self.pg.execute("SET DateStyle = 'ISO'")
        for sql in postgres_session_sql():
            self.pg.execute(sql)

    def run(self, sql: str) -> list[tuple[Any, ...]]:
        """PostgreSQL ``sql`` as is; the rows it returns (none for a statement that returns none)."""
        self.statements.append(sql)
        with self.pg.cursor() as cur:
            cur.execute(sql.encode())
            if cur.description is None:
                return []
            # an unconstrained NUMERIC integer (sum of BIGINTs, div) is what DuckDB returns as an integer
            plain = [d.type_code == _NUMERIC_OID and d.precision is None for d in cur.description]
            self.rows_fetched += cur.rowcount
            return [tuple(_integer(v) if p else v for v, p in zip(row, plain, strict=True)) for row in cur.fetchall()]

    def untrusted(self, sql: str) -> list[tuple[Any, ...]]:
        """A contract's own query in a READ ONLY transaction with a statement timeout: whatever
        slipped past the allow-list can neither write nor hold the server (SECURITY.md)."""
        with self.pg.transaction():
            self.pg.execute("SET TRANSACTION READ ONLY")
            self.pg.execute(f"SET LOCAL statement_timeout = {contract_sql_timeout_ms()}")
            return self.execute(sql).fetchall()

    def create(self, kind: str, name: str, query: exp.Expression) -> None:
        self.run(f"DROP {kind} IF EXISTS {ident(name)}")
        self.run(f"CREATE TEMP {kind} {ident(name)} AS {transpile(query, TscPostgres(columns=self.columns))}")

    def query(self, tree: exp.Expr) -> list[tuple[Any, ...]]:
        return self.run(transpile(tree, TscPostgres(columns=self.columns)))

    def register(self, name: str, table: Any) -> None:
        """An Arrow table of text columns as a temporary table (relations.small_table, for large ones)."""
        self.run(f"DROP TABLE IF EXISTS {ident(name)}")
        copy_arrow(self.pg, ident(name), table, temp=True)

    def close(self) -> None:
        self.pg.close()


def postgres_type(arrow: Any) -> str:
    """The PostgreSQL column type an Arrow type is loaded as (``timestamp[tz=UTC]`` is timestamptz)."""
    import pyarrow as pa

    if pa.types.is_decimal(arrow):
        return f"numeric({arrow.precision},{arrow.scale})"
    if pa.types.is_timestamp(arrow):
        return "timestamptz" if arrow.tz else "timestamp"
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "text"
    found = ARROW_POSTGRES.get(str(arrow))
    if found is None:
        raise InputError(f"no PostgreSQL type for Arrow {arrow}")
    return found


def copy_arrow(pg: Any, name: str, table: Any, types: dict[str, str] | None = None, *, temp: bool = False) -> None:
    """Create table ``name`` (SQL, quoted as needed) holding Arrow ``table``'s rows in order, by ``COPY``.

    Column types follow :func:`postgres_type` unless ``types`` names one. Loading test and
    bench data, and the run's larger helper tables: never the data being validated.
    """
    import pyarrow.csv as pacsv

    columns = ", ".join(f"{ident(f.name)} {(types or {}).get(f.name) or postgres_type(f.type)}" for f in table.schema)
    pg.execute(f"CREATE {'TEMP ' if temp else ''}TABLE {name} ({columns})".encode())
    # as CSV, every value quoted and a null unquoted-empty: an empty text stays an empty text
    buffer = io.BytesIO()
    pacsv.write_csv(table, buffer, pacsv.WriteOptions(include_header=False, quoting_style="all_valid"))
    with pg.cursor() as cur, cur.copy(f"COPY {name} FROM STDIN (FORMAT csv)".encode()) as copy:
        copy.write(buffer.getvalue())


def _integer(value: Any) -> Any:
    if isinstance(value, Decimal) and value.is_finite() and value.as_tuple().exponent == 0:
        return int(value)
    return value


# ---------------------------------------------------------------------------- source
def open_postgres_source(con: PostgresConnection, url: str, key: Sequence[str]) -> Source:
    """The table ``url`` names as the view ``__tsc_source``, its rows numbered (``__row``)."""
    _, parts, shown = split_url(url)
    qualified = ".".join(ident(p) for p in parts)
    found = con.run(f"SELECT c.oid, c.relkind FROM pg_class c WHERE c.oid = to_regclass({_literal(qualified)})")
    if not found:
        raise InputError(f"{shown}: no such table")
    oid, relkind = found[0]
    rows = con.run(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        f"WHERE attrelid = {int(oid)} AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
    )
    columns = {str(name): duckdb_type(str(pg_type)) for name, pg_type in rows}
    con.columns = columns
    if relkind in ("r", "m", "p"):  # a table, materialized view, partitioned table: physical order
        order = "tableoid, ctid" if relkind == "p" else "ctid"
    else:
        order = ", ".join(ident(k) for k in key if k in columns) or "1"
    con.run(f"DROP VIEW IF EXISTS {SOURCE_VIEW}")
    con.run(
        f"CREATE TEMP VIEW {SOURCE_VIEW} AS SELECT row_number() OVER (ORDER BY {order}) AS __row, * FROM {qualified}"
    )
    return Source(columns, text=False, has_row_number=True, description=[shown])


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------------------- engine
class PostgresEngine(SharedRun):
    """Executes a :class:`CheckPlan` inside PostgreSQL through the embedded engine's validation run."""

    name = "postgres"
    HANDLERS = HANDLERS  # the validation run judges every kind (engines/run/)

    def connect(self, data: Any, progress: Progress) -> PostgresConnection:
        conninfo, _, _ = split_url(_table(data))
        progress("connecting to PostgreSQL")
        return PostgresConnection(conninfo)

    def open(self, con: PostgresConnection, data: Any, plan: CheckPlan) -> Source:
        return open_postgres_source(con, _table(data), plan.contract.key)

    def refused(self, exc: Exception, data: Any) -> InputError | None:
        if not type(exc).__module__.startswith("psycopg"):
            return None
        # the server refused (permissions, a value it cannot read, a lost connection): one line, exit 2
        return InputError(f"PostgreSQL could not validate {split_url(_table(data))[2]}: {engine_message(exc)}")


def _table(data: Any) -> str:
    url = table_url(data)
    if url is None:
        raise InputError("the PostgreSQL engine validates one table: postgresql://user@host:port/db#schema.table")
    return url
