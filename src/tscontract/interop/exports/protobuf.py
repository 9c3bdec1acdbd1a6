"""Protobuf: the contract's record as a proto3 message, with field numbers that never move.

* Instants are ``google.protobuf.Timestamp`` (UTC by definition).
* Every scalar and enum field is ``optional``: proto3 scalars have no presence,
  and an unset ``double`` reads as 0.0 — indistinguishable from a measured zero.
  With ``optional`` an absent reading is ``HasField(...) == False``.
* ``decimal(p,s)`` travels as a ``string`` holding the exact decimal text
  (``"229.78"``): exact at any precision (``decimal(24,4)`` does not fit an int64
  unscaled value), readable, and parsed by ``Decimal(text)``. Precision and scale
  are checked by ``tscontract validate``, not by protobuf.
* ``enum[...]`` is a proto enum whose zero value is ``<FIELD>_UNSPECIFIED``.
* Field numbers live in a lock file, ``<contract>.proto.lock.json``. Pass the
  previous lock (``lock=`` a dict or a path) and every field keeps its number; a
  new field gets a number never used before; a removed field's number and name
  become ``reserved``; a field renamed with ``aliases: [old]`` keeps the old
  number. The updated lock is the second artifact: commit it beside the contract.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tscontract.contract.model import Contract, FieldSpec
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
from tscontract.typemap.protobuf import proto_type, type_loss

# what the .proto states of each kind of check, and why it states none of the others
HANDLERS = frozenset({CheckKind.TYPE, CheckKind.UTC_INSTANT})
_NO_CONSTRAINTS = "protobuf types carry no value constraints or relations between fields"
UNSUPPORTED: dict[CheckKind, str] = {
    **RECORD_UNSUPPORTED,
    CheckKind.TIME_PRECISION: "google.protobuf.Timestamp carries nanoseconds: a finer fraction is representable",
    CheckKind.NOT_NULL: "proto3 has no required fields; the field is optional, so absence is visible (HasField)",
    CheckKind.REQUIRED_COLUMNS: "an absent field is simply not on the wire; proto3 cannot require one",
    CheckKind.UNKNOWN_COLUMNS: "protobuf parsers keep unknown fields instead of rejecting them",
    CheckKind.FIXED_VALUE: _NO_CONSTRAINTS,
    CheckKind.INVARIANT: _NO_CONSTRAINTS,
    CheckKind.CONSTRAINT: _NO_CONSTRAINTS,
    CheckKind.SERIES_PATTERN: _NO_CONSTRAINTS,
}

_FIRST_RESERVED, _LAST_RESERVED = 19000, 19999  # numbers protobuf keeps for itself
_OPTIONS = ("lock", "package")


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """``<contract>.proto`` and ``<contract>.proto.lock.json``.

    Options: ``lock`` (the previous lock as a dict, or the path of its file; a
    path that does not exist yet starts a new lock) and ``package`` (default
    ``tscontract.<contract>.v<major>``).
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown protobuf export option(s): {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
    contract = plan.contract
    result = ExportResult("protobuf", contract.contract, contract.version)
    message = camel(contract.contract)
    lock = _update_lock(contract, message, _read_lock(options.get("lock"), contract))

    type_skips: dict[str, str] = {}
    for name, spec in contract.fields.items():
        why_not = _type_gap(spec)
        if why_not:
            type_skips[name] = why_not
    for check in plan.checks:
        reason = batch_reason(check)
        if reason is not None:
            result.skip(check, reason)
        elif check.kind == "type":
            if check.columns[0] in type_skips:
                result.skip(check, type_skips[check.columns[0]])
            else:
                result.exported.append(check.id)
        elif check.kind == "utc_instant":
            result.exported.append(check.id)  # google.protobuf.Timestamp is a UTC instant by definition
        else:
            result.skip(check, UNSUPPORTED[check.kind])

    package = options.get("package") or f"tscontract.{identifier(contract.contract).lower()}.v{_major(contract)}"
    text = _render(contract, result, message, package, lock)
    result.artifacts.append(Artifact(f"{contract.contract}.proto", text))
    result.artifacts.append(Artifact(f"{contract.contract}.proto.lock.json", json.dumps(lock, indent=2) + "\n"))
    return result


# ---------------------------------------------------------------- the lock


def _read_lock(lock: Any, contract: Contract) -> dict[str, Any]:
    if lock is None:
        return {}
    if isinstance(lock, str | Path):
        path = Path(lock)
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the protobuf lock {path}: {exc}") from None
    elif isinstance(lock, dict):
        data = copy.deepcopy(lock)
    else:
        raise InputError("the protobuf lock is a dict or the path of a .proto.lock.json file")
    if not isinstance(data, dict) or not isinstance(data.get("fields", {}), dict):
        raise InputError("the protobuf lock is not a tscontract lock (no 'fields' mapping)")
    if data.get("contract", contract.contract) != contract.contract:
        raise InputError(f"the protobuf lock is for contract {data['contract']!r}, not {contract.contract!r}")
    return data


def _next_number(used: set[int]) -> int:
    number = max(used, default=0) + 1  # above every number ever used: never reuse a gap
    return _LAST_RESERVED + 1 if _FIRST_RESERVED <= number <= _LAST_RESERVED else number


def _assign(
    wanted: list[tuple[str, tuple[str, ...]]], previous: dict[str, Any], start_used: set[int]
) -> dict[str, Any]:
    """Numbers for ``wanted`` (name, aliases) given the previous lock section; removed names reserved."""
    old = dict(previous.get("fields", previous.get("values", {})))
    reserved = previous.get("reserved", {})
    reserved_numbers = list(reserved.get("numbers", []))
    reserved_names = list(reserved.get("names", []))
    used = set(old.values()) | set(reserved_numbers) | start_used
    names = {name for name, _ in wanted}
    assigned: dict[str, int] = {}
    renamed: dict[str, str] = {}  # new name -> the old name whose number it kept
    for name, aliases in wanted:
        number = old.get(name)
        if number is None:  # a rename that declares the old name keeps the old number
            taken = set(renamed.values())
            alias = next((a for a in aliases if a in old and a not in names and a not in taken), None)
            if alias is not None:
                number = old[alias]
                renamed[name] = alias
        if number is None:
            number = _next_number(used)
            used.add(number)
        assigned[name] = number
        if name in reserved_names:  # a name coming back gets a new number; the old number stays reserved
            reserved_names.remove(name)
    for name, number in old.items():
        if name in assigned:
            continue
        if name not in renamed.values() and number not in reserved_numbers:
            reserved_numbers.append(number)
        if name not in reserved_names:
            reserved_names.append(name)
    return {
        "numbers": assigned,
        "reserved": {"numbers": sorted(reserved_numbers), "names": reserved_names},
        "renamed": renamed,
    }


def _update_lock(contract: Contract, message: str, previous: dict[str, Any]) -> dict[str, Any]:
    fields = _assign([(n, s.aliases) for n, s in contract.fields.items()], previous, set())
    enums: dict[str, Any] = {}
    old_enums = previous.get("enums", {})
    for name, spec in contract.fields.items():
        if spec.type.kind == "enum":
            previous_enum = old_enums.get(name) or old_enums.get(fields["renamed"].get(name, ""), {})
            values = _assign([(m, ()) for m in spec.type.members], previous_enum, {0})
            enums[name] = {"values": values["numbers"], "reserved": values["reserved"]}
    return {
        "contract": contract.contract,
        "version": contract.version,
        "message": message,
        "fields": fields["numbers"],
        "reserved": fields["reserved"],
        "enums": enums,
    }


# ---------------------------------------------------------------- the .proto text


def _major(contract: Contract) -> str:
    return contract.version.split(".")[0]


def _type_gap(spec: FieldSpec) -> str | None:
    """Why the proto type does not state the declared type exactly, or ``None``."""
    return type_loss(spec.type)


def _enum_type(message: str, name: str) -> str:
    enum = camel(name)
    return enum + "Enum" if enum == message else enum


def _proto_type(message: str, name: str, spec: FieldSpec) -> str:
    return proto_type(spec.type, _enum_type(message, name))


def _comment(lines: list[str], indent: str = "") -> list[str]:
    out = []
    for line in lines:
        for part in str(line).splitlines() or [""]:
            out.append(f"{indent}// {part}".rstrip())
    return out


def enum_value_name(field_name: str, member: str) -> str:
    """The proto enum value for a contract enum member: ``quality``, ``good`` -> ``QUALITY_GOOD``."""
    return f"{identifier(field_name).upper()}_{identifier(member).upper().lstrip('_')}"


def _reserved(reserved: dict[str, Any], indent: str) -> list[str]:
    lines = [f"{indent}reserved {n};" for n in reserved["numbers"]]
    lines += [f'{indent}reserved "{n}";' for n in reserved["names"]]
    return lines


def _render(contract: Contract, result: ExportResult, message: str, package: str, lock: dict[str, Any]) -> str:
    header = [
        *result.header_lines(),
        "",
        'Decimals: decimal(p,s) fields are strings holding the exact decimal text (e.g. "229.78"); precision',
        "and scale are checked by tscontract (a double is inexact; decimal(24,4) overflows an int64 unscaled).",
        'Presence: every scalar and enum field is optional, so an absent reading differs from 0, "" or false.',
        f"Field numbers are kept in {contract.contract}.proto.lock.json: never reuse one; removed ones are reserved.",
    ]
    lines = [*_comment(header), 'syntax = "proto3";', "", f"package {package};", ""]
    if any(s.type.kind == "timestamp" for s in contract.fields.values()):
        lines += ['import "google/protobuf/timestamp.proto";', ""]
    doc = ([contract.description] if contract.description else []) + record_doc_lines(contract)
    lines += _comment(doc)
    lines.append(f"message {message} {{")
    body: list[str] = _reserved(lock["reserved"], "  ")
    for name, spec in contract.fields.items():
        if spec.type.kind != "enum":
            continue
        enum_lock = lock["enums"][name]
        if body:
            body.append("")
        body.append(f"  enum {_enum_type(message, name)} {{")
        body += _reserved(
            {
                "numbers": enum_lock["reserved"]["numbers"],
                "names": [enum_value_name(name, n) for n in enum_lock["reserved"]["names"]],
            },
            "    ",
        )
        body.append(f"    {identifier(name).upper()}_UNSPECIFIED = 0;")
        for member in spec.type.members:
            body.append(f"    {enum_value_name(name, member)} = {enum_lock['values'][member]};  // {member}")
        body.append("  }")
    for name, spec in contract.fields.items():
        proto_type = _proto_type(message, name, spec)
        label = "" if spec.type.kind == "timestamp" else "optional "
        options = " [deprecated = true]" if spec.deprecated is not None else ""
        if body:
            body.append("")
        body += _comment(field_doc_parts(contract, name), "  ")
        body.append(f"  {label}{proto_type} {name} = {lock['fields'][name]}{options};")
    lines += body
    lines.append("}")
    return "\n".join(lines) + "\n"
