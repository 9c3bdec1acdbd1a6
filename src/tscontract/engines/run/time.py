"""Time-series window checks: cadence, sessions, completeness and freshness.

All read one table of distinct (series, instant) points — revisions of a point share
its instant — located in their exchange session where the contract speaks of sessions,
with the gap to the previous point of the same series (and session).

**Coverage.** A batch is judged over the period it covers, not only between each series'
first and last point: a missing opening or closing bar is a gap. The batch's span runs from
its first to its last point in a session (or, without sessions, its first to its last
point); a point outside every session is reported once, as outside, and neither widens
that span nor makes its series present (a stray Saturday bar adds no week of missing
sessions). The period is, per series with a point in a session:

- with sessions, every session of the series' calendar the span touches, whole (a
  session cadence: every session whose stamp falls in the span);
- without, the batch's span, over all series;
- completeness windows (``1h``, ``1 local day``, ``5 sessions``) touched by the batch,
  whole;
- ``--from/--to`` (``coverage``) widen the period to at least that range and are taken
  as given: sessions and windows are then cut at ``from`` and ``to``, not made whole.

Counting expected points per window is arithmetic over sessions and windows, in SQL;
nothing enumerates the expected points.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tscontract.contract.calendar_time import FIXED_ORIGIN, CalendarStep, add_months, local_date, local_midnight
from tscontract.contract.catalog import declared_calendars
from tscontract.contract.model import Contract
from tscontract.engines import calendars
from tscontract.engines.base import Run
from tscontract.engines.relations import CATALOG_TABLE_SQL, small_table
from tscontract.engines.run.calendar import CalendarChecks, counted_part, instant_sql
from tscontract.engines.run.fresh import judge_freshness
from tscontract.engines.run.located import DAY_US, SESSION_ROWS, SESSIONS_SQL, located_sql, one_session_per_day
from tscontract.errors import InputError
from tscontract.plan.checks import Check
from tscontract.plan.params import CadencedParams, CompletenessParams
from tscontract.shown import engine_message
from tscontract.sql.columns import ident, json_value, sql_string

POINTS = "__tsc_points"
SERIES = "__tsc_series"  # per series present: interval, calendar, session kind, zone
UNITS = "__tsc_units"  # per series: the sessions (or the one span) the batch covers
EDGES = "__tsc_edges"  # gaps at the start and end of each unit, and units without a point
WINDOWS = "__tsc_windows"  # completeness windows per window group
GROUPS = "__tsc_window_groups"  # the window group of each series
_SESSION_GAPS = ("outside_session", "exchange_holiday")
_PLAUSIBLE = (f"{calendars.FIRST_YEAR}-01-01", f"{calendars.LAST_YEAR + 1}-01-01")


def calendar_sql(contract: Contract, catalog_joined: bool) -> str:
    """The exchange calendar of a row's series: the catalog's, else the contract's default."""
    time = contract.time
    default = time.calendar or (time.timezone.session_calendar if time.timezone else None)
    fallback = sql_string(default) if default else "NULL"
    return f"coalesce(__cat_calendar, {fallback})" if catalog_joined else fallback


def plausible_sql(column: str) -> str:
    """``column`` (an instant) lies in the years calendars know: one stray year-9999 point widens nothing."""
    low, high = _PLAUSIBLE
    return f"{column} >= TIMESTAMPTZ '{low}' AND {column} < TIMESTAMPTZ '{high}'"


