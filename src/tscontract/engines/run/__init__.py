"""The validation run: a CheckPlan executed as SQL on one connection, in as few passes as the checks allow.

Passes over the data:

1. row checks in one scan (rows.py);
2. window checks: key uniqueness in one grouped pass (keys.py), steps per field (step.py), cadence and
   sessions in one pass over the distinct (series, time) points (time.py), which on DuckDB and Spark also judges
   the key where it can (:meth:`ValidationRun.key_in_time_pass`);
3. batch checks (batch.py): row count, SQL checks, scale against history;
4. failing examples, ``LIMIT n`` each, only for checks that failed.

Catalog attributes and the calibration in force are joined in SQL; nothing loops over rows in Python.
The statements are DuckDB's; the translated engines (PostgreSQL, chdb, Spark) run the same run on a
connection that rewrites them (engines/translated.py). ``HANDLERS`` names the pass that judges each
:class:`CheckKind`; ``tests/plan/test_kinds.py`` requires it to name every kind.
"""

from __future__ import annotations

from enum import StrEnum
from time import perf_counter

from tscontract.engines.base import TYPED_VIEW
from tscontract.engines.inputs.sources import SOURCE_VIEW
from tscontract.engines.run.batch import BatchChecks
from tscontract.engines.run.keys import KeyChecks
from tscontract.engines.run.rows import ROW_KINDS, SCHEMA_KINDS, RowChecks
from tscontract.engines.run.step import StepCheck, step_table
from tscontract.engines.run.time import POINTS, TimeChecks
from tscontract.plan.checks import Check
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import KeyParams
from tscontract.plan.result import ValidationReport
from tscontract.sql.columns import ident, sql_string


class Pass(StrEnum):
    ROWS = "rows"  # one scan of the typed view (rows.py)
    SCHEMA = "schema"  # the input's columns (rows.py)
    KEYS = "keys"  # grouped passes per key (keys.py)
    STEP = "step"  # neighbours in each series (step.py)
    TIME = "time"  # one pass over the distinct (series, instant) points (time.py)
    BATCH = "batch"  # the whole batch (batch.py)


TIME_KINDS = frozenset({CheckKind.CADENCE, CheckKind.SESSION, CheckKind.COMPLETENESS, CheckKind.FRESHNESS})

# kind -> the pass that judges its checks
HANDLERS: dict[CheckKind, Pass] = {
    **dict.fromkeys(ROW_KINDS, Pass.ROWS),
    **dict.fromkeys(SCHEMA_KINDS, Pass.SCHEMA),
    CheckKind.UNIQUE_KEY: Pass.KEYS,
    CheckKind.UNIQUE: Pass.KEYS,
    CheckKind.STEP: Pass.STEP,
    **dict.fromkeys(TIME_KINDS, Pass.TIME),
    CheckKind.ROW_COUNT: Pass.BATCH,
    CheckKind.SQL_CHECK: Pass.BATCH,
    CheckKind.SCALE_SHIFT: Pass.BATCH,
}


