"""5-minute call counts of a bank's call centre, open weekdays 07:00-21:00 London time.

The sessions are written out here, not computed by the code under test: London leaves summer
time on Sunday 2026-10-25, so a day's first slot is 06:00Z before and 07:00Z after; Monday
2026-10-19 is a closure the contract lists. Over four weeks, six weekdays lack calls that
were really missing (:data:`GAPS`); nights, weekends and the closure are no gap.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from tests.conftest import write

DST_END = date(2026, 10, 25)
CLOSURE = date(2026, 10, 19)
FIRST, LAST = date(2026, 10, 5), date(2026, 10, 30)
SLOTS = 168  # 07:00 .. 20:55, every 5 minutes

CONTRACT = """\
contract: callcentre_calls
version: 1.0.0
key: [queue, slot_start]
series: {column: queue}
time:
  column: slot_start
  timezone: UTC instant
  cadence: 5m within session; no bars outside session
  calendar: callcentre
calendars:
  callcentre:
    zone: Europe/London
    hours: {mon-fri: "07:00-21:00"}
    holidays: [2026-10-19, 2026-12-25]
fields:
  queue: {type: string, nullable: false}
  slot_start: {type: timestamp_ms_utc}
  calls: {type: int32, nullable: false}
"""
DECLARATION = """\
calendars:
  callcentre:
    zone: Europe/London
    hours: {mon-fri: "07:00-21:00"}
    holidays: [2026-10-19, 2026-12-25]
"""
UNDECLARED = CONTRACT.replace(DECLARATION, "")  # the calendar named, declared elsewhere (the catalog)
COMPLETENESS = "completeness: {window: 1 local day, expected_count: per cadence, allowed_gaps: [outside_session]}\n"


def opening(day: date) -> datetime:
    """07:00 London on ``day``, in UTC."""
    return datetime(day.year, day.month, day.day, 6 if day < DST_END else 7, tzinfo=UTC)


def slots(day: date) -> list[datetime]:
    return [opening(day) + timedelta(minutes=5 * n) for n in range(SLOTS)]


def workdays() -> list[date]:
    days = [FIRST + timedelta(days=n) for n in range((LAST - FIRST).days + 1)]
    return [d for d in days if d.weekday() < 5 and d != CLOSURE]


def local(day: date, hour: int, minute: int = 0) -> datetime:
    return opening(day) + timedelta(hours=hour - 7, minutes=minute)


# the six weekdays with calls really missing: [from, to) local time
GAPS = [
    (local(date(2026, 10, 6), 10), local(date(2026, 10, 6), 10, 5)),  # one slot
    (local(date(2026, 10, 7), 12), local(date(2026, 10, 7), 13)),  # an hour
    (local(date(2026, 10, 15), 7), local(date(2026, 10, 15), 7, 30)),  # the first half hour
    (local(date(2026, 10, 16), 20, 30), local(date(2026, 10, 16), 21)),  # the last half hour
    (local(date(2026, 10, 21), 7), local(date(2026, 10, 21), 21)),  # the whole day
    (local(date(2026, 10, 26), 15), local(date(2026, 10, 26), 15, 5)),  # first Monday on GMT
]


def received() -> list[datetime]:
    """Every slot of the four weeks less the gaps."""
    return [t for day in workdays() for t in slots(day) if not any(a <= t < b for a, b in GAPS)]


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def counts_csv(tmp_path: Path, instants: list[datetime], name: str = "calls.csv") -> Path:
    rows = [f"retail,{stamp(t)},{7 + n % 13}" for n, t in enumerate(instants)]
    return write(tmp_path, "\n".join(["queue,slot_start,calls", *rows]) + "\n", name)


def contract(tmp_path: Path, extra: str = "", text: str = CONTRACT, name: str = "calls.yaml") -> Path:
    return write(tmp_path, text + extra, name)
