"""Calendar cadences (``1 month; anchored at month end``, ``1 quarter``, ``5 years``): cadence and completeness.

Each series has one expected point per period, at 00:00 of the period's anchor day in the series'
zone (:mod:`tscontract.contract.calendar_time`, the reference). The expected points the batch can
touch are listed per zone in a small table (``GRID``: zone, period number, instant), computed here
from the zone's rules; every engine then only joins points to it (an equality, or a range within
the cadence's tolerance) and compares period numbers, so no engine needs time zone rules or month
arithmetic of its own, and DuckDB, PostgreSQL, chdb and Spark mean the same thing.

* **Cadence.** A point at no expected point (within the tolerance) is off the calendar; between two
  consecutive points on the calendar, skipped periods are one gap, and a second point for the same
  period is a fault. With ``--from/--to`` the expected points in ``[from, min(to, now))`` before a
  series' first point and after its last are a hole at the coverage's start and end. A series is
  present when it has a point on the calendar.
* **Completeness.** Per window (``1 year``, ``1 quarter``, ``28d``...) the expected points in the part
  of the window covered (``[lo, hi)``: cut by ``--from/--to`` and ``--now``) against the periods with a
  point on the calendar there; a failing window lists the expected points that have none.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from tscontract.contract.calendar_time import CalendarStep, months_later
from tscontract.contract.clauses import Cadence
from tscontract.contract.durations import Duration
from tscontract.engines.base import Run
from tscontract.engines.relations import small_table
from tscontract.errors import InputError
from tscontract.plan.checks import Check
from tscontract.plan.params import CompletenessParams
from tscontract.sql.columns import ident, json_value, sql_string


class TimeChecks(Protocol):
    """What these checks use of the run's time checks (engines/run/time.py)."""

    run: Run
    cadence_rule: Cadence | None
    time_col: str
    series_name: str
    explicit: bool
    lo: datetime | None
    hi: datetime | None

    def calendar_sql(self) -> str: ...
    def kind_sql(self) -> str: ...
    def valid_sql(self) -> str: ...
    def plausible_sql(self, column: str) -> str: ...
    def series_zones(self, table: str = ...) -> dict[str, str]: ...
    def span(self) -> tuple[datetime, datetime] | None: ...
    def register_windows(self, spec: Any) -> None: ...
    def windows_sql(self) -> str: ...
    def expected_sql(self, spec: Any) -> str: ...


GRID = "__tsc_grid"  # per zone: period number and expected instant
ZONES = "__tsc_zones"  # per series: its zone
EXAMPLE_WINDOWS = "__tsc_example_windows"  # the failing windows reported as examples: their missing points
CPOINTS = "__tsc_cal_points"  # distinct instants per series, each with its period (NULL: off the calendar)


def instant_sql(moment: datetime) -> str:
    return f"CAST({sql_string(moment.astimezone(UTC).isoformat())} AS TIMESTAMPTZ)"


