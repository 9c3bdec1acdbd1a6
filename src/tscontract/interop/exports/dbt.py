"""dbt export: a model YAML whose enforced contract and data tests are the contract's clauses.

Artifacts:

- ``models/<model>.yml``: the model with ``contract: {enforced: true}``, every column with
  its DuckDB ``data_type`` and ``constraints: [{type: not_null}]`` where the contract forbids
  nulls, and ``data_tests`` (the dbt >= 1.8 key; generic test arguments under ``arguments:``,
  dbt >= 1.10): ``not_null`` (which also catches nulls in views, where dbt does not apply
  constraints), ``accepted_values`` for enums and for the catalog's series ids,
  ``unique_combination_of_columns`` for the key, ``expression_is_true`` per row clause with
  the predicate as DuckDB SQL and NULL operands passing (``coalesce((pred), true)``),
  ``accepted_range`` where a clause bounds one column by constants, ``recency`` per series for
  freshness and a per-series cadence test. Each test is named ``<model>__<check id>``, its
  description is the clause verbatim and ``config.meta.tscontract_check`` its check id; the
  model's ``meta.tscontract.enforced_by_contract`` lists the checks the enforced contract
  itself guarantees (columns, no unknown columns, types the column type alone settles).
- ``macros/tscontract_tests.sql`` (``dbt_tests="builtin"``, the default): the generic tests
  the YAML uses, with dbt_utils' names and arguments, so the project needs no package
  (``dbt deps`` needs the network). With ``dbt_tests="dbt_utils"`` the YAML calls
  ``dbt_utils.*`` instead and no macros file is written.

Catalog clauses (``within catalog hard_bounds``, ``equals catalog unit``, the series list, the
calibration in force) are exported when the plan has a catalog: the catalog is inlined as a
``VALUES`` list in a scalar subquery. Values are typed by the model's cast before any test
runs, so what only the raw input shows (a decimal with too many places, a timestamp written
without offset) stays with ``tscontract validate`` and is listed as not exported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from io import StringIO
from typing import Any

import sqlglot
import sqlglot.expressions as exp
from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from tscontract.contract.catalog import Catalog
from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.types import DataType
from tscontract.errors import InputError
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports._records import TABLE_REASONS, tolerance_reason
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import CadencedParams, FreshnessParams, PrecisionParams, StepParams, TypeParams
from tscontract.sql.columns import ident, sql_string
from tscontract.sql.semantics import lowered, written_out_division
from tscontract.sql.step import StepSql
from tscontract.typemap.sql import sql_type

DBT_TESTS = ("builtin", "dbt_utils")
MACROS_PATH = "macros/tscontract_tests.sql"
# an instant under each precision is a whole multiple of this many microseconds (timestamptz holds us)
_PRECISION_MODULUS = {"s": 1_000_000, "ms": 1_000}
_STRING_VALUED = ("unit", "dimension", "quote_currency", "venue", "calendar", "device_zone")


# ---------------------------------------------------------------- SQL shared with the Soda export


def relation_name(text: str) -> str:
    """A contract name as a plain SQL identifier (``ohlcv_1m``; ``a.b-c`` -> ``a_b_c``)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    return name if name and not name[0].isdigit() else f"t_{name}"


def column_type(dtype: DataType) -> str:
    """The DuckDB type of a contract type, as dbt's ``data_type`` and the model's cast write it."""
    return {"TIMESTAMPTZ": "timestamptz"}.get(sql_type(dtype), sql_type(dtype).lower())


def catalog_values(catalog: Catalog, attribute: str) -> list[tuple[str, Any]]:
    """``(series id, value)`` per catalog series for a clause's catalog attribute."""
    return [(series_id, entry.value_of(attribute)) for series_id, entry in catalog.series.items()]


def _value_sql(value: Any, sql_type_name: str) -> str:
    return f"CAST({'NULL' if value is None else sql_string(str(value))} AS {sql_type_name})"


def precision_modulus(plan: CheckPlan) -> int | None:
    """Microseconds an instant must be a multiple of under the time precision (None: any)."""
    time = plan.contract.time
    unit = time.precision or plan.contract.fields[time.column].type.time_unit
    return _PRECISION_MODULUS.get(unit or "")


