"""Calendar cadences and compound durations: the clause forms and the reference meaning (issue #32)."""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_cli
from tscontract.contract.calendar_time import (
    CalendarStep,
    Fault,
    cadence_faults,
    local_date,
    months_later,
    short_windows,
    window_bounds,
)
from tscontract.contract.clauses import parse_cadence
from tscontract.contract.durations import parse_duration
from tscontract.contract.grammar import ClauseSyntaxError

ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "+05:30")
CASES = settings(max_examples=200, deadline=None, derandomize=True)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


# ---------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1826d 12h", 1826 * 86400 + 12 * 3600), ("1h 30m", 5400), ("1 hour 30 minutes", 5400), ("1s 500ms", 1.5)],
)
def test_compound_fixed_durations_add_their_parts(text: str, seconds: float) -> None:
    duration = parse_duration(text)
    assert (duration.fixed, float(duration.seconds), duration.text) == (True, seconds, text)


@pytest.mark.parametrize(
    ("text", "months"), [("1 month", 1), ("2 months", 2), ("1 quarter", 3), ("5 years", 60), ("1 year 6 months", 18)]
)
def test_calendar_durations_count_months(text: str, months: int) -> None:
    duration = parse_duration(text)
    assert (duration.in_months, duration.fixed, duration.months) == (True, False, months)
    with pytest.raises(ValueError, match="calendar months"):
        _ = duration.seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 month 2d", "mixes calendar months"),
        ("1.5 months", "counted whole"),
        ("2 trading days 3h", "not compounded"),
        ("1h 0m", "positive"),
    ],
)
def test_bad_durations_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ClauseSyntaxError, match=message):
        parse_duration(text)


def test_a_compound_duration_is_accepted_as_a_cadence_and_a_tolerance() -> None:
    cadence = parse_cadence("1826d 12h; tolerance +/-1h 30m")
    assert cadence.interval is not None and cadence.tolerance is not None
    assert (cadence.interval.seconds, cadence.tolerance.seconds) == (1826 * 86400 + 43200, 5400)


# ---------------------------------------------------------------- cadence clauses


@pytest.mark.parametrize(
    ("text", "months", "anchor", "phase"),
    [
        ("1 month; anchored at month end", 1, "end", 0),
        ("1 month; anchored at month start", 1, "start", 0),
        ("1 month; anchored at day 15", 1, 15, 0),
        ("1 quarter; anchored at quarter end", 3, "end", 0),
        ("1 quarter; anchored at month end", 3, "end", 0),
        ("1 year; anchored at year start", 12, "start", 0),
        ("5 years; anchored at period start; aligned to 2021", 60, "start", 2021 * 12),
        ("2 months; anchored at month start; aligned to 2024-02", 2, "start", 2024 * 12 + 1),
        ("5 years; aligned to 2000; anchored at year end", 60, "end", 1996 * 12),  # Dec 31 2000, 2005...
        ("1 quarter; anchored at month end; aligned to 2024-02", 3, "end", 2023 * 12 + 11),  # Feb, May, Aug, Nov
    ],
)
def test_calendar_cadences_parse(text: str, months: int, anchor: object, phase: int) -> None:
    cadence = parse_cadence(text)
    assert (cadence.source, cadence.step) == ("calendar", CalendarStep(months, anchor, phase))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 month", "anchored at month start"),
        ("1 month; anchored at quarter end", "has no quarter end"),
        ("1 month; anchored at day 32", "1 to 31"),
        ("1 month; anchored at day 3; anchored at month end", "twice"),
        ("1 month within session; anchored at day 1", "not 'within session'"),
        ("1 month; anchored at day 1; tolerance +/-10% of interval", "fixed length"),
        ("1 month; anchored at day 1; tolerance +/-14d", "below 14 days"),
        ("60s; anchored at day 3", "only a calendar cadence"),
        ("1 month; anchored at day 1; aligned to 2024-13", "01 to 12"),
    ],
)
def test_bad_calendar_cadences_are_refused(text: str, message: str) -> None:
    with pytest.raises(ClauseSyntaxError, match=message):
        parse_cadence(text)


# ---------------------------------------------------------------- the reference


def test_month_ends_across_a_leap_year_in_berlin() -> None:
    step = CalendarStep(1, "end")
    days = [step.anchor_day(k) for k in range(2024 * 12, 2024 * 12 + 4)]
    assert days == [date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 31), date(2024, 4, 30)]
    assert step.anchor_day(2023 * 12 + 1) == date(2023, 2, 28)
    # 00:00 Berlin: winter time (UTC+1) before the last Sunday of March, summer time (UTC+2) after
    assert step.at(2024 * 12 + 1, "Europe/Berlin") == utc(2024, 2, 28, 23)
    assert step.at(2024 * 12 + 3, "Europe/Berlin") == utc(2024, 4, 29, 22)


