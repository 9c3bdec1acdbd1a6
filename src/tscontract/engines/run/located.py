"""A point's exchange session, found by its UTC day (engines/run/time.py's window pass).

Sessions are listed once per UTC day they touch (:data:`SESSIONS`); a point joins the sessions of its
calendar, session kind and UTC day, an equi-join, not an interval or ASOF join over every session.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

SESSIONS = "__tsc_sessions"  # one row per (calendar, kind, UTC day) a session touches
SESSION_ROWS = "__tsc_sessions_rows"  # one row per session
DAY_US = 86_400_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _day(instant: str, before_us: int = 0) -> str:
    """The UTC day of ``before_us`` microseconds before an instant, as a number of days since 1970
    (division truncates before 1970, on every engine: the day numbers still never decrease with
    time, all an equi-join on them needs)."""
    shift = f" - {before_us}" if before_us else ""
    return f"(epoch_us({instant}){shift}) // {DAY_US}"


# one row per UTC day a session touches: points find their session by an equi-join on (calendar, kind,
# day) instead of an interval or ASOF join, twice as fast on large batches. The day is a number (days
# since 1970), not date_trunc of an instant: no time zone rules per point
SESSIONS_SQL = (
    f"CREATE OR REPLACE TEMP TABLE {SESSIONS} AS SELECT calendar, kind, open, close, "
    f"unnest(generate_series({_day('open')}, {_day('close', 1)})) AS day FROM {SESSION_ROWS}"
)


def _epoch_us(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def one_session_per_day(sessions: list[tuple[Any, ...]]) -> bool:
    """Every UTC day holds at most one session of each (calendar, kind), and no session crosses UTC
    midnight: the day alone then names a point's only candidate session (rows as :data:`SESSION_ROWS`)."""
    seen: set[tuple[Any, Any, int]] = set()
    for calendar, kind, _date, opens, closes, *_ in sessions:
        if opens.year < 1970:  # SQL's day numbers truncate before 1970 where Python's floor: not compared
            return False
        day = _epoch_us(opens) // DAY_US
        if (_epoch_us(closes) - 1) // DAY_US != day or (calendar, kind, day) in seen:
            return False
        seen.add((calendar, kind, day))
    return True


def located_sql(points: str, narrow: str, one_per_day: bool) -> str:
    """``narrow`` columns of ``points`` (``p``: ``__t``, ``__cal``, ``__kind``) with ``__open``, the open of the
    session that holds the point, and ``__outside`` when none does.

    With :func:`one_session_per_day` the join is on equality alone (the UTC day's one session) and the
    point is tested against it after the join; otherwise every session touching the point's UTC day is a
    candidate (a session across midnight is listed under both days) and the join keeps the one holding it.
    Both give the same sessions wherever the first applies (tests/engines/test_session_location.py).
    """
    on = f"x.calendar = p.__cal AND x.kind = p.__kind AND x.day = {_day('p.__t')}"
    if one_per_day:
        opens = "CASE WHEN p.__t >= x.open AND p.__t < x.close THEN x.open END"
        return (
            f"SELECT *, __open IS NULL AS __outside FROM (SELECT {narrow}, {opens} AS __open "
            f"FROM ({points}) p LEFT JOIN {SESSIONS} x ON {on})"
        )
    return (
        f"SELECT {narrow}, x.open AS __open, x.open IS NULL AS __outside FROM ({points}) p "
        f"LEFT JOIN {SESSIONS} x ON {on} AND p.__t >= x.open AND p.__t < x.close"
    )
