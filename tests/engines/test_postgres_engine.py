"""The PostgreSQL engine gives the same report as DuckDB on the same typed rows.

Each fixture is cast to the contract's types once (an Arrow table, which DuckDB
validates), and the same rows are copied in the same order into a real
PostgreSQL table with the matching SQL types, which the PostgreSQL engine
validates where it lives. The JSON reports must be identical apart from timing,
the engine's name and how the data is named: statuses, failing counts, examples
and the row numbers they give (PostgreSQL numbers rows in physical order, which
is the order they were copied in).
"""

from __future__ import annotations

import functools
import json
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.conftest import EXAMPLES, free_port, run_cli
from tests.engines import parity
from tests.engines.conftest import NOW, OHLCV
from tests.engines.pg_tables import load_table, typed_table
from tscontract import InputError, validate
from tscontract.contract.loader import load_contract
from tscontract.engines.duckdb import ValidationRun
from tscontract.engines.postgres import PostgresConnection, duckdb_type, open_postgres_source, split_url
from tscontract.plan.checks import build_plan

pytest.importorskip("psycopg", reason="the PostgreSQL engine is part of the dev install")

DATA_FILES = sorted(EXAMPLES.glob("*/data/*.csv"))


def table_name() -> str:
    return f"public.t{time.time_ns()}"


def reports(url: str, contract: Path, table: pa.Table, **kwargs: Any) -> tuple[dict, dict]:
    name = table_name()
    load_table(url, name, table, kwargs.pop("types", None))
    duck = validate(contract, table, now=NOW, **kwargs).to_json()
    pg = validate(contract, f"{url}#{name}", now=NOW, **kwargs).to_json()
    for report in (duck, pg):
        report.pop("elapsed_s"), report.pop("data")
    assert (duck.pop("engine"), pg.pop("engine")) == ("duckdb", "postgres")
    return duck, pg


def assert_same(url: str, contract: Path, data: Path | pa.Table, **kwargs: Any) -> dict:
    table = typed_table(contract, data) if isinstance(data, Path) else data
    return parity.equal_reports(*reports(url, contract, table, **kwargs), "postgres")


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_example_file(postgres_db, path):
    dataset = path.parent.parent
    report = assert_same(postgres_db, dataset / "contract.yaml", path, catalog=dataset / "catalog.yaml")
    assert report["rows"] > 0
    if path.name in ("bad.csv", "bad_kpa.csv"):  # not vacuous: these fail, with example rows
        assert not report["passed"]
        assert any(e.get("row") for c in report["checks"] for e in c["examples"])
    if path.name == "good.csv":
        assert report["passed"]


def _ohlcv(change: Any = None) -> pa.Table:
    table = typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "good.csv")
    return change(table) if change else table


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


TYPED = {
    "low-above-open": (_low_doubled, None),
    "naive-timestamps": (
        lambda t: _set(t, "bar_start", pc.cast(t.column("bar_start"), pa.timestamp("us"))),
        None,
    ),
    "epoch-ms": (_epoch(1), None),
    "epoch-s-read-as-ms": (_epoch(1000), None),
    "float-where-decimal": (lambda t: _set(t, "open", pc.cast(t.column("open"), pa.float64())), None),
    "wider-scale": (lambda t: t, {"open": "numeric(20,10)"}),
    "text-where-decimal": (lambda t: t, {"volume": "text"}),
    "unconstrained-numeric": (lambda t: t, {"close": "numeric"}),
    "extra-and-missing-columns": (
        lambda t: t.append_column("vwap", pa.array([1.0] * t.num_rows)).drop_columns(["trade_count"]),
        None,
    ),
}


@pytest.mark.parametrize("name", list(TYPED))
def test_typed_columns(postgres_db, name):
    change, types = TYPED[name]
    table = _ohlcv(change)
    if name == "wider-scale":  # a value with ten decimals, held in PostgreSQL as numeric(20,10)
        opens = table.column("open").to_pylist()
        from decimal import Decimal

        opens[2] += Decimal("0.0000000001")
        table = _set(table, "open", pa.array(opens, pa.decimal128(20, 10)))
        types = None
    if name in ("text-where-decimal", "unconstrained-numeric"):
        # no DuckDB type reads as PostgreSQL's does: compare PostgreSQL with what it must say
        report = validate(
            OHLCV / "contract.yaml", _pg(postgres_db, table, types), catalog=OHLCV / "catalog.yaml", now=NOW
        )
        column = "volume" if name == "text-where-decimal" else "close"
        check = next(c for c in report.to_json()["checks"] if c["id"] == f"field.{column}.type")
        assert check["status"] == "failed" and check["failed_rows"] == table.num_rows
        physical = "VARCHAR" if column == "volume" else "NUMERIC"
        assert check["message"].startswith(f"column is {physical} where decimal")
        return
    report = assert_same(postgres_db, OHLCV / "contract.yaml", table, catalog=OHLCV / "catalog.yaml", types=types)
    assert report["passed"] == (name == "epoch-ms")
    if name == "naive-timestamps":  # a PostgreSQL timestamp without time zone is no UTC instant
        utc = next(c for c in report["checks"] if c["kind"] == "utc_instant")
        assert utc["status"] == "failed" and utc["failed_rows"] == table.num_rows