def test_quarters_and_five_years() -> None:
    quarters = CalendarStep(3, "end")
    assert [quarters.anchor_day(k) for k in range(2024 * 4, 2024 * 4 + 4)] == [
        date(2024, 3, 31),
        date(2024, 6, 30),
        date(2024, 9, 30),
        date(2024, 12, 31),
    ]
    assert CalendarStep(3, "start").at(2024 * 4 + 1, "America/New_York") == utc(2024, 4, 1, 4)  # EDT
    assert CalendarStep(3, "start").at(2024 * 4 + 3, "America/New_York") == utc(2024, 10, 1, 4)
    assert CalendarStep(3, "start").at(2025 * 4, "America/New_York") == utc(2025, 1, 1, 5)  # EST
    censuses = CalendarStep(60, "start", 2021 * 12)
    assert [d.year for d in (censuses.anchor_day(k) for k in range(404, 408))] == [2021, 2026, 2031, 2036]
    assert CalendarStep(60, 29).anchor_day(2020 // 5) == date(2020, 1, 29)
    assert CalendarStep(1, 31).anchor_day(2024 * 12 + 1) == date(2024, 2, 29)  # day 31 in a short month: its last


@given(
    months=st.sampled_from([1, 2, 3, 6, 12, 60]),
    anchor=st.sampled_from(["start", "end", 1, 15, 29, 31]),
    phase=st.integers(0, 59),
    zone=st.sampled_from(ZONES),
    k=st.integers(1970 * 12 // 60 + 1, 2099 * 12 // 60 - 1),
)
@CASES
def test_every_period_has_one_point_at_local_midnight_of_its_anchor_day(
    months: int, anchor: object, phase: int, zone: str, k: int
) -> None:
    step = CalendarStep(months, anchor, phase)  # type: ignore[arg-type]
    k = k * 60 // months
    at, day = step.at(k, zone), step.anchor_day(k)
    assert local_date(at, zone) == day  # 00:00 local of the anchor day, DST or not
    assert step.at(k + 1, zone) > at
    assert step.index(at, zone) == k
    assert step.index(at + timedelta(hours=1), zone) is None
    assert step.index(at + timedelta(hours=1), zone, timedelta(hours=1)) == k
    first = step.first_month(k)
    assert step.period_of(day) == k and (first - phase) % months == 0
    last_day = calendar.monthrange(day.year, day.month)[1]
    if anchor == "end":
        assert day.day == last_day and (day.year * 12 + day.month - 1) == first + months - 1
    elif anchor == "start":
        assert day.day == 1
    else:
        assert day.day == min(int(anchor), last_day)  # type: ignore[call-overload]


def test_cadence_faults_find_a_gap_an_off_point_a_second_point_and_the_edges() -> None:
    step, zone = CalendarStep(1, "end"), "Europe/Berlin"
    points = [step.at(k, zone) for k in range(2024 * 12, 2024 * 12 + 12) if k != 2024 * 12 + 1]
    points.append(utc(2024, 5, 15))
    coverage = (utc(2023, 10, 1), utc(2025, 3, 1))
    faults = cadence_faults(step, zone, points, coverage=coverage, now=utc(2025, 2, 1))
    assert faults == [
        Fault(utc(2024, 5, 15), "off"),
        Fault(step.at(2024 * 12 + 2, zone), "gap", 1),
        Fault(step.at(2023 * 12 + 9, zone), "coverage start", 3),  # Oct, Nov, Dec 2023
        Fault(step.at(2025 * 12, zone), "coverage end", 1),  # Jan 31 2025 only: Feb 28 is after now
    ]
    near = [step.at(2024 * 12, zone), step.at(2024 * 12, zone) + timedelta(hours=2)]
    assert cadence_faults(step, zone, near, timedelta(hours=3)) == [Fault(near[1], "again")]


def test_year_windows_count_twelve_month_ends_and_find_the_missing_leap_day() -> None:
    step, zone = CalendarStep(1, "end"), "America/New_York"
    points = [step.at(k, zone) for k in range(2023 * 12, 2025 * 12) if k != 2024 * 12 + 1]
    windows = window_bounds(12, zone, points[0], points[-1] + timedelta(microseconds=1))
    assert windows == [(utc(2023, 1, 1, 5), utc(2024, 1, 1, 5)), (utc(2024, 1, 1, 5), utc(2025, 1, 1, 5))]
    assert short_windows(step, zone, points, windows) == [(utc(2024, 1, 1, 5), 12, 11)]


def test_two_months_later_keeps_the_wall_clock_and_clamps_the_day() -> None:
    assert months_later(utc(2023, 12, 30, 23), 2, "Europe/Berlin") == utc(2024, 2, 28, 23)  # Dec 31 -> Feb 29
    assert months_later(utc(2024, 1, 31, 12), 1, "UTC") == utc(2024, 2, 29, 12)
    assert months_later(utc(2024, 2, 15, 11), 1, "Europe/Berlin") == utc(2024, 3, 15, 11)
    assert months_later(utc(2024, 3, 15, 11), 1, "Europe/Berlin") == utc(2024, 4, 15, 10)  # 12:00 local, DST


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("freshness: {max_age: 2 months, clock: session}", "drop 'clock: session'"),
        ("revision_policy: {allowed: true, window: 3 months}", "months are not counted here"),
    ],
)
def test_months_where_they_are_not_counted_are_contract_errors(tmp_path: Path, section: str, message: str) -> None:
    text = (
        "contract: c\nversion: 1.0.0\nowner: o\nkey: [s, t]\ntime:\n  column: t\n  timezone: UTC instant\n"
        '  cadence: "1 month; anchored at month start"\n  zone: Europe/Berlin\n'
        "fields:\n  s: {type: string}\n  t: {type: timestamp_us_utc}\n" + section + "\n"
    )
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    done = run_cli("lint", path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_catalog_cadence_in_months_is_refused(tmp_path: Path) -> None:
    from tscontract import load_catalog
    from tscontract.errors import CatalogError

    path = tmp_path / "catalog.yaml"
    path.write_text("catalog: c\nseries:\n  a: {cadence: 1 month}\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"calendar months go in time\.cadence"):
        load_catalog(path)
