"""The Spark engine gives the same report as DuckDB: statuses, counts, examples, row numbers.

Every fixture runs on both engines (real pyspark in local mode) and the JSON
reports must be identical apart from timing and the engine's name.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.conftest import EXAMPLES, write
from tests.engines import parity
from tests.engines.conftest import NOW, OHLCV, OHLCV_TYPES, SENSOR, VALIDATE_OHLCV_BAD, replace_column
from tests.engines.test_time_checks import bars, sensor_csv
from tscontract import InputError, validate
from tscontract.contract.loader import load_contract
from tscontract.engines.profile import profile

pytest.importorskip("pyspark", reason="the Spark engine is part of the dev install")

DATA_FILES = sorted((EXAMPLES).glob("*/data/*.csv"))
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def reports(contract: Path, data: Any, spark_data: Any = None, **kwargs: Any) -> tuple[dict, dict]:
    duck = validate(contract, data, engine="duckdb", now=NOW, **kwargs).to_json()
    spark = validate(contract, data if spark_data is None else spark_data, engine="spark", now=NOW, **kwargs).to_json()
    for report in (duck, spark):
        report.pop("elapsed_s")
    assert (duck.pop("engine"), spark.pop("engine")) == ("duckdb", "spark")
    return duck, spark


def assert_same(contract: Path, data: Any, spark_data: Any = None, **kwargs: Any) -> dict:
    duck, spark = reports(contract, data, spark_data, **kwargs)
    if spark_data is not None:
        duck.pop("data"), spark.pop("data")
    return parity.equal_reports(duck, spark, "spark")


def dataset_of(path: Path) -> Path:
    return path.parent.parent


def as_jsonl(csv_path: Path, out: Path) -> Path:
    """The CSV as JSON lines; numbers and booleans written as JSON literals with their exact text."""
    lines = []
    with csv_path.open() as handle:
        for record in csv.DictReader(handle):
            parts = []
            for key, value in record.items():
                if value == "":
                    literal = "null"
                elif (
                    _NUMBER.match(value) and key not in ("source_id", "ingest_run_id", "transform_version")
                ) or value in ("true", "false"):
                    literal = value
                else:
                    literal = json.dumps(value)
                parts.append(f"{json.dumps(key)}: {literal}")
            lines.append("{" + ", ".join(parts) + "}")
    out.write_text("\n".join(lines) + "\n")
    return out


def series_of_their_own(dataset: Path, tmp_path: Path) -> tuple[list[Path], Path]:
    """The example's files, each file's series renamed ``<file stem>/<series>`` (its key's first column, a
    prefix on every data line), and a catalog listing every series under each file's names: validated
    together, the files share no key and no series, so each file is judged as it would be alone."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    files = sorted((dataset / "data").glob("*.csv"), reverse=True)  # good first: a bad row numbered after it
    catalog = yaml.load(dataset / "catalog.yaml")
    catalog["series"] = {f"{p.stem}/{name}": entry for p in files for name, entry in catalog["series"].items()}
    yaml.dump(catalog, tmp_path / "catalog.yaml")
    renamed = []
    for path in files:
        header, *lines = path.read_text().splitlines(keepends=True)
        renamed.append(write(tmp_path, header + "".join(f"{path.stem}/{line}" for line in lines), path.name))
    return renamed, tmp_path / "catalog.yaml"


def failed_rows(report: dict) -> dict[str, int]:
    return {c["id"]: c["failed_rows"] for c in report["checks"] if c["status"] == "failed"}


