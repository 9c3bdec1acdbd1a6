"""Time-series window checks on DuckDB: cadence, sessions and completeness.

All three read one table of distinct (series, instant) points — revisions of a
point share its instant — located in their exchange session where the contract
speaks of sessions, with the gap to the previous point of the same series (and
session). Counting expected points per window runs over a generated grid, in SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tscontract.contract.model import Contract
from tscontract.engines import calendars
from tscontract.engines.columns import ident, json_value, sql_string
from tscontract.engines.relations import small_table
from tscontract.plan.checks import Check

if TYPE_CHECKING:
    from tscontract.engines.duckdb import ValidationRun

POINTS = "__tsc_points"
SESSIONS = "__tsc_sessions"
_SESSION_GAPS = ("outside_session", "exchange_holiday")


def calendar_sql(contract: Contract, catalog_joined: bool) -> str:
    """The exchange calendar of a row's series: the catalog's, else the contract's default."""
    time = contract.time
    default = time.calendar or (time.timezone.session_calendar if time.timezone else None)
    fallback = sql_string(default) if default else "NULL"
    return f"coalesce(__cat_calendar, {fallback})" if catalog_joined else fallback


class TimeChecks:
    def __init__(self, run: ValidationRun) -> None:
        self.run = run
        self.contract = run.contract
        self.time_col = run.contract.time.column
        self.series_name = run.series or "series"
        self.limit = run.limit
        self.sessions = False

    # ------------------------------------------------------------ setup
    def needs_sessions(self, checks: list[Check]) -> bool:
        cadence = self.contract.time.cadence
        completeness = self.contract.completeness
        return (
            any(c.kind == "session" for c in checks)
            or (cadence is not None and cadence.within_session)
            or (completeness is not None and any(g in _SESSION_GAPS for g in completeness.allowed_gaps))
        )

    def calendar_sql(self) -> str:
        return calendar_sql(self.contract, self.run.catalog_joined)

    def interval_sql(self) -> str:
        cadence = self.contract.time.cadence
        if cadence is None or cadence.source == "irregular":
            return "NULL::BIGINT"
        if cadence.source == "catalog":
            return "__cat_cadence_us"
        assert cadence.interval is not None
        return str(int(cadence.interval.seconds * 1_000_000))

    def tolerance_sql(self) -> str:
        cadence = self.contract.time.cadence
        if cadence is not None and cadence.tolerance_ratio is not None:
            return f"__i * {cadence.tolerance_ratio}"
        if cadence is not None and cadence.tolerance is not None:
            return str(int(cadence.tolerance.seconds * 1_000_000))
        return "0"

    def register_sessions(self) -> str | None:
        """Load sessions for the batch; an error message when that is impossible."""
        run = self.run
        # the time range from the source alone (no catalog join); calendars from the catalog, which is small
        typed_time = run.columns[self.time_col].typed
        bounds = run.fetch(f"SELECT min({typed_time}), max({typed_time}) FROM __tsc_source")[0]
        names = [
            r[0]
            for r in run.fetch(
                f"SELECT DISTINCT {self.calendar_sql()} FROM (SELECT __cat_calendar FROM "
                f"__tsc_catalog UNION ALL SELECT NULL AS __cat_calendar)"
            )
            if r[0] is not None
        ]
        if bounds[0] is None:
            return "no valid timestamps"
        if not names:
            return "no exchange calendar known for the series (catalog 'calendar' or 'venue', or time.calendar)"
        small_table(run.con, "__tsc_sessions_rows", calendars.COLUMNS, calendars.sessions(names, bounds[0], bounds[1]))
        # one row per UTC day a session touches: points find their session by an equi-join on
        # (calendar, day) instead of an ASOF join, twice as fast on large batches
        run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {SESSIONS} AS SELECT calendar, open, close, "
            "unnest(generate_series(date_trunc('day', open), date_trunc('day', close - INTERVAL 1 MICROSECOND), "
            "INTERVAL 1 DAY)) AS day FROM __tsc_sessions_rows"
        )
        return None

    @staticmethod
    def in_session_join(alias: str) -> str:
        """``LEFT JOIN`` of the session (if any) that contains ``alias.__t``."""
        return (
            f"LEFT JOIN {SESSIONS} x ON x.calendar = {alias}.__cal AND x.day = date_trunc('day', {alias}.__t) "
            f"AND {alias}.__t >= x.open AND {alias}.__t < x.close"
        )

    def build_points(self, sessions: bool, keep_all: bool) -> None:
        """One window pass: each point with the gap to the previous point of its series (and session).

        Revisions and duplicates of a point share its instant: their gap is 0 and is not a cadence
        fault; counts of points use ``count(DISTINCT __t)``. Only completeness needs every point;
        otherwise only the points that break the cadence or stand outside a session are kept.
        """
        run = self.run
        ts = ident(self.time_col)
        series = ident(run.series) if run.series else "'*'"
        valid = (
            f"{ts} IS NOT NULL AND NOT {ident('__utc_' + self.time_col)} "
            f"AND NOT {ident('__tf_' + self.time_col)} AND NOT {ident('__prec_' + self.time_col)}"
        )
        if run.series:
            valid += f" AND {series} IS NOT NULL"
        points = (
            f"SELECT __row, {series} AS __s, {ts} AS __t, {self.interval_sql()} AS __i, "
            f"{self.calendar_sql()} AS __cal FROM __tsc_typed WHERE {valid}"
        )
        if sessions:
            flagged = (
                f"SELECT p.*, x.open AS __open, x.open IS NULL AS __outside "
                f"FROM ({points}) p {self.in_session_join('p')}"
            )
        else:
            flagged = f"SELECT *, NULL::TIMESTAMPTZ AS __open, FALSE AS __outside FROM ({points})"
        # one window over each series; a gap counts only between two in-session points of the same session
        same_session = "NOT __outside AND NOT lag(__outside) OVER w AND lag(__open) OVER w IS NOT DISTINCT FROM __open"
        keep = (
            "" if keep_all else f" WHERE __outside OR (__gap_us > 0 AND abs(__gap_us - __i) > {self.tolerance_sql()})"
        )
        run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {POINTS} AS SELECT * FROM (SELECT *, "
            f"CASE WHEN {same_session} THEN lag(__t) OVER w END AS __prev, "
            f"CASE WHEN {same_session} THEN epoch_us(__t) - epoch_us(lag(__t) OVER w) END AS __gap_us "
            f"FROM ({flagged}) WINDOW w AS (PARTITION BY __s ORDER BY __t)){keep}"
        )

    # ------------------------------------------------------------ run
    def execute(self, checks: list[Check]) -> None:
        run = self.run
        problem = None
        if not run.columns[self.time_col].present or (run.series and not run.columns[run.series].present):
            problem = "time or series column missing"
        elif any(c.params.get("needs_catalog") for c in checks) and not run.catalog_joined:
            problem = "needs the series catalog (--catalog) for the cadence"
        sessions = self.sessions = not problem and self.needs_sessions(checks)
        if sessions:
            run.progress("exchange sessions")
            try:
                problem = self.register_sessions()
            except Exception as exc:  # an unavailable calendar is reported on the checks that need it
                problem = str(exc)
        if problem:
            for check in checks:
                run.result(check, "error", message=problem)
            return
        run.progress("cadence and completeness")
        self.build_points(sessions, keep_all=any(c.kind == "completeness" for c in checks))
        for check in checks:
            getattr(self, check.kind)(check)

    def cadence(self, check: Check) -> None:
        condition = f"NOT __outside AND __gap_us > 0 AND abs(__gap_us - __i) > {self.tolerance_sql()}"
        count = self.run.fetch(f"SELECT count(*) FROM {POINTS} WHERE {condition}")[0][0]
        if not count:
            self.run.result(check, "passed")
            return
        rows = self.run.fetch(
            f"SELECT __s, __t, __prev, __gap_us / 1e6, __i / 1e6 FROM {POINTS} "
            f"WHERE {condition} ORDER BY __s, __t LIMIT {self.limit}"
        )
        examples = [
            {
                self.series_name: r[0],
                self.time_col: json_value(r[1]),
                "previous": json_value(r[2]),
                "gap_s": r[3],
                "expected_s": r[4],
            }
            for r in rows
        ]
        self.run.result(check, "failed", int(count), examples)

    def session(self, check: Check) -> None:
        count = self.run.fetch(f"SELECT count(DISTINCT (__s, __t)) FROM {POINTS} WHERE __outside")[0][0]
        if not count or not check.params["cadence"].outside_session_forbidden:
            self.run.result(check, "passed")
            return
        rows = self.run.fetch(
            f"SELECT __s, __t, __cal FROM {POINTS} WHERE __outside ORDER BY __s, __t LIMIT {self.limit}"
        )
        examples = [{self.series_name: r[0], self.time_col: json_value(r[1]), "calendar": r[2]} for r in rows]
        self.run.result(check, "failed", int(count), examples, "points outside the venue's trading session")

    def completeness(self, check: Check) -> None:
        spec = check.params["completeness"]
        window_us = int(spec.window.seconds * 1_000_000)
        bucket = f"time_bucket(to_microseconds({window_us}), __t)"
        in_points = "NOT __outside"
        if spec.expected_count == "per cadence":
            if self.interval_sql() == "NULL::BIGINT":
                self.run.result(check, "error", message="'per cadence' needs a fixed or catalog cadence")
                return
            grid = (
                f"SELECT __s, __cal, unnest(generate_series(min(__t), max(__t), to_microseconds(any_value(__i))))"
                f" AS __t FROM {POINTS} WHERE {in_points} GROUP BY __s, __cal"
            )
            if self.sessions:
                grid = f"SELECT g.__s, g.__t FROM ({grid}) g {self.in_session_join('g')} WHERE x.open IS NOT NULL"
            expected = f"SELECT __s, {bucket} AS __w, count(*) AS __expected FROM ({grid}) GROUP BY ALL"
        else:
            expected = (
                f"SELECT __s, unnest(generate_series(time_bucket(to_microseconds({window_us}), min(__t)), "
                f"max(__t), to_microseconds({window_us}))) AS __w, {int(spec.expected_count)} AS __expected "
                f"FROM {POINTS} WHERE {in_points} GROUP BY __s"
            )
            expected = (
                f"SELECT e.* FROM ({expected}) e JOIN (SELECT __s, min(__t) AS lo, max(__t) AS hi FROM "
                f"{POINTS} GROUP BY __s) b USING (__s) WHERE e.__w >= lo AND "
                f"e.__w + to_microseconds({window_us}) <= hi"
            )
        actual = (
            f"SELECT __s, {bucket} AS __w, count(DISTINCT __t) AS __actual FROM {POINTS} WHERE {in_points} GROUP BY ALL"
        )
        ratio = str(spec.min_ratio)
        self.run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_windows AS SELECT e.__s, e.__w, e.__expected, "
            f"coalesce(a.__actual, 0) AS __actual FROM ({expected}) e LEFT JOIN ({actual}) a USING (__s, __w) "
            f"WHERE coalesce(a.__actual, 0) < e.__expected * {ratio}"
        )
        count = self.run.fetch("SELECT count(*) FROM __tsc_windows")[0][0]
        if not count:
            self.run.result(check, "passed")
            return
        rows = self.run.fetch(
            f"SELECT __s, __w, __expected, __actual FROM __tsc_windows ORDER BY __s, __w LIMIT {self.limit}"
        )
        examples = [self._window_example(r, window_us) for r in rows]
        self.run.result(
            check,
            "failed",
            int(count),
            examples,
            f"{count} window(s) of {spec.window.text} below {ratio} of the expected count",
        )

    def _window_example(self, row: tuple[Any, ...], window_us: int) -> dict[str, Any]:
        series, start, expected, actual = row
        # gaps are [first missing instant, next point) intervals overlapping the window
        start_sql = f"CAST({sql_string(start.isoformat())} AS TIMESTAMPTZ)"
        gaps = self.run.fetch(
            f"SELECT __prev + to_microseconds(__i), __t FROM {POINTS} WHERE __s = {sql_string(str(series))} "
            f"AND NOT __outside AND __gap_us > __i + {self.tolerance_sql()} AND __t > {start_sql} "
            f"AND __prev < {start_sql} + to_microseconds({window_us}) ORDER BY __t LIMIT {self.limit}"
        )
        return {
            self.series_name: series,
            "window_start": json_value(start),
            "expected": int(expected),
            "actual": int(actual),
            "gaps": [[json_value(a), json_value(b)] for a, b in gaps],
        }
