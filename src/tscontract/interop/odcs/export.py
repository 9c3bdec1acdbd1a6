"""ODCS: the contract as an Open Data Contract Standard v3.1 document, and back.

Export: ``apiVersion: v3.1.0``, ``kind: DataContract``; one ``schema`` object (the record)
whose ``properties`` are the fields. ODCS's own vocabulary says what it can, in the forms
datacontract-cli runs (``datacontract test``):

- ``logicalType`` / ``logicalTypeOptions``: integer and float widths as ``format``, instants as
  ``timestamp`` with ``timezone: true``, ``defaultTimezone: Etc/UTC`` and their text format;
  ``physicalType`` the SQL type (DuckDB's spelling, which PostgreSQL also reads):
  ``VARCHAR``, ``BIGINT``, ``DECIMAL(18,8)``, ``DOUBLE``, ``TIMESTAMP(3) WITH TIME ZONE`` ...;
  enum members as a library ``invalidValues`` rule with ``validValues`` (the property's
  ``customProperties`` keep the tscontract ``type``).
- ``required`` (not nullable), ``primaryKey`` / ``primaryKeyPosition`` (the key, whose
  uniqueness datacontract-cli checks), ``unique`` (``unique: true``), ``team`` (the owner),
  ``slaProperties`` (a fixed freshness as latency).
- a field constraint that is one ``matches`` → ``logicalTypeOptions.pattern`` (anchored: ODCS
  finds a pattern anywhere, ``matches`` matches the whole value).
- row clauses → ``quality`` of ``type: sql`` over ``{object}`` (``SELECT COUNT(*) FROM {object}
  WHERE NOT (<clause>)``, ``mustBe: 0``; DuckDB SQL) with the clause as written in
  ``description``; a ``max_failing`` share → the failing percentage, ``unit: percent``,
  ``mustBeLessOrEqualTo``; ``severity`` as written.
- ``unique`` with a severity or a share, ``row_count`` → library ``duplicateValues`` /
  ``rowCount`` rules; ``sql_checks`` → ``sql`` rules, their ``{object}`` query as written.
- catalog clauses, exported with a catalog, are ``sql`` rules with the catalog as of the export
  inlined as ``VALUES`` (without one they are ``custom``).
- clauses only tscontract runs (cadence, sessions, completeness, freshness, the closed schema,
  instants' zone and precision in text) are ``type: custom, engine: tscontract``.

Every quality rule's ``name`` is the check id (``id`` the same with ``_`` for other characters,
which datacontract-cli reports as ``qualityId``). Everything ODCS has no field for — units,
dimensions, the time rules, revision policy, completeness, freshness, evolution, provenance —
is in ``customProperties``, as written, so :func:`import_odcs` gives the contract back.

Import: :func:`import_odcs` (one schema object) and
:mod:`tscontract.interop.odcs.read` (every object, the mapping of physical names, the
list of what was not carried). A document this module wrote comes back clause for clause.
"""

from __future__ import annotations

import re
import uuid
from datetime import date
from typing import Any

import sqlglot.expressions as exp
from pydantic import BaseModel

from tscontract.contract.clauses import Cadence, TimezoneRule
from tscontract.contract.durations import Duration
from tscontract.contract.model import Contract, SqlCheck
from tscontract.contract.types import DataType
from tscontract.errors import InputError
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports.dbt import holds_sql
from tscontract.interop.odcs import carry
from tscontract.interop.odcs.yaml_out import dump
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import SqlCheckParams
from tscontract.sql.columns import sql_string
from tscontract.typemap.odcs import logical_type, physical_type

