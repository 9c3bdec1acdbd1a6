"""JSON Schema types of the one table, and JSON Schema's types read back as contract type text.

JSON has fewer types than a contract: decimals, instants, dates and bytes are strings (a pattern, a
``format`` or ``contentEncoding`` says more), an integer's width is only its ``minimum`` and
``maximum``, float32 and float64 are both ``number``. :func:`contract_type` states what comes back.
"""

from __future__ import annotations

from typing import Final

from tscontract.contract.types import DataType
from tscontract.typemap.table import row


def int_bounds(bits: int) -> tuple[int, int]:
    """The ``minimum`` and ``maximum`` of a signed integer of ``bits`` bits."""
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


INT32: Final = int_bounds(32)
INT64: Final = int_bounds(64)


def json_type(dtype: DataType) -> str:
    """JSON Schema's ``type`` of a non-null value of ``dtype``."""
    return row(dtype).json


def contract_type(schema: dict[str, object]) -> str | None:
    """The contract type text of a JSON Schema property, as ``import jsonschema`` reads its type, or None.

    ``format: date-time`` is ``timestamp_us_utc`` (no unit stated), an integer with int32's bounds is
    int32 and any other ``int64``, ``number`` is float64; an enum of names is an ``enum[...]``."""
    kind, fmt, members = schema.get("type"), schema.get("format"), schema.get("enum")
    if kind == "string" and fmt == "date-time":
        return "timestamp_us_utc"
    if kind == "string" and fmt == "date":
        return "date"
    if kind == "string" and isinstance(members, list) and all(isinstance(m, str) for m in members):
        return f"enum[{', '.join(members)}]"
    if kind == "integer":
        return "int32" if (schema.get("minimum"), schema.get("maximum")) == INT32 else "int64"
    return {"string": "string", "number": "float64", "boolean": "bool"}.get(str(kind))
