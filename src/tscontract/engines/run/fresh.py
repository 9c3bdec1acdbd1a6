"""Freshness: the newest point of each series at most ``max_age`` before ``now`` (engines/run/time.py).

On the wall clock, the session clock or in trading days; a point outside every session of its series is
never the newest where the batch's sessions are known (issue #29).
"""

from __future__ import annotations

from tscontract.engines.relations import CATALOG_TABLE_SQL
from tscontract.engines.run.calendar import TimeChecks, instant_sql, stale_by_months
from tscontract.engines.run.located import SESSION_ROWS
from tscontract.plan.checks import Check
from tscontract.plan.params import FreshnessParams
from tscontract.sql.columns import ident, json_value

# a session ``x`` of the calendar and session kind of series row ``n``
_SAME_SESSIONS = "x.calendar = n.__cal AND x.kind = n.__kind"


def anchored_sql(point: str) -> str:
    """``point`` belongs to session ``x``: inside it, at its stamp (a daily bar at 00:00 of its date), or on
    its date before the open."""
    return (
        f"((x.open <= {point} AND x.close > {point}) OR x.stamp = {point} "
        f"OR (x.day_start <= {point} AND {point} < x.open))"
    )


def newest_in_session(time: TimeChecks, newest: str, column: str) -> str:
    """``newest`` (per series: newest point, calendar, kind) with a series whose newest point lies outside
    every session of its calendar judged by its newest point inside one (NULL: none arrived in a session).
    The stray series are found from the per-series rows; only their points are joined to the sessions."""
    run = time.run
    run.con.execute(f"CREATE OR REPLACE TEMP TABLE __tsc_newest_all AS {newest}")
    run.con.execute(
        f"CREATE OR REPLACE TEMP TABLE __tsc_stray AS SELECT n.__s FROM __tsc_newest_all n "
        f"LEFT JOIN {SESSION_ROWS} x ON {_SAME_SESSIONS} AND {anchored_sql('n.__newest')} "
        "WHERE n.__cal IS NOT NULL GROUP BY n.__s HAVING count(x.open) = 0"
    )
    if not run.fetch("SELECT count(*) FROM __tsc_stray")[0][0]:
        return "SELECT * FROM __tsc_newest_all"
    series = f"t.{ident(run.series)}" if run.series else "'*'"
    point = f"t.{ident(column)}"
    inside = (
        f"SELECT {series} AS __s, max({point}) AS __in FROM {run.typed_view} t "
        f"JOIN __tsc_stray s ON s.__s = {series} JOIN {SESSION_ROWS} x ON x.calendar = {time.calendar_sql()} "
        f"AND x.kind = {time.kind_sql()} AND {anchored_sql(point)} GROUP BY 1"
    )
    return (
        "SELECT n.__s, CASE WHEN s.__s IS NULL THEN n.__newest ELSE i.__in END AS __newest, n.__cal, n.__kind "
        f"FROM __tsc_newest_all n LEFT JOIN __tsc_stray s ON s.__s = n.__s LEFT JOIN ({inside}) i ON i.__s = n.__s"
    )


def newest_sql(time: TimeChecks, check: Check, column: str, sessions_loaded: bool) -> str:
    """Per series: its newest point (in a session, where sessions are loaded), calendar and session kind;
    with ``all_series``, the catalog's series that never arrived (newest NULL)."""
    run = time.run
    series = ident(run.series) if run.series else "'*'"
    newest = (
        f"SELECT {series} AS __s, max({ident(column)}) AS __newest, any_value({time.calendar_sql()}) AS __cal, "
        f"any_value({time.kind_sql()}) AS __kind FROM {run.typed_view} GROUP BY 1"
    )
    if sessions_loaded:
        newest = newest_in_session(time, newest, column)
    if check.params_of(FreshnessParams).all_series and run.catalog_joined:  # catalog series that never arrived
        newest += (
            f" UNION ALL SELECT c.__cat_series_id, NULL, {time.calendar_sql()}, {time.kind_sql()} "
            f"FROM {CATALOG_TABLE_SQL} c WHERE NOT EXISTS (SELECT 1 FROM {run.typed_view} t "
            f"WHERE t.{series} = c.__cat_series_id)"
        )
    return newest


