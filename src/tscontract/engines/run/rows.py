"""Row checks in one scan, and the schema checks: every check judged row by row, or on the columns.

Where input rows are numbered (Parquet, JSON lines, tables the gate stages), the scan keeps only the
failing rows, with a flag per check and the text examples show; counts and examples are then read
from that small table. Elsewhere (CSV, in-memory frames) one fused aggregate counts every check
(``count(*) FILTER (WHERE ...)``) and a second scan numbers and keeps the failing rows only when
something failed.

``ROW_FAILURES`` holds the one condition per row kind that marks a row failing it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tscontract.contract.cache import PickledDict, code_digest, library_stamp, slot_of
from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.trees import LazyTree, held_tree
from tscontract.contract.types import DataType
from tscontract.engines.base import TYPED_VIEW
from tscontract.engines.inputs.sources import MALFORMED, RECORD, SOURCE_VIEW
from tscontract.engines.run.state import RunState
from tscontract.engines.run.time import plausible_sql
from tscontract.plan.checks import Check
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import BoundsParams, PatternParams
from tscontract.sql.columns import ident, json_value, sql_string

if TYPE_CHECKING:
    import sqlglot.expressions as exp

# types whose examples show the typed value (JSON numbers, booleans, RFC 3339 instants, exact decimal text)
_TYPED_EXAMPLE = ("int", "float", "decimal", "bool", "timestamp", "date")


def _flags(prefix: str) -> Callable[[RowChecks, Check], str | None]:
    """A failure flag the typed view computes per column (UTC rule, precision), over the present columns."""

    def condition(run: RowChecks, check: Check) -> str:
        parts = [ident(prefix + c) for c in check.columns if run.columns[c].present]
        return " OR ".join(parts) if parts else "FALSE"

    return condition


def _clause(run: RowChecks, check: Check) -> str | None:
    if check.params.needs_catalog and not run.catalog_joined:
        return None
    tree = held_tree(check)
    assert tree is not None, check.id  # every clause kind is built with its predicate
    return f"NOT COALESCE(({run.predicate_sql(tree)}), TRUE)"


def _catalog_series(run: RowChecks, check: Check) -> str | None:
    return f"NOT {ident('__null_' + run.series)} AND __cat_series_id IS NULL" if run.series else None


def _series_pattern(run: RowChecks, check: Check) -> str:  # the whole id matches (a series scheme), as re.fullmatch
    column = run.columns[check.columns[0]].typed
    return f"NOT regexp_full_match({column}, {sql_string(check.params_of(PatternParams).pattern)})"


def _calibration(run: RowChecks, check: Check) -> str:
    return "calibration_id IS NOT NULL AND __cat_series_id IS NOT NULL AND calibration_id IS DISTINCT FROM __cal_id"


def _plausibility(run: RowChecks, check: Check) -> str:
    name = check.params_of(BoundsParams).field
    return f"{ident(name)} NOT BETWEEN {ident(f'__b_{name}_low')} AND {ident(f'__b_{name}_high')}"


# kind -> the condition that marks a row failing a check of it (None: it cannot run on this input);
# well_formed is the source's own (a malformed input row fails it and nothing else)
ROW_FAILURES: dict[CheckKind, Callable[[RowChecks, Check], str | None]] = {
    CheckKind.TYPE: lambda run, check: ident("__tf_" + check.columns[0]),
    CheckKind.NOT_NULL: lambda run, check: ident("__null_" + check.columns[0]),
    CheckKind.FIXED_VALUE: _clause,
    CheckKind.INVARIANT: _clause,
    CheckKind.CONSTRAINT: _clause,
    CheckKind.UTC_INSTANT: _flags("__utc_"),
    CheckKind.TIME_PRECISION: _flags("__prec_"),
    CheckKind.CATALOG_SERIES: _catalog_series,
    CheckKind.SERIES_PATTERN: _series_pattern,
    CheckKind.CALIBRATION_IN_FORCE: _calibration,
    CheckKind.PLAUSIBILITY: _plausibility,
}
ROW_KINDS = frozenset({CheckKind.WELL_FORMED, *ROW_FAILURES})
SCHEMA_KINDS = frozenset({CheckKind.REQUIRED_COLUMNS, CheckKind.UNKNOWN_COLUMNS})


@cache
def _written_key() -> str:
    """What a clause's DuckDB SQL depends on: the lowering (sql/semantics.py; the static types it reads are
    contract/semantics.py, in every code_digest), this module and sqlglot. Read as files: importing the
    lowering loads sqlglot."""
    lowering = (Path(__file__).resolve().parents[2] / "sql" / "semantics.py", Path(__file__))
    code = [module.read_text(encoding="utf-8") for module in lowering]
    return code_digest("duckdb-sql", *code, library_stamp("sqlglot"))


# each clause's DuckDB SQL, by its tree's key (contract/trees.py) and the contract's types: a warm run builds no
# tree and loads no sqlglot. A file per slot of the types (a contract's clauses share one), each kept small: a
# process reads one file of at most WRITTEN_PER_FILE clauses, however many clauses a test run generates
WRITTEN_FILES, WRITTEN_PER_FILE = 64, 400
_WRITTEN: dict[int, PickledDict] = {}


def _written(types: str) -> PickledDict:
    slot = slot_of(types, WRITTEN_FILES)
    if slot not in _WRITTEN:
        _WRITTEN[slot] = PickledDict(lambda: f"duckdb-sql-{_written_key()[:20]}/{slot:02x}")
        _WRITTEN[slot].LIMIT = WRITTEN_PER_FILE
    return _WRITTEN[slot]


def duckdb_sql(predicate: LazyTree | exp.Expression, types: Mapping[str, DataType]) -> str:
    """The clause as DuckDB SQL that means what the reference says (:mod:`tscontract.sql.semantics`); catalog
    attributes read from the joined catalog's ``__cat_`` columns."""
    tree = predicate if isinstance(predicate, LazyTree) else LazyTree.of(predicate)
    typed = repr(sorted((name, repr(dtype)) for name, dtype in types.items()))
    store, question = _written(typed), (tree.key, typed)
    written = store.get(question)
    if isinstance(written, str):
        return written
    written = _lowered_sql(tree.value, types)
    store.put(question, written)
    return written


