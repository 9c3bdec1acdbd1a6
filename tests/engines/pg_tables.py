"""The bundled examples as typed tables: an Arrow table for DuckDB, the same rows in PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from tscontract.contract.loader import load_contract
from tscontract.engines.inputs.sources import fetch_arrow
from tscontract.engines.postgres import copy_arrow
from tscontract.sql.columns import ident, sql_type


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


def load_table(url: str, name: str, table: pa.Table, types: dict[str, str] | None = None) -> None:
    """``table`` as the PostgreSQL table ``name`` (``types`` overrides a column's SQL type), rows in order."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        copy_arrow(con, name, table, types)
