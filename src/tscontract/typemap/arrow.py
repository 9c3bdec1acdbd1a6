"""Arrow types of the one table: the type a contract type is read into (decimal128, timestamp with UTC).

Integers and floats are read into their widest type (int64, float64): Arrow holds what any source sends.
"""

from __future__ import annotations

import pyarrow as pa

from tscontract.contract.types import DataType
from tscontract.typemap.table import row


def arrow_type(dtype: DataType) -> pa.DataType:
    """The Arrow type a contract type is read into (decimal128, timestamp with UTC)."""
    factory = getattr(pa, row(dtype).arrow)
    if dtype.kind == "decimal":
        return factory(dtype.precision or 38, dtype.scale or 0)
    if dtype.kind == "timestamp":
        return factory(dtype.time_unit or "ms", tz="UTC")
    return factory()


def contract_type(arrow: pa.DataType) -> str | None:
    """The contract type text an Arrow type states, or None (the reader of :func:`arrow_type`).

    Arrow's int8..int32 and float32 read back as themselves; :func:`arrow_type` itself writes only int64
    and float64, so int8..int32 and float32 come back as int64 and float64 (the documented widening)."""
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_timestamp(arrow):
        return f"timestamp_{arrow.unit}_utc" if arrow.tz in ("UTC", "Etc/UTC", "+00:00") else None
    if pa.types.is_integer(arrow) and pa.types.is_signed_integer(arrow):
        return f"int{arrow.bit_width}"
    if pa.types.is_floating(arrow) and arrow.bit_width in (32, 64):
        return f"float{arrow.bit_width}"
    simple = {"string": "string", "large_string": "string", "bool": "bool", "date32[day]": "date", "binary": "bytes"}
    return simple.get(str(arrow))
