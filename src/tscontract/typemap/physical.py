"""Each engine's physical type names in the IR's names (DuckDB's), which the typed columns judge.

An engine reads its source's column types in its own names (PostgreSQL's ``format_type``, ClickHouse's,
Spark's type classes) and names them as DuckDB does, so one set of column checks
(:mod:`tscontract.sql.columns`) judges every engine's physical types against the contract's. Loading
Arrow into PostgreSQL goes the other way (:data:`ARROW_POSTGRES`)."""

from __future__ import annotations

from typing import Final

# PostgreSQL's format_type() names, without a length or precision
POSTGRES_NAMES: Final[dict[str, str]] = {
    "text": "VARCHAR",
    "character varying": "VARCHAR",
    "character": "VARCHAR",
    "name": "VARCHAR",
    "citext": "VARCHAR",
    "boolean": "BOOLEAN",
    "smallint": "SMALLINT",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "real": "FLOAT",
    "double precision": "DOUBLE",
    "date": "DATE",
    "bytea": "BLOB",
    "timestamp with time zone": "TIMESTAMP WITH TIME ZONE",  # an instant
    "timestamp without time zone": "TIMESTAMP",  # a wall-clock time with no zone: naive
}
# ClickHouse's names, without Nullable/LowCardinality and a FixedString's length
CLICKHOUSE_NAMES: Final[dict[str, str]] = {
    "String": "VARCHAR",
    "FixedString": "VARCHAR",
    "Bool": "BOOLEAN",
    "Int8": "TINYINT",
    "Int16": "SMALLINT",
    "Int32": "INTEGER",
    "Int64": "BIGINT",
    "Int128": "HUGEINT",
    "UInt8": "UTINYINT",
    "UInt16": "USMALLINT",
    "UInt32": "UINTEGER",
    "UInt64": "UBIGINT",
    "Float32": "FLOAT",
    "Float64": "DOUBLE",
    "Date": "DATE",
    "Date32": "DATE",
}
# pyspark.sql.types classes, by name, in the order they are tried (isinstance)
SPARK_NAMES: Final[dict[str, str]] = {
    "StringType": "VARCHAR",
    "BooleanType": "BOOLEAN",
    "ByteType": "TINYINT",
    "ShortType": "SMALLINT",
    "IntegerType": "INTEGER",
    "LongType": "BIGINT",
    "FloatType": "FLOAT",
    "DoubleType": "DOUBLE",
    "DateType": "DATE",
    "BinaryType": "BLOB",
    "TimestampType": "TIMESTAMP WITH TIME ZONE",  # Spark's TIMESTAMP is an instant
    "TimestampNTZType": "TIMESTAMP",  # a wall-clock time with no zone: naive
}
# an Arrow type (as str() writes it) -> the PostgreSQL column type it is loaded as
ARROW_POSTGRES: Final[dict[str, str]] = {
    "int64": "bigint",
    "int32": "integer",
    "int16": "smallint",
    "bool": "boolean",
    "double": "double precision",
    "float": "real",
    "date32[day]": "date",
}

# DuckDB's integer types -> the bits of the signed contract integer that holds every value (an unsigned
# type needs the next wider one): a declared int<bits> takes a physical type of at most as many
DUCKDB_INT_BITS: Final[dict[str, int]] = {
    "TINYINT": 8,
    "SMALLINT": 16,
    "INTEGER": 32,
    "BIGINT": 64,
    "UTINYINT": 16,
    "USMALLINT": 32,
    "UINTEGER": 64,
    "UBIGINT": 128,
    "HUGEINT": 128,
    "UHUGEINT": 256,
}
