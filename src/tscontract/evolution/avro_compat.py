"""Avro reader/writer schema resolution (Avro 1.11 specification, "Schema Resolution").

``check_read(reader, writer)`` lists why data written with ``writer`` cannot be
read with ``reader``. Beyond the specification, and on purpose:

* ``decimal`` precision and scale must match (the spec says so; the ``avro``
  package's checker ignores logical types), and a logical type may not appear,
  vanish or change (``timestamp-millis`` -> ``timestamp-micros`` reads a
  millisecond count as microseconds).
* Named types match by unqualified name or a reader alias (as the spec says);
  a namespace change is reported as a warning.

A logical type the specification does not define, or one on the wrong underlying
type (``date`` on a ``string``, ``decimal`` without a valid precision), is ignored:
the schema resolves as its underlying type ("Language implementations must ignore
unknown logical types when reading, and should use the underlying Avro type").
"""

from __future__ import annotations

import functools
from typing import Any

from tscontract.contract.json_text import load_json
from tscontract.evolution.issues import Issue

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_NAMED = {"record", "error", "enum", "fixed"}
_PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}


# logical type -> the underlying types it may annotate (Avro 1.12 specification, "Logical Types")
_LOGICAL: dict[object, set[str]] = {  # keyed by any JSON value a schema gives as logicalType
    "decimal": {"bytes", "fixed"},
    "big-decimal": {"bytes"},
    "uuid": {"string", "fixed"},
    "date": {"int"},
    "time-millis": {"int"},
    "time-micros": {"long"},
    "timestamp-millis": {"long"},
    "timestamp-micros": {"long"},
    "timestamp-nanos": {"long"},
    "local-timestamp-millis": {"long"},
    "local-timestamp-micros": {"long"},
    "local-timestamp-nanos": {"long"},
    "duration": {"fixed"},
}


def _valid_logical(node: dict[str, Any]) -> bool:
    """Is ``node``'s logicalType one the specification defines, on a type it may annotate?"""
    logical, kind = node.get("logicalType"), node["type"]
    if kind not in _LOGICAL.get(logical, ()):
        return False
    if logical == "decimal":
        precision, scale = node.get("precision"), node.get("scale", 0)
        if not isinstance(precision, int) or isinstance(precision, bool) or precision < 1:
            return False
        if not isinstance(scale, int) or isinstance(scale, bool) or not 0 <= scale <= precision:
            return False
        if kind == "fixed" and precision > int((8 * node.get("size", 0) - 1) * 0.3010299956639812):
            return False  # more digits than the fixed size holds
    if logical == "uuid" and kind == "fixed":
        return node.get("size") == 16
    if logical == "duration":
        return node.get("size") == 12
    return True


