"""ODCS: the contract as an Open Data Contract Standard v3 document, and back.

Export: ``apiVersion: v3.0.2``, ``kind: DataContract``; one ``schema`` object
(the record) whose ``properties`` are the fields. ODCS's own vocabulary says
what it can: ``logicalType`` / ``logicalTypeOptions`` (integer width, decimal
scale as ``multipleOf`` and range, enum members as a pattern, instant format),
``physicalType`` (the contract's type text, verbatim), ``required`` (not
nullable), ``primaryKey`` / ``primaryKeyPosition`` (the key), ``team`` (the
owner) and ``slaProperties`` (freshness as latency). Row clauses that SQL can
run alone become ``quality`` entries of ``type: sql`` (``SELECT COUNT(*) ...
WHERE NOT (<clause>)``, ``mustBe: 0``) with the clause as written in
``description``; clauses only tscontract runs (catalog lookups, cadence,
sessions, completeness, freshness) are ``type: custom, engine: tscontract``.
Everything ODCS has no field for — units, dimensions, the time rules, revision
policy, completeness, freshness, evolution, provenance — is in
``customProperties``, as written, so :func:`import_odcs` gives the contract back.

Import: :func:`import_odcs` (one schema object) and
:mod:`tscontract.export.odcs_import` (every object, the mapping of physical names, the
list of what was not carried). A document this module wrote comes back clause for clause.
"""

from __future__ import annotations

import io
import re
import uuid
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from ruamel.yaml import YAML

from tscontract.contract.clauses import Cadence, Duration, TimezoneRule
from tscontract.contract.model import Contract
from tscontract.contract.types import DataType
from tscontract.errors import InputError
from tscontract.export import Artifact, ExportResult
from tscontract.plan.checks import Check, CheckPlan

API_VERSION = "v3.0.2"
ENGINE = "tscontract"
_OPTIONS = ("status",)
_DIMENSION = {
    "invariant": "consistency",
    "constraint": "conformity",
    "fixed_value": "conformity",
    "unique_key": "uniqueness",
    "cadence": "completeness",
    "session": "conformity",
    "completeness": "completeness",
    "freshness": "timeliness",
    "catalog_series": "conformity",
    "calibration_in_force": "accuracy",
    "plausibility": "accuracy",
    "scale_shift": "accuracy",
}
_DATE_FORMAT = {"s": "", "ms": ".SSS", "us": ".SSSSSS", "ns": ".SSSSSSSSS"}
# sections ODCS has no field for, as customProperties of the schema object (contract key -> property)
_SECTIONS = {
    "series": "series",
    "time": "time",
    "units": "units",
    "revision_policy": "revisionPolicy",
    "completeness": "completeness",
    "freshness": "freshness",
    "provenance_required": "provenanceRequired",
}
_FIELD_PROPERTIES = {
    "unit": "unit",
    "dimension": "dimension",
    "nullable": "nullable",
    "value": "value",
    "default": "default",
    "aliases": "aliases",
    "deprecated": "deprecated",
    "note": "note",
}
_CONTRACT_ORDER = (
    "contract",
    "version",
    "owner",
    "source",
    "description",
    "note",
    "series",
    "key",
    "time",
    "fields",
    "units",
    "invariants",
    "revision_policy",
    "completeness",
    "freshness",
    "evolution",
    "provenance_required",
)


