"""Avro types of the one table, and Avro's types read back as contract type text."""

from __future__ import annotations

import re
from typing import Final

from tscontract.contract.types import DataType
from tscontract.typemap.table import readers, row

AVRO_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# the contract's time unit -> Avro's timestamp logical type (Avro has no seconds: millis hold them)
TIMESTAMP_LOGICAL: Final[dict[str, str]] = {
    "s": "timestamp-millis",
    "ms": "timestamp-millis",
    "us": "timestamp-micros",
    "ns": "timestamp-nanos",
}
LOGICAL_UNIT: Final[dict[str, str]] = {"timestamp-millis": "ms", "timestamp-micros": "us", "timestamp-nanos": "ns"}
# an Avro primitive -> the contract type it states exactly (``int`` is int32: int8 and int16 say more)
PRIMITIVE_READS: Final[dict[str, str]] = readers("avro")


def avro_type(dtype: DataType, enum_name: str) -> tuple[object, str | None]:
    """The Avro type of ``dtype``, and why it does not state the type exactly (or None).

    ``enum_name``: the Avro name an enum gets (its members must be Avro names, else it is a string)."""
    cells = row(dtype)
    kind = dtype.kind
    if kind == "decimal":
        return {"type": cells.avro, "logicalType": "decimal", "precision": dtype.precision, "scale": dtype.scale}, None
    if kind == "timestamp":
        return {"type": cells.avro, "logicalType": TIMESTAMP_LOGICAL[dtype.time_unit or "ms"]}, None
    if kind == "date":
        return {"type": cells.avro, "logicalType": "date"}, None
    if kind == "enum":
        if all(AVRO_NAME.match(m) for m in dtype.members):
            return {"type": cells.avro, "name": enum_name, "symbols": list(dtype.members)}, None
        return "string", cells.avro_loss
    return cells.avro, cells.avro_loss


def states_unit(dtype: DataType) -> bool:
    """Whether the Avro timestamp of ``dtype`` has its unit (timestamp_s_utc travels as millis)."""
    return LOGICAL_UNIT.get(TIMESTAMP_LOGICAL[dtype.time_unit or "ms"]) == dtype.time_unit


def contract_type(node: object) -> str | None:
    """The contract type text of an Avro type :func:`avro_type` writes, or None (the importer reads more)."""
    if isinstance(node, str):
        return PRIMITIVE_READS.get(node)
    if not isinstance(node, dict):
        return None
    logical = node.get("logicalType")
    if logical == "decimal":
        return f"decimal({node.get('precision')},{node.get('scale', 0)})"
    if isinstance(logical, str) and logical in LOGICAL_UNIT:
        return f"timestamp_{LOGICAL_UNIT[logical]}_utc"
    if logical == "date":
        return "date"
    if node.get("type") == "enum":
        return f"enum[{', '.join(str(s) for s in node.get('symbols') or [])}]"
    return None
