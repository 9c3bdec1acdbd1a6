"""A point's session, found by its UTC day: the equi-join (one session a UTC day) and the general form.

Both forms of ``located_sql`` must name the same session as a plain search of the session list, on
sessions shaped like real ones: wall-clock hours in a venue's zone (Tokyo, Sydney, New York, Chicago,
London) across the days the clocks change, hours that cross UTC midnight (US futures 18:00-17:00 New
York time, Sydney's day session), a lunch break, and XNAS with its holidays and half days.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from tscontract.engines import calendars
from tscontract.engines.connection import connect
from tscontract.engines.relations import small_table
from tscontract.engines.run.located import SESSION_ROWS, SESSIONS_SQL, located_sql, one_session_per_day
from tscontract.engines.weekly_sessions import local_instant

Session = tuple[str, str, date, datetime, datetime, str]
MINUTE = timedelta(minutes=1)
ZONES = ["Asia/Tokyo", "Australia/Sydney", "America/New_York", "America/Chicago", "Europe/London", "UTC"]
# days around the changes of the clocks in 2026 (Sydney 5 April and 4 October, London 29 March and 25 October,
# New York and Chicago 8 March and 1 November)
DST_DAYS = [date(2026, 3, d) for d in (6, 27)] + [date(2026, 4, 3)] + [date(2026, 10, d) for d in (2, 23, 30)]


def located(sessions: list[Session], points: list[tuple[str, datetime]], one_per_day: bool) -> list[datetime | None]:
    """The open of the session holding each point (``None``: outside every session), by ``located_sql``."""
    con = connect()
    small_table(con, SESSION_ROWS, calendars.COLUMNS, sessions)
    con.execute(SESSIONS_SQL)
    rows = [(i, "s", t, 60_000_000, calendar, "regular") for i, (calendar, t) in enumerate(points)]
    columns = [("__row", "BIGINT"), ("__s", "VARCHAR"), ("__t", "TIMESTAMPTZ"), ("__i", "BIGINT")]
    small_table(con, "points", [*columns, ("__cal", "VARCHAR"), ("__kind", "VARCHAR")], rows)
    sql = located_sql("SELECT * FROM points", "p.__row, p.__s, p.__t, p.__i", one_per_day)
    found = con.execute(f"SELECT __row, __open, __outside FROM ({sql}) ORDER BY __row").fetchall()
    con.close()
    assert [r[0] for r in found] == list(range(len(points)))  # one row per point: no session joined twice
    assert all(outside == (opens is None) for _, opens, outside in found)
    return [opens for _, opens, _ in found]


def reference(sessions: list[Session], points: list[tuple[str, datetime]]) -> list[datetime | None]:
    """The session holding each point, by looking through every session of its calendar."""
    found = []
    for calendar, t in points:
        holding = [s[3] for s in sessions if s[0] == calendar and s[3] <= t < s[4]]
        assert len(holding) <= 1, "sessions of one calendar never overlap"
        found.append(holding[0] if holding else None)
    return found


def check_both_forms(sessions: list[Session], points: list[tuple[str, datetime]]) -> bool:
    """The general form always, and the equi-join wherever it is chosen, agree with the reference."""
    expected = reference(sessions, points)
    assert located(sessions, points, one_per_day=False) == expected
    chosen = one_session_per_day(sessions)
    if chosen:
        assert located(sessions, points, one_per_day=True) == expected
    return chosen


def edges(sessions: list[Session]) -> list[datetime]:
    """Instants where a point's session changes: each open and close, and just before them."""
    return [t for s in sessions for edge in (s[3], s[4]) for t in (edge, edge - timedelta(microseconds=1))]


@st.composite
def wall_clock_sessions(draw: st.DrawFn) -> list[Session]:
    """One or two calendars of daily hours in a zone, over a week around a change of the clocks: hours
    from any minute, up to 23 hours long (past local midnight: the next day), sometimes split by a break."""
    sessions: list[Session] = []
    for calendar in draw(st.sampled_from([["A"], ["A", "B"]])):
        zone = draw(st.sampled_from(ZONES))
        tz = ZoneInfo(zone)
        opens = draw(st.integers(0, 24 * 60 - 1))
        length = draw(st.integers(30, 23 * 60))
        pause = draw(st.one_of(st.none(), st.integers(1, 120)))
        first = draw(st.sampled_from(DST_DAYS)) + timedelta(days=draw(st.integers(0, 3)))
        for k in range(draw(st.integers(1, 7))):
            day = first + timedelta(days=k)
            parts = [(opens, opens + length)]
            if pause is not None and length > pause + 20:  # a lunch break: two sessions in one day
                middle = opens + (length - pause) // 2
                parts = [(opens, middle), (middle + pause, opens + length)]
            for a, b in parts:
                start, end = local_instant(day, a, tz), local_instant(day, b, tz)
                if start < end:
                    sessions.append((calendar, "regular", day, start, end, zone))
    return sessions