def _epoch_us(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def _us(duration_us: str) -> str:
    return f"to_microseconds({duration_us})"


def _same_key(neighbour: str, extra: list[str]) -> str:
    """The ``lag`` or ``lead`` row holds the same key (series and session are the window's partition)."""
    same = " AND ".join(f"{neighbour}({c}) OVER w = {c}" for c in ["__t", *extra])
    return f"coalesce({same}, FALSE)"


class TimeChecks:
    def __init__(self, run: Run, key: list[str] | None = None) -> None:
        self.run = run
        # the key's columns besides series and time: given, the window pass also flags rows whose key another
        # row holds (``__dup``, the key check judged from the points: engines/run/__init__.py)
        self.key = key
        self.key_in_points = False
        self.contract = run.contract
        self.time_col = run.contract.time.column
        self.series_name = run.series or "series"
        self.limit = run.limit
        self.cadence_rule = run.contract.time.cadence
        self.sessions = False
        self.one_per_day = False  # the sessions loaded: one a UTC day (located_sql)
        self.explicit = run.coverage is not None and any(run.coverage)
        self.lo: datetime | None = None  # the batch's first and last plausible instants
        self.hi: datetime | None = None
        self.declared = declared_calendars(run.contract, run.plan.catalog)  # calendars of weekly hours

    # ------------------------------------------------------------ setup
    def points_in_sessions(self, checks: list[Check]) -> bool:
        """Points are located in their session (gaps do not span two sessions)."""
        completeness = self.contract.completeness
        return (
            any(c.kind == "session" for c in checks)
            or (self.cadence_rule is not None and self.cadence_rule.uses_sessions)
            or (completeness is not None and self.sessions_in_completeness)
        )

    def needs_sessions(self, checks: list[Check]) -> bool:
        completeness = self.contract.completeness
        freshness = self.contract.freshness
        return (
            self.points_in_sessions(checks)
            or (completeness is not None and completeness.window.on_trading_calendar)
            or (freshness is not None and freshness.on_session_clock and any(c.kind == "freshness" for c in checks))
        )

    @property
    def sessions_in_completeness(self) -> bool:
        """Expected points are counted in session only."""
        completeness = self.contract.completeness
        return (self.cadence_rule is not None and self.cadence_rule.uses_sessions) or (
            completeness is not None and any(g in _SESSION_GAPS for g in completeness.allowed_gaps)
        )

    @property
    def per_session(self) -> bool:
        return self.cadence_rule is not None and self.cadence_rule.per_session

    def calendar_sql(self) -> str:
        return calendar_sql(self.contract, self.run.catalog_joined)

    def calendar_names(self) -> list[str]:
        """The calendars :meth:`calendar_sql` can name: the catalog's (where it is joined) and the default,
        from the contract and catalog alone (no statement)."""
        time = self.contract.time
        default = time.calendar or (time.timezone.session_calendar if time.timezone else None)
        catalog = self.run.plan.catalog
        found = {default}
        if self.run.catalog_joined and catalog is not None:
            found |= {entry.value_of("calendar") or default for entry in catalog.series.values()}
        return sorted(name for name in found if name is not None)

    def kind_sql(self) -> str:
        catalog = self.run.plan.catalog
        extended = catalog is not None and any(e.session for e in catalog.series.values())
        return "coalesce(__cat_session, 'regular')" if self.run.catalog_joined and extended else "'regular'"

    def interval_sql(self) -> str:
        cadence = self.cadence_rule
        if cadence is None or cadence.source in ("irregular", "session", "calendar"):
            return "NULL::BIGINT"
        if cadence.source == "catalog":
            return "__cat_cadence_us"
        assert cadence.interval is not None
        return str(int(cadence.interval.seconds * 1_000_000))

    def tolerance_sql(self) -> str:
        cadence = self.cadence_rule
        if cadence is not None and cadence.tolerance_ratio is not None:
            return f"__i * {cadence.tolerance_ratio}"
        if cadence is not None and cadence.tolerance is not None:
            return str(int(cadence.tolerance.seconds * 1_000_000))
        return "0"

    def valid_sql(self) -> str:
        ts = ident(self.time_col)
        valid = (
            f"{ts} IS NOT NULL AND NOT {ident('__utc_' + self.time_col)} "
            f"AND NOT {ident('__tf_' + self.time_col)} AND NOT {ident('__prec_' + self.time_col)}"
        )
        if self.run.series:
            valid += f" AND {ident(self.run.series)} IS NOT NULL"
        return valid

    def plausible_sql(self, column: str) -> str:
        return plausible_sql(column)

    def source_span(self) -> None:
        """Roughly the batch's first and last instants, from the source alone (no catalog join, no
        type checks): enough to load sessions, which are read with a margin. Implausible instants (one
        stray year-9999 point) widen nothing."""
        if self.run.time_span is not None:  # the row pass found it (where a statement is a job)
            self.lo, self.hi = self.run.time_span
            return
        typed = self.run.columns[self.time_col].typed
        self.lo, self.hi = self.run.fetch(
            f"SELECT min({typed}), max({typed}) FROM __tsc_source WHERE {self.plausible_sql(typed)}"
        )[0]

    def points_span(self) -> None:
        """The batch's first and last valid, plausible instants in a session (any, without sessions): each
        is the first or last point of its session (or series), which the points table always keeps. A point
        outside every session is reported as such and widens nothing."""
        self.lo, self.hi = self.run.fetch(
            f"SELECT min(__t), max(__t) FROM {POINTS} WHERE NOT __outside AND {self.plausible_sql('__t')}"
        )[0]

    def span(self) -> tuple[datetime, datetime] | None:
        """``[start, end)`` the batch covers: ``--from/--to`` where given, else its own first and last
        instants. Points outside ``--from/--to`` are still checked; they only set no expectations."""
        start, end = self.run.coverage or (None, None)
        if start is None and self.lo is not None:
            start = self.lo
        if end is None and self.hi is not None:
            end = self.hi + timedelta(microseconds=1)
        return None if start is None or end is None else (start, end)

    def register_sessions(self, until: datetime | None) -> str | None:
        """Load sessions for the batch (and up to ``until``); an error message when that is impossible."""
        run = self.run
        span = self.span()
        names = self.calendar_names()
        if span is None:
            return "no valid timestamps"
        if self.lo is not None and self.hi is not None:  # sessions for every point, in the coverage or not
            span = min(span[0], self.lo), max(span[1], self.hi)
        if not names:
            return (
                "no calendar known for the series (catalog 'calendar' or 'venue', or time.calendar; "
                "an exchange code or a calendar declared under 'calendars')"
            )
        kinds = ["regular"]
        if run.catalog_joined and run.plan.catalog is not None:
            kinds = sorted({entry.session or "regular" for entry in run.plan.catalog.series.values()} | {"regular"})
        start, end = span
        if until is not None:
            end = max(end, until)
        rule = self.cadence_rule
        # day_start: 00:00 of the session date in the venue's zone (a point from then to the open belongs
        # to the session, for freshness: a daily bar stamped with its date)
        rows = [
            (*row, self.stamp(row, rule.stamp if rule and self.per_session else None), self.stamp(row, "date"))
            for row in calendars.sessions(names, start, end, kinds, self.declared)
        ]
        columns = [*calendars.COLUMNS, ("stamp", "TIMESTAMPTZ"), ("day_start", "TIMESTAMPTZ")]
        small_table(run.con, SESSION_ROWS, columns, rows)
        run.con.execute(SESSIONS_SQL)
        self.one_per_day = one_session_per_day(rows)
        return None

    @staticmethod
    def stamp(session: calendars.Session, convention: str | None) -> datetime:
        """Where a series with one point per session stamps it (the open unless the cadence says)."""
        _calendar, _kind, day, opens, closes, zone = session
        if convention == "close":
            return closes
        if convention in ("date", "date_utc"):
            tz = UTC if convention == "date_utc" else ZoneInfo(zone)
            return datetime.combine(day, datetime.min.time(), tz).astimezone(UTC)
        return opens

    def build_points(self, sessions: bool, keep_all: bool) -> None:
        """One window pass: each point with the gap to the previous point of its series (and session).

        Revisions and duplicates of a point share its instant: their gap is 0 and is not a cadence
        fault; counts of points use ``count(DISTINCT __t)``. Only completeness needs every point;
        otherwise the points kept are those outside a session, those that break the cadence and the
        first and last point of each session (or series), which the coverage's edges need.
        """
        run = self.run
        ts = ident(self.time_col)
        series = ident(run.series) if run.series else "'*'"
        if sessions and self.per_session:
            self.key = None  # sessions may share a stamp (two a day, stamped at their date): a point joins each
        extra = [f"__k{i}" for i in range(len(self.key or []))]
        key_columns = "".join(f", {ident(c)} AS {k}" for c, k in zip(self.key or [], extra, strict=True))
        points = (
            f"SELECT __row, {series} AS __s, {ts} AS __t, {self.interval_sql()} AS __i, "
            f"{self.calendar_sql()} AS __cal, {self.kind_sql()} AS __kind{key_columns} FROM {run.typed_view} "
            f"WHERE {self.valid_sql()}"
        )
        # the window sorts every point: it carries only narrow columns, the series' calendar and session
        # kind are joined back onto the points kept
        narrow = ", ".join(["p.__row", "p.__s", "p.__t", "p.__i", *(f"p.{k}" for k in extra)])
        # (and the points kept: the same without "p.")
        if run.statements_dear:  # carried through the sort: joining them back would be a job more (Spark)
            narrow += ", p.__cal, p.__kind"
        if sessions and self.per_session:
            # one point per session, at the session's stamp: a point elsewhere is outside every session
            flagged = (
                f"SELECT {narrow}, x.open AS __open, x.open IS NULL AS __outside FROM ({points}) p "
                f"LEFT JOIN {SESSION_ROWS} x ON x.calendar = p.__cal AND x.kind = p.__kind AND x.stamp = p.__t"
            )
        elif sessions:
            flagged = located_sql(points, narrow, self.one_per_day)
        else:
            flagged = f"SELECT {narrow}, NULL::TIMESTAMPTZ AS __open, FALSE AS __outside FROM ({points}) p"
        kept = self.window_sql(flagged, narrow.replace("p.", ""), extra, keep_all)
        if run.statements_dear:
            run.con.execute(f"CREATE OR REPLACE TEMP TABLE {POINTS} AS {kept}")
            return
        catalog = f" LEFT JOIN {CATALOG_TABLE_SQL} c ON c.__cat_series_id = k.__s" if run.catalog_joined else ""
        run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {POINTS} AS SELECT k.*, {self.calendar_sql()} AS __cal, "
            f"{self.kind_sql()} AS __kind FROM ({kept}) k{catalog}"
        )

    def window_sql(self, flagged: str, columns: str, extra: list[str], keep_all: bool) -> str:
        """The points of ``flagged`` with ``__prev``, ``__gap_us``, ``__first`` and ``__last`` (and ``__dup``
        when the key is judged here), the ones the checks need unless ``keep_all``.

        The unit a point counts in: its session (its open), or the whole series without sessions (open
        NULL); none outside a session (open NULL too, flagged). A gap counts only between two points of
        one unit: one window partitioned by unit, with one lag and one lead, says both. A key's copies
        share series, instant and so session: ordered by the key's other columns too, they are neighbours.
        """
        fault = f"__gap_us > 0 AND abs(__gap_us - __i) > {self.tolerance_sql()}"
        keep = f"__outside OR __first OR __last OR ({fault})"
        duplicate = ""
        if self.key is not None:
            duplicate = f", {_same_key('lag', extra)} OR {_same_key('lead', extra)} AS __dup"
            columns, keep = f"{columns}, __dup", f"{keep} OR __dup"
            self.key_in_points = True
        order = ", ".join(["__t", *extra])
        return (
            f"SELECT {columns}, __open, __outside, __prev, __gap_us, __first, __last FROM (SELECT *, "
            f"NOT __outside AND __prev IS NULL AS __first FROM (SELECT *, "
            f"CASE WHEN NOT __outside THEN lag(__t) OVER w END AS __prev, "
            f"CASE WHEN NOT __outside THEN epoch_us(__t) - epoch_us(lag(__t) OVER w) END AS __gap_us, "
            f"NOT __outside AND lead(__t) OVER w IS NULL AS __last{duplicate} FROM ({flagged}) "
            f"WINDOW w AS (PARTITION BY __s, __open ORDER BY {order}))){'' if keep_all else f' WHERE {keep}'}"
        )

    def build_units(self, sessions: bool) -> None:
        """Per series present: its attributes, and the units of coverage with their edge gaps."""
        run = self.run
        span = self.span()
        assert span is not None
        start, end = (instant_sql(span[0]), instant_sql(span[1]))
        now = instant_sql(self.run.now)
        # a series present has a first point of a session (or series): a series seen only outside every
        # session is reported there and is judged over no period
        run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {SERIES} AS SELECT __s, any_value(__i) AS __i, any_value(__cal) AS __cal, "
            f"any_value(__kind) AS __kind FROM {POINTS} WHERE __first GROUP BY __s"
        )
        if sessions:
            # no point is expected after --now: a session under way is judged up to now, a later one not
            if self.per_session:
                touched = f"x.stamp >= {start} AND x.stamp < {end} AND x.stamp < {now}"
                bounds = "x.open AS __u_start, x.close AS __u_end"
            else:
                touched = f"x.close > {start} AND x.open < {end} AND x.open < {now}"
                first = f"greatest(x.open, {start})" if self.explicit else "x.open"
                last = f"least(x.close, {end}, {now})" if self.explicit else f"least(x.close, {now})"
                bounds = f"{first} AS __u_start, {last} AS __u_end"
            run.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {UNITS} AS SELECT s.__s, s.__i, x.open AS __open, x.stamp, "
                f"x.session_date, x.zone, {bounds} FROM {SERIES} s JOIN {SESSION_ROWS} x "
                f"ON x.calendar = s.__cal AND x.kind = s.__kind WHERE {touched}"
            )
        else:
            # without sessions the edges are the period --from/--to state; a batch alone says nothing of them
            run.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {UNITS} AS SELECT __s, __i, NULL::TIMESTAMPTZ AS __open, "
                f"NULL::TIMESTAMPTZ AS stamp, NULL::DATE AS session_date, NULL::VARCHAR AS zone, "
                f"{start} AS __u_start, least({end}, {now}) AS __u_end FROM {SERIES} "
                f"WHERE {f'{start} < {now}' if self.explicit else 'FALSE'}"
            )
        self.build_edges()

    def build_edges(self) -> None:
        """Gaps at a unit's edges: its first point one interval or more after its start, its last point more
        than one interval before its end, or no point at all (the whole unit is a gap)."""
        on = "u.__s = f.__s AND u.__open IS NOT DISTINCT FROM f.__open"
        firsts = (
            f"SELECT __s, __open, min(CASE WHEN __first THEN __t END) AS __p1, "
            f"max(CASE WHEN __last THEN __t END) AS __pn FROM {POINTS} WHERE __first OR __last GROUP BY __s, __open"
        )
        if self.per_session:
            lead = trail = "FALSE"
        else:
            lead = "epoch_us(f.__p1) - epoch_us(u.__u_start) >= u.__i"
            trail = "epoch_us(u.__u_end) - epoch_us(f.__pn) > u.__i"
        unit = "session" if self.sessions else "coverage"
        columns = "u.__s, u.__i, u.session_date, u.stamp"
        self.run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {EDGES} AS "
            f"SELECT {columns}, u.__u_start AS __g_start, u.__u_end AS __g_end, 'whole {unit}' AS __edge "
            f"FROM {UNITS} u LEFT JOIN ({firsts}) f ON {on} WHERE f.__p1 IS NULL "
            f"UNION ALL SELECT {columns}, u.__u_start, f.__p1, '{unit} start' FROM {UNITS} u "
            f"JOIN ({firsts}) f ON {on} WHERE u.__i IS NOT NULL AND {lead} "
            f"UNION ALL SELECT {columns}, f.__pn + {_us('u.__i')}, u.__u_end, '{unit} end' FROM {UNITS} u "
            f"JOIN ({firsts}) f ON {on} WHERE u.__i IS NOT NULL AND {trail}"
        )

    # ------------------------------------------------------------ run
    def execute(self, checks: list[Check]) -> None:
        run = self.run
        problem = None
        if not run.columns[self.time_col].present or (run.series and not run.columns[run.series].present):
            problem = "time or series column missing"
        elif any(c.params.needs_catalog for c in checks) and not run.catalog_joined:
            problem = "needs the series catalog (--catalog) for the cadence"
        freshness = [c for c in checks if c.kind == "freshness"]
        window_checks = [c for c in checks if c.kind != "freshness"]
        spec = self.contract.freshness
        session_clock = bool(freshness) and spec is not None and spec.on_session_clock
        in_sessions = self.sessions = not problem and self.points_in_sessions(window_checks)
        sessions_problem = None
        if (not problem or session_clock) and self.needs_sessions(checks):
            run.progress("exchange sessions")
            self.source_span()
            try:
                sessions_problem = self.register_sessions(run.now if session_clock else None)
            except Exception as exc:  # an unavailable calendar is reported on the checks that need it
                sessions_problem = engine_message(exc)
        loaded = (not problem or session_clock) and self.needs_sessions(checks) and sessions_problem is None
        for check in freshness:
            if session_clock and sessions_problem:
                run.result(check, "error", message=sessions_problem)
            else:
                self.freshness(check, sessions_loaded=loaded)
        problem = problem or sessions_problem
        if problem:
            for check in window_checks:
                run.result(check, "error", message=problem)
            return
        if window_checks and self.cadence_rule is not None and self.cadence_rule.step is not None:
            run.progress("calendar cadence and completeness")
            CalendarChecks(self).execute(window_checks)
            return
        if window_checks:
            run.progress("cadence and completeness")
            self.build_points(in_sessions, keep_all=any(c.kind == "completeness" for c in checks))
            self.points_span()
            if self.span() is not None:
                self.build_units(in_sessions)
        for check in window_checks:
            getattr(self, check.kind)(check)

    def cadence(self, check: Check) -> None:
        """Points off the cadence within a session (or series), and the coverage's edge gaps: a missing
        opening or closing bar, a session (or period) without a point. For a session cadence, every
        covered session without a point stamped at it."""
        if self.span() is None:
            self.run.result(check, "passed")
            return
        interior = f"NOT __outside AND __gap_us > 0 AND abs(__gap_us - __i) > {self.tolerance_sql()}"
        failures = (
            f"SELECT __s, __t, __prev, NULL AS __g_end, __gap_us / 1e6, __i / 1e6, NULL AS __edge FROM {POINTS} "
            f"WHERE {interior} UNION ALL SELECT __s, __g_start, NULL, __g_end, NULL, __i / 1e6, __edge FROM {EDGES}"
        )
        if self.per_session:
            failures = f"SELECT __s, stamp, session_date FROM {EDGES}"
        (count,), rows = self.run.with_totals(["count(*)"], failures, "2, 3")
        if not count:
            self.run.result(check, "passed")
            return
        examples = []
        for r in rows:
            example: dict[str, Any] = {self.series_name: r[0], self.time_col: json_value(r[1])}
            if self.per_session:
                example.update({"session": r[2].isoformat(), "missing": "no point stamped at this session"})
            elif r[6] is None:  # a gap between two points
                example.update({"previous": json_value(r[2]), "gap_s": r[4], "expected_s": r[5]})
            else:  # a hole at the edge of a session or of --from/--to, or all of it
                example.update({"edge": r[6], "missing": [json_value(r[1]), json_value(r[3])], "expected_s": r[5]})
            examples.append(example)
        message = None
        if self.per_session:
            message = f"{count} session(s) without a point"
        self.run.result(check, "failed", int(count), examples, message)

    def session(self, check: Check) -> None:
        # revisions of a point share its instant: the point counts once (its first row, __d)
        (count,), rows = self.run.with_totals(
            ["sum(CASE WHEN __d THEN 1 ELSE 0 END)"],
            f"SELECT __s, __t, __cal, row_number() OVER (PARTITION BY __s, __t ORDER BY __row) = 1 AS __d "
            f"FROM {POINTS} WHERE __outside",
            "__s, __t",
        )
        cadence = check.params_of(CadencedParams).cadence
        if not count or not (cadence.outside_session_forbidden or cadence.per_session):
            self.run.result(check, "passed")
            return
        examples = [{self.series_name: r[0], self.time_col: json_value(r[1]), "calendar": r[2]} for r in rows]
        what = "stamped at no session of the venue" if cadence.per_session else "outside the venue's trading session"
        self.run.result(check, "failed", int(count), examples, f"points {what}")

    # ------------------------------------------------------------ completeness
    def register_windows(self, spec: Any) -> None:
        """``WINDOWS(__g, __w, __w_end)``, the completeness windows the coverage touches, and
        ``GROUPS(__s, __g)``, the window group of each series (its zone, its calendar, or all)."""
        run = self.run
        span = self.span()
        assert span is not None
        start, end = span
        window = spec.window
        amount = int(window.amount)
        columns = [("__g", "VARCHAR"), ("__w", "TIMESTAMPTZ"), ("__w_end", "TIMESTAMPTZ")]
        if window.on_trading_calendar:
            # groups of N consecutive sessions of the series' calendar, from the first covered session; a
            # window reaches from its first session's stamp (or open) to its last session's close
            run.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {WINDOWS} AS SELECT __g, min(least(open, stamp)) AS __w, "
                "max(greatest(close, stamp)) AS __w_end "
                f"FROM (SELECT calendar || '/' || kind AS __g, open, close, stamp, (row_number() OVER (PARTITION BY "
                f"calendar, kind ORDER BY open) - 1) // {amount} AS __k FROM {SESSION_ROWS} "
                f"WHERE greatest(close, stamp) > {instant_sql(start)} AND least(open, stamp) < {instant_sql(end)}) "
                "GROUP BY __g, __k"
            )
            run.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {GROUPS} AS SELECT __s, __cal || '/' || __kind AS __g FROM {SERIES}"
            )
        elif window.in_local_days or window.in_months:
            zones = self.series_zones()
            rows = []
            for zone in sorted(set(zones.values())):
                day = local_date(start, zone)
                origin = spec.origin
                if window.in_months:  # calendar months, quarters, years of the zone (from January, or aligned)
                    months = CalendarStep(window.months, "start", origin if isinstance(origin, int) else 0)
                    day = months.anchor_day(months.period_of(day))
                elif isinstance(origin, date):  # windows of N days from the date or weekday aligned to
                    day -= timedelta(days=(day - origin).days % amount)
                else:  # windows of N days from a fixed origin (day numbers since 0001-01-01 divisible by N)
                    day -= timedelta(days=day.toordinal() % amount)
                begin = local_midnight(day, zone)
                while begin < end:
                    day = add_months(day, window.months) if window.in_months else day + timedelta(days=amount)
                    after = local_midnight(day, zone)
                    rows.append((zone, begin, after))
                    begin = after
            small_table(run.con, WINDOWS, columns, rows)
            small_table(run.con, GROUPS, [("__s", "VARCHAR"), ("__g", "VARCHAR")], sorted(zones.items()))
        else:
            # windows of UTC time at multiples of their length from the origin: 00:00Z of Monday 2000-01-03, or
            # of the weekday or date ``aligned to`` names
            origin = datetime.combine(spec.origin or FIXED_ORIGIN, datetime.min.time(), UTC)
            width_us = int(window.seconds * 1_000_000)
            first = origin + timedelta(microseconds=(_epoch_us(start) - _epoch_us(origin)) // width_us * width_us)
            width = _us(str(width_us))
            run.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {WINDOWS} AS SELECT '*' AS __g, __w, __w + {width} AS __w_end "
                f"FROM (SELECT unnest(generate_series({instant_sql(first)}, "
                f"{instant_sql(end - timedelta(microseconds=1))}, {width})) AS __w)"
            )
            run.con.execute(f"CREATE OR REPLACE TEMP TABLE {GROUPS} AS SELECT __s, '*' AS __g FROM {SERIES}")

    def series_zones(self, table: str = SERIES) -> dict[str, str]:
        """Each series' zone for local days and months: the catalog's ``device_zone``, else the contract's
        ``time.zone``, else its venue's zone."""
        catalog = self.run.plan.catalog if self.run.catalog_joined else None
        zones: dict[str, str] = {}
        for series, calendar in self.run.fetch(f"SELECT __s, __cal FROM {table} ORDER BY 1"):
            entry = catalog.series.get(str(series)) if catalog is not None else None
            zone = entry.device_zone if entry is not None else None
            zone = zone or self.contract.time.zone
            if zone is None and calendar is not None:
                zone = calendars.zone(calendar, self.declared)
            if zone is None:
                raise ValueError(
                    f"series {series}: local days and months need a zone (catalog device_zone, time.zone, "
                    "or a venue calendar)"
                )
            zones[str(series)] = zone
        return zones

    def windows_sql(self) -> str:
        """Per (series, window) the coverage touches: ``__s, __i, __w, __w_end, __lo, __hi``, where
        ``[__lo, __hi)`` is the part of the window covered: the whole window unless --from/--to cut it, and
        never after --now (the window under way is judged up to now, a later one not at all)."""
        span = self.span()
        assert span is not None
        start, end = instant_sql(span[0]), instant_sql(span[1])
        lo = f"greatest(w.__w, {start})" if self.explicit else "w.__w"
        now = instant_sql(self.run.now)
        hi = f"least(w.__w_end, {end}, {now})" if self.explicit else f"least(w.__w_end, {now})"
        return (
            f"SELECT * FROM (SELECT s.__s, s.__i, w.__w, w.__w_end, {lo} AS __lo, {hi} AS __hi FROM {SERIES} s "
            f"JOIN {GROUPS} g ON g.__s = s.__s JOIN {WINDOWS} w ON w.__g = g.__g) WHERE __hi > __lo"
        )

    def expected_sql(self, spec: Any) -> str:
        """:meth:`windows_sql` with ``__expected``, the points expected in each window's covered part."""
        windows = self.windows_sql()
        length = "(epoch_us(__hi) - epoch_us(__lo))"
        if spec.expected_count != "per cadence":
            count = int(spec.expected_count)
            expected = f"CAST(floor({count} * {length} / (epoch_us(__w_end) - epoch_us(__w))) AS BIGINT)"
            return f"SELECT *, {expected} AS __expected FROM ({windows})"
        keys = "w.__s, w.__w, w.__w_end, w.__lo, w.__hi"
        if self.per_session:
            # one point per covered session whose stamp falls in the window
            return (
                f"SELECT {keys}, count(u.stamp) AS __expected FROM ({windows}) w LEFT JOIN {UNITS} u "
                f"ON u.__s = w.__s AND u.stamp >= w.__lo AND u.stamp < w.__hi GROUP BY {keys}"
            )
        if self.sessions_in_completeness:
            # grid points open + k * interval in [max(unit start, window start), min(unit end, window end))
            a = "epoch_us(greatest(u.__u_start, w.__lo)) - epoch_us(u.__open)"
            b = "epoch_us(least(u.__u_end, w.__hi)) - epoch_us(u.__open)"
            grid = f"(({b}) + w.__i - 1) // w.__i - (({a}) + w.__i - 1) // w.__i"
            return (
                f"SELECT {keys}, coalesce(sum({grid}), 0) AS __expected FROM ({windows}) w LEFT JOIN {UNITS} u "
                f"ON u.__s = w.__s AND u.__u_end > w.__lo AND u.__u_start < w.__hi GROUP BY {keys}"
            )
        return f"SELECT *, {length} // __i AS __expected FROM ({windows})"

    def completeness(self, check: Check) -> None:
        spec = check.params_of(CompletenessParams).completeness
        if self.span() is None:
            self.run.result(check, "passed")
            return
        if spec.expected_count == "per cadence" and self.interval_sql() == "NULL::BIGINT" and not self.per_session:
            self.run.result(check, "error", message="'per cadence' needs a fixed, catalog or session cadence")
            return
        try:
            self.register_windows(spec)
        except (ValueError, InputError) as exc:
            self.run.result(check, "error", message=str(exc))
            return
        self.run.con.execute(f"CREATE OR REPLACE TEMP TABLE __tsc_expected AS {self.expected_sql(spec)}")
        # a point finds its window by an equi-join on (series, bucket): each window listed once per bucket
        # of ``width`` it touches (one or two for windows of UTC time, days otherwise), not by a range join
        # against every window of its series. Distinct instants: revisions of an instant have a gap of 0
        window = spec.window
        width = DAY_US if window.on_trading_calendar or window.in_local_days else int(window.seconds * 1_000_000)
        buckets = (
            f"SELECT __s, __w, __lo, __hi, unnest(generate_series(epoch_us(__lo) // {width}, "
            f"(epoch_us(__hi) - 1) // {width})) AS __b FROM __tsc_expected WHERE __hi > __lo"
        )
        actual = (
            f"SELECT w.__s, w.__w, count(*) AS __actual FROM ({buckets}) w JOIN {POINTS} p ON p.__s = w.__s "
            f"AND epoch_us(p.__t) // {width} = w.__b AND p.__t >= w.__lo AND p.__t < w.__hi AND NOT p.__outside "
            "AND coalesce(p.__gap_us, 1) <> 0 GROUP BY w.__s, w.__w"
        )
        ratio = str(spec.min_ratio)
        self.run.con.execute(
            "CREATE OR REPLACE TEMP TABLE __tsc_short AS SELECT e.__s, e.__w, e.__w_end, e.__lo, e.__hi, "
            f"e.__expected, coalesce(a.__actual, 0) AS __actual FROM __tsc_expected e "
            f"LEFT JOIN ({actual}) a USING (__s, __w) WHERE coalesce(a.__actual, 0) < e.__expected * {ratio}"
        )
        (count,), rows = self.run.with_totals(
            ["count(*)"],
            "SELECT __s, __w, __w_end, __expected, __actual, __lo, __hi FROM __tsc_short",
            "__s, __w",
        )
        if not count:
            self.run.result(check, "passed")
            return
        examples = [self._window_example(r) for r in rows]
        self.run.result(
            check,
            "failed",
            int(count),
            examples,
            f"{count} window(s) of {spec.window.text} below {ratio} of the expected count",
        )

    def _window_example(self, row: tuple[Any, ...]) -> dict[str, Any]:
        series, start, end, expected, actual, lo, hi = row
        # gaps are [first missing instant, next point) intervals overlapping the window (up to --now), edges
        # included
        start_sql, end_sql = instant_sql(start), instant_sql(min(end, self.run.now))
        series_sql = sql_string(str(series))
        edges = f"SELECT __g_start, __g_end FROM {EDGES} WHERE __s = {series_sql}"
        if not self.sessions:
            # the window's own edges: its first point an interval or more after its start, its last more
            # than an interval before its end, or none at all
            inside = f"__s = {series_sql} AND __t >= {start_sql} AND __t < {end_sql}"
            edges = (
                f"SELECT {start_sql}, coalesce(min(__t), {end_sql}) FROM {POINTS} WHERE {inside} HAVING "
                f"min(__t) IS NULL OR epoch_us(min(__t)) - epoch_us({start_sql}) >= any_value(__i) "
                f"UNION ALL SELECT max(__t) + {_us('any_value(__i)')}, {end_sql} FROM {POINTS} WHERE {inside} "
                f"HAVING epoch_us({end_sql}) - epoch_us(max(__t)) > any_value(__i)"
            )
        # each gap clipped to the window (one across its boundary is listed in each window, its own part);
        # a window's own edge and the interior gap it cuts are the same hole: merged, listed once. Interior
        # gaps never overlap each other, so ``limit`` + 2 clipped intervals give ``limit`` merged ones
        clipped = self.run.fetch(
            f"SELECT greatest(a, {start_sql}), least(b, {end_sql}) FROM (SELECT __prev + {_us('__i')} AS a, "
            f"__t AS b FROM {POINTS} WHERE __s = {series_sql} AND NOT __outside "
            f"AND __gap_us > __i + {self.tolerance_sql()} UNION ALL {edges}) "
            f"WHERE b > {start_sql} AND a < {end_sql} ORDER BY 1, 2 LIMIT {self.limit + 2}"
        )
        gaps: list[list[Any]] = []
        for a, b in clipped:
            if gaps and a <= gaps[-1][1]:
                gaps[-1][1] = max(gaps[-1][1], b)
            else:
                gaps.append([a, b])
        return {
            self.series_name: series,
            "window_start": json_value(start),
            "window_end": json_value(end),
            "expected": int(expected),
            "actual": int(actual),
            "gaps": [[json_value(a), json_value(b)] for a, b in gaps[: self.limit]],
        } | counted_part(start, end, lo, hi)

    # ------------------------------------------------------------ freshness
    def freshness(self, check: Check, sessions_loaded: bool = False) -> None:
        judge_freshness(self, check, sessions_loaded)