@pytest.mark.parametrize("dataset", sorted({dataset_of(p) for p in DATA_FILES}), ids=lambda p: p.name)
def test_every_example_file_as_csv_and_json_lines(spark, dataset, tmp_path):
    """All of an example's files in one validation per format (one Spark validation, not one per file), each
    file its own series; every file's own verdict judged by DuckDB alone, and the files' failures add up to
    the report both engines agree on, its example rows in the files that fail the check. The CSV files are
    read in splits of just over half the smallest file, each file by two tasks or more: rows are still
    numbered as the files hold them. (Splits of 2 KiB, 45 a file of bars, cost a validation of the bars 27-47 s
    against 13-20 s, alternating runs in one JVM: the tasks, not the rows.)"""
    from tscontract.engines.spark import SparkConnection, open_spark_source

    files, catalog = series_of_their_own(dataset, tmp_path)
    contract = dataset / "contract.yaml"
    split = min(path.stat().st_size for path in files) // 2 + 1
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(split))
    try:
        con = SparkConnection(spark)
        open_spark_source(con, files)
        assert spark.table("__tsc_source").rdd.getNumPartitions() >= 2 * len(files)
        con.close()
        report = assert_same(contract, files, catalog=catalog)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    lines = [as_jsonl(path, path.with_suffix(".jsonl")) for path in files]
    assert assert_same(contract, lines, catalog=catalog)["rows"] == report["rows"]
    alone = [validate(contract, path, engine="duckdb", now=NOW, catalog=catalog).to_json() for path in files]
    assert report["rows"] == sum(own["rows"] for own in alone) > 0
    for path, own in zip(files, alone, strict=True):
        # not vacuous: these fail (bad_lots needs bounds); the good files pass
        assert own["passed"] == (path.name not in ("bad.csv", "bad_kpa.csv")), path.name
    added: dict[str, int] = {}
    for own in alone:
        for check, count in failed_rows(own).items():
            added[check] = added.get(check, 0) + count
    assert failed_rows(report) == added
    ends = [sum(own["rows"] for own in alone[: i + 1]) for i in range(len(alone))]
    for check in report["checks"]:
        for row in (e["row"] for e in check["examples"] if "row" in e):
            own = alone[next(i for i, end in enumerate(ends) if row <= end)]
            assert check["id"] in failed_rows(own), (check["id"], row)


def _typed(table_change: Callable[[pa.Table], pa.Table]) -> Callable[[Path], pa.Table]:
    def build(_: Path) -> pa.Table:
        import pyarrow.csv as pacsv

        options = pacsv.ConvertOptions(column_types=OHLCV_TYPES)
        return table_change(pacsv.read_csv(OHLCV / "data" / "good.csv", convert_options=options))

    return build


def _low_above_open(t: pa.Table) -> pa.Table:
    low = t.column("low").to_pylist()
    low[3] = low[3] * 2
    return replace_column(t, "low", pa.array(low, pa.decimal128(18, 8)))


def _ten_decimals(t: pa.Table) -> pa.Table:
    opens = t.column("open").to_pylist()
    opens[2] += Decimal("0.0000000001")  # fits decimal(20,10), not the declared decimal(18,8)
    return replace_column(t, "open", pa.array(opens, pa.decimal128(20, 10)))


def _epoch(divisor: int) -> Callable[[pa.Table], pa.Table]:
    def change(t: pa.Table) -> pa.Table:
        millis = pc.cast(pc.cast(t.column("bar_start"), pa.timestamp("ms")), pa.int64())
        return replace_column(t, "bar_start", pc.divide(millis, divisor))

    return change


TYPED = {
    "good": _typed(lambda t: t),
    "low-above-open": _typed(_low_above_open),
    "naive-timestamps": _typed(
        lambda t: replace_column(t, "bar_start", pc.cast(t.column("bar_start"), pa.timestamp("ms")))
    ),
    "epoch-ms": _typed(_epoch(1)),
    "epoch-s-read-as-ms": _typed(_epoch(1000)),
    "float-where-decimal": _typed(lambda t: replace_column(t, "open", pc.cast(t.column("open"), pa.float64()))),
    "wider-scale": _typed(_ten_decimals),
    "extra-and-missing-columns": _typed(
        lambda t: t.append_column("vwap", pa.array([1.0] * t.num_rows)).drop_columns(["trade_count"])
    ),
}


@pytest.mark.parametrize("name", list(TYPED))
def test_typed_parquet(spark, name, tmp_path):
    path = tmp_path / f"{name}.parquet"
    pq.write_table(TYPED[name](tmp_path), path)
    report = assert_same(OHLCV / "contract.yaml", path, catalog=OHLCV / "catalog.yaml")
    assert report["passed"] == (name in ("good", "epoch-ms"))


def test_two_parquet_files_number_rows_across_files(spark, tmp_path):
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(TYPED["good"](tmp_path), first)
    pq.write_table(TYPED["low-above-open"](tmp_path), second)
    report = assert_same(OHLCV / "contract.yaml", [first, second], catalog=OHLCV / "catalog.yaml")
    rows = [e["row"] for c in report["checks"] for e in c["examples"] if "row" in e]
    assert set(rows) == {781 + 4}  # the one bad row, 4th of the second file


