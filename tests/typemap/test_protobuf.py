"""Protobuf: contract type -> proto3 type -> contract type, and the losses the export lists."""

from __future__ import annotations

from hypothesis import given

from tests.typemap.conftest import DATA_TYPES
from tscontract.contract.types import DataType, parse_type
from tscontract.typemap.protobuf import SCALAR_READS, contract_type, proto_type, type_loss


def _expected_back(dtype: DataType) -> tuple[str, bool]:
    """(the type read back, whether the export lists a loss): decimals and dates travel as text, int8 and
    int16 as int32, an instant as a Timestamp (nanoseconds: the unit is not stated), enums open."""
    if dtype.kind in ("decimal", "date"):
        return "string", True
    if dtype.kind == "int" and (dtype.bits or 64) < 32:
        return "int32", True
    if dtype.kind == "timestamp":
        return "timestamp_ns_utc", False  # listed by the time precision clause, not the type
    return parse_type(dtype.text).text, dtype.kind == "enum"


@given(DATA_TYPES)
def test_protobuf_round_trip(dtype: DataType) -> None:
    enums = {"Quality": list(dtype.members)} if dtype.kind == "enum" else {}
    back, lossy = _expected_back(dtype)
    assert contract_type(proto_type(dtype, "Quality"), enums) == back
    assert (type_loss(dtype) is not None) == lossy


def test_the_importer_reads_scalars_from_the_table() -> None:
    from tscontract.interop.imports import proto

    assert proto._SCALAR is SCALAR_READS
    assert SCALAR_READS == {
        "double": "float64",
        "float": "float32",
        "int32": "int32",
        "sint32": "int32",
        "sfixed32": "int32",
        "int64": "int64",
        "sint64": "int64",
        "sfixed64": "int64",
        "uint32": "int64",
        "fixed32": "int64",
        "uint64": "decimal(20,0)",
        "fixed64": "decimal(20,0)",
        "bool": "bool",
        "string": "string",
        "bytes": "bytes",
    }