API_VERSION = "v3.1.0"
ENGINE = "tscontract"
_OPTIONS = ("status",)
_DIMENSION = {
    "invariant": "consistency",
    "constraint": "conformity",
    "fixed_value": "conformity",
    "unique_key": "uniqueness",
    "unique": "uniqueness",
    "row_count": "completeness",
    "sql_check": "consistency",
    "type": "conformity",
    "cadence": "completeness",
    "session": "conformity",
    "completeness": "completeness",
    "freshness": "timeliness",
    "catalog_series": "conformity",
    "calibration_in_force": "accuracy",
    "plausibility": "accuracy",
    "scale_shift": "accuracy",
}
# sections ODCS has no field for, as customProperties of the schema object (contract key -> property)
_SECTIONS = {
    "series": "series",
    "time": "time",
    "units": "units",
    "revision_policy": "revisionPolicy",
    "completeness": "completeness",
    "freshness": "freshness",
    "provenance_required": "provenanceRequired",
    "calendars": "calendars",
}
_FIELD_PROPERTIES = {
    "unit": "unit",
    "dimension": "dimension",
    "nullable": "nullable",
    "value": "value",
    "default": "default",
    "aliases": "aliases",
    "deprecated": "deprecated",
    "flag_of": "flag_of",
    "note": "note",
}
# stated by the properties: present, typed, required; an instant's zone and precision by the type
_BY_PROPERTIES = ("required_columns", "type", "not_null", "utc_instant", "time_precision")
_CUSTOM_REASON = "carried for tscontract (quality type custom, customProperties); ODCS tools do not run it"
# what ODCS states of each kind of check (HANDLERS); the others are carried as custom quality for tscontract
UNSUPPORTED: dict[CheckKind, str] = {
    CheckKind.UNKNOWN_COLUMNS: "ODCS lists the properties but has no way to close the schema to others",
    **dict.fromkeys(
        (
            CheckKind.WELL_FORMED,
            CheckKind.CADENCE,
            CheckKind.SESSION,
            CheckKind.COMPLETENESS,
            CheckKind.FRESHNESS,
            CheckKind.STEP,
            CheckKind.PLAUSIBILITY,
            CheckKind.SCALE_SHIFT,
        ),
        _CUSTOM_REASON,
    ),
}
HANDLERS = frozenset(CheckKind) - set(UNSUPPORTED)


# ---------------------------------------------------------------- export


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """``<contract>.odcs.yaml``. Option ``status`` (default: the imported document's, else ``active``)."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown odcs export option(s): {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
    contract = plan.contract
    result = ExportResult("odcs", contract.contract, contract.version)
    properties = {name: carry.write_property(_property(contract, name), contract, name) for name in contract.fields}
    out = _Quality(properties, [], result)
    for check in plan.checks:
        if carry.written_back(check, contract, properties, out.record_quality):
            result.exported.append(check.id)  # the rule or option it came from, as written
        else:
            _export_check(plan, check, out)
    schema_object = carry.write_object(_schema_object(contract, properties, out.record_quality), contract)
    document = carry.write_document(_document(contract, schema_object), contract, options.get("status"))
    header = "".join(f"# {line}\n" for line in result.header_lines())
    result.artifacts.append(Artifact(f"{contract.contract}.odcs.yaml", header + dump(document)))
    return result


class _Quality:
    """What the export has stated so far: the property entries, the record's quality rules, the result."""

    def __init__(
        self, properties: dict[str, dict[str, Any]], record_quality: list[dict[str, Any]], result: ExportResult
    ) -> None:
        self.properties = properties
        self.record_quality = record_quality
        self.result = result

    def add(self, check: Check, entry: dict[str, Any], column: str | None = None) -> None:
        if column is None:
            self.record_quality.append(entry)
        else:
            self.properties[column].setdefault("quality", []).append(entry)
        self.result.exported.append(check.id)


def _export_check(plan: CheckPlan, check: Check, out: _Quality) -> None:
    """One check as a property's (or the record's) quality rule, a property setting, or custom quality."""
    kind = check.kind
    if kind in _BY_PROPERTIES:
        dtype = plan.contract.fields[check.columns[0]].type if kind == "type" else None
        if dtype is not None and dtype.kind == "enum":
            out.add(check, _members(check, dtype), check.columns[0])
        else:
            out.result.exported.append(check.id)
    elif kind == "unknown_columns":
        out.result.skip(check, UNSUPPORTED[kind])
    elif kind == "unique_key":
        out.result.exported.append(check.id)  # primaryKey / primaryKeyPosition: the key's uniqueness
    elif kind == "unique":
        unique_column = check.columns[0]
        if check.severity == "error" and check.params.max_failing is None:
            out.properties[unique_column]["unique"] = True
            out.result.exported.append(check.id)
        else:
            out.add(check, _library(check, "duplicateValues"), unique_column)
    elif kind == "row_count":
        out.add(check, _row_count(check, plan.contract))
    elif kind == "sql_check":
        out.add(check, _sql_check(check))
    elif kind == "constraint" and _pattern(check) is not None:
        out.properties[check.columns[0]].setdefault("logicalTypeOptions", {})["pattern"] = _pattern(check)
        out.result.exported.append(check.id)
    elif check.predicate is not None and not check.params.needs_catalog:
        column = None if kind == "invariant" else check.columns[0]
        out.add(check, _row_rule(check, check.predicate.sql(dialect="duckdb")), column)
    elif _catalog_holds(plan, check) is not None:  # the catalog as of the export, inlined as VALUES
        column = check.columns[0] if kind == "constraint" else None
        out.add(check, _row_rule(check, str(_catalog_holds(plan, check))), column)
    else:
        entry = _custom(check)
        if kind == "constraint":
            out.properties[check.columns[0]].setdefault("quality", []).append(entry)
        else:
            out.record_quality.append(entry)
        out.result.skip(check, _CUSTOM_REASON)


