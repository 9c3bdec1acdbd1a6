"""Coverage: what a batch must contain, beyond the spacing between the points it has.

Each test starts from data shaped like a vendor's: whole regular sessions around Thanksgiving,
the half day after it and the end of daylight saving time, daily bars stamped at the session
date, extended-hours bars, a sensor on a local clock across both DST changes.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime, timedelta

import pytest

from tests.conftest import run_cli, write
from tests.engines.vendor_shapes import (
    NIGHT_BAR,
    OHLCV,
    SATURDAY_BAR,
    bars_csv,
    catalog_with,
    contract_with,
    minute_bars,
    sessions,
    stray_batch,
    symbols_catalog,
    symbols_csv,
    venue_date_stamp,
)
from tscontract import validate

CATALOG = OHLCV / "catalog.yaml"
MONDAY = date(2026, 11, 30)
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)
SESSION_COMPLETENESS = "completeness: {window: 1 session, min_ratio: 1.0}\n"


def run(contract, data, **kwargs):
    kwargs.setdefault("now", NOW)
    return validate(contract, data, catalog=kwargs.pop("catalog", CATALOG), **kwargs)


# ------------------------------------------------------------------ batch edges


def test_a_whole_session_passes(tmp_path):
    report = run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), bars_csv(tmp_path, minute_bars(MONDAY)))
    assert report.passed, [(c.id, c.examples) for c in report.failed]


def test_a_missing_opening_bar_fails_cadence_and_completeness(tmp_path):
    bars = minute_bars(MONDAY)[1:]  # the vendor dropped the 09:30 bar
    report = run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), bars_csv(tmp_path, bars))
    cadence = report.check("time.cadence")
    assert cadence.status == "failed" and cadence.failed_rows == 1
    assert cadence.examples == [
        {
            "symbol": "AAPL",
            "bar_start": "2026-11-30T14:30:00Z",
            "edge": "session start",
            "missing": ["2026-11-30T14:30:00Z", "2026-11-30T14:31:00Z"],
            "expected_s": 60.0,
        }
    ]
    completeness = report.check("completeness")
    assert completeness.status == "failed"
    window = completeness.examples[0]
    assert (window["expected"], window["actual"]) == (390, 389)
    assert window["gaps"] == [["2026-11-30T14:30:00Z", "2026-11-30T14:31:00Z"]]


def test_missing_closing_bars_are_gaps_at_the_session_end(tmp_path):
    bars = minute_bars(MONDAY)[:-5]  # 15:55-15:59 New York never arrived
    report = run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), bars_csv(tmp_path, bars))
    cadence = report.check("time.cadence")
    assert cadence.failed_rows == 1 and cadence.examples[0]["edge"] == "session end"
    assert cadence.examples[0]["missing"] == ["2026-11-30T20:55:00Z", "2026-11-30T21:00:00Z"]
    window = report.check("completeness").examples[0]
    assert (window["expected"], window["actual"]) == (390, 385)
    assert window["gaps"] == [["2026-11-30T20:55:00Z", "2026-11-30T21:00:00Z"]]


def test_an_hourly_window_counts_the_whole_hour_the_batch_touches(tmp_path):
    # no sessions in completeness: windows are UTC hours; the batch ends at 15:44, its hour at 16:00
    bars = minute_bars(MONDAY)[30:75]  # 15:00 .. 15:44Z
    extra = "completeness: {window: 1h}\n"
    report = run(contract_with(tmp_path, "60s", extra), bars_csv(tmp_path, bars))
    check = report.check("completeness")
    assert check.failed_rows == 1
    window = check.examples[0]
    assert (window["window_start"], window["expected"], window["actual"]) == ("2026-11-30T15:00:00Z", 60, 45)
    assert window["gaps"] == [["2026-11-30T15:45:00Z", "2026-11-30T16:00:00Z"]]
    # the batch says it covers 15:00-15:45 only: nothing is missing
    covered = (datetime(2026, 11, 30, 15, tzinfo=UTC), datetime(2026, 11, 30, 15, 45, tzinfo=UTC))
    assert run(contract_with(tmp_path, "60s", extra), bars_csv(tmp_path, bars), coverage=covered).passed


def test_from_to_widen_the_coverage_beyond_the_batch(tmp_path):
    bars = minute_bars(MONDAY)[:30]  # 14:30 .. 14:59Z
    contract = contract_with(tmp_path)
    covered = (datetime(2026, 11, 30, 14, 30, tzinfo=UTC), datetime(2026, 11, 30, 15, tzinfo=UTC))
    assert run(contract, bars_csv(tmp_path, bars), coverage=covered).passed
    wider = (covered[0], datetime(2026, 11, 30, 15, 10, tzinfo=UTC))
    cadence = run(contract, bars_csv(tmp_path, bars), coverage=wider).check("time.cadence")
    assert cadence.examples[0]["missing"] == ["2026-11-30T15:00:00Z", "2026-11-30T15:10:00Z"]
    # a batch running past --to: the extra bars are checked, and raise no expectation of their own
    later = bars_csv(tmp_path, [*bars, datetime(2026, 11, 30, 15, 30, tzinfo=UTC)])
    report = run(contract, later, coverage=covered)
    assert report.check("time.cadence").examples[0]["bar_start"] == "2026-11-30T15:30:00Z"  # a 31-minute step
    assert report.check("time.cadence").failed_rows == 1


def test_half_day_and_thanksgiving_are_read_from_the_calendar(tmp_path):
    # Wednesday, (Thursday closed), Friday's half day, Monday: all complete
    days = [date(2026, 11, 25), date(2026, 11, 27), MONDAY]
    bars = [t for d in days for t in minute_bars(d)]
    assert len(minute_bars(date(2026, 11, 27))) == 210
    report = run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), bars_csv(tmp_path, bars))
    assert report.passed, [(c.id, c.examples) for c in report.failed]
    # Friday's last bar (12:59 New York) missing: expected 210 there, not 390
    short = [t for t in bars if t != datetime(2026, 11, 27, 17, 59, tzinfo=UTC)]
    window = run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), bars_csv(tmp_path, short))
    assert [(w["window_start"], w["expected"], w["actual"]) for w in window.check("completeness").examples] == [
        ("2026-11-27T14:30:00Z", 210, 209)
    ]


def test_the_dst_change_moves_the_open_in_utc(tmp_path):
    days = [date(2026, 10, 30), date(2026, 11, 2)]  # Friday in EDT (13:30Z), Monday in EST (14:30Z)
    bars = [t for d in days for t in minute_bars(d)]
    assert bars[0].hour == 13 and bars[-1].hour == 20
    assert run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), bars_csv(tmp_path, bars)).passed
    # a vendor that kept the winter offset all year stamps Friday an hour late
    shifted = [t + timedelta(hours=1) if t.day == 30 else t for t in bars]
    report = run(contract_with(tmp_path), bars_csv(tmp_path, shifted))
    assert report.check("time.session").failed_rows == 60  # 16:00-16:59 New York: after the close
    assert report.check("time.cadence").examples[0]["missing"] == ["2026-10-30T13:30:00Z", "2026-10-30T14:30:00Z"]


def test_a_stray_year_9999_bar_is_reported_without_hanging(tmp_path):
    bars = minute_bars(MONDAY)
    path = bars_csv(tmp_path, bars)
    path.write_text(path.read_text() + path.read_text().splitlines()[1].replace("2026-11-30", "9999-11-30") + "\n")
    started = time.perf_counter()
    report = run(contract_with(tmp_path, extra=SESSION_COMPLETENESS), path)
    assert time.perf_counter() - started < 10
    session = report.check("time.session")
    assert session.failed_rows == 1 and session.examples[0]["bar_start"] == "9999-11-30T14:30:00Z"
    assert report.check("completeness").status == "passed"


# ------------------------------------------------------------------ one bar per session


DAILY = "1 session; stamped at session date; no bars outside session"


def daily(tmp_path, days, name="daily.csv"):
    return bars_csv(tmp_path, [venue_date_stamp(d) for d in days], name=name)


def test_daily_bars_pass_weekends_and_holidays(tmp_path):
    days = sessions(date(2026, 10, 26), date(2026, 12, 4))
    assert THANKSGIVING_ABSENT(days)
    report = run(contract_with(tmp_path, DAILY), daily(tmp_path, days), now=datetime(2026, 12, 4, 22, tzinfo=UTC))
    assert report.passed, [(c.id, c.examples) for c in report.failed]


def THANKSGIVING_ABSENT(days):
    return date(2026, 11, 26) not in days and date(2026, 11, 28) not in days


def test_a_deleted_daily_session_and_a_holiday_bar_fail(tmp_path):
    days = sessions(date(2026, 10, 26), date(2026, 12, 4))
    days.remove(date(2026, 11, 24))
    report = run(contract_with(tmp_path, DAILY), daily(tmp_path, [*days, date(2026, 11, 26)]))
    cadence = report.check("time.cadence")
    assert cadence.failed_rows == 1
    assert cadence.examples == [
        {
            "symbol": "AAPL",
            "bar_start": "2026-11-24T05:00:00Z",
            "session": "2026-11-24",
            "missing": "no point stamped at this session",
        }
    ]
    session = report.check("time.session")
    assert session.failed_rows == 1 and session.examples[0]["bar_start"] == "2026-11-26T05:00:00Z"


def test_a_deleted_winter_week_of_daily_bars_is_caught(tmp_path):
    days = [
        d for d in sessions(date(2026, 11, 2), date(2026, 12, 18)) if not date(2026, 12, 7) <= d <= date(2026, 12, 11)
    ]
    report = run(contract_with(tmp_path, DAILY), daily(tmp_path, days), now=datetime(2026, 12, 18, 22, tzinfo=UTC))
    cadence = report.check("time.cadence")
    assert cadence.failed_rows == 5
    assert [e["session"] for e in cadence.examples] == [f"2026-12-{d:02d}" for d in range(7, 12)]


def test_daily_bars_stamped_at_utc_midnight_are_not_a_vacuous_pass(tmp_path):
    # the contract says the venue's date; the vendor wrote 00:00Z: no bar stands at a session
    days = sessions(date(2026, 11, 16), date(2026, 11, 20))
    utc_midnights = [datetime(d.year, d.month, d.day, tzinfo=UTC) for d in days]
    report = run(contract_with(tmp_path, DAILY), bars_csv(tmp_path, utc_midnights))
    assert report.check("time.session").failed_rows == 5
    assert not report.passed
    # and where the contract says so, 00:00Z is right
    in_utc = DAILY.replace("session date", "session date in UTC")
    assert run(contract_with(tmp_path, in_utc), bars_csv(tmp_path, utc_midnights)).passed


def test_daily_completeness_in_sessions(tmp_path):
    days = sessions(date(2026, 11, 2), date(2026, 11, 27))
    days.remove(date(2026, 11, 12))
    extra = "completeness: {window: 5 sessions, min_ratio: 1.0}\n"
    check = run(contract_with(tmp_path, DAILY, extra), daily(tmp_path, days)).check("completeness")
    assert check.failed_rows == 1
    example = check.examples[0]
    assert (example["window_start"], example["expected"], example["actual"]) == ("2026-11-09T05:00:00Z", 5, 4)


# ------------------------------------------------------------------ extended hours


def test_extended_hours_are_a_series_session(tmp_path):
    pre_market = [datetime(2026, 11, 30, 9, tzinfo=UTC) + timedelta(minutes=n) for n in range(3)]  # 04:00 New York
    path = bars_csv(tmp_path, pre_market + minute_bars(MONDAY))
    regular = run(contract_with(tmp_path, "60s; no bars outside session"), path)
    assert regular.check("time.session").failed_rows == 3
    extended = run(
        contract_with(tmp_path, "60s; no bars outside session"), path, catalog=catalog_with(tmp_path, "extended")
    )
    assert extended.check("time.session").status == "passed"


# ------------------------------------------------------------------ local days


SENSOR_CONTRACT = """\
contract: machine_temperature
version: 1.0.0
key: [series_id, event_ts]
time: {column: event_ts, precision: s, timezone: UTC instant; device zone recorded in catalog, cadence: 5m}
fields:
  series_id: {type: string, nullable: false}
  event_ts: {type: timestamp_s_utc, nullable: false}
  value: {type: decimal(8,2), unit: degC, nullable: false}
