"""Export to Great Expectations 1.x: an expectation suite as JSON, ``<contract>.gx.json``.

The file has the shape of ``ExpectationSuite.to_json_dict()`` — ``name``, ``expectations``
(each ``{type, kwargs, meta}``), ``meta``, ``notes`` — and loads with
``gx.ExpectationSuite(**json.load(f))``. Only the expectation names that are stable across
GX versions are used; every expectation's ``meta`` is ``{"clause": <the clause as written>,
"check_id": <tscontract check id>}``, and a clause that needs several expectations (``low <=
open <= high`` is two column pairs) gives each the same meta: the clause fails on the union
of their unexpected rows.

How the clauses map, on a typed pandas batch (Decimal objects, tz-aware instants):

* columns present / no unknown columns -> ``ExpectTableColumnsToMatchSet`` (``exact_match``
  false / true; an exact match also fails when a column is missing);
* not null -> ``ExpectColumnValuesToNotBeNull``; key -> ``ExpectCompoundColumnsToBeUnique``;
  enum members, a fixed value, ``x in (..)``, ``x = literal`` -> ``ExpectColumnValuesToBeInSet``;
* ``x >= 0``, ``x between a and b`` -> ``ExpectColumnValuesToBeBetween``; ``a <= b`` between two
  columns -> ``ExpectColumnPairValuesAToBeGreaterThanB`` (``or_equal``, rows with a null
  operand ignored, as SQL does); ``x is null or <clause on x>`` is the clause alone: column
  expectations skip nulls;
* ``value is null only when quality = bad`` -> ``ExpectColumnValuesToNotBeNull`` on the rows
  where the null is not excused: ``row_condition`` quality != bad *or quality is null*
  (an unknown quality does not excuse a null);
* catalog clauses, given a catalog: one expectation per series with ``row_condition``
  ``series_id == <id>`` and the series' catalog value (bounds, unit); unknown series, like
  SQL's unmatched join, are not judged (``catalog.series`` lists the known ones);
* the UTC rule and the time precision -> ``ExpectColumnValuesToMatchRegex`` over the value's
  text (GX matches ``str(value)``: a tz-aware instant prints ``+00:00``, a naive one no
  offset, a sub-millisecond one more fraction digits).

Not exported, with the reason in ``notes`` and ``meta``: field types other than enums (GX's
type expectations compare dtype names, not decimal precision and scale), the calibration in
force, cadence, sessions, completeness and freshness (windows over time, a calendar or the
wall clock), and any row clause outside the forms above.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.regex import python_anchored
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports._records import RAW_INPUT
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import PrecisionParams, TypeParams
from tscontract.typemap.table import FRACTION_DIGITS

_RFC3339 = r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?"
# a value that reads as an RFC 3339 instant must be written at UTC; anything else is the type's business
UTC_REGEX = rf"^(?!{_RFC3339}$)|([Zz]|[+-]00:00)$"

# what the suite states of each kind of check (HANDLERS), and why it states none of the others
_CALIBRATION = (
    "needs the calibration record in force at each row's instant (an interval lookup per series); "
    "GX expectations compare a column with constants or with one other column"
)
UNSUPPORTED: dict[CheckKind, str] = {
    CheckKind.CALIBRATION_IN_FORCE: _CALIBRATION,
    CheckKind.WELL_FORMED: RAW_INPUT,
    CheckKind.CADENCE: "needs a window over each series' sorted instants (the gap between points); "
    "GX expectations judge rows or whole columns, not consecutive points",
    CheckKind.SESSION: "needs the series' session calendar (an exchange's or declared weekly hours, with holidays)",
    CheckKind.COMPLETENESS: "counts expected points per window on the cadence and calendar",
    CheckKind.FRESHNESS: "judged against the wall clock at validation time (--now), not the batch",
    CheckKind.PLAUSIBILITY: "history-derived bounds change with every profile; run tscontract validate --bounds",
    CheckKind.SCALE_SHIFT: "compares the batch's typical magnitude with history; run tscontract validate --bounds",
    CheckKind.STEP: "compares each point with its neighbours in its series; "
    "GX expectations judge rows or whole columns",
    CheckKind.SQL_CHECK: "a query over the batch compared with a number; no stable expectation runs SQL",
}
HANDLERS = frozenset(CheckKind) - set(UNSUPPORTED)
_TYPE_REASONS = {
    "decimal": "GX has no expectation for decimal precision and scale (ExpectColumnValuesToBeOfType sees only "
    "the Decimal class; a regex over str(Decimal) breaks on exponent notation)",
    "timestamp": "a typed column's instant-ness is its dtype, which GX's type expectations name per backend; "
    "the UTC rule and the precision are exported (time.timezone, time.precision)",
}
_TYPE_REASON = (
    "GX's type expectations compare the pandas dtype's name, which differs per reading of the same data "
    "(object, str, string[pyarrow]; int64, Int64, int64[pyarrow]), not the contract's type"
)
_NO_CATALOG = "needs the series catalog: export with a catalog to embed its values"
_COMPARISONS = (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ)
_FLIPPED: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.EQ: exp.EQ,
}
_NEGATED: dict[type[exp.Expression], str] = {exp.LT: ">=", exp.LTE: ">", exp.GT: "<=", exp.GTE: "<", exp.EQ: "!="}

Expectation = tuple[str, dict[str, Any]]


class Unsupported(Exception):
    """A clause no stable expectation expresses; the message is the reason."""


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """The suite ``<contract>.gx.json`` for ``plan``."""
    if options:
        raise TypeError(f"unknown gx export option(s): {', '.join(sorted(options))}")
    contract = plan.contract
    result = ExportResult("gx", contract.contract, contract.version)
    expectations: list[dict[str, Any]] = []
    for check in plan.checks:
        try:
            found = _expectations(check, plan)
        except Unsupported as exc:
            result.skip(check, str(exc))
            continue
        share = check.params.max_failing
        if share is not None:  # a share of failing rows tolerated: GX's `mostly` on each column expectation
            found = [(kind, kwargs | {"mostly": float(1 - share.ratio)}) for kind, kwargs in found]
        meta = {"clause": check.clause, "check_id": check.id}
        severity = {"severity": "warning"} if check.severity == "warning" else {}  # GX >= 1.5 FailureSeverity
        expectations += [{"type": kind, "kwargs": kwargs, "meta": dict(meta), **severity} for kind, kwargs in found]
        result.exported.append(check.id)
    major = contract.version.split(".")[0]
    suite = {
        "name": f"{contract.contract}_v{major}",
        "id": None,
        "expectations": expectations,
        "meta": {
            "tscontract": {
                "contract": contract.contract,
                "version": contract.version,
                "exported": result.exported,
                "not_exported": [n.to_json() for n in result.not_exported],
            }
        },
        "notes": result.header_lines(),
    }
    content = json.dumps(suite, indent=2, ensure_ascii=False) + "\n"
    result.artifacts.append(Artifact(f"{contract.contract}.gx.json", content))
    return result


def _expectations(check: Check, plan: CheckPlan) -> list[Expectation]:
    kind = check.kind
    if kind == "required_columns":
        return [("expect_table_columns_to_match_set", {"column_set": list(check.columns), "exact_match": False})]
    if kind == "unknown_columns":
        return [("expect_table_columns_to_match_set", {"column_set": list(check.columns), "exact_match": True})]
    if kind == "type":
        dtype = check.params_of(TypeParams).dtype
        if dtype.kind != "enum":
            raise Unsupported(_TYPE_REASONS.get(dtype.kind, _TYPE_REASON))
        return [_in_set(check.columns[0], list(dtype.members))]
    if kind == "not_null":
        return [_not_null(check.columns[0])]
    if kind == "fixed_value":
        return [_in_set(check.columns[0], [_literal(check.predicate.expression)])]  # type: ignore[union-attr]
    if kind in ("invariant", "constraint", "series_pattern"):
        if check.params.needs_catalog and plan.catalog is None:
            raise Unsupported(_NO_CATALOG)
        ref = check.params.catalog
        _refuse_floats(check.predicate, plan)  # type: ignore[arg-type]
        return _translate(check.predicate, plan, ref.key if ref is not None else None)  # type: ignore[arg-type]
    if kind == "utc_instant":
        return [("expect_column_values_to_match_regex", {"column": c, "regex": UTC_REGEX}) for c in check.columns]
    if kind == "time_precision":
        # each instant column to its own type's unit, as the engine judges it
        return [
            (
                "expect_column_values_to_match_regex",
                {
                    "column": c,
                    "regex": precision_regex(
                        plan.contract.fields[c].type.time_unit or check.params_of(PrecisionParams).unit
                    ),
                },
            )
            for c in check.columns
        ]
    if kind == "unique_key":
        return [("expect_compound_columns_to_be_unique", {"column_list": list(check.columns)})]
    if kind == "unique":
        return [("expect_column_values_to_be_unique", {"column": check.columns[0]})]
    if kind == "row_count":
        bounds = plan.contract.row_count
        assert bounds is not None
        return [("expect_table_row_count_to_be_between", {"min_value": bounds.min, "max_value": bounds.max})]
    if kind == "catalog_series":
        if plan.catalog is None or not check.columns:
            raise Unsupported(_NO_CATALOG)
        return [_in_set(check.columns[0], sorted(plan.catalog.series))]
    if kind == "calibration_in_force" and plan.catalog is None:
        raise Unsupported(_NO_CATALOG)
    raise Unsupported(UNSUPPORTED[kind])


_FLOAT_REASON = (
    "a float column may hold NaN, which GX's column expectations skip as missing where the contract's "
    "comparison with NaN is false (the row fails)"
)


def _refuse_floats(predicate: exp.Expression, plan: CheckPlan) -> None:
    """A row clause over a float column is not exported: no stable expectation fails a NaN row."""
    fields = plan.contract.fields
    for column in predicate.find_all(exp.Column):
        if column.table != CATALOG_TABLE and column.name in fields and fields[column.name].type.kind == "float":
            raise Unsupported(_FLOAT_REASON)


def precision_regex(unit: str) -> str:
    """Passes unless the first fraction has a significant digit past ``unit``'s places."""
    digits = FRACTION_DIGITS[unit]
    return rf"^(?![^.]*\.\d{{{digits}}}0*[1-9])"


