"""Arrow: the type a contract type is read into, and back."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given

from tests.typemap.conftest import DATA_TYPES
from tscontract.contract.types import DataType, parse_type
from tscontract.typemap.arrow import arrow_type, contract_type


def _expected_back(dtype: DataType) -> str:
    """The documented losses: integers and floats are read at their widest, an enum as its text."""
    if dtype.kind == "int":
        return "int64"
    if dtype.kind == "float":
        return "float64"
    if dtype.kind == "enum":
        return "string"
    return parse_type(dtype.text).text


@given(DATA_TYPES)
def test_arrow_round_trip(dtype: DataType) -> None:
    assert contract_type(arrow_type(dtype)) == _expected_back(dtype)


def test_arrow_types() -> None:
    assert arrow_type(parse_type("decimal(18,8)")) == pa.decimal128(18, 8)
    assert arrow_type(parse_type("timestamp_ns_utc")) == pa.timestamp("ns", tz="UTC")
    assert arrow_type(parse_type("int8")) == pa.int64()
    assert arrow_type(parse_type("date")) == pa.date32()


def test_arrow_reads_narrow_types_as_themselves() -> None:
    assert contract_type(pa.int16()) == "int16"
    assert contract_type(pa.float32()) == "float32"
    assert contract_type(pa.timestamp("ms")) is None  # naive: no contract type


def test_gate_and_replay_take_it_from_typemap() -> None:
    from tscontract.gate import store
    from tscontract.interop import replay

    assert store.arrow_type is arrow_type
    assert replay.arrow_type is arrow_type