def _schema_object(
    contract: Contract, properties: dict[str, dict[str, Any]], record_quality: list[dict[str, Any]]
) -> dict[str, Any]:
    schema_object: dict[str, Any] = {
        "name": contract.contract,
        "physicalName": contract.contract,
        "physicalType": "table",
        "logicalType": "object",
        "dataGranularityDescription": f"one record per {', '.join(contract.key)}",
        "properties": list(properties.values()),
    }
    if record_quality:
        schema_object["quality"] = record_quality
    schema_object["customProperties"] = _custom_properties(
        [("key", list(contract.key))]
        + [(prop, _plain(getattr(contract, section))) for section, prop in _SECTIONS.items()]
    )
    return schema_object


def _document(contract: Contract, schema_object: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "DataContract",
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:tscontract:{contract.contract}")),
        "name": contract.contract,
        "version": contract.version,
    }
    if contract.description:
        document["description"] = {"purpose": contract.description}
    if contract.owner:
        document["team"] = {"members": [{"username": contract.owner, "role": "owner"}]}
    document["schema"] = [schema_object]
    if contract.freshness is not None and (contract.freshness.max_age.fixed or contract.freshness.max_age.in_months):
        document["slaProperties"] = [_latency(contract)]
    top = _custom_properties(
        [
            ("source", contract.source),
            ("note", contract.note),
            ("evolution", _plain(contract.evolution)),
            ("odcsCarried", True if contract.odcs else None),  # the elements above are the document's own
        ]
    )
    if top:
        document["customProperties"] = top
    return document


def _property(contract: Contract, name: str) -> dict[str, Any]:
    spec = contract.fields[name]
    logical, options = logical_type(spec.type)
    entry: dict[str, Any] = {"name": name, "physicalName": name, "logicalType": logical}
    if options:
        entry["logicalTypeOptions"] = options
    entry["physicalType"] = physical_type(spec.type)
    entry["required"] = not contract.is_nullable(name)
    if name in contract.key:
        entry["primaryKey"] = True
        entry["primaryKeyPosition"] = contract.key.index(name) + 1
    if spec.description:
        entry["description"] = spec.description
    if spec.implied:  # a provenance column the contract does not list under fields
        custom = [("impliedBy", "provenance_required")]
    else:
        custom = [(prop, _plain(getattr(spec, key))) for key, prop in _FIELD_PROPERTIES.items() if key != "value"]
        if spec.has_value:
            custom.insert(3, ("value", _plain(spec.value)))
        if spec.type.kind == "enum":  # VARCHAR and a rule say it to ODCS tools; the type, to tscontract
            custom.insert(0, ("type", spec.type.text))
    properties = _custom_properties(custom, keep_values=spec.has_value)
    if properties:
        entry["customProperties"] = properties
    return entry


def _pattern(check: Check) -> str | None:
    """A field constraint that is one ``matches``: its regular expression as an ODCS pattern."""
    node = check.predicate
    if not isinstance(node, exp.RegexpFullMatch) or check.params.needs_catalog:
        return None
    if not isinstance(node.this, exp.Column) or node.this.name != check.columns[0]:
        return None
    return anchored(str(node.expression.this))


def anchored(regex: str) -> str:
    """``regex`` matching the whole value where a pattern is searched for: as written when it is anchored."""
    escapes = len(regex[:-1]) - len(regex[:-1].rstrip("\\"))
    if regex.startswith("^") and regex.endswith("$") and escapes % 2 == 0 and "|" not in regex:
        return regex
    return f"^(?:{regex})$"


def _rule(check: Check, kind: str) -> dict[str, Any]:
    return {
        "id": quality_id(check.id),
        "name": check.id,
        "type": kind,
        "description": check.clause,
        "dimension": _DIMENSION.get(check.kind, "conformity"),
        "severity": check.severity,
    }