# ---------------------------------------------------------------- row clauses


def _translate(node: exp.Expression, plan: CheckPlan, catalog_key: str | None) -> list[Expectation]:
    node = _strip(node)
    if isinstance(node, exp.And):
        return _translate(node.this, plan, catalog_key) + _translate(node.expression, plan, catalog_key)
    if isinstance(node, exp.Or):
        return _disjunction(node, plan, catalog_key)
    if isinstance(node, exp.Not) and _is_null_test(node.this):
        return [_not_null(_column(_strip(node.this).this))]
    if isinstance(node, _COMPARISONS):
        return _comparison(node, plan, catalog_key)
    if isinstance(node, exp.Between):
        subject = _column(node.this)
        low, high = _strip(node.args["low"]), _strip(node.args["high"])
        if _is_catalog(low) and _is_catalog(high):
            lows = _catalog_values(plan, low.name)
            highs = _catalog_values(plan, high.name)
            return [
                _between(subject, lows[sid], highs[sid], row_condition=_series_is(catalog_key, sid))
                for sid in lows
                if sid in highs
            ]
        return [_between(subject, _number(low), _number(high))]
    if isinstance(node, exp.In):
        return [_in_set(_column(node.this), [_literal(item) for item in node.expressions])]
    if isinstance(node, exp.RegexpFullMatch):  # the whole value, as the engines match, in Python's re (GX pandas)
        regex = python_anchored(node.expression.this)
        return [("expect_column_values_to_match_regex", {"column": _column(node.this), "regex": regex})]
    raise Unsupported(f"no stable expectation for {_sql(node)}")


