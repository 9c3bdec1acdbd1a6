"""The engines' physical type names agree with the type table's SQL types."""

from __future__ import annotations

import pytest

from tscontract.typemap.physical import ARROW_POSTGRES, CLICKHOUSE_NAMES, POSTGRES_NAMES, SPARK_NAMES
from tscontract.typemap.table import TABLE


def test_postgres_store_types_read_back_as_the_ir_types() -> None:
    # a contract type stored in PostgreSQL (the gate's store) is judged as the IR's type, but for
    # int8 (PostgreSQL has no 1-byte integer: SMALLINT) and FLOAT/REAL (DuckDB's FLOAT is PostgreSQL's real)
    for key, cells in TABLE.items():
        if "{" in cells.postgres or key in ("enum", "timestamp", "int8"):
            continue
        assert POSTGRES_NAMES[cells.postgres.lower()] == cells.duckdb, key
    assert POSTGRES_NAMES["smallint"] == TABLE["int16"].duckdb


def test_every_engine_names_the_ir_types() -> None:
    ir = {cells.duckdb for cells in TABLE.values()} | {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"}
    unsigned = {"HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}  # judged by their range
    for names in (POSTGRES_NAMES, CLICKHOUSE_NAMES, SPARK_NAMES):
        assert set(names.values()) - unsigned <= ir


def test_arrow_loads_into_the_store_types() -> None:
    for arrow, pg in ARROW_POSTGRES.items():
        assert pg.upper() in {cells.postgres for cells in TABLE.values()}, arrow


def test_engine_functions_use_the_tables() -> None:
    from tscontract.engines.chdb import duckdb_type as clickhouse
    from tscontract.engines.postgres import duckdb_type as postgres

    assert postgres("timestamp(3) with time zone") == "TIMESTAMP WITH TIME ZONE"
    assert postgres("real") == "FLOAT"
    assert clickhouse("Nullable(Int16)") == "SMALLINT"
    assert clickhouse("LowCardinality(FixedString(3))") == "VARCHAR"


def test_spark_types() -> None:
    types = pytest.importorskip("pyspark.sql.types")
    from tscontract.engines.spark import _duckdb_type

    assert _duckdb_type(types.TimestampNTZType()) == "TIMESTAMP"
    assert _duckdb_type(types.TimestampType()) == "TIMESTAMP WITH TIME ZONE"
    assert _duckdb_type(types.ByteType()) == "TINYINT"
    assert _duckdb_type(types.DecimalType(18, 8)) == "DECIMAL(18,8)"


def test_duckdb_int_bits_agree_with_the_table() -> None:
    from tscontract.typemap.physical import DUCKDB_INT_BITS

    for bits in (8, 16, 32, 64):
        assert DUCKDB_INT_BITS[TABLE[f"int{bits}"].duckdb] == bits