def test_time_checks_cadence_completeness_sessions_freshness(spark, tmp_path):
    text = (SENSOR / "contract.yaml").read_text()
    text += "completeness: {window: 1m, expected_count: per cadence}\nfreshness: {max_age: 15m}\n"
    contract = write(tmp_path, text, "c.yaml")
    data = sensor_csv(tmp_path, [0, 10, 20, 50, 61.5, 70, *range(80, 200, 10)])
    report = assert_same(contract, data, catalog=SENSOR / "catalog.yaml")
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    assert statuses["completeness"] == statuses["time.cadence"] == statuses["freshness"] == "failed"

    counted = write(
        tmp_path, (SENSOR / "contract.yaml").read_text() + "completeness: {window: 1m, expected_count: 5}\n"
    )
    assert_same(
        counted, sensor_csv(tmp_path, [0, 10, 20, 30, 60, 70, 80, 90, 100, 110, 120]), catalog=SENSOR / "catalog.yaml"
    )

    sessions = [
        "2026-11-27T17:58:00.000Z",
        "2026-11-27T17:59:00.000Z",
        "2026-11-27T18:00:00.000Z",  # after the half-day close
        "2026-11-26T15:00:00.000Z",  # Thanksgiving
        "2026-11-30T14:30:00.000Z",
        "2026-11-30T14:33:00.000Z",
    ]
    bars_text = (OHLCV / "contract.yaml").read_text() + "completeness: {window: 1h, expected_count: per cadence}\n"
    report = assert_same(write(tmp_path, bars_text, "b.yaml"), bars(tmp_path, sessions), catalog=OHLCV / "catalog.yaml")
    assert {c["id"]: c["failed_rows"] for c in report["checks"]}["time.session"] == 2


def test_profiled_bounds_catch_the_lots_incident_on_both_engines(spark):
    contract = load_contract(OHLCV / "contract.yaml")
    bounds = profile(contract, OHLCV / "data" / "good.csv")
    report = assert_same(
        OHLCV / "contract.yaml", OHLCV / "data" / "bad_lots.csv", catalog=OHLCV / "catalog.yaml", bounds=bounds
    )
    assert {c["id"]: c["status"] for c in report["checks"]}["plausibility.volume.scale"] == "failed"


def test_spark_table_and_dataframe_inputs(spark, ohlcv_table):
    frame = spark.createDataFrame(ohlcv_table)
    frame.write.mode("overwrite").saveAsTable("tsc_bars")
    try:
        assert_same(OHLCV / "contract.yaml", ohlcv_table, frame, catalog=OHLCV / "catalog.yaml")
        assert_same(OHLCV / "contract.yaml", ohlcv_table, "spark:tsc_bars", catalog=OHLCV / "catalog.yaml")
    finally:
        spark.sql("DROP TABLE IF EXISTS tsc_bars")
    with pytest.raises(InputError, match="no table 'missing' in the Spark catalog"):
        validate(OHLCV / "contract.yaml", "spark:missing", engine="spark", now=NOW)


def test_unreadable_input_is_an_input_error_on_spark(spark, tmp_path):
    good = (OHLCV / "data" / "good.csv").read_text()
    broken = tmp_path / "broken.csv"
    broken.write_text(good + "AAPL,2026-11-30T14:30:00Z,1,2\n")
    # a line cut short is a malformed row, not an unreadable file: it fails source.rows on both engines
    report = assert_same(OHLCV / "contract.yaml", broken)
    check = next(c for c in report["checks"] if c["id"] == "source.rows")
    line = len(good.splitlines()) + 1
    assert check["examples"][0]["reason"] == f"line {line} has 4 fields, the header has 13"
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.csv: empty file"):
        validate(OHLCV / "contract.yaml", empty, engine="spark", now=NOW)
    not_json = tmp_path / "x.jsonl"
    not_json.write_text("[1, 2]\n")
    with pytest.raises(InputError, match="every JSON line must be an object"):
        validate(OHLCV / "contract.yaml", not_json, engine="spark", now=NOW)