def _disjunction(node: exp.Or, plan: CheckPlan, catalog_key: str | None) -> list[Expectation]:
    left, right = _strip(node.this), _strip(node.expression)
    implication = _implication(left, right)
    if implication is not None:
        return [implication]
    for null_side, other in ((left, right), (right, left)):
        if _is_null_test(null_side):
            column = _column(_strip(null_side).this)
            expectations = _translate(other, plan, catalog_key)
            # 'x is null or P(x)' is P alone where every expectation skips rows with a null x
            if expectations and all(_skips_nulls_of(column, e) for e in expectations):
                return expectations
    raise Unsupported(f"no stable expectation for the disjunction {_sql(node)}")


def _implication(left: exp.Expression, right: exp.Expression) -> Expectation | None:
    """``NOT x IS NULL OR COALESCE(cond, FALSE)``: x may be null only where cond holds."""
    if not (isinstance(left, exp.Not) and _is_null_test(left.this) and isinstance(right, exp.Coalesce)):
        return None
    fallback = right.expressions
    if len(fallback) != 1 or not (isinstance(fallback[0], exp.Boolean) and not fallback[0].this):
        return None
    subject = _column(_strip(left.this).this)
    condition = _strip(right.this)
    if isinstance(condition, exp.In) and all(isinstance(e, exp.Literal) for e in condition.expressions):
        column = _column(condition.this)
        not_excused = _comparison_condition(column, "NOT_IN", [_literal(e) for e in condition.expressions])
    elif isinstance(condition, _COMPARISONS):
        column, op, value = _column_vs_literal(condition)
        not_excused = _comparison_condition(column, _NEGATED[op], value)
    else:
        raise Unsupported(f"no row_condition for {_sql(condition)}")
    # the null is excused only where the condition is known true: a null condition column excuses nothing
    row_condition = {"type": "or", "conditions": [not_excused, _nullity(column)]}
    return ("expect_column_values_to_not_be_null", {"column": subject, "row_condition": row_condition})


