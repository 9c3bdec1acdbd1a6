"""Soda export: the contract's clauses as SodaCL checks, ``<contract>.soda.yml``.

SodaCL (``checks for TABLE:``) is the checks language of soda-core v3 (soda-core v4 replaced it
with Soda data contracts). One check per clause where SodaCL has one:

- a ``schema`` check: every column present with its DuckDB type (``when required column
  missing``, ``when wrong column type``); a metric query for unknown columns;
- ``missing_count(col) = 0`` where nulls are forbidden, ``invalid_count(col) = 0`` with
  ``valid values`` for enums and for the catalog's series ids, ``duplicate_count(key) = 0``;
- ``min(col)`` / ``max(col)`` where a clause bounds one column by constants (``volume >= 0``);
- ``failed rows`` with ``fail condition`` for every other row clause (the predicate as DuckDB
  SQL, NULL operands passing), and with ``fail query`` for the per-series cadence; a clause of
  ``severity: warning`` is a failed rows check with ``warn: when > 0`` (Soda's WARN outcome);
- ``freshness(time column) < max_age`` (judged at the scan variable ``NOW``), with a per-series
  fail query beside it when the contract has a series column, as tscontract judges freshness.

Each check's ``name`` is the clause verbatim; its ``identity`` (SodaCL allows none on failed rows
checks, whose clause names them) is ``<contract>/<check ids>``, with ``#part`` where one clause
needs two checks, so a scan result maps back to the contract's checks.
Catalog clauses are inlined as ``VALUES`` when the plan has a catalog. Values are typed when
the table is loaded, so what only the raw input shows (a decimal with too many places, a
timestamp written without offset) stays with ``tscontract validate``.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from tscontract.contract.model import SqlCheck
from tscontract.contract.sql_checks import bound_to
from tscontract.contract.types import DataType
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports._records import TABLE_REASONS, tolerance_reason
from tscontract.interop.exports.dbt import (
    cadence_failures_sql,
    cadence_skip_reason,
    check_options,
    column_type,
    dump_yaml,
    freshness_seconds,
    freshness_skip_reason,
    holds_sql,
    literal_block,
    needs_missing_catalog,
    range_bounds,
    relation_name,
)
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import PrecisionParams, SqlCheckParams, TypeParams
from tscontract.sql.columns import ident, sql_string
from tscontract.sql.step import StepSql

_TYPE_NAMES = {"timestamptz": "timestamp with time zone"}  # as DuckDB's information_schema spells it
_RAW_INPUT = "a check of the raw input: values are typed when the table is loaded, before Soda sees them"
# what the SodaCL checks state of each kind of check (HANDLERS), and why they state none of the others
UNSUPPORTED: dict[CheckKind, str] = {
    **TABLE_REASONS,
    CheckKind.UTC_INSTANT: f"{_RAW_INPUT} (the schema check enforces timestamp with time zone)",
}
HANDLERS = frozenset(CheckKind) - set(UNSUPPORTED)


def soda_type(dtype: DataType) -> str:
    """The type Soda's schema check reads for a contract type (DuckDB, lower case)."""
    name = column_type(dtype)
    return _TYPE_NAMES.get(name, name)


