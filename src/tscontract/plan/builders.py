"""One builder per contract section: the checks its clauses compile to, in the contract's order.

``build_plan`` (plan/checks.py) calls them in the order of the plan; each returns its checks and
reads nothing but the contract (and the catalog or bounds where the section depends on them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tscontract.contract.catalog import Catalog
from tscontract.contract.clauses import RowClause
from tscontract.contract.model import Contract
from tscontract.contract.trees import LazyTree, held_tree
from tscontract.errors import InputError
from tscontract.plan.ir import Check
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import (
    BoundsParams,
    CadenceParams,
    CatalogParams,
    ClauseParams,
    CompletenessParams,
    FreshnessParams,
    KeyParams,
    PatternParams,
    PrecisionParams,
    SessionParams,
    SqlCheckParams,
    StepParams,
    TypeParams,
    UniqueParams,
)

if TYPE_CHECKING:
    import sqlglot.expressions as exp


def schema_checks(contract: Contract) -> list[Check]:
    """The input's columns: every field present, no other, every row well formed."""
    out: list[Check] = []
    add = out.append
    all_columns = tuple(contract.fields)
    add(
        Check(
            "schema.columns",
            CheckKind.REQUIRED_COLUMNS,
            "schema",
            f"fields: {', '.join(all_columns)}",
            "fields",
            "schema",
            all_columns,
        )
    )
    add(
        Check(
            "schema.strict",
            CheckKind.UNKNOWN_COLUMNS,
            "schema",
            "unknown columns fail (additionalProperties: false)",
            "fields",
            "schema",
            all_columns,
        )
    )
    # how the input was read, not a contract clause: a CSV line with the wrong number of fields, a JSON
    # key given twice. Such a row is kept (its reason in ``__tsc_malformed``) and fails here.
    add(Check("source.rows", CheckKind.WELL_FORMED, "schema", "every input row is well formed", "input", "row"))
    return out


def field_checks(contract: Contract) -> list[Check]:
    """Per field, in the contract's order: its type and nullability, then its own rules."""
    out: list[Check] = []
    for name in contract.fields:
        out += _field_type(contract, name)
        out += _field_rules(contract, name)
    return out


def _field_type(contract: Contract, name: str) -> list[Check]:
    """``fields.<name>.type`` and ``nullable`` (or ``provenance_required``)."""
    out: list[Check] = []
    add = out.append
    spec = contract.fields[name]
    provenance = set(contract.provenance_required)
    source = f"fields.{name}" if not spec.implied else "provenance_required"
    add(
        Check(
            f"field.{name}.type",
            CheckKind.TYPE,
            "fields",
            spec.type.text,
            f"{source}.type" if not spec.implied else source,
            "row",
            (name,),
            params=TypeParams(spec.type),
        )
    )
    if not contract.is_nullable(name):
        if name in provenance:
            clause = f"provenance_required: [{', '.join(contract.provenance_required)}]"
            add(
                Check(
                    f"provenance.{name}",
                    CheckKind.NOT_NULL,
                    "provenance",
                    clause,
                    "provenance_required",
                    "row",
                    (name,),
                )
            )
        else:
            why = "nullable: false" if spec.nullable is False else f"key: [{', '.join(contract.key)}]"
            add(
                Check(
                    f"field.{name}.nullable",
                    CheckKind.NOT_NULL,
                    "fields",
                    why,
                    f"fields.{name}.nullable",
                    "row",
                    (name,),
                )
            )
    return out


