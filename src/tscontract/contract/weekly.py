"""Sessions that are not an exchange: a calendar declared as local weekly hours.

A contract (or a YAML catalog) declares named calendars under ``calendars:``::

    calendars:
      callcentre:
        zone: Europe/London
        hours: {mon-fri: "07:00-21:00", sat: "08:00-12:00"}
        holidays: [2026-12-25, 2026-12-28]            # or {country: GB, subdivision: ENG, dates: [...]}

and names one with ``calendar: callcentre`` wherever an exchange code goes (``time.calendar``,
a catalog series' ``calendar``, ``session boundaries defined by calendar callcentre``). The
engines turn it into the same session rows an exchange calendar gives (engines/weekly_sessions.py),
so cadence, sessions, completeness and freshness mean the same for both.

Rules stated once here:

- days are ``mon`` .. ``sun``, ranges ``mon-fri`` (running forward through the week: ``sun-thu``)
  and lists ``sat, sun``; a day named twice is refused; an unnamed day has no session;
- hours are ``HH:MM-HH:MM`` wall-clock times in ``zone``, several separated by commas (each
  interval is one session); ``24:00`` ends a day; hours crossing midnight are written with
  ``+1`` (``22:00-06:00+1``) and belong to the day they open; intervals may not overlap;
- a holiday removes the sessions that open on that local date;
- a name has a lower-case letter: exchange codes (``XLON``, ``XNYS``) are upper case, so a declared
  calendar never shadows an exchange calendar; ``us_futures`` (exchange-calendars' one lower-case
  alias) is refused too.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator, field_validator, model_validator

from tscontract.contract.zones import iana_zone

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_MINUTES = 24 * 60
RESERVED = frozenset({"us_futures", "24/5", "24/7"})  # exchange-calendars' names that are not upper case
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_INTERVAL = re.compile(r"^(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})(\+1)?$")

Interval = tuple[int, int]  # minutes after the opening day's local midnight: start, end (end > start)


def calendar_name(name: str) -> str:
    """``name`` if it may name a declared calendar (an identifier with a lower-case letter)."""
    if not _NAME.match(name):
        raise ValueError(f"calendar name {name!r} is not an identifier (letters, digits and '_')")
    if name == name.upper() or name.lower() in RESERVED:
        raise ValueError(
            f"calendar name {name!r} could be an exchange calendar's code: a declared calendar's name has a "
            "lower-case letter (callcentre, not XLON) and is not us_futures"
        )
    return name


def parse_days(text: str) -> list[int]:
    """``mon-fri`` -> [0, 1, 2, 3, 4]; ``sat, sun`` -> [5, 6]; ``fri-mon`` -> [4, 5, 6, 0]."""
    days: list[int] = []
    for part in text.split(","):
        bounds = [b.strip().lower() for b in part.split("-")]
        unknown = [b for b in bounds if b not in WEEKDAYS]
        if len(bounds) > 2 or unknown or not all(bounds):
            raise ValueError(
                f"days {text!r}: write day names {', '.join(WEEKDAYS)}, ranges such as mon-fri, or lists (sat, sun)"
            )
        first, last = WEEKDAYS.index(bounds[0]), WEEKDAYS.index(bounds[-1])
        days.extend((first + i) % 7 for i in range((last - first) % 7 + 1))
    repeated = sorted({WEEKDAYS[d] for d in days if days.count(d) > 1})
    if repeated:
        raise ValueError(f"days {text!r} name {', '.join(repeated)} twice")
    return days


def _minutes(hour: str, minute: str, text: str, end: bool) -> int:
    value = int(hour) * 60 + int(minute)
    if int(minute) > 59 or value > DAY_MINUTES or (value == DAY_MINUTES and not end):
        raise ValueError(f"hours {text!r}: {hour}:{minute} is not a time of day (00:00 to 23:59, 24:00 as an end)")
    return value


def parse_hours(text: str) -> list[Interval]:
    """``"09:00-12:00, 13:00-17:00"`` -> [(540, 720), (780, 1020)]; ``"22:00-06:00+1"`` -> [(1320, 1800)]."""
    intervals = []
    for part in text.split(","):
        found = _INTERVAL.match(part.strip())
        if found is None:
            raise ValueError(
                f"hours {text!r}: write HH:MM-HH:MM, several separated by commas; '+1' after hours that "
                "end the next day (22:00-06:00+1)"
            )
        h1, m1, h2, m2, overnight = found.groups()
        start, end = _minutes(h1, m1, text, end=False), _minutes(h2, m2, text, end=True)
        if overnight:
            end += DAY_MINUTES
            if end - start > DAY_MINUTES:
                raise ValueError(f"hours {part.strip()!r} last more than 24 hours")
        elif end <= start:
            shown = part.strip()
            raise ValueError(
                f"hours {shown!r} end before they start; for hours that cross midnight write '{shown}+1'"
                if end < start
                else f"hours {shown!r} are empty; a whole day is 00:00-24:00"
            )
        intervals.append((start, end))
    return sorted(intervals)


def _hours_text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f'hours are text such as "07:00-21:00", got {value!r}; quote them')
    parse_hours(value)
    return value


def _holiday_date(value: object) -> date:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(f"holiday {value!r} is not a date (YYYY-MM-DD)")


def _days_text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"days are names such as mon-fri, got {value!r}")
    parse_days(value)
    return value


HoursText = Annotated[str, PlainValidator(_hours_text)]
DaysText = Annotated[str, PlainValidator(_days_text)]
HolidayDate = Annotated[date, PlainValidator(_holiday_date)]


class _Declared(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


class Holidays(_Declared):
    """Dates without sessions: listed, and/or a country's public holidays (the ``holidays`` package)."""

    dates: list[HolidayDate] = []
    country: str | None = None
    subdivision: str | None = None
    description: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _known(self) -> Holidays:
        if self.subdivision is not None and self.country is None:
            raise ValueError("a holiday subdivision needs its country (country: GB, subdivision: ENG)")
        if self.country is not None:
            unknown = unknown_region(self.country, self.subdivision)
            if unknown:
                raise ValueError(unknown)
        return self


