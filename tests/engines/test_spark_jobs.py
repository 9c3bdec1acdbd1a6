"""Spark jobs per validation: the seed contract's checks in a bounded number of jobs, adaptive execution or not.

A Spark job costs scheduling whatever the rows (about 0.1 s on 2 cores): the run folds its checks into
few statements (engines/run/, ``statements_dear``). Counted with the status tracker, on a job group set
for the one validation; a count, not a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.engines import parity
from tests.engines.conftest import NOW, OHLCV, replace_column
from tscontract import validate

pytest.importorskip("pyspark", reason="the Spark engine is part of the dev install")

MAX_JOBS = 10  # issue #29: at most 10 Spark jobs per validation
ADAPTIVE = "spark.sql.adaptive.enabled"


def _seed_like(table: pa.Table, path: Path) -> Path:
    """good.csv typed, with what the seed contract's checks find: a null close, a low above its open,
    a negative volume, a duplicated key (a copy of the first row)."""
    close, low, volume = (table.column(c).to_pylist() for c in ("close", "low", "volume"))
    close[5] = None
    low[7] = low[7] * 2
    volume[9] = -volume[9]
    table = replace_column(table, "close", pa.array(close, table.schema.field("close").type))
    table = replace_column(table, "low", pa.array(low, table.schema.field("low").type))
    table = replace_column(table, "volume", pa.array(volume, table.schema.field("volume").type))
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), path)
    return path


@pytest.mark.parametrize("adaptive", ["true", "false"])
def test_a_validation_of_the_seed_contract_takes_at_most_ten_jobs(
    spark: Any, ohlcv_table: pa.Table, tmp_path: Path, adaptive: str
) -> None:
    data = _seed_like(ohlcv_table, tmp_path / "bars.parquet")
    options: dict[str, Any] = {"catalog": OHLCV / "catalog.yaml", "now": NOW}
    context = spark.sparkContext
    group = f"tscontract-jobs-{adaptive}"
    spark.conf.set(ADAPTIVE, adaptive)
    context.setJobGroup(group, "one validation")
    try:
        report = validate(OHLCV / "contract.yaml", data, engine="spark", **options).to_json()
    finally:
        context.setJobGroup("tscontract-tests", "other tests")
    jobs = context.statusTracker().getJobIdsForGroup(group)
    assert spark.conf.get(ADAPTIVE) == adaptive  # the run's own setting is undone after it
    spark.conf.unset(ADAPTIVE)
    assert 0 < len(jobs) <= MAX_JOBS, f"{len(jobs)} Spark jobs"
    duck = validate(OHLCV / "contract.yaml", data, engine="duckdb", **options).to_json()
    for one in (report, duck):
        one.pop("elapsed_s"), one.pop("engine")
    parity.equal_reports(duck, report, "spark")
    failed = {c["id"]: c["failed_rows"] for c in report["checks"] if c["status"] == "failed"}
    assert failed["key.unique"] == 2 and failed["field.close.nullable"] == 1, failed
    assert failed["invariants[0]"] >= 1 and failed["invariants[2]"] == 1, failed


def test_a_second_validation_compiles_no_class_again(spark: Any, ohlcv_table: pa.Table, tmp_path: Path) -> None:
    """A validation generates some 200 classes: the session keeps them all (CODEGEN_CACHE), so the same
    validation again in the same session compiles none (with Spark's default of 100 it compiled every one)."""
    data = _seed_like(ohlcv_table, tmp_path / "bars.parquet")
    options: dict[str, Any] = {"catalog": OHLCV / "catalog.yaml", "now": NOW, "engine": "spark"}
    compiled = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    first = validate(OHLCV / "contract.yaml", data, **options).to_json()
    before = compiled.getCount()
    second = validate(OHLCV / "contract.yaml", data, **options).to_json()
    assert compiled.getCount() == before, f"{compiled.getCount() - before} classes compiled again"
    for one in (first, second):
        one.pop("elapsed_s")
    assert first == second