def catalog_lookup_sql(catalog: Catalog, attribute: str, key: str) -> str:
    """A scalar subquery: the catalog's ``attribute`` for the row's series (NULL when unknown)."""
    typ = "VARCHAR" if attribute in _STRING_VALUED else "DECIMAL(38,10)"
    values = ", ".join(
        f"({sql_string(sid)}, {_value_sql(value, typ)})" for sid, value in catalog_values(catalog, attribute)
    )
    # inner names are prefixed so that the row's unqualified key column cannot bind to them
    return f"(SELECT c.__tsc_value FROM (VALUES {values}) AS c(__tsc_series, __tsc_value) WHERE c.__tsc_series = {key})"


def inline_catalog(predicate: exp.Expression, catalog: Catalog, key: str) -> exp.Expression:
    """``catalog.<attr>`` columns of a predicate replaced by lookups into the inlined catalog."""
    tree = predicate.copy()
    for column in list(tree.find_all(exp.Column)):
        if column.table == CATALOG_TABLE:
            column.replace(sqlglot.parse_one(catalog_lookup_sql(catalog, column.name, key), read="duckdb"))
    return tree


def needs_missing_catalog(plan: CheckPlan, check: Check) -> bool:
    return bool(check.params.needs_catalog) and plan.catalog is None


def holds_sql(plan: CheckPlan, check: Check) -> str | None:
    """DuckDB SQL that is true for a row satisfying a row check; NULL operands pass.

    None when the check is not a row predicate this module can write (type, null checks).
    """
    kind = check.kind
    if kind in ("fixed_value", "invariant", "constraint", "series_pattern"):
        assert check.predicate is not None
        # the engine's SQL: NaN, binary64 division and exact decimal arithmetic written out (sql.semantics)
        predicate = lowered(check.predicate, field_types(plan))
        # x / 0 written out as IEEE's +-Inf / NaN: DuckDB before 1.1 (soda-core's) gives NULL there, a pass
        predicate = predicate.transform(lambda node: written_out_division(node) or node, copy=False)
        ref = check.params.catalog
        if ref is not None:
            assert plan.catalog is not None
            predicate = inline_catalog(predicate, plan.catalog, ref.key)
        return f"coalesce(({predicate.sql(dialect='duckdb')}), true)"
    if kind == "time_precision":
        modulus = _PRECISION_MODULUS.get(check.params_of(PrecisionParams).unit)
        if modulus is None or not check.columns:
            return None
        parts = " AND ".join(f"epoch_us({c}) % {modulus} = 0" for c in check.columns)
        return f"coalesce(({parts}), true)"
    if kind == "calibration_in_force":
        return calibration_holds_sql(plan)
    return None


def calibration_holds_sql(plan: CheckPlan) -> str:
    """The row's ``calibration_id`` is the catalog's record in force for its series at its instant."""
    catalog = plan.catalog
    assert catalog is not None
    series = plan.contract.series_column
    when = plan.contract.time.column
    rows = []
    for series_id, entry in catalog.series.items():
        for cal in entry.calibrations:
            valid_to = f"CAST({sql_string(cal.valid_to.isoformat())} AS TIMESTAMPTZ)" if cal.valid_to else "NULL"
            rows.append(
                f"({sql_string(series_id)}, {sql_string(cal.id)}, "
                f"CAST({sql_string(cal.valid_from.isoformat())} AS TIMESTAMPTZ), {valid_to})"
            )
    known = ", ".join(sql_string(s) for s in catalog.series)
    in_force = (
        f"(SELECT k.__tsc_id FROM (VALUES {', '.join(rows)}) AS k(__tsc_series, __tsc_id, __tsc_from, __tsc_to) "
        f"WHERE k.__tsc_series = {series} AND k.__tsc_from <= {when} AND (k.__tsc_to IS NULL OR {when} < k.__tsc_to))"
    )
    # an unknown series is catalog.series' finding, not this one's
    return (
        f"coalesce((calibration_id IS NULL OR {series} NOT IN ({known}) "
        f"OR calibration_id IS NOT DISTINCT FROM {in_force}), true)"
    )


def _number(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Literal) and node.is_number:
        return node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_number:
        return "-" + node.this.this
    return None


def field_types(plan: CheckPlan) -> dict[str, DataType]:
    return {name: field.type for name, field in plan.contract.fields.items()}


