"""Exchange sessions from a real exchange calendar (exchange-calendars), as rows.

Calendars a contract or catalog declares as local weekly hours (``calendars:``, contract/weekly.py)
give rows of the same shape (engines/weekly_sessions.py); their names never clash with an exchange
code (a declared name has a lower-case letter), and need neither exchange-calendars nor the cache.

Sessions are loaded once per validation for the calendars the batch's series use and
the batch's time range, then joined in SQL: no per-row calendar lookups in Python.

Whole years of sessions are kept in the tscontract cache (contract.cache), keyed by
calendar, year and the exchange-calendars version: importing exchange-calendars and
building a calendar takes about 0.7 s, which a batch of a few thousand rows should not
pay every minute. A year the calendar cannot give whole (beyond its bounds) is read for
the batch's range alone and not kept.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import warnings
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tscontract.contract.cache import cache_dir, read_pickle, write_pickle
from tscontract.contract.weekly import WeeklyCalendar
from tscontract.errors import InputError

_MARGIN = timedelta(days=7)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Instants outside these years are not looked up on a calendar: one stray timestamp in year 9999
# must not make a validation build eight thousand years of sessions.
FIRST_YEAR, LAST_YEAR = 1970, 2099
COLUMNS = [
    ("calendar", "VARCHAR"),
    ("kind", "VARCHAR"),
    ("session_date", "DATE"),
    ("open", "TIMESTAMPTZ"),
    ("close", "TIMESTAMPTZ"),
    ("zone", "VARCHAR"),
]
# Extended hours where the venue's regular session is only part of the trading day: US equities
# trade from 04:00 New York time before the open to four hours after the close (20:00; 17:00 on
# a half day). exchange-calendars models regular sessions only.
_EXTENDED_HOURS = {
    name: (time(4, 0), timedelta(hours=4)) for name in ("XNYS", "XNAS", "XASE", "ARCX", "BATS", "NYSE", "NASDAQ")
}
_FORMAT = 2  # of the cached years: (session date ordinal, open us, close us) and the calendar's zone

Session = tuple[str, str, date, datetime, datetime, str]  # calendar, kind, date, open, close (UTC), zone
_Year = tuple[str, list[tuple[int, int, int]]]  # zone, sessions


def _calendar_module() -> Any:
    try:
        import exchange_calendars
    except ImportError:
        raise InputError(
            "session checks need the exchange-calendars package: pip install 'tscontract[calendars]'"
        ) from None
    return exchange_calendars


def _schedule(name: str, first: str, last: str) -> _Year:
    """The calendar's zone and (date ordinal, open, close in microseconds) of sessions ``first``..``last``."""
    import pyarrow as pa

    xcals = _calendar_module()
    with warnings.catch_warnings():
        # exchange-calendars' own use of a pandas API pandas 3 deprecates; not ours to fix
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        calendar = xcals.get_calendar(name, start=first, end=last)
        schedule = calendar.schedule
    micros = pa.timestamp("us", tz="UTC")
    opens = pa.Array.from_pandas(schedule["open"]).cast(micros).cast(pa.int64()).to_pylist()
    closes = pa.Array.from_pandas(schedule["close"]).cast(micros).cast(pa.int64()).to_pylist()
    days = [label.date().toordinal() for label in schedule.index]
    return str(calendar.tz), list(zip(days, opens, closes, strict=True))


def _version() -> str | None:
    try:
        return importlib.metadata.version("exchange-calendars")
    except importlib.metadata.PackageNotFoundError:
        return None


def _year(name: str, year: int, version: str) -> _Year | None:
    """The sessions of ``year``, from the cache or the calendar; None when the calendar cannot give it whole."""
    directory = cache_dir()
    key = (_FORMAT, name, year, version)
    path = None
    if directory is not None:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
        path = directory / "sessions" / f"{digest}.pickle"
        cached = read_pickle(path)
        if isinstance(cached, dict) and cached.get("key") == key:
            return cached["zone"], cached["sessions"]
    _calendar_module()  # a missing package is the caller's error, not a year the calendar lacks
    try:
        zone, found = _schedule(name, f"{year}-01-01", f"{year}-12-31")
    except Exception:  # beyond the calendar's bounds, or an unknown name: the caller reads the range itself
        return None
    if path is not None:
        write_pickle(path, {"key": key, "zone": zone, "sessions": found})
    return zone, found


def _clip(moment: datetime) -> date:
    return min(max(moment.date(), date(FIRST_YEAR, 1, 1)), date(LAST_YEAR, 12, 31))


def _regular(name: str, first: date, last: date, version: str | None) -> _Year:
    zone = ""
    found: list[tuple[int, int, int]] = []
    for year in range(first.year, last.year + 1):
        part = _year(name, year, version) if version is not None else None
        if part is None:
            break
        zone = part[0]
        found.extend(part[1])
    else:  # every year's sessions were found
        return zone, found
    try:
        return _schedule(name, first.isoformat(), last.isoformat())
    except InputError:
        raise
    except Exception as exc:  # exchange_calendars raises several types for unknown names and ranges
        raise InputError(f"exchange calendar {name!r} is not available: {exc}") from None


def zone(name: str, declared: Mapping[str, WeeklyCalendar] | None = None) -> str:
    """The IANA zone of calendar ``name`` (its local days): a declared calendar's, else the exchange's."""
    if declared and name in declared:
        return declared[name].zone
    return _regular(name, date.today(), date.today(), _version())[0]


def _extended(name: str, zone: str, day: date, close: datetime) -> tuple[datetime, datetime]:
    if name not in _EXTENDED_HOURS:
        known = ", ".join(sorted(_EXTENDED_HOURS))
        raise InputError(f"extended hours of calendar {name!r} are not known (known for {known})")
    opens_at, after_close = _EXTENDED_HOURS[name]
    return datetime.combine(day, opens_at, ZoneInfo(zone)).astimezone(UTC), close + after_close


def sessions(
    calendars: Iterable[str],
    start: datetime,
    end: datetime,
    kinds: Iterable[str] = ("regular",),
    declared: Mapping[str, WeeklyCalendar] | None = None,
) -> list[Session]:
    """``(calendar, kind, date, open, close, zone)`` for the sessions of ``calendars`` around ``[start, end]``.

    ``kinds``: ``regular`` sessions, and ``extended`` hours where the venue has them. ``declared``: the
    calendars of the contract and catalog declared as weekly hours, by name. Years outside
    FIRST_YEAR..LAST_YEAR are not looked up.
    """
    from tscontract.engines.weekly_sessions import weekly_sessions

    first = _clip(start - _MARGIN)
    last = _clip(end + _MARGIN)
    version = _version()
    wanted = sorted(set(kinds))
    rows: list[Session] = []
    for name in sorted(set(calendars)):
        if declared and name in declared:
            rows.extend(weekly_sessions(name, declared[name], first, last, wanted))
            continue
        try:
            zone, found = _regular(name, first, last, version)
        except InputError as exc:
            if not declared:
                raise
            raise InputError(f"{exc} (calendars declared by their hours: {', '.join(sorted(declared))})") from None
        for ordinal, open_us, close_us in found:
            day = date.fromordinal(ordinal)
            opens, closes = _EPOCH + timedelta(microseconds=open_us), _EPOCH + timedelta(microseconds=close_us)
            for kind in wanted:
                if kind == "extended":
                    rows.append((name, kind, day, *_extended(name, zone, day, closes), zone))
                else:
                    rows.append((name, kind, day, opens, closes, zone))
    return rows
