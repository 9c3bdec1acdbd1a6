"""The embedded engine: a CheckPlan executed on DuckDB.

Passes over the data:

1. row checks in one scan. Where input rows are numbered (Parquet, JSON lines, tables
   the gate stages), the scan keeps only the failing rows, with a flag per check and
   the text examples show; counts and examples are then read from that small table.
   Elsewhere (CSV, in-memory frames) one fused aggregate counts every check
   (``count(*) FILTER (WHERE ...)``) and a second scan numbers and keeps the failing
   rows only when something failed;
2. window checks: key uniqueness in one grouped pass, cadence and sessions in one
   pass over the distinct (series, time) points;
3. failing examples, ``LIMIT n`` each, only for checks that failed.

Catalog attributes and the calibration in force are joined in SQL; nothing
loops over rows in Python.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import duckdb
import sqlglot.dialects.duckdb  # noqa: F401 -- every predicate is written in it: loaded with the engine
import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.model import Contract
from tscontract.contract.sql_checks import bound_to
from tscontract.engines.base import TYPED_VIEW, Coverage, Progress
from tscontract.engines.duckdb_time import TimeChecks
from tscontract.engines.inputs.sources import MALFORMED, RECORD, SOURCE_VIEW, Source, open_source, reading_errors
from tscontract.engines.relations import CATALOG_TABLE_SQL, small_table
from tscontract.engines.sandbox import bounded, lock
from tscontract.engines.step import StepCheck, step_table
from tscontract.errors import InputError
from tscontract.plan.bounds import DEFAULT_MARGIN, DEFAULT_SCALE_FACTOR, Bounds, SeriesProfile
from tscontract.plan.checks import Check, CheckPlan, build_plan
from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.shown import engine_message
from tscontract.sql.columns import (
    ColumnSQL,
    column_sql,
    ident,
    json_value,
    sql_string,
    sql_type,
    with_conversion_reason,
)
from tscontract.sql.semantics import lowered

CALIBRATION_TABLE = "__tsc_calibrations"

# catalog attributes clauses can name (``catalog.<name>``), joined per series as ``__cat_<name>``
_CATALOG_COLUMNS = (
    ("unit", "VARCHAR"),
    ("dimension", "VARCHAR"),
    ("hard_bounds_low", "DECIMAL(38,10)"),
    ("hard_bounds_high", "DECIMAL(38,10)"),
    ("plausibility_bounds_low", "DECIMAL(38,10)"),
    ("plausibility_bounds_high", "DECIMAL(38,10)"),
    ("device_zone", "VARCHAR"),
    ("venue", "VARCHAR"),
    ("calendar", "VARCHAR"),
    ("session", "VARCHAR"),
    ("quote_currency", "VARCHAR"),
)


# DuckDB's own default is 80% of the machine's memory: a validation would take whatever is there.
# Bounded instead, with a private spill directory: 50M bench rows peak near 1.1 GiB, not 4.4 GiB.
DEFAULT_MEMORY_LIMIT = "1GiB"
MEMORY_LIMIT_ENV = "TSCONTRACT_MEMORY_LIMIT"
_spill_dirs: list[str] = []


def memory_limit() -> str:
    """The memory DuckDB may use (``--memory-limit``, ``TSCONTRACT_MEMORY_LIMIT``, else 1 GiB)."""
    import os

    return os.environ.get(MEMORY_LIMIT_ENV, "").strip() or DEFAULT_MEMORY_LIMIT


def _spill_directory() -> str:
    """A directory of this process for DuckDB's spilled data (not ``./.tmp``), removed at exit."""
    if not _spill_dirs:
        import atexit
        import shutil
        import tempfile

        path = tempfile.mkdtemp(prefix="tscontract-spill-")
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        _spill_dirs.append(path)
    return _spill_dirs[0]


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection set up the way every check expects (UTC, quiet, bounded memory).

    Sorts, aggregates and temporary tables beyond the memory limit spill to a private
    temporary directory; an operation that cannot spill fails with a one-line
    :class:`InputError` naming the limit (see :func:`out_of_memory`).
    """
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    limit = memory_limit()
    try:
        con.execute(f"SET memory_limit = {sql_string(limit)}")
    except duckdb.Error:
        con.close()
        raise InputError(
            f"memory limit {limit!r}: give a size such as 512MB, 2GiB or 80% (--memory-limit, {MEMORY_LIMIT_ENV})"
        ) from None
    con.execute(f"SET temp_directory = {sql_string(_spill_directory())}")
    return con


def out_of_memory(exc: BaseException) -> InputError:
    """DuckDB's out-of-memory error as one line naming the limit and how to raise it."""
    first = engine_message(exc)
    return InputError(
        f"DuckDB needs more memory than the limit of {memory_limit()} ({first}); "
        f"raise it with --memory-limit or {MEMORY_LIMIT_ENV}"
    )


