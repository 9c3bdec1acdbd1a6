"""JSON Schema: contract type -> JSON Schema -> contract type, with JSON's documented losses."""

from __future__ import annotations

from hypothesis import given

from tests.typemap.conftest import DATA_TYPES
from tscontract.contract.types import DataType, parse_type
from tscontract.interop.exports.jsonschema import type_schema
from tscontract.typemap.jsonschema import contract_type, int_bounds


def _expected_back(dtype: DataType) -> str:
    """The documented losses of JSON Schema as ``import jsonschema`` reads it.

    - decimals, instants and bytes are strings with a pattern or encoding: read back as ``string``;
    - an integer's width is its bounds: int32's read back as int32, any other as ``int64`` (the importer
      keeps int8/int16's bounds as a clause);
    - float32 and float64 are both ``number``: read back as ``float64``.
    """
    if dtype.kind in ("decimal", "timestamp", "bytes"):
        return "string"
    if dtype.kind == "int":
        return "int32" if dtype.bits == 32 else "int64"
    if dtype.kind == "float":
        return "float64"
    return parse_type(dtype.text).text


@given(DATA_TYPES)
def test_jsonschema_round_trip(dtype: DataType) -> None:
    assert contract_type(type_schema(dtype)) == _expected_back(dtype)


def test_int_bounds_state_the_width() -> None:
    for bits in (8, 16, 32, 64):
        schema = type_schema(parse_type(f"int{bits}"))
        assert (schema["minimum"], schema["maximum"]) == int_bounds(bits)