def test_cli_engine_spark(spark, capsys):
    """The command line's Spark path, in this process: its flags parsed, each --spark-conf applied to the
    session (the test session's JVM is reused, as getOrCreate does in one process), exit code 1 with a JSON
    report. A bad --spark-conf is refused by the real entry point before any JVM starts: exit 2, one line."""
    from tests.conftest import run_cli
    from tscontract.cli import main

    before = spark.conf.get("spark.sql.shuffle.partitions")
    conf = ("--spark-conf", "spark.sql.shuffle.partitions=3")
    try:
        with pytest.raises(SystemExit) as exited:
            main([*map(str, VALIDATE_OHLCV_BAD), "--engine", "spark", "--spark-master", "local[1]", *conf])
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3" != before
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    out = capsys.readouterr()
    assert exited.value.code == 1, out.err
    report = json.loads(out.out)
    assert report["engine"] == "spark" and not report["passed"]
    assert "Traceback" not in out.err
    bad = run_cli(
        "validate",
        OHLCV / "contract.yaml",
        OHLCV / "data" / "bad.csv",
        "--engine",
        "spark",
        "--spark-conf",
        "no-equals-sign",
    )
    assert bad.returncode == 2 and "--spark-conf wants key=value" in bad.stderr
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_coverage_sessions_daily_bars_local_days_and_freshness_clocks(spark, tmp_path):
    from datetime import UTC, date, datetime

    from tests.engines import test_coverage as cov
    from tests.engines.vendor_shapes import bars_csv, catalog_with, contract_with, minute_bars, sessions

    monday = date(2026, 11, 30)
    intraday = contract_with(tmp_path, extra=cov.SESSION_COMPLETENESS, name="intraday.yaml")
    # a missing opening bar and missing closing bars: edge gaps in cadence and completeness
    bars = minute_bars(monday)[1:-5] + minute_bars(date(2026, 11, 27))
    report = assert_same(intraday, bars_csv(tmp_path, bars), catalog=OHLCV / "catalog.yaml")
    assert {c["id"]: c["failed_rows"] for c in report["checks"]}["time.cadence"] == 2
    # --from/--to cut the sessions
    covered = (datetime(2026, 11, 30, 14, 30, tzinfo=UTC), datetime(2026, 11, 30, 15, tzinfo=UTC))
    assert_same(
        intraday, bars_csv(tmp_path, minute_bars(monday)[:25]), catalog=OHLCV / "catalog.yaml", coverage=covered
    )
    # daily bars: a deleted session, a holiday bar, five-session windows, trading-day freshness
    days = sessions(date(2026, 11, 2), date(2026, 11, 27))
    days.remove(date(2026, 11, 12))
    extra = "completeness: {window: 5 sessions, min_ratio: 1.0}\nfreshness: {max_age: 1 trading day}\n"
    daily = contract_with(tmp_path, cov.DAILY, extra, name="daily.yaml")
    report = assert_same(daily, cov.daily(tmp_path, [*days, date(2026, 11, 26)]), catalog=OHLCV / "catalog.yaml")
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    assert statuses["time.cadence"] == statuses["time.session"] == statuses["completeness"] == "failed"
    # extended hours, and freshness on the session clock
    pre = [datetime(2026, 11, 30, 9, minute, tzinfo=UTC) for minute in range(3)]
    clock = contract_with(tmp_path, "60s; no bars outside session", "freshness: {max_age: 15m, clock: session}\n")
    assert_same(clock, bars_csv(tmp_path, pre + minute_bars(monday)), catalog=catalog_with(tmp_path, "extended"))
    assert_same(clock, bars_csv(tmp_path, []), catalog=OHLCV / "catalog.yaml")  # nothing arrived
    # local days of the device's zone across the fall-back night
    contract = write(tmp_path, cov.SENSOR_CONTRACT, "sensor.yaml")
    catalog = write(tmp_path, cov.SENSOR_CATALOG, "sensor_catalog.yaml")
    start, end = datetime(2026, 11, 1, 5, tzinfo=UTC), datetime(2026, 11, 2, 6, tzinfo=UTC)
    skipped = {datetime(2026, 11, 1, 6, 5 * n, tzinfo=UTC) for n in range(12)}
    report = assert_same(contract, cov.readings(tmp_path, start, end, skipped), catalog=catalog)
    assert {c["id"]: c["status"] for c in report["checks"]}["completeness"] == "failed"


def test_stray_bars_outside_every_session_widen_no_coverage(spark, tmp_path):
    parity.stray_bars_outside_every_session_widen_no_coverage(tmp_path, assert_same)