@settings(max_examples=60, deadline=None)
@given(sessions=wall_clock_sessions(), data=st.data())
def test_both_forms_find_the_session_a_plain_search_finds(sessions: list[Session], data: st.DataObject) -> None:
    assert sessions
    low = min(s[3] for s in sessions) - timedelta(hours=30)
    high = max(s[4] for s in sessions) + timedelta(hours=30)
    minutes = int((high - low) / MINUTE)
    anywhere = st.builds(lambda m: low + m * MINUTE, st.integers(0, minutes))
    instants = data.draw(st.lists(st.one_of(anywhere, st.sampled_from(edges(sessions))), min_size=1, max_size=60))
    calendar = st.sampled_from(sorted({s[0] for s in sessions}))
    points = [(data.draw(calendar), t) for t in instants]
    crosses = any((s[4] - timedelta(microseconds=1)).date() != s[3].date() for s in sessions)
    chosen = check_both_forms(sessions, points)
    assert not (chosen and crosses)  # a session across UTC midnight always takes the general form


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_xnas_with_holidays_and_half_days_takes_the_equi_join() -> None:
    start, end = _utc(2026, 11, 20), _utc(2027, 1, 6)
    sessions = [s for s in calendars.sessions(["XNAS"], start, end, ["regular"]) if start <= s[3] < end]
    opens = {s[2]: (s[3], s[4]) for s in sessions}
    assert date(2026, 11, 26) not in opens and date(2026, 12, 25) not in opens  # Thanksgiving, Christmas
    assert opens[date(2026, 11, 27)][1] == _utc(2026, 11, 27, 18)  # the half day closes at 13:00 New York time
    bars = [
        _utc(2026, 11, 26, 15),  # on Thanksgiving: outside
        _utc(2026, 11, 27, 17, 59),  # the half day's last bar
        _utc(2026, 11, 27, 18),  # after its early close: outside
        _utc(2026, 11, 30, 14, 29),  # before the open: outside
        _utc(2026, 11, 30, 14, 30),
        _utc(2026, 12, 24, 14, 30),
        _utc(2026, 12, 31, 20, 59),
        _utc(2027, 1, 1, 15),  # New Year's Day: outside
        *edges(sessions),
    ]
    assert check_both_forms(sessions, [("XNAS", t) for t in bars])


def test_futures_hours_across_utc_midnight_and_the_clock_change_take_the_general_form() -> None:
    # CME-style: Sunday to Thursday 18:00 to 17:00 the next day, New York time; the clocks go back on Sunday
    # 1 November 2026, so the session opening that evening opens at 23:00Z, the one before at 22:00Z
    tz = ZoneInfo("America/New_York")
    two_weeks = [date(2026, 10, 25) + timedelta(days=k) for k in range(14)]
    days = [d for d in two_weeks if d.weekday() in (6, 0, 1, 2, 3)]
    sessions: list[Session] = [
        ("CME", "regular", d, local_instant(d, 18 * 60, tz), local_instant(d, 41 * 60, tz), "America/New_York")
        for d in days
    ]
    assert sessions[0][3] == _utc(2026, 10, 25, 22) and sessions[5][3] == _utc(2026, 11, 1, 23)
    bars = [
        _utc(2026, 10, 30, 21, 30),  # Friday 17:30 New York time: the week's close has passed
        _utc(2026, 11, 1, 22, 30),  # Sunday 17:30 EST: before the open
        _utc(2026, 11, 2, 0, 0),  # Sunday 19:00 EST: in the session that crossed midnight UTC
        _utc(2026, 11, 2, 21, 59),
        _utc(2026, 11, 2, 22, 0),  # the daily 17:00-18:00 pause
        *edges(sessions),
    ]
    assert not check_both_forms(sessions, [("CME", t) for t in bars])