def range_bounds(plan: CheckPlan, check: Check) -> tuple[str, tuple[str, bool] | None, tuple[str, bool] | None] | None:
    """:func:`column_range` of a row clause where a range test means the clause: never on a float column.

    A range test (``accepted_range``, Soda's ``min``/``max``) passes a NaN that the clause fails
    (NaN is not a number: every comparison with it is false), so a float column's bound is an
    ``expression_is_true`` / failed-rows test on the lowered predicate instead.
    """
    if check.predicate is None or check.params.catalog:
        return None
    bounds = column_range(check.predicate)
    if bounds is None or plan.contract.fields[bounds[0]].type.kind == "float":
        return None
    return bounds


def _data_column(node: exp.Expression) -> str | None:
    return node.name if isinstance(node, exp.Column) and node.table != CATALOG_TABLE else None


_FLIP: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.GTE: exp.LTE,
    exp.GT: exp.LT,
    exp.LTE: exp.GTE,
    exp.LT: exp.GT,
}


def column_range(predicate: exp.Expression) -> tuple[str, tuple[str, bool] | None, tuple[str, bool] | None] | None:
    """``(column, (min, inclusive) | None, (max, inclusive) | None)`` when a clause bounds one column by constants.

    ``volume >= 0``, ``x between 1 and 2``, ``0 <= x <= 10``; None for anything else.
    """
    if isinstance(predicate, exp.Between):
        column, low, high = (
            _data_column(predicate.this),
            _number(predicate.args["low"]),
            _number(predicate.args["high"]),
        )
        if column and low is not None and high is not None:
            return column, (low, True), (high, True)
        return None
    if isinstance(predicate, exp.And):
        left, right = column_range(predicate.this), column_range(predicate.expression)
        if not left or not right or left[0] != right[0]:
            return None
        lows = [b for b in (left[1], right[1]) if b is not None]
        highs = [b for b in (left[2], right[2]) if b is not None]
        if len(lows) > 1 or len(highs) > 1:
            return None
        return left[0], lows[0] if lows else None, highs[0] if highs else None
    op = type(predicate)
    if op not in _FLIP:
        return None
    column, number = _data_column(predicate.this), _number(predicate.expression)
    if column is None:
        column, number, op = _data_column(predicate.expression), _number(predicate.this), _FLIP[op]
    if column is None or number is None:
        return None
    inclusive = op in (exp.GTE, exp.LTE)
    bound = (number, inclusive)
    return (column, bound, None) if op in (exp.GTE, exp.GT) else (column, None, bound)


def cadence_interval_sql(plan: CheckPlan, check: Check) -> str:
    """The expected step in microseconds, per series from the catalog or fixed."""
    cadence = check.params_of(CadencedParams).cadence
    if cadence.source == "catalog":
        assert plan.catalog is not None
        series = plan.contract.series_column
        values = ", ".join(
            f"({sql_string(sid)}, {int(e.cadence.seconds * 1_000_000) if e.cadence else 'CAST(NULL AS BIGINT)'})"
            for sid, e in plan.catalog.series.items()
        )
        return (
            f"(SELECT c.__tsc_value FROM (VALUES {values}) AS c(__tsc_series, __tsc_value) "
            f"WHERE c.__tsc_series = {series})"
        )
    assert cadence.interval is not None  # a fixed cadence states its interval
    return str(int(cadence.interval.seconds * 1_000_000))


def cadence_skip_reason(plan: CheckPlan, check: Check) -> str | None:
    cadence = check.params_of(CadencedParams).cadence
    if cadence.step is not None:
        return (
            "a calendar cadence expects a point at an anchor day of each month, quarter or year in the series' "
            "zone, which the exported SQL has no zone rules for"
        )
    if cadence.uses_sessions or cadence.outside_session_forbidden:
        return "needs the venue's exchange sessions (calendar, holidays, half days), which SQL alone does not have"
    if needs_missing_catalog(plan, check):
        return "needs the series catalog for the interval per series; export with a catalog to inline it"
    return None


def cadence_tolerance(check: Check) -> tuple[str | None, int | None]:
    cadence = check.params_of(CadencedParams).cadence
    ratio = str(cadence.tolerance_ratio) if cadence.tolerance_ratio is not None else None
    fixed = int(cadence.tolerance.seconds * 1_000_000) if cadence.tolerance is not None else None
    return ratio, fixed