class CalendarChecks:
    """Cadence and completeness of a calendar cadence, on the run's connection."""

    def __init__(self, time: TimeChecks) -> None:
        self.time = time
        self.run = time.run
        cadence = time.cadence_rule
        assert cadence is not None and cadence.step is not None and cadence.interval is not None
        self.step: CalendarStep = cadence.step
        self.text = cadence.text
        self.tolerance_us = int(cadence.tolerance.seconds * 1_000_000) if cadence.tolerance else 0
        self.zones: dict[str, str] = {}

    # ------------------------------------------------------------ setup
    def build(self) -> None:
        """``CPOINTS`` and ``SERIES`` (series with a point on the calendar), with the zones and grid they need."""
        time, run = self.time, self.run
        series = ident(run.series) if run.series else "'*'"
        typed = ident(time.time_col)
        points = (
            f"SELECT CAST({series} AS VARCHAR) AS __s, {typed} AS __t, {time.calendar_sql()} AS __cal, "
            f"{time.kind_sql()} AS __kind FROM {run.typed_view} WHERE {time.valid_sql()}"
        )
        run.con.execute(
            "CREATE OR REPLACE TEMP TABLE __tsc_cal_series AS SELECT __s, any_value(__cal) AS __cal, "
            f"any_value(__kind) AS __kind, min(__t) AS __lo, max(__t) AS __hi FROM ({points}) GROUP BY __s"
        )
        self.zones = time.series_zones("__tsc_cal_series")
        small_table(run.con, ZONES, [("__s", "VARCHAR"), ("__z", "VARCHAR")], sorted(self.zones.items()))
        # the grid spans the batch's plausible instants (1970-2099: a stray year-9999 point widens nothing),
        # --from/--to and --now, clamped to the years the grid can hold
        found = run.fetch(f"SELECT min(__t), max(__t) FROM ({points}) WHERE {time.plausible_sql('__t')}")
        start, end = run.coverage or (None, None)
        low, high = datetime(1970, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)
        found_lo, found_hi = found[0] if found else (None, None)
        lows = [min(max(v, low), high) for v in (found_lo, start) if v is not None]
        highs = [min(max(v, low), high) for v in (found_hi, end, run.now) if v is not None]
        margin = timedelta(days=31 * self.step.months + 15) + self.window_reach()
        rows: list[tuple[Any, ...]] = []
        if lows and highs:
            for zone in sorted(set(self.zones.values())):
                grid = self.step.grid(zone, min(lows) - margin, max(highs) + margin)
                rows.extend((zone, k, at) for k, at in grid)
        small_table(run.con, GRID, [("__z", "VARCHAR"), ("__k", "BIGINT"), ("__at", "TIMESTAMPTZ")], rows)
        if self.tolerance_us:
            near = f"abs(epoch_us(g.__at) - epoch_us(p.__t)) <= {self.tolerance_us}"
        else:
            near = "g.__at = p.__t"
        # revisions of a point share its instant: one row per (series, instant); the lag runs over the
        # points on the calendar only
        distinct = (
            f"SELECT __s, __t, any_value(__cal) AS __cal, any_value(__kind) AS __kind FROM ({points}) GROUP BY __s, __t"
        )
        placed = (
            f"SELECT p.__s, p.__t, p.__cal, p.__kind, g.__k FROM ({distinct}) p JOIN {ZONES} z ON z.__s = p.__s "
            f"LEFT JOIN {GRID} g ON g.__z = z.__z AND {near}"
        )
        run.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {CPOINTS} AS SELECT *, "
            "CASE WHEN __k IS NOT NULL THEN lag(__t) OVER w END AS __prev, "
            "CASE WHEN __k IS NOT NULL THEN lag(__k) OVER w END AS __prev_k "
            f"FROM ({placed}) WINDOW w AS (PARTITION BY __s, __k IS NULL ORDER BY __t)"
        )
        run.con.execute(
            "CREATE OR REPLACE TEMP TABLE __tsc_series AS SELECT __s, NULL::BIGINT AS __i, any_value(__cal) AS __cal, "
            f"any_value(__kind) AS __kind FROM {CPOINTS} WHERE __k IS NOT NULL GROUP BY __s"
        )
        # the batch's span: its first and last points on the calendar (a point off it widens nothing)
        time.lo, time.hi = run.fetch(
            f"SELECT min(__t), max(__t) FROM {CPOINTS} WHERE __k IS NOT NULL AND {time.plausible_sql('__t')}"
        )[0]

    def window_reach(self) -> timedelta:
        """How far a completeness window reaches beyond the points: the grid covers every window touched."""
        completeness = self.run.contract.completeness
        if completeness is None:
            return timedelta(0)
        window = completeness.window
        if window.in_months:
            return timedelta(days=31 * window.months)
        if window.fixed:
            return window.timedelta
        return timedelta(days=int(window.amount) + 1)  # local days (trading days are refused)

    def execute(self, checks: list[Check]) -> None:
        try:
            self.build()
        except (ValueError, InputError) as exc:
            for check in checks:
                self.run.result(check, "error", message=str(exc))
            return
        for check in checks:
            if check.kind == "cadence":
                self.cadence(check)
            else:
                self.completeness(check)

    # ------------------------------------------------------------ cadence
    def edges_sql(self) -> str:
        """Holes at the coverage's edges (``--from/--to`` only): ``__s, __g_start, __g_end, __n, __edge``."""
        coverage = self.run.coverage or (None, None)
        if not self.time.explicit or coverage[0] is None or coverage[1] is None:
            return (
                "SELECT NULL::VARCHAR AS __s, NULL::TIMESTAMPTZ AS __g_start, NULL::TIMESTAMPTZ AS __g_end, "
                "0 AS __n, NULL::VARCHAR AS __edge WHERE FALSE"
            )
        lo, hi = instant_sql(coverage[0]), instant_sql(min(coverage[1], self.run.now))
        ends = (
            f"SELECT __s, min(__k) AS __k1, max(__k) AS __kn, min(__t) AS __t1, max(__t) AS __tn FROM {CPOINTS} "
            "WHERE __k IS NOT NULL GROUP BY __s"
        )
        expected = (
            f"SELECT e.__s, g.__k, g.__at FROM ({ends}) e JOIN {ZONES} z ON z.__s = e.__s "
            f"JOIN {GRID} g ON g.__z = z.__z WHERE g.__at >= {lo} AND g.__at < {hi}"
        )
        return (
            f"SELECT x.__s, min(x.__at) AS __g_start, min(e.__t1) AS __g_end, count(*) AS __n, 'coverage start' "
            f"AS __edge FROM ({expected}) x JOIN ({ends}) e ON e.__s = x.__s WHERE x.__k < e.__k1 GROUP BY x.__s "
            f"UNION ALL SELECT x.__s, min(x.__at), {hi}, count(*), 'coverage end' FROM ({expected}) x "
            f"JOIN ({ends}) e ON e.__s = x.__s WHERE x.__k > e.__kn GROUP BY x.__s"
        )

    def cadence(self, check: Check) -> None:
        faults = (
            f"SELECT __s, __t, __prev, __k - __prev_k AS __skip, NULL::TIMESTAMPTZ AS __g_end, "
            f"CASE WHEN __k IS NULL THEN 'off' WHEN __k = __prev_k THEN 'again' ELSE 'gap' END AS __what "
            f"FROM {CPOINTS} WHERE __k IS NULL OR __k - __prev_k <> 1 "
            f"UNION ALL SELECT __s, __g_start, NULL::TIMESTAMPTZ, __n, __g_end, __edge FROM ({self.edges_sql()})"
        )
        (count,), rows = self.run.with_totals(["count(*)"], faults, "2, 3")
        if not count:
            self.run.result(check, "passed")
            return
        name, column = self.time.series_name, self.time.time_col
        examples: list[dict[str, Any]] = []
        for series, at, previous, skip, gap_end, what in rows:
            example: dict[str, Any] = {name: series, column: json_value(at)}
            if what == "off":
                example["off_calendar"] = f"not at an expected point of {self.text} ({self.step.describe()})"
            elif what == "again":
                example.update({"previous": json_value(previous), "same_period": "a second point for one period"})
            elif what == "gap":
                example.update({"previous": json_value(previous), "missing_periods": int(skip) - 1})
            else:
                example.update(
                    {"edge": what, "missing": [json_value(at), json_value(gap_end)], "missing_periods": int(skip)}
                )
            examples.append(example)
        self.run.result(
            check, "failed", int(count), examples, f"{count} point(s) or gap(s) off the cadence {self.text}"
        )

    # ------------------------------------------------------------ completeness
    def completeness(self, check: Check) -> None:
        time, run = self.time, self.run
        spec = check.params_of(CompletenessParams).completeness
        if time.span() is None:
            run.result(check, "passed")
            return
        if spec.window.on_trading_calendar:
            run.result(
                check, "error", message="a calendar cadence is counted in windows of time or months, not sessions"
            )
            return
        try:
            time.register_windows(spec)
        except (ValueError, InputError) as exc:
            run.result(check, "error", message=str(exc))
            return
        keys = "w.__s, w.__w, w.__w_end, w.__lo, w.__hi"
        windows = time.windows_sql()
        if spec.expected_count == "per cadence":
            expected = (
                f"SELECT {keys}, count(g.__at) AS __expected FROM ({windows}) w JOIN {ZONES} z ON z.__s = w.__s "
                f"LEFT JOIN {GRID} g ON g.__z = z.__z AND g.__at >= w.__lo AND g.__at < w.__hi GROUP BY {keys}"
            )
        else:
            expected = time.expected_sql(spec)
        actual = (
            f"SELECT w.__s, w.__w, count(DISTINCT p.__k) AS __actual FROM ({expected}) w JOIN {CPOINTS} p "
            "ON p.__s = w.__s AND p.__t >= w.__lo AND p.__t < w.__hi AND p.__k IS NOT NULL GROUP BY w.__s, w.__w"
        )
        ratio = str(spec.min_ratio)
        short = (
            "SELECT e.__s, e.__w, e.__w_end, e.__lo, e.__hi, e.__expected, coalesce(a.__actual, 0) AS __actual "
            f"FROM ({expected}) e LEFT JOIN ({actual}) a ON a.__s = e.__s AND a.__w = e.__w "
            f"WHERE coalesce(a.__actual, 0) < e.__expected * {ratio}"
        )
        (count,), rows = run.with_totals(["count(*)"], short, "__s, __w")
        if not count:
            run.result(check, "passed")
            return
        missing = self._missing_points(rows)
        examples = [self._window_example(row, missing.get(n, [])) for n, row in enumerate(rows)]
        message = f"{count} window(s) of {spec.window.text} below {ratio} of the expected count"
        run.result(check, "failed", int(count), examples, message)

    def _missing_points(self, rows: list[tuple[Any, ...]]) -> dict[int, list[Any]]:
        """The first missing expected instants of each example window, in one statement for all of them (a
        statement per window was a Spark job each)."""
        run = self.run
        windows = [(n, str(row[0]), row[3], row[4]) for n, row in enumerate(rows)]
        columns = [("__n", "BIGINT"), ("__s", "VARCHAR"), ("__lo", "TIMESTAMPTZ"), ("__hi", "TIMESTAMPTZ")]
        small_table(run.con, EXAMPLE_WINDOWS, columns, windows)
        missing = (
            f"SELECT w.__n, g.__at, row_number() OVER (PARTITION BY w.__n ORDER BY g.__at) AS __i "
            f"FROM {EXAMPLE_WINDOWS} w JOIN {ZONES} z ON z.__s = w.__s JOIN {GRID} g ON g.__z = z.__z "
            f"AND g.__at >= w.__lo AND g.__at < w.__hi LEFT JOIN {CPOINTS} p ON p.__s = z.__s AND p.__k = g.__k "
            "WHERE p.__k IS NULL"
        )
        found: dict[int, list[Any]] = {}
        for n, at in run.fetch(f"SELECT __n, __at FROM ({missing}) m WHERE __i <= {run.limit} ORDER BY 1, 2"):
            found.setdefault(int(n), []).append(at)
        return found

    def _window_example(self, row: tuple[Any, ...], missing: list[Any]) -> dict[str, Any]:
        series, start, end, lo, hi, expected, actual = row
        example = {
            self.time.series_name: series,
            "window_start": json_value(start),
            "window_end": json_value(end),
            "expected": int(expected),
            "actual": int(actual),
            "missing": [json_value(at) for at in missing],
        }
        return example | counted_part(start, end, lo, hi)


