"""JSON Schema containment for the subset ``export jsonschema`` emits.

``check_read(reader, writer)`` lists why a record valid under ``writer`` might
be invalid under ``reader`` (BACKWARD: reader = new, writer = old). The subset:
a closed object (``additionalProperties: false``), ``properties``, ``required``,
``type``, ``enum``, ``const``, ``pattern``, ``format``, numeric and length
bounds, and ``allOf`` clauses (each clause of the reader must be one of the
writer's, compared without annotations, local ``$ref`` inlined). Any other
validating keyword of the reader (``anyOf``, ``if``/``then``, ``not`` ...) must equal the writer's, since
containment of arbitrary subschemas is not decided here: a changed one is
reported, never passed silently. Annotations (``description``, ``$comment``,
``title``, ``$id``, ``$schema``, ``examples``, ``default``) are ignored.
"""

from __future__ import annotations

import json
from typing import Any

from tscontract.evolution.modes import Issue

_ANNOTATIONS = {
    "description",
    "$comment",
    "title",
    "$id",
    "$schema",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
}
_HANDLED = {
    "allOf",
    "type",
    "enum",
    "const",
    "pattern",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
}
_LOWER = ("minimum", "exclusiveMinimum", "minLength")  # the reader's bound may only go down
_UPPER = ("maximum", "exclusiveMaximum", "maxLength")  # ... or up
_MISSING = object()


def _types(schema: dict[str, Any]) -> set[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    return {kind} if isinstance(kind, str) else set(kind)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "unknown")


def _values(schema: dict[str, Any]) -> list[Any] | None:
    """The finite set of values the schema allows (``const``/``enum``), or None."""
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])
    return None


def _compare(reader: Any, writer: Any, path: str) -> list[Issue]:
    if reader is True or reader == {}:
        return []
    if writer is False:
        return []
    if reader is False:
        return [Issue(path, "schema became false")]
    if writer is True:
        writer = {}
    issues: list[Issue] = []
    writer_values = _values(writer)

    reader_types, writer_types = _types(reader), _types(writer)
    if reader_types is not None:
        if writer_types is None and writer_values is None:
            issues.append(Issue(f"{path}/type", f"type constrained to {sorted(reader_types)}"))
        elif writer_types is not None:
            widened = reader_types | ({"integer"} if "number" in reader_types else set())
            lost = sorted(writer_types - widened)
            if lost:
                issues.append(Issue(f"{path}/type", f"type {sorted(writer_types)} -> {sorted(reader_types)}"))
        else:  # the writer allows only listed values: each must have one of the reader's types
            widened = reader_types | ({"integer"} if "number" in reader_types else set())
            lost = [v for v in writer_values or [] if _json_type(v) not in widened]
            if lost:
                issues.append(Issue(f"{path}/type", f"values {lost} are not of type {sorted(reader_types)}"))

    reader_values = _values(reader)
    if reader_values is not None:
        if writer_values is None:
            issues.append(Issue(f"{path}/enum", f"values restricted to {reader_values}"))
        else:
            dropped = [v for v in writer_values if v not in reader_values]
            if dropped:
                keyword = "const" if "const" in reader else "enum"
                issues.append(Issue(f"{path}/{keyword}", f"{keyword} narrowed: {dropped} no longer allowed"))

    for keyword in ("pattern", "format"):
        if keyword in reader and reader[keyword] != writer.get(keyword, _MISSING):
            before = writer.get(keyword, "none")
            issues.append(Issue(f"{path}/{keyword}", f"{keyword} changed: {before!r} -> {reader[keyword]!r}"))

    for keyword in _LOWER + _UPPER:
        if keyword not in reader:
            continue
        before = writer.get(keyword)
        if before is None or (before < reader[keyword] if keyword in _LOWER else before > reader[keyword]):
            issues.append(Issue(f"{path}/{keyword}", f"{keyword} narrowed: {before} -> {reader[keyword]}"))

    writer_all = [_strip(item) for item in writer.get("allOf", [])]
    for index, item in enumerate(reader.get("allOf", [])):
        if _strip(item) not in writer_all:
            label = item.get("$comment", "").removeprefix("tscontract check ") if isinstance(item, dict) else ""
            issues.append(Issue(f"{path}/allOf/{index}", f"new or changed clause {label or json.dumps(item)}"))

    if "properties" in reader or "required" in reader or "additionalProperties" in reader:
        issues += _object(reader, writer, path)

    for keyword in sorted(set(reader) - _HANDLED - _ANNOTATIONS):
        if reader[keyword] != writer.get(keyword, _MISSING):
            issues.append(Issue(f"{path}/{keyword}", f"{keyword} changed (containment not proven)"))
    return issues


def _object(reader: dict[str, Any], writer: dict[str, Any], path: str) -> list[Issue]:
    issues = []
    reader_props, writer_props = reader.get("properties", {}), writer.get("properties", {})
    reader_closed = reader.get("additionalProperties", True) is False
    writer_closed = writer.get("additionalProperties", True) is False
    for name, writer_schema in writer_props.items():
        prop_path = f"{path}/properties/{name}"
        if name in reader_props:
            issues += _compare(reader_props[name], writer_schema, prop_path)
        elif reader_closed:
            issues.append(Issue(prop_path, "property removed while additionalProperties is false"))
        elif isinstance(reader.get("additionalProperties"), dict):
            issues += _compare(reader["additionalProperties"], writer_schema, prop_path)
    for name, reader_schema in reader_props.items():
        if name not in writer_props and not writer_closed:
            issues += _compare(reader_schema, True, f"{path}/properties/{name}")
    if reader_closed and not writer_closed:
        issues.append(Issue(f"{path}/additionalProperties", "additionalProperties became false"))
    writer_required = set(writer.get("required", []))
    for name in reader.get("required", []):
        if name not in writer_required:
            issues.append(Issue(f"{path}/required/{name}", f"{name} became required"))
    return issues


def _strip(node: Any) -> Any:
    """``node`` without annotations, for comparing clauses whatever their comments say."""
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _ANNOTATIONS}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _inline(node: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """Replace local ``{"$ref": "#/$defs/x"}`` by the definition, so a changed definition is a changed clause."""
    if isinstance(node, list):
        return [_inline(v, defs, depth) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs and depth < 8:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(defs[ref[8:]], defs, depth + 1), **_inline(rest, defs, depth)}
    return {k: _inline(v, defs, depth) for k, v in node.items()}


def _load(text: str | dict) -> Any:
    schema = json.loads(text) if isinstance(text, str) else text
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return _inline(schema, defs)


def check_read(reader: str, writer: str, reader_is_new: bool = True) -> list[Issue]:
    """Why a record valid under JSON Schema ``writer`` may be rejected by ``reader`` (empty: never)."""
    del reader_is_new  # containment depends only on which side validates
    return _compare(_load(reader), _load(writer), "")