def cadence_failures_sql(plan: CheckPlan, check: Check, relation: str) -> str:
    """Points whose step from the previous point of their series breaks the cadence.

    As the engine: per series over valid instants; duplicates and revisions share an instant
    (step 0) and are not cadence faults; the tolerance is a share of the interval or fixed.
    """
    time_col = plan.contract.time.column
    series = plan.contract.series_column
    ratio, fixed = cadence_tolerance(check)
    tolerance = f"interval_us * {ratio}" if ratio is not None else str(fixed or 0)
    valid = [f"{time_col} IS NOT NULL"]
    if series:
        valid.append(f"{series} IS NOT NULL")
    modulus = precision_modulus(plan)
    if modulus:
        valid.append(f"epoch_us({time_col}) % {modulus} = 0")
    series_sql = series or "'*'"
    return (
        f"WITH points AS (\n"
        f"  SELECT {series_sql} AS series, {time_col} AS instant, {cadence_interval_sql(plan, check)} AS interval_us\n"
        f"  FROM {relation}\n"
        f"  WHERE {' AND '.join(valid)}\n"
        f"), steps AS (\n"
        f"  SELECT *, epoch_us(instant) - epoch_us(lag(instant) OVER (PARTITION BY series ORDER BY instant))"
        f" AS step_us\n"
        f"  FROM points\n"
        f")\n"
        f"SELECT * FROM steps WHERE step_us > 0 AND abs(step_us - interval_us) > {tolerance}\n"
    )


def freshness_seconds(check: Check) -> Decimal | None:
    """``max_age`` in seconds; None when it counts trading days (needs a calendar)."""
    max_age = check.params_of(FreshnessParams).freshness.max_age
    return max_age.seconds if max_age.fixed else None


def freshness_skip_reason(check: Check) -> str:
    """Why a ``max_age`` that is not fixed time is not exported."""
    if check.params_of(FreshnessParams).freshness.max_age.in_months:
        return "max_age counts calendar months in the series' zone, which the exported SQL has no rules for"
    return "max_age counts trading days, which need the venue's calendar"


def dump_yaml(data: Any, header: Iterable[str]) -> str:
    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = StringIO()
    yaml.dump(data, out)
    return "".join(f"# {line}\n" for line in header) + out.getvalue()


def literal_block(text: str) -> LiteralScalarString:
    return LiteralScalarString(text if text.endswith("\n") else text + "\n")


# ---------------------------------------------------------------- the dbt export

_SCHEMA_REASON = (
    "a check of the raw input: the model's cast settles each value before dbt sees it (data_type {type} is enforced)"
)
_TIMEZONE_REASON = (
    "a check of the raw input: the model's cast settles whether a value had a UTC offset "
    "(data_type timestamptz is enforced)"
)

# what the dbt tests state of each kind of check (HANDLERS), and why they state none of the others
UNSUPPORTED: dict[CheckKind, str] = {
    **TABLE_REASONS,
    CheckKind.UTC_INSTANT: _TIMEZONE_REASON,
    CheckKind.ROW_COUNT: "dbt has no built-in test of a table's row count",
    CheckKind.SQL_CHECK: "dbt has no built-in test of a query's value against a threshold",
}
HANDLERS = frozenset(CheckKind) - set(UNSUPPORTED)