def _comparison(node: exp.Expression, plan: CheckPlan, catalog_key: str | None) -> list[Expectation]:
    left, right = _strip(node.this), _strip(node.expression)
    op = type(node)
    if _is_catalog(left) or isinstance(left, exp.Literal | exp.Neg):
        left, right, op = right, left, _FLIPPED[op]
    column = _column(left)
    if isinstance(right, exp.Column) and not _is_catalog(right):
        other = right.name
        if op is exp.EQ:
            raise Unsupported(f"no stable expectation for the column equality {_sql(node)}")
        greater, smaller = (other, column) if op in (exp.LT, exp.LTE) else (column, other)
        return [
            (
                "expect_column_pair_values_a_to_be_greater_than_b",
                {
                    "column_A": greater,
                    "column_B": smaller,
                    "or_equal": op in (exp.LTE, exp.GTE),
                    "ignore_row_if": "either_value_is_missing",
                },
            )
        ]
    if _is_catalog(right):
        if op is not exp.EQ:
            raise Unsupported(f"no stable expectation for {_sql(node)}")
        values = _catalog_values(plan, right.name)
        return [_in_set(column, [value], row_condition=_series_is(catalog_key, sid)) for sid, value in values.items()]
    if op is exp.EQ:
        return [_in_set(column, [_literal(right)])]
    value = _number(right)
    if op in (exp.GT, exp.GTE):
        return [_between(column, value, None, strict_min=op is exp.GT)]
    return [_between(column, None, value, strict_max=op is exp.LT)]


def _column_vs_literal(node: exp.Expression) -> tuple[str, type[exp.Expression], Any]:
    left, right, op = _strip(node.this), _strip(node.expression), type(node)
    if isinstance(left, exp.Literal | exp.Neg):
        left, right, op = right, left, _FLIPPED[op]
    return _column(left), op, _literal(right)


