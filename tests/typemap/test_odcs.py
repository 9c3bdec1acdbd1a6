"""ODCS: contract type -> physicalType -> ``import odcs``'s reading, and the logical types."""

from __future__ import annotations

import pytest
from hypothesis import given

from tests.typemap.conftest import DATA_TYPES
from tscontract.contract.types import DataType, parse_type
from tscontract.interop.odcs.types import Choices, _sql_type
from tscontract.typemap.odcs import SQL_READS, logical_type, physical_type
from tscontract.typemap.table import TABLE


def _expected_back(dtype: DataType) -> str:
    """The physicalType states every type but an enum's members (VARCHAR: the export keeps the
    members in the property's customProperties, which the ODCS reader reads)."""
    return "string" if dtype.kind == "enum" else parse_type(dtype.text).text


@given(DATA_TYPES)
def test_odcs_physical_round_trip(dtype: DataType) -> None:
    read = _sql_type(physical_type(dtype), Choices(), None)
    assert read is not None and read.instead is None
    assert read.type == _expected_back(dtype)


@pytest.mark.parametrize(
    ("text", "logical", "options"),
    [
        ("int16", "integer", {"format": "i16"}),
        ("float32", "number", {"format": "f32"}),
        ("decimal(18,8)", "number", {}),
        ("bool", "boolean", {}),
        ("date", "date", {"format": "yyyy-MM-dd"}),
        ("string", "string", {}),
        ("bytes", "string", {}),
        (
            "timestamp_us_utc",
            "timestamp",
            {"format": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'", "timezone": True, "defaultTimezone": "Etc/UTC"},
        ),
    ],
)
def test_logical_types(text: str, logical: str, options: dict[str, object]) -> None:
    assert logical_type(parse_type(text)) == (logical, options)


def test_every_plain_physical_cell_reads_back_as_its_row() -> None:
    # DuckDB's FLOAT (float32) is a double in most dialects: ODCS writes REAL, and the IR's FLOAT reads as float64
    for key, cells in TABLE.items():
        if "{" not in cells.odcs_physical and key != "enum":
            assert SQL_READS[cells.odcs_physical.lower()] == key
    assert SQL_READS["float"] == "float64"


def test_unsigned_integers_read_as_the_next_wider_type() -> None:
    from tscontract.typemap.odcs import UNSIGNED_READS
    from tscontract.typemap.protobuf import SCALAR_READS

    # MySQL's and proto's unsigned types agree: 32 bits read as int64, 64 bits as decimal(20,0)
    assert UNSIGNED_READS["uint"] == SCALAR_READS["uint32"] == "int64"
    assert UNSIGNED_READS["ubigint"] == SCALAR_READS["uint64"] == "decimal(20,0)"
