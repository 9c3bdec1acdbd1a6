"""The parsed contract as plain JSON data (``tscontract show --format json``)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from tscontract.contract.model import Contract, FieldSpec


def _plain(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date):  # a holiday of a calendar declared by its hours
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "model_dump"):
        return {k: _plain(getattr(value, k)) for k in type(value).model_fields if getattr(value, k) is not None}
    return value


def field_to_json(contract: Contract, spec: FieldSpec) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": spec.type.to_json(),
        "nullable": contract.is_nullable(spec.name),
        "nullable_declared": spec.nullable is not None,
    }
    for key in ("unit", "dimension", "description", "note"):
        if getattr(spec, key) is not None:
            data[key] = getattr(spec, key)
    if spec.has_value:
        data["value"] = _plain(spec.value)
    if spec.default is not None:
        data["default"] = _plain(spec.default)
    if spec.aliases:
        data["aliases"] = list(spec.aliases)
    if spec.deprecated is not None:
        data["deprecated"] = _plain(spec.deprecated)
    if spec.name in contract.constraints:
        data["constraint"] = contract.constraints[spec.name].to_json()
    if spec.unique_rule is not None:
        data["unique"] = _plain(spec.unique_rule)
    if spec.step is not None:
        data["step"] = _plain(spec.step)
    if spec.flag_of is not None:
        data["flag_of"] = spec.flag_of
    if spec.implied:
        data["implied_by"] = "provenance_required"
    return data


def contract_to_json(contract: Contract) -> dict[str, Any]:
    """Every section of the contract with each clause in structured and verbatim form."""
    return {
        "contract": contract.contract,
        "version": contract.version,
        "file": contract.path,
        "owner": contract.owner,
        "source": contract.source,
        "description": contract.description,
        "series": _plain(contract.series) if contract.series else None,
        "series_column": contract.series_column,
        "key": list(contract.key),
        "time": _plain(contract.time),
        "fields": {name: field_to_json(contract, spec) for name, spec in contract.fields.items()},
        "units": _plain(contract.units),
        "invariants": [clause.to_json() for clause in contract.invariants],
        "revision_policy": _plain(contract.revision_policy) if contract.revision_policy else None,
        "duplicates": _plain(contract.duplicates) if contract.duplicates else None,
        "row_count": _plain(contract.row_count) if contract.row_count else None,
        "sql_checks": [_plain(c) for c in contract.sql_checks],
        "completeness": _plain(contract.completeness) if contract.completeness else None,
        "freshness": _plain(contract.freshness) if contract.freshness else None,
        "evolution": _plain(contract.evolution) if contract.evolution else None,
        "provenance_required": list(contract.provenance_required),
        "calendars": _plain(contract.calendars),
        "odcs": contract.odcs,
    }
