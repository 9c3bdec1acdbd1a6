"""The sessions of a calendar declared as local weekly hours (contract/weekly.py), as session rows.

Each interval of a day's hours is one session, dated by the local day it opens. Its open and
close are wall-clock times in the calendar's zone, converted to UTC day by day with zoneinfo,
so ``07:00-21:00`` Europe/London is 06:00-20:00Z in summer and 07:00-21:00Z in winter, and
``22:00-06:00+1`` lasts 7 hours the night the clocks go forward and 9 the night they go back.

At a DST transition:

- a time that does not exist that day (the clocks jump over it) is read as the instant of the
  jump: ``01:30`` on the spring-forward day in London opens at 01:00Z (02:00 BST);
- a time that occurs twice (the clocks go back over it) is read as its first occurrence;
- a session left empty by these rules (all of it inside the jump) is no session.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from tscontract.contract.weekly import DAY_MINUTES, WeeklyCalendar
from tscontract.errors import InputError

Session = tuple[str, str, date, datetime, datetime, str]  # as engines/calendars.py


def local_instant(day: date, minutes: int, tz: ZoneInfo) -> datetime:
    """The UTC instant of ``minutes`` after local midnight of ``day`` (past 24:00: the next days)."""
    days, rest = divmod(minutes, DAY_MINUTES)
    wall = datetime.combine(day + timedelta(days=days), time(rest // 60, rest % 60))
    first = wall.replace(tzinfo=tz, fold=0)
    instant = first.astimezone(UTC)
    if instant.astimezone(tz).replace(tzinfo=None) == wall:
        return instant  # exists (fold=0: the first of two occurrences)
    return _jump(wall, tz)


def _jump(wall: datetime, tz: ZoneInfo) -> datetime:
    """The instant the clocks jump over ``wall``: between its readings with the offsets before and after."""
    late = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)  # read with the offset before the jump
    early = wall.replace(tzinfo=tz, fold=1).astimezone(UTC)  # with the offset after it
    early, late = min(early, late), max(early, late)
    after = late.astimezone(tz).utcoffset()
    while late - early > timedelta(seconds=1):  # offsets change on whole seconds
        middle = early + (late - early) / 2
        if middle.astimezone(tz).utcoffset() == after:
            late = middle
        else:
            early = middle
    return late.replace(microsecond=0) if late.microsecond else late


def closed_days(name: str, calendar: WeeklyCalendar, first: date, last: date) -> set[date]:
    """The holidays of ``calendar`` from ``first`` to ``last``: listed, and the country's."""
    rule = calendar.holidays
    closed = {d for d in rule.dates if first <= d <= last}
    if rule.country is None:
        return closed
    try:
        import holidays
    except ImportError:
        raise InputError(
            f"calendar {name!r} takes its holidays from the holidays package (country {rule.country}): "
            "pip install 'tscontract[holidays]'"
        ) from None
    try:
        found = holidays.country_holidays(rule.country, subdiv=rule.subdivision, years=range(first.year, last.year + 1))
    except NotImplementedError as exc:
        raise InputError(f"calendar {name!r}: {exc}") from None
    return closed | {d for d in found if first <= d <= last}


def weekly_sessions(
    name: str, calendar: WeeklyCalendar, first: date, last: date, kinds: Iterable[str]
) -> list[Session]:
    """``(name, kind, date, open, close, zone)`` of every session opening from ``first`` to ``last``.

    Only ``regular`` sessions: a declared calendar has no extended hours (a catalog series asking for them
    is refused when the plan is built, contract/weekly.py)."""
    wanted = [kind for kind in sorted(set(kinds)) if kind == "regular"]
    tz = ZoneInfo(calendar.zone)
    week = calendar.week()
    closed = closed_days(name, calendar, first, last)
    rows: list[Session] = []
    day = first
    while day <= last:
        if day not in closed:
            for start, end in week.get(day.weekday(), ()):
                opens, closes = local_instant(day, start, tz), local_instant(day, end, tz)
                if closes > opens:
                    rows.extend((name, kind, day, opens, closes, calendar.zone) for kind in wanted)
        day += timedelta(days=1)
    return rows