def _field_rules(contract: Contract, name: str) -> list[Check]:
    """``fields.<name>.value``, ``constraint``, ``unique`` and ``step``."""
    out: list[Check] = []
    add = out.append
    spec = contract.fields[name]
    if spec.has_value:
        add(
            Check(
                f"field.{name}.value",
                CheckKind.FIXED_VALUE,
                "fields",
                f"value: {str(spec.value).lower() if isinstance(spec.value, bool) else spec.value}",
                f"fields.{name}.value",
                "row",
                (name,),
                predicate=LazyTree.made(equals_tree, name, spec.value),
            )
        )
    if name in contract.constraints:
        path = f"fields.{name}.constraint"
        written = contract.constraints[name]
        add(_row_clause(f"field.{name}.constraint", CheckKind.CONSTRAINT, "fields", path, written))
    if spec.flag_of is not None:  # a set flag says why the value is null: a value beside it is a fake reading
        value = spec.flag_of
        add(
            Check(
                f"field.{name}.flag_of",
                CheckKind.CONSTRAINT,
                "fields",
                f"flag_of: {value}",
                f"fields.{name}.flag_of",
                "row",
                (name, value),
                predicate=LazyTree.made(either_null_tree, name, value),
                params=ClauseParams(),
            )
        )
    unique = spec.unique_rule
    if unique is not None:
        add(
            Check(
                f"field.{name}.unique",
                CheckKind.UNIQUE,
                "fields",
                "unique: true" + (f", max_failing: {unique.max_failing.text}" if unique.max_failing else ""),
                f"fields.{name}.unique",
                "window",
                (name,),
                severity=unique.severity,
                params=UniqueParams(unique.max_failing),
            )
        )
    if spec.step is not None:
        add(_step_check(contract, name))

    return out


def time_checks(contract: Contract) -> list[Check]:
    """``time.timezone`` and ``time.precision`` over every instant column."""
    out: list[Check] = []
    add = out.append
    time = contract.time
    time_type = contract.fields[time.column].type
    tz_clause = time.timezone.text if time.timezone else f"type: {time_type.text}"
    timestamp_columns = tuple(n for n, s in contract.fields.items() if s.type.kind == "timestamp")
    add(Check("time.timezone", CheckKind.UTC_INSTANT, "time", tz_clause, "time.timezone", "row", timestamp_columns))
    unit = time.precision or time_type.time_unit
    assert unit is not None  # the loader requires the time column to be a UTC timestamp, which has a unit
    add(
        Check(
            "time.precision",
            CheckKind.TIME_PRECISION,
            "time",
            f"precision: {unit}",
            "time.precision",
            "row",
            timestamp_columns,
            params=PrecisionParams(unit),
        )
    )

    return out


def key_checks(contract: Contract) -> list[Check]:
    """The natural key (with its duplicates policy), the invariants and the series' naming scheme."""
    out: list[Check] = []
    add = out.append
    duplicates = contract.duplicates if contract.duplicates and contract.duplicates.keeps_one else None
    add(
        Check(
            "key.unique",
            CheckKind.UNIQUE_KEY,
            "key",
            f"key: [{', '.join(contract.key)}]" + (f"; {duplicates.as_text()}" if duplicates else ""),
            "key",
            "window",
            tuple(contract.key),
            # copies of a key that ``by`` orders are resolved (one kept), not failures
            params=KeyParams(duplicates),
        )
    )

    for i, clause in enumerate(contract.invariants):
        add(_row_clause(f"invariants[{i}]", CheckKind.INVARIANT, "invariants", f"invariants[{i}]", clause))

    series = contract.series_column
    if contract.series is not None and contract.series.pattern is not None and series is not None:
        pattern = contract.series.pattern
        add(
            Check(
                "series.pattern",
                CheckKind.SERIES_PATTERN,
                "key",
                f"pattern: {pattern}",
                "series.pattern",
                "row",
                (series,),
                # as the clause ``<series> matches '<pattern>'``: exporters state it as that row clause
                predicate=LazyTree.made(full_match_tree, series, pattern),
                params=PatternParams(pattern),
            )
        )
    return out


