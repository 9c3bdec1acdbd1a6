"""The bundled examples as typed tables: an Arrow table for DuckDB, the same rows in PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from tscontract.contract.loader import load_contract
from tscontract.engines.columns import ident, sql_type
from tscontract.engines.sources import fetch_arrow


def typed_table(contract: Path, csv: Path) -> pa.Table:
    """``csv`` with each contract column cast to its declared type (a value that does not parse is NULL)."""
    fields = load_contract(contract).fields
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_csv('{csv}', all_varchar = true)").fetchall()]
    selects = [
        f"TRY_CAST({ident(n)} AS {sql_type(fields[n].type)}) AS {ident(n)}" if n in fields else ident(n) for n in names
    ]
    return fetch_arrow(con, f"SELECT {', '.join(selects)} FROM read_csv('{csv}', all_varchar = true)")


def pg_type(arrow: pa.DataType) -> str:
    if pa.types.is_decimal(arrow):
        return f"numeric({arrow.precision},{arrow.scale})"
    if pa.types.is_timestamp(arrow):
        return "timestamptz" if arrow.tz else "timestamp"
    simple = {
        pa.string(): "text",
        pa.large_string(): "text",
        pa.int64(): "bigint",
        pa.int32(): "integer",
        pa.int16(): "smallint",
        pa.bool_(): "boolean",
        pa.float64(): "double precision",
        pa.float32(): "real",
        pa.date32(): "date",
    }
    return simple[arrow]


def load_table(url: str, name: str, table: pa.Table, types: dict[str, str] | None = None) -> None:
    """``table`` as the PostgreSQL table ``name`` (``types`` overrides a column's SQL type), rows in order."""
    import psycopg

    columns = ", ".join(f"{ident(f.name)} {(types or {}).get(f.name) or pg_type(f.type)}" for f in table.schema)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"CREATE TABLE {name} ({columns})")
        values = [table.column(i).to_pylist() for i in range(table.num_columns)]
        with con.cursor() as cur, cur.copy(f"COPY {name} FROM STDIN") as copy:
            for row in zip(*values, strict=True):
                copy.write_row(row)
