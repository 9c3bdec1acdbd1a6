"""Exchange sessions from a real exchange calendar (exchange-calendars), as rows.

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
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from tscontract.contract.cache import cache_dir, read_pickle, write_pickle
from tscontract.errors import InputError

_MARGIN = timedelta(days=7)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
COLUMNS = [("calendar", "VARCHAR"), ("open", "TIMESTAMPTZ"), ("close", "TIMESTAMPTZ")]

Session = tuple[str, datetime, datetime]  # calendar, open, close (UTC)


def _calendar_module() -> Any:
    try:
        import exchange_calendars
    except ImportError:
        raise InputError(
            "session checks need the exchange-calendars package: pip install 'tscontract[calendars]'"
        ) from None
    return exchange_calendars


def _schedule(name: str, first: str, last: str) -> list[tuple[int, int]]:
    """(open, close) in microseconds since the epoch for the sessions ``first``..``last``."""
    import pyarrow as pa

    xcals = _calendar_module()
    with warnings.catch_warnings():
        # exchange-calendars' own use of a pandas API pandas 3 deprecates; not ours to fix
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        schedule = xcals.get_calendar(name, start=first, end=last).schedule
    micros = pa.timestamp("us", tz="UTC")
    opens = pa.Array.from_pandas(schedule["open"]).cast(micros).cast(pa.int64()).to_pylist()
    closes = pa.Array.from_pandas(schedule["close"]).cast(micros).cast(pa.int64()).to_pylist()
    return list(zip(opens, closes, strict=True))


def _version() -> str | None:
    try:
        return importlib.metadata.version("exchange-calendars")
    except importlib.metadata.PackageNotFoundError:
        return None


def _year(name: str, year: int, version: str) -> list[tuple[int, int]] | None:
    """The sessions of ``year``, from the cache or the calendar; None when the calendar cannot give it whole."""
    directory = cache_dir()
    key = (name, year, version)
    path = None
    if directory is not None:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
        path = directory / "sessions" / f"{digest}.pickle"
        cached = read_pickle(path)
        if isinstance(cached, dict) and cached.get("key") == key:
            return cached["sessions"]
    _calendar_module()  # a missing package is the caller's error, not a year the calendar lacks
    try:
        found = _schedule(name, f"{year}-01-01", f"{year}-12-31")
    except Exception:  # beyond the calendar's bounds, or an unknown name: the caller reads the range itself
        return None
    if path is not None:
        write_pickle(path, {"key": key, "sessions": found})
    return found


def sessions(calendars: Iterable[str], start: datetime, end: datetime) -> list[Session]:
    """``(calendar, open, close)`` (UTC) for the sessions of ``calendars`` around ``[start, end]``."""
    first: date = (start - _MARGIN).date()
    last: date = (end + _MARGIN).date()
    version = _version()
    rows: list[Session] = []
    for name in sorted(set(calendars)):
        found: list[tuple[int, int]] | None = []
        for year in range(first.year, last.year + 1):
            part = _year(name, year, version) if version is not None else None
            if part is None:
                found = None
                break
            found.extend(part)
        if found is None:
            try:
                found = _schedule(name, first.isoformat(), last.isoformat())
            except InputError:
                raise
            except Exception as exc:  # exchange_calendars raises several types for unknown names and ranges
                raise InputError(f"exchange calendar {name!r} is not available: {exc}") from None
        rows.extend((name, _EPOCH + timedelta(microseconds=o), _EPOCH + timedelta(microseconds=c)) for o, c in found)
    return rows
