"""Sessions declared as local weekly hours: a bank call centre, weekdays 07:00-21:00 London time.

Shaped like the real case (issue 25): with ``cadence: 5m`` alone every night and weekend is a gap and
buries the six weekdays really missing; with the calendar declared, cadence, sessions, completeness and
freshness report exactly those, across the end of summer time and a listed closure.
"""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime

import pytest

from tests.conftest import run_cli, write
from tests.engines import callcentre as cc
from tscontract import validate
from tscontract.contract.catalog import parse_catalog
from tscontract.contract.loader import parse_contract
from tscontract.engines import calendars
from tscontract.errors import InputError
from tscontract.plan.checks import build_plan

MONDAY_0710 = datetime(2026, 11, 2, 7, 10, tzinfo=UTC)  # 07:10 GMT; the last calls came Friday 20:55


def test_cadence_and_completeness_report_exactly_the_six_missing_weekdays(tmp_path):
    report = validate(cc.contract(tmp_path, cc.COMPLETENESS), cc.counts_csv(tmp_path, cc.received()), examples=10)
    cadence = report.check("time.cadence")
    assert cadence.failed_rows == 6
    holes = [(e.get("edge"), e.get("previous"), e["slot_start"]) for e in cadence.examples]
    assert holes == [
        (None, "2026-10-06T08:55:00Z", "2026-10-06T09:05:00Z"),
        (None, "2026-10-07T10:55:00Z", "2026-10-07T12:00:00Z"),
        ("session start", None, "2026-10-15T06:00:00Z"),
        ("session end", None, "2026-10-16T19:30:00Z"),
        ("whole session", None, "2026-10-21T06:00:00Z"),
        (None, "2026-10-26T14:55:00Z", "2026-10-26T15:05:00Z"),  # 15:00 GMT: after the clocks went back
    ]
    assert report.check("time.session").status == "passed"
    completeness = report.check("completeness")
    assert completeness.failed_rows == 6
    windows = [(e["window_start"], e["expected"], e["actual"], e["gaps"]) for e in completeness.examples]
    assert windows == [
        ("2026-10-05T23:00:00Z", 168, 167, [["2026-10-06T09:00:00Z", "2026-10-06T09:05:00Z"]]),
        ("2026-10-06T23:00:00Z", 168, 156, [["2026-10-07T11:00:00Z", "2026-10-07T12:00:00Z"]]),
        ("2026-10-14T23:00:00Z", 168, 162, [["2026-10-15T06:00:00Z", "2026-10-15T06:30:00Z"]]),
        ("2026-10-15T23:00:00Z", 168, 162, [["2026-10-16T19:30:00Z", "2026-10-16T20:00:00Z"]]),
        ("2026-10-20T23:00:00Z", 168, 0, [["2026-10-21T06:00:00Z", "2026-10-21T20:00:00Z"]]),
        ("2026-10-26T00:00:00Z", 168, 167, [["2026-10-26T15:00:00Z", "2026-10-26T15:05:00Z"]]),  # London midnight, GMT
    ]


def test_without_the_calendar_every_night_and_weekend_is_a_gap(tmp_path):
    text = cc.UNDECLARED.replace("5m within session; no bars outside session", "5m")
    text = text.replace("  calendar: callcentre\n", "")
    report = validate(cc.contract(tmp_path, text=text), cc.counts_csv(tmp_path, cc.received()))
    # 17 nights, weekends and the closure between the 18 days with calls bury the 3 gaps inside a day (the
    # others merge into a night)
    assert report.check("time.cadence").failed_rows == 17 + 3


def test_the_whole_four_weeks_pass_when_nothing_is_missing(tmp_path):
    every = [t for day in cc.workdays() for t in cc.slots(day)]
    report = validate(cc.contract(tmp_path, cc.COMPLETENESS), cc.counts_csv(tmp_path, every))
    assert report.passed, [(c.id, c.examples) for c in report.failed]


def test_calls_on_the_closure_and_on_a_saturday_are_outside_the_session(tmp_path):
    stray = [cc.local(cc.CLOSURE, 9), cc.local(date(2026, 10, 10), 9)]
    report = validate(cc.contract(tmp_path), cc.counts_csv(tmp_path, sorted([*cc.received(), *stray])))
    session = report.check("time.session")
    assert session.failed_rows == 2
    assert [e["slot_start"] for e in session.examples] == ["2026-10-10T08:00:00Z", "2026-10-19T08:00:00Z"]
    assert {e["calendar"] for e in session.examples} == {"callcentre"}


def test_friday_evenings_last_call_is_fresh_on_monday_morning_on_the_session_clock(tmp_path):
    contract = cc.contract(tmp_path, "freshness: {max_age: 30m, clock: session}\n")
    data = cc.counts_csv(tmp_path, cc.received())
    assert validate(contract, data, now=MONDAY_0710).check("freshness").status == "passed"  # 5m Friday + 10m
    stale = validate(contract, data, now=datetime(2026, 11, 2, 7, 40, tzinfo=UTC)).check("freshness")
    assert stale.status == "failed" and stale.examples[0]["age_s"] == 45 * 60
    wall = cc.contract(tmp_path, "freshness: {max_age: 30m}\n", name="wall.yaml")
    assert validate(wall, data, now=MONDAY_0710).check("freshness").status == "failed"


