"""Avro: the contract's record as an ``.avsc`` schema.

Decimals are ``bytes`` with the ``decimal`` logical type and the declared
precision and scale (never ``double``); UTC instants are ``long`` with
``timestamp-millis`` / ``-micros`` / ``-nanos``; a nullable field is the union
``["null", T]`` with default ``null`` (so it can be added compatibly); enums are
Avro enums; field aliases declared in the contract become Avro ``aliases`` (a
rename that keeps them is compatible). Units, dimensions and every clause about a
field are in its ``doc``, as written; the record's ``doc`` lists what the schema
does not state.

A clause counts as exported when data that conforms to the schema cannot break
it: Avro has no value constraints, so fixed values, constraints and invariants
are listed as not exported, with the batch-level clauses.
"""

from __future__ import annotations

import json
from typing import Any

from tscontract.contract.model import FieldSpec
from tscontract.errors import InputError
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports._records import (
    RECORD_UNSUPPORTED,
    batch_reason,
    camel,
    field_doc_parts,
    identifier,
    record_doc_lines,
)
from tscontract.plan.checks import CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.typemap.avro import avro_type, states_unit

# what the Avro schema states of each kind of check, and why it states none of the others
HANDLERS = frozenset(
    {
        CheckKind.REQUIRED_COLUMNS,
        CheckKind.UNKNOWN_COLUMNS,
        CheckKind.NOT_NULL,
        CheckKind.UTC_INSTANT,
        CheckKind.TYPE,
        CheckKind.TIME_PRECISION,
    }
)
_NO_CONSTRAINTS = "Avro types carry no value constraints or relations between fields"
UNSUPPORTED: dict[CheckKind, str] = {
    **RECORD_UNSUPPORTED,
    CheckKind.FIXED_VALUE: "Avro has no constant values",
    CheckKind.INVARIANT: _NO_CONSTRAINTS,
    CheckKind.CONSTRAINT: _NO_CONSTRAINTS,
    CheckKind.SERIES_PATTERN: _NO_CONSTRAINTS,
}

_OPTIONS = ("namespace",)


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """``<contract>.avsc``. Option ``namespace`` (default ``tscontract``)."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown avro export option(s): {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
    contract = plan.contract
    result = ExportResult("avro", contract.contract, contract.version)
    record_name = identifier(contract.contract)
    avro_fields = []
    type_skips: dict[str, str] = {}
    for name, spec in contract.fields.items():
        avro_type, why_not = _avro_type(record_name, name, spec)
        if why_not:
            type_skips[name] = why_not
        entry: dict[str, Any] = {"name": name}
        if contract.is_nullable(name):
            entry["type"] = ["null", avro_type]
            entry["default"] = None
        else:
            entry["type"] = avro_type
            if isinstance(spec.default, bool | int | str) and spec.type.kind in ("bool", "int", "string"):
                entry["default"] = spec.default
        entry["doc"] = "; ".join(field_doc_parts(contract, name))
        if spec.aliases:
            entry["aliases"] = list(spec.aliases)
        avro_fields.append(entry)

    precision_ok = all(states_unit(s.type) for s in contract.fields.values() if s.type.kind == "timestamp")
    for check in plan.checks:
        reason = batch_reason(check)
        if reason is not None:
            result.skip(check, reason)
        elif check.kind in ("required_columns", "unknown_columns", "not_null", "utc_instant"):
            result.exported.append(check.id)  # every record carries exactly the schema's fields; no null
        elif check.kind == "type":
            field_name = check.columns[0]
            if field_name in type_skips:
                result.skip(check, type_skips[field_name])
            else:
                result.exported.append(check.id)
        elif check.kind == "time_precision":
            if precision_ok:
                result.exported.append(check.id)
            else:
                result.skip(check, "Avro has no timestamp-seconds; timestamp-millis can hold a finer fraction")
        else:
            result.skip(check, UNSUPPORTED[check.kind])

    doc = [contract.description] if contract.description else []
    doc += [*record_doc_lines(contract), *result.header_lines()]
    schema = {
        "type": "record",
        "name": record_name,
        "namespace": options.get("namespace", "tscontract"),
        "doc": "\n".join(doc),
        "fields": avro_fields,
    }
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    result.artifacts.append(Artifact(f"{contract.contract}.avsc", text))
    return result


def _avro_type(record_name: str, name: str, spec: FieldSpec) -> tuple[Any, str | None]:
    """The Avro type of a field, and why it does not state the declared type exactly (or ``None``)."""
    enum_name = camel(name)
    return avro_type(spec.type, enum_name + "Enum" if enum_name == record_name else enum_name)
