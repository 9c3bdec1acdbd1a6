"""SQL types of the one table: the IR's (DuckDB's) and the PostgreSQL store's, and DuckDB's names read back."""

from __future__ import annotations

from typing import Final

from tscontract.contract.types import DataType
from tscontract.typemap.table import fill, readers, row

# a DuckDB type name (as DESCRIBE and the typed columns write it) -> the contract type it states exactly
DUCKDB_READS: Final[dict[str, str]] = readers("duckdb")


def sql_type(dtype: DataType) -> str:
    """The IR's SQL type of a contract type, in DuckDB's names (``DECIMAL(18,8)``, ``TIMESTAMPTZ``)."""
    return fill(row(dtype).duckdb, dtype)


def pg_type(dtype: DataType) -> str:
    """The PostgreSQL column type a contract type is stored as."""
    return fill(row(dtype).postgres, dtype)


def duckdb_reads(name: str) -> str | None:
    """The contract type text a plain DuckDB type name states exactly (``BIGINT`` -> ``int64``), or None."""
    return DUCKDB_READS.get(name)


def read_duckdb(name: str) -> str | None:
    """The contract type text of a DuckDB type :func:`sql_type` writes, or None.

    ``TIMESTAMPTZ`` holds microseconds and names no unit: it reads back as ``timestamp_us_utc``
    (the contract's unit is lost); ``VARCHAR`` reads back as ``string`` (an enum's members are lost)."""
    upper = name.strip().upper()
    if upper.startswith("DECIMAL(") and upper.endswith(")"):
        precision, _, scale = upper[len("DECIMAL(") : -1].partition(",")
        return f"decimal({int(precision)},{int(scale or 0)})"
    if upper in ("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE"):
        return "timestamp_us_utc"
    return duckdb_reads(upper)
