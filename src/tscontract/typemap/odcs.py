"""ODCS types of the one table (``logicalType``, ``physicalType``), and SQL type names read back.

The export writes the physical type in DuckDB's spelling; ``import odcs`` and the DDL and dbt imports
read any SQL dialect's names (:data:`SQL_NAMES`: the contract type each name states)."""

from __future__ import annotations

from typing import Final

from tscontract.contract.types import DataType
from tscontract.typemap.table import fill, row

# a timestamp's time unit as a Java date format's fraction (ODCS' logicalTypeOptions.format)
DATE_FORMAT_FRACTION: Final[dict[str, str]] = {"s": "", "ms": ".SSS", "us": ".SSSSSS", "ns": ".SSSSSSSSS"}


def physical_type(dtype: DataType) -> str:
    """The column's SQL type as DuckDB spells it (PostgreSQL reads it too, BLOB and TINYINT aside)."""
    return fill(row(dtype).odcs_physical, dtype)


def logical_type(dtype: DataType) -> tuple[str, dict[str, object]]:
    """ODCS' ``logicalType`` of ``dtype`` and its ``logicalTypeOptions``."""
    logical = row(dtype).odcs_logical
    kind = dtype.kind
    if kind == "int":
        return logical, {"format": f"i{dtype.bits or 64}"}
    if kind == "float":
        return logical, {"format": f"f{dtype.bits or 64}"}
    if kind == "timestamp":
        text = f"yyyy-MM-dd'T'HH:mm:ss{DATE_FORMAT_FRACTION[dtype.time_unit or 'ms']}'Z'"
        return logical, {"format": text, "timezone": True, "defaultTimezone": "Etc/UTC"}
    if kind == "date":
        return logical, {"format": "yyyy-MM-dd"}
    return logical, {}  # a decimal's precision and scale: the physicalType DECIMAL(p,s)


# SQL type names (lower case, as the dialects write them) -> the contract type each states; DuckDB's
# FLOAT is float32 but most dialects' FLOAT is a double: read as float64 (DuckDB's own name is REAL)
SQL_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "string": (
        "varchar",
        "char",
        "character",
        "character varying",
        "nvarchar",
        "nchar",
        "text",
        "string",
        "uuid",
        "clob",
        "varchar2",
        "nvarchar2",
        "citext",
        "str",
        "bpchar",
        "longtext",
        "mediumtext",
        "tinytext",
    ),
    "bool": ("boolean", "bool", "bit", "logical"),
    "int8": ("tinyint", "byte", "int1"),
    "int16": ("smallint", "int2", "short", "smallserial"),
    "int32": ("integer", "int", "int4", "serial", "mediumint"),
    "int64": ("bigint", "int8", "long", "bigserial", "int64", "integer64"),
    "float32": ("real", "float4", "float32"),
    "float64": ("double", "double precision", "float8", "float", "float64", "binary_double"),
    "date": ("date",),
    "bytes": ("bytes", "binary", "varbinary", "bytea", "blob", "longblob", "image"),
}
SQL_READS: Final[dict[str, str]] = {name: tsc for tsc, names in SQL_NAMES.items() for name in names}
# SQL's instant types (a timestamp with a zone) and its naive ones (wall-clock time, no zone)
ZONED_NAMES: Final = (
    "timestamptz",
    "timestamp with time zone",
    "timestamp_tz",
    "timestamp_ltz",
    "timestampltz",
    "datetimeoffset",
    "timestamp with local time zone",
    "datetime2 with time zone",
)
NAIVE_NAMES: Final = (
    "timestamp",
    "timestamp without time zone",
    "timestamp_ntz",
    "timestampntz",
    "datetime",
    "datetime2",
    "smalldatetime",
)

# MySQL's unsigned integers (as sqlglot names them): the next wider type, with >= 0
UNSIGNED_READS: Final[dict[str, str]] = {
    "utinyint": "int16",
    "usmallint": "int32",
    "umediumint": "int32",
    "uint": "int64",
    "ubigint": "decimal(20,0)",
}


def time_unit(digits: str | None) -> str:
    """The time unit of a SQL timestamp's fraction digits (``TIMESTAMP(3)``: ms); microseconds unstated."""
    if digits is None or not digits.isdigit():
        return "us"
    n = int(digits)
    return next(unit for limit, unit in ((0, "s"), (3, "ms"), (6, "us"), (9, "ns")) if n <= limit)
