"""Export to pandera: a Python module defining ``schema``, a ``DataFrameSchema`` of the contract.

The module validates a *typed* pandas frame (``schema.validate(df, lazy=True)``), backed by
numpy, pandas' masked arrays or Arrow alike: strings as ``object``/``str``/``string[pyarrow]``,
integers as ``int64``/``Int64``/``int64[pyarrow]``, booleans, decimals as Python ``Decimal``
objects (or Arrow ``decimal128``), instants as ``datetime64[<unit>, UTC]`` or Arrow
``timestamp[<unit>, tz=UTC]``. No pandera dtype is set, since one pins a single backing; a named
check per column judges the logical type on any backing, as the engine judges a Parquet
column's physical type (a float where a decimal is declared fails, a naive instant fails the
UTC rule). Nothing is coerced (``coerce=False``): converting is the ingest step's job, and a
coercing schema hides exactly the drift the contract exists to catch.

How the clauses map:

* ``strict=True`` (no unknown columns), every column ``required``, ``unique`` on the key;
* per column: ``nullable``, and named checks — the logical type on any backing, enum membership (``isin``), a fixed
  value (``eq``), decimal precision and scale (a check on the ``Decimal`` values: pandera's own
  ``Decimal`` dtype counts the sign and trailing zeros as digits), the UTC rule and the
  precision of instants;
* each invariant and field constraint as a dataframe-level check whose function is the
  clause's sqlglot predicate translated into pandas with the meaning
  :mod:`tscontract.contract.semantics` gives it: a null operand makes a comparison unknown and
  an unknown clause passes (nullability is its own clause); a comparison with NaN is false;
  ``/`` divides in binary64; decimals are exact. NaN is a value where the frame's backing tells
  it from a null (Arrow, masked ``Float64``, object columns); a numpy ``float64`` column writes
  its nulls as NaN, as pandas does, so there NaN reads as null; ``is null only when`` is the
  implication the contract means;
* catalog clauses (``within catalog hard_bounds for series_id``, ``equals catalog unit for
  series_id``, the series list, the calibration in force) embed the catalog's values as of
  the export; without a catalog they are not exported.

``polars_schema`` runs the same checks under pandera's polars backend: each reads the columns it
needs as Arrow-backed pandas (null and NaN kept apart, as polars keeps them), so there is one
definition; a non-nullable float column gets a named not-null check, since pandera's
``nullable=False`` on polars also fails NaN.

Every ``Check`` is named by its tscontract check id and carries the clause, verbatim, as its
``error``; ``BUILTIN_CHECKS`` in the generated module says which check ids pandera's built-in
checks (dtype, nullability, uniqueness, strictness) stand for. Cadence, sessions,
completeness and freshness need windows over time, a calendar or the wall clock and are
listed in the header as not exported.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.regex import python_pattern
from tscontract.contract.types import DataType
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports._records import tolerance_reason
from tscontract.interop.exports.cel import COMPARISONS
from tscontract.interop.exports.pandera_runtime import POLARS_RUNTIME, RUNTIME, STEP_FUNCTION
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import PrecisionParams, StepParams, TypeParams

# what the schema states of each kind of check (HANDLERS), and why it states none of the others
UNSUPPORTED: dict[CheckKind, str] = {
    CheckKind.CADENCE: "needs a window over each series' sorted instants (gaps, revisions sharing an instant); "
    "pandera checks rows, not the steps between them",
    CheckKind.SESSION: "needs the series' session calendar (an exchange's or declared weekly hours, with holidays)",
    CheckKind.COMPLETENESS: "counts expected points per window on the cadence and calendar; not a row check",
    CheckKind.FRESHNESS: "judged against the wall clock at validation time (--now), not the frame",
    CheckKind.PLAUSIBILITY: "history-derived bounds change with every profile; run tscontract validate --bounds",
    CheckKind.SCALE_SHIFT: "compares the batch's typical magnitude with history; run tscontract validate --bounds",
    CheckKind.WELL_FORMED: "judged on the input as read (a malformed line), before there is a frame",
    CheckKind.ROW_COUNT: "the number of rows is the batch's; a pandera schema judges the frame it is given",
    CheckKind.SQL_CHECK: "a SQL query over the batch; a pandera schema runs Python checks over a frame",
}
HANDLERS = frozenset(CheckKind) - set(UNSUPPORTED)
_NO_CATALOG = "needs the series catalog: export with a catalog to embed its values"
_ARITHMETIC: dict[type[exp.Expression], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}
_FUNCTIONS: dict[type[exp.Expression], str] = {
    exp.Abs: "abs",
    exp.Length: "length",
    exp.Lower: "lower",
    exp.Upper: "upper",
    exp.Coalesce: "coalesce",
    exp.Least: "least",
    exp.Greatest: "greatest",
}


class Unsupported(Exception):
    """A predicate the translation cannot express; the message is the reason."""


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """The pandera module ``<contract>_pandera.py`` for ``plan``."""
    if options:
        raise TypeError(f"unknown pandera export option(s): {', '.join(sorted(options))}")
    contract = plan.contract
    result = ExportResult("pandera", contract.contract, contract.version)
    content = _ModuleWriter(plan, result).render()
    result.artifacts.append(Artifact(f"{contract.contract}_pandera.py", content))
    return result


# ---------------------------------------------------------------- predicate translation


def translate(predicate: exp.Expression, catalog_key: str | None = None) -> str:
    """``predicate`` as a Python expression over ``r`` (a ``_Rows``) with SQL semantics.

    Literals stay Python literals (the ``_Sql`` operators take them on either side); every
    operation is parenthesised, since Python's ``&`` binds tighter than comparisons.
    ``catalog.<attr>`` becomes ``r.catalog(attr, catalog_key)``: the row's series' value.
    """

    def walk(node: exp.Expression) -> str:
        if isinstance(node, exp.Paren):
            return walk(node.this)
        if isinstance(node, exp.Column):
            if node.table == CATALOG_TABLE:
                if catalog_key is None:
                    raise Unsupported("a catalog attribute without the catalog")
                return f"r.catalog({node.name!r}, {catalog_key!r})"
            return f"r[{node.name!r}]"
        if isinstance(node, exp.Literal):
            return repr(node.this) if node.is_string else _number(node.this)
        if isinstance(node, exp.Boolean):
            return repr(bool(node.this))
        if isinstance(node, exp.Null):
            return "None"
        if isinstance(node, exp.Neg):
            inner = node.this
            if isinstance(inner, exp.Literal) and not inner.is_string:
                return _number("-" + inner.this)
            return f"(-{walk(inner)})"
        if type(node) in COMPARISONS:
            return f"({row_value(walk(node.this))} {COMPARISONS[type(node)]} {walk(node.expression)})"
        if type(node) in _ARITHMETIC:
            return f"({row_value(walk(node.this))} {_ARITHMETIC[type(node)]} {walk(node.expression)})"
        if isinstance(node, exp.And):
            return f"({row_value(walk(node.this))} & {walk(node.expression)})"
        if isinstance(node, exp.Or):
            return f"({row_value(walk(node.this))} | {walk(node.expression)})"
        if isinstance(node, exp.Not):
            return f"(~{row_value(walk(node.this))})"
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return f"r.is_null({walk(node.this)})"
        if isinstance(node, exp.Between):
            subject = row_value(walk(node.this))
            return f"(({subject} >= {walk(node.args['low'])}) & ({subject} <= {walk(node.args['high'])}))"
        if isinstance(node, exp.In):
            if not node.expressions:
                raise Unsupported("an empty IN list")
            subject = row_value(walk(node.this))
            # x IN (a, b) is x = a OR x = b under three-valued logic
            return "(" + " | ".join(f"({subject} == {walk(item)})" for item in node.expressions) + ")"
        if isinstance(node, exp.RegexpFullMatch):
            return f"r.matches({walk(node.this)}, {python_pattern(node.expression.this)!r})"  # ASCII \\d \\w \\s
        if isinstance(node, exp.Round):
            digits = node.args.get("decimals")
            return f"r.round({walk(node.this)}, {walk(digits) if digits is not None else '0'})"
        if type(node) in _FUNCTIONS:
            args = [node.this, *node.expressions]
            return f"r.{_FUNCTIONS[type(node)]}({', '.join(walk(a) for a in args)})"
        raise Unsupported(f"no pandas translation for {type(node).__name__} ({node.sql(dialect='duckdb')})")

    return row_value(walk(predicate))


def row_value(text: str) -> str:
    """A Python literal as a per-row value, so every operator is ``_Sql``'s: ``not (0 < 1)`` is not ``~True``."""
    return text if text.startswith(("(", "r.", "r[")) else f"r.constant({text})"