# ---------------------------------------------------------------- pieces


def _in_set(column: str, values: list[Any], row_condition: dict[str, Any] | None = None) -> Expectation:
    kwargs: dict[str, Any] = {"column": column, "value_set": values}
    if row_condition is not None:
        kwargs["row_condition"] = row_condition
    return ("expect_column_values_to_be_in_set", kwargs)


def _not_null(column: str) -> Expectation:
    return ("expect_column_values_to_not_be_null", {"column": column})


def _between(
    column: str,
    low: Any,
    high: Any,
    strict_min: bool = False,
    strict_max: bool = False,
    row_condition: dict[str, Any] | None = None,
) -> Expectation:
    kwargs: dict[str, Any] = {"column": column}
    if row_condition is not None:
        kwargs["row_condition"] = row_condition
    if low is not None and high is not None and (low > high or (low == high and (strict_min or strict_max))):
        # between 4096 and 2 holds for no value, so every value fails; GX fails such a range whatever the rows
        return ("expect_column_values_to_be_null", kwargs)
    if low is not None:
        kwargs["min_value"] = _json_number(low)
        kwargs["strict_min"] = strict_min
    if high is not None:
        kwargs["max_value"] = _json_number(high)
        kwargs["strict_max"] = strict_max
    return ("expect_column_values_to_be_between", kwargs)


def _skips_nulls_of(column: str, expectation: Expectation) -> bool:
    kind, kwargs = expectation
    if kind == "expect_column_pair_values_a_to_be_greater_than_b":
        return column in (kwargs["column_A"], kwargs["column_B"])
    return kind != "expect_column_values_to_not_be_null" and kwargs.get("column") == column


def _series_is(key: str | None, series_id: str) -> dict[str, Any]:
    assert key is not None
    return _comparison_condition(key, "==", series_id)


def _comparison_condition(column: str, operator: str, value: Any) -> dict[str, Any]:
    return {"type": "comparison", "column": {"name": column}, "operator": operator, "parameter": value}


def _nullity(column: str) -> dict[str, Any]:
    return {"type": "nullity", "column": {"name": column}, "is_null": True}


def _catalog_values(plan: CheckPlan, attribute: str) -> dict[str, Any]:
    """Series id -> the catalog value ``catalog.<attribute>`` stands for (series without it: no entry)."""
    if plan.catalog is None:
        raise Unsupported(_NO_CATALOG)
    values: dict[str, Any] = {}
    for series_id, entry in plan.catalog.series.items():
        value = entry.value_of(attribute)
        if value is not None:
            values[series_id] = value
    return values


def _strip(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _is_null_test(node: exp.Expression) -> bool:
    node = _strip(node)
    return isinstance(node, exp.Is) and isinstance(node.expression, exp.Null) and isinstance(node.this, exp.Column)


def _is_catalog(node: exp.Expression) -> bool:
    return isinstance(node, exp.Column) and node.table == CATALOG_TABLE


def _column(node: exp.Expression) -> str:
    node = _strip(node)
    if not isinstance(node, exp.Column) or node.table == CATALOG_TABLE:
        raise Unsupported(f"GX expectations name columns; {_sql(node)} is an expression")
    return node.name


def _literal(node: exp.Expression) -> Any:
    node = _strip(node)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    return _json_number(_number(node))


def _number(node: exp.Expression) -> Decimal:
    node = _strip(node)
    if isinstance(node, exp.Neg):
        return -_number(node.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        return Decimal(node.this)
    raise Unsupported(f"GX bounds are numbers; {_sql(node)} is not")


def _json_number(value: Decimal) -> int | float:
    """The number as JSON; refused where a double would change it (GX compares against the double)."""
    if value == value.to_integral_value() and abs(value) < 2**53:
        return int(value)
    as_float = float(value)
    if Decimal(as_float) != value:
        raise Unsupported(f"the bound {value} is not exact as a JSON double; GX would compare against a rounded value")
    return as_float


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect="duckdb")
