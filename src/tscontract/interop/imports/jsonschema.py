"""A JSON Schema (draft 4 to 2020-12) of one record as a draft contract.

- the record: the root object schema, or ``--object NAME`` from ``$defs``/``definitions``; a property
  ``$ref`` to a local definition is followed.
- types: ``string`` (``format: date-time`` → ``timestamp_us_utc``, ``date`` → ``date``), ``integer``
  → ``int64`` (``int32`` when its range is exactly int32's), ``number`` → ``float64``, ``boolean``;
  string ``enum`` → ``enum[...]`` (or ``in (...)`` when a member is not a name), ``const`` → ``value``.
- nullability: ``null`` among the types (or an ``anyOf``/``oneOf`` branch), or not ``required``.
- ``minimum``/``maximum``/``exclusive*`` → comparisons, ``minLength``/``maxLength`` → ``length()``,
  ``pattern`` → ``matches``; ``default`` → ``default``; objects and arrays are listed and dropped;
  ``format``s with no tscontract type, ``multipleOf``, ``examples``... are listed.
- a schema this package exported gives back types (decimals travel as strings), nullability, key,
  time rules and invariants from its descriptions and ``$comment``s.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tscontract.contract.json_text import load_json
from tscontract.errors import InputError
from tscontract.interop.imports.base import (
    SchemaDraft,
    contract_name,
    finish,
    is_own,
    not_exported,
    restore_field_doc,
    restore_record_lines,
)
from tscontract.interop.imports.result import Imported
from tscontract.typemap.jsonschema import INT32, INT64

_INT32 = INT32
_INT64 = INT64
_ROOT_TAKEN: tuple[str, ...]  # extended below
_ROOT_TAKEN = ("$schema", "$id", "id", "type", "properties", "required", "title", "description", "$defs")
_ROOT_TAKEN += ("definitions", "$comment", "additionalProperties")
_PROPERTY_TAKEN: tuple[str, ...]  # extended below
_PROPERTY_TAKEN = ("type", "description", "title", "default", "$comment", "format", "enum", "const", "pattern")
_PROPERTY_TAKEN += ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength")
_PROPERTY_TAKEN += ("allOf", "anyOf", "oneOf", "$ref")
_CHECK = re.compile(r"^tscontract check (?P<id>\S+)$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def import_jsonschema(
    text: str,
    origin: str,
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
) -> list[Imported]:
    try:
        root = load_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a JSON Schema: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # nested past the bound
        raise InputError(f"not a JSON Schema tscontract reads: {exc}") from None
    if not isinstance(root, dict):
        raise InputError("not a JSON Schema: the document is not an object")
    definitions = {**(root.get("definitions") or {}), **(root.get("$defs") or {})}
    if object_name is not None:
        if object_name not in definitions:
            raise InputError(f"no definition {object_name!r} in $defs/definitions; it has: {', '.join(definitions)}")
        record, where = definitions[object_name], f"$defs.{object_name}"
    else:
        record, where = root, "schema"
    if not isinstance(record, dict) or not isinstance(record.get("properties"), dict) or not record["properties"]:
        hint = f" (definitions: {', '.join(definitions)}; give --object NAME)" if definitions else ""
        raise InputError(f"not a record schema: {where} has no properties{hint}")
    own = is_own(root.get("$comment"))
    title = str(record.get("title") or object_name or origin.rsplit(".", 2)[0])
    draft = SchemaDraft("JSON Schema", f"{origin} {where}", contract_name(title), object_name or "")
    _top(draft, root, record, own, where)
    required = set(record.get("required") or [])
    for name, prop in record["properties"].items():
        _property(draft, f"{where}.properties.{name}", name, _deref(prop, root), name in required, own)
    if own:
        _restore_time(draft, record, root)
    return [finish(draft, key, time_column)]


def _deref(prop: Any, root: dict[str, Any]) -> Any:
    ref = prop.get("$ref") if isinstance(prop, dict) else None
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return {**node, **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


def _top(draft: SchemaDraft, root: dict[str, Any], record: dict[str, Any], own: bool, where: str) -> None:
    if isinstance(record.get("description"), str) and not own:
        draft.top["description"] = record["description"]
    notes = [f"JSON Schema $id: {root[k]}" for k in ("$id", "id") if isinstance(root.get(k), str) and not own]
    if record is not root and isinstance(root.get("description"), str):
        notes.append(root["description"])
    if notes:
        draft.top["note"] = "\n".join(notes)
    comment = str(root.get("$comment") or "")
    if own:
        restore_record_lines(draft, comment.splitlines()[:1], "$comment")
        key = re.search(r"key\.unique \[key: \[([^\]]*)\]\]", comment)
        if key:
            draft.key = [k.strip() for k in key.group(1).split(",") if k.strip()]
    elif comment:
        draft.lose("$comment", comment, "a comment: no place in a tscontract contract")
    if record.get("additionalProperties") not in (None, False):
        draft.lose(
            f"{where}.additionalProperties", record["additionalProperties"], "tscontract refuses unknown columns"
        )
    for k, v in record.items():
        if k == "allOf" and own:
            _restore_checks(draft, where, record)
        elif k not in _ROOT_TAKEN:
            draft.lose(f"{where}.{k}", v, "no place in a tscontract contract")


def _branches(prop: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The property with a ``null`` branch of ``anyOf``/``oneOf`` or ``type`` removed, and whether it had one."""
    for k in ("anyOf", "oneOf"):
        branches = prop.get(k)
        if isinstance(branches, list) and any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
            rest = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(rest) == 1 and isinstance(rest[0], dict):
                merged = {**{x: y for x, y in prop.items() if x != k}, **rest[0]}
                return merged, True
    types = prop.get("type")
    if isinstance(types, list) and "null" in types:
        rest = [t for t in types if t != "null"]
        return {**prop, "type": rest[0] if len(rest) == 1 else rest}, True
    return prop, False