def test_rules_regex_unique_row_count_thresholds_and_sql_checks(spark, tmp_path):
    """Issue 14's rules give the same report on both engines: a regex (with a value ending in a line
    break, which Java's $ would accept), unique values with their rows, a tolerated share, SQL checks."""
    from tests.engines.test_rules import GOOD_ROWS, bad_rows, trades_contract, trades_csv

    contract = trades_contract(tmp_path)
    rows = bad_rows()
    rows[2] = rows[2].replace("AAPL,", '"AAPL\n",', 1)  # a quoted line break: no full match
    report = assert_same(contract, trades_csv(tmp_path, rows))
    checks = {c["id"]: c for c in report["checks"]}
    assert [e["row"] for e in checks["field.symbol.constraint"]["examples"]] == [2, 3, 7]
    assert checks["field.trade_id.unique"]["examples"][0]["rows"] == [5, 12]
    assert checks["invariants[1]"]["status"] == "passed" and checks["invariants[1]"]["failed_rows"] == 1
    assert checks["sql_checks.no_free_trades"]["status"] == "failed"
    assert checks["sql_checks.symbols_seen"]["examples"] == [{"value": 6}]
    good = assert_same(contract, trades_csv(tmp_path, GOOD_ROWS, "good.csv"))
    assert good["passed"]
    assert_same(contract, trades_csv(tmp_path, [], "empty.csv"))


def test_step_jumps_per_series(spark, tmp_path):
    """The step clause's two rules give the same failing rows on Spark (issue 25 item 3): one validation,
    the readings given twice, each column judged by one rule."""
    from tests.engines.test_step import CONTRACT, readings

    rules = {"temp_f": ("{max_abs: 5, max_gap: 2h}", [4, 5]), "temp_mad": ("{max_mad: 6, window: 5}", [4, 17])}
    field = CONTRACT[CONTRACT.index("  temp_f:") :]
    text = CONTRACT.replace("STEP", rules["temp_f"][0]) + field.replace("temp_f", "temp_mad").replace(
        "STEP", rules["temp_mad"][0]
    )
    lines = readings(tmp_path).read_text().splitlines()
    twice = [lines[0] + ",temp_mad", *(f"{line},{line.rsplit(',', 1)[1]}" for line in lines[1:])]
    report = assert_same(write(tmp_path, text, "temp.yaml"), write(tmp_path, "\n".join(twice) + "\n", "twice.csv"))
    found = {c["id"]: c for c in report["checks"]}
    for column, (step, rows) in rules.items():
        assert [e["row"] for e in found[f"field.{column}.step"]["examples"]] == rows, step


def test_weekly_hours_sessions_of_a_call_centre(spark, tmp_path):
    parity.weekly_hours_sessions_of_a_call_centre(tmp_path, assert_same)


def test_sentinel_flag_set_beside_a_value(spark, tmp_path):
    parity.sentinel_flag_set_beside_a_value(tmp_path, assert_same)


def test_duplicated_keys_judged_in_the_time_pass_window_on_spark(spark, tmp_path):
    """Spark judges the key in the time pass's window (engines/run/__init__.py key_in_time_pass) where DuckDB,
    reading CSV without row numbers, groups the keys in their own pass: copies, another revision, a null
    revision and copies moved outside the session give the same verdict, count, examples and message; a
    time that breaks its precision keeps the key check in its own pass on Spark too."""
    from tests.engines.test_key_in_time_pass import CATALOG, CONTRACT, edited, write_csv

    def key_reports(path: Path) -> tuple[dict, list[str]]:
        said: list[str] = []
        duck = validate(CONTRACT, path, engine="duckdb", now=NOW, catalog=CATALOG).to_json()
        ours = validate(CONTRACT, path, engine="spark", now=NOW, catalog=CATALOG, progress=said.append).to_json()
        for report in (duck, ours):
            report.pop("elapsed_s"), report.pop("engine")
        report = parity.equal_reports(duck, ours, "spark")
        return {c["id"]: c for c in report["checks"]}["key.unique"], said

    edits = [(0, "copy"), (0, "copy"), (3, "revision"), (5, "null revision"), (5, "null revision")]
    rows = edited([*edits, (7, "outside"), (9, "outside copy"), (11, "copy"), (30, "revision")])
    key, said = key_reports(write_csv(tmp_path / "bars.csv", rows))
    assert "key uniqueness" not in said  # judged in the window
    assert (key["status"], key["failed_rows"]) == ("failed", 7)  # bar 0 thrice, bar 11 and bar 9 (outside) twice
    rows[0]["bar_start"] = "2026-11-30T14:30:00.000500Z"  # precision broken: the key in its own pass
    key, said = key_reports(write_csv(tmp_path / "precise.csv", rows))
    assert "key uniqueness" in said
    copies = Counter((r["symbol"], r["bar_start"], r["revision"]) for r in rows if r["revision"])
    assert (key["status"], key["failed_rows"]) == ("failed", sum(n for n in copies.values() if n > 1)) == ("failed", 6)
