"""Calendar time: cadences and windows of months, quarters and years, and what they mean.

A calendar step is a whole number of months (``1 month``, ``1 quarter`` = 3, ``1 year`` = 12,
``5 years`` = 60). Its periods are runs of that many months, counted from a phase: the months
whose index ``year * 12 + month - 1`` is a multiple of the step, shifted by ``aligned to YYYY-MM``
(quarters are Jan/Apr/Jul/Oct, years start in January of a year divisible by the number of years).
Each period has one expected point, its **anchor**, at 00:00 local time in the series' zone of:

* ``start`` (``month start``, ``quarter start``, ``year start``, ``period start``): the period's first day;
* ``end`` (``month end``...): the period's last day (Jan 31, Feb 28 or 29, Mar 31; a quarter's is Mar 31...);
* ``day N``: day N of the period's first month, the month's last day where it has fewer (day 31 in
  April is April 30).

Local midnight is a wall-clock time, so a DST change moves no anchor (March in Berlin starts at
23:00Z of Feb 28 or 29 in winter time, April at 22:00Z). This module is the reference the engines'
SQL is checked against (``tests/contract/test_calendar_time.py``).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Literal
from zoneinfo import ZoneInfo

from tscontract.contract.zones import offset_minutes

Anchor = Literal["start", "end"] | int
FIRST_MONTH = 1970 * 12  # the grid is searched between 1970 and 2099 (the engines' plausible instants)
LAST_MONTH = 2100 * 12


def zone_info(zone: str) -> ZoneInfo | timedelta:
    """An IANA zone, or a fixed offset from UTC."""
    minutes = offset_minutes(zone)
    if minutes is not None:
        return timedelta(minutes=minutes)
    return ZoneInfo("UTC" if zone.upper() == "UTC" else zone)


def local_midnight(day: date, zone: str) -> datetime:
    """00:00 of ``day`` in ``zone``, as a UTC instant (a wall-clock time: DST moves it in UTC)."""
    tz = zone_info(zone)
    if isinstance(tz, timedelta):
        return datetime.combine(day, datetime.min.time(), UTC) - tz
    return datetime.combine(day, datetime.min.time(), tz).astimezone(UTC)


def local_date(instant: datetime, zone: str) -> date:
    tz = zone_info(zone)
    if isinstance(tz, timedelta):
        return (instant.astimezone(UTC) + tz).date()
    return instant.astimezone(tz).date()


def add_months(day: date, months: int) -> date:
    """``day`` ``months`` later, on the month's last day where it has fewer days (Jan 31 + 1 = Feb 28/29)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def months_later(instant: datetime, months: int, zone: str) -> datetime:
    """``instant`` ``months`` calendar months later in ``zone``: the same wall-clock time, the day clamped
    to the month's length (the ``max_age: 2 months`` deadline of a point)."""
    tz = zone_info(zone)
    if isinstance(tz, timedelta):
        local = instant.astimezone(UTC) + tz
        return datetime.combine(add_months(local.date(), months), local.time(), UTC) - tz
    local = instant.astimezone(tz)
    return datetime.combine(add_months(local.date(), months), local.time(), tz).astimezone(UTC)


