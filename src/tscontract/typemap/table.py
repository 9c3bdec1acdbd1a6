"""The one type table: each contract type, one column per target.

A row is keyed by :func:`type_key`: the kind, with the bit width for ``int`` and ``float``
(``int8`` .. ``int64``, ``float32``, ``float64``). Cells are the target's spelling; the parametrised
types (``decimal(p,s)``, ``timestamp_<unit>_utc``, ``enum[...]``) are written as templates that
:mod:`tscontract.typemap` renderers fill in (``{p}``, ``{s}``: precision and scale, ``{digits}``:
fraction digits of the time unit, ``{unit}``: the Avro logical type of the time unit).

Where the Avro or proto type cannot state the contract type exactly, the row says why (``avro_loss``,
``protobuf_loss``): the exporters write these reasons; the losses of the other targets are stated by
their reader modules (:mod:`tscontract.typemap.jsonschema`), and tests/typemap assert each one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tscontract.contract.types import DataType

FRACTION_DIGITS: Final[dict[str, int]] = {"s": 0, "ms": 3, "us": 6, "ns": 9}


@dataclass(frozen=True)
class Row:
    """One contract type in each target's terms."""

    duckdb: str  # the IR's SQL type (DuckDB): typed columns, the gate's DuckDB store, dbt, Soda
    postgres: str  # the gate's PostgreSQL store
    odcs_physical: str  # ODCS physicalType (DuckDB's spelling, PostgreSQL reads it too)
    odcs_logical: str  # ODCS logicalType
    avro: str  # Avro primitive, or the base type of a logical type; "enum" for an Avro enum
    protobuf: str  # proto3 scalar; "enum" for a generated enum
    json: str  # JSON Schema "type"
    cel: str  # the CEL value kind the Confluent rules compute with
    arrow: str  # the pyarrow factory of the type a value is read into (ints and floats at their widest)
    avro_loss: str | None = None  # why the Avro type says less (the export's header lists it)
    protobuf_loss: str | None = None  # why the proto type says less (the export's header lists it)


_SMALL_INT_AVRO = "Avro int is 32 bits; the int{bits} range is checked by tscontract"
_SMALL_INT_PROTO = "protobuf has no int{bits}; int32 is wider, the range is checked by tscontract"

TABLE: Final[dict[str, Row]] = {
    "string": Row("VARCHAR", "TEXT", "VARCHAR", "string", "string", "string", "string", "string", "string"),
    "enum": Row(
        "VARCHAR",
        "TEXT",
        "VARCHAR",
        "string",
        "enum",
        "enum",
        "string",
        "string",
        "string",
        avro_loss="enum members that are not Avro names travel as strings; membership is checked by tscontract",
        protobuf_loss="proto3 enums are open (an unknown number is kept) and have an UNSPECIFIED zero value",
    ),
    "bool": Row("BOOLEAN", "BOOLEAN", "BOOLEAN", "boolean", "boolean", "bool", "boolean", "bool", "bool_"),
    "int8": Row(
        "TINYINT",
        "SMALLINT",
        "TINYINT",
        "integer",
        "int",
        "int32",
        "integer",
        "int",
        "int64",
        avro_loss=_SMALL_INT_AVRO.format(bits=8),
        protobuf_loss=_SMALL_INT_PROTO.format(bits=8),
    ),
    "int16": Row(
        "SMALLINT",
        "SMALLINT",
        "SMALLINT",
        "integer",
        "int",
        "int32",
        "integer",
        "int",
        "int64",
        avro_loss=_SMALL_INT_AVRO.format(bits=16),
        protobuf_loss=_SMALL_INT_PROTO.format(bits=16),
    ),
    "int32": Row("INTEGER", "INTEGER", "INTEGER", "integer", "int", "int32", "integer", "int", "int64"),
    "int64": Row("BIGINT", "BIGINT", "BIGINT", "integer", "long", "int64", "integer", "int", "int64"),
    "float32": Row(
        "FLOAT",
        "REAL",
        "REAL",
        "number",
        "float",
        "float",
        "number",
        "double",
        "float64",
    ),
    "float64": Row("DOUBLE", "DOUBLE PRECISION", "DOUBLE", "number", "double", "double", "number", "double", "float64"),
    "decimal": Row(
        "DECIMAL({p},{s})",
        "NUMERIC({p},{s})",
        "DECIMAL({p},{s})",
        "number",
        "bytes",
        "string",
        "string",
        "decimal",
        "decimal128",
        protobuf_loss=(
            "decimals travel as exact decimal text in a string; precision and scale are checked by tscontract"
        ),
    ),
    "timestamp": Row(
        "TIMESTAMPTZ",
        "TIMESTAMPTZ",
        "TIMESTAMP({digits}) WITH TIME ZONE",
        "timestamp",
        "long",
        "google.protobuf.Timestamp",
        "string",
        "timestamp",
        "timestamp",
    ),
    "date": Row(
        "DATE",
        "DATE",
        "DATE",
        "date",
        "int",
        "string",
        "string",
        "date",
        "date32",
        protobuf_loss="dates travel as ISO text in a string; the format is checked by tscontract",
    ),
    "bytes": Row("BLOB", "BYTEA", "BLOB", "string", "bytes", "bytes", "string", "bytes", "binary"),
}


def type_key(dtype: DataType) -> str:
    """The row of ``dtype`` in :data:`TABLE`: its kind, with the bit width of an int or float (64 when unset)."""
    if dtype.kind in ("int", "float"):
        return f"{dtype.kind}{dtype.bits or 64}"
    return dtype.kind


def row(dtype: DataType) -> Row:
    """The row of :data:`TABLE` for ``dtype``."""
    return TABLE[type_key(dtype)]


def fill(template: str, dtype: DataType) -> str:
    """A cell with ``dtype``'s parameters in place (precision, scale, fraction digits)."""
    return template.format(
        p=dtype.precision,
        s=dtype.scale or 0,
        digits=FRACTION_DIGITS[dtype.time_unit or "ms"],
    )


def readers(column: str, *, exact_only: bool = True) -> dict[str, str]:
    """A target's spelling -> the contract type text, for the rows whose cell is a plain name.

    Where several rows share a spelling (``VARCHAR`` for string and enum, Avro ``int`` for int8..int32)
    the row that the spelling states exactly wins: the one with no loss in that target (``exact_only``),
    or else the first of the table.
    """
    found: dict[str, str] = {}
    for key, cells in TABLE.items():
        if key in ("decimal", "timestamp", "enum"):
            continue  # parametrised: each reader takes these apart itself
        name = getattr(cells, column)
        loss = getattr(cells, f"{column}_loss", None)
        if exact_only and loss is not None:
            continue
        found.setdefault(name, key)
    return found