# ---------------------------------------------------------------- export


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """``<contract>.odcs.yaml``. Option ``status`` (default ``active``)."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown odcs export option(s): {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
    contract = plan.contract
    result = ExportResult("odcs", contract.contract, contract.version)
    table = contract.contract if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", contract.contract) else f'"{contract.contract}"'
    properties = {name: _property(contract, name) for name in contract.fields}
    record_quality: list[dict[str, Any]] = []

    for check in plan.checks:
        if check.kind in ("required_columns", "type", "not_null", "utc_instant", "time_precision"):
            result.exported.append(check.id)  # properties, logicalType/physicalType, required, date format
        elif check.kind == "unknown_columns":
            result.skip(check, "ODCS lists the properties but has no way to close the schema to others")
        elif check.kind == "unique_key":
            record_quality.append(_sql(check, _duplicates_query(table, contract.key)))
            result.exported.append(check.id)
        elif check.predicate is not None and not check.params.get("needs_catalog"):
            query = f"SELECT COUNT(*) FROM {table} WHERE NOT ({check.predicate.sql()})"
            entry = _sql(check, query)
            if check.kind == "invariant":
                record_quality.append(entry)
            else:
                properties[check.columns[0]].setdefault("quality", []).append(entry)
            result.exported.append(check.id)
        else:
            entry = _custom(check)
            if check.kind == "constraint":
                properties[check.columns[0]].setdefault("quality", []).append(entry)
            else:
                record_quality.append(entry)
            result.skip(
                check, "carried for tscontract (quality type custom, customProperties); ODCS tools do not run it"
            )

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
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "DataContract",
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:tscontract:{contract.contract}")),
        "name": contract.contract,
        "version": contract.version,
        "status": options.get("status", "active"),
    }
    if contract.description:
        document["description"] = {"purpose": contract.description}
    if contract.owner:
        document["team"] = [{"username": contract.owner, "role": "owner"}]
    document["schema"] = [schema_object]
    if contract.freshness is not None and contract.freshness.max_age.fixed:
        document["slaProperties"] = [_latency(contract)]
    top = _custom_properties(
        [("source", contract.source), ("note", contract.note), ("evolution", _plain(contract.evolution))]
    )
    if top:
        document["customProperties"] = top
    header = "".join(f"# {line}\n" for line in result.header_lines())
    result.artifacts.append(Artifact(f"{contract.contract}.odcs.yaml", header + _dump(document)))
    return result


def _property(contract: Contract, name: str) -> dict[str, Any]:
    spec = contract.fields[name]
    logical, options = _logical_type(spec.type)
    entry: dict[str, Any] = {"name": name, "physicalName": name, "logicalType": logical}
    if options:
        entry["logicalTypeOptions"] = options
    entry["physicalType"] = spec.type.text
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
    properties = _custom_properties(custom, keep_values=spec.has_value)
    if properties:
        entry["customProperties"] = properties
    return entry


def _logical_type(dtype: DataType) -> tuple[str, dict[str, Any]]:
    kind = dtype.kind
    if kind == "int":
        return "integer", {"format": f"i{dtype.bits or 64}"}
    if kind == "float":
        return "number", {"format": f"f{dtype.bits or 64}"}
    if kind == "decimal":
        precision, scale = dtype.precision or 0, dtype.scale or 0
        largest = Decimal(10) ** (precision - scale) - Decimal(1).scaleb(-scale)
        return "number", {"multipleOf": Decimal(1).scaleb(-scale), "minimum": -largest, "maximum": largest}
    if kind == "bool":
        return "boolean", {}
    if kind == "timestamp":
        return "date", {"format": f"yyyy-MM-dd'T'HH:mm:ss{_DATE_FORMAT[dtype.time_unit or 'ms']}'Z'"}
    if kind == "date":
        return "date", {"format": "yyyy-MM-dd"}
    if kind == "enum":
        return "string", {"pattern": "^(" + "|".join(re.escape(m) for m in dtype.members) + ")$"}
    return "string", {}


def _sql(check: Check, query: str) -> dict[str, Any]:
    return {
        "name": check.id,
        "type": "sql",
        "description": check.clause,
        "dimension": _DIMENSION.get(check.kind, "conformity"),
        "severity": check.severity,
        "query": query,
        "mustBe": 0,
    }


def _custom(check: Check) -> dict[str, Any]:
    return {
        "name": check.id,
        "type": "custom",
        "description": check.clause,
        "dimension": _DIMENSION.get(check.kind, "conformity"),
        "severity": check.severity,
        "engine": ENGINE,
        "implementation": check.clause,
    }


def _duplicates_query(table: str, key: tuple[str, ...]) -> str:
    columns = ", ".join(key)
    return f"SELECT COUNT(*) FROM (SELECT {columns} FROM {table} GROUP BY {columns} HAVING COUNT(*) > 1) AS duplicates"


def _latency(contract: Contract) -> dict[str, Any]:
    assert contract.freshness is not None
    age = contract.freshness.max_age
    return {
        "property": "latency",
        "value": age.amount,
        "unit": {"min": "m"}.get(age.unit, age.unit),
        "element": f"{contract.contract}.{contract.freshness.column or contract.time.column}",
    }


def _plain(value: Any) -> Any:
    """A section as the contract writes it: clauses as their text, no defaults the loader adds."""
    if isinstance(value, Duration | Cadence | TimezoneRule):
        return value.text
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


def _dump(document: dict[str, Any]) -> str:
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(
        Decimal, lambda r, d: r.represent_scalar("tag:yaml.org,2002:" + _number_tag(d), format(d, "f"))
    )
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue()


def _number_tag(value: Decimal) -> str:
    return "int" if value == value.to_integral_value() and "." not in format(value, "f") else "float"


# ---------------------------------------------------------------- import


def import_odcs(text: str) -> str:
    """Contract YAML for an ODCS v3 document of one schema object (see :mod:`tscontract.export.odcs_import`)."""
    from tscontract.export.odcs_import import import_document, load_document, object_names

    names = object_names(load_document(text))
    if len(names) != 1:
        raise InputError(f"the ODCS document has {len(names)} schema objects ({', '.join(names)}): name one")
    (imported,) = import_document(text)
    return imported.text