def _pg(url: str, table: pa.Table, types: dict[str, str] | None = None) -> str:
    name = table_name()
    load_table(url, name, table, types)
    return f"{url}#{name}"


def test_physical_types_are_named_as_duckdb_names_them():
    assert duckdb_type("timestamp with time zone") == "TIMESTAMP WITH TIME ZONE"
    assert duckdb_type("timestamp(3) with time zone") == "TIMESTAMP WITH TIME ZONE"
    assert duckdb_type("timestamp without time zone") == "TIMESTAMP"
    assert duckdb_type("numeric(18,8)") == "DECIMAL(18,8)"
    assert duckdb_type("numeric") == "NUMERIC"
    assert duckdb_type("double precision") == "DOUBLE"
    assert duckdb_type("character varying(12)") == "VARCHAR"
    assert duckdb_type("integer") == "INTEGER"


def test_time_checks_cadence_completeness_sessions_freshness(postgres_db, tmp_path):
    parity.time_checks_cadence_completeness_sessions_freshness(tmp_path, functools.partial(assert_same, postgres_db))


def test_coverage_daily_bars_local_days_and_freshness_clocks(postgres_db, tmp_path):
    parity.coverage_daily_bars_local_days_and_freshness_clocks(tmp_path, functools.partial(assert_same, postgres_db))


def test_stray_bars_outside_every_session_widen_no_coverage(postgres_db, tmp_path):
    parity.stray_bars_outside_every_session_widen_no_coverage(tmp_path, functools.partial(assert_same, postgres_db))


def test_profiled_bounds_catch_the_lots_incident(postgres_db, tmp_path):
    parity.profiled_bounds_catch_the_lots_incident(tmp_path, functools.partial(assert_same, postgres_db))


def test_rules_regex_unique_thresholds_and_sql_checks(postgres_db, tmp_path):
    parity.rules_regex_unique_thresholds_and_sql_checks(tmp_path, functools.partial(assert_same, postgres_db))


def test_step_jumps_per_series_with_revisions_nulls_and_gaps(postgres_db, tmp_path):
    parity.step_jumps_per_series_with_revisions_nulls_and_gaps(tmp_path, functools.partial(assert_same, postgres_db))


def test_weekly_hours_sessions_of_a_call_centre(postgres_db, tmp_path):
    parity.weekly_hours_sessions_of_a_call_centre(tmp_path, functools.partial(assert_same, postgres_db))


def test_sentinel_flag_set_beside_a_value(postgres_db, tmp_path):
    parity.sentinel_flag_set_beside_a_value(tmp_path, functools.partial(assert_same, postgres_db))


def test_no_row_leaves_the_database_but_counts_and_examples(postgres_db):
    table = typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv")
    url = _pg(postgres_db, table)
    conninfo, parts, _ = split_url(url)
    plan = build_plan(load_contract(OHLCV / "contract.yaml"), None)
    con = PostgresConnection(conninfo)
    try:
        source = open_postgres_source(con, url, plan.contract.key)
        report = ValidationRun(plan, source, NOW, 5, None, con=con, engine="postgres").run()  # type: ignore[arg-type]
    finally:
        con.close()
    assert not report.passed
    named = [s for s in con.statements if f'FROM "public"."{parts[-1]}"' in s]
    assert len(named) == 1 and named[0].startswith("CREATE TEMP VIEW __tsc_source")  # read once, by the view
    assert con.rows_fetched < table.num_rows / 4  # counts, examples, a few aggregates: not the rows


