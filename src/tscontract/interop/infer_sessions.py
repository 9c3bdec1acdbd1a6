"""``tscontract init``: whether exchange sessions explain a sample's gaps (points only inside a venue's hours).

The candidate calendars' regular sessions over the sample's span are joined to the points in SQL; a
calendar holding every point, every session of the span whole, gives ``<interval> within session; no
bars outside session`` and ``time.calendar``.
"""

from __future__ import annotations

from typing import Any

from tscontract.engines.inputs.sources import SOURCE_VIEW
from tscontract.interop.draft import Draft, duration, typed_time
from tscontract.sql.columns import ident

# calendars tried when bars stop and start again: the venues most market data comes from (regular sessions)
SESSION_CANDIDATES = (
    "XNYS",
    "XNAS",
    "XTSE",
    "XLON",
    "XETR",
    "XPAR",
    "XSWX",
    "XTKS",
    "XHKG",
    "XASX",
    "XSHG",
    "XBOM",
)
_SESSIONS_TABLE = "__tsc_init_sessions"


# one calendar's fit to one series (or their totals): bars, bars inside its regular sessions, sessions of the
# sample's span, sessions whole and regular
_SessionFit = tuple[int, int, int, int]


def sessions_fit(con: Any, draft: Draft, interval: int) -> bool:
    """Whether exchange sessions explain the gaps: a calendar whose regular sessions hold every bar of
    every series, each session of the sample's span whole (first bar less than one interval after the
    open, the last at most one interval before the close) and regular inside. Sets the cadence and
    the calendar (or per series calendars in the catalog) with the evidence; else leaves a note."""
    from tscontract.engines import calendars
    from tscontract.engines.relations import small_table
    from tscontract.errors import InputError as CalendarMissing

    if interval <= 0 or interval >= 86_400_000:
        return False
    t = typed_time(draft)
    span = con.execute(f"SELECT min({t}), max({t}) FROM {SOURCE_VIEW}").fetchone()
    try:
        rows = calendars.sessions(SESSION_CANDIDATES, span[0], span[1])
    except CalendarMissing as exc:
        draft.calendar_note = f"exchange sessions not tested: {exc}"
        return False
    small_table(con, _SESSIONS_TABLE, calendars.COLUMNS, rows)
    by_series, tolerance = _session_fits(con, draft, interval, t)
    if not by_series:
        return False
    choice = _choose_calendars(draft, by_series)
    if choice is None:
        return False
    chosen, common = choice
    spread = max(tolerance[(s, c)] for s, c in chosen.items())
    rule = f"{duration(interval)} within session; no bars outside session"
    draft.cadence = rule + (f"; tolerance +/-{duration(spread)}" if spread else "")
    draft.cadence_note = f"median interval {duration(interval)} inside sessions; the gaps are between sessions" + (
        "" if common else " (each series' calendar in the catalog)"
    )
    return True


