"""SQL targets: the IR's DuckDB type and the PostgreSQL store's, and DuckDB's names read back."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given

from tests.typemap.conftest import DATA_TYPES, EXAMPLES
from tscontract.contract.types import DataType, parse_type
from tscontract.typemap.sql import pg_type, read_duckdb, sql_type


def _expected_back(dtype: DataType) -> str:
    """The documented losses: TIMESTAMPTZ counts microseconds, VARCHAR has no members."""
    if dtype.kind == "timestamp":
        return "timestamp_us_utc"
    if dtype.kind == "enum":
        return "string"
    return parse_type(dtype.text).text


@given(DATA_TYPES)
def test_duckdb_round_trip(dtype: DataType) -> None:
    assert read_duckdb(sql_type(dtype)) == _expected_back(dtype)


@pytest.mark.parametrize("text", EXAMPLES)
def test_duckdb_names_what_duckdb_describes(text: str) -> None:
    dtype = parse_type(text)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t (c {sql_type(dtype)})")
    described = con.execute("SELECT data_type FROM information_schema.columns WHERE table_name = 't'").fetchone()
    assert described is not None
    assert read_duckdb(described[0]) == _expected_back(dtype)


@pytest.mark.parametrize(
    ("text", "duck", "pg"),
    [
        ("string", "VARCHAR", "TEXT"),
        ("enum[a, b]", "VARCHAR", "TEXT"),
        ("bool", "BOOLEAN", "BOOLEAN"),
        ("int8", "TINYINT", "SMALLINT"),  # PostgreSQL has no 1-byte integer
        ("int16", "SMALLINT", "SMALLINT"),
        ("int32", "INTEGER", "INTEGER"),
        ("int64", "BIGINT", "BIGINT"),
        ("float32", "FLOAT", "REAL"),
        ("float64", "DOUBLE", "DOUBLE PRECISION"),
        ("decimal(18,8)", "DECIMAL(18,8)", "NUMERIC(18,8)"),
        ("timestamp_ms_utc", "TIMESTAMPTZ", "TIMESTAMPTZ"),
        ("date", "DATE", "DATE"),
        ("bytes", "BLOB", "BYTEA"),
    ],
)
def test_sql_spellings(text: str, duck: str, pg: str) -> None:
    assert (sql_type(parse_type(text)), pg_type(parse_type(text))) == (duck, pg)


def test_the_ir_and_dbt_use_the_table() -> None:
    from tscontract.sql import columns

    assert columns.sql_type is sql_type