# types whose examples show the typed value (JSON numbers, booleans, RFC 3339 instants, exact decimal text)
_TYPED_EXAMPLE = ("int", "float", "decimal", "bool", "timestamp", "date")


class ValidationRun:
    """State of one validation run on one connection.

    With ``con`` the run uses a caller's connection and leaves its temporary
    tables there (the ingest gate reads the typed view and the failing rows);
    ``data`` may then be a :class:`Source` already registered on it.
    """

    def __init__(
        self,
        plan: CheckPlan,
        data: Any,
        now: datetime | None,
        examples: int,
        progress: Progress | None,
        con: duckdb.DuckDBPyConnection | None = None,
        engine: str = "duckdb",
        coverage: Coverage | None = None,
    ) -> None:
        self.plan = plan
        self.coverage = coverage  # --from/--to: the period the batch covers at least
        self.contract: Contract = plan.contract
        self.now = now or datetime.now(UTC)
        self.limit = examples
        self.progress = progress or (lambda _msg: None)
        self.owns_connection = con is None
        self.con = con or connect()
        self.source: Source = data if isinstance(data, Source) else open_source(self.con, data)
        lock(self.con, self.source.paths)  # before any SQL of the contract runs (engines/sandbox.py)
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
        # a batch converted by a mapping (engines/inputs/staging.py) says why a value did not convert
        for name in getattr(self.source, "conversion_reasons", ()):
            self.columns[name] = with_conversion_reason(self.columns[name])
        self.series = self.contract.series_column
        self.typed_view = TYPED_VIEW
        self.rows = 0
        self.engine = engine  # the name the report gives

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
            failed_rows=failed,
            examples=examples or [],
            message=message,
        )

    def judged(self, check: Check, failed: int, examples: list[dict[str, Any]], message: str | None = None) -> None:
        """A check ``failed`` rows fail: failed, unless its ``max_failing`` share of the batch tolerates them.

        Either way the report keeps the failing rows' count, examples and share of the batch."""
        share = check.params.get("max_failing")
        if share is None:
            self.result(check, "failed", failed, examples, message)
            return
        ratio = Decimal(failed) / Decimal(self.rows) if self.rows else Decimal(1)
        tolerated = ratio <= share.ratio
        said = f"{failed} of {self.rows} rows ({float(ratio) * 100:.4g}%) fail; at most {share.text} may"
        status = "passed" if tolerated else "failed"
        self.result(check, status, failed, examples, f"{message}; {said}" if message else said)

    def missing(self, check: Check) -> list[str]:
        return [c for c in check.columns if c in self.columns and not self.columns[c].present]

    def fetch(self, sql: str) -> list[tuple[Any, ...]]:
        return self.con.execute(sql).fetchall()

    def untrusted(self, sql: str) -> list[tuple[Any, ...]]:
        """A contract's own query: on DuckDB the connection is locked and the query interrupted after
        the timeout (engines/sandbox.py); another engine's connection confines it in its own way
        (PostgreSQL: read-only, with a timeout)."""
        confine = getattr(self.con, "untrusted", None)
        if confine is not None:
            return confine(sql)
        return bounded(self.con, sql) if isinstance(self.con, duckdb.DuckDBPyConnection) else self.fetch(sql)

    # ------------------------------------------------------------------ setup
    def register_catalog(self) -> None:
        catalog = self.plan.catalog
        rows: list[tuple[Any, ...]] = []
        calibrations: list[tuple[Any, ...]] = []
        for sid, entry in (catalog.series if catalog is not None else {}).items():
            cadence = int(entry.cadence.seconds * 1_000_000) if entry.cadence else None
            rows.append((sid, *(entry.value_of(name) for name, _ in _CATALOG_COLUMNS), cadence))
            calibrations.extend((sid, c.id, c.valid_from, c.valid_to) for c in entry.calibrations)
        columns = [(f"__cat_{name}", sql) for name, sql in _CATALOG_COLUMNS]
        small_table(
            self.con,
            CATALOG_TABLE_SQL,
            [("__cat_series_id", "VARCHAR"), *columns, ("__cat_cadence_us", "BIGINT")],
            rows,
        )
        small_table(
            self.con,
            CALIBRATION_TABLE,
            [
                ("__cal_series", "VARCHAR"),
                ("__cal_id", "VARCHAR"),
                ("__cal_from", "TIMESTAMPTZ"),
                ("__cal_to", "TIMESTAMPTZ"),
            ],
            calibrations,
        )

    def register_bounds(self) -> None:
        bounds = self.plan.bounds
        if bounds is None:
            return
        names = list(bounds.fields)
        series_ids = sorted({sid for per_series in bounds.fields.values() for sid in per_series})
        rows = []
        for sid in series_ids:
            row: list[Any] = [sid]
            for name in names:
                profile = bounds.fields[name].get(sid)
                low, high = profile.limits(bounds.margin) if profile else (None, None)
                row.extend([low, high, profile.median_abs if profile else None])
            rows.append(tuple(row))
        columns = [(f"__b_{n}_{part}", "DECIMAL(38,10)") for n in names for part in ("low", "high", "mabs")]
        small_table(self.con, "__tsc_bounds", [("__b_series", "VARCHAR"), *columns], rows)

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
        if self.source.malformed:  # why a row is malformed, and its text (engines/inputs/sources.py)
            selects += [f"s.{MALFORMED} AS {MALFORMED}", f"s.{RECORD} AS {RECORD}"]
        joins = ""
        if self.series and self.columns[self.series].present:
            series_sql = self.columns[self.series].typed
            selects.append("c.*")
            joins += f" LEFT JOIN {CATALOG_TABLE_SQL} c ON c.__cat_series_id = {series_sql}"
            if self.plan.bounds is not None:
                selects.extend(
                    f"b.{ident(f'__b_{n}_{part}')}" for n in self.plan.bounds.fields for part in ("low", "high", "mabs")
                )
                joins += f" LEFT JOIN __tsc_bounds b ON b.__b_series = {series_sql}"
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
        """The clause as DuckDB SQL that means what the reference says (:mod:`tscontract.sql.semantics`)."""
        tree = lowered(predicate, {name: spec.type for name, spec in self.contract.fields.items()})
        for column in list(tree.find_all(exp.Column)):
            if column.table == CATALOG_TABLE:
                column.replace(exp.column(f"__cat_{column.name}"))
        return tree.sql(dialect="duckdb")

    def failure_sql(self, check: Check) -> str | None:
        """The row condition that marks a violation of ``check``; None when it cannot run.

        A malformed input row fails ``source.rows`` and nothing else: its values are unknown (NULL).
        """
        if check.kind == "well_formed":
            return f"{MALFORMED} IS NOT NULL" if self.source.malformed else "FALSE"
        sql = self.clause_failure_sql(check)
        return f"({sql}) AND {MALFORMED} IS NULL" if sql is not None and self.source.malformed else sql

    def clause_failure_sql(self, check: Check) -> str | None:
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
        if kind == "series_pattern":  # the whole id matches (a series scheme), as re.fullmatch
            column = self.columns[check.columns[0]].typed
            return f"NOT regexp_full_match({column}, {sql_string(check.params['pattern'])})"
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
        if self.source.has_row_number:
            # Rows are numbered already, so one scan does it all: it keeps the failing rows (few, as a
            # rule) with a flag per check, and the counts are read from that small table.
            self.progress("row checks: one scan keeping the failing rows")
            self.keep_failing(runnable, TYPED_VIEW)
            self.rows, *counts = self.failing_counts(runnable)
            failed = [(check, i, n) for i, ((check, _), n) in enumerate(zip(runnable, counts, strict=True))]
        else:
            # Numbering rows costs a window over the whole input: count first, number only on failure.
            self.progress("row checks: one fused scan")
            sums = "".join(f", count(*) FILTER (WHERE {sql})" for _, sql in runnable)
            row = self.fetch(f"SELECT count(*){sums} FROM {TYPED_VIEW}")[0]
            self.rows = int(row[0])
            counted = [(check, sql, int(n)) for (check, sql), n in zip(runnable, row[1:], strict=True)]
            failing = [(check, sql) for check, sql, n in counted if n]
            if failing:
                self.progress(f"examples for {len(failing)} failed row check(s)")
                self.create_typed_view("__tsc_typed_numbered", numbered=True)
                self.keep_failing(failing, "__tsc_typed_numbered")
            flag = {check.id: i for i, (check, _) in enumerate(failing)}
            failed = [(check, flag.get(check.id, -1), n) for check, _, n in counted]
        examples = self.row_examples([(check, i) for check, i, n in failed if n and i >= 0])
        for check, i, n in failed:
            if not n:
                self.result(check, "passed")
                continue
            message = None
            if check.kind == "type" and self.columns[check.columns[0]].schema_problem:
                message = self.columns[check.columns[0]].schema_problem
            self.judged(check, n, examples.get(i, []), message)

    def keep_failing(self, checks: list[tuple[Check, str]], view: str) -> None:
        """``__tsc_failing``: the rows of ``view`` failing any of ``checks``, a flag ``__f<i>`` per check.

        With the raw text of every present column and the type-failure reasons, all that
        examples show, so they are read from this table alone.
        """
        flags = [f"({sql}) AS __f{i}" for i, (_, sql) in enumerate(checks)]
        shown = self.failing_shown()
        any_failed = " OR ".join(f"({sql})" for _, sql in checks) or "FALSE"
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_failing AS SELECT {', '.join(['__row', *flags, *shown])} "
            f"FROM {view} WHERE {any_failed}"
        )

    def failing_shown(self) -> list[str]:
        """The columns of ``__tsc_failing`` examples show: raw text and type-failure reason of each present column."""
        present = [n for n, col in self.columns.items() if col.present]
        shown = [ident("__raw_" + n) for n in present] + [ident("__why_" + n) for n in present]
        shown += [ident(n) for n in present if self.columns[n].dtype.kind in _TYPED_EXAMPLE]
        return [*shown, MALFORMED, RECORD] if self.source.malformed else shown

    def failing_counts(self, checks: list[tuple[Check, str]]) -> list[int]:
        """The input's rows, then the failing rows of each check: one statement."""
        rows = f"SELECT count(*) FROM {SOURCE_VIEW}"
        if not checks:
            return [int(self.fetch(rows)[0][0])]
        sums = ", ".join(f"count(*) FILTER (WHERE __f{i})" for i in range(len(checks)))
        return [int(v) for v in self.fetch(f"SELECT ({rows}), * FROM (SELECT {sums} FROM __tsc_failing)")[0]]

    def example_columns(self, check: Check) -> list[str]:
        names = list(dict.fromkeys([*self.contract.key, *check.columns]))
        return [n for n in names if n in self.columns and self.columns[n].present]

    def row_examples(self, failed: list[tuple[Check, int]]) -> dict[int, list[dict[str, Any]]]:
        """The first failing rows of each failed check (flag ``__f<i>`` of ``__tsc_failing``), by flag.

        One statement for all of them, a ``LIMIT n`` subquery per check (a Spark job or a
        server round trip each would cost more than the rows they read).
        """
        if not failed:
            return {}
        shown = self.failing_shown()
        parts = [
            f"SELECT * FROM (SELECT {flag} AS __k, __row, {', '.join(shown)} FROM __tsc_failing WHERE __f{flag} "
            f"ORDER BY __row LIMIT {self.limit}) AS __e{flag}"
            for _, flag in failed
        ]
        rows = self.fetch(f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS __e ORDER BY __k, __row")
        at = {name: j + 2 for j, name in enumerate(shown)}  # after __k and __row
        by_flag: dict[int, list[tuple[Any, ...]]] = {}
        for r in rows:
            by_flag.setdefault(r[0], []).append(r)
        return {flag: [self.row_example(check, r, at) for r in by_flag.get(flag, [])] for check, flag in failed}

    def row_example(self, check: Check, r: tuple[Any, ...], at: dict[str, int]) -> dict[str, Any]:
        """One failing row as an example: its number, the key's and the check's columns as written."""
        if check.kind == "well_formed":  # a malformed row: why, and its text as written (cut as every value is)
            return {"row": r[1], "reason": r[at[MALFORMED]], "text": r[at[RECORD]]}
        example: dict[str, Any] = {"row": r[1]}
        # values in the contract's type (as key examples show them), except where how it is written is the
        # fault (type, UTC rule, precision) or it has none: then the text as written
        as_written = check.columns if check.kind in ("type", "utc_instant", "time_precision") else []
        for n in self.example_columns(check):
            typed = r[at[ident(n)]] if ident(n) in at and n not in as_written else None
            example[n] = r[at[ident("__raw_" + n)]] if typed is None else json_value(typed)
        if check.kind == "type":
            example["reason"] = r[at[ident("__why_" + check.columns[0])]]
        return example

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
        typed = [self.columns[k].typed for k in self.contract.key]
        typed_keys = ", ".join(f"{sql} AS {ident(k)}" for sql, k in zip(typed, self.contract.key, strict=True))
        key_hash = f"hash({', '.join(typed)})"
        self.progress("key uniqueness")
        # Straight from the source (the typed view's catalog joins are not needed to group keys), in two
        # steps: group one 64-bit hash per row, which is much cheaper than grouping the key's columns, then
        # group the exact keys of the rows whose hash repeats -- duplicates and the rare collisions only.
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_dup_hashes AS SELECT {key_hash} AS h FROM {SOURCE_VIEW} "
            "GROUP BY 1 HAVING count(*) > 1"
        )
        # a row with a null key part fails its nullability (or type) check; it duplicates nothing (judged
        # on the grouped keys of repeated hashes, so no row's key is computed twice)
        complete = " AND ".join(f"{ident(k)} IS NOT NULL" for k in self.contract.key)
        candidates = self.fetch("SELECT count(*) FROM __tsc_dup_hashes")[0][0]
        where = f"WHERE {key_hash} IN (SELECT h FROM __tsc_dup_hashes)" if candidates else "WHERE FALSE"
        # duplicates: keep first|last by <column>: copies it orders (none null, no tie) resolve, one is kept
        policy = check.params.get("duplicates")
        by = self.columns[policy.by] if policy is not None else None
        unresolved = f" AND count(DISTINCT {by.typed}) < count(*)" if by is not None and by.present else ""
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_dups AS SELECT * FROM (SELECT {typed_keys}, count(*) AS n "
            f"FROM {SOURCE_VIEW} {where} GROUP BY ALL HAVING count(*) > 1{unresolved}) WHERE {complete}"
        )
        rows, total, repeated = self.shown_with_totals("__tsc_dups", keys)
        if not total:
            self.result(check, "passed")
            return
        names = [*self.contract.key, "count"]
        found = self.duplicate_rows(typed_keys, key_hash, keys)
        examples = [
            {"rows": found.get(tuple(r[:-1]), [])} | {n: json_value(v) for n, v in zip(names, r, strict=True)}
            for r in rows
        ]
        self.result(check, "failed", total, examples, f"{repeated} key(s) appear more than once")

    def with_totals(self, totals: list[str], rows: str, order: str) -> tuple[list[int], list[tuple[Any, ...]]]:
        """The first rows of the query ``rows`` by ``order`` and, in the same statement, the scalar queries
        ``totals`` over the same rows (one round trip, a Spark job less each): no rows, every total 0.

        ``order`` names columns of ``rows``, or gives their positions after the totals."""
        heads = ", ".join(f"({sql}) AS __total{i}" for i, sql in enumerate(totals))
        # one row at least, whatever the examples asked: it carries the totals
        found = self.fetch(f"SELECT {heads}, * FROM ({rows}) AS __r ORDER BY {order} LIMIT {max(self.limit, 1)}")
        if not found:
            return [0] * len(totals), []
        return [int(v) for v in found[0][: len(totals)]], [r[len(totals) :] for r in found[: self.limit]]

    def shown_with_totals(self, table: str, order: str) -> tuple[list[tuple[Any, ...]], int, int]:
        """The first rows of ``table`` (repeated values with their count ``n``) by ``order``, the rows
        they account for (``sum(n)``) and how many there are."""
        (total, repeated), rows = self.with_totals(
            [f"SELECT coalesce(sum(n), 0) FROM {table}", f"SELECT count(*) FROM {table}"],
            f"SELECT * FROM {table}",
            order,
        )
        return rows, total, repeated

    def duplicate_rows(self, typed_keys: str, key_hash: str, keys: str) -> dict[tuple[Any, ...], list[int]]:
        """The input rows (first few, by row number) of each repeated key shown as an example."""
        per_key = 5
        numbered = (
            SOURCE_VIEW
            if self.source.has_row_number
            else f"(SELECT row_number() OVER () AS __row, * FROM {SOURCE_VIEW})"
        )
        shown = f"(SELECT * FROM __tsc_dups ORDER BY {keys} LIMIT {self.limit})"
        found: dict[tuple[Any, ...], list[int]] = {}
        for r in self.fetch(
            f"SELECT * FROM (SELECT {keys}, __row, row_number() OVER (PARTITION BY {keys} ORDER BY __row) AS __k "
            f"FROM (SELECT __row, {typed_keys} FROM {numbered} WHERE {key_hash} IN (SELECT h FROM __tsc_dup_hashes)) "
            f"s JOIN {shown} d USING ({keys})) WHERE __k <= {per_key} ORDER BY {keys}, __row"
        ):
            found.setdefault(tuple(r[:-2]), []).append(int(r[-2]))
        return found

    def unique_table(self, check: Check) -> str:
        return f"__tsc_uniq_{list(self.contract.fields).index(check.columns[0])}"

    def unique_check(self, check: Check) -> None:
        """``unique: true`` on a column: no value (nulls aside) on two rows; examples name the rows."""
        name = check.columns[0]
        if self.missing(check):
            self.result(check, "error", message=f"column {name} missing; see schema.columns")
            return
        self.progress(f"unique values of {name}")
        table = self.unique_table(check)
        value = self.columns[name].typed
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT __u, count(*) AS n FROM "
            f"(SELECT {value} AS __u FROM {SOURCE_VIEW}) s WHERE __u IS NOT NULL GROUP BY __u HAVING count(*) > 1"
        )
        shown, total, repeated = self.shown_with_totals(table, "__u")
        if not total:
            self.result(check, "passed")
            return
        numbered = (
            SOURCE_VIEW
            if self.source.has_row_number
            else f"(SELECT row_number() OVER () AS __row, * FROM {SOURCE_VIEW})"
        )
        rows: dict[Any, list[int]] = {}
        for r in self.fetch(
            f"SELECT __u, __row FROM (SELECT s.__u, s.__row, row_number() OVER (PARTITION BY s.__u ORDER BY s.__row) "
            f"AS __k FROM (SELECT __row, {value} AS __u FROM {numbered}) s JOIN "
            f"(SELECT __u FROM {table} ORDER BY __u LIMIT {self.limit}) d ON d.__u = s.__u) WHERE __k <= 5 "
            "ORDER BY __u, __row"
        ):
            rows.setdefault(r[0], []).append(int(r[1]))
        examples = [{"rows": rows.get(v, []), name: json_value(v), "count": int(n)} for v, n in shown]
        self.judged(check, total, examples, f"{repeated} value(s) of {name} appear more than once")

    # ------------------------------------------------------------------ batch checks
    def row_count_check(self, check: Check) -> None:
        bounds = self.contract.row_count
        assert bounds is not None
        low = bounds.min if bounds.min is not None else 0
        if low <= self.rows and (bounds.max is None or self.rows <= bounds.max):
            self.result(check, "passed")
            return
        limit = f"at least {bounds.min}" if self.rows < low else f"at most {bounds.max}"
        self.result(check, "failed", 0, [{"rows": self.rows}], f"the batch has {self.rows} rows; {limit} expected")

    def sql_check(self, check: Check) -> None:
        """The contract's query over the typed view; its one value must meet the check's expectation."""
        rule = check.params["rule"]
        self.progress(f"SQL check {rule.name}")
        try:
            found = self.untrusted(bound_to(check.params["query"], TYPED_VIEW))
        except InputError:
            raise
        except Exception as exc:  # the engine refused the query (unknown column, type): the check cannot run
            first = engine_message(exc)
            self.result(check, "error", message=f"the query failed: {first}")
            return
        if len(found) != 1 or len(found[0]) != 1:
            self.result(check, "error", message=f"the query returned {len(found)} row(s); it must return one value")
            return
        value = found[0][0]
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            self.result(check, "error", message=f"the query returned {value!r}, not a number")
            return
        number = Decimal(str(value))
        if rule.holds(number):
            self.result(check, "passed", examples=[{"value": json_value(value)}])
            return
        message = f"the query returned {json_value(value)}; {rule.expectation()}"
        self.result(check, "failed", 0, [{"value": json_value(value)}], message)

    def plausibility_sql(self, check: Check) -> str:
        name = check.params["field"]
        return f"{ident(name)} NOT BETWEEN {ident(f'__b_{name}_low')} AND {ident(f'__b_{name}_high')}"

    def scale_check(self, check: Check) -> None:
        """Typical magnitude per series against history: a unit switch moves it by orders of magnitude.

        The typical magnitude is the discrete median of ``abs(value)``, as in ``profile``: a value the
        series really took, in the field's own type.
        """
        name = check.params["field"]
        if not self.columns[name].present or not self.series or not self.columns[self.series].present:
            self.result(check, "error", message="field or series column missing")
            return
        factor = self.plan.bounds.scale_factor
        series = ident(self.series)
        rows = self.fetch(
            f"SELECT {series}, now_mabs, hist_mabs, now_mabs / hist_mabs AS ratio, n FROM ("
            f"SELECT {series}, CAST(quantile_disc(abs({ident(name)}), 0.5) AS {sql_type(self.columns[name].dtype)}) "
            f"AS now_mabs, any_value({ident(f'__b_{name}_mabs')}) "
            f"AS hist_mabs, count(*) AS n FROM {TYPED_VIEW} GROUP BY 1) WHERE hist_mabs > 0 AND now_mabs IS NOT NULL "
            f"AND (now_mabs > hist_mabs * {factor} OR now_mabs * {factor} < hist_mabs) ORDER BY 1"
        )
        if not rows:
            self.result(check, "passed")
            return
        examples = [
            {
                self.series: r[0],
                "median_abs": json_value(r[1]),
                "history_median_abs": json_value(r[2]),
                "ratio": float(r[3]),
            }
            for r in rows[: self.limit]
        ]
        self.result(
            check,
            "failed",
            int(sum(r[4] for r in rows)),
            examples,
            f"typical {name} moved by more than {factor}x against history in {len(rows)} series: "
            "a unit or scale change?",
        )

    # ------------------------------------------------------------------ run
    def run(self) -> ValidationReport:
        started = time.perf_counter()
        self.register_catalog()
        self.register_bounds()
        self.create_typed_view()
        self.row_checks()
        self.schema_checks()
        for check in self.plan.of_scope("window"):
            if check.kind == "unique_key":
                self.key_check(check)
            elif check.kind == "unique":
                self.unique_check(check)
            elif check.kind == "step":
                StepCheck(self, check).execute()
        time_checks = [c for c in self.plan.checks if c.kind in ("cadence", "session", "completeness", "freshness")]
        if time_checks:
            TimeChecks(self).execute(time_checks)
        for check in self.plan.of_scope("batch"):
            if check.kind == "scale_shift":
                self.scale_check(check)
            elif check.kind == "row_count":
                self.row_count_check(check)
            elif check.kind == "sql_check":
                self.sql_check(check)
        for check in self.plan.checks:
            if check.id not in self.results:
                self.result(check, "error", message=f"no step of the {self.engine} engine ran this check")
        ordered = [self.results[c.id] for c in self.plan.checks]
        if self.owns_connection:
            self.con.close()
        return ValidationReport(
            contract=self.contract.contract,
            version=self.contract.version,
            rows=self.rows,
            engine=self.engine,
            elapsed_s=time.perf_counter() - started,
            data=self.source.description,
            checks=ordered,
        )