def judge_freshness(time: TimeChecks, check: Check, sessions_loaded: bool = False) -> None:
    """The newest point of each series at most ``max_age`` before ``now``; nothing arrived is stale.

    On the session clock only time inside the series' sessions counts (``15m`` at the open after a
    weekend is the last minutes of Friday's session and the first of Monday's); ``N trading days``
    counts the sessions that opened after the newest point's session and closed by ``now``. Where the
    batch's sessions are known, a point outside every session of its series (reported by the session
    check) is not the newest: a stray Saturday bar makes no series fresh.
    """
    run = time.run
    spec = check.params_of(FreshnessParams).freshness
    column = check.columns[0]
    if not run.columns[column].present:
        run.result(check, "error", message=f"column {column} missing")
        return
    if not run.fetch(f"SELECT count(*) FROM {run.typed_view} WHERE {time.valid_sql()}")[0][0]:
        run.result(check, "failed", 1, [], "no points arrived: nothing is fresh")
        return
    now = instant_sql(run.now)
    newest = newest_sql(time, check, column, sessions_loaded)
    if spec.max_age.in_months:
        run.con.execute(f"CREATE OR REPLACE TEMP TABLE __tsc_newest AS {newest}")
        stale_by_months(time, check, spec.max_age, "__tsc_newest")
        return
    trading = spec.max_age.on_trading_calendar
    if trading:
        # the newest point's session: the one it falls in, is stamped at (the cadence's stamp, which may
        # precede the open: a daily bar at 00:00 of its date), or whose date it stands on before the open;
        # else the point itself. Age: the sessions after it closed by now
        anchored = (
            f"SELECT n.__s, n.__newest, n.__cal, n.__kind, coalesce(max(x.close), n.__newest) AS __anchor "
            f"FROM ({newest}) n LEFT JOIN {SESSION_ROWS} x ON {_SAME_SESSIONS} AND {anchored_sql('n.__newest')} "
            "GROUP BY n.__s, n.__newest, n.__cal, n.__kind"
        )
        aged = (
            f"SELECT n.__s, n.__newest, count(x.open) AS __age FROM ({anchored}) n LEFT JOIN {SESSION_ROWS} x "
            f"ON {_SAME_SESSIONS} AND x.open > n.__anchor AND x.close <= {now} GROUP BY n.__s, n.__newest"
        )
        limit: float = int(spec.max_age.amount)
    elif spec.on_session_clock:
        overlap = f"epoch_us(least(x.close, {now})) - epoch_us(greatest(x.open, n.__newest))"
        aged = (
            f"SELECT n.__s, n.__newest, coalesce(sum({overlap}), 0) / 1e6 AS __age FROM ({newest}) n "
            f"LEFT JOIN {SESSION_ROWS} x ON {_SAME_SESSIONS} AND x.close > n.__newest AND x.open < {now} "
            "GROUP BY n.__s, n.__newest"
        )
        limit = float(spec.max_age.seconds)
    else:
        aged = f"SELECT __s, __newest, (epoch_us({now}) - epoch_us(__newest)) / 1e6 AS __age FROM ({newest})"
        limit = float(spec.max_age.seconds)
    rows = run.fetch(f"SELECT * FROM ({aged}) WHERE __newest IS NULL OR __age > {limit} ORDER BY 1")
    if not rows:
        run.result(check, "passed")
        return
    age_key, limit_key = ("sessions_since", "max_sessions") if trading else ("age_s", "max_age_s")
    examples = [
        {time.series_name: r[0], "newest": json_value(r[1]), age_key: json_value(r[2]), limit_key: limit}
        for r in rows[: time.run.limit]
    ]
    clock = " of session time" if spec.on_session_clock and not trading else ""
    never = sum(1 for r in rows if r[1] is None)
    arrived = f" ({never} never arrived{' in a session' if sessions_loaded else ''})" if never else ""
    run.result(
        check,
        "failed",
        len(rows),
        examples,
        f"{len(rows)} series older than {spec.max_age.text}{clock} at {run.now.isoformat()}{arrived}",
    )
