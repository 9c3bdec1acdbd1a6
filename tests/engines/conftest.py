"""Fixtures for engine tests: the example datasets as CSV paths and as typed Arrow tables."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

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


# the JVM's quick compiler only: the tests' many small, different queries end before C2 would pay off, and C2's
# compiler threads take the cores they run on (a cold Spark validation of bad.csv: 92 s, not 130 s, on 2 busy cores)
QUICK_JVM = "-XX:TieredStopAtLevel=1"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One Spark session (local[2]) for every Spark test of the process: one JVM to start and warm."""
    from tscontract.engines.spark import spark_session

    warehouse = tmp_path_factory.mktemp("spark-warehouse")  # saveAsTable writes here, not into the checkout
    # 2 GiB, not 1: after some thousand queries in one JVM a wide one-pass aggregate ran out of memory
    # (AGGREGATE_OUT_OF_MEMORY) on 2 cores, twice in 40 minutes of CI
    conf = {
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.driver.extraJavaOptions": QUICK_JVM,
        "spark.driver.memory": "2g",
    }
    session = spark_session("local[2]", conf)
    yield session
    session.conf.unset("spark.sql.files.maxPartitionBytes")


@pytest.fixture
def ohlcv_table() -> pa.Table:
    """good.csv as a properly typed Arrow table (decimal128, timestamp[ms, UTC])."""
    return pacsv.read_csv(OHLCV / "data" / "good.csv", convert_options=pacsv.ConvertOptions(column_types=OHLCV_TYPES))


def replace_column(table: pa.Table, name: str, array: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, array)