def _number(text: str) -> str:
    return text if text.lstrip("-").isdigit() else f"Decimal({text!r})"


def _catalog_values(plan: CheckPlan, attribute: str) -> dict[str, Any]:
    """Series id -> the catalog attribute the predicate names (``hard_bounds_low``, ``unit``)."""
    assert plan.catalog is not None
    values: dict[str, Any] = {}
    for series_id, entry in plan.catalog.series.items():
        value = entry.value_of(attribute)
        if value is not None:
            values[series_id] = value
    return values


# ---------------------------------------------------------------- the module


class _ModuleWriter:
    def __init__(self, plan: CheckPlan, result: ExportResult) -> None:
        self.plan = plan
        self.result = result
        self.contract = plan.contract
        self.columns: dict[str, dict[str, Any]] = {
            name: {"dtype": None, "nullable": True, "checks": []} for name in self.contract.fields
        }
        self.frame_checks: list[_Code] = []
        self.functions: list[str] = []
        self.catalog: dict[str, dict[str, Any]] = {}
        self.calibrations: list[tuple[str, str, datetime, datetime | None]] | None = None
        self.catalog_series: list[str] = []
        self.builtin: dict[str, Any] = {"not_nullable": {}, "dtype": {}}
        self.unique: list[str] | None = None

    # ------------------------------------------------------------ checks
    def render(self) -> str:
        for check in self.plan.checks:
            reason = self.add(check)
            if reason is None:
                self.result.exported.append(check.id)
            else:
                self.result.skip(check, reason)
        return self.module_text()

    def add(self, check: Check) -> str | None:
        """Add ``check`` to the schema; the reason it cannot be, or None."""
        kind = check.kind
        if kind == "required_columns":
            self.builtin["column_in_dataframe"] = check.id
        elif kind == "unknown_columns":
            self.builtin["column_in_schema"] = check.id
        elif kind == "type":
            self.add_type(check)
        elif kind == "not_null":
            column = check.columns[0]
            self.columns[column]["nullable"] = False
            self.builtin["not_nullable"][column] = check.id
        elif kind == "fixed_value":
            value = _python_literal(check.predicate.expression)  # type: ignore[union-attr]
            self.column_check(check.columns[0], "eq", self.label(check), argument=value)
        elif check.params.max_failing is not None:
            return tolerance_reason(check, "a pandera check fails on any failing row")
        elif kind in ("invariant", "constraint", "series_pattern"):
            return self.add_predicate(check)
        elif kind in ("utc_instant", "time_precision"):
            helper = "_utc_instant" if kind == "utc_instant" else "_within_precision"
            for column in check.columns:
                dtype = self.contract.fields[column].type
                # each instant column to its own type's unit, as the engine judges it
                argument = (
                    "" if kind == "utc_instant" else repr(dtype.time_unit or check.params_of(PrecisionParams).unit)
                )
                self.column_check(column, f"{helper}({argument})", self.label(check))
        elif kind == "unique_key":
            self.unique = list(check.columns)
            self.builtin["multiple_fields_uniqueness"] = check.id
        elif kind == "unique":  # a named check (not unique=True): it carries the check id and can warn
            self.column_check(check.columns[0], "_unique_values", self.label(check))
        elif kind == "catalog_series":
            if self.plan.catalog is None or not check.columns:
                return _NO_CATALOG
            series_ids = sorted(self.plan.catalog.series)
            self.column_check(check.columns[0], "isin", self.label(check), argument=repr(series_ids))
        elif kind == "calibration_in_force":
            return self.add_calibration(check)
        elif kind == "step":
            self.add_step(check)
        else:
            return UNSUPPORTED[kind]
        return None

    def add_type(self, check: Check) -> None:
        column = check.columns[0]
        dtype: DataType = check.params_of(TypeParams).dtype
        kind = dtype.kind
        label = self.label(check)
        # No pandera dtype: one pins a backing (object, 'string[python]', Int64, datetime64[ms, UTC]) and
        # refuses the same values backed by Arrow ('string[pyarrow]', 'int64[pyarrow]', timestamp[ms,
        # tz=UTC]). The named check judges the logical type on any backing, as the engine does.
        if kind in ("string", "enum", "bool", "float"):
            self.column_check(column, f"_logical({kind if kind != 'enum' else 'string'!r})", label)
            if kind == "enum":
                self.column_check(column, "isin", label, argument=repr(list(dtype.members)))
        elif kind == "int":
            self.column_check(column, f"_logical('int', {dtype.bits or 64})", label)
        elif kind == "decimal":
            self.column_check(column, f"_decimal_fits({dtype.precision}, {dtype.scale})", label)
        elif kind == "timestamp":
            self.column_check(column, "_is_instant", label)
        elif kind == "date":
            self.column_check(column, "_is_date", label)
        else:  # bytes
            self.column_check(column, "_is_bytes", label)

    def add_predicate(self, check: Check) -> str | None:
        if check.predicate is None:
            return "the clause has no predicate"
        ref = check.params.catalog
        if check.params.needs_catalog and self.plan.catalog is None:
            return _NO_CATALOG
        try:
            expression = translate(check.predicate, ref.key if ref is not None else None)
        except Unsupported as exc:
            return str(exc)
        for column in check.predicate.find_all(exp.Column):
            if column.table == CATALOG_TABLE:
                self.catalog[column.name] = _catalog_values(self.plan, column.name)
        name = "_clause_" + "".join(ch if ch.isalnum() else "_" for ch in check.id).strip("_")
        self.functions.append(
            f"def {name}(df: pd.DataFrame) -> pd.Series:\n"
            f'    """{check.id}: {_docstring(check.clause)}"""\n'
            f"    r = _Rows(df)\n"
            f"    return r.holds({_unwrap(expression)})\n"
        )
        reads = [c.name for c in check.predicate.find_all(exp.Column) if c.table != CATALOG_TABLE]
        if ref is not None:
            reads.append(ref.key)
        self.frame_checks.append(_Code(name, self.label(check), reads=tuple(dict.fromkeys(reads))))
        return None

    def add_calibration(self, check: Check) -> str | None:
        catalog = self.plan.catalog
        series = self.contract.series_column
        if catalog is None or series is None:
            return _NO_CATALOG
        calibration, instant = check.columns
        self.catalog_series = sorted(catalog.series)
        self.calibrations = [
            (series_id, c.id, c.valid_from, c.valid_to)
            for series_id, entry in catalog.series.items()
            for c in entry.calibrations
        ]
        function = f"_calibration_in_force({series!r}, {calibration!r}, {instant!r})"
        self.frame_checks.append(_Code(function, self.label(check), reads=(series, calibration, instant)))
        return None

    def add_step(self, check: Check) -> None:
        """``fields.<name>.step`` as a frame-wide check: the rule of engines/run/step.py, series by series."""
        step = check.params_of(StepParams).step
        if STEP_FUNCTION not in self.functions:
            self.functions.append(STEP_FUNCTION)
        gap = int(step.max_gap.seconds * 1_000_000) if step.max_gap is not None else None
        rule = (
            f"max_abs={str(step.max_abs)!r}"
            if step.max_abs is not None
            else f"max_mad={str(step.max_mad)!r}, half={step.half_window}, min_mad={str(step.min_mad or 0)!r}"
        )
        params = check.params_of(StepParams)
        args = (
            f"{params.field!r}, {self.contract.time.column!r}, {list(params.series)!r}, "
            f"{params.revision!r}, {rule}, max_gap_us={gap!r}"
        )
        reads = (params.field, self.contract.time.column, *params.series, params.revision)
        function = f"lambda df: _step_holds(df, {args})"
        self.frame_checks.append(_Code(function, self.label(check), reads=tuple(c for c in reads if c)))

    def column_check(self, column: str, function: str, label: str, argument: str | None = None) -> None:
        self.columns[column]["checks"].append(_Code(function, label, argument=argument))

    @staticmethod
    def label(check: Check) -> str:
        warn = ", raise_warning=True" if check.severity == "warning" else ""  # a SchemaWarning, not a failure
        return f"name={check.id!r}, error={check.clause!r}{warn}"

    # ------------------------------------------------------------ text
    def module_text(self) -> str:
        contract = self.contract
        header = "\n".join(f"# {part}" for line in self.result.header_lines() for part in line.splitlines())
        lines = [
            header,
            f'"""{contract.contract} {contract.version} as a pandera DataFrameSchema.',
            "",
            "    schema.validate(df, lazy=True)  # every failure, not just the first",
            "    polars_schema.validate(polars_frame, lazy=True)  # the same checks on a polars frame",
            "",
            "Expects the typed frame, numpy- or Arrow-backed: text, integers, booleans, Decimal objects",
            "(or Arrow decimal128), UTC instants (datetime64[<unit>, UTC] or Arrow timestamp[<unit>, tz=UTC]).",
            "Each Check is named by its tscontract check id; its error is the contract's clause as",
            "written. Nothing is coerced.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            "import math",
            "import operator",
            "import re",
            "from datetime import date, datetime, timedelta, timezone",
            "from decimal import ROUND_HALF_UP, Decimal, localcontext",
            "",
            "import numpy as np",
            "import pandas as pd",
            "import pandera.pandas as pa",
            "",
            "try:  # pandera's polars backend where polars is installed: polars_schema",
            "    import pandera.polars as pap",
            "    import polars as pl",
            "    import polars.selectors as cs",
            "except ImportError:  # pandas only: polars_schema is None",
            "    pap = None",
            "",
            f"CONTRACT = {contract.contract!r}",
            f"VERSION = {contract.version!r}",
            "# the tscontract check ids pandera's built-in checks stand for (failure_cases 'check' column)",
            f"BUILTIN_CHECKS = {_pretty(self.builtin)}",
            "# every exported check: tscontract check id -> the clause as written",
            f"CLAUSES = {_pretty({c.id: c.clause for c in self.plan.checks if c.id in self.result.exported})}",
            "# (check id, clause, why this module does not check it)",
            f"NOT_EXPORTED = {_pretty([(n.check_id, n.clause, n.reason) for n in self.result.not_exported])}",
        ]
        if self.catalog:
            lines += ["# catalog values as of the export: attribute -> series -> value"]
            lines += [f"CATALOG = {_pretty(self.catalog)}"]
        else:
            lines.append("CATALOG: dict[str, dict[str, object]] = {}")
        if self.calibrations is not None:
            lines += [
                f"CATALOG_SERIES = {_pretty(self.catalog_series)}",
                "# (series, calibration id, valid from, valid to: exclusive, None = open-ended)",
                f"CALIBRATIONS = {_pretty(self.calibrations)}",
            ]
        else:
            lines += ["CATALOG_SERIES: list[str] = []"]
            lines += ["CALIBRATIONS: list[tuple[str, str, datetime, datetime | None]] = []"]
        lines += ["", RUNTIME, POLARS_RUNTIME, "\n\n".join(self.functions), "", self.schema_text(), ""]
        lines += [self.schema_text(polars=True), ""]
        return "\n".join(lines).replace("\n\n\n\n", "\n\n\n")

    def schema_text(self, polars: bool = False) -> str:
        """``schema`` (pandas), or ``polars_schema``: the same checks under pandera's polars backend."""
        contract = self.contract
        module = "pap" if polars else "pa"
        head = "schema = pa.DataFrameSchema("
        if polars:
            head = "polars_schema = None if pap is None else pap.DataFrameSchema("
        out = [head, "    columns={"]
        for name, spec in self.columns.items():
            nullable, checks = spec["nullable"], list(spec["checks"])
            if polars and not nullable and contract.fields[name].type.kind == "float":
                # pandera's nullable=False on polars fails NaN too; in the contract NaN is a value
                not_null = self.plan.by_id(self.builtin["not_nullable"][name])
                nullable, checks = True, [_Code("_present", self.label(not_null)), *checks]
            args = ["None", f"nullable={nullable}", "required=True", "coerce=False"]
            if checks:
                text = "".join(f"            {c.render(polars, column=True)},\n" for c in checks)
                args.append(f"checks=[\n{text}        ]")
            out.append(f"        {name!r}: {module}.Column({', '.join(args)}),")
        out.append("    },")
        if self.frame_checks:
            out.append("    checks=[")
            out += [f"        {c.render(polars)}," for c in self.frame_checks]
            out.append("    ],")
        if self.unique:
            out.append(f"    unique={self.unique!r},")
        out += [
            "    strict=True,",
            "    coerce=False,",
            f"    name={contract.contract!r},",
            f"    metadata={{'tscontract': {{'contract': {contract.contract!r}, 'version': {contract.version!r}}}}},",
            ")",
        ]
        return "\n".join(out)