def soda_duration(seconds: Decimal) -> str | None:
    """``1d2h3m4s`` for whole seconds; None for a fraction (SodaCL durations count seconds)."""
    if seconds != seconds.to_integral_value():
        return None
    rest = int(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        amount, rest = divmod(rest, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts) or "0s"


_NEGATED_THRESHOLD = {"=": "!=", "<": ">=", ">": "<=", ">=": "<", "<=": ">", "between": "not between"}


def step_failures_sql(plan: CheckPlan, check: Check, table: str) -> str:
    """``fields.<name>.step`` as tscontract states it (engines/run/step.py), rows numbered by the key."""
    key = ", ".join(ident(k) for k in plan.contract.key)
    numbered = f"(select row_number() over (order by {key}) as __row, * from {table})"
    return StepSql(check, plan.contract.time.column, numbered).failing() + "\n"


def _expected(rule: SqlCheck) -> tuple[str, str]:
    """A SQL check's expectation as a SodaCL threshold: ``("<", "5")``, ``("between", "1 and 3")``."""
    if rule.must_be is not None:
        return "=", str(rule.must_be)
    if rule.must_be_less_than is not None:
        return "<", str(rule.must_be_less_than)
    if rule.must_be_greater_than is not None:
        return ">", str(rule.must_be_greater_than)
    low, high = rule.must_be_between or []
    return "between", f"{low} and {high}"


def _valid_values(values: Iterable[str]) -> dict[str, Any]:
    """A validity check's ``valid values`` (typed ``Any`` to pass as ``**config``: ``emit``'s ``part`` is a string)."""
    return {"valid values": list(values)}


class _SodaExport:
    def __init__(self, plan: CheckPlan, table: str) -> None:
        self.plan = plan
        self.contract = plan.contract
        self.table = table
        self.result = ExportResult("soda", self.contract.contract, self.contract.version)
        self.checks: list[dict[str, Any]] = []
        self.schema_ids: list[str] = []

    def identity(self, *check_ids: str, part: str | None = None) -> str:
        return f"{self.contract.contract}/{','.join(check_ids)}" + (f"#{part}" if part else "")

    def emit(self, definition: str, check: Check, *, part: str | None = None, **config: Any) -> None:
        body: dict[str, Any] = {"name": check.clause, "identity": self.identity(check.id, part=part)}
        body.update(config)
        self.checks.append({definition: body})
        if check.id not in self.result.exported:
            self.result.exported.append(check.id)

    def failed_rows(self, check: Check, **config: Any) -> None:
        # soda-core refuses `identity` on failed rows checks: the clause (its name) identifies them
        body: dict[str, Any] = {"name": check.clause}
        body.update(config)
        self.checks.append({"failed rows": body})
        if check.id not in self.result.exported:
            self.result.exported.append(check.id)

    # ------------------------------------------------------------ checks
    def add(self, check: Check) -> None:
        plan, result, kind = self.plan, self.result, check.kind
        if needs_missing_catalog(plan, check):
            result.skip(check, "needs the series catalog; export with a catalog to inline it as VALUES")
        elif check.params.max_failing is not None:
            result.skip(check, str(tolerance_reason(check, "SodaCL thresholds count rows, not a share of them")))
        elif kind == "required_columns":
            self.schema_ids.insert(0, check.id)
        elif kind == "unknown_columns":
            self.unknown_columns(check)
        elif kind == "type":
            dtype: DataType = check.params_of(TypeParams).dtype
            column = check.columns[0]
            if dtype.kind == "string":
                self.schema_ids.append(check.id)  # the schema check's varchar settles it
            elif dtype.kind == "enum":
                self.emit(f"invalid_count({column}) = 0", check, **_valid_values(dtype.members))
            else:
                result.skip(check, f"{_RAW_INPUT} (the schema check enforces {soda_type(dtype)})")
        elif kind == "not_null":
            self.emit(f"missing_count({check.columns[0]}) = 0", check)
        elif kind == "time_precision" and check.params_of(PrecisionParams).unit == "us":
            self.schema_ids.append(check.id)  # timestamp with time zone holds microseconds, nothing finer
        elif kind == "time_precision" and check.params_of(PrecisionParams).unit == "ns":
            result.skip(check, "timestamp with time zone holds microseconds: loading drops nanoseconds")
        elif kind in ("fixed_value", "invariant", "constraint", "series_pattern") and check.predicate is not None:
            if check.severity == "warning":  # a failed rows check that warns: soda-core >= 3.3 thresholds
                self.failed_rows(check, **{"fail condition": f"NOT {holds_sql(plan, check)}", "warn": "when > 0"})
                return
            bounds = range_bounds(plan, check)
            if bounds is not None:
                self.range(check, *bounds)
                return
            self.condition(check)
        elif kind in ("time_precision", "calibration_in_force"):
            self.condition(check)
        elif kind == "unique_key":
            self.emit(f"duplicate_count({', '.join(check.columns)}) = 0", check)
        elif kind == "unique":
            self.metric(check, f"duplicate_count({check.columns[0]})", ("=", "0"))
        elif kind == "row_count":
            rows = self.contract.row_count
            assert rows is not None
            if rows.min is not None and rows.max is not None:
                self.metric(check, "row_count", ("between", f"{rows.min} and {rows.max}"))
            else:
                one = (">=", str(rows.min)) if rows.min is not None else ("<=", str(rows.max))
                self.metric(check, "row_count", one)
        elif kind == "sql_check":
            rule = check.params_of(SqlCheckParams).rule
            query = literal_block(bound_to(check.params_of(SqlCheckParams).query, self.table) + "\n")
            self.metric(check, rule.name, _expected(rule), **{f"{rule.name} query": query})
        elif kind == "catalog_series":
            if not check.columns:
                result.skip(check, "the contract names no series column")
                return
            assert plan.catalog is not None
            self.emit(f"invalid_count({check.columns[0]}) = 0", check, **_valid_values(plan.catalog.series))
        elif kind == "cadence":
            reason = cadence_skip_reason(plan, check)
            if reason is not None:
                result.skip(check, reason)
                return
            self.failed_rows(check, **{"fail query": literal_block(cadence_failures_sql(plan, check, self.table))})
        elif kind == "step":
            self.failed_rows(check, **{"fail query": literal_block(step_failures_sql(plan, check, self.table))})
        elif kind == "freshness":
            self.freshness(check)
        else:
            result.skip(check, UNSUPPORTED[kind])

    def metric(self, check: Check, metric: str, expected: tuple[str, str], **config: Any) -> None:
        """``metric <op> <value>``; a warning is ``metric: {warn: when not <op> <value>}``."""
        op, value = expected
        if check.severity == "warning":
            self.emit(metric, check, warn=f"when {_NEGATED_THRESHOLD[op]} {value}", **config)
        else:
            self.emit(f"{metric} {op} {value}", check, **config)

    def condition(self, check: Check) -> None:
        holds = holds_sql(self.plan, check)
        assert holds is not None
        self.failed_rows(check, **{"fail condition": f"NOT {holds}"})

    def range(self, check: Check, column: str, low: tuple[str, bool] | None, high: tuple[str, bool] | None) -> None:
        both = low is not None and high is not None
        if low is not None:
            self.emit(f"min({column}) {'>=' if low[1] else '>'} {low[0]}", check, part="min" if both else None)
        if high is not None:
            self.emit(f"max({column}) {'<=' if high[1] else '<'} {high[0]}", check, part="max" if both else None)

    def unknown_columns(self, check: Check) -> None:
        known = ", ".join(sql_string(c) for c in self.contract.fields)
        query = (
            f"SELECT count(*) FROM information_schema.columns\n"
            f"WHERE table_name = {sql_string(self.table)} AND column_name NOT IN ({known})\n"
        )
        self.emit("unknown_columns = 0", check, **{"unknown_columns query": literal_block(query)})

    def freshness(self, check: Check) -> None:
        seconds = freshness_seconds(check)
        if seconds is None:
            self.result.skip(check, freshness_skip_reason(check))
            return
        column, series = check.columns[0], self.contract.series_column
        duration = soda_duration(seconds)
        if duration is not None:
            self.emit(f"freshness({column}) < {duration}", check, part="table" if series else None)
        if series or duration is None:
            # tscontract judges the newest point of every series, not only of the table
            group = series or "'*'"
            query = (
                f"SELECT {group} AS series, max({column}) AS newest FROM {self.table}\n"
                f"GROUP BY 1\n"
                f"HAVING max({column}) IS NULL OR epoch_us(CAST('${{NOW}}' AS TIMESTAMPTZ)) - epoch_us(max({column}))"
                f" > {int(seconds * 1_000_000)}\n"
            )
            self.failed_rows(check, **{"fail query": literal_block(query)})

    def schema(self) -> dict[str, Any]:
        columns = self.contract.fields
        required = next(c for c in self.plan.checks if c.kind == "required_columns")
        return {
            "schema": {
                "name": required.clause,
                "identity": self.identity(*self.schema_ids),
                "fail": {
                    "when required column missing": list(columns),
                    "when wrong column type": {name: soda_type(spec.type) for name, spec in columns.items()},
                },
            }
        }

    def run(self) -> ExportResult:
        for check in self.plan.checks:
            self.add(check)
        result = self.result
        if self.schema_ids:
            self.checks.insert(0, self.schema())
            result.exported = [c.id for c in self.plan.checks if c.id in {*result.exported, *self.schema_ids}]
        path = f"{self.contract.contract}.soda.yml"
        header = [*result.header_lines(), f"run: soda scan -d DATA_SOURCE -c configuration.yml [-v NOW=INSTANT] {path}"]
        content = dump_yaml({f"checks for {self.table}": self.checks}, header)
        result.artifacts.append(Artifact(path, content))
        return result


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """Export ``plan`` as SodaCL checks.

    Options: ``table`` names the dataset the checks are for (default: the contract name as an
    identifier).
    """
    check_options("soda", options, ("table",))
    table: str = options.get("table") or relation_name(plan.contract.contract)
    return _SodaExport(plan, table).run()
