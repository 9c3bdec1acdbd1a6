"""Small relations built from Python rows: catalogs, bounds, exchange sessions.

One statement per table, never one per row (DuckDB's ``executemany`` costs about 0.7 ms
a row). On DuckDB up to tens of thousands of rows go in as one list parameter per column
(``unnest($c0)``: 251 exchange sessions in 10 ms, where the same rows as SQL literals took
40 ms to parse); on the other engines up to a few thousand rows go in as literals. More
go in as an Arrow relation (which makes DuckDB import pandas, 0.25 s, so it is kept for
large tables). Values travel as exact text -- decimals in plain notation, instants in
ISO 8601 -- and are cast to the column's type in SQL, so nothing is rounded on the way.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import duckdb

from tscontract.sql.columns import ident, sql_string

LITERAL_ROWS = 5000  # above this many rows, an Arrow relation instead of literals
PARAMETER_ROWS = 50_000  # on DuckDB: above this many rows, an Arrow relation instead of list parameters
CATALOG_TABLE_SQL = "__tsc_catalog"  # the series catalog, one row per series (``__cat_<attribute>``)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal | float):
        return format(value if isinstance(value, Decimal) else Decimal(str(value)), "f")
    return str(value)


def _literal(value: Any) -> str:
    text = _text(value)
    return "NULL" if text is None else sql_string(text)


def register(con: Any, name: str, table: Any) -> None:
    """Register an Arrow ``table`` as view ``name`` on a DuckDB connection. DuckDB (2.x) refuses to
    register while the last ``execute`` has rows left unread (a ``fetchone`` of a one-row query
    leaves its end unread), so the pending result is run to its end first."""
    complete = getattr(con, "complete", None)  # DuckDB >= 2; older versions need no such step
    if complete is not None:
        complete()
    con.register(name, table)


def small_table(con: Any, table: str, columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> None:
    """Temp ``table`` of ``columns`` (name, SQL type) holding ``rows``, on a DuckDB or Spark connection."""
    names = [f"c{i}" for i in range(len(columns))]
    if rows and len(rows) <= PARAMETER_ROWS and isinstance(con, duckdb.DuckDBPyConnection):
        unnested = ", ".join(
            f"CAST(unnest(${c}) AS {sql}) AS {ident(name)}" for c, (name, sql) in zip(names, columns, strict=True)
        )
        texts = {c: [_text(row[i]) for row in rows] for i, c in enumerate(names)}
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {unnested}", texts)
        return
    casts = ", ".join(f"CAST({c} AS {sql}) AS {ident(name)}" for c, (name, sql) in zip(names, columns, strict=True))
    if len(rows) > getattr(con, "literal_rows", LITERAL_ROWS):  # a connection may take fewer as literals
        import pyarrow as pa  # with numpy, 0.3 s to import: only for a large table

        arrow = pa.table([pa.array([_text(r[i]) for r in rows], pa.string()) for i in range(len(columns))], names=names)
        register(con, f"{table}_rows", arrow)
        relation = f"{table}_rows"
    elif rows:
        values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
        relation = f"(VALUES {values}) AS v({', '.join(names)})"
    else:
        relation = f"(SELECT {', '.join(f'NULL AS {c}' for c in names)}) WHERE FALSE"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {casts} FROM {relation}")
