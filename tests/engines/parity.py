"""Scenarios every engine's parity suite runs against DuckDB (PostgreSQL, chdb): each takes ``same(contract,
data, **options)``, which validates on DuckDB and on the engine, asserts the reports are equal and returns
DuckDB's as JSON (:func:`equal_reports`), then asserts the scenario's own findings so a vacuous pass fails."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tests.conftest import write
from tests.engines.conftest import OHLCV, SENSOR
from tscontract.contract.loader import load_contract
from tscontract.engines.profile import profile

Same = Callable[..., dict[str, Any]]


def statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def equal_reports(duck: dict, other: dict, engine: str) -> dict:
    """DuckDB's report, asserted equal to ``engine``'s: a differing check is named, both sides shown."""
    for a, b in zip(duck["checks"], other["checks"], strict=True):
        assert a == b, f"{a['id']} differs:\nduckdb {json.dumps(a)}\n{engine} {json.dumps(b)}"
    assert duck == other
    return duck


def time_checks_cadence_completeness_sessions_freshness(tmp_path: Path, same: Same) -> None:
    from tests.engines.test_time_checks import bars, sensor_csv

    text = (SENSOR / "contract.yaml").read_text()
    text += "completeness: {window: 1m, expected_count: per cadence}\nfreshness: {max_age: 15m}\n"
    contract = write(tmp_path, text, "c.yaml")
    data = sensor_csv(tmp_path, [0, 10, 20, 50, 61.5, 70, *range(80, 200, 10)])
    report = same(contract, data, catalog=SENSOR / "catalog.yaml")
    found = statuses(report)
    assert found["completeness"] == found["time.cadence"] == found["freshness"] == "failed"

    sessions = [
        "2026-11-27T17:58:00.000Z",
        "2026-11-27T17:59:00.000Z",
        "2026-11-27T18:00:00.000Z",  # after the half-day close
        "2026-11-26T15:00:00.000Z",  # Thanksgiving
        "2026-11-30T14:30:00.000Z",
        "2026-11-30T14:33:00.000Z",
    ]
    bars_text = (OHLCV / "contract.yaml").read_text() + "completeness: {window: 1h, expected_count: per cadence}\n"
    contract = write(tmp_path, bars_text, "b.yaml")
    report = same(contract, bars(tmp_path, sessions), catalog=OHLCV / "catalog.yaml")
    assert {c["id"]: c["failed_rows"] for c in report["checks"]}["time.session"] == 2


def coverage_daily_bars_local_days_and_freshness_clocks(tmp_path: Path, same: Same) -> None:
    from tests.engines import test_coverage as cov
    from tests.engines.vendor_shapes import bars_csv, catalog_with, contract_with, minute_bars, sessions

    monday = date(2026, 11, 30)
    intraday = contract_with(tmp_path, extra=cov.SESSION_COMPLETENESS, name="intraday.yaml")
    bars = minute_bars(monday)[1:-5] + minute_bars(date(2026, 11, 27))
    report = same(intraday, bars_csv(tmp_path, bars), catalog=OHLCV / "catalog.yaml")
    assert {c["id"]: c["failed_rows"] for c in report["checks"]}["time.cadence"] == 2
    covered = (datetime(2026, 11, 30, 14, 30, tzinfo=UTC), datetime(2026, 11, 30, 15, tzinfo=UTC))
    data = bars_csv(tmp_path, minute_bars(monday)[:25])
    same(intraday, data, catalog=OHLCV / "catalog.yaml", coverage=covered)
    days = sessions(date(2026, 11, 2), date(2026, 11, 27))
    days.remove(date(2026, 11, 12))
    extra = "completeness: {window: 5 sessions, min_ratio: 1.0}\nfreshness: {max_age: 1 trading day}\n"
    daily = contract_with(tmp_path, cov.DAILY, extra, name="daily.yaml")
    data = cov.daily(tmp_path, [*days, date(2026, 11, 26)])
    report = same(daily, data, catalog=OHLCV / "catalog.yaml")
    found = statuses(report)
    assert found["time.cadence"] == found["time.session"] == found["completeness"] == "failed"
    pre = [datetime(2026, 11, 30, 9, minute, tzinfo=UTC) for minute in range(3)]
    clock = contract_with(tmp_path, "60s; no bars outside session", "freshness: {max_age: 15m, clock: session}\n")
    extended = catalog_with(tmp_path, "extended")
    same(clock, bars_csv(tmp_path, pre + minute_bars(monday)), catalog=extended)
    contract = write(tmp_path, cov.SENSOR_CONTRACT, "sensor.yaml")
    catalog = write(tmp_path, cov.SENSOR_CATALOG, "sensor_catalog.yaml")
    start, end = datetime(2026, 11, 1, 5, tzinfo=UTC), datetime(2026, 11, 2, 6, tzinfo=UTC)
    skipped = {datetime(2026, 11, 1, 6, 5 * n, tzinfo=UTC) for n in range(12)}
    report = same(contract, cov.readings(tmp_path, start, end, skipped), catalog=catalog)
    assert statuses(report)["completeness"] == "failed"


def stray_bars_outside_every_session_widen_no_coverage(tmp_path: Path, same: Same) -> None:
    """Issue 29: a Saturday bar and a 03:00Z bar before the batch are reported once each as outside the
    session; cadence and completeness find exactly the four planted holes, nothing around the strays."""
    from tests.engines import test_coverage as cov
    from tests.engines.vendor_shapes import contract_with, stray_batch, symbols_catalog, symbols_csv

    contract = contract_with(tmp_path, extra=cov.SESSION_COMPLETENESS, name="stray.yaml")
    report = same(contract, symbols_csv(tmp_path, stray_batch()), catalog=symbols_catalog(tmp_path))
    checks = {c["id"]: c for c in report["checks"]}
    session, cadence, completeness = checks["time.session"], checks["time.cadence"], checks["completeness"]
    assert session["failed_rows"] == 2
    assert [(e["symbol"], e["bar_start"]) for e in session["examples"]] == [
        ("AAPL", "2026-11-21T15:00:00Z"),
        ("MSFT", "2026-11-19T03:00:00Z"),
    ]
    found = [(e["symbol"], e["bar_start"], e.get("edge", "gap")) for e in cadence["examples"]]
    assert (cadence["failed_rows"], found) == (len(cov.PLANTED_GAPS), cov.PLANTED_GAPS)
    short = [(e["symbol"], e["window_start"], e["expected"], e["actual"]) for e in completeness["examples"]]
    assert (completeness["failed_rows"], short) == (len(cov.PLANTED_SHORT), cov.PLANTED_SHORT)
    # a bar after the close (21:02Z, 3 minutes before the tests' now) makes AAPL no fresher than its 20:59 bar
    fresh = contract_with(tmp_path, extra="freshness: {max_age: 5m}\n", name="stray_fresh.yaml")
    late = symbols_csv(tmp_path, stray_batch((("AAPL", datetime(2026, 11, 30, 21, 2, tzinfo=UTC)),)), "late.csv")
    freshness = {c["id"]: c for c in same(fresh, late, catalog=symbols_catalog(tmp_path))["checks"]}["freshness"]
    newest = {e["symbol"]: e["newest"] for e in freshness["examples"]}
    assert (freshness["failed_rows"], newest["AAPL"]) == (3, "2026-11-30T20:59:00Z")


def profiled_bounds_catch_the_lots_incident(tmp_path: Path, same: Same) -> None:
    bounds = profile(load_contract(OHLCV / "contract.yaml"), OHLCV / "data" / "good.csv")
    data = OHLCV / "data" / "bad_lots.csv"
    report = same(OHLCV / "contract.yaml", data, catalog=OHLCV / "catalog.yaml", bounds=bounds)
    assert statuses(report)["plausibility.volume.scale"] == "failed"


def rules_regex_unique_thresholds_and_sql_checks(tmp_path: Path, same: Same) -> None:
    from tests.engines.test_rules import GOOD_ROWS, bad_rows, trades_contract, trades_csv

    contract = trades_contract(tmp_path)
    rows = bad_rows()
    rows[2] = rows[2].replace("AAPL,", '"AAPL\n",', 1)  # a value ending in a line break: no full match
    report = same(contract, trades_csv(tmp_path, rows))
    checks = {c["id"]: c for c in report["checks"]}
    assert [e["row"] for e in checks["field.symbol.constraint"]["examples"]] == [2, 3, 7]
    assert checks["field.trade_id.unique"]["examples"][0]["rows"] == [5, 12]
    assert checks["sql_checks.no_free_trades"]["status"] == "failed"
    assert checks["sql_checks.symbols_seen"]["examples"] == [{"value": 6}]  # AAPL\n is one more
    assert same(contract, trades_csv(tmp_path, GOOD_ROWS, "good.csv"))["passed"]


def step_jumps_per_series_with_revisions_nulls_and_gaps(tmp_path: Path, same: Same) -> None:
    from tests.engines.test_step import CONTRACT, START, readings

    def contract(tmp_path: Path, step: str) -> Path:
        # no float constraint here: PostgreSQL lacks is_nan for float range clauses (another issue)
        text = CONTRACT.replace("STEP", step).replace("    constraint: between -80 and 130\n", "")
        return write(tmp_path, text, "temp.yaml")

    fixed = [f"KJFK,{START.replace(hour=3).isoformat()},1,55.6"]  # a later revision corrects the spike
    for step, rows in (
        ("{max_abs: 10}", [4, 5]),
        ("{max_abs: 5, max_gap: 2h}", [4, 5]),
        ("{max_mad: 6, window: 5}", [4, 17]),
        ("{max_mad: 6, window: 5, max_gap: 2h}", [4]),
    ):
        report = same(contract(tmp_path, step), readings(tmp_path))
        found = {c["id"]: c for c in report["checks"]}["field.temp_f.step"]
        assert [e["row"] for e in found["examples"]] == rows, step
    report = same(contract(tmp_path, "{max_mad: 6, window: 5, max_gap: 2h}"), readings(tmp_path, fixed, "rev.csv"))
    assert statuses(report)["field.temp_f.step"] == "passed"


def weekly_hours_sessions_of_a_call_centre(tmp_path: Path, same: Same) -> None:
    """A calendar declared as local weekly hours (contract and catalog): the six missing weekdays, no more."""
    from tests.engines import callcentre as cc

    extra = cc.COMPLETENESS + "freshness: {max_age: 30m, clock: session}\n"
    stray = [cc.local(cc.CLOSURE, 9)]  # a call on the listed closure: outside every session
    data = cc.counts_csv(tmp_path, sorted([*cc.received(), *stray]))
    report = same(cc.contract(tmp_path, extra), data)
    failed = {c["id"]: c["failed_rows"] for c in report["checks"]}
    assert (failed["time.cadence"], failed["completeness"], failed["time.session"]) == (6, 6, 1)
    catalog = write(
        tmp_path,
        "catalog: callcentre_calls\nseries:\n  retail: {calendar: callcentre}\n" + cc.DECLARATION,
        "catalog.yaml",
    )
    undeclared = cc.contract(tmp_path, extra, text=cc.UNDECLARED.replace("  calendar: callcentre\n", ""), name="u.yaml")
    timed = ("time.cadence", "time.session", "completeness", "freshness")
    again = {c["id"]: c for c in same(undeclared, data, catalog=catalog)["checks"]}
    assert [again[i] for i in timed] == [c for i in timed for c in report["checks"] if c["id"] == i]


def sentinel_flag_set_beside_a_value(tmp_path: Path, same: Same) -> None:
    """``flag_of``: a flag set beside a value (a sentinel kept as a measurement) fails on every engine,
    and so does a reading the range clause refuses; a null value with its flag passes."""
    from tests.engines.inputs.test_sentinels import CONTRACT

    contract = write(tmp_path, CONTRACT, "cgm.yaml")
    rows = [
        "S1,2026-01-12T00:00:00Z,125,",
        "S1,2026-01-12T00:05:00Z,,below_range",
        "S1,2026-01-12T00:10:00Z,40,below_range",  # the sentinel kept as a value: fails flag_of
        "S1,2026-01-12T00:15:00Z,400,",  # a sentinel without its flag: fails the range clause (as row 3 does)
        "S1,2026-01-12T00:20:00Z,,no_reading",
        "S1,2026-01-12T00:25:00Z,,",
    ]
    data = write(tmp_path, "\n".join(["sensor,ts,glucose,glucose_flag", *rows]) + "\n", "flags.csv")
    report = same(contract, data)
    found = {c["id"]: c for c in report["checks"]}
    assert found["field.glucose_flag.flag_of"]["failed_rows"] == 1
    assert [e["row"] for e in found["field.glucose_flag.flag_of"]["examples"]] == [3]
    assert [e["row"] for e in found["invariants[0]"]["examples"]] == [3, 4]
    assert [c["id"] for c in report["checks"] if c["status"] == "failed"] == [
        "field.glucose_flag.flag_of",
        "invariants[0]",
    ]
