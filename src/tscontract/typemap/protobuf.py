"""Protobuf (proto3) types of the one table, and proto's scalar types read back as contract type text."""

from __future__ import annotations

from typing import Final

from tscontract.contract.types import DataType
from tscontract.typemap.table import readers, row

TIMESTAMP: Final = "google.protobuf.Timestamp"
# a proto scalar -> the contract type that holds it: the table's exact spellings, and the encodings
# and unsigned types proto has beside them (an unsigned type reads as the next wider signed one)
SCALAR_READS: Final[dict[str, str]] = {
    **readers("protobuf"),
    "sint32": "int32",
    "sfixed32": "int32",
    "sint64": "int64",
    "sfixed64": "int64",
    "uint32": "int64",
    "fixed32": "int64",
    "uint64": "decimal(20,0)",
    "fixed64": "decimal(20,0)",
}


def proto_type(dtype: DataType, enum_name: str) -> str:
    """The proto3 type of ``dtype`` (``enum_name``: the generated enum's name, for an enum)."""
    cells = row(dtype)
    return enum_name if cells.protobuf == "enum" else cells.protobuf


def type_loss(dtype: DataType) -> str | None:
    """Why the proto type does not state ``dtype`` exactly, or None."""
    return row(dtype).protobuf_loss


def contract_type(proto: str, enums: dict[str, list[str]]) -> str | None:
    """The contract type text of a proto type (``enums``: the file's enums by name), or None.

    A Timestamp counts nanoseconds: it reads back as ``timestamp_ns_utc`` whatever unit was exported."""
    if proto in SCALAR_READS:
        return SCALAR_READS[proto]
    if proto == TIMESTAMP:
        return "timestamp_ns_utc"
    if proto in enums:
        return f"enum[{', '.join(enums[proto])}]"
    return None
