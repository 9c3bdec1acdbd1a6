"""Exchange sessions from a real exchange calendar (exchange-calendars), as a relation.

Sessions are loaded once per validation for the calendars the batch's series
use and the batch's time range, then joined in SQL (an ASOF join): no per-row
calendar lookups in Python.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from datetime import datetime, timedelta

import pyarrow as pa

from tscontract.errors import InputError

_MARGIN = timedelta(days=7)


def _calendar_module():  # type: ignore[no-untyped-def]
    try:
        import exchange_calendars
    except ImportError:
        raise InputError(
            "session checks need the exchange-calendars package: pip install 'tscontract[calendars]'"
        ) from None
    return exchange_calendars


def sessions(calendars: Iterable[str], start: datetime, end: datetime) -> pa.Table:
    """``calendar, open, close`` (UTC) for every session of ``calendars`` around ``[start, end]``."""
    xcals = _calendar_module()
    tables = []
    first, last = (start - _MARGIN).date().isoformat(), (end + _MARGIN).date().isoformat()
    timestamp = pa.timestamp("us", tz="UTC")
    for name in sorted(set(calendars)):
        try:
            with warnings.catch_warnings():
                # exchange-calendars' own use of a pandas API pandas 3 deprecates; not ours to fix
                warnings.simplefilter("ignore", FutureWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                calendar = xcals.get_calendar(name, start=first, end=last)
        except Exception as exc:  # exchange_calendars raises several types for unknown names and ranges
            raise InputError(f"exchange calendar {name!r} is not available: {exc}") from None
        schedule = calendar.schedule
        tables.append(
            pa.table(
                {
                    "calendar": pa.array([name] * len(schedule), pa.string()),
                    "open": pa.Array.from_pandas(schedule["open"]).cast(timestamp),
                    "close": pa.Array.from_pandas(schedule["close"]).cast(timestamp),
                }
            )
        )
    return pa.concat_tables(tables)