def counted_part(start: datetime, end: datetime, lo: datetime, hi: datetime) -> dict[str, Any]:
    """``{"counted": [lo, hi]}`` for a window cut by --from/--to or --now: the part its expected count is of."""
    return {"counted": [json_value(lo), json_value(hi)]} if (lo, hi) != (start, end) else {}


def stale_by_months(time: TimeChecks, check: Check, max_age: Duration, newest: str) -> None:
    """``max_age: 2 months``: a series is stale once ``now`` reaches its newest point plus that many calendar
    months in its zone (the same wall-clock time and day, the month's last day where it has fewer: Jan 31
    + 1 month is Feb 28 or 29). ``newest`` is a table of ``__s, __newest, __cal`` (NULL: never arrived)."""
    run = time.run
    table = "__tsc_newest_cal"
    run.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT CAST(__s AS VARCHAR) AS __s, __cal FROM {newest}")
    try:
        zones = time.series_zones(table)
    except (ValueError, InputError) as exc:
        run.result(check, "error", message=str(exc))
        return
    stale = []
    for series, at in run.fetch(f"SELECT __s, __newest FROM {newest} ORDER BY 1"):
        due = None
        if at is not None:
            try:
                due = months_later(at, max_age.months, zones[str(series)])
            except (OverflowError, ValueError):  # a newest point near year 9999 is not stale before then
                continue
        if due is None or run.now > due:
            stale.append((series, at, due))
    if not stale:
        run.result(check, "passed")
        return
    examples = [
        {time.series_name: s, "newest": json_value(at), "stale_since": json_value(due), "max_age": max_age.text}
        for s, at, due in stale[: run.limit]
    ]
    never = sum(1 for _, at, _ in stale if at is None)
    arrived = f" ({never} never arrived)" if never else ""
    message = f"{len(stale)} series older than {max_age.text} at {run.now.isoformat()}{arrived}"
    run.result(check, "failed", len(stale), examples, message)
