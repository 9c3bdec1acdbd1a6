"""Fixtures for engine tests: the example datasets as CSV paths and as typed Arrow tables."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from tests.conftest import EXAMPLES

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"
# the examples' data is from 2026-11-30; judge freshness just after the last bar
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)

# what the CLI tests of the OHLCV example pass: its catalog, freshness judged at NOW, a JSON report
OHLCV_CLI_OPTIONS = ("--catalog", OHLCV / "catalog.yaml", "--now", "2026-11-30T21:05:00Z", "--format", "json")
# ``tscontract validate`` of the bad OHLCV file with those options
VALIDATE_OHLCV_BAD = ("validate", OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv", *OHLCV_CLI_OPTIONS)

OHLCV_TYPES = {
    "symbol": pa.string(),
    "bar_start": pa.timestamp("ms", tz="UTC"),
    **{c: pa.decimal128(18, 8) for c in ("open", "high", "low", "close")},
    "volume": pa.decimal128(24, 4),
    "trade_count": pa.int64(),
    "adjusted": pa.bool_(),
    "source_id": pa.string(),
    "ingest_run_id": pa.string(),
    "transform_version": pa.string(),
    "revision": pa.int64(),
}


@pytest.fixture
def ohlcv_table() -> pa.Table:
    """good.csv as a properly typed Arrow table (decimal128, timestamp[ms, UTC])."""
    return pacsv.read_csv(OHLCV / "data" / "good.csv", convert_options=pacsv.ConvertOptions(column_types=OHLCV_TYPES))


def replace_column(table: pa.Table, name: str, array: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, array)
