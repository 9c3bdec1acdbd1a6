"""CEL: the value kind each contract type computes as in the Confluent rules (one way: CEL has no schema)."""

from __future__ import annotations

from hypothesis import given

from tests.typemap.conftest import DATA_TYPES
from tscontract.contract.types import DataType
from tscontract.typemap.cel import cel_kind


@given(DATA_TYPES)
def test_cel_kind(dtype: DataType) -> None:
    # the documented loss: enums are strings, float32 computes as double (binary64), ints are CEL's int64
    expected = {"enum": "string", "float": "double"}.get(dtype.kind, dtype.kind)
    assert cel_kind(dtype) == expected
