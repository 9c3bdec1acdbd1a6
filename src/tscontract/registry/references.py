"""Schema references: a schema that uses types registered under other subjects, made self-contained.

A registration's ``references`` (``{name, subject, version}``) name other subjects' versions, which
may have references of their own. ``self_contained`` follows them (at most ``MAX_REFERENCES`` in
all, cycles refused) and returns one text a parser or a compatibility check reads alone:

* Avro: each referenced named type is defined in place at its first use (the name ``name`` is
  the type's full name), as Avro allows a named type to be defined where it is first used;
* Protobuf: the file and its imports (``name`` is the import path) as one bundle that
  ``proto_compat.compile_proto`` compiles together;
* JSON Schema: each referenced document embedded under ``$defs`` and every ``$ref`` to its
  ``name`` pointed there.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Protocol

from tscontract.registry.canonical import AVRO_NAMED, AVRO_PRIMITIVES, qualify
from tscontract.registry.errors import RegistryError


class _Registered(Protocol):
    @property
    def subject(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def schema_text(self) -> str: ...
    @property
    def references(self) -> list[dict]: ...


class VersionSource(Protocol):
    """Where references are resolved: the store (``RegistryStore``), handed in rather than imported."""

    def get_version(self, subject: str, version: int | str) -> _Registered: ...


MAX_REFERENCES = 256


def _unresolved(reference: dict, why: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema: reference {reference}: {why}")


def dependencies(store: VersionSource, references: list[dict]) -> list[tuple[str, str]]:
    """(name, text) of every schema the references reach, dependencies before their dependants."""
    ordered: list[tuple[str, str]] = []
    seen: set[tuple[str, int]] = set()
    visiting: set[tuple[str, int]] = set()

    def visit(reference: dict) -> None:
        try:
            found = store.get_version(reference["subject"], reference["version"])
        except RegistryError:
            raise _unresolved(reference, "no such subject version") from None
        key = (found.subject, found.version)
        if key in seen:
            return
        if key in visiting:
            raise _unresolved(reference, "references form a cycle")
        if len(seen) + len(visiting) >= MAX_REFERENCES:
            raise _unresolved(reference, f"more than {MAX_REFERENCES} schemas referenced")
        visiting.add(key)
        for inner in found.references:
            visit(inner)
        visiting.discard(key)
        seen.add(key)
        ordered.append((reference["name"], found.schema_text))

    for reference in references:
        visit(reference)
    return ordered


def self_contained(store: VersionSource, schema_type: str, text: str, references: list[dict]) -> str:
    """``text`` with everything its references reach, as one text (unchanged without references)."""
    if not references:
        return text
    deps = dependencies(store, references)
    try:
        if schema_type == "AVRO":
            return _avro(text, deps)
        if schema_type == "PROTOBUF":
            from tscontract.evolution.proto_compat import bundle

            for name, _ in deps:
                if name.startswith("/") or ".." in name.split("/") or not name.endswith(".proto"):
                    raise _unresolved({"name": name}, "a Protobuf reference name is a relative .proto import path")
            return bundle(text, dict(deps))
        return _json_schema(text, deps)
    except (ValueError, TypeError, KeyError) as exc:
        raise RegistryError(422, 42201, f"Invalid schema: cannot resolve its references: {exc}") from None


# -- Avro -------------------------------------------------------------------------------------------


def _avro(text: str, deps: list[tuple[str, str]]) -> str:
    definitions: dict[str, Any] = {}
    for _, dep_text in deps:
        _collect(json.loads(dep_text), "", definitions)
    defined: set[str] = set()
    return json.dumps(_inline(json.loads(text), "", definitions, defined), separators=(",", ":"))


def _collect(node: Any, namespace: str, out: dict[str, Any]) -> None:
    """Every named type a referenced schema defines, by full name, with its namespace made explicit."""
    if isinstance(node, list):
        for branch in node:
            _collect(branch, namespace, out)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind in AVRO_NAMED and isinstance(node.get("name"), str):
        fullname = qualify(node["name"], node.get("namespace") or namespace)
        explicit = dict(node, name=fullname.rpartition(".")[2], namespace=fullname.rpartition(".")[0])
        out.setdefault(fullname, explicit)
        namespace = fullname.rpartition(".")[0]
        for field in node.get("fields") or []:
            if isinstance(field, dict):
                _collect(field.get("type"), namespace, out)
    elif isinstance(kind, dict | list):
        _collect(kind, namespace, out)
    for key in ("items", "values"):
        if key in node:
            _collect(node[key], namespace, out)


def _inline(node: Any, namespace: str, definitions: dict[str, Any], defined: set[str]) -> Any:
    if isinstance(node, list):
        return [_inline(branch, namespace, definitions, defined) for branch in node]
    if isinstance(node, str):
        if node in AVRO_PRIMITIVES:
            return node
        for fullname in (qualify(node, namespace), node):
            if fullname in defined:
                return fullname
            if fullname in definitions:
                defined.add(fullname)
                return _inline(copy.deepcopy(definitions[fullname]), namespace, definitions, defined)
        return node
    if not isinstance(node, dict):
        return node
    out = dict(node)
    kind = out.get("type")
    if kind in AVRO_NAMED and isinstance(out.get("name"), str):
        fullname = qualify(out["name"], out.get("namespace") or namespace)
        defined.add(fullname)
        namespace = fullname.rpartition(".")[0]
        if isinstance(out.get("fields"), list):
            out["fields"] = [
                dict(f, type=_inline(f.get("type"), namespace, definitions, defined)) if isinstance(f, dict) else f
                for f in out["fields"]
            ]
    elif kind not in AVRO_PRIMITIVES and kind not in ("array", "map"):
        out["type"] = _inline(kind, namespace, definitions, defined)
    for key in ("items", "values"):
        if key in out:
            out[key] = _inline(out[key], namespace, definitions, defined)
    return out


# -- JSON Schema -----------------------------------------------------------------------------------


def _def_key(index: int) -> str:
    return f"tscontract_ref_{index}"


def _json_schema(text: str, deps: list[tuple[str, str]]) -> str:
    document = json.loads(text)
    if not isinstance(document, dict):
        return text
    keys = {name: _def_key(index) for index, (name, _) in enumerate(deps)}
    defs = {keys[name]: _repoint(json.loads(dep_text), keys, f"#/$defs/{keys[name]}") for name, dep_text in deps}
    out = _repoint(document, keys, "#")
    out["$defs"] = {**out.get("$defs", {}), **defs}
    return json.dumps(out, separators=(",", ":"))


def _repoint(node: Any, keys: dict[str, str], root: str) -> Any:
    """``$ref``s to a reference name point at its ``$defs`` entry; a document's own ``#...`` refs at its new root."""
    if isinstance(node, list):
        return [_repoint(item, keys, root) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _repoint(value, keys, root) for key, value in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str):
        target, _, fragment = ref.partition("#")
        if target in keys:
            out["$ref"] = f"#/$defs/{keys[target]}{fragment}"
        elif not target and root != "#":
            out["$ref"] = root + fragment
    return out
