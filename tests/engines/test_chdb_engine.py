"""The chdb engine (in-process ClickHouse) gives the same report as DuckDB on the same Parquet files.

Each fixture is cast to the contract's types once and written as Parquet; DuckDB and
chdb validate that same file. The JSON reports must be identical apart from timing and
the engine's name: statuses, failing counts, examples and the row numbers they give
(chdb numbers a file's rows as the file holds them, as DuckDB does).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.conftest import EXAMPLES, run_cli
from tests.engines import parity
from tests.engines.conftest import NOW, OHLCV
from tests.engines.pg_tables import typed_table
from tscontract import InputError, validate
from tscontract.engines.chdb import ChdbConnection, duckdb_type

pytest.importorskip("chdb", reason="the chdb engine is part of the dev install")

DATA_FILES = sorted(EXAMPLES.glob("*/data/*.csv"))


def parquet(tmp_path: Path, table: pa.Table, name: str = "data.parquet") -> Path:
    path = tmp_path / name
    pq.write_table(table, path, row_group_size=100)  # several row groups: numbering crosses them
    return path


def reports(contract: Path, data: Any, **kwargs: Any) -> tuple[dict, dict]:
    duck = validate(contract, data, now=NOW, **kwargs).to_json()
    ch = validate(contract, data, now=NOW, engine="chdb", **kwargs).to_json()
    for report in (duck, ch):
        report.pop("elapsed_s")
    assert (duck.pop("engine"), ch.pop("engine")) == ("duckdb", "chdb")
    return duck, ch


def assert_same(tmp_path: Path, contract: Path, data: Path | pa.Table | list[Path], **kwargs: Any) -> dict:
    if isinstance(data, Path) and data.suffix == ".csv":
        data = typed_table(contract, data)
    as_parquet = kwargs.pop("as_parquet", True)  # else the table or frame itself, as both engines take it
    if isinstance(data, pa.Table) and as_parquet:
        data = parquet(tmp_path, data)
    return parity.equal_reports(*reports(contract, data, **kwargs), "chdb")


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_example_file(tmp_path, path):
    dataset = path.parent.parent
    report = assert_same(tmp_path, dataset / "contract.yaml", path, catalog=dataset / "catalog.yaml")
    assert report["rows"] > 0
    if path.name in ("bad.csv", "bad_kpa.csv"):  # not vacuous: these fail, with example rows
        assert not report["passed"]
        assert any(e.get("row") for c in report["checks"] for e in c["examples"])
    if path.name == "good.csv":
        assert report["passed"]


def _set(table: pa.Table, name: str, array: Any) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, array)


def _epoch(divisor: int) -> Any:
    def change(t: pa.Table) -> pa.Table:
        millis = pc.cast(pc.cast(t.column("bar_start"), pa.timestamp("ms", tz="UTC")), pa.int64())
        return _set(t, "bar_start", pc.divide(millis, divisor))

    return change


def _low_doubled(t: pa.Table) -> pa.Table:
    low = t.column("low").to_pylist()
    low[3] = low[3] * 2
    return _set(t, "low", pa.array(low, t.schema.field("low").type))


def _wider_scale(t: pa.Table) -> pa.Table:  # a value with ten decimals where eight are declared
    opens = t.column("open").to_pylist()
    from decimal import Decimal

    opens[2] += Decimal("0.0000000001")
    return _set(t, "open", pa.array(opens, pa.decimal128(20, 10)))


def _nulls_and_big_ints(t: pa.Table) -> pa.Table:
    counts = t.column("trade_count").to_pylist()
    counts[1], counts[5] = None, 2**40
    symbols = t.column("symbol").to_pylist()
    symbols[7] = None
    t = _set(t, "trade_count", pa.array(counts, pa.int64()))
    return _set(t, "symbol", pa.array(symbols, pa.string()))


def _required(t: pa.Table) -> pa.Table:  # columns without a NULL declared required, as writers often do
    return t.cast(pa.schema([f.with_nullable(t.column(f.name).null_count > 0) for f in t.schema]))


TYPED = {
    "required-columns": _required,
    "low-above-open": _low_doubled,
    "naive-timestamps": lambda t: _set(t, "bar_start", pc.cast(t.column("bar_start"), pa.timestamp("us"))),
    "microsecond-timestamps": lambda t: _set(
        t,
        "bar_start",
        pc.add(pc.cast(t.column("bar_start"), pa.timestamp("us", tz="UTC")), pa.scalar(7, pa.duration("us"))),
    ),
    "epoch-ms": _epoch(1),
    "epoch-s-read-as-ms": _epoch(1000),
    "float-where-decimal": lambda t: _set(t, "open", pc.cast(t.column("open"), pa.float64())),
    "wider-scale": _wider_scale,
    "text-where-decimal": lambda t: _set(t, "volume", pc.cast(t.column("volume"), pa.string())),
    "int32-counts": lambda t: _set(t, "trade_count", pc.cast(t.column("trade_count"), pa.int32())),
    "nulls-and-big-counts": _nulls_and_big_ints,
    "extra-and-missing-columns": lambda t: t.append_column("vwap", pa.array([1.0] * t.num_rows)).drop_columns(
        ["trade_count"]
    ),
}


@pytest.mark.parametrize("name", list(TYPED))
def test_typed_columns(tmp_path, name):
    table = TYPED[name](typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "good.csv"))
    report = assert_same(tmp_path, OHLCV / "contract.yaml", table, catalog=OHLCV / "catalog.yaml")
    assert report["passed"] == (name in ("required-columns", "epoch-ms", "int32-counts"))
    if name == "naive-timestamps":  # a timestamp without a zone is no UTC instant
        utc = next(c for c in report["checks"] if c["kind"] == "utc_instant")
        assert utc["status"] == "failed" and utc["failed_rows"] == table.num_rows


def test_several_files_numbered_in_order_columns_by_name(tmp_path):
    table = typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv")
    first = parquet(tmp_path, table.slice(0, 10), "a.parquet")
    second = parquet(tmp_path, table.slice(10).drop_columns(["trade_count"]), "b.parquet")
    report = assert_same(tmp_path, OHLCV / "contract.yaml", [first, second], catalog=OHLCV / "catalog.yaml")
    rows = [e["row"] for c in report["checks"] for e in c["examples"] if "row" in e]
    assert max(rows) > 10  # examples from the second file are numbered after the first file's rows


def test_arrow_tables_and_dataframes(tmp_path):
    polars = pytest.importorskip("polars")
    table = typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv")
    for data in (table, polars.from_arrow(table)):
        report = assert_same(tmp_path, OHLCV / "contract.yaml", data, catalog=OHLCV / "catalog.yaml", as_parquet=False)
        assert report["data"] == [f"<{type(data).__name__}>"] and not report["passed"]
        assert any(e.get("row") for c in report["checks"] for e in c["examples"])


def test_physical_types_are_named_as_duckdb_names_them():
    assert duckdb_type("Nullable(DateTime64(3, 'UTC'))") == "TIMESTAMP WITH TIME ZONE"
    assert duckdb_type("DateTime64(6)") == "TIMESTAMP"
    assert duckdb_type("Nullable(Decimal(18, 8))") == "DECIMAL(18,8)"
    assert duckdb_type("LowCardinality(Nullable(String))") == "VARCHAR"
    assert duckdb_type("Nullable(Float64)") == "DOUBLE"
    assert duckdb_type("Int32") == "INTEGER"
    assert duckdb_type("Nullable(Date32)") == "DATE"


def test_time_checks_cadence_completeness_sessions_freshness(tmp_path):
    parity.time_checks_cadence_completeness_sessions_freshness(tmp_path, functools.partial(assert_same, tmp_path))


def test_coverage_daily_bars_local_days_and_freshness_clocks(tmp_path):
    parity.coverage_daily_bars_local_days_and_freshness_clocks(tmp_path, functools.partial(assert_same, tmp_path))


def test_stray_bars_outside_every_session_widen_no_coverage(tmp_path):
    parity.stray_bars_outside_every_session_widen_no_coverage(tmp_path, functools.partial(assert_same, tmp_path))


def test_profiled_bounds_catch_the_lots_incident(tmp_path):
    parity.profiled_bounds_catch_the_lots_incident(tmp_path, functools.partial(assert_same, tmp_path))


def test_rules_regex_unique_thresholds_and_sql_checks(tmp_path):
    parity.rules_regex_unique_thresholds_and_sql_checks(tmp_path, functools.partial(assert_same, tmp_path))


def test_step_jumps_per_series_with_revisions_nulls_and_gaps(tmp_path):
    parity.step_jumps_per_series_with_revisions_nulls_and_gaps(tmp_path, functools.partial(assert_same, tmp_path))


def test_weekly_hours_sessions_of_a_call_centre(tmp_path):
    parity.weekly_hours_sessions_of_a_call_centre(tmp_path, functools.partial(assert_same, tmp_path))


def test_sentinel_flag_set_beside_a_value(tmp_path):
    parity.sentinel_flag_set_beside_a_value(tmp_path, functools.partial(assert_same, tmp_path))


# ---------------------------------------------------------------------------- CLI
def test_cli_validates_parquet_with_chdb(tmp_path):
    bad = parquet(tmp_path, typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv"), "bad.parquet")
    now = ("--now", "2026-11-30T21:05:00Z")
    args = ("--catalog", OHLCV / "catalog.yaml", "--engine", "chdb", *now)
    out = run_cli("validate", OHLCV / "contract.yaml", bad, *args, "--format", "json")
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    assert report["engine"] == "chdb" and not report["passed"] and report["rows"] == 781
    good = parquet(tmp_path, typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "good.csv"), "good.parquet")
    out = run_cli("validate", OHLCV / "contract.yaml", good, *args)
    assert out.returncode == 0, out.stdout + out.stderr


def test_cli_input_errors_are_one_line_exit_2(tmp_path):
    def one_line_exit_2(*args: Any) -> str:
        out = run_cli("validate", OHLCV / "contract.yaml", *args, "--engine", "chdb")
        assert out.returncode == 2, out.stdout + out.stderr
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
        return out.stderr

    assert "the chdb engine reads Parquet files" in one_line_exit_2(OHLCV / "data" / "good.csv")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really parquet")
    assert "cannot read" in one_line_exit_2(broken)
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    assert "empty file" in one_line_exit_2(empty)
    with pytest.raises(InputError, match="reads Parquet"):
        validate(OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", engine="chdb")


def test_memory_limit_bounds_clickhouse_too(tmp_path):
    from tscontract.engines.chdb import memory_bytes

    assert (memory_bytes("1GiB"), memory_bytes("512MB"), memory_bytes(" 2 gib ")) == (2**30, 512 * 10**6, 2 * 2**30)
    with pytest.raises(InputError, match="give a size such as"):
        memory_bytes("lots")
    bad = parquet(tmp_path, typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv"))
    args = ("validate", OHLCV / "contract.yaml", bad, "--catalog", OHLCV / "catalog.yaml", "--engine", "chdb")
    out = run_cli("--memory-limit", "64KiB", *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "memory limit exceeded" in out.stderr.lower() and len(out.stderr.strip().splitlines()) == 1
    assert run_cli("--memory-limit", "512MiB", *args).returncode == 1  # enough: the data fails its checks


# ---------------------------------------------------------------------------- the SQL rewrites
SAME_ANSWER = [
    "SELECT epoch_us(TIMESTAMPTZ '2026-11-30 14:30:00.123456+00'), epoch_us(TIMESTAMPTZ '1969-12-31 23:59:59.5+00')",
    "SELECT make_timestamptz(1796142600123456)",
    "SELECT time_bucket(to_microseconds(300000000), TIMESTAMPTZ '2026-11-30 14:37:12+00')",
    "SELECT time_bucket(to_microseconds(86400000000 * 7), TIMESTAMPTZ '2026-11-30 14:37:12+00')",
    "SELECT strftime(TIMESTAMPTZ '2026-11-30 04:05:06+00', '%Y-%m-%dT%H:%M:%S')",
    "SELECT quantile_disc(x, 0.5), quantile_disc(x, 0.01), quantile_disc(x, 0.99), quantile_disc(x, 0.25) FROM "
    "(SELECT unnest(generate_series(1, 100)) AS x) q",
    "SELECT quantile_disc(x, 0.5) FROM (SELECT unnest(generate_series(1, 4)) AS x) q WHERE x > 9",
    "SELECT count(DISTINCT (a, b)) FROM (VALUES (1, 'x'), (1, 'x'), (2, 'x'), (2, NULL)) AS v(a, b)",
    "SELECT 7 // 2, -7 // 2, 7 % 3, -7 % 3",
    "SELECT TRY_CAST(123456.789 AS DECIMAL(5,2)), TRY_CAST(123.456 AS DECIMAL(5,2)), TRY_CAST(2.5e30 AS BIGINT)",
    "SELECT regexp_full_match('AAPL', '[A-Z]+'), regexp_full_match('AAPL\n', '[A-Z]+'), "
    "regexp_full_match('xAAPL', '^A|L$')",
    "SELECT regexp_extract('12.3400', '\\.(\\d+)$', 1), regexp_extract('12', '\\.(\\d+)$', 1)",
    "SELECT x, count(*) AS n FROM (VALUES (1), (1), (2)) AS v(x) GROUP BY ALL ORDER BY 1",
    "SELECT sum(x), any_value(x), count(*) FILTER (WHERE x > 9) FROM (SELECT 5 AS x) q",
    "SELECT sum(x), min(x) FROM (SELECT 5 AS x) q WHERE x > 9",
    "SELECT 1 < 2, 'a' = 'b' AS same, 1 IS NULL, NOT TRUE, NULL::INT > 1, 5 IN (1, 2), TRUE OR FALSE",
    "SELECT x FROM (VALUES (2), (NULL), (1)) AS v(x) ORDER BY x DESC",
    "SELECT a.x, b.y FROM (VALUES (1), (2)) AS a(x) LEFT JOIN (VALUES (1, 'one')) AS b(x, y) ON a.x = b.x ORDER BY 1",
    "SELECT day FROM (SELECT unnest(generate_series(TIMESTAMPTZ '2026-11-30 00:00:00+00', "
    "TIMESTAMPTZ '2026-12-02 00:00:00+00', to_microseconds(86400000000))) AS day) ORDER BY 1",
]


def test_rewritten_statements_answer_as_duckdb_does():
    from tscontract.engines.duckdb import connect

    duck = connect()
    con = ChdbConnection()
    try:
        for sql in SAME_ANSWER:
            found, expected = con.execute(sql).fetchall(), duck.execute(sql).fetchall()
            assert found == expected, sql
            # the same Python types too: 1 is no True, a float no Decimal
            assert [[type(v) for v in r] for r in found] == [[type(v) for v in r] for r in expected], sql
        # a 64-bit hash over the whole tuple: equal tuples agree, a differing part differs
        at = "TIMESTAMPTZ '2026-11-30 00:00:00+00'"
        one, same, other = (
            con.execute(f"SELECT hash(1, CAST('a' AS VARCHAR), {at} + INTERVAL {d} SECOND)").fetchall()[0][0]
            for d in (0, 0, 1)
        )
        assert one == same != other
    finally:
        con.close()
        duck.close()


def test_large_helper_tables_go_in_as_arrow():
    from datetime import UTC, datetime
    from decimal import Decimal

    from tscontract.engines.relations import LITERAL_ROWS, small_table

    con = ChdbConnection()
    try:
        rows = [(f"s{i}", Decimal(i) / 8, datetime(2026, 1, 1, tzinfo=UTC)) for i in range(LITERAL_ROWS + 1)]
        columns = [("a", "VARCHAR"), ("b", "DECIMAL(38,10)"), ("t", "TIMESTAMPTZ")]
        small_table(con, "__tsc_big", columns, rows)
        assert any("rows.parquet" in s for s in con.statements)  # one file, not thousands of literals
        found = con.execute("SELECT count(*), max(b), min(t) FROM __tsc_big").fetchall()
        assert found == [(LITERAL_ROWS + 1, Decimal(LITERAL_ROWS) / 8, datetime(2026, 1, 1, tzinfo=UTC))]
    finally:
        con.close()