def _lowered_sql(predicate: exp.Expression, types: Mapping[str, DataType]) -> str:
    import sqlglot.expressions as exp  # sqlglot: only for a clause no earlier run wrote

    from tscontract.sql.semantics import lowered

    tree = lowered(predicate, types)
    for column in list(tree.find_all(exp.Column)):
        if column.table == CATALOG_TABLE:
            column.replace(exp.column(f"__cat_{column.name}"))
    return tree.sql(dialect="duckdb")  # loads sqlglot's DuckDB dialect (0.13 G instructions) on first use


class RowChecks(RunState):
    """The row pass and the schema checks of a validation run."""

    def predicate_sql(self, predicate: LazyTree) -> str:
        """The clause as DuckDB SQL that means what the reference says (:func:`duckdb_sql`)."""
        return duckdb_sql(predicate, {name: spec.type for name, spec in self.contract.fields.items()})

    def failure_sql(self, check: Check) -> str | None:
        """The row condition that marks a violation of ``check``; None when it cannot run.

        A malformed input row fails ``source.rows`` and nothing else: its values are unknown (NULL).
        """
        if check.kind == CheckKind.WELL_FORMED:
            return f"{MALFORMED} IS NOT NULL" if self.source.malformed else "FALSE"
        sql = ROW_FAILURES[check.kind](self, check)
        return f"({sql}) AND {MALFORMED} IS NULL" if sql is not None and self.source.malformed else sql

    def row_checks(self) -> None:
        runnable: list[tuple[Check, str]] = []
        for check in self.plan.checks:
            if check.kind not in ROW_KINDS:
                continue
            missing = self.missing(check)
            if missing:
                self.result(check, "error", message=f"column(s) {', '.join(missing)} missing; see schema.columns")
                continue
            if check.params.needs_catalog and not self.catalog_joined:
                why = "no catalog given (--catalog)" if self.plan.catalog is None else "the series column is missing"
                self.result(check, "error", message=f"needs the series catalog: {why}")
                continue
            sql = self.failure_sql(check)
            if sql is None:
                self.result(check, "error", message="cannot run on this input")
                continue
            runnable.append((check, sql))
        if self.source.has_row_number or self.statements_dear:
            # Rows are numbered already (Spark numbers every source it reads), so one scan does it all: it keeps
            # the failing rows (few, as a rule) with a flag per check, and the counts are read from that small
            # table (on Spark in one statement with the row count and time span: failing_counts_with_span).
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
                numbered = "__tsc_typed_numbered"
                self.create_typed_view(numbered, numbered=True)
                self.keep_failing(failing, numbered)
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
        sums = [f"count(*) FILTER (WHERE __f{i})" for i in range(len(checks))]
        if self.statements_dear:
            return self.failing_counts_with_span(sums)
        rows = f"SELECT count(*) FROM {SOURCE_VIEW}"
        if not checks:
            return [int(self.fetch(rows)[0][0])]
        return [int(v) for v in self.fetch(f"SELECT ({rows}), * FROM (SELECT {', '.join(sums)} FROM __tsc_failing)")[0]]

    def failing_counts_with_span(self, sums: list[str]) -> list[int]:
        """:meth:`failing_counts` where a statement is a job (Spark): the row count and the batch's first and
        last plausible instants (``time_span``: a statement less for the time pass) over the typed view, the
        counts ``sums`` over ``__tsc_failing``, as two rows of one UNION ALL (one job: a scalar subquery or a
        join of the two would be a job more). The scan that keeps the failing rows is the only one that judges
        them; examples read what it kept."""
        time = self.contract.time.column
        span = []
        if self.columns[time].present:
            plausible = plausible_sql(ident(time))
            span = [f"{f}(CASE WHEN {plausible} THEN {ident(time)} END)" for f in ("min", "max")]
        head = ", ".join(["0 AS __part", "count(*) AS __n", *span, *(["NULL"] * len(sums))])
        tail = ", ".join(["1", "NULL", *(["NULL"] * len(span)), *sums])
        found = {
            r[0]: r[1:]
            for r in self.fetch(f"SELECT {head} FROM {TYPED_VIEW} UNION ALL SELECT {tail} FROM __tsc_failing")
        }
        if span:
            self.time_span = (found[0][1], found[0][2])
        return [int(found[0][0]), *(int(n) for n in found[1][1 + len(span) :])]

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
        # the LIMIT drops nothing (each part has at most ``limit`` rows); without one a distributed sort
        # samples its input first (a Spark job more)
        rows = self.fetch(
            f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS __e ORDER BY __k, __row LIMIT {self.limit * len(parts)}"
        )
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

    def schema_checks(self) -> None:
        expected = set(self.contract.fields)
        present = set(self.source.columns)
        for check in (c for c in self.plan.checks if c.kind in SCHEMA_KINDS):
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