class ValidationRun(RowChecks, KeyChecks, BatchChecks):
    """One validation run: the passes of the module docstring, then a report with a verdict per check."""

    def run(self) -> ValidationReport:
        started = perf_counter()
        self.register_catalog()
        self.register_bounds()
        self.create_typed_view()
        self.row_checks()
        self.schema_checks()
        time_checks = [c for c in self.plan.checks if HANDLERS.get(c.kind) == Pass.TIME]
        in_points = self.key_in_time_pass() if time_checks else None
        for check in self.plan.checks:  # window checks, in the plan's order
            if HANDLERS.get(check.kind) in (Pass.KEYS, Pass.STEP) and (in_points is None or check is not in_points[0]):
                self.window_check(check)
        if time_checks:
            timed = TimeChecks(self, key=in_points[1] if in_points else None)
            timed.execute(time_checks)
            if in_points and timed.key_in_points:
                self.key_check_in_points(in_points[0], POINTS, self.key_in_points_columns(in_points[1]))
            elif in_points:  # the time pass built no points (an error, a calendar cadence): its own pass
                self.key_check(in_points[0])
        for check in self.plan.checks:
            if HANDLERS.get(check.kind) == Pass.BATCH:
                self.batch_check(check)
        for check in self.plan.checks:
            if check.id not in self.results:
                self.result(check, "error", message=f"no step of the {self.engine} engine ran this check")
        return self.report(started)

    def key_in_time_pass(self) -> tuple[Check, list[str]] | None:
        """The key check, and its columns besides series and time, when the time pass's window can judge it:
        on DuckDB and Spark, with input rows numbered, a key of series (if any), time and other columns, and every
        row with a time and series in that window (no time that breaks its type, the UTC rule or its
        precision, which the key check would still group). The window already sorts the points by
        series and instant; the key's own grouped pass over every row is then not needed (issue #29)."""
        time_col, series = self.contract.time.column, self.series
        checks = [c for c in self.plan.checks if c.kind == CheckKind.UNIQUE_KEY]
        if (
            self.engine not in ("duckdb", "spark")
            or not self.source.has_row_number
            or len(checks) != 1
            or self.missing(checks[0])
        ):
            return None
        policy = checks[0].params_of(KeyParams).duplicates
        key = self.contract.key
        if time_col not in key or (series and series not in key) or (policy is not None and policy.by is not None):
            return None
        if "calibration_id" in self.columns or not self.times_all_valid():
            return None  # the calibration's interval join may repeat a row of the typed view
        return checks[0], [k for k in key if k not in (time_col, series)]

    def times_all_valid(self) -> bool:
        """No row's time breaks its type, the UTC rule or its precision: each condition is absent or its
        row check passed."""
        col = self.columns[self.contract.time.column]
        kinds = {CheckKind.TYPE: col.type_fail, CheckKind.UTC_INSTANT: col.utc_fail}
        kinds[CheckKind.TIME_PRECISION] = col.precision_fail
        judged = [self.results[c.id] for c in self.plan.checks if col.name in c.columns and c.id in self.results]
        passed = {r.kind for r in judged if r.status == "passed" and not r.failed_rows}
        return all(condition is None or kind in passed for kind, condition in kinds.items())

    def key_in_points_columns(self, others: list[str]) -> list[str]:
        """Each key column's name in the time pass's points (engines/run/time.py)."""
        named = {self.contract.time.column: "__t", **({self.series: "__s"} if self.series else {})}
        named |= {column: f"__k{i}" for i, column in enumerate(others)}
        return [named[k] for k in self.contract.key]

    def window_check(self, check: Check) -> None:
        if check.kind == CheckKind.UNIQUE_KEY:
            self.key_check(check)
        elif check.kind == CheckKind.UNIQUE:
            self.unique_check(check)
        else:
            StepCheck(self, check).execute()

    def batch_check(self, check: Check) -> None:
        if check.kind == CheckKind.SCALE_SHIFT:
            self.scale_check(check)
        elif check.kind == CheckKind.ROW_COUNT:
            self.row_count_check(check)
        else:
            self.sql_check(check)

    def report(self, started: float) -> ValidationReport:
        ordered = [self.results[c.id] for c in self.plan.checks]
        if self.owns_connection:
            self.con.close()
        return ValidationReport(
            contract=self.contract.contract,
            version=self.contract.version,
            rows=self.rows,
            engine=self.engine,
            elapsed_s=perf_counter() - started,
            data=self.source.description,
            checks=ordered,
        )

    def materialize_failures(self, check_ids: list[str], table: str = "__tsc_row_fail") -> None:
        """``table(__row, check_id)``: every input row that fails each of ``check_ids``.

        For the ingest gate, after :meth:`run`: row checks re-evaluate their predicate, key
        uniqueness names every row of a duplicated key, sessions every point outside a session.
        """
        parts = ["SELECT NULL::BIGINT AS __row, NULL::VARCHAR AS check_id WHERE FALSE"]
        by_id = {c.id: c for c in self.plan.checks}
        for check_id in check_ids:
            check = by_id[check_id]
            label = sql_string(check_id)
            if check.scope == "row":
                sql = self.failure_sql(check)
                if sql is not None:
                    parts.append(f"SELECT __row, {label} FROM {TYPED_VIEW} WHERE {sql}")
            elif check.kind == "unique_key":
                typed = ", ".join(f"{self.columns[k].typed} AS {ident(k)}" for k in self.contract.key)
                keys = " AND ".join(f"d.{ident(k)} IS NOT DISTINCT FROM s.{ident(k)}" for k in self.contract.key)
                parts.append(
                    f"SELECT s.__row, {label} FROM (SELECT __row, {typed} FROM {SOURCE_VIEW}) s "
                    f"JOIN __tsc_dups d ON {keys}"
                )
            elif check.kind == "session":
                parts.append(f"SELECT __row, {label} FROM __tsc_points WHERE __outside")
            elif check.kind == "step" and check.id in self.results and self.results[check.id].status == "failed":
                parts.append(f"SELECT __row, {label} FROM {step_table(self, check)}")
            elif check.kind == "unique":
                value = self.columns[check.columns[0]].typed
                parts.append(
                    f"SELECT s.__row, {label} FROM (SELECT __row, {value} AS __u FROM {SOURCE_VIEW}) s "
                    f"JOIN {self.unique_table(check)} d ON d.__u = s.__u"
                )
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {' UNION ALL '.join(parts)}")
