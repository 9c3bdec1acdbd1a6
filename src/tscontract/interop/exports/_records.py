"""Shared pieces of the record-format exporters (Avro, Protobuf, JSON Schema, ODCS).

* CSV rows typed the way a contract declares each field: :func:`python_record`
  (exact Python values: ``Decimal``, UTC ``datetime``) for binary formats and
  :func:`json_record` (decimals and instants as their text) for JSON. The export
  proofs feed the example fixtures through them.
* Why a record schema cannot state a clause that relates records to each other,
  to the clock or to the catalog: :func:`batch_reason`, one wording for every format.
* Small naming helpers every generated schema needs.
"""

from __future__ import annotations

import base64
import csv
import re
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from tscontract.contract.catalog import parse_instant
from tscontract.contract.model import Contract, FieldSpec
from tscontract.plan.checks import Check
from tscontract.plan.kinds import CheckKind

_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_DECIMAL = re.compile(r"^[+-]?[0-9]+(\.[0-9]+)?$")


# ---------------------------------------------------------------- fixture rows


def read_csv_rows(path: str | Path) -> list[dict[str, str | None]]:
    """The rows of a CSV file as text, an empty cell as ``None`` (the examples' null)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(handle)]


def python_value(spec: FieldSpec, text: str | None) -> Any:
    """``text`` as the Python value of the field's declared type; ``ValueError`` when it is not one."""
    if text is None:
        return None
    kind = spec.type.kind
    if kind == "decimal":
        if not _DECIMAL.match(text):
            raise ValueError(f"{text!r} is not a plain decimal number")
        return Decimal(text)
    if kind == "int":
        if not _INTEGER.match(text):
            raise ValueError(f"{text!r} is not an integer")
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "bool":
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"{text!r} is not true or false")
        return lowered == "true"
    if kind == "timestamp":
        return parse_instant(text)
    if kind == "date":
        return date.fromisoformat(text)
    if kind == "bytes":
        return base64.b64decode(text, validate=True)
    return text


def python_record(contract: Contract, row: dict[str, str | None]) -> dict[str, Any]:
    """A CSV row as exact Python values, field by field in contract order."""
    return {name: python_value(spec, row.get(name)) for name, spec in contract.fields.items()}


def json_value(spec: FieldSpec, text: str | None) -> Any:
    """``text`` as the JSON value a producer would send for the declared type.

    Decimals and instants travel as their text (JSON has one number type and no
    instant type); integers, floats and booleans as JSON scalars when the text is
    one. Text that is not a value of the type is kept as text, so a schema sees
    what was sent and can reject it.
    """
    if text is None:
        return None
    kind = spec.type.kind
    if kind == "int" and _INTEGER.match(text):
        return int(text)
    if kind == "float":
        try:
            return float(Decimal(text))
        except InvalidOperation:
            return text
    if kind == "bool" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def json_record(contract: Contract, row: dict[str, str | None]) -> dict[str, Any]:
    """A CSV row as a JSON object; columns the contract does not declare are kept as text."""
    record: dict[str, Any] = {}
    for name, text in row.items():
        spec = contract.fields.get(name)
        record[name] = json_value(spec, text) if spec is not None else text
    return record


# ---------------------------------------------------------------- shared reasons

# what the dataset exports (dbt, Soda, GX) say of checks no table-level test states
RAW_INPUT = "judged on the input as read (a malformed line), before there is a table"
FROM_HISTORY = "history-derived bounds change with every profile; run tscontract validate --bounds"
# kinds no test over one table states (dbt, Soda)
TABLE_REASONS: dict[CheckKind, str] = {
    CheckKind.SESSION: "needs the venue's exchange sessions (calendar, holidays, half days)",
    CheckKind.COMPLETENESS: "counts expected points per window, cadence and session; "
    "no test over one table expresses it",
    CheckKind.WELL_FORMED: RAW_INPUT,
    CheckKind.PLAUSIBILITY: FROM_HISTORY,
    CheckKind.SCALE_SHIFT: FROM_HISTORY,
}

# kinds no record schema states (Avro, Protobuf, JSON Schema, Confluent): each is a property of many records
RECORD_UNSUPPORTED: dict[CheckKind, str] = {
    CheckKind.UNIQUE_KEY: "uniqueness relates records to one another; a record schema describes one record at a time",
    CheckKind.CADENCE: "the spacing of points per series is a property of the batch, not of one record",
    CheckKind.SESSION: "sessions come from the series' calendar (exchange or weekly hours), "
    "which a schema cannot consult",
    CheckKind.COMPLETENESS: "expected point counts per window are a property of the batch, not of one record",
    CheckKind.FRESHNESS: "the age of the newest point is judged against the clock at the consumer boundary",
    CheckKind.CATALOG_SERIES: "needs the series catalog, which a schema does not carry",
    CheckKind.CALIBRATION_IN_FORCE: "needs the catalog's calibration records and the event time",
    CheckKind.PLAUSIBILITY: "bounds derived from history are not part of the contract's schema",
    CheckKind.SCALE_SHIFT: "a shift of typical magnitude is judged over a batch against history",
    CheckKind.UNIQUE: "uniqueness relates records to one another; a record schema describes one record at a time",
    CheckKind.ROW_COUNT: "the number of rows is a property of the batch, not of one record",
    CheckKind.STEP: "a jump is judged against the neighbouring points of the series, not within one record",
    CheckKind.SQL_CHECK: "a query over the whole batch; a record schema describes one record at a time",
    CheckKind.WELL_FORMED: "judged on the input as read (a malformed line, a JSON key given twice), "
    "before there is a record",
}