# ---------------------------------------------------------------------------- CLI
def test_cli_validates_a_table_in_place(postgres_db):
    url = _pg(postgres_db, typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv"))
    out = run_cli("validate", OHLCV / "contract.yaml", url, "--catalog", OHLCV / "catalog.yaml", "--format", "json")
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    assert report["engine"] == "postgres" and not report["passed"] and report["rows"] == 781
    assert report["data"] == [url]
    good = _pg(postgres_db, typed_table(OHLCV / "contract.yaml", OHLCV / "data" / "good.csv"))
    now = ("--now", "2026-11-30T21:05:00Z")
    out = run_cli("validate", OHLCV / "contract.yaml", good, "--catalog", OHLCV / "catalog.yaml", *now)
    assert out.returncode == 0, out.stdout + out.stderr


def _one_line_exit_2(*args: Any) -> str:
    out = run_cli("validate", OHLCV / "contract.yaml", *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    return out.stderr


def test_cli_input_errors_are_one_line_exit_2(postgres_db, tmp_path):
    assert "no such table" in _one_line_exit_2(f"{postgres_db}#public.missing")
    assert "cannot read a PostgreSQL table" in _one_line_exit_2(f"{postgres_db}#t", "--html", tmp_path / "r.html")
    assert "name the table after '#'" in _one_line_exit_2(postgres_db)
    assert "a table is named table or schema.table" in _one_line_exit_2(f"{postgres_db}#a.b.c")
    refused = f"postgresql://tsc:secret@127.0.0.1:{free_port()}/postgres#bars"
    message = _one_line_exit_2(refused)
    assert "cannot connect to" in message and "secret" not in message
    message = _one_line_exit_2(OHLCV / "data" / "good.csv", "--engine", "postgres")
    assert "validates one table" in message
    with pytest.raises(InputError, match="no such table"):
        validate(OHLCV / "contract.yaml", f"{postgres_db}#nowhere", engine="postgres")


# ---------------------------------------------------------------------------- the SQL rewrites
SAME_ANSWER = [
    "SELECT epoch_us(TIMESTAMPTZ '2026-11-30 14:30:00.123456+00')",
    "SELECT make_timestamptz(1796142600123456)",
    "SELECT time_bucket(to_microseconds(300000000), TIMESTAMPTZ '2026-11-30 14:37:12+00')",
    "SELECT time_bucket(to_microseconds(86400000000 * 7), TIMESTAMPTZ '2026-11-30 14:37:12+00')",
    "SELECT strftime(TIMESTAMPTZ '2026-11-30 04:05:06+00', '%Y-%m-%dT%H:%M:%S')",
    "SELECT quantile_disc(x, 0.5), quantile_disc(x, 0.01), quantile_disc(x, 0.99) FROM "
    "(SELECT unnest(generate_series(1, 10)) AS x) q",
    "SELECT count(DISTINCT (a, b)) FROM (VALUES (1, 'x'), (1, 'x'), (2, 'x'), (2, NULL)) AS v(a, b)",
    "SELECT 7 // 2, -7 // 2, 7 % 3, -7 % 3",
    "SELECT TRY_CAST('12.5' AS DECIMAL(4,1)), TRY_CAST('x' AS DECIMAL(4,1)), TRY_CAST('1e9' AS DOUBLE)",
    "SELECT TRY_CAST(123456.789 AS DECIMAL(5,2)), TRY_CAST(123.456 AS DECIMAL(5,2))",
    "SELECT TRY_CAST('2026-11-30T14:30:00Z' AS TIMESTAMPTZ), TRY_CAST('no' AS TIMESTAMPTZ), TRY_CAST('no' AS DATE)",
    "SELECT regexp_full_match('AAPL', '[A-Z]+'), regexp_full_match('AAPL\n', '[A-Z]+'), "
    "regexp_full_match('xAAPL', '^A|L$')",
    "SELECT regexp_extract('12.3400', '\\.(\\d+)$', 1), regexp_extract('12', '\\.(\\d+)$', 1)",
    "SELECT x, count(*) AS n FROM (VALUES (1), (1), (2)) AS v(x) GROUP BY ALL ORDER BY 1",
    "SELECT sum(x), any_value(x) FROM (SELECT 5 AS x) q",
    "SELECT day FROM (SELECT unnest(generate_series(TIMESTAMPTZ '2026-11-30 00:00:00+00', "
    "TIMESTAMPTZ '2026-12-02 00:00:00+00', INTERVAL 1 DAY)) AS day) ORDER BY 1",
]


def test_rewritten_statements_answer_as_duckdb_does(postgres_db):
    from tscontract.engines.duckdb import connect

    duck = connect()
    con = PostgresConnection(postgres_db)
    try:
        for sql in SAME_ANSWER:
            assert con.execute(sql).fetchall() == duck.execute(sql).fetchall(), sql
        # a 64-bit hash over the whole tuple: equal tuples agree, a differing part differs
        at = "TIMESTAMPTZ '2026-11-30 00:00:00+00'"
        one, same, other = (
            con.execute(f"SELECT hash(1, CAST('a' AS VARCHAR), {at} + INTERVAL {d} SECOND)").fetchall()[0][0]
            for d in (0, 0, 1)
        )
        assert one == same != other and -(2**63) <= one < 2**63
    finally:
        con.close()
        duck.close()


def test_large_helper_tables_go_in_by_copy(postgres_db):
    from tscontract.engines.relations import LITERAL_ROWS, small_table

    con = PostgresConnection(postgres_db)
    try:
        rows = [(f"s{i}", Decimal(i) / 8, datetime(2026, 1, 1, tzinfo=UTC)) for i in range(LITERAL_ROWS + 1)]
        columns = [("a", "VARCHAR"), ("b", "DECIMAL(38,10)"), ("t", "TIMESTAMPTZ")]
        small_table(con, "__tsc_big", columns, rows)
        assert any(s.startswith("CREATE TEMP TABLE") and "__tsc_big_rows" in s for s in con.statements)
        found = con.execute("SELECT count(*), max(b), min(t) FROM __tsc_big").fetchall()
        assert found == [(LITERAL_ROWS + 1, Decimal(LITERAL_ROWS) / 8, datetime(2026, 1, 1, tzinfo=UTC))]
    finally:
        con.close()
