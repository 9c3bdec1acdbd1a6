"""Avro: contract type -> Avro type -> contract type, and the losses the export lists."""

from __future__ import annotations

import pytest
from hypothesis import given

from tests.typemap.conftest import DATA_TYPES
from tscontract.contract.types import DataType, parse_type
from tscontract.typemap.avro import PRIMITIVE_READS, avro_type, contract_type


def _expected_back(dtype: DataType) -> tuple[str, bool]:
    """(the type read back, whether the export lists a loss): Avro has no int8/int16 (int is 32 bits),
    no seconds (timestamp-millis), and enum symbols must be Avro names (else a string)."""
    if dtype.kind == "int" and (dtype.bits or 64) < 32:
        return "int32", True
    if dtype.kind == "timestamp" and dtype.time_unit == "s":
        return "timestamp_ms_utc", False  # listed by the time precision clause, not the type
    if dtype.kind == "enum" and not all(m.isidentifier() and m.isascii() for m in dtype.members):
        return "string", True
    return parse_type(dtype.text).text, False


@given(DATA_TYPES)
def test_avro_round_trip(dtype: DataType) -> None:
    avro, loss = avro_type(dtype, "Quality")
    back, lossy = _expected_back(dtype)
    assert contract_type(avro) == back
    assert (loss is not None) == lossy


@pytest.mark.parametrize(
    ("text", "loss"),
    [
        ("int8", "Avro int is 32 bits; the int8 range is checked by tscontract"),
        ("int16", "Avro int is 32 bits; the int16 range is checked by tscontract"),
        (
            "enum['1a', b]",
            "enum members that are not Avro names travel as strings; membership is checked by tscontract",
        ),
    ],
)
def test_documented_losses(text: str, loss: str) -> None:
    assert avro_type(parse_type(text), "E")[1] == loss


def test_the_importer_reads_primitives_from_the_table() -> None:
    from tscontract.interop.imports import avro

    assert PRIMITIVE_READS == {
        "boolean": "bool",
        "int": "int32",
        "long": "int64",
        "float": "float32",
        "double": "float64",
        "bytes": "bytes",
        "string": "string",
    }
    assert avro._PRIMITIVE is PRIMITIVE_READS