def catalog_checks(contract: Contract, catalog: Catalog | None, before: list[Check]) -> list[Check]:
    """Series in the catalog (when a check ``before`` needs it, or a catalog is given); the calibration in force."""
    out: list[Check] = []
    add = out.append
    time = contract.time
    series = contract.series_column
    catalog_needed = any(c.params.needs_catalog for c in before) or (
        time.cadence is not None and time.cadence.source == "catalog"
    )
    if catalog_needed or catalog is not None:
        add(
            Check(
                "catalog.series",
                CheckKind.CATALOG_SERIES,
                "catalog",
                f"every {series} is in the series catalog",
                "catalog",
                "row",
                (series,) if series else (),
                params=CatalogParams(),
            )
        )
    if "calibration_id" in contract.fields and (
        catalog is None or any(e.calibrations for e in catalog.series.values())
    ):
        note = contract.fields["calibration_id"].note or f"calibration record in force at {time.column}"
        add(
            Check(
                "catalog.calibration",
                CheckKind.CALIBRATION_IN_FORCE,
                "catalog",
                note,
                "fields.calibration_id",
                "row",
                ("calibration_id", time.column),
                params=CatalogParams(),
            )
        )

    return out


def window_checks(contract: Contract, catalog: Catalog | None, all_series: bool) -> list[Check]:
    """Cadence and sessions, completeness and freshness: over each series' points in time."""
    out: list[Check] = []
    add = out.append
    time = contract.time
    series = contract.series_column
    cadence = time.cadence
    if cadence is not None and cadence.source != "irregular":
        add(
            Check(
                "time.cadence",
                CheckKind.CADENCE,
                "time",
                cadence.text,
                "time.cadence",
                "window",
                (series, time.column) if series else (time.column,),
                params=CadenceParams(cadence),
            )
        )
        if cadence.outside_session_forbidden or cadence.within_session:
            add(
                Check(
                    "time.session",
                    CheckKind.SESSION,
                    "time",
                    cadence.text,
                    "time.cadence",
                    "window",
                    (series, time.column) if series else (time.column,),
                    params=SessionParams(cadence, time.timezone),
                )
            )
    if contract.completeness is not None:
        add(
            Check(
                "completeness",
                CheckKind.COMPLETENESS,
                "completeness",
                _section_text(contract.completeness),
                "completeness",
                "window",
                (time.column,),
                params=CompletenessParams(contract.completeness),
            )
        )
    if contract.freshness is not None:
        add(
            Check(
                "freshness",
                CheckKind.FRESHNESS,
                "freshness",
                f"max_age: {contract.freshness.max_age.text}",
                "freshness",
                "batch",
                (contract.freshness.column or time.column,),
                params=FreshnessParams(contract.freshness, all_series and catalog is not None),
            )
        )
    return out


def batch_checks(contract: Contract) -> list[Check]:
    """The batch's row count and the contract's SQL checks."""
    out: list[Check] = []
    add = out.append
    if contract.row_count is not None:
        rows = contract.row_count
        text = rows.as_text()
        add(Check("batch.row_count", CheckKind.ROW_COUNT, "batch", text, "row_count", "batch", severity=rows.severity))
    for i, sql_check in enumerate(contract.sql_checks):
        from tscontract.contract.sql_checks import sql_check_query  # sqlglot: only for a contract's SQL checks

        add(
            Check(
                f"sql_checks.{sql_check.name}",
                CheckKind.SQL_CHECK,
                "sql_checks",
                f"{sql_check.sql.strip()} ({sql_check.expectation()})",
                f"sql_checks[{i}]",
                "batch",
                severity=sql_check.severity,
                params=SqlCheckParams(sql_check_query(sql_check.sql), sql_check),
            )
        )
    return out


