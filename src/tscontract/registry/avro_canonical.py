"""An Avro schema as Confluent's registry stores it: Avro's own ``Schema.toString()``.

Confluent's ``AvroSchema.canonicalString()`` is Java Avro's compact ``toString`` of the parsed schema,
so two texts that differ only in attribute order, in how a name is written (``"acme.Bar"`` or
``"Bar"`` with ``"namespace": "acme"``) or in a redundant ``namespace`` are one schema, one id,
without ``normalize``. This writes a parsed JSON document the way ``Schema.toJson`` does:

* a named type: ``type``, ``name`` (the simple name), ``namespace`` (only when it differs from the
  enclosing one; ``""`` for the null namespace inside another), ``doc``, then ``fields`` /
  ``symbols`` (and an enum's ``default``) / ``size``, its other properties in the order written,
  then ``aliases`` (relative to its namespace);
* a field: ``name``, ``type``, ``doc``, ``default``, ``order`` (left out when ``ascending``),
  ``aliases``, then its other properties;
* ``array`` / ``map``: ``type``, ``items`` / ``values``, properties; a primitive with properties
  (``logicalType``...) ``type`` then the properties, without any: its name (``{"type": "int"}`` is
  ``"int"``);
* a reference to a named type: its name relative to the enclosing namespace.

Anything Avro would refuse is left to the parser (this runs on texts that parse); what it does not
recognise is written back as it came.
"""

from __future__ import annotations

from typing import Any

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_NAMED = {"record", "error", "enum", "fixed"}
# attributes a schema object's own writer emits; the others are properties, written in their order
_RESERVED = {"type", "name", "namespace", "doc", "fields", "symbols", "size", "items", "values", "aliases"}
_FIELD_RESERVED = {"name", "type", "doc", "default", "order", "aliases"}


def avro_canonical(document: Any) -> Any:
    """``document`` (a parsed Avro schema) as Java Avro's ``Schema.toString()`` writes it."""
    return _schema(document, None)


def _full(name: str, space: str | None) -> tuple[str, str | None]:
    """(full name, its namespace) of ``name`` in ``space``."""
    if "." in name:
        return name, name.rpartition(".")[0] or None
    return (f"{space}.{name}" if space else name), space


def _relative(full: str, space: str | None) -> str:
    """A full name as Avro writes a reference in ``space``: simple in the same namespace (unless a primitive's)."""
    namespace, _, simple = full.rpartition(".")
    if (namespace or None) == space and simple not in PRIMITIVES:
        return simple
    return full


def _schema(node: Any, space: str | None) -> Any:
    if isinstance(node, list):
        return [_schema(branch, space) for branch in node]
    if isinstance(node, str):
        return node if node in PRIMITIVES else _relative(_full(node, space)[0], space)
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        return node
    kind = node["type"]
    if kind in _NAMED and isinstance(node.get("name"), str):
        return _named(node, space)
    props = {key: value for key, value in node.items() if key not in _RESERVED}
    if kind in PRIMITIVES:
        return {"type": kind, **props} if len(node) > 1 else kind
    if kind in ("array", "map"):
        out: dict[str, Any] = {"type": kind}
        member = "items" if kind == "array" else "values"
        if member in node:
            out[member] = _schema(node[member], space)
        out.update(props)
        out.update((key, value) for key, value in node.items() if key not in out)  # unexpected: as it came
        return out
    if len(node) == 1:  # {"type": "acme.Bar"}: a reference to a named type
        return _schema(kind, space)
    return node


def _named(node: dict[str, Any], space: str | None) -> dict[str, Any]:
    if node.get("namespace") is not None and not isinstance(node["namespace"], str):
        return node  # not Avro: the parser says why
    namespace = node.get("namespace") if isinstance(node.get("namespace"), str) else space
    full, own = _full(node["name"], namespace or None)
    out: dict[str, Any] = {"type": node["type"], "name": full.rpartition(".")[2]}
    if own != space:
        out["namespace"] = own or ""
    if node.get("doc") is not None:
        out["doc"] = node["doc"]
    if node["type"] in ("record", "error") and isinstance(node.get("fields"), list):
        out["fields"] = [_field(field, own) for field in node["fields"]]
    elif node["type"] == "enum" and "symbols" in node:
        out["symbols"] = node["symbols"]
        if node.get("default") is not None:
            out["default"] = node["default"]
    elif node["type"] == "fixed" and "size" in node:
        out["size"] = node["size"]
    skip = _RESERVED | ({"default"} if node["type"] == "enum" else set())
    out.update((key, value) for key, value in node.items() if key not in skip)
    aliases = node.get("aliases")
    if isinstance(aliases, list) and aliases:
        names = [_relative(_full(a, own)[0], own) if isinstance(a, str) else a for a in aliases]
        out["aliases"] = list(dict.fromkeys(names))
    leftover = ("fields", "symbols", "size", "items", "values")  # what this type does not take: as it came
    out.update((key, node[key]) for key in leftover if key in node and key not in out)
    return out


def _field(field: Any, space: str | None) -> Any:
    if not isinstance(field, dict):
        return field
    out: dict[str, Any] = {}
    if "name" in field:
        out["name"] = field["name"]
    if "type" in field:
        out["type"] = _schema(field["type"], space)
    for key in ("doc", "default"):
        if key in field and (key == "default" or field[key] is not None):
            out[key] = field[key]
    if field.get("order") not in (None, "ascending"):
        out["order"] = field["order"]
    aliases = field.get("aliases")
    if isinstance(aliases, list) and aliases:
        out["aliases"] = list(dict.fromkeys(a for a in aliases if isinstance(a, str)))
    out.update((key, field[key]) for key in field if key not in _FIELD_RESERVED)
    return out