@dataclass(frozen=True)
class _Code:
    """One check of the generated schema: a check function of the module, or pandera's built-in check
    ``function`` (``isin``, ``eq``) called with ``argument``; ``label``: its name and error; ``reads``:
    the columns a frame check reads."""

    function: str
    label: str
    argument: str | None = None
    reads: tuple[str, ...] = ()

    def render(self, polars: bool, column: bool = False) -> str:
        module = "pap" if polars else "pa"
        if self.argument is not None:
            return f"{module}.Check.{self.function}({self.argument}, {self.label})"
        if not polars:
            return f"pa.Check({self.function}, {self.label})"
        where = "column=True" if column else f"reads={self.reads!r}"
        return f"pap.Check(_on_polars({self.function}, {where}), {self.label})"


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_inline(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, Decimal):
        return f"Decimal({str(value)!r})"
    if isinstance(value, datetime):
        return f"datetime.fromisoformat({value.isoformat()!r})"
    return repr(value)


def _unwrap(expression: str) -> str:
    """``(a & b)`` -> ``a & b`` when the outer parentheses enclose the whole expression."""
    if not (expression.startswith("(") and expression.endswith(")")):
        return expression
    depth = 0
    for i, ch in enumerate(expression):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(expression) - 1:
            return expression
    inner = expression[1:-1]
    try:  # a parenthesis inside a string literal could fool the count
        compile(inner, "<clause>", "eval")
    except SyntaxError:
        return expression
    return inner


def _python_literal(node: exp.Expression) -> str:
    if isinstance(node, exp.Boolean):
        return repr(bool(node.this))
    if isinstance(node, exp.Literal):
        return repr(node.this) if node.is_string else _number(node.this)
    raise AssertionError(f"a fixed value is a literal, not {node!r}")  # pragma: no cover


def _docstring(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _pretty(value: Any, indent: int = 0) -> str:
    """A Python literal for ``value`` (Decimals and datetimes as constructors); long ones one item a line."""
    pad = "    " * (indent + 1)
    close = "    " * indent
    inline = _inline(value)
    if len(inline) + len(pad) <= 100:
        return inline
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = "".join(f"{pad}{k!r}: {_pretty(v, indent + 1)},\n" for k, v in value.items())
        return "{\n" + items + close + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = "".join(f"{pad}{_pretty(v, indent + 1)},\n" for v in value)
        return "[\n" + items + close + "]"
    return inline