def _property(draft: SchemaDraft, path: str, written: str, prop: Any, required: bool, own: bool) -> None:
    if not isinstance(prop, dict):
        draft.lose(path, prop, "not a schema object")
        return
    prop, null_branch = _branches(prop)
    kind = prop.get("type")
    fmt = prop.get("format")
    if kind in ("object", "array") or isinstance(kind, list) or "properties" in prop or "items" in prop:
        draft.lose(path, kind, "nested or multi-typed: tscontract fields are scalar; the mapping drops the column")
        draft.drop.append(written)
        return
    name_hint = written
    entry: dict[str, Any] = {"nullable": null_branch or not required}
    enum = prop.get("enum")
    if kind == "string" and fmt == "date-time":
        entry["type"] = "timestamp_us_utc"
        entry["note"] = "format date-time states no fraction precision: microseconds assumed"
    elif kind == "string" and fmt == "date":
        entry["type"] = "date"
    elif kind == "string" or (kind is None and isinstance(enum, list) and all(isinstance(e, str) for e in enum)):
        entry["type"] = "string"
        if fmt is not None:
            draft.lose(f"{path}.format", fmt, f"format {fmt!r}: no tscontract type or check for it")
    elif kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        entry["type"] = "int32" if (low, high) == _INT32 else "int64"
        if (low, high) in (_INT32, _INT64):
            prop = {k: v for k, v in prop.items() if k not in ("minimum", "maximum")}
    elif kind == "number":
        entry["type"] = "float64"
    elif kind == "boolean":
        entry["type"] = "bool"
    else:
        draft.lose(path, kind, "no type stated: read as string")
        entry["type"] = "string"
    if own and isinstance(prop.get("description"), str):
        entry.update(restore_field_doc(prop["description"]))
        if "nullable" not in prop["description"]:
            entry.pop("nullable", None)
    elif isinstance(prop.get("description"), str):
        entry["description"] = prop["description"]
    if isinstance(prop.get("title"), str) and not own:
        entry["note"] = f"title: {prop['title']}"
    if "default" in prop and prop["default"] is not None:
        entry["default"] = prop["default"]
    if "const" in prop and not own:
        entry["value"] = prop["const"]
    name = draft.add_field(name_hint, entry)
    if not own:
        _values(draft, path, name, prop, entry)
    else:
        _restore_checks(draft, path, prop)
    if isinstance(prop.get("$comment"), str) and not own:
        draft.lose(f"{path}.$comment", prop["$comment"], "a comment: no place in a tscontract contract")
    for k, v in prop.items():
        if k not in _PROPERTY_TAKEN:
            draft.lose(f"{path}.{k}", v, "no place in a tscontract contract")
        elif k in ("allOf", "anyOf", "oneOf") and not own and not (k != "allOf" and null_branch):
            draft.lose(f"{path}.{k}", v, "schema composition: no tscontract clause for it")