def validate_mapped(
    plan: CheckPlan,
    data: Any,
    mapping: Any,
    *,
    now: datetime | None = None,
    examples: int = 5,
    progress: Progress | None = None,
    coverage: Coverage | None = None,
) -> ValidationReport:
    """Raw ``data`` converted by ``mapping`` exactly as the ingest gate converts it, then validated."""
    from tscontract.engines.inputs.staging import stage_source

    con = connect()
    try:
        source, conversion = stage_source(con, data, plan.contract, plan.catalog, mapping)
        with reading_errors(data):
            report = ValidationRun(plan, source, now, examples, progress, con=con, coverage=coverage).run()
    finally:
        con.close()
    report.conversion = conversion.to_json()
    return report


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
        coverage: Coverage | None = None,
    ) -> ValidationReport:
        try:
            with reading_errors(data):  # a corrupt Parquet page met by a check: an input error
                return ValidationRun(plan, data, now, examples, progress, coverage=coverage).run()
        except duckdb.OutOfMemoryException as exc:
            raise out_of_memory(exc) from None


def measurement_fields(contract: Contract) -> list[str]:
    """Numeric fields that measure something: declared, not key or provenance."""
    skip = {*contract.key, *contract.provenance_required}
    numeric = [n for n, f in contract.declared_fields.items() if f.type.is_numeric and n not in skip]
    measured = [n for n in numeric if contract.fields[n].unit or contract.fields[n].dimension]
    return measured or numeric