def bounds_checks(contract: Contract, bounds: Any) -> list[Check]:
    """Plausibility and scale against history-derived bounds (``--bounds``); bounds of another contract are refused."""
    out: list[Check] = []
    add = out.append
    series = contract.series_column
    if bounds is not None:
        made_for = f"{bounds.contract} {bounds.version}"
        if bounds.contract != contract.contract or bounds.version.split(".")[0] != contract.version.split(".")[0]:
            raise InputError(
                f"the bounds were profiled for {made_for}, not {contract.contract} {contract.version}: "
                "run tscontract profile for this contract"
            )
        if series is None or bounds.series_column != series:
            raise InputError(f"the bounds are per {bounds.series_column}, the contract's series column is {series}")
        for field_name in bounds.fields:
            if field_name not in contract.fields:
                raise InputError(f"the bounds profile field {field_name!r}, which the contract does not declare")
            columns = (field_name, series)
            add(
                Check(
                    f"plausibility.{field_name}",
                    CheckKind.PLAUSIBILITY,
                    "plausibility",
                    f"{field_name} within history-derived plausibility bounds",
                    "bounds",
                    "row",
                    columns,
                    severity="warning",
                    params=BoundsParams(field_name),
                )
            )
            add(
                Check(
                    f"plausibility.{field_name}.scale",
                    CheckKind.SCALE_SHIFT,
                    "plausibility",
                    f"{field_name} typical magnitude within {bounds.scale_factor}x of history",
                    "bounds",
                    "batch",
                    columns,
                    params=BoundsParams(field_name),
                )
            )
    return out


def _row_clause(check_id: str, kind: CheckKind, section: str, source: str, clause: RowClause) -> Check:
    """A check for a written row clause (invariant or field constraint), its predicate as parsed."""
    return Check(
        check_id,
        kind,
        section,
        clause.text,
        source,
        "row",
        clause.columns,
        severity=clause.severity,  # as written: ``{clause: ..., severity: warning}``
        predicate=held_tree(clause),  # unbuilt, as the contract holds it (contract/trees.py)
        # a share of failing rows tolerated: ``max_failing: "0.1%"``
        params=ClauseParams(clause.catalog, clause.max_failing),
    )


def _step_check(contract: Contract, name: str) -> Check:
    """``fields.<name>.step``: a window over each series' points in time order (see model.Step)."""
    spec = contract.fields[name]
    step = spec.step
    assert step is not None
    if not spec.type.is_numeric:
        raise InputError(f"{contract.path or 'contract'}: fields.{name}.step: {name} is {spec.type.text}, not a number")
    time = contract.time.column
    series = tuple(k for k in contract.key if k not in (time, contract.revision_column))
    return Check(
        f"field.{name}.step",
        CheckKind.STEP,
        "fields",
        step.as_text(),
        f"fields.{name}.step",
        "window",
        (*series, time, name),
        severity=step.severity,
        params=StepParams(name, series, step, contract.revision_column),
    )


# the trees the plan writes itself, built only when read (LazyTree.made): each a function of plain values


def equals_tree(name: str, value: object) -> exp.Expression:
    """``<name> = <value>``: a field's fixed value."""
    import sqlglot.expressions as exp  # sqlglot: only where the tree is read

    if isinstance(value, bool):
        literal: exp.Expression = exp.Boolean(this=value)
    elif isinstance(value, str):
        literal = exp.Literal.string(value)
    else:
        literal = exp.Literal.number(str(value))
    return exp.EQ(this=exp.column(name), expression=literal)


def either_null_tree(name: str, flag: str) -> exp.Expression:
    """``<name> IS NULL OR <flag> IS NULL``: a set flag says why the value is null."""
    import sqlglot.expressions as exp

    return exp.Or(this=exp.column(name).is_(exp.null()), expression=exp.column(flag).is_(exp.null()))


def full_match_tree(column: str, pattern: str) -> exp.Expression:
    """``<column> matches '<pattern>'``: the whole id matches (a series scheme)."""
    import sqlglot.expressions as exp

    return exp.RegexpFullMatch(this=exp.column(column), expression=exp.Literal.string(pattern))


def _section_text(section: Any) -> str:
    parts = []
    for key in type(section).model_fields:
        value = getattr(section, key)
        if value in (None, [], ()) or key in ("description", "note"):
            continue
        shown = getattr(value, "text", value)
        if isinstance(shown, list):
            shown = "[" + ", ".join(map(str, shown)) + "]"
        parts.append(f"{key}: {shown}")
    return ", ".join(parts)