class _DbtExport:
    def __init__(self, plan: CheckPlan, model: str, dbt_tests: str) -> None:
        self.plan = plan
        self.contract = plan.contract
        self.model = model
        self.utils = dbt_tests == "dbt_utils"
        contract = self.contract
        self.result = ExportResult("dbt", contract.contract, contract.version)
        self.column_tests: dict[str, list[dict[str, Any]]] = {name: [] for name in contract.fields}
        self.model_tests: list[dict[str, Any]] = []
        self.by_contract: list[str] = []
        self.not_null: set[str] = set()
        self.macros: set[str] = set()
        self.names: set[str] = set()

    # ------------------------------------------------------------ helpers
    def generic(self, name: str) -> str:
        """A dbt_utils-style generic test: ``dbt_utils.<name>`` or the one in the macros file."""
        if self.utils:
            return f"dbt_utils.{name}"
        self.macros.add(name)
        return name

    def test(self, test_name: str, check: Check, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        name = f"{self.model}__{relation_name(check.id)}"
        while name in self.names:
            name += "_"
        self.names.add(name)
        body: dict[str, Any] = {"name": name, "description": check.clause}
        if arguments:
            body["arguments"] = arguments
        config: dict[str, Any] = {}
        if check.severity == "warning":
            config["severity"] = "warn"
        config["meta"] = {"tscontract_check": check.id, "source": check.source}
        body["config"] = config
        self.result.exported.append(check.id)
        return {test_name: body}

    def expression(self, check: Check, holds: str) -> None:
        self.model_tests.append(self.test(self.generic("expression_is_true"), check, {"expression": holds}))

    # ------------------------------------------------------------ checks
    def add(self, check: Check) -> None:
        plan, result = self.plan, self.result
        kind = check.kind
        if needs_missing_catalog(plan, check):
            result.skip(check, "needs the series catalog; export with a catalog to inline it as VALUES")
        elif check.params.max_failing is not None:
            result.skip(check, str(tolerance_reason(check, "a dbt test fails on its count of rows, not a share")))
        elif kind in ("required_columns", "unknown_columns"):
            self.enforced(check)
        elif kind == "type":
            dtype: DataType = check.params_of(TypeParams).dtype
            column = check.columns[0]
            if dtype.kind == "string":
                self.enforced(check)
            elif dtype.kind == "enum":
                args = {"values": list(dtype.members)}
                self.column_tests[column].append(self.test("accepted_values", check, args))
            else:
                reason = _SCHEMA_REASON.format(type=column_type(dtype))
                result.skip(check, reason)
        elif kind == "not_null":
            self.not_null.add(check.columns[0])
            self.column_tests[check.columns[0]].append(self.test("not_null", check))
        elif kind == "time_precision" and check.params_of(PrecisionParams).unit == "us":
            self.enforced(check)  # timestamptz holds microseconds, nothing finer
        elif kind == "time_precision" and check.params_of(PrecisionParams).unit == "ns":
            result.skip(check, "timestamptz holds microseconds: the cast drops nanoseconds before any test")
        elif kind in ("fixed_value", "invariant", "constraint", "series_pattern") and check.predicate is not None:
            bounds = range_bounds(plan, check)
            if bounds is not None and self.range(check, *bounds):
                return
            holds = holds_sql(plan, check)
            assert holds is not None
            self.expression(check, holds)
        elif kind in ("time_precision", "calibration_in_force"):
            holds = holds_sql(plan, check)
            assert holds is not None
            self.expression(check, holds)
        elif kind == "unique":
            self.column_tests[check.columns[0]].append(self.test("unique", check))
        elif kind == "unique_key":
            args = {"combination_of_columns": list(check.columns)}
            self.model_tests.append(self.test(self.generic("unique_combination_of_columns"), check, args))
        elif kind == "catalog_series":
            assert plan.catalog is not None
            if not check.columns:
                result.skip(check, "the contract names no series column")
                return
            args = {"values": list(plan.catalog.series)}
            self.column_tests[check.columns[0]].append(self.test("accepted_values", check, args))
        elif kind == "cadence":
            self.cadence(check)
        elif kind == "step":
            self.step(check)
        elif kind == "freshness":
            self.freshness(check)
        else:
            result.skip(check, UNSUPPORTED[kind])

    def enforced(self, check: Check) -> None:
        self.by_contract.append(check.id)
        self.result.exported.append(check.id)

    def range(self, check: Check, column: str, low: tuple[str, bool] | None, high: tuple[str, bool] | None) -> bool:
        inclusive = {b[1] for b in (low, high) if b is not None}
        if len(inclusive) != 1 or column not in self.column_tests:
            return False  # accepted_range takes one inclusive flag for both ends
        args: dict[str, Any] = {}
        if low is not None:
            args["min_value"] = _yaml_number(low[0])
        if high is not None:
            args["max_value"] = _yaml_number(high[0])
        args["inclusive"] = inclusive.pop()
        self.column_tests[column].append(self.test(self.generic("accepted_range"), check, args))
        return True

    def cadence(self, check: Check) -> None:
        reason = cadence_skip_reason(self.plan, check)
        if reason is None and self.utils:
            reason = "dbt_utils has no per-series cadence test with a tolerance; export with dbt_tests='builtin'"
        if reason is not None:
            self.result.skip(check, reason)
            return
        ratio, fixed = cadence_tolerance(check)
        contract = self.contract
        args: dict[str, Any] = {
            "series": contract.series_column,
            "interval_us": cadence_interval_sql(self.plan, check),
        }
        if ratio is not None:
            args["tolerance_ratio"] = _yaml_number(ratio)
        if fixed is not None:
            args["tolerance_us"] = fixed
        modulus = precision_modulus(self.plan)
        if modulus:
            args["precision_us"] = modulus
        self.macros.add("tscontract_cadence")
        self.column_tests[contract.time.column].append(self.test("tscontract_cadence", check, args))

    def step(self, check: Check) -> None:
        """``fields.<name>.step``: tscontract's own SQL for the rule (DuckDB SQL), rows numbered by the key."""
        if self.utils:
            self.result.skip(check, "dbt_utils has no step test; export with dbt_tests='builtin'")
            return
        key = ", ".join(ident(k) for k in self.contract.key)
        numbered = f"(select row_number() over (order by {key}) as __row, * from __tsc_model__)"
        failing = StepSql(check, self.contract.time.column, numbered).failing()
        self.macros.add("tscontract_step")
        column = check.params_of(StepParams).field
        self.column_tests[column].append(self.test("tscontract_step", check, {"failing_sql": failing}))

    def freshness(self, check: Check) -> None:
        seconds = freshness_seconds(check)
        if seconds is None:
            self.result.skip(check, freshness_skip_reason(check))
            return
        if seconds == seconds.to_integral_value():
            datepart, interval = "second", int(seconds)
        else:
            datepart, interval = "microsecond", int(seconds * 1_000_000)
        args: dict[str, Any] = {"field": check.columns[0], "datepart": datepart, "interval": interval}
        if self.contract.series_column:
            args["group_by_columns"] = [self.contract.series_column]
        self.model_tests.append(self.test(self.generic("recency"), check, args))

    # ------------------------------------------------------------ render
    def run(self) -> ExportResult:
        for check in self.plan.checks:
            self.add(check)
        contract, result = self.contract, self.result
        columns = []
        for name, spec in contract.fields.items():
            column: dict[str, Any] = {"name": name, "data_type": column_type(spec.type)}
            description = spec.description or spec.note
            if description:
                column["description"] = description
            meta = {"tscontract_type": spec.type.text}
            if spec.unit:
                meta["unit"] = spec.unit
            if spec.dimension:
                meta["dimension"] = spec.dimension
            column["meta"] = meta
            if name in self.not_null:
                column["constraints"] = [{"type": "not_null"}]
            if self.column_tests[name]:
                column["data_tests"] = self.column_tests[name]
            columns.append(column)
        owner = f" (owner {contract.owner})" if contract.owner else ""
        described = contract.description or f"data contract {contract.contract} {contract.version}{owner}"
        model: dict[str, Any] = {
            "name": self.model,
            "description": described,
            "config": {
                "contract": {"enforced": True},
                "meta": {
                    "tscontract": {
                        "contract": contract.contract,
                        "version": contract.version,
                        **({"owner": contract.owner} if contract.owner else {}),
                        "enforced_by_contract": self.by_contract,
                    }
                },
            },
            "columns": columns,
        }
        if self.model_tests:
            model["data_tests"] = self.model_tests
        header = [*result.header_lines(), "needs dbt >= 1.10 (data_tests with arguments:)"]
        if self.utils:
            header.append("generic tests: the dbt_utils package")
        elif self.macros:
            header.append(f"generic tests: {MACROS_PATH}")
        result.artifacts.append(
            Artifact(f"models/{self.model}.yml", dump_yaml({"version": 2, "models": [model]}, header))
        )
        if not self.utils and self.macros:
            result.artifacts.append(Artifact(MACROS_PATH, _macros(self.macros, result)))
        return result


def _yaml_number(text: str) -> int | float | str:
    """A literal as a YAML number; the exact text where a float would not round-trip it."""
    value = Decimal(text)
    if value == value.to_integral_value() and "." not in text and "e" not in text.lower():
        return int(value)
    return float(text) if Decimal(repr(float(text))) == value else text


_MACROS = {
    "expression_is_true": """\
{% test expression_is_true(model, expression, column_name=None) %}
select *
from {{ model }}
{% if column_name is none -%}
where not({{ expression }})
{%- else -%}
where not({{ column_name }} {{ expression }})
{%- endif %}
{% endtest %}
""",
    "unique_combination_of_columns": """\
{% test unique_combination_of_columns(model, combination_of_columns, quote_columns=false) %}
{%- set columns_csv = combination_of_columns | join(', ') %}
select {{ columns_csv }}, count(*) as n_records
from {{ model }}
group by {{ columns_csv }}
having count(*) > 1
{% endtest %}
""",
    "accepted_range": """\
{% test accepted_range(model, column_name, min_value=none, max_value=none, inclusive=true) %}
select *
from {{ model }}
where 1 = 2
{%- if min_value is not none %}
  or not {{ column_name }} >{{ "=" if inclusive }} {{ min_value }}
{%- endif %}
{%- if max_value is not none %}
  or not {{ column_name }} <{{ "=" if inclusive }} {{ max_value }}
{%- endif %}
{% endtest %}
""",
    "recency": """\
{#- var tscontract_now pins the instant freshness is judged at, like `tscontract validate --now` #}
{% test recency(model, field, datepart, interval, group_by_columns=[]) %}
{%- set now = var('tscontract_now', none) %}
{%- set now_sql = "cast('" ~ now ~ "' as timestamp with time zone)" if now else dbt.current_timestamp() %}
{%- set threshold = dbt.dateadd(datepart, interval * -1, now_sql) %}
{%- set group_csv = group_by_columns | join(', ') %}
with recency as (
  select {% if group_csv %}{{ group_csv }}, {% endif %}max({{ field }}) as most_recent
  from {{ model }}
  {% if group_csv %}group by {{ group_csv }}{% endif %}
)
select *, {{ threshold }} as threshold
from recency
where most_recent < {{ threshold }}
{% endtest %}
""",
    "tscontract_step": """\
{#- the points of a series that jump too far (tscontract's step clause); failing_sql reads __tsc_model__ #}
{% test tscontract_step(model, column_name, failing_sql) %}
{{ failing_sql | replace("__tsc_model__", model | string) }}
{% endtest %}
""",
    "tscontract_cadence": """\
{#- per series, each step between consecutive distinct instants is interval_us within the tolerance;
    rows finer than the time precision (precision_us) are that check's finding and are left out #}
{% test tscontract_cadence(model, column_name, interval_us, series=none, tolerance_ratio=none,
                           tolerance_us=none, precision_us=none) %}
{%- set tolerance = "interval_us * " ~ tolerance_ratio if tolerance_ratio is not none else (tolerance_us or 0) %}
with points as (
  select {{ series if series else "'*'" }} as series, {{ column_name }} as instant,
         {{ interval_us }} as interval_us
  from {{ model }}
  where {{ column_name }} is not null
  {%- if series %} and {{ series }} is not null{% endif %}
  {%- if precision_us %} and epoch_us({{ column_name }}) % {{ precision_us }} = 0{% endif %}
), steps as (
  select *, epoch_us(instant) - epoch_us(lag(instant) over (partition by series order by instant)) as step_us
  from points
)
select * from steps
where step_us > 0 and abs(step_us - interval_us) > {{ tolerance }}
{% endtest %}
""",
}


def _macros(used: set[str], result: ExportResult) -> str:
    header = "\n".join(
        [
            f"{{# generated by tscontract from {result.contract} {result.version}; do not edit by hand.",
            "   The generic tests the model YAML uses, with dbt_utils' names and arguments, so that the",
            "   project needs no package. Export with dbt_tests='dbt_utils' to call dbt_utils instead. #}",
        ]
    )
    return header + "\n\n" + "\n".join(_MACROS[name] for name in _MACROS if name in used)


def check_options(fmt: str, options: dict[str, Any], known: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputError(f"unknown {fmt} export option(s): {', '.join(unknown)}; known: {', '.join(known)}")


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """Export ``plan`` as a dbt model YAML (and the generic tests it uses).

    Options: ``model`` names the dbt model (default: the contract name as an identifier);
    ``dbt_tests`` is ``"builtin"`` (default: write ``macros/tscontract_tests.sql``) or ``"dbt_utils"``.
    """
    check_options("dbt", options, ("model", "dbt_tests"))
    model: str | None = options.get("model")
    dbt_tests: str = options.get("dbt_tests") or "builtin"
    if dbt_tests not in DBT_TESTS:
        raise InputError(f"dbt_tests must be one of {', '.join(DBT_TESTS)}; got {dbt_tests!r}")
    return _DbtExport(plan, model or relation_name(plan.contract.contract), dbt_tests).run()
