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

Every ``Check`` is named by its tscontract check id and carries the clause, verbatim, as its
``error``; ``BUILTIN_CHECKS`` in the generated module says which check ids pandera's built-in
checks (dtype, nullability, uniqueness, strictness) stand for. Cadence, sessions,
completeness and freshness need windows over time, a calendar or the wall clock and are
listed in the header as not exported.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.regex import python_pattern
from tscontract.contract.types import DataType
from tscontract.export import Artifact, ExportResult
from tscontract.export._records import tolerance_reason
from tscontract.plan.checks import Check, CheckPlan

WINDOW_REASONS = {
    "cadence": "needs a window over each series' sorted instants (gaps, revisions sharing an instant); "
    "pandera checks rows, not the steps between them",
    "session": "needs the series' session calendar (an exchange's or declared weekly hours, with holidays)",
    "completeness": "counts expected points per window on the cadence and calendar; not a row check",
    "freshness": "judged against the wall clock at validation time (--now), not the frame",
    "plausibility": "history-derived bounds change with every profile; run tscontract validate --bounds",
    "scale_shift": "compares the batch's typical magnitude with history; run tscontract validate --bounds",
    "well_formed": "judged on the input as read (a malformed line), before there is a frame",
}
_NO_CATALOG = "needs the series catalog: export with a catalog to embed its values"
_COMPARE = {exp.EQ: "==", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}
_FUNCTIONS = {
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
        if type(node) in _COMPARE:
            return f"({row_value(walk(node.this))} {_COMPARE[type(node)]} {walk(node.expression)})"
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
        self.frame_checks: list[str] = []
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
            self.column_check(check.columns[0], f"pa.Check.eq({value}, {self.label(check)})")
        elif check.params.get("max_failing") is not None:
            return tolerance_reason(check, "a pandera check fails on any failing row")
        elif kind in ("invariant", "constraint", "series_pattern"):
            return self.add_predicate(check)
        elif kind in ("utc_instant", "time_precision"):
            helper = "_utc_instant" if kind == "utc_instant" else "_within_precision"
            for column in check.columns:
                dtype = self.contract.fields[column].type
                # each instant column to its own type's unit, as the engine judges it
                argument = "" if kind == "utc_instant" else repr(dtype.time_unit or check.params.get("unit"))
                self.column_check(column, f"pa.Check({helper}({argument}), {self.label(check)})")
        elif kind == "unique_key":
            self.unique = list(check.columns)
            self.builtin["multiple_fields_uniqueness"] = check.id
        elif kind == "unique":  # a named check (not unique=True): it carries the check id and can warn
            self.column_check(check.columns[0], f"pa.Check(_unique_values, {self.label(check)})")
        elif kind == "catalog_series":
            if self.plan.catalog is None or not check.columns:
                return _NO_CATALOG
            series_ids = sorted(self.plan.catalog.series)
            self.column_check(check.columns[0], f"pa.Check.isin({series_ids!r}, {self.label(check)})")
        elif kind == "calibration_in_force":
            return self.add_calibration(check)
        elif kind == "step":
            self.add_step(check)
        elif kind in WINDOW_REASONS:
            return WINDOW_REASONS[kind]
        else:
            return f"no pandera translation for {kind} checks"
        return None

    def add_type(self, check: Check) -> None:
        column = check.columns[0]
        dtype: DataType = check.params["dtype"]
        kind = dtype.kind
        label = self.label(check)
        # No pandera dtype: one pins a backing (object, 'string[python]', Int64, datetime64[ms, UTC]) and
        # refuses the same values backed by Arrow ('string[pyarrow]', 'int64[pyarrow]', timestamp[ms,
        # tz=UTC]). The named check judges the logical type on any backing, as the engine does.
        if kind in ("string", "enum", "bool", "float"):
            self.column_check(column, f"pa.Check(_logical({kind if kind != 'enum' else 'string'!r}), {label})")
            if kind == "enum":
                self.column_check(column, f"pa.Check.isin({list(dtype.members)!r}, {label})")
        elif kind == "int":
            self.column_check(column, f"pa.Check(_logical('int', {dtype.bits or 64}), {label})")
        elif kind == "decimal":
            self.column_check(column, f"pa.Check(_decimal_fits({dtype.precision}, {dtype.scale}), {label})")
        elif kind == "timestamp":
            self.column_check(column, f"pa.Check(_is_instant, {label})")
        elif kind == "date":
            self.column_check(column, f"pa.Check(_is_date, {label})")
        else:  # bytes
            self.column_check(column, f"pa.Check(_is_bytes, {label})")

    def add_predicate(self, check: Check) -> str | None:
        if check.predicate is None:
            return "the clause has no predicate"
        ref = check.params.get("catalog")
        if check.params.get("needs_catalog") and self.plan.catalog is None:
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
        self.frame_checks.append(f"pa.Check({name}, {self.label(check)})")
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
        self.frame_checks.append(
            f"pa.Check(_calibration_in_force({series!r}, {calibration!r}, {instant!r}), {self.label(check)})"
        )
        return None

    def add_step(self, check: Check) -> None:
        """``fields.<name>.step`` as a frame-wide check: the rule of engines/step.py, series by series."""
        step = check.params["step"]
        if _STEP_FUNCTION not in self.functions:
            self.functions.append(_STEP_FUNCTION)
        gap = int(step.max_gap.seconds * 1_000_000) if step.max_gap is not None else None
        rule = (
            f"max_abs={str(step.max_abs)!r}"
            if step.max_abs is not None
            else f"max_mad={str(step.max_mad)!r}, half={(step.window - 1) // 2}, min_mad={str(step.min_mad or 0)!r}"
        )
        args = (
            f"{check.params['field']!r}, {self.contract.time.column!r}, {list(check.params['series'])!r}, "
            f"{check.params['revision']!r}, {rule}, max_gap_us={gap!r}"
        )
        self.frame_checks.append(f"pa.Check(lambda df: _step_holds(df, {args}), {self.label(check)})")

    def column_check(self, column: str, code: str) -> None:
        self.columns[column]["checks"].append(code)

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
        lines += ["", _RUNTIME, "\n\n".join(self.functions), "", self.schema_text(), ""]
        return "\n".join(lines).replace("\n\n\n\n", "\n\n\n")

    def schema_text(self) -> str:
        contract = self.contract
        out = ["schema = pa.DataFrameSchema(", "    columns={"]
        for name, spec in self.columns.items():
            args = [spec["dtype"] or "None", f"nullable={spec['nullable']}", "required=True", "coerce=False"]
            if spec["checks"]:
                checks = "".join(f"            {c},\n" for c in spec["checks"])
                args.append(f"checks=[\n{checks}        ]")
            out.append(f"        {name!r}: pa.Column({', '.join(args)}),")
        out.append("    },")
        if self.frame_checks:
            out.append("    checks=[")
            out += [f"        {c}," for c in self.frame_checks]
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


# The generated module's runtime: SQL semantics over pandas, no dependency on tscontract.
_STEP_FUNCTION = r'''
def _step_holds(df, field, time, series, revision, max_abs=None, max_mad=None, half=0, min_mad="0", max_gap_us=None):
    """tscontract's step clause: per series (time order, latest revision, nulls skipped) a point fails
    when |x - previous| > max_abs, or when |x - m| > max_mad * max(MAD, min_mad, 1% of |m|) over its
    neighbours (up to ``half`` before and after, at least ``half`` of them); a point further than
    max_gap_us in time is neither a previous point nor a neighbour."""
    import statistics

    holds = pd.Series(True, index=df.index)
    kept = df[df[field].notna() & df[time].notna()]
    if revision is not None:
        latest = kept.groupby([*series, time], dropna=False)[revision].transform("max")
        kept = kept[kept[revision] == latest]
    gap = None if max_gap_us is None else pd.Timedelta(microseconds=max_gap_us)
    groups = kept.groupby(series, dropna=False, sort=False) if series else [(None, kept)]
    for _, points in groups:
        points = points.assign(_pos=range(len(points))).sort_values([time, "_pos"], kind="stable")
        instants = list(pd.to_datetime(points[time], utc=True))
        values = list(points[field])
        number = (lambda v: Decimal(v)) if values and isinstance(values[0], Decimal) else float
        near = lambda i, j: gap is None or abs(instants[i] - instants[j]) <= gap  # noqa: E731
        for i, index in enumerate(points.index):
            x = values[i]
            if max_abs is not None:
                fails = i > 0 and near(i, i - 1) and abs(x - values[i - 1]) > number(max_abs)
            else:
                around = [values[j] for j in range(max(0, i - half), min(len(values), i + half + 1))
                          if j != i and near(i, j)]
                if len(around) < max(half, 1):
                    continue
                m = statistics.median(around)
                mad = statistics.median([abs(v - m) for v in around])
                floor = max(mad, number(min_mad), number("0.01") * abs(m))
                fails = abs(x - m) > number(max_mad) * floor
            if fails:
                holds[index] = False
    return holds
'''

_RUNTIME = r'''
# ---------------------------------------------------------------- SQL semantics over pandas


def _elementwise(function):
    """``function`` over object arrays; a type clash or an arithmetic error is an unknown result."""

    def safe(*values):
        try:
            with localcontext() as context:
                context.prec = 200  # decimals are exact: never rounded to 28 digits
                return function(*values)
        except (TypeError, ValueError, ArithmeticError):
            return None

    return np.frompyfunc(safe, 2, 1)


def _arithmetic(op):
    # exact on integers and decimals (never rounded); binary64 where one operand is a float
    def apply(a, b):
        if isinstance(a, float) or isinstance(b, float):
            return op(float(a), float(b))
        return op(a, b)

    return apply


def _divide(a, b):
    # '/' divides in binary64: x / 0 is +inf or -inf (the signs of x and of the zero), 0 / 0 and NaN / 0 are NaN
    a, b = float(a), float(b)
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _is_nan(value):
    return isinstance(value, float) and value != value


def _time_text(text, other):
    """A time literal beside an instant (text without an offset is UTC, a date is its UTC midnight) or a date."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return text
    if len(text) == len("2026-01-01"):
        found = found.date()
        if isinstance(other, datetime):
            return datetime(found.year, found.month, found.day, tzinfo=timezone.utc)
        return found
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)


def _compare(op):
    # a NaN operand makes a comparison false (a null beside it: unknown, decided before this runs);
    # a float beside an exact number compares in binary64; a time literal reads as the time it names
    def apply(a, b):
        if _is_nan(a) or _is_nan(b):
            return False
        if isinstance(a, date) and isinstance(b, str):
            b = _time_text(b, a)
        elif isinstance(b, date) and isinstance(a, str):
            a = _time_text(a, b)
        numbers = not isinstance(a, str | bool | date) and not isinstance(b, str | bool | date)
        if numbers and isinstance(a, float) != isinstance(b, float):
            return op(float(a), float(b))
        return op(a, b)

    return apply


def _extreme(pick):
    # least / greatest: NaN where an argument is NaN, binary64 where one is a float (nulls decided before)
    def apply(a, b):
        if _is_nan(a) or _is_nan(b):
            return math.nan
        if isinstance(a, float) or isinstance(b, float):
            return pick(float(a), float(b))
        return pick(a, b)

    return apply


_SHARP_S_UPPER = "\u1e9e"


def _case(text, upper):
    """Each character to its one-character case partner (upper ß is ẞ); others stay as they are."""
    out = []
    for char in text:
        mapped = _SHARP_S_UPPER if upper and char == "ß" else char.upper() if upper else char.lower()
        out.append(mapped if len(mapped) == 1 else char)
    return "".join(out)


_IS_VALUE = np.frompyfunc(lambda value: value is not None, 1, 1)


def _python(value):
    return value.to_pydatetime() if isinstance(value, pd.Timestamp) else value


def _round(value, digits):
    digits = int(digits)
    if isinstance(value, int):
        return value if digits >= 0 else int(Decimal(value).quantize(Decimal(10) ** -digits, ROUND_HALF_UP))
    exact = value if isinstance(value, Decimal) else Decimal(repr(value))
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return rounded if isinstance(value, Decimal) else float(rounded)


class _Sql:
    """One expression's value per row; ``known`` is False where SQL would have NULL."""

    __slots__ = ("known", "values")
    __hash__ = None  # == builds a condition

    def __init__(self, values, known):
        self.values = values
        self.known = known

    def _binary(self, other, function):
        other = _Rows.wrap(other, len(self.known))
        known = self.known & other.known
        values = np.full(len(known), None, dtype=object)
        if known.any():
            values[known] = _elementwise(function)(self.values[known], other.values[known])
        return _Sql(values, known & _IS_VALUE(values).astype(bool))

    def _truth(self):
        true = np.zeros(len(self.known), dtype=bool)
        true[self.known] = self.values[self.known].astype(bool)
        return true, self.known & ~true

    @staticmethod
    def _logic(true, false):
        return _Sql(true.astype(object), true | false)

    def __and__(self, other):
        true, false = self._truth()
        other_true, other_false = _Rows.wrap(other, len(self.known))._truth()
        return _Sql._logic(true & other_true, false | other_false)

    def __or__(self, other):
        true, false = self._truth()
        other_true, other_false = _Rows.wrap(other, len(self.known))._truth()
        return _Sql._logic(true | other_true, false & other_false)

    __rand__ = __and__
    __ror__ = __or__

    def __invert__(self):
        true, false = self._truth()
        return _Sql._logic(false, true)

    def __neg__(self):
        return self._binary(0, lambda a, _: -a)

    def __eq__(self, other):
        return self._binary(other, _compare(operator.eq))

    def __ne__(self, other):
        return self._binary(other, _compare(operator.ne))

    def __lt__(self, other):
        return self._binary(other, _compare(operator.lt))

    def __le__(self, other):
        return self._binary(other, _compare(operator.le))

    def __gt__(self, other):
        return self._binary(other, _compare(operator.gt))

    def __ge__(self, other):
        return self._binary(other, _compare(operator.ge))

    def __add__(self, other):
        return self._binary(other, _arithmetic(operator.add))

    def __sub__(self, other):
        return self._binary(other, _arithmetic(operator.sub))

    def __mul__(self, other):
        return self._binary(other, _arithmetic(operator.mul))

    def __truediv__(self, other):
        return self._binary(other, _divide)

    # a literal on the left: 1 - x, 2 / x
    def _reflected(self, other, function):
        return _Rows.wrap(other, len(self.known))._binary(self, function)

    def __radd__(self, other):
        return self._reflected(other, _arithmetic(operator.add))

    def __rsub__(self, other):
        return self._reflected(other, _arithmetic(operator.sub))

    def __rmul__(self, other):
        return self._reflected(other, _arithmetic(operator.mul))

    def __rtruediv__(self, other):
        return self._reflected(other, _divide)


class _Rows:
    """The frame's columns as ``_Sql`` values, and the clause functions."""

    def __init__(self, df):
        self.df = df
        self.n = len(df)

    @staticmethod
    def wrap(value, n):
        if isinstance(value, _Sql):
            return value
        values = np.full(n, value, dtype=object)
        return _Sql(values, np.full(n, value is not None))

    def __getitem__(self, name):
        # NaN is a value, not a null, where the backing tells them apart (Arrow, masked Float64, object
        # columns of Python values); a numpy float column writes its nulls as NaN, as pandas does
        column = self.df[name]
        raw = column.to_numpy(dtype=object)
        missing = column.isna().to_numpy(dtype=bool, copy=True)
        if column.dtype == object:
            missing &= ~np.array([_is_nan(v) for v in raw], dtype=bool)
        values = np.empty(self.n, dtype=object)
        values[:] = [_python(v) for v in raw]
        values[missing] = None
        return _Sql(values, ~missing)

    def constant(self, value):
        return self.wrap(value, self.n)

    def catalog(self, attribute, key):
        """The catalog's ``attribute`` of each row's series (unknown series: NULL)."""
        values = self.df[key].map(CATALOG[attribute])
        return _Sql(values.to_numpy(dtype=object), values.notna().to_numpy(dtype=bool))

    def is_null(self, value):
        value = self.wrap(value, self.n)
        return _Sql((~value.known).astype(object), np.ones(self.n, dtype=bool))

    def coalesce(self, *values):
        values = [self.wrap(v, self.n) for v in values]
        out = np.full(self.n, None, dtype=object)
        known = np.zeros(self.n, dtype=bool)
        for value in values:
            take = value.known & ~known
            out[take] = value.values[take]
            known |= take
        return _Sql(out, known)

    def _unary(self, value, function):
        return self.wrap(value, self.n)._binary(0, lambda a, _: function(a))

    def abs(self, value):
        return self._unary(value, abs)

    def length(self, value):
        return self._unary(value, lambda a: len(str(a)))

    def lower(self, value):
        return self._unary(value, lambda a: _case(a, upper=False))

    def matches(self, value, pattern):
        # the whole value; the exporter wrote \d, \w, \s as the ASCII classes DuckDB's RE2 and Spark's Java read
        compiled = re.compile(pattern)
        return self._unary(value, lambda a: compiled.fullmatch(a) is not None)

    def upper(self, value):
        return self._unary(value, lambda a: _case(a, upper=True))

    def round(self, value, digits):
        return self.wrap(value, self.n)._binary(digits, _round)

    def _extreme(self, values, pick):
        # NULL when any argument is NULL: the engine's SQL for least / greatest
        values = [self.wrap(v, self.n) for v in values]
        out = values[0]
        for value in values[1:]:
            out = out._binary(value, pick)
        return out

    def least(self, *values):
        return self._extreme(values, _extreme(min))

    def greatest(self, *values):
        return self._extreme(values, _extreme(max))

    def holds(self, result):
        """The clause holds unless it is known to be false: an unknown clause passes."""
        _, false = self.wrap(result, self.n)._truth()
        return pd.Series(~false, index=self.df.index)


# ---------------------------------------------------------------- column checks

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_UTC_SUFFIX = re.compile(r"([Zz]|[+-]00:00)$")
_FRACTION = re.compile(r"\.(\d+)")
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _is_null(value):
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)


def _each(series, judge):
    """``judge`` per non-null value (a column whose dtype does not settle it); nulls pass."""
    return pd.Series([_is_null(v) or bool(judge(v)) for v in series.to_numpy(dtype=object)], index=series.index)


def _decimal_digits(value):
    """(integer digits, fraction digits) of a Decimal, trailing fraction zeros not counted."""
    _, digits, exponent = value.as_tuple()
    digits = list(digits)
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    while len(digits) > 1 and digits[0] == 0:
        digits.pop(0)
    if digits == [0]:
        return 0, 0
    return max(0, len(digits) + exponent), max(0, -exponent)


def _decimal_fits(precision, scale):
    integer_digits = precision - scale

    def fits(value):
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return abs(value) < 10**integer_digits
        if not isinstance(value, Decimal) or not value.is_finite():
            return False
        whole, fraction = _decimal_digits(value)
        return whole <= integer_digits and fraction <= scale

    def check(series):
        arrow = getattr(series.dtype, "pyarrow_dtype", None)
        if arrow is not None and hasattr(arrow, "scale"):
            if arrow.scale <= scale and arrow.precision - arrow.scale <= integer_digits:
                return pd.Series(True, index=series.index)
            return _each(series, fits)  # a wider decimal type: value by value
        if pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
            return series.isna() | (series.abs() < 10**integer_digits)
        if series.dtype == object:
            return _each(series, fits)
        return series.isna()  # floats (or anything else) are not decimals

    return check


def _instant_dtype(dtype):
    """(unit, zone) of a datetime column backed by numpy or Arrow (zone None: naive); None otherwise."""
    arrow = getattr(dtype, "pyarrow_dtype", None)
    if arrow is not None:
        unit = getattr(arrow, "unit", None)
        return (unit, arrow.tz) if hasattr(arrow, "tz") and unit in _FRACTION_DIGITS else None
    if isinstance(dtype, pd.DatetimeTZDtype):
        return dtype.unit, str(dtype.tz)
    if pd.api.types.is_datetime64_dtype(dtype):
        return np.datetime_data(dtype)[0], None
    return None


_ARROW_TEXT = ("string", "large_string", "string_view")
_ARROW_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 9, "uint16": 17, "uint32": 33}
_ARROW_NUMBERS = ("halffloat", "float", "double", "uint64")


def _logical(kind, bits=64):
    """The column holds ``kind`` values, however it is backed: numpy, pandas' masked arrays or Arrow.

    A column of another type fails every value (as the engine fails a Parquet column of the wrong
    physical type); an object column is judged value by value. Integers of a wider type than the
    declared one are judged by their values' range.
    """
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def value_fits(value):
        if kind == "string":
            return isinstance(value, str)
        if kind == "bool":
            return isinstance(value, bool | np.bool_)
        if isinstance(value, bool | np.bool_):
            return False
        if kind == "int":
            return isinstance(value, int | np.integer) and low <= value <= high
        return isinstance(value, int | float | Decimal | np.integer | np.floating)  # float: any number

    def check(series):
        dtype = series.dtype
        if dtype == object:
            return _each(series, value_fits)
        arrow = str(getattr(dtype, "pyarrow_dtype", ""))
        numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        if kind == "string":
            fits = isinstance(dtype, pd.StringDtype) or arrow in _ARROW_TEXT
        elif kind == "bool":
            fits = pd.api.types.is_bool_dtype(dtype)
        elif kind == "int":
            fits = numeric and pd.api.types.is_integer_dtype(dtype)
            width = _ARROW_BITS.get(arrow) if arrow else 8 * dtype.itemsize + (dtype.kind == "u")
            if fits and (width is None or width > bits):
                return series.isna() | series.between(low, high)
        else:  # float: any number
            fits = numeric or arrow in _ARROW_NUMBERS or arrow.startswith("decimal")
        return pd.Series(True, index=series.index) if fits else series.isna()

    return check


def _is_instant(series):
    if _instant_dtype(series.dtype) is not None:
        return pd.Series(True, index=series.index)
    return _each(series, lambda v: isinstance(v, datetime))


def _is_utc(value):
    return isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() == timedelta(0)


def _utc_instant():
    """Instants written at UTC: a tz-aware column is; a naive one is not; values judged one by one."""

    def check(series):
        typed = _instant_dtype(series.dtype)
        if typed is not None:  # a zone-aware column holds instants; a naive one does not
            return pd.Series(True, index=series.index) if typed[1] is not None else series.isna()

        def utc(value):
            if isinstance(value, datetime):
                return _is_utc(value)
            if isinstance(value, str) and _RFC3339.match(value):
                return bool(_UTC_SUFFIX.search(value))
            return True  # not an instant at all: the type check reports it

        return _each(series, utc)

    return check


def _within_precision(unit):
    digits = _FRACTION_DIGITS[unit]

    def fraction_digits(value):
        if isinstance(value, pd.Timestamp):
            text = f"{value.microsecond:06d}{value.nanosecond:03d}"
        elif isinstance(value, datetime):
            text = f"{value.microsecond:06d}"
        elif isinstance(value, str) and (match := _FRACTION.search(value)):
            text = match.group(1)
        else:
            return 0
        return len(text.rstrip("0"))

    def check(series):
        typed = _instant_dtype(series.dtype)
        if typed is not None and _FRACTION_DIGITS[typed[0]] <= digits:
            return pd.Series(True, index=series.index)
        return _each(series, lambda v: fraction_digits(v) <= digits)

    return check


def _is_date(series):
    return _each(series, lambda v: isinstance(v, date) and not isinstance(v, datetime))


def _is_bytes(series):
    return _each(series, lambda v: isinstance(v, bytes | bytearray))


def _unique_values(series):
    """No value on two rows; every row of a repeated value fails, nulls never repeat."""
    return ~series.duplicated(keep=False) | series.isna()


def _calibration_in_force(series_column, calibration_column, instant_column):
    """The calibration id is the record of the row's series in force at its instant."""

    def check(df):
        series = df[series_column]
        calibration = df[calibration_column]
        instants = pd.to_datetime(df[instant_column].map(lambda v: v if _is_utc(v) else None), utc=True)
        in_force = pd.Series(None, index=df.index, dtype=object)
        for series_id, calibration_id, valid_from, valid_to in CALIBRATIONS:
            hit = (series == series_id) & (instants >= valid_from)
            if valid_to is not None:
                hit &= instants < valid_to
            in_force[hit.fillna(False).to_numpy(dtype=bool)] = calibration_id
        # rows without a calibration id, of an unknown series or without a UTC instant are other checks' business
        judged = calibration.notna() & series.isin(CATALOG_SERIES) & instants.notna()
        return ~judged | (calibration == in_force).fillna(False).astype(bool)

    return check
'''