def tolerance_reason(check: Check, why: str) -> str | None:
    """Why a check that tolerates a share of failing rows (``max_failing``) is not exported; None if it does not."""
    share = check.params.max_failing
    return None if share is None else f"tolerates up to {share.text} of rows failing (max_failing); {why}"


def batch_reason(check: Check) -> str | None:
    """Why no record schema can state ``check``; ``None`` for a clause about one record."""
    if check.params.needs_catalog and check.kind in ("constraint", "invariant"):
        catalog = check.params.catalog
        what = f"catalog {catalog.attribute} for {catalog.key}" if catalog is not None else "the series catalog"
        return f"looks up {what}; a schema would freeze today's catalog into the contract's schema"
    return RECORD_UNSUPPORTED.get(check.kind)


# ---------------------------------------------------------------- naming


def identifier(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_]`` replaced, never starting with a digit."""
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"_{cleaned}" if cleaned[:1].isdigit() else cleaned


def camel(name: str) -> str:
    """``plant_sensor_reading`` -> ``PlantSensorReading``; ``ohlcv_1m`` -> ``Ohlcv1m``."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    joined = "".join(w[:1].upper() + w[1:] for w in words) or "Record"
    return f"_{joined}" if joined[:1].isdigit() else joined


def field_doc_parts(contract: Contract, name: str) -> list[str]:
    """What the contract says about one field, each clause as written, for a doc string."""
    spec = contract.fields[name]
    parts = [f"type: {spec.type.text}"]
    if spec.unit is not None:
        parts.append(f"unit: {spec.unit}")
    if spec.dimension is not None:
        parts.append(f"dimension: {spec.dimension}")
    if spec.implied:
        parts.append(f"provenance_required: [{', '.join(contract.provenance_required)}]")
    elif spec.nullable is not None:
        parts.append(f"nullable: {str(spec.nullable).lower()}")
    elif not contract.is_nullable(name):
        parts.append(f"not null: key [{', '.join(contract.key)}]")
    if spec.has_value:
        shown = str(spec.value).lower() if isinstance(spec.value, bool) else spec.value
        parts.append(f"value: {shown}")
    if spec.default is not None:
        parts.append(f"default: {spec.default}")
    if spec.constraint is not None:
        parts.append(f"constraint: {spec.constraint}")
    if spec.aliases:
        parts.append(f"aliases: [{', '.join(spec.aliases)}]")
    if spec.deprecated is not None:
        deprecated = f"deprecated since {spec.deprecated.since}"
        if spec.deprecated.replacement:
            deprecated += f", replaced by {spec.deprecated.replacement}"
        if spec.deprecated.removal_after:
            deprecated += f", removed after {spec.deprecated.removal_after}"
        parts.append(deprecated)
    if spec.description is not None:
        parts.append(spec.description)
    if spec.note is not None:
        parts.append(f"note: {spec.note}")
    return parts


def record_doc_lines(contract: Contract) -> list[str]:
    """The record-level clauses (key, time rules, invariants, revisions, provenance), as written."""
    time = contract.time
    lines = [f"key: [{', '.join(contract.key)}]"]
    rules = [f"column: {time.column}"]
    if time.precision:
        rules.append(f"precision: {time.precision}")
    if time.timezone:
        rules.append(f"timezone: {time.timezone.text}")
    if time.cadence:
        rules.append(f"cadence: {time.cadence.text}")
    lines.append("time: " + "; ".join(rules))
    lines += [
        f"invariants[{i}]: {clause.text}" + (" (severity: warning)" if clause.severity == "warning" else "")
        for i, clause in enumerate(contract.invariants)
    ]
    policy = contract.revision_policy
    if policy is not None:
        parts = [f"allowed: {str(policy.allowed).lower()}"]
        if policy.window:
            parts.append(f"window: {policy.window.text}")
        if policy.reasons:
            parts.append(f"reasons: [{', '.join(policy.reasons)}]")
        if policy.who:
            parts.append(f"who: [{', '.join(policy.who)}]")
        if policy.notification:
            parts.append(f"notification: {policy.notification}")
        lines.append("revision_policy: " + "; ".join(parts))
    if contract.provenance_required:
        lines.append(f"provenance_required: [{', '.join(contract.provenance_required)}]")
    return lines