def _session_fits(
    con: Any, draft: Draft, interval: int, t: str
) -> tuple[dict[str, dict[str, _SessionFit]], dict[tuple[str, str], int]]:
    """Per series, each candidate calendar's fit; and per (series, calendar) the largest deviation from
    ``interval`` inside a session."""
    series = ident(draft.series_column) if draft.series_column else "'*'"
    fits = con.execute(
        f"""
        WITH bars AS (SELECT DISTINCT {series} AS s, {t} AS u FROM {SOURCE_VIEW} WHERE {t} IS NOT NULL),
        span AS (SELECT s, min(u) AS lo, max(u) AS hi, count(*) AS n FROM bars GROUP BY s),
        hit AS (
            SELECT b.s, c.calendar, c.open, c.close, b.u,
                epoch_ms(b.u) - epoch_ms(lag(b.u) OVER (PARTITION BY b.s, c.calendar, c.open ORDER BY b.u)) AS d
            FROM bars b JOIN {_SESSIONS_TABLE} c ON b.u >= c.open AND b.u < c.close),
        per_session AS (
            SELECT s, calendar, open, count(*) AS k,
                bool_and(d IS NULL OR abs(d - {interval}) <= {interval} / 10) AS regular,
                coalesce(max(abs(d - {interval})), 0) AS deviation,
                epoch_ms(min(u)) - epoch_ms(open) < {interval} AND epoch_ms(close) - epoch_ms(max(u)) <= {interval}
                    AS whole
            FROM hit GROUP BY s, calendar, open, close),
        expected AS (
            SELECT sp.s, sp.n, c.calendar, c.open FROM span sp
            JOIN {_SESSIONS_TABLE} c ON c.close > sp.lo AND c.open <= sp.hi)
        SELECT e.s, e.calendar, any_value(e.n), coalesce(sum(p.k), 0), count(*),
            count(*) FILTER (WHERE p.whole AND p.regular), coalesce(max(p.deviation), 0)
        FROM expected e LEFT JOIN per_session p USING (s, calendar, open)
        GROUP BY e.s, e.calendar
        """
    ).fetchall()
    by_series: dict[str, dict[str, _SessionFit]] = {}
    tolerance: dict[tuple[str, str], int] = {}
    for s, calendar, n, inside, sessions, whole, deviation in fits:
        by_series.setdefault(str(s), {})[calendar] = (int(n), int(inside), int(sessions), int(whole))
        tolerance[(str(s), calendar)] = int(deviation)
    return by_series, tolerance


def _fits_whole(fit: _SessionFit) -> bool:
    return fit[1] == fit[0] and fit[3] == fit[2]


def _session_rank(fit: _SessionFit, name: str) -> tuple[float, float, int]:
    return (-fit[1] / fit[0], -fit[3] / fit[2], SESSION_CANDIDATES.index(name))


def _choose_calendars(draft: Draft, by_series: dict[str, dict[str, _SessionFit]]) -> tuple[dict[str, str], bool] | None:
    """One calendar for every series when one fits them all (True), else each series its own (False), set on
    the draft with the evidence; None (and a note) when a series fits none."""

    def total(c: str) -> _SessionFit:
        n, inside, sessions, whole = (sum(f[c][i] for f in by_series.values() if c in f) for i in range(4))
        return n, inside, sessions, whole

    totals = {c: total(c) for c in SESSION_CANDIDATES}
    common = [c for c in SESSION_CANDIDATES if all(c in f and _fits_whole(f[c]) for f in by_series.values())]
    if common:
        calendar = common[0]
        draft.calendar = calendar
        draft.calendar_note = _session_evidence(calendar, totals, common[1:], _session_rank, len(by_series))
        return dict.fromkeys(by_series, calendar), True
    chosen: dict[str, str] = {}
    for s, found in sorted(by_series.items()):
        best = min(found, key=lambda c: _session_rank(found[c], c))
        if not _fits_whole(found[best]):
            if found[best][1] == found[best][0]:  # every point inside its sessions: named; else no exchange fits
                who = "" if s == "*" else f"{s}: "
                evidence = _session_evidence(best, found, [], _session_rank, 1)
                draft.calendar_note = f"{who}closest exchange calendar {evidence}"
            return None
        chosen[s] = best
        draft.catalog.setdefault(s, {})["calendar"] = best
    return chosen, False


def _session_evidence(
    calendar: str, fits: dict[str, tuple[int, int, int, int]], ties: list[str], rank: Any, series: int
) -> str:
    """``XNYS: 3360 of 3360 bars inside its regular sessions, 44 of 44 sessions whole; ...``."""
    n, inside, sessions, whole = fits[calendar]
    text = f"{calendar}: {inside} of {n} bars inside its regular sessions, {whole} of {sessions} sessions whole"
    text += f" ({series} series)" if series > 1 else ""
    if ties:
        text += f"; {', '.join(ties)} fit{'s' if len(ties) == 1 else ''} equally ({calendar} listed first)"
    others = sorted((c for c in fits if c != calendar and c not in ties and fits[c][0]), key=lambda c: rank(fits[c], c))
    if others:
        o = fits[others[0]]
        text += f"; next best {others[0]}: {o[1]} of {o[0]} bars inside, {o[3]} of {o[2]} sessions whole"
    return text