@dataclass(frozen=True)
class CalendarStep:
    """``months`` per period, the anchor of each period's point, and the phase (a period's first month index)."""

    months: int
    anchor: Anchor = "start"
    phase: int = 0

    def first_month(self, k: int) -> int:
        """The month index (``year * 12 + month - 1``) of period ``k``'s first month."""
        return k * self.months + self.phase % self.months

    def anchor_day(self, k: int) -> date:
        first = self.first_month(k)
        if self.anchor == "end":
            year, month = divmod(first + self.months - 1, 12)
            return date(year, month + 1, calendar.monthrange(year, month + 1)[1])
        year, month = divmod(first, 12)
        day = 1 if self.anchor == "start" else min(int(self.anchor), calendar.monthrange(year, month + 1)[1])
        return date(year, month + 1, day)

    def at(self, k: int, zone: str) -> datetime:
        """Period ``k``'s expected point: 00:00 of its anchor day in ``zone``."""
        return local_midnight(self.anchor_day(k), zone)

    def period_of(self, day: date) -> int:
        """The period whose months hold ``day``."""
        return (day.year * 12 + day.month - 1 - self.phase % self.months) // self.months

    def grid(self, zone: str, start: datetime, end: datetime) -> list[tuple[int, datetime]]:
        """The expected points ``(k, instant)`` with ``start <= instant < end``, within 1970-2099."""
        first = max(self.period_of(local_date(start, zone)) - 1, FIRST_MONTH // self.months - 1)
        last = min(self.period_of(local_date(end, zone)) + 1, LAST_MONTH // self.months + 1)
        points = [(k, self.at(k, zone)) for k in range(first, last + 1)]
        return [(k, at) for k, at in points if start <= at < end]

    def index(self, instant: datetime, zone: str, tolerance: timedelta = timedelta(0)) -> int | None:
        """The period whose expected point ``instant`` is (within ``tolerance``), else None (off the calendar)."""
        k = self.period_of(local_date(instant, zone))
        for candidate in (k - 1, k, k + 1):
            if abs(self.at(candidate, zone) - instant) <= tolerance:
                return candidate
        return None

    def describe(self) -> str:
        where = {"start": "first day", "end": "last day"}.get(str(self.anchor), f"day {self.anchor}")
        return f"00:00 of the {where} of each period of {self.months} month(s)"


def months_of(unit: str, amount: int) -> int:
    return amount * {"month": 1, "quarter": 3, "year": 12}[unit]


def parse_alignment(text: str, months: int, anchor: Anchor) -> int:
    """The phase of ``aligned to 2021-07`` (an expected point falls in July 2021) or ``aligned to 2021`` (a
    period starts in January 2021, or, anchored at its end, ends in December 2021): the month index of a
    period's first month."""
    year, _, month = text.partition("-")
    number = int(month) if month else 12 if anchor == "end" else 1
    if not 1 <= number <= 12:
        raise ValueError(f"'aligned to {text}': the month is 01 to 12")
    index = int(year) * 12 + number - 1
    return index - (months - 1) if anchor == "end" else index


# ---------------------------------------------------------------- the checks' meaning, for one series


@dataclass(frozen=True)
class Fault:
    """One cadence failure of a series: at ``at``, ``what`` (off, again, gap, coverage start or end), the
    ``periods`` it misses."""

    at: datetime
    what: str
    periods: int = 0


def cadence_faults(
    step: CalendarStep,
    zone: str,
    instants: list[datetime],
    tolerance: timedelta = timedelta(0),
    coverage: tuple[datetime, datetime] | None = None,
    now: datetime | None = None,
) -> list[Fault]:
    """What ``time.cadence`` fails for one series' points (distinct instants, any order).

    A point at no expected point (within ``tolerance``) is ``off``; between consecutive points on the
    calendar a second point of one period is ``again`` and skipped periods are one ``gap`` (at the later
    point); with ``coverage`` the expected points in ``[from, min(to, now))`` before the first point on the
    calendar and after the last are one hole each (at the first missing point).
    """
    faults: list[Fault] = []
    placed: list[tuple[datetime, int]] = []
    for at in sorted(set(instants)):
        k = step.index(at, zone, tolerance)
        if k is None:
            faults.append(Fault(at, "off"))
        else:
            placed.append((at, k))
    for (_, before), (at, k) in pairwise(placed):
        if k == before:
            faults.append(Fault(at, "again"))
        elif k - before > 1:
            faults.append(Fault(at, "gap", k - before - 1))
    if coverage is not None and placed:
        end = min(coverage[1], now) if now is not None else coverage[1]
        expected = step.grid(zone, coverage[0], end) if coverage[0] < end else []
        first, last = placed[0][1], placed[-1][1]
        before_first = [at for k, at in expected if k < first]
        after_last = [at for k, at in expected if k > last]
        if before_first:
            faults.append(Fault(before_first[0], "coverage start", len(before_first)))
        if after_last:
            faults.append(Fault(after_last[0], "coverage end", len(after_last)))
    return faults


def window_bounds(months: int, zone: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """Windows of ``months`` calendar months in ``zone`` (periods from January, as quarters and years run)
    that ``[start, end)`` touches: ``[first day 00:00, the next window's first day 00:00)``."""
    periods = CalendarStep(months)
    k = periods.period_of(local_date(start, zone))
    windows = []
    while periods.at(k, zone) < end:
        windows.append((periods.at(k, zone), periods.at(k + 1, zone)))
        k += 1
    return [(a, b) for a, b in windows if b > start]


def short_windows(
    step: CalendarStep,
    zone: str,
    instants: list[datetime],
    windows: list[tuple[datetime, datetime]],
    min_ratio: float = 1.0,
    tolerance: timedelta = timedelta(0),
) -> list[tuple[datetime, int, int]]:
    """``completeness`` per cadence for one series: each window ``(start, expected, actual)`` whose periods
    with a point on the calendar fall below ``min_ratio`` of the expected points in it."""
    short = []
    for start, end in windows:
        grid = step.grid(zone, start, end)
        actual = len({step.index(p, zone, tolerance) for p in instants if start <= p < end} - {None})
        if actual < len(grid) * min_ratio:
            short.append((start, len(grid), actual))
    return short


# ---------------------------------------------------------------- window alignment

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
FIXED_ORIGIN = date(2000, 1, 3)  # a Monday: windows of fixed time start at multiples of their length from it


def window_origin(text: str, *, months: bool, trading: bool) -> date | int:
    """Where ``aligned to`` puts a completeness window: a weekday (``Monday``: 00:00 of Mondays) or a date
    (``2026-01-05``) for windows of time or local days, a year-month (``2024-07``: a fiscal year from July)
    for windows of months; the month index of a window's first month, or the date of a window's start."""
    value = text.strip().lower()
    if trading:
        raise ValueError("windows of sessions count from the first covered session; they take no 'aligned to'")
    if months:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}", value) or not 1 <= int(value[5:]) <= 12:
            raise ValueError(f"a window of months is aligned to a year-month (2024-07), not {text!r}")
        return int(value[:4]) * 12 + int(value[5:]) - 1
    if value in WEEKDAYS:
        return FIXED_ORIGIN + timedelta(days=WEEKDAYS.index(value))
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"a window is aligned to a weekday (Monday) or a date (2026-01-05), not {text!r}") from None