def quality_id(check_id: str) -> str:
    """A check id as an ODCS stable id (letters, digits, ``_`` and ``-``): ``invariants[0]`` -> ``invariants_0``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", check_id).strip("_")


def _catalog_holds(plan: CheckPlan, check: Check) -> str | None:
    """SQL true for a row a catalog clause accepts, with the catalog inlined; None without a catalog."""
    if plan.catalog is None or check.kind not in ("constraint", "invariant", "catalog_series", "calibration_in_force"):
        return None
    if check.kind == "catalog_series":
        if not check.columns:
            return None
        members = ", ".join(sql_string(s) for s in plan.catalog.series)
        return f"coalesce(({check.columns[0]} IN ({members})), true)"
    return holds_sql(plan, check)


def _row_rule(check: Check, holds: str) -> dict[str, Any]:
    """A row clause as SQL: the failing rows, or with ``max_failing`` their percentage of the rows."""
    failing = f"NOT ({holds})"
    entry = _rule(check, "sql")
    share = check.params.max_failing
    if share is None:
        entry["query"] = f"SELECT COUNT(*) FROM {{object}} WHERE {failing}"
        entry["mustBe"] = 0
        return entry
    entry["query"] = (
        f"SELECT COALESCE(100.0 * SUM(CASE WHEN {failing} THEN 1 ELSE 0 END) / NULLIF(COUNT(*), 0), 0) FROM {{object}}"
    )
    entry["unit"] = "percent"
    entry["mustBeLessOrEqualTo"] = (share.ratio * 100).normalize()
    return entry


def _library(check: Check, metric: str) -> dict[str, Any]:
    entry = _rule(check, "library")
    entry["metric"] = metric
    share = check.params.max_failing
    if share is None:
        entry["mustBe"] = 0
    else:
        entry["unit"] = "percent"
        entry["mustBeLessOrEqualTo"] = (share.ratio * 100).normalize()
    return entry


def _members(check: Check, dtype: DataType) -> dict[str, Any]:
    entry = _rule(check, "library")
    entry["description"] = f"type: {dtype.text}"
    entry["metric"] = "invalidValues"
    entry["arguments"] = {"validValues": list(dtype.members)}
    entry["mustBe"] = 0
    return entry


def _row_count(check: Check, contract: Contract) -> dict[str, Any]:
    bounds = contract.row_count
    assert bounds is not None
    entry = _rule(check, "library")
    entry["metric"] = "rowCount"
    if bounds.min is not None and bounds.max is not None:
        entry["mustBeBetween"] = [bounds.min, bounds.max]
    elif bounds.min is not None:
        entry["mustBeGreaterOrEqualTo"] = bounds.min
    else:
        entry["mustBeLessOrEqualTo"] = bounds.max
    return entry


def _sql_check(check: Check) -> dict[str, Any]:
    rule: SqlCheck = check.params_of(SqlCheckParams).rule
    entry = _rule(check, "sql")
    entry["description"] = rule.description or check.clause
    entry["query"] = rule.sql.strip()
    if rule.must_be is not None:
        entry["mustBe"] = rule.must_be
    elif rule.must_be_less_than is not None:
        entry["mustBeLessThan"] = rule.must_be_less_than
    elif rule.must_be_greater_than is not None:
        entry["mustBeGreaterThan"] = rule.must_be_greater_than
    else:
        entry["mustBeBetween"] = list(rule.must_be_between or ())
    return entry


def _custom(check: Check) -> dict[str, Any]:
    entry = _rule(check, "custom")
    entry["engine"] = ENGINE
    entry["implementation"] = check.clause
    return entry


def _latency(contract: Contract) -> dict[str, Any]:
    assert contract.freshness is not None
    age = contract.freshness.max_age
    return {
        "property": "latency",
        "value": age.months if age.in_months else age.amount,  # a quarter is 3 months: ODCS has no quarter
        "unit": "month" if age.in_months else {"min": "m"}.get(age.unit, age.unit),
        "element": f"{contract.contract}.{contract.freshness.column or contract.time.column}",
    }


def _plain(value: Any) -> Any:
    """A section as the contract writes it: clauses as their text, no defaults the loader adds."""
    if isinstance(value, Duration | Cadence | TimezoneRule):
        return value.text
    if isinstance(value, date):  # a holiday of a calendar declared by its hours
        return value.isoformat()
    if isinstance(value, BaseModel):
        out = {}
        for key, info in type(value).model_fields.items():
            item = getattr(value, key)
            if info.exclude or item is None or item == () or item == []:
                continue
            out[key] = _plain(item)
        return out
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _custom_properties(items: list[tuple[str, Any]], keep_values: bool = False) -> list[dict[str, Any]]:
    kept = []
    for prop, value in items:
        if value is None and not (keep_values and prop == "value"):
            continue
        if value in ([], {}, ()):
            continue
        kept.append({"property": prop, "value": value})
    return kept


# ---------------------------------------------------------------- import


def import_odcs(text: str) -> str:
    """Contract YAML for an ODCS v3 document of one schema object (see :mod:`tscontract.interop.odcs.read`)."""
    from tscontract.interop.odcs.read import import_document, load_document, object_names

    names = object_names(load_document(text))
    if len(names) != 1:
        raise InputError(f"the ODCS document has {len(names)} schema objects ({', '.join(names)}): name one")
    (imported,) = import_document(text)
    return imported.text
