"""The one table: every contract type has a row, every row a cell per target."""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given

from tests.typemap.conftest import DATA_TYPES, EXAMPLES
from tscontract.contract.types import DataType, parse_type
from tscontract.typemap.table import TABLE, Row, readers, row, type_key


def test_every_contract_type_has_a_row() -> None:
    assert set(TABLE) == {
        *("string", "enum", "bool", "date", "bytes", "decimal", "timestamp"),
        *("int8", "int16", "int32", "int64", "float32", "float64"),
    }


@pytest.mark.parametrize("key", sorted(TABLE))
def test_every_cell_is_written(key: str) -> None:
    cells = TABLE[key]
    for column in fields(Row):
        if not column.name.endswith("_loss"):
            assert getattr(cells, column.name), (key, column.name)


@given(DATA_TYPES)
def test_type_key_finds_a_row(dtype: DataType) -> None:
    assert row(dtype) is TABLE[type_key(dtype)]


def test_unset_bits_are_64() -> None:
    assert type_key(DataType(text="int", kind="int")) == "int64"
    assert type_key(DataType(text="float", kind="float")) == "float64"


def test_readers_prefer_the_row_a_spelling_states_exactly() -> None:
    # VARCHAR is string and enum; Avro int is int8..int32 (and a date's base): the exact row wins
    assert readers("duckdb")["VARCHAR"] == "string"
    assert readers("avro")["int"] == "int32"
    assert readers("protobuf")["int32"] == "int32"
    assert readers("protobuf")["string"] == "string"


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_parse(text: str) -> None:
    assert type_key(parse_type(text)) in TABLE