completeness: {window: 1 local day, min_ratio: 1.0}
provenance_required: [source_id]
"""
SENSOR_CATALOG = """\
catalog: machine_temperature
series:
  M-1.temp: {unit: degC, dimension: temperature, cadence: 5m, device_zone: America/Chicago}
"""


def readings(tmp_path, start, end, skip=()):
    lines = ["series_id,event_ts,value,source_id"]
    moment = start
    while moment < end:
        if moment not in skip:
            lines.append(f"M-1.temp,{moment.isoformat().replace('+00:00', 'Z')},71.25,plc")
        moment += timedelta(minutes=5)
    return write(tmp_path, "\n".join(lines) + "\n", "readings.csv")


def test_local_days_are_23_and_25_hours_across_dst(tmp_path):
    contract = write(tmp_path, SENSOR_CONTRACT, "sensor.yaml")
    catalog = write(tmp_path, SENSOR_CATALOG, "sensor_catalog.yaml")
    # Chicago: 2026-03-08 has 23 hours (CST -> CDT), 2026-11-01 has 25 (CDT -> CST)
    for start, end, points in (
        (datetime(2026, 3, 8, 6, tzinfo=UTC), datetime(2026, 3, 9, 5, tzinfo=UTC), 276),
        (datetime(2026, 11, 1, 5, tzinfo=UTC), datetime(2026, 11, 2, 6, tzinfo=UTC), 300),
    ):
        path = readings(tmp_path, start, end)
        report = validate(contract, path, catalog=catalog, now=end)
        assert report.passed, [(c.id, c.examples) for c in report.failed]
        # the repeated hour of the fall-back night (a logger that wrote local time) is missing
        repeated = {datetime(2026, 11, 1, 6, tzinfo=UTC) + timedelta(minutes=5 * n) for n in range(12)}
        if points == 300:
            short = validate(contract, readings(tmp_path, start, end, repeated), catalog=catalog, now=end)
            example = short.check("completeness").examples[0]
            assert (example["window_start"], example["expected"], example["actual"]) == (
                "2026-11-01T05:00:00Z",
                300,
                288,
            )
            assert example["gaps"] == [["2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"]]


def test_a_gap_across_local_midnight_is_listed_once_per_day_clipped(tmp_path):
    # the call-centre shape: 5-minute counts, nothing from 23:40 to 00:20 local (Chicago, CST = UTC-6)
    contract = write(tmp_path, SENSOR_CONTRACT, "sensor.yaml")
    catalog = write(tmp_path, SENSOR_CATALOG, "sensor_catalog.yaml")
    start, end = datetime(2026, 11, 10, 6, tzinfo=UTC), datetime(2026, 11, 12, 6, tzinfo=UTC)
    hole = {datetime(2026, 11, 11, 5, 40, tzinfo=UTC) + timedelta(minutes=5 * n) for n in range(8)}
    report = validate(contract, readings(tmp_path, start, end, hole), catalog=catalog, now=end)
    examples = report.check("completeness").examples
    assert [(e["window_start"], e["expected"], e["actual"], e["gaps"]) for e in examples] == [
        ("2026-11-10T06:00:00Z", 288, 284, [["2026-11-11T05:40:00Z", "2026-11-11T06:00:00Z"]]),
        ("2026-11-11T06:00:00Z", 288, 284, [["2026-11-11T06:00:00Z", "2026-11-11T06:20:00Z"]]),
    ]


# ------------------------------------------------------------------ --now: no point expected after it


def test_the_day_under_way_is_judged_up_to_now(tmp_path):
    contract = write(tmp_path, SENSOR_CONTRACT, "sensor.yaml")
    catalog = write(tmp_path, SENSOR_CATALOG, "sensor_catalog.yaml")
    midnight, now = datetime(2026, 11, 10, 6, tzinfo=UTC), datetime(2026, 11, 10, 18, 2, tzinfo=UTC)  # 12:02 local
    so_far = readings(tmp_path, midnight, datetime(2026, 11, 10, 18, 5, tzinfo=UTC))  # 00:00 .. 12:00 local
    report = validate(contract, so_far, catalog=catalog, now=now)
    assert report.passed, [(c.id, c.examples) for c in report.failed]
    # stated to cover two whole days: the day after now is not judged, today only up to now
    two_days = (midnight, datetime(2026, 11, 12, 6, tzinfo=UTC))
    assert validate(contract, so_far, catalog=catalog, now=now, coverage=two_days).passed
    # a hole before now still fails, counted against the part of the day elapsed (rounded down)
    hole = {datetime(2026, 11, 10, 9, tzinfo=UTC) + timedelta(minutes=5 * n) for n in range(3)}
    holed = readings(tmp_path, midnight, datetime(2026, 11, 10, 18, 5, tzinfo=UTC), hole)
    example = validate(contract, holed, catalog=catalog, now=now).check("completeness").examples[0]
    assert (example["window_start"], example["window_end"], example["expected"], example["actual"]) == (
        "2026-11-10T06:00:00Z",
        "2026-11-11T06:00:00Z",
        144,
        142,
    )
    assert example["gaps"] == [["2026-11-10T09:00:00Z", "2026-11-10T09:15:00Z"]]


def test_the_session_under_way_is_judged_up_to_now(tmp_path):
    bars = bars_csv(tmp_path, minute_bars(MONDAY)[:31])  # 14:30 .. 15:00Z
    contract = contract_with(tmp_path, extra=SESSION_COMPLETENESS)
    assert run(contract, bars, now=datetime(2026, 11, 30, 15, 0, 30, tzinfo=UTC)).passed
    late = run(contract, bars, now=datetime(2026, 11, 30, 15, 10, tzinfo=UTC))
    assert late.check("time.cadence").examples[0]["missing"] == ["2026-11-30T15:01:00Z", "2026-11-30T15:10:00Z"]
    assert late.check("completeness").examples[0]["expected"] == 40


def test_ingest_and_check_store_take_from_to(tmp_path):
    contract = write(tmp_path, SENSOR_CONTRACT, "sensor.yaml")
    catalog = write(tmp_path, SENSOR_CATALOG, "sensor_catalog.yaml")
    so_far = readings(tmp_path, datetime(2026, 11, 10, 6, tzinfo=UTC), datetime(2026, 11, 10, 18, 5, tzinfo=UTC))
    store = tmp_path / "w.duckdb"
    common = ["--catalog", catalog, "--now", "2026-11-10T18:02:00Z", "--format", "json"]
    days = ["--from", "2026-11-10T06:00:00Z", "--to", "2026-11-12T06:00:00Z"]
    gated = run_cli("ingest", contract, so_far, "--store", store, *days, *common)
    assert gated.returncode == 0, gated.stderr
    checks = {c["id"]: c for c in json.loads(gated.stdout)["validation"]["checks"]}
    assert checks["completeness"]["status"] == "passed"
    assert run_cli("check-store", contract, store, *days, *common).returncode == 0
    # the store is said to cover the day before as well: that day is missing
    earlier = run_cli("check-store", contract, store, "--from", "2026-11-09T06:00:00Z", *common)
    assert earlier.returncode == 1
    completeness = next(c for c in json.loads(earlier.stdout)["checks"] if c["id"] == "completeness")
    assert [(e["window_start"], e["actual"]) for e in completeness["examples"]] == [("2026-11-09T06:00:00Z", 0)]
    backwards = run_cli("ingest", contract, so_far, "--store", store, "--from", days[3], "--to", days[1], *common)
    assert backwards.returncode == 2 and "--from must be before --to" in backwards.stderr


# ------------------------------------------------------------------ freshness


def test_nothing_arrived_is_not_fresh(tmp_path):
    contract = contract_with(tmp_path, extra="freshness: {max_age: 15m}\n")
    empty = bars_csv(tmp_path, [])
    check = run(contract, empty).check("freshness")
    assert check.status == "failed" and check.message == "no points arrived: nothing is fresh"


def test_freshness_on_the_session_clock(tmp_path):
    friday = bars_csv(tmp_path, minute_bars(date(2026, 11, 27)))  # the half day, last bar 17:59Z
    wall = contract_with(tmp_path, extra="freshness: {max_age: 15m}\n", name="wall.yaml")
    session = contract_with(tmp_path, extra="freshness: {max_age: 15m, clock: session}\n", name="session.yaml")
    monday_open = datetime(2026, 11, 30, 14, 35, tzinfo=UTC)  # 1 min of Friday's session + 5 of Monday's
    assert run(wall, friday, now=monday_open).check("freshness").status == "failed"
    assert run(session, friday, now=monday_open).check("freshness").status == "passed"
    late = run(session, friday, now=datetime(2026, 11, 30, 14, 50, tzinfo=UTC)).check("freshness")
    assert late.status == "failed" and late.examples[0]["age_s"] == 21 * 60
    assert "of session time" in late.message


def test_freshness_in_trading_days(tmp_path):
    wednesday = bars_csv(tmp_path, minute_bars(date(2026, 11, 25)))
    contract = contract_with(tmp_path, extra="freshness: {max_age: 1 trading day}\n")
    # Friday's half day is the one session since: fresh until another closes
    assert run(contract, wednesday, now=datetime(2026, 11, 30, 20, tzinfo=UTC)).check("freshness").status == "passed"
    stale = run(contract, wednesday, now=datetime(2026, 11, 30, 21, 5, tzinfo=UTC)).check("freshness")
    assert stale.status == "failed"
    assert stale.examples[0]["sessions_since"] == 2 and stale.examples[0]["max_sessions"] == 1


def test_a_daily_bar_is_fresh_through_the_next_session(tmp_path):
    # daily bars stamped at 00:00 of their date, before the open: Friday's bar is one session behind on
    # Monday evening (Monday's bar is due), two on Tuesday evening
    xnys = write(tmp_path, CATALOG.read_text().replace("calendar: XNAS", "calendar: XNYS"), "xnys.yaml")
    extra = "freshness: {max_age: 1 trading day}\n"
    for cadence in (DAILY, "irregular"):  # the bar's date says its session, declared as its stamp or not
        contract = contract_with(tmp_path, cadence, extra, name="daily_fresh.yaml")
        friday = daily(tmp_path, sessions(date(2026, 11, 16), date(2026, 11, 20)))

        def freshness(bars, now, contract=contract):
            return run(contract, bars, now=now, catalog=xnys).check("freshness")

        assert freshness(friday, datetime(2026, 11, 23, 22, tzinfo=UTC)).status == "passed", cadence
        stale = freshness(friday, datetime(2026, 11, 24, 22, tzinfo=UTC))
        assert stale.status == "failed" and stale.examples[0]["sessions_since"] == 2, cadence
        # Thanksgiving (Thursday 2026-11-26) is no session; Friday's half day closes at 13:00 New York
        wednesday = daily(tmp_path, sessions(date(2026, 11, 23), date(2026, 11, 25)))
        assert freshness(wednesday, datetime(2026, 11, 26, 22, tzinfo=UTC)).status == "passed", cadence
        assert freshness(wednesday, datetime(2026, 11, 27, 19, tzinfo=UTC)).status == "passed", cadence
        assert freshness(wednesday, datetime(2026, 11, 30, 20, tzinfo=UTC)).status == "passed", cadence
        late = freshness(wednesday, datetime(2026, 11, 30, 21, 5, tzinfo=UTC))
        assert late.status == "failed" and late.examples[0]["sessions_since"] == 2, cadence


# ------------------------------------------------------------------ command line


def test_cli_from_to(tmp_path):
    path = bars_csv(tmp_path, minute_bars(MONDAY)[:30])
    args = ["validate", OHLCV / "contract.yaml", path, "--catalog", CATALOG, "--now", "2026-11-30T15:05:00Z"]
    assert run_cli(*args).returncode == 1  # the rest of the session is missing
    covered = run_cli(*args, "--from", "2026-11-30T14:30:00Z", "--to", "2026-11-30T15:00:00Z")
    assert covered.returncode == 0, covered.stdout
    naive = run_cli(*args, "--from", "2026-11-30T14:30:00")
    assert naive.returncode == 2 and naive.stderr.startswith("error: --from:")
    backwards = run_cli(*args, "--from", "2026-11-30T15:00:00Z", "--to", "2026-11-30T14:30:00Z")
    assert backwards.returncode == 2 and "--from must be before --to" in backwards.stderr


# ------------------------------------------------------------------ stray points (issue 29)

STRAY_NOW = datetime(2026, 12, 7, tzinfo=UTC)
# the planted holes of vendor_shapes.stray_batch, as cadence and completeness report them
PLANTED_GAPS = [
    ("AAPL", "2026-11-24T15:10:00Z", "gap"),
    ("MSFT", "2026-11-27T14:30:00Z", "session start"),
    ("NVDA", "2026-11-25T14:30:00Z", "whole session"),
    ("NVDA", "2026-11-30T20:55:00Z", "session end"),
]
PLANTED_SHORT = [
    ("AAPL", "2026-11-24T14:30:00Z", 390, 380),
    ("MSFT", "2026-11-27T14:30:00Z", 210, 209),  # the half day
    ("NVDA", "2026-11-25T14:30:00Z", 390, 0),
    ("NVDA", "2026-11-30T14:30:00Z", 390, 385),
]


def assert_only_the_planted_gaps(report, strays):
    """The stray bars reported once each as outside the session; cadence and completeness find the
    planted holes, exactly, and nothing around the strays."""
    session = report.check("time.session")
    assert session.failed_rows == len(strays)
    assert [(e["symbol"], e["bar_start"]) for e in session.examples] == [
        (s, t.isoformat().replace("+00:00", "Z")) for s, t in sorted(strays)
    ]
    cadence = report.check("time.cadence")
    found = [(e["symbol"], e["bar_start"], e.get("edge", "gap")) for e in cadence.examples]
    assert (cadence.failed_rows, found) == (len(PLANTED_GAPS), PLANTED_GAPS)
    completeness = report.check("completeness")
    short = [(e["symbol"], e["window_start"], e["expected"], e["actual"]) for e in completeness.examples]
    assert (completeness.failed_rows, short) == (len(PLANTED_SHORT), PLANTED_SHORT)


@pytest.mark.parametrize(
    "strays",
    [
        (),
        (SATURDAY_BAR,),
        (NIGHT_BAR,),
        (SATURDAY_BAR, NIGHT_BAR),
        # after the batch: a Saturday and 03:00Z on a Wednesday, with sessions between them and the batch
        (("AAPL", datetime(2026, 12, 5, 15, tzinfo=UTC)), ("MSFT", datetime(2026, 12, 2, 3, tzinfo=UTC))),
    ],
    ids=["none", "saturday", "night", "both", "after"],
)
def test_a_bar_outside_every_session_widens_no_coverage(tmp_path, strays):
    contract = contract_with(tmp_path, extra=SESSION_COMPLETENESS)
    data = symbols_csv(tmp_path, stray_batch(strays))
    report = run(contract, data, catalog=symbols_catalog(tmp_path), now=STRAY_NOW)
    assert_only_the_planted_gaps(report, strays)


def test_from_to_still_set_the_coverage_with_stray_bars(tmp_path):
    contract = contract_with(tmp_path, extra=SESSION_COMPLETENESS)
    data = symbols_csv(tmp_path, stray_batch())
    catalog = symbols_catalog(tmp_path)
    covered = (datetime(2026, 11, 24, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    assert_only_the_planted_gaps(run(contract, data, catalog=catalog, coverage=covered), (SATURDAY_BAR, NIGHT_BAR))
    # --from/--to wider than the batch: Monday 23 November is covered, and missing, for every symbol
    wider = (datetime(2026, 11, 23, tzinfo=UTC), covered[1])
    cadence = run(contract, data, catalog=catalog, coverage=wider).check("time.cadence")
    monday = [(e["symbol"], e["edge"]) for e in cadence.examples if e["bar_start"] == "2026-11-23T14:30:00Z"]
    assert (cadence.failed_rows, monday) == (7, [(s, "whole session") for s in ("AAPL", "MSFT", "NVDA")])


def test_a_series_seen_only_outside_its_sessions_is_judged_over_no_period(tmp_path):
    rows = [r for r in stray_batch(()) if r[0] != "MSFT"] + [NIGHT_BAR]
    report = run(
        contract_with(tmp_path, extra=SESSION_COMPLETENESS),
        symbols_csv(tmp_path, rows),
        catalog=symbols_catalog(tmp_path),
    )
    assert report.check("time.session").failed_rows == 1
    assert {e["symbol"] for e in report.check("time.cadence").examples} == {"AAPL", "NVDA"}
    assert {e["symbol"] for e in report.check("completeness").examples} == {"AAPL", "NVDA"}


def test_a_bar_outside_every_session_makes_no_series_fresh(tmp_path):
    # AAPL's newest bar is a Saturday, MSFT's 03:00Z on a Wednesday: both are reported as outside the
    # session, and each series is as old as its last bar inside one (Monday 30 November)
    strays = (("AAPL", datetime(2026, 12, 5, 15, tzinfo=UTC)), ("MSFT", datetime(2026, 12, 2, 3, tzinfo=UTC)))
    catalog = symbols_catalog(tmp_path)
    saturday = datetime(2026, 12, 5, 15, 5, tzinfo=UTC)
    data = symbols_csv(tmp_path, stray_batch(strays))
    for max_age, age_key, ages in (
        ("1 trading day", "sessions_since", {"AAPL": 4, "MSFT": 4, "NVDA": 4}),
        ("1h", "age_s", {"AAPL": 410_760.0, "MSFT": 410_760.0, "NVDA": 411_060.0}),
    ):
        contract = contract_with(tmp_path, extra=f"freshness: {{max_age: {max_age}}}\n", name="fresh.yaml")
        report = run(contract, data, catalog=catalog, now=saturday)
        assert report.check("time.session").failed_rows == 2
        freshness = report.check("freshness")
        assert freshness.failed_rows == 3, max_age
        assert {e["symbol"]: e[age_key] for e in freshness.examples} == ages, max_age
        assert {e["symbol"]: e["newest"] for e in freshness.examples}["AAPL"] == "2026-11-30T20:59:00Z"
    # only stray bars: no point arrived in a session, the series is stale however new the bar
    only = symbols_csv(tmp_path, [strays[0]], name="only.csv")
    lone = run(contract, only, catalog=catalog, now=saturday).check("freshness")
    assert lone.status == "failed" and lone.examples[0]["newest"] is None
    assert "1 never arrived in a session" in lone.message