def _plain(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` without an unknown or invalid logical type (ignored, per the specification)."""
    if "logicalType" in node and not _valid_logical(node):
        return {k: v for k, v in node.items() if k not in ("logicalType", "precision", "scale")}
    return node


class _Schema:
    """A parsed schema: every node normalised to a dict; named types indexed by full name."""

    def __init__(self, text: str | dict | list) -> None:
        raw = load_json(text)
        self.names: dict[str, dict[str, Any]] = {}
        self.root = self._walk(raw, "")

    def _fullname(self, name: str, namespace: str) -> str:
        return name if "." in name or not namespace else f"{namespace}.{name}"

    def _walk(self, node: Any, namespace: str) -> Any:
        if isinstance(node, list):
            return [self._walk(branch, namespace) for branch in node]
        if isinstance(node, str):
            if node in _PRIMITIVES:
                return {"type": node}
            return {"type": "ref", "fullname": self._fullname(node, namespace)}
        if not isinstance(node, dict):
            raise ValueError(f"not an Avro schema node: {node!r}")
        kind = node["type"]
        if isinstance(kind, list | dict):  # {"type": {...}} wraps another schema
            return self._walk(kind, namespace)
        if kind in _PRIMITIVES:
            return _plain(dict(node))
        if kind in ("array", "map"):
            key = "items" if kind == "array" else "values"
            return {"type": kind, key: self._walk(node[key], namespace)}
        if kind not in _NAMED:
            return {"type": "ref", "fullname": self._fullname(kind, namespace)}
        fullname = self._fullname(node["name"], node.get("namespace", namespace))
        inner_namespace = fullname.rpartition(".")[0]
        out = _plain(dict(node))
        out["fullname"] = fullname
        out["aliases"] = [self._fullname(a, inner_namespace) for a in node.get("aliases", [])]
        self.names[fullname] = out
        if kind in ("record", "error"):
            if not isinstance(node.get("fields"), list):
                raise ValueError(f"record {fullname!r} has no 'fields' list (the specification requires one)")
            out["fields"] = [
                {**f, "type": self._walk(f["type"], inner_namespace), "aliases": list(f.get("aliases", []))}
                for f in node["fields"]
            ]
        return out

    def deref(self, node: Any) -> Any:
        while isinstance(node, dict) and node["type"] == "ref":
            if node["fullname"] not in self.names:
                raise ValueError(f"unknown Avro type name {node['fullname']!r}")
            node = self.names[node["fullname"]]
        return node


def _short(fullname: str) -> str:
    return fullname.rpartition(".")[2]


def _describe(node: Any) -> str:
    if isinstance(node, list):
        return "union[" + ", ".join(_describe(b) for b in node) + "]"
    kind = node["type"]
    if node.get("logicalType") == "decimal":
        return f"decimal({node.get('precision')},{node.get('scale', 0)})"
    if "logicalType" in node:
        return f"{kind}/{node['logicalType']}"
    return node.get("fullname", kind)


class _Resolver:
    def __init__(self, reader: _Schema, writer: _Schema) -> None:
        self.reader, self.writer = reader, writer
        self.in_progress: set[tuple[str, str]] = set()

    def resolve(self, r: Any, w: Any, path: str) -> list[Issue]:
        r, w = self.reader.deref(r), self.writer.deref(w)
        if isinstance(w, list):
            issues = []
            for index, branch in enumerate(w):
                issues += self.resolve(r, branch, f"{path}/{index}")
            return issues
        if isinstance(r, list):
            best: list[Issue] | None = None
            for branch in r:  # the first reader branch that matches is used
                found = self.resolve(branch, w, path)
                if not any(not i.warning for i in found):
                    return found
                if best is None and self._same_kind(self.reader.deref(branch), w):
                    best = found
            if best is not None:
                return best
            return [Issue(path, f"writer type {_describe(w)} matches no branch of reader {_describe(r)}")]
        return self._resolve_plain(r, w, path)

    @staticmethod
    def _same_kind(r: Any, w: Any) -> bool:
        return not isinstance(r, list) and r["type"] == w["type"] and r.get("fullname", "") == w.get("fullname", "")

    def _resolve_plain(self, r: dict, w: dict, path: str) -> list[Issue]:
        rk, wk = r["type"], w["type"]
        if rk != wk and r.get("logicalType") == w.get("logicalType") == "decimal":
            return [Issue(path, f"{_describe(w)} stored as {wk} -> {rk}: a bytes and a fixed decimal do not resolve")]
        if rk != wk and rk not in _PROMOTIONS.get(wk, ()):
            return [Issue(path, f"type {_describe(w)} -> {_describe(r)} does not resolve")]
        issues = self._logical(r, w, path)
        if rk != wk:
            return issues
        if rk in _NAMED:
            issues += self._names(r, w, path)
            if any(not i.warning for i in issues):
                return issues
        if rk in ("record", "error"):
            key = (r["fullname"], w["fullname"])
            if key in self.in_progress:  # recursive type: already being compared
                return issues
            self.in_progress.add(key)
            issues += self._record(r, w, path)
            self.in_progress.discard(key)
        elif rk == "enum":
            unknown = [s for s in w["symbols"] if s not in r["symbols"]]
            if unknown and r.get("default") not in r["symbols"]:
                issues.append(Issue(path, f"writer enum symbols {unknown} unknown to the reader, which has no default"))
        elif rk == "fixed" and r["size"] != w["size"]:
            issues.append(Issue(path, f"fixed size {w['size']} -> {r['size']}"))
        elif rk == "array":
            issues += self.resolve(r["items"], w["items"], f"{path}/items")
        elif rk == "map":
            issues += self.resolve(r["values"], w["values"], f"{path}/values")
        return issues

    def _logical(self, r: dict, w: dict, path: str) -> list[Issue]:
        rl, wl = r.get("logicalType"), w.get("logicalType")
        if rl == wl == "decimal":
            issues = []
            if r.get("precision") != w.get("precision"):
                issues.append(Issue(path, f"decimal precision {w.get('precision')} -> {r.get('precision')}"))
            if r.get("scale", 0) != w.get("scale", 0):
                issues.append(Issue(path, f"decimal scale {w.get('scale', 0)} -> {r.get('scale', 0)}"))
            return issues
        if rl != wl:
            return [Issue(path, f"logical type {wl or 'none'} -> {rl or 'none'}")]
        return []

    def _names(self, r: dict, w: dict, path: str) -> list[Issue]:
        if r["fullname"] == w["fullname"]:
            return []
        if w["fullname"] in r["aliases"] or _short(w["fullname"]) in map(_short, r["aliases"]):
            return []
        if _short(r["fullname"]) == _short(w["fullname"]):
            return [
                Issue(
                    path,
                    f"namespace of {_short(r['fullname'])} changed: {w['fullname']} -> {r['fullname']}",
                    warning=True,
                )
            ]
        return [Issue(path, f"{r['type']} name {w['fullname']} -> {r['fullname']} (no reader alias)")]

    def _record(self, r: dict, w: dict, path: str) -> list[Issue]:
        issues = []
        writer_fields = {f["name"]: f for f in w["fields"]}
        for field in r["fields"]:
            field_path = f"{path}/fields/{field['name']}"
            match = next((writer_fields[n] for n in [field["name"], *field["aliases"]] if n in writer_fields), None)
            if match is None:
                if "default" not in field:
                    issues.append(Issue(field_path, "reader field missing from the writer has no default"))
                continue
            issues += self.resolve(field["type"], match["type"], f"{field_path}/type")
        return issues


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> _Schema:
    """A schema text parsed once: a transitive check reads the new text once per older version and
    direction, and every older text again at the next registration (resolution never changes it)."""
    return _Schema(text)


def check_read(reader: str, writer: str, reader_is_new: bool = True) -> list[Issue]:
    """Why data written with schema ``writer`` cannot be read with ``reader`` (empty: it can).

    Both are ``.avsc`` JSON text. Warnings (``Issue.warning``) do not break compatibility.
    """
    del reader_is_new  # resolution depends only on which side reads
    resolver = _Resolver(_parsed(reader), _parsed(writer))
    return resolver.resolve(resolver.reader.root, resolver.writer.root, "")
