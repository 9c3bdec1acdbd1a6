"""The embedded engine: a CheckPlan executed on DuckDB.

Passes over the data:

1. one fused aggregate scan: every row check is ``count(*) FILTER (WHERE ...)``;
2. window checks: key uniqueness in one grouped pass, cadence and sessions in one
   pass over the distinct (series, time) points;
3. failing examples, fetched only for checks that failed, ``LIMIT n`` each.

Catalog attributes and the calibration in force are joined in SQL; nothing
loops over rows in Python.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import duckdb
import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.model import Contract
from tscontract.engines import calendars
from tscontract.engines.columns import ColumnSQL, column_sql, ident, sql_string
from tscontract.engines.sources import SOURCE_VIEW, Source, open_source
from tscontract.plan.checks import Check, CheckPlan
from tscontract.report.model import CheckResult, ValidationReport

TYPED_VIEW = "__tsc_typed"
CATALOG_TABLE_SQL = "__tsc_catalog"
CALIBRATION_TABLE = "__tsc_calibrations"
SESSIONS_TABLE = "__tsc_sessions"

Progress = Callable[[str], None]


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value


class _Run:
    """State of one validation run on one connection."""

    def __init__(
        self, plan: CheckPlan, data: Any, now: datetime | None, examples: int, progress: Progress | None
    ) -> None:
        self.plan = plan
        self.contract: Contract = plan.contract
        self.now = now or datetime.now(UTC)
        self.limit = examples
        self.progress = progress or (lambda _msg: None)
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'")
        self.source: Source = open_source(self.con, data)
        self.results: dict[str, CheckResult] = {}
        self.columns: dict[str, ColumnSQL] = {
            name: column_sql(
                name,
                spec.type,
                self.source.columns.get(name),
                text=self.source.text,
                json=self.source.json_types,
            )
            for name, spec in self.contract.fields.items()
        }
        self.series = self.contract.series_column
        self.rows = 0

    # ------------------------------------------------------------------ helpers
    def result(
        self,
        check: Check,
        status: str,
        failed: int = 0,
        examples: list[dict[str, Any]] | None = None,
        message: str | None = None,
    ) -> None:
        self.results[check.id] = CheckResult(
            id=check.id,
            kind=check.kind,
            section=check.section,
            clause=check.clause,
            source=check.source,
            severity=check.severity,
            status=status,
            failed_rows=failed,  # type: ignore[arg-type]
            examples=examples or [],
            message=message,
        )

    def missing(self, check: Check) -> list[str]:
        return [c for c in check.columns if c in self.columns and not self.columns[c].present]

    def fetch(self, sql: str) -> list[tuple[Any, ...]]:
        return self.con.execute(sql).fetchall()

    # ------------------------------------------------------------------ setup
    def register_catalog(self) -> None:
        catalog = self.plan.catalog
        self.con.execute(
            f"CREATE TEMP TABLE {CATALOG_TABLE_SQL} (__cat_series_id VARCHAR, __cat_unit VARCHAR, "
            "__cat_dimension VARCHAR, __cat_hard_bounds_low DECIMAL(38,10), __cat_hard_bounds_high "
            "DECIMAL(38,10), __cat_plausibility_bounds_low DECIMAL(38,10), __cat_plausibility_bounds_high "
            "DECIMAL(38,10), __cat_cadence_us BIGINT, __cat_device_zone VARCHAR, __cat_venue VARCHAR, "
            "__cat_calendar VARCHAR, __cat_quote_currency VARCHAR)"
        )
        self.con.execute(
            f"CREATE TEMP TABLE {CALIBRATION_TABLE} (__cal_series VARCHAR, __cal_id VARCHAR, "
            "__cal_from TIMESTAMPTZ, __cal_to TIMESTAMPTZ)"
        )
        if catalog is None:
            return
        rows, calibrations = [], []
        for sid, entry in catalog.series.items():
            hard = entry.hard_bounds or (None, None)
            plausible = entry.plausibility_bounds or (None, None)
            cadence = int(entry.cadence.seconds * 1_000_000) if entry.cadence else None
            rows.append(
                (
                    sid,
                    entry.unit,
                    entry.dimension,
                    hard[0],
                    hard[1],
                    plausible[0],
                    plausible[1],
                    cadence,
                    entry.device_zone,
                    entry.venue,
                    entry.calendar or entry.venue,
                    entry.quote_currency,
                )
            )
            calibrations.extend((sid, c.id, c.valid_from, c.valid_to) for c in entry.calibrations)
        self.con.executemany(f"INSERT INTO {CATALOG_TABLE_SQL} VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        if calibrations:
            self.con.executemany(f"INSERT INTO {CALIBRATION_TABLE} VALUES (?,?,?,?)", calibrations)

    def create_typed_view(self, view: str = TYPED_VIEW, numbered: bool = False) -> None:
        """The typed view over the source; ``numbered`` numbers input rows (examples only).

        Row numbers are taken before any join reorders rows; numbering a file that has
        none costs a window over the whole input, so only the example pass asks for it.
        """
        time_col = self.contract.time.column
        source = SOURCE_VIEW
        if self.source.has_row_number:
            selects = ["s.__row AS __row"]
        elif numbered:
            source = f"(SELECT row_number() OVER () AS __row, * FROM {SOURCE_VIEW})"
            selects = ["s.__row AS __row"]
        else:
            selects = ["NULL::BIGINT AS __row"]
        for name, col in self.columns.items():
            selects.append(f"{col.typed} AS {ident(name)}")
            selects.append(f"CAST({col.raw} AS VARCHAR) AS {ident('__raw_' + name)}")
            selects.append(f"{col.is_null} AS {ident('__null_' + name)}")
            selects.append(f"{col.type_fail or 'FALSE'} AS {ident('__tf_' + name)}")
            selects.append(f"{col.type_reason or 'NULL'} AS {ident('__why_' + name)}")
            selects.append(f"{col.utc_fail or 'FALSE'} AS {ident('__utc_' + name)}")
            selects.append(f"{col.precision_fail or 'FALSE'} AS {ident('__prec_' + name)}")
        joins = ""
        if self.series and self.columns[self.series].present:
            series_sql = self.columns[self.series].typed
            selects.append("c.*")
            joins += f" LEFT JOIN {CATALOG_TABLE_SQL} c ON c.__cat_series_id = {series_sql}"
            if "calibration_id" in self.columns:
                ts = self.columns[time_col].typed
                selects.append("k.__cal_id AS __cal_id")
                joins += (
                    f" LEFT JOIN {CALIBRATION_TABLE} k ON k.__cal_series = {series_sql} AND "
                    f"k.__cal_from <= {ts} AND (k.__cal_to IS NULL OR {ts} < k.__cal_to)"
                )
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {', '.join(selects)} FROM {source} s{joins}")

    # ------------------------------------------------------------------ row checks
    def predicate_sql(self, predicate: exp.Expression) -> str:
        tree = predicate.copy()
        for column in list(tree.find_all(exp.Column)):
            if column.table == CATALOG_TABLE:
                column.replace(exp.column(f"__cat_{column.name}"))
        return tree.sql(dialect="duckdb")

    def failure_sql(self, check: Check) -> str | None:
        """The row condition that marks a violation of ``check``; None when it cannot run."""
        kind = check.kind
        if kind == "type":
            return ident("__tf_" + check.columns[0])
        if kind == "not_null":
            return ident("__null_" + check.columns[0])
        if kind in ("fixed_value", "invariant", "constraint"):
            if check.params.get("needs_catalog") and not self.catalog_joined:
                return None
            return f"NOT COALESCE(({self.predicate_sql(check.predicate)}), TRUE)"  # type: ignore[arg-type]
        if kind == "utc_instant":
            parts = [ident("__utc_" + c) for c in check.columns if self.columns[c].present]
            return " OR ".join(parts) if parts else "FALSE"
        if kind == "time_precision":
            parts = [ident("__prec_" + c) for c in check.columns if self.columns[c].present]
            return " OR ".join(parts) if parts else "FALSE"
        if kind == "catalog_series":
            return f"NOT {ident('__null_' + self.series)} AND __cat_series_id IS NULL" if self.series else None
        if kind == "calibration_in_force":
            return (
                "calibration_id IS NOT NULL AND __cat_series_id IS NOT NULL "
                "AND calibration_id IS DISTINCT FROM __cal_id"
            )
        if kind == "plausibility":
            return self.plausibility_sql(check)
        raise AssertionError(f"no row SQL for {kind}")  # pragma: no cover

    @property
    def catalog_joined(self) -> bool:
        return self.plan.catalog is not None and bool(self.series) and self.columns[self.series].present

    def row_checks(self) -> None:
        runnable: list[tuple[Check, str]] = []
        for check in self.plan.of_scope("row"):
            missing = self.missing(check)
            if missing:
                self.result(check, "error", message=f"column(s) {', '.join(missing)} missing; see schema.columns")
                continue
            if check.params.get("needs_catalog") and not self.catalog_joined:
                why = "no catalog given (--catalog)" if self.plan.catalog is None else "the series column is missing"
                self.result(check, "error", message=f"needs the series catalog: {why}")
                continue
            sql = self.failure_sql(check)
            if sql is None:
                self.result(check, "error", message="cannot run on this input")
                continue
            runnable.append((check, sql))
        counts = ", ".join(f"count(*) FILTER (WHERE {sql}) AS c{i}" for i, (_, sql) in enumerate(runnable))
        self.progress("row checks: one fused scan")
        row = self.con.execute(f"SELECT count(*){', ' + counts if counts else ''} FROM {TYPED_VIEW}").fetchone()
        assert row is not None
        self.rows = int(row[0])
        failed: list[tuple[Check, str, int]] = []
        for i, (check, sql) in enumerate(runnable):
            n = int(row[i + 1])
            if n:
                failed.append((check, sql, n))
            else:
                self.result(check, "passed")
        if failed:
            self.progress(f"examples for {len(failed)} failed row check(s)")
            examples = self.row_examples(failed)
            for check, _, n in failed:
                message = None
                if check.kind == "type" and self.columns[check.columns[0]].schema_problem:
                    message = self.columns[check.columns[0]].schema_problem
                self.result(check, "failed", n, examples.get(check.id, []), message)

    def example_columns(self, check: Check) -> list[str]:
        names = list(dict.fromkeys([*self.contract.key, *check.columns]))
        return [n for n in names if n in self.columns and self.columns[n].present]

    def row_examples(self, failed: list[tuple[Check, str, int]]) -> dict[str, list[dict[str, Any]]]:
        flags = ", ".join(f"({sql}) AS __f{i}" for i, (_, sql, _) in enumerate(failed))
        any_failed = " OR ".join(f"__f{i}" for i in range(len(failed)))
        self.create_typed_view("__tsc_typed_numbered", numbered=True)
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_failing AS SELECT * FROM (SELECT *, {flags} "
            f"FROM __tsc_typed_numbered) WHERE {any_failed}"
        )
        out: dict[str, list[dict[str, Any]]] = {}
        for i, (check, _, _) in enumerate(failed):
            names = self.example_columns(check)
            cols = ", ".join(ident("__raw_" + n) for n in names)
            reason = ""
            if check.kind == "type":
                reason = f", {ident('__why_' + check.columns[0])}"
            rows = self.fetch(
                f"SELECT __row{', ' + cols if cols else ''}{reason} FROM __tsc_failing WHERE __f{i} "
                f"ORDER BY __row LIMIT {self.limit}"
            )
            examples = []
            for r in rows:
                example: dict[str, Any] = {"row": r[0]}
                example.update({n: r[j + 1] for j, n in enumerate(names)})
                if reason:
                    example["reason"] = r[-1]
                examples.append(example)
            out[check.id] = examples
        return out

    # ------------------------------------------------------------------ schema
    def schema_checks(self) -> None:
        expected = set(self.contract.fields)
        present = set(self.source.columns)
        for check in self.plan.of_scope("schema"):
            if check.kind == "required_columns":
                missing = [c for c in self.contract.fields if c not in present]
                if missing:
                    self.result(
                        check,
                        "failed",
                        self.rows,
                        [{"missing": missing}],
                        f"missing column(s): {', '.join(missing)}",
                    )
                else:
                    self.result(check, "passed")
            else:
                unknown = sorted(present - expected)
                if unknown:
                    self.result(
                        check,
                        "failed",
                        self.rows,
                        [{"unknown": unknown}],
                        f"unknown column(s): {', '.join(unknown)}",
                    )
                else:
                    self.result(check, "passed")

    # ------------------------------------------------------------------ window checks
    def key_check(self, check: Check) -> None:
        missing = self.missing(check)
        if missing:
            self.result(check, "error", message=f"key column(s) {', '.join(missing)} missing")
            return
        keys = ", ".join(ident(k) for k in self.contract.key)
        self.progress("key uniqueness")
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_dups AS SELECT {keys}, count(*) AS n FROM {TYPED_VIEW} "
            f"GROUP BY ALL HAVING count(*) > 1"
        )
        total = self.fetch("SELECT coalesce(sum(n), 0), count(*) FROM __tsc_dups")[0]
        if not total[0]:
            self.result(check, "passed")
            return
        rows = self.fetch(f"SELECT * FROM __tsc_dups ORDER BY {keys} LIMIT {self.limit}")
        names = [*self.contract.key, "count"]
        examples = [{n: _json_value(v) for n, v in zip(names, r, strict=True)} for r in rows]
        self.result(check, "failed", int(total[0]), examples, f"{total[1]} key(s) appear more than once")

    def series_calendar_sql(self) -> str:
        time = self.contract.time
        default = time.calendar or (time.timezone.session_calendar if time.timezone else None)
        if self.catalog_joined:
            return f"coalesce(__cat_calendar, {sql_string(default) if default else 'NULL'})"
        return sql_string(default) if default else "NULL"

    def points_sql(self, with_calendar: bool) -> str:
        """Distinct (series, time) points with their interval; revisions share a point."""
        ts = ident(self.contract.time.column)
        series = ident(self.series) if self.series else "'*'"
        cadence = self.contract.time.cadence
        assert cadence is not None
        if cadence.source == "catalog":
            interval = "__cat_cadence_us"
        else:
            assert cadence.interval is not None
            interval = str(int(cadence.interval.seconds * 1_000_000))
        calendar = f", {self.series_calendar_sql()} AS __cal" if with_calendar else ""
        return (
            f"SELECT DISTINCT {series} AS __s, {ts} AS __t, {interval} AS __i{calendar} FROM {TYPED_VIEW} "
            f"WHERE {ts} IS NOT NULL AND NOT {ident('__utc_' + self.contract.time.column)} "
            f"AND NOT {ident('__tf_' + self.contract.time.column)} "
            f"AND NOT {ident('__prec_' + self.contract.time.column)}"
            + (f" AND {series} IS NOT NULL" if self.series else "")
        )

    def register_sessions(self) -> bool:
        bounds = self.fetch(
            f"SELECT min({ident(self.contract.time.column)}), max({ident(self.contract.time.column)}) FROM {TYPED_VIEW}"
        )[0]
        names = [
            r[0]
            for r in self.fetch(f"SELECT DISTINCT {self.series_calendar_sql()} FROM {TYPED_VIEW}")
            if r[0] is not None
        ]
        if bounds[0] is None or not names:
            return False
        table = calendars.sessions(names, bounds[0], bounds[1])
        self.con.register("__tsc_sessions_arrow", table)
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {SESSIONS_TABLE} AS SELECT * FROM __tsc_sessions_arrow")
        return True

    def cadence_checks(self, cadence_check: Check | None, session_check: Check | None) -> None:
        checks = [c for c in (cadence_check, session_check) if c is not None]
        time_col = self.contract.time.column
        if not self.columns[time_col].present or (self.series and not self.columns[self.series].present):
            for check in checks:
                self.result(check, "error", message="time or series column missing")
            return
        if any(c.params.get("needs_catalog") for c in checks) and not self.catalog_joined:
            for check in checks:
                self.result(check, "error", message="needs the series catalog (--catalog) for the cadence")
            return
        cadence = self.contract.time.cadence
        assert cadence is not None
        sessions = session_check is not None
        if sessions:
            self.progress("exchange sessions")
            try:
                has_sessions = self.register_sessions()
            except Exception as exc:
                for check in checks:
                    self.result(check, "error", message=str(exc))
                return
            if not has_sessions:
                for check in checks:
                    self.result(
                        check,
                        "error",
                        message="no exchange calendar known for the series "
                        "(catalog 'calendar' or 'venue', or time.calendar)",
                    )
                return
        self.progress("cadence")
        if sessions:
            located = (
                f"SELECT p.*, x.open AS __open, x.close AS __close FROM ({self.points_sql(True)}) p "
                f"ASOF LEFT JOIN {SESSIONS_TABLE} x ON p.__cal = x.calendar AND p.__t >= x.open"
            )
            flagged = f"SELECT *, (__open IS NULL OR __t >= __close) AS __outside FROM ({located})"
            partition = "__s, __open"
        else:
            flagged = f"SELECT *, FALSE AS __outside FROM ({self.points_sql(False)})"
            partition = "__s"
        if cadence.tolerance_ratio is not None:
            tolerance = f"__i * {cadence.tolerance_ratio}"
        elif cadence.tolerance is not None:
            tolerance = str(int(cadence.tolerance.seconds * 1_000_000))
        else:
            tolerance = "0"
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_points AS SELECT *, "
            f"epoch_us(__t) - epoch_us(lag(__t) OVER (PARTITION BY {partition} ORDER BY __t)) AS __gap_us, "
            f"lag(__t) OVER (PARTITION BY {partition} ORDER BY __t) AS __prev "
            f"FROM ({flagged}) WHERE NOT __outside "
            f"UNION ALL BY NAME SELECT *, NULL AS __gap_us, NULL AS __prev FROM ({flagged}) WHERE __outside"
        )
        series_name = self.series or "series"
        if cadence_check is not None:
            condition = f"NOT __outside AND __gap_us IS NOT NULL AND abs(__gap_us - __i) > {tolerance}"
            count = self.fetch(f"SELECT count(*) FROM __tsc_points WHERE {condition}")[0][0]
            if count:
                rows = self.fetch(
                    f"SELECT __s, __t, __prev, __gap_us / 1e6, __i / 1e6 FROM __tsc_points WHERE {condition} "
                    f"ORDER BY __s, __t LIMIT {self.limit}"
                )
                examples = [
                    {
                        series_name: r[0],
                        time_col: _json_value(r[1]),
                        "previous": _json_value(r[2]),
                        "gap_s": r[3],
                        "expected_s": r[4],
                    }
                    for r in rows
                ]
                self.result(cadence_check, "failed", int(count), examples)
            else:
                self.result(cadence_check, "passed")
        if session_check is not None:
            count = self.fetch("SELECT count(*) FROM __tsc_points WHERE __outside")[0][0]
            if count and session_check.params["cadence"].outside_session_forbidden:
                rows = self.fetch(
                    f"SELECT __s, __t, __cal FROM __tsc_points WHERE __outside ORDER BY __s, __t LIMIT {self.limit}"
                )
                examples = [{series_name: r[0], time_col: _json_value(r[1]), "calendar": r[2]} for r in rows]
                self.result(
                    session_check,
                    "failed",
                    int(count),
                    examples,
                    "points outside the venue's trading session",
                )
            else:
                self.result(session_check, "passed")

    # ------------------------------------------------------------------ batch checks
    def freshness_check(self, check: Check) -> None:
        freshness = check.params["freshness"]
        column = check.columns[0]
        if not self.columns[column].present:
            self.result(check, "error", message=f"column {column} missing")
            return
        max_age_us = int(freshness.max_age.seconds * 1_000_000)
        series = ident(self.series) if self.series else "'*'"
        now = sql_string(self.now.astimezone(UTC).isoformat())
        rows = self.fetch(
            f"SELECT {series}, max({ident(column)}), epoch_us(CAST({now} AS TIMESTAMPTZ)) - "
            f"epoch_us(max({ident(column)})) AS age FROM {TYPED_VIEW} GROUP BY 1 "
            f"HAVING age > {max_age_us} OR max({ident(column)}) IS NULL ORDER BY 1"
        )
        if not rows:
            self.result(check, "passed")
            return
        name = self.series or "series"
        examples = [
            {
                name: r[0],
                "newest": _json_value(r[1]),
                "age_s": None if r[2] is None else r[2] / 1e6,
                "max_age_s": max_age_us / 1e6,
            }
            for r in rows[: self.limit]
        ]
        self.result(
            check,
            "failed",
            len(rows),
            examples,
            f"{len(rows)} series older than {freshness.max_age.text} at {self.now.isoformat()}",
        )

    def plausibility_sql(self, check: Check) -> str:  # pragma: no cover - replaced when bounds land
        raise NotImplementedError

    # ------------------------------------------------------------------ run
    def run(self) -> ValidationReport:
        started = time.perf_counter()
        self.register_catalog()
        self.create_typed_view()
        self.row_checks()
        self.schema_checks()
        for check in self.plan.of_scope("window"):
            if check.kind == "unique_key":
                self.key_check(check)
        cadence = next((c for c in self.plan.checks if c.kind == "cadence"), None)
        session = next((c for c in self.plan.checks if c.kind == "session"), None)
        if cadence or session:
            self.cadence_checks(cadence, session)
        for check in self.plan.checks:
            if check.kind == "freshness":
                self.freshness_check(check)
        for check in self.plan.checks:
            if check.id not in self.results:
                self.result(check, "error", message="not implemented by the duckdb engine yet")
        ordered = [self.results[c.id] for c in self.plan.checks]
        self.con.close()
        return ValidationReport(
            contract=self.contract.contract,
            version=self.contract.version,
            rows=self.rows,
            engine="duckdb",
            elapsed_s=time.perf_counter() - started,
            data=self.source.description,
            checks=ordered,
        )


class DuckDBEngine:
    """Executes a :class:`CheckPlan` on an embedded DuckDB connection."""

    name = "duckdb"

    def run(
        self,
        plan: CheckPlan,
        data: Any,
        *,
        now: datetime | None = None,
        examples: int = 5,
        progress: Progress | None = None,
    ) -> ValidationReport:
        return _Run(plan, data, now, examples, progress).run()