def profile(
    contract: Contract,
    data: Any,
    *,
    catalog: Any = None,
    fields: list[str] | None = None,
    margin: Decimal = DEFAULT_MARGIN,
    scale_factor: Decimal = DEFAULT_SCALE_FACTOR,
    mapping: Any = None,
) -> Bounds:
    """Per series robust quantiles and typical magnitude of each measurement field of ``data``.

    ``mapping`` (a :class:`tscontract.engines.inputs.mapping.Mapping`): ``data`` is raw, converted as ingest does.
    """
    series = contract.series_column
    if series is None:
        raise InputError("profiling needs a series column (series.column in the contract)")
    chosen = fields or measurement_fields(contract)
    for name in chosen:
        if name not in contract.fields or not contract.fields[name].type.is_numeric:
            raise InputError(f"cannot profile {name!r}: not a numeric field of {contract.contract}")
    con = connect()
    try:
        if mapping is not None:
            from tscontract.engines.inputs.staging import stage_source

            data, _ = stage_source(con, data, contract, catalog, mapping)
        run = ValidationRun(build_plan(contract, catalog), data, None, 0, None, con=con)
        with reading_errors(data):  # a corrupt page met by the profile's queries: an input error
            run.register_catalog()
            run.create_typed_view()
            for name in (*chosen, series):
                if not run.columns[name].present:
                    raise InputError(f"the history has no column {name!r}")
            profiles: dict[str, dict[str, SeriesProfile]] = {}
            for name in chosen:
                f = ident(name)
                rows = run.fetch(
                    f"SELECT {ident(series)}, count({f}), quantile_disc({f}, 0.01), quantile_disc({f}, 0.5), "
                    f"quantile_disc({f}, 0.99), quantile_disc(abs({f}), 0.5) FROM {TYPED_VIEW} "
                    f"WHERE NOT {ident('__tf_' + name)} AND {f} IS NOT NULL AND {ident(series)} IS NOT NULL "
                    "GROUP BY 1 ORDER BY 1"
                )
                profiles[name] = {str(r[0]): SeriesProfile(int(r[1]), *(Decimal(str(v)) for v in r[2:])) for r in rows}
            total = run.fetch(f"SELECT count(*) FROM {TYPED_VIEW}")[0][0]
    finally:
        con.close()
    return Bounds(
        contract=contract.contract,
        version=contract.version,
        series_column=series,
        fields=profiles,
        margin=margin,
        scale_factor=scale_factor,
        sources=run.source.description,
        rows=int(total),
    )