def test_the_cli_exits_1_with_the_six_gaps(tmp_path):
    done = run_cli("validate", cc.contract(tmp_path, cc.COMPLETENESS), cc.counts_csv(tmp_path, cc.received()))
    assert done.returncode == 1, done.stderr
    assert "time.cadence" in done.stdout and "6" in done.stdout


# ------------------------------------------------------------------ declared in the catalog

CATALOG = """\
catalog: callcentre_calls
calendars:
  callcentre:
    zone: Europe/London
    hours: {mon-fri: "07:00-21:00"}
    holidays: [2026-10-19]
series:
  retail: {calendar: callcentre}
"""


def test_a_catalog_declares_the_calendar_a_series_names(tmp_path):
    text = cc.UNDECLARED.replace("  calendar: callcentre\n", "")
    contract = cc.contract(tmp_path, cc.COMPLETENESS, text=text)
    catalog = write(tmp_path, CATALOG, "catalog.yaml")
    report = validate(contract, cc.counts_csv(tmp_path, cc.received()), catalog=catalog)
    assert (report.check("time.cadence").failed_rows, report.check("completeness").failed_rows) == (6, 6)


def test_one_calendar_declared_differently_in_contract_and_catalog_is_refused():
    catalog = parse_catalog(CATALOG)  # the contract also closes on 2026-12-25
    with pytest.raises(InputError, match="declared both in the contract and in the catalog"):
        build_plan(parse_contract(cc.CONTRACT), catalog)
    extended = parse_catalog(CATALOG.replace("{calendar: callcentre}", "{calendar: callcentre, session: extended}"))
    with pytest.raises(InputError, match="retail: calendar 'callcentre' is declared by its hours"):
        build_plan(parse_contract(cc.UNDECLARED), extended)


# ------------------------------------------------------------------ session rows


def _rows(hours: str, first: date, last: date, **more):
    declared = parse_contract(cc.CONTRACT.replace('{mon-fri: "07:00-21:00"}', hours)).calendars
    start = datetime.combine(first, datetime.min.time(), UTC)
    end = datetime.combine(last, datetime.min.time(), UTC)
    return [
        (r[2], r[3], r[4])
        for r in calendars.sessions(["callcentre"], start, end, declared=declared, **more)
        if first <= r[2] <= last
    ]


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_wall_clock_hours_move_in_utc_with_summer_time():
    spring = _rows('{mon-sun: "07:00-21:00"}', date(2026, 3, 28), date(2026, 3, 29))
    assert spring == [
        (date(2026, 3, 28), utc(2026, 3, 28, 7), utc(2026, 3, 28, 21)),
        (date(2026, 3, 29), utc(2026, 3, 29, 6), utc(2026, 3, 29, 20)),  # BST from 01:00Z
    ]


def test_overnight_hours_last_seven_or_nine_hours_on_the_nights_the_clocks_change():
    hours = '{sat: "22:00-06:00+1"}'
    assert _rows(hours, date(2026, 3, 28), date(2026, 3, 28)) == [
        (date(2026, 3, 28), utc(2026, 3, 28, 22), utc(2026, 3, 29, 5))
    ]
    assert _rows(hours, date(2026, 10, 24), date(2026, 10, 24)) == [
        (date(2026, 10, 24), utc(2026, 10, 24, 21), utc(2026, 10, 25, 6))
    ]


def test_a_time_the_clocks_jump_over_is_the_jump_and_a_repeated_time_its_first_occurrence():
    # 29 March: 01:00 GMT -> 02:00 BST; 25 October: 02:00 BST -> 01:00 GMT
    assert _rows('{sun: "01:30-03:00"}', date(2026, 3, 29), date(2026, 3, 29)) == [
        (date(2026, 3, 29), utc(2026, 3, 29, 1), utc(2026, 3, 29, 2))
    ]
    assert _rows('{sun: "00:00-01:30"}', date(2026, 10, 25), date(2026, 10, 25)) == [
        (date(2026, 10, 25), utc(2026, 10, 24, 23), utc(2026, 10, 25, 0, 30))
    ]
    assert _rows('{sun: "01:10-01:50"}', date(2026, 3, 29), date(2026, 3, 29)) == []  # all inside the jump


def test_several_intervals_a_day_are_several_sessions_and_holidays_remove_them():
    rows = _rows('{mon-fri: "09:00-12:00, 13:00-17:00"}', date(2026, 12, 24), date(2026, 12, 25))
    assert rows == [
        (date(2026, 12, 24), utc(2026, 12, 24, 9), utc(2026, 12, 24, 12)),
        (date(2026, 12, 24), utc(2026, 12, 24, 13), utc(2026, 12, 24, 17)),
    ]