def _values(draft: SchemaDraft, path: str, name: str, prop: dict[str, Any], entry: dict[str, Any]) -> None:
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        members = [e for e in enum if e is not None]
        if entry["type"] == "string" and all(isinstance(e, str) and _NAME.match(e) for e in members):
            entry["type"] = f"enum[{', '.join(members)}]"
        else:
            draft.enum_or_in(f"{path}.enum", name, members)
    draft.bounds(
        path,
        name,
        prop.get("exclusiveMinimum") if _number(prop.get("exclusiveMinimum")) else prop.get("minimum"),
        prop.get("exclusiveMaximum") if _number(prop.get("exclusiveMaximum")) else prop.get("maximum"),
        _number(prop.get("exclusiveMinimum")) or prop.get("exclusiveMinimum") is True,
        _number(prop.get("exclusiveMaximum")) or prop.get("exclusiveMaximum") is True,
    )
    for k, op in (("minLength", ">="), ("maxLength", "<=")):
        if isinstance(prop.get(k), int):
            draft.clause(f"{path}.{k}", f"{k}: {prop[k]}", f"length({name}) {op} {prop[k]}")
    if "pattern" in prop:
        draft.pattern(f"{path}.pattern", name, prop["pattern"])


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _restore_checks(draft: SchemaDraft, path: str, prop: dict[str, Any]) -> None:
    """The invariants an export of this package wrote under the property (``allOf`` with ``$comment``)."""
    for i, part in enumerate(prop.get("allOf") or []):
        check = _CHECK.match(str(part.get("$comment", ""))) if isinstance(part, dict) else None
        if check and check["id"].startswith("invariants[") and isinstance(part.get("description"), str):
            index = int(check["id"][len("invariants[") : -1])
            draft.clauses.append(_indexed(draft, f"{path}.allOf[{i}]", part["description"], index))


def _indexed(draft: SchemaDraft, path: str, clause: str, index: int) -> Any:
    from tscontract.interop.odcs.read import _Clause

    found = _Clause(path, clause, clause)
    found.written = str(index)
    return found


def _restore_time(draft: SchemaDraft, record: dict[str, Any], root: dict[str, Any]) -> None:
    """Time rules and the invariants not exported, from the export's descriptions and ``$comment``."""
    time: dict[str, Any] = {}
    for column, prop in record["properties"].items():
        for part in prop.get("allOf") or [] if isinstance(prop, dict) else []:
            check = _CHECK.match(str(part.get("$comment", ""))) if isinstance(part, dict) else None
            if check and check["id"] == "time.timezone":
                time = {"column": column, **time, "timezone": part.get("description")}
            elif check and check["id"] == "time.precision":
                time["precision"] = str(part.get("description", "")).removeprefix("precision: ")
    for check_id, clause in not_exported(str(root.get("$comment", "")).splitlines()):
        if check_id == "time.cadence":
            time["cadence"] = clause
        elif check_id.startswith("invariants["):
            index = int(check_id[len("invariants[") : -1])
            draft.clauses.append(_indexed(draft, f"$comment.{check_id}", clause, index))
    draft.clauses.sort(key=lambda c: int(c.written) if c.written.isdigit() else -1)
    for c in draft.clauses:
        c.written = c.clause
    if "column" in time:
        draft.time = {k: time[k] for k in ("column", "precision", "timezone", "cadence") if k in time}
    listed = re.compile(r"provenance_required: \[([^\]]*)\]")
    for prop in record["properties"].values():
        found = listed.search(str(prop.get("description", ""))) if isinstance(prop, dict) else None
        if found:
            draft.provenance = [n.strip() for n in found.group(1).split(",") if n.strip()]
            break