def unknown_region(country: str, subdivision: str | None) -> str | None:
    """Why the ``holidays`` package has no such country or subdivision; None if it has, or is not installed
    (then the sessions say so when they are built)."""
    try:
        import holidays
    except ImportError:
        return None
    supported = holidays.list_supported_countries()
    if country not in supported:
        return f"unknown holiday country {country!r}: write an ISO 3166 code the holidays package knows (GB, US, DE)"
    known = supported[country]
    if subdivision is not None and subdivision not in known:
        listed = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
        return f"holiday country {country} has no subdivision {subdivision!r}; known: {listed or 'none'}"
    return None


class WeeklyCalendar(_Declared):
    """Sessions as local weekly hours in ``zone``, less holidays."""

    zone: str
    hours: dict[DaysText, HoursText]
    holidays: Holidays = Field(default_factory=Holidays)  # built when first used (defer_build)
    description: str | None = None
    note: str | None = None

    @field_validator("zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        iana_zone(value)
        return value

    @field_validator("holidays", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        return {"dates": value} if isinstance(value, list) else value

    @field_validator("hours")
    @classmethod
    def _week(cls, value: dict[str, str]) -> dict[str, str]:
        if not value:
            raise ValueError('hours name at least one day: {mon-fri: "07:00-21:00"}')
        named: dict[int, str] = {}
        for days in value:
            for day in parse_days(days):
                if day in named:
                    raise ValueError(f"{WEEKDAYS[day]} is given hours twice: under {named[day]!r} and {days!r}")
                named[day] = days
        week = _week(value)
        spans = sorted((d * DAY_MINUTES + s, d * DAY_MINUTES + e) for d, found in week.items() for s, e in found)
        whole = 7 * DAY_MINUTES
        for (s1, e1), (s2, _e2) in zip(spans, [*spans[1:], (spans[0][0] + whole, 0)], strict=True):
            if e1 > s2:
                raise ValueError(
                    f"hours overlap: {_shown(s1, e1)} and the session from {_shown(s2 % whole)}; sessions are disjoint"
                )
        return value

    def week(self) -> dict[int, list[Interval]]:
        """Weekday (0 = Monday) -> its intervals, in minutes after that day's local midnight."""
        return _week(self.hours)


def _named(value: dict[str, WeeklyCalendar]) -> dict[str, WeeklyCalendar]:
    for name in value:
        calendar_name(name)
    return value


# a ``calendars:`` section, in a contract or a catalog: every name follows calendar_name's rule
Calendars = Annotated[dict[str, WeeklyCalendar], AfterValidator(_named)]


def _week(hours: dict[str, str]) -> dict[int, list[Interval]]:
    return {day: parse_hours(text) for days, text in hours.items() for day in parse_days(days)}


def _shown(start: int, end: int | None = None) -> str:
    def clock(minutes: int) -> str:
        day, rest = divmod(minutes, DAY_MINUTES)
        return f"{WEEKDAYS[day % 7]} {rest // 60:02d}:{rest % 60:02d}"

    return clock(start) if end is None else f"{clock(start)} to {clock(end)}"
