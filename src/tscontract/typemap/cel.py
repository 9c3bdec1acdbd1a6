"""CEL value kinds of the one table: what the Confluent rules compute a field's value as."""

from __future__ import annotations

from tscontract.contract.types import DataType
from tscontract.typemap.table import row


def cel_kind(dtype: DataType) -> str:
    """The CEL kind of a field of ``dtype`` (``decimal`` for decimals, ``double`` for any float)."""
    return row(dtype).cel