def test_country_holidays_come_from_the_holidays_package_with_a_clear_error_without_it(monkeypatch):
    hours = '{mon-fri: "07:00-21:00"}\n    holidays: {country: GB, subdivision: ENG, dates: [2026-09-01]}'
    text = cc.CONTRACT.replace('{mon-fri: "07:00-21:00"}\n    holidays: [2026-10-19, 2026-12-25]', hours)
    declared = parse_contract(text).calendars
    start, end = utc(2026, 8, 28), utc(2026, 9, 3)
    days = [r[2] for r in calendars.sessions(["callcentre"], start, end, declared=declared) if r[2] < date(2026, 9, 3)]
    assert date(2026, 8, 28) in days and date(2026, 8, 31) not in days and date(2026, 9, 1) not in days
    assert date(2026, 9, 2) in days
    monkeypatch.setitem(sys.modules, "holidays", None)  # as if the extra were not installed
    with pytest.raises(InputError, match=r"holidays package \(country GB\): pip install 'tscontract\[holidays\]'"):
        calendars.sessions(["callcentre"], start, end, declared=declared)


def test_extended_hours_are_not_asked_of_a_declared_calendar_and_an_unknown_name_lists_the_declared():
    declared = parse_contract(cc.CONTRACT).calendars
    rows = calendars.sessions(["callcentre"], utc(2026, 10, 5), utc(2026, 10, 6), ("regular", "extended"), declared)
    assert {r[1] for r in rows} == {"regular"}
    with pytest.raises(InputError, match=r"calendars declared by their hours: callcentre"):
        calendars.sessions(["callcenter"], utc(2026, 10, 5), utc(2026, 10, 6), declared=declared)


def test_every_exchange_calendar_name_is_one_a_declared_calendar_cannot_take():
    import exchange_calendars

    from tscontract.contract.weekly import calendar_name

    for name in exchange_calendars.get_calendar_names(include_aliases=True):
        with pytest.raises(ValueError):
            calendar_name(name)


def test_the_timezone_clause_may_name_the_declared_calendar(tmp_path):
    text = cc.CONTRACT.replace("  calendar: callcentre\n", "").replace(
        "timezone: UTC instant", "timezone: UTC instant; session boundaries defined by calendar callcentre"
    )
    report = validate(cc.contract(tmp_path, cc.COMPLETENESS, text=text), cc.counts_csv(tmp_path, cc.received()))
    assert (report.check("time.cadence").failed_rows, report.check("completeness").failed_rows) == (6, 6)


def test_trading_days_of_a_declared_calendar_are_its_sessions(tmp_path):
    contract = cc.contract(tmp_path, "freshness: {max_age: 1 trading day}\n")
    data = cc.counts_csv(tmp_path, cc.received())  # the last calls on Friday 30 October
    assert validate(contract, data, now=MONDAY_0710).check("freshness").status == "passed"
    late = validate(contract, data, now=datetime(2026, 11, 3, 21, 30, tzinfo=UTC)).check("freshness")
    assert late.status == "failed" and late.examples[0]["sessions_since"] == 2  # Monday's and Tuesday's


def test_one_count_per_session_stamped_at_the_open(tmp_path):
    text = cc.CONTRACT.replace("5m within session; no bars outside session", "1 session; stamped at session open")
    opens = [cc.opening(day) for day in cc.workdays() if day != date(2026, 10, 21)]
    report = validate(cc.contract(tmp_path, text=text), cc.counts_csv(tmp_path, opens))
    cadence = report.check("time.cadence")
    assert cadence.failed_rows == 1 and cadence.examples[0]["session"] == "2026-10-21"
    assert [c.id for c in report.failed] == ["time.cadence"]


def test_a_night_shift_across_the_clock_change_and_a_lunch_break_are_no_gaps(tmp_path):
    from datetime import timedelta

    text = cc.CONTRACT.replace('{mon-fri: "07:00-21:00"}', '{sat: "22:00-06:00+1", mon: "09:00-12:00, 13:00-17:00"}')
    night = [utc(2026, 10, 24, 21) + timedelta(minutes=5 * n) for n in range(9 * 12)]  # 22:00 BST .. 05:55 GMT
    monday = [utc(2026, 10, 26, 9) + timedelta(minutes=5 * n) for n in range(8 * 12)]
    lunch = [t for t in monday if not utc(2026, 10, 26, 12) <= t < utc(2026, 10, 26, 13)]
    data = cc.counts_csv(tmp_path, night + lunch)
    report = validate(cc.contract(tmp_path, cc.COMPLETENESS, text=text), data)
    assert report.passed, [(c.id, c.examples) for c in report.failed]
    short = validate(cc.contract(tmp_path, cc.COMPLETENESS, text=text), cc.counts_csv(tmp_path, night[:-12] + lunch))
    cadence = short.check("time.cadence")  # 05:00-06:00 GMT missing: the night is 9 hours long
    assert cadence.failed_rows == 1 and cadence.examples[0]["missing"] == [
        "2026-10-25T05:00:00Z",
        "2026-10-25T06:00:00Z",
    ]
