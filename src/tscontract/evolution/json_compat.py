"""JSON Schema containment: is every instance valid under ``writer`` valid under ``reader``?

``check_read(reader, writer)`` lists why a record valid under ``writer`` might
be invalid under ``reader`` (BACKWARD: reader = new, writer = old). The check is
sound, not complete: a finding means containment is not proven, never a pass
that is not one. Handled (drafts 4 to 2020-12):

* ``type`` (``integer`` within ``number``), ``enum``/``const`` (a writer with a
  finite value set is checked value by value against the reader);
* numbers: ``minimum``/``maximum``/``exclusive*`` (draft-4 booleans too), ``multipleOf``
  (the reader's must divide the writer's); strings: ``minLength``/``maxLength``,
  ``pattern`` and ``format`` (must be unchanged);
* objects: ``properties``, ``patternProperties``, ``additionalProperties`` and
  ``unevaluatedProperties`` (open, closed and partially open content), ``required``,
  ``min``/``maxProperties``, ``propertyNames``, ``dependencies``/``dependentRequired``/``dependentSchemas``;
* arrays: ``items`` (one schema or a tuple), ``prefixItems``, ``additionalItems``,
  ``unevaluatedItems``, ``min``/``maxItems``, ``uniqueItems``, ``contains``/``min``/``maxContains``;
* ``allOf`` (writer clauses merged; each reader clause must hold), ``anyOf``/``oneOf``
  (each writer branch inside some reader branch; for ``oneOf`` the other reader
  branches must be provably disjoint from it, by type or value), ``not``;
* local ``$ref`` (any ``#/...`` pointer, recursion included) followed on both sides.

Any other validating keyword of the reader (``if``/``then``, ``contentSchema`` ...)
must equal the writer's. Annotations are ignored.
"""

from __future__ import annotations

import json
import re
import sys
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

from tscontract.contract.json_text import load_json
from tscontract.evolution.issues import CheckBudgetExceeded, Issue

_ANNOTATIONS = {
    "description",
    "$comment",
    "title",
    "$id",
    "id",
    "$schema",
    "$anchor",
    "$vocabulary",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
    "contentMediaType",
    "contentEncoding",
}
_NUMERIC = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_STRING = {"minLength", "maxLength", "pattern", "format"}
_OBJECT = {
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
}
_ARRAY = {
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
}
_HANDLED = _NUMERIC | _STRING | _OBJECT | _ARRAY | {"type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "$ref"}
# the keywords ``_accepts`` evaluates; a reader with any other one accepts no value provably
_VALIDATED = {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_VALIDATED |= {"minLength", "maxLength", "pattern", "required", "properties", "patternProperties"}
_VALIDATED |= {"additionalProperties", "unevaluatedProperties", "minProperties", "maxProperties"}
_VALIDATED |= {"items", "prefixItems", "additionalItems", "unevaluatedItems", "minItems", "maxItems", "uniqueItems"}
_VALIDATED |= {"allOf", "anyOf", "oneOf", "not", "$ref"}
_NO_ASSUMPTION = 1 << 30  # ``low`` when a comparison relied on no pair in progress
_ALL_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_MISSING = object()
_MAX_PAIRS = 20_000  # subschema pairs compared per check; beyond it the check refuses (never passes)
# comparisons nested in one another (a recursive oneOf nests one per new pair; Confluent's 12-type
# trade union needs 160); about ten frames each: the recursion limit is raised (never lowered) to fit
_MAX_NESTING = 400
_RECURSION_LIMIT = 12 * _MAX_NESTING + 1_000


def _strip(node: Any) -> Any:
    """``node`` without annotations, for comparing subschemas whatever their comments say."""
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _ANNOTATIONS}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "unknown")


def _types(schema: dict[str, Any]) -> frozenset[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    return frozenset({kind} if isinstance(kind, str) else kind)


def _widen(types: frozenset[str]) -> frozenset[str]:
    return types | {"integer"} if "number" in types else types


def _possible(schema: dict[str, Any]) -> frozenset[str]:
    """The JSON types an instance of ``schema`` may have (all when ``type`` is absent)."""
    values = _values(schema)
    if values is not None:
        return frozenset(_json_type(v) for v in values)
    types = _types(schema)
    return _widen(types) if types is not None else _ALL_TYPES


def _values(schema: dict[str, Any]) -> list[Any] | None:
    """The finite set of values the schema allows (``const``/``enum``), or None."""
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])
    return None


def _lower(schema: dict[str, Any]) -> tuple[Any, bool] | None:
    """The lower bound ``(value, exclusive)`` of a number schema, or None."""
    bounds = []
    if "minimum" in schema:
        bounds.append((schema["minimum"], schema.get("exclusiveMinimum") is True))
    if isinstance(schema.get("exclusiveMinimum"), int | float) and not isinstance(schema["exclusiveMinimum"], bool):
        bounds.append((schema["exclusiveMinimum"], True))
    return max(bounds, key=lambda b: (b[0], b[1])) if bounds else None


def _upper(schema: dict[str, Any]) -> tuple[Any, bool] | None:
    bounds = []
    if "maximum" in schema:
        bounds.append((schema["maximum"], schema.get("exclusiveMaximum") is True))
    if isinstance(schema.get("exclusiveMaximum"), int | float) and not isinstance(schema["exclusiveMaximum"], bool):
        bounds.append((schema["exclusiveMaximum"], True))
    return min(bounds, key=lambda b: (b[0], not b[1])) if bounds else None


def _fraction(value: Any) -> Fraction:
    return Fraction(str(value))


def _dependencies(schema: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """``(dependentRequired, dependentSchemas)``, draft-7 ``dependencies`` split into both."""
    required = {k: list(v) for k, v in schema.get("dependentRequired", {}).items()}
    schemas = dict(schema.get("dependentSchemas", {}))
    for name, dep in schema.get("dependencies", {}).items():
        (required if isinstance(dep, list) else schemas)[name] = dep
    return required, schemas


def _tuple(schema: dict[str, Any], reader: bool = False) -> tuple[list[Any], Any]:
    """An array schema as ``(positional item schemas, schema of the items after them)``.

    A reader's ``additionalItems`` without ``items`` is applied to every item (drafts
    2019-09 and earlier ignore it there; Confluent applies it; refusing is the safe side).
    """
    if "prefixItems" in schema:
        return list(schema["prefixItems"]), schema.get("items", schema.get("unevaluatedItems", True))
    items = schema.get("items", _MISSING)
    if isinstance(items, list):
        return items, schema.get("additionalItems", schema.get("unevaluatedItems", True))
    if items is _MISSING:
        rest = schema.get("additionalItems", True) if reader else True
        return [], rest if rest is not True else schema.get("unevaluatedItems", True)
    return [], items


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """An over-approximation of ``a`` AND ``b`` as one schema (a kept keyword may be dropped: sound for a writer)."""
    out = dict(a)
    for key, value in b.items():
        if key not in out or key in _ANNOTATIONS:
            out.setdefault(key, value)
        elif out[key] == value:
            continue
        elif key == "properties":
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type":
            out[key] = sorted(_widen(_types(out) or _ALL_TYPES) & _widen(_types(b) or _ALL_TYPES))
        elif key in ("enum", "const"):
            kept = [v for v in (_values(out) or []) if v in (_values(b) or [])]
            out.pop("const", None)
            out["enum"] = kept
        elif key in ("minimum", "minLength", "minItems", "minProperties", "minContains"):
            out[key] = max(out[key], value)
        elif key in ("maximum", "maxLength", "maxItems", "maxProperties", "maxContains"):
            out[key] = min(out[key], value)
        elif key in ("additionalProperties", "unevaluatedProperties") and value is False:
            out[key] = False
    return out


class _Checker:
    def __init__(self, reader_root: Any, writer_root: Any) -> None:
        self.roots = {"reader": reader_root, "writer": writer_root}
        # the comparisons in progress, outermost first, shared with the swapped checker: a pair met
        # again is assumed to hold (coinduction); ``low[0]``: the outermost one a result relied on
        self.trail: list[tuple[int, int, int]] = []
        self.active: dict[tuple[int, int, int], int] = {}
        self.low = [_NO_ASSUMPTION]
        self.assumed: list[bool] = []  # per level in progress: did a result assume it holds
        self.provisional: list[tuple[dict[tuple[int, int], list[Any]], tuple[int, int]]] = []  # (memo, key)
        self.clauses: list[list[Any]] = []  # the writer's own allOf clauses, innermost comparison last
        # (r, w) ids -> [r, w, path, issues, the level it assumed (_NO_ASSUMPTION: final)]
        self.memo: dict[tuple[int, int], list[Any]] = {}
        self.steps = [0]  # shared with the swapped checker
        self.swapped: _Checker | None = None
        self.tag = 0  # 1 in the swapped checker: its pairs are its own
        # a writer oneOf branch -> (the branch, its sibling branches): a value of it matches none of them
        self.siblings: dict[int, tuple[Any, list[Any]]] = {}

    # -- references and normal form -------------------------------------------------------
    def _pointer(self, side: str, ref: str) -> Any:
        if not ref.startswith("#"):
            raise ValueError(f"$ref {ref!r}: only local references (#/...) are supported")
        node = self.roots[side]
        for token in [t for t in unquote(ref[1:]).split("/") if t]:
            token = token.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(token)] if isinstance(node, list) else node[token]
            except (KeyError, IndexError, ValueError, TypeError):
                raise ValueError(f"$ref {ref!r} does not resolve") from None
        return node

    def _deref(self, node: Any, side: str) -> Any:
        for _ in range(64):
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                return node
            target = self._pointer(side, node["$ref"])
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if any(k not in _ANNOTATIONS for k in rest):
                return {"allOf": [target, *rest.pop("allOf", [])], **rest}
            node = target
        raise ValueError(f"$ref cycle without a schema: {node.get('$ref')!r}")

    def _flatten(self, node: Any) -> Any:
        """The writer with its ``allOf`` clauses (and their ``$ref``) merged into one schema."""
        node = self._deref(node, "writer")
        if not isinstance(node, dict) or "allOf" not in node:
            return node
        out = {k: v for k, v in node.items() if k != "allOf"}
        for clause in node["allOf"]:
            clause = self._flatten(clause)
            if clause is False:
                return False
            if isinstance(clause, dict):
                out = _merge(out, clause)
        return out

    def _alternatives(self, w: dict[str, Any], split_types: bool) -> list[Any]:
        """The writer as a union of simpler schemas: its anyOf/oneOf branches, or one per type."""
        for key in ("anyOf", "oneOf"):
            if key in w:
                base = {k: v for k, v in w.items() if k != key}
                out = []
                branches = [self._flatten(b) for b in w[key]]
                for index, branch in enumerate(branches):
                    if branch is False:
                        continue
                    if branch is True or not any(k not in _ANNOTATIONS for k in base):
                        merged = base if branch is True else branch
                    else:
                        merged = self._flatten({"allOf": [base, branch]})
                    found = self._alternatives(merged, split_types) if isinstance(merged, dict) else [merged]
                    if key == "oneOf":
                        others = [b for j, b in enumerate(branches) if j != index]
                        for alternative in found:
                            self.siblings[id(alternative)] = (alternative, others)
                    out += found
                return out
        types = _types(w)
        if split_types and types is not None and len(types) > 1 and _values(w) is None:
            return [{**w, "type": t} for t in sorted(types)]
        return [w]

    # -- containment ------------------------------------------------------------------------
    def compare(self, r: Any, w: Any, path: str) -> list[Issue]:
        """Why ``w`` is not within ``r`` (empty: it is). A pair met again while compared is assumed to
        hold (coinduction); results relying on that stay provisional until the pair ends: kept when it
        found nothing, dropped when it found something, so a cached pair never hides a difference."""
        key = (id(r), id(w))
        level = self.active.get((self.tag, *key))
        if level is not None:
            self._rely(level)
            return []
        hit = self.memo.get(key)
        if hit is not None:  # the same pair met elsewhere: its findings, re-rooted at this path
            if hit[4] < _NO_ASSUMPTION:
                self._rely(hit[4])
            at, issues = hit[2], hit[3]
            return [Issue(path + i.path[len(at) :], i.message, i.warning) for i in issues]
        level = self._enter(key)
        outer_low, self.low[0] = self.low[0], _NO_ASSUMPTION
        made = len(self.provisional)
        try:
            raw = self._deref(w, "writer")
            clauses = raw.get("allOf", []) if isinstance(raw, dict) else []
            self.clauses.append([self._canon(c, "writer") for c in clauses])
            result = self._compare(self._deref(r, "reader"), self._flatten(w), path)
        finally:
            self.clauses.pop()
            del self.active[self.trail.pop()]
            relied_on, self.low[0] = self.low[0], min(outer_low, self.low[0])
            assumed = self.assumed.pop()
        self._settle(made, level, assumed, bool(result))
        # final: it relied on no comparison in progress above it, or found something (more assumed finds less)
        final = relied_on >= level or bool(result)
        self.memo[key] = [r, w, path, result, _NO_ASSUMPTION if final else relied_on]  # r, w kept alive: ids stay
        if not final:
            self.provisional.append((self.memo, key))
        return result

    def _enter(self, key: tuple[int, int]) -> int:
        """Count the pair against the budgets and mark it in progress; its nesting level."""
        self.steps[0] += 1
        if self.steps[0] > _MAX_PAIRS:
            raise CheckBudgetExceeded(
                f"schemas too large or too recursive to compare within the checker's budget "
                f"(over {_MAX_PAIRS} subschema pairs): compatibility not decided"
            )
        level = len(self.trail)
        if level >= _MAX_NESTING:
            raise CheckBudgetExceeded(
                f"schemas too large or too recursive to compare within the checker's budget "
                f"(over {_MAX_NESTING} nested subschema comparisons): compatibility not decided"
            )
        self.trail.append((self.tag, *key))
        self.active[self.trail[-1]] = level
        self.assumed.append(False)
        return level

    def _rely(self, level: int) -> None:
        """The result being computed assumes the comparison in progress at ``level`` holds."""
        self.low[0] = min(self.low[0], level)
        self.assumed[level] = True

    def _settle(self, made: int, level: int, assumed: bool, found: bool) -> None:
        """The comparison at ``level`` ended: settle the provisional results made since it began."""
        if not assumed:
            return  # none relied on it: they wait for a comparison further out
        if found:  # the assumption was wrong: drop what was derived while it stood
            for memo, key in self.provisional[made:]:
                memo.pop(key, None)
            del self.provisional[made:]
            return
        waiting = []
        for memo, key in self.provisional[made:]:
            entry = memo.get(key)
            if entry is not None and entry[4] >= level:
                entry[4] = _NO_ASSUMPTION  # confirmed
            elif entry is not None:
                waiting.append((memo, key))
        self.provisional[made:] = waiting

    def _canon(self, node: Any, side: str, depth: int = 0) -> Any:
        """``node`` with local ``$ref`` inlined (4 levels) and annotations dropped, to compare clauses as text."""
        if isinstance(node, list):
            return [self._canon(v, side, depth) for v in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str) and depth < 4:
            try:
                node = self._deref(node, side)
            except ValueError:
                return _strip(node)
            depth += 1
        return {k: self._canon(v, side, depth) for k, v in node.items() if k not in _ANNOTATIONS}

    def _compare(self, r: Any, w: Any, path: str) -> list[Issue]:
        if r is True or (isinstance(r, dict) and not _strip(r)) or w is False:
            return []
        if r is False:
            return [Issue(path, "schema became false")]
        if w is True:
            w = {}
        if not isinstance(r, dict) or not isinstance(w, dict):
            raise ValueError(f"{path or '/'}: not a JSON Schema: {r!r}")
        if "$ref" not in json.dumps(r) and _strip(r) == _strip(w):
            return []
        split = any(k in r for k in ("anyOf", "oneOf"))
        alternatives = self._alternatives(w, split)
        if len(alternatives) != 1 or alternatives[0] is not w:
            issues: list[Issue] = []
            for alternative in alternatives:
                issues += self.compare(r, alternative, path)
            return list(dict.fromkeys(issues))
        values = _values(w)
        if values is not None:
            return self._values_in(r, w, [v for v in values if self._accepts(w, v, "writer")], path)
        return self._schema(r, w, path)

    def _values_in(self, r: dict[str, Any], w: dict[str, Any], values: list[Any], path: str) -> list[Issue]:
        if "format" in r and r["format"] != w.get("format"):
            return [Issue(f"{path}/format", f"format changed: {w.get('format', 'none')!r} -> {r['format']!r}")]
        reader_types = _types(r)
        if reader_types is not None:
            lost = [v for v in values if _json_type(v) not in _widen(reader_types)]
            if lost:
                return [Issue(f"{path}/type", f"values {lost} are not of type {sorted(reader_types)}")]
        rejected = [v for v in values if not self._accepts(r, v, "reader")]
        if rejected:
            keyword = "const" if "const" in r else "enum" if "enum" in r else "values"
            if keyword == "values":
                return [Issue(path, f"values {rejected} no longer valid")]
            return [Issue(f"{path}/{keyword}", f"{keyword} narrowed: {rejected} no longer allowed")]
        return []

    def _schema(self, r: dict[str, Any], w: dict[str, Any], path: str) -> list[Issue]:
        issues: list[Issue] = []
        issues += self._type(r, w, path)
        reader_values = _values(r)
        if reader_values is not None:
            issues.append(Issue(f"{path}/enum", f"values restricted to {reader_values}"))
        possible = _possible(w)
        if possible & {"integer", "number"}:
            issues += self._numeric(r, w, path, possible)
        if "string" in possible:
            issues += self._string(r, w, path)
        if "object" in possible:
            issues += self._object(r, w, path)
        if "array" in possible:
            issues += self._array(r, w, path)
        writer_clauses = self.clauses[-1] if self.clauses else []
        for index, clause in enumerate(r.get("allOf", [])):
            if writer_clauses and self._canon(clause, "reader") in writer_clauses:
                continue  # the same clause (refs resolved) holds on the writer
            found = self.compare(clause, w, f"{path}/allOf/{index}")
            if found:
                label = clause.get("$comment", "").removeprefix("tscontract check ") if isinstance(clause, dict) else ""
                detail = found[0].message
                issues.append(Issue(f"{path}/allOf/{index}", f"new or changed clause {label or detail}".rstrip()))
        for keyword in ("anyOf", "oneOf"):
            if keyword in r:
                issues += self._union(r[keyword], w, f"{path}/{keyword}", keyword == "oneOf")
        if "not" in r:
            issues += self._not(r["not"], w, f"{path}/not")
        for keyword in sorted(set(r) - _HANDLED - _ANNOTATIONS):  # compared as text, refs resolved
            if keyword not in w or self._canon(r[keyword], "reader") != self._canon(w[keyword], "writer"):
                issues.append(Issue(f"{path}/{keyword}", f"{keyword} changed (containment not proven)"))
        return issues

    def _type(self, r: dict[str, Any], w: dict[str, Any], path: str) -> list[Issue]:
        reader_types = _types(r)
        if reader_types is None:
            return []
        writer_types = _types(w)
        if writer_types is None:
            return [Issue(f"{path}/type", f"type constrained to {sorted(reader_types)}")]
        lost = sorted(writer_types - _widen(reader_types))
        if lost and not (lost == ["number"] and "integer" in reader_types and w.get("multipleOf") == 1):
            return [Issue(f"{path}/type", f"type {sorted(writer_types)} -> {sorted(reader_types)}")]
        return []

    def _numeric(self, r: dict[str, Any], w: dict[str, Any], path: str, possible: frozenset[str]) -> list[Issue]:
        issues = []
        r_low, w_low = _lower(r), _lower(w)
        if r_low is not None and (
            w_low is None or w_low[0] < r_low[0] or (w_low[0] == r_low[0] and r_low[1] > w_low[1])
        ):
            keyword = "exclusiveMinimum" if r_low[1] and "minimum" not in r else "minimum"
            before = None if w_low is None else w_low[0]
            issues.append(Issue(f"{path}/{keyword}", f"{keyword} narrowed: {before} -> {r_low[0]}"))
        r_up, w_up = _upper(r), _upper(w)
        if r_up is not None and (w_up is None or w_up[0] > r_up[0] or (w_up[0] == r_up[0] and r_up[1] > w_up[1])):
            keyword = "exclusiveMaximum" if r_up[1] and "maximum" not in r else "maximum"
            before = None if w_up is None else w_up[0]
            issues.append(Issue(f"{path}/{keyword}", f"{keyword} narrowed: {before} -> {r_up[0]}"))
        if "multipleOf" in r:
            step = _fraction(r["multipleOf"])
            if "multipleOf" in w:
                ok = (_fraction(w["multipleOf"]) / step).denominator == 1
            else:
                ok = possible <= {"integer"} and (1 / step).denominator == 1
            if not ok:
                issues.append(Issue(f"{path}/multipleOf", f"multipleOf {w.get('multipleOf')} -> {r['multipleOf']}"))
        return issues

    def _string(self, r: dict[str, Any], w: dict[str, Any], path: str) -> list[Issue]:
        issues = []
        if "minLength" in r and w.get("minLength", 0) < r["minLength"]:
            issues.append(Issue(f"{path}/minLength", f"minLength narrowed: {w.get('minLength')} -> {r['minLength']}"))
        if "maxLength" in r and ("maxLength" not in w or w["maxLength"] > r["maxLength"]):
            issues.append(Issue(f"{path}/maxLength", f"maxLength narrowed: {w.get('maxLength')} -> {r['maxLength']}"))
        for keyword in ("pattern", "format"):
            if keyword in r and r[keyword] != w.get(keyword, _MISSING):
                before = w.get(keyword, "none")
                issues.append(Issue(f"{path}/{keyword}", f"{keyword} changed: {before!r} -> {r[keyword]!r}"))
        return issues

    # -- objects ----------------------------------------------------------------------------
    @staticmethod
    def _rest(schema: dict[str, Any]) -> Any:
        """The schema of properties neither named nor matched by a pattern."""
        return schema.get("additionalProperties", schema.get("unevaluatedProperties", True))

    def _for_name(self, schema: dict[str, Any], name: str) -> list[Any]:
        """The subschemas a property called ``name`` must satisfy."""
        matched = [s for p, s in schema.get("patternProperties", {}).items() if re.search(p, name)]
        if name in schema.get("properties", {}):
            return [schema["properties"][name], *matched]
        return matched or [self._rest(schema)]

    def _object(self, r: dict[str, Any], w: dict[str, Any], path: str) -> list[Issue]:
        issues = []
        r_props, w_props = r.get("properties", {}), w.get("properties", {})
        r_patterns, w_patterns = r.get("patternProperties", {}), w.get("patternProperties", {})
        r_rest, w_rest = self._rest(r), self._rest(w)
        for name, w_schema in w_props.items():
            prop_path = f"{path}/properties/{name}"
            if w_schema is False or self._flatten(w_schema) is False:
                continue
            for r_schema in self._for_name(r, name):
                if r_schema is False and name not in r_props:
                    issues.append(Issue(prop_path, "property removed while additionalProperties is false"))
                else:
                    patterns = self._patterns(w, name)
                    issues += self.compare(
                        r_schema, {"allOf": [w_schema, *patterns]} if patterns else w_schema, prop_path
                    )
        for name, r_schema in r_props.items():
            if name not in w_props:
                w_schemas = self._for_name(w, name)
                w_schema = w_schemas[0] if len(w_schemas) == 1 else {"allOf": w_schemas}
                issues += self.compare(r_schema, w_schema, f"{path}/properties/{name}")
        for pattern, r_schema in r_patterns.items():
            pattern_path = f"{path}/patternProperties/{pattern}"
            if pattern in w_patterns:
                issues += self.compare(r_schema, w_patterns[pattern], pattern_path)
            elif w_rest is not False:
                issues += self.compare(r_schema, w_rest, pattern_path)
        if r_rest is not True:
            for pattern, w_schema in w_patterns.items():
                if pattern not in r_patterns:
                    issues += self.compare(r_rest, w_schema, f"{path}/patternProperties/{pattern}")
            found = self.compare(r_rest, w_rest, f"{path}/additionalProperties")
            if found and r_rest is False:
                issues.append(Issue(f"{path}/additionalProperties", "additionalProperties became false"))
            elif found:
                issues.append(Issue(f"{path}/additionalProperties", f"additionalProperties narrowed: {found[0]}"))
        w_required = set(w.get("required", []))
        for name in r.get("required", []):
            if name not in w_required:
                issues.append(Issue(f"{path}/required/{name}", f"{name} became required"))
        if "minProperties" in r and w.get("minProperties", 0) < r["minProperties"]:
            before = w.get("minProperties")
            issues.append(Issue(f"{path}/minProperties", f"minProperties narrowed: {before} -> {r['minProperties']}"))
        if "maxProperties" in r and ("maxProperties" not in w or w["maxProperties"] > r["maxProperties"]):
            before = w.get("maxProperties")
            issues.append(Issue(f"{path}/maxProperties", f"maxProperties narrowed: {before} -> {r['maxProperties']}"))
        if "propertyNames" in r:
            issues += self._property_names(r["propertyNames"], w, f"{path}/propertyNames")
        issues += self._dependencies(r, w, path)
        return issues

    def _patterns(self, schema: dict[str, Any], name: str) -> list[Any]:
        return [s for p, s in schema.get("patternProperties", {}).items() if re.search(p, name)]

    def _property_names(self, r_names: Any, w: dict[str, Any], path: str) -> list[Issue]:
        if "propertyNames" in w:
            return self.compare(r_names, w["propertyNames"], path)
        if self._rest(w) is False and not w.get("patternProperties"):
            rejected = [n for n in w.get("properties", {}) if not self._accepts(r_names, n, "reader")]
            return [Issue(path, f"property names {rejected} no longer allowed")] if rejected else []
        return [Issue(path, "propertyNames constrained")]

    def _dependencies(self, r: dict[str, Any], w: dict[str, Any], path: str) -> list[Issue]:
        issues = []
        r_required, r_schemas = _dependencies(r)
        w_required, w_schemas = _dependencies(w)
        always = set(w.get("required", []))
        for name, needed in r_required.items():
            missing = [n for n in needed if n not in always and n not in w_required.get(name, [])]
            if missing:
                issues.append(Issue(f"{path}/dependentRequired/{name}", f"{name} now requires {missing}"))
        for name, r_schema in r_schemas.items():
            dep_path = f"{path}/dependentSchemas/{name}"
            if name in w_schemas and not self.compare(r_schema, w_schemas[name], dep_path):
                continue
            found = self.compare(r_schema, w, dep_path)
            if found:
                issues.append(Issue(dep_path, f"dependent schema for {name} added or narrowed: {found[0].message}"))
        return issues

    # -- arrays -----------------------------------------------------------------------------
    def _array(self, r: dict[str, Any], w: dict[str, Any], path: str) -> list[Issue]:
        issues = []
        r_prefix, r_rest = _tuple(r, reader=True)
        w_prefix, w_rest = _tuple(w)
        for index in range(max(len(r_prefix), len(w_prefix)) + 1):
            r_item = r_prefix[index] if index < len(r_prefix) else r_rest
            w_item = w_prefix[index] if index < len(w_prefix) else w_rest
            if index == max(len(r_prefix), len(w_prefix)):
                label = "items" if "prefixItems" in r or not r_prefix else "additionalItems"
                item_path = f"{path}/{label}"
            else:
                item_path = f"{path}/{'prefixItems' if 'prefixItems' in r else 'items'}/{index}"
            if index < int(w.get("maxItems", 1 << 30)):
                issues += self.compare(r_item, w_item, item_path)
        if "minItems" in r and w.get("minItems", 0) < r["minItems"]:
            issues.append(Issue(f"{path}/minItems", f"minItems narrowed: {w.get('minItems')} -> {r['minItems']}"))
        if "maxItems" in r and ("maxItems" not in w or w["maxItems"] > r["maxItems"]):
            w_max = len(w_prefix) if w_rest is False else None
            if w_max is None or w_max > r["maxItems"]:
                issues.append(Issue(f"{path}/maxItems", f"maxItems narrowed: {w.get('maxItems')} -> {r['maxItems']}"))
        if r.get("uniqueItems") is True and w.get("uniqueItems") is not True:
            issues.append(Issue(f"{path}/uniqueItems", "items must now be unique"))
        if "contains" in r:
            r_min, w_min = r.get("minContains", 1), w.get("minContains", 1)
            if r_min > 0:
                if "contains" not in w:
                    issues.append(Issue(f"{path}/contains", "contains added"))
                else:
                    issues += self.compare(r["contains"], w["contains"], f"{path}/contains")
                    if w_min < r_min:
                        issues.append(Issue(f"{path}/minContains", f"minContains narrowed: {w_min} -> {r_min}"))
            if "maxContains" in r and ("contains" not in w or w.get("maxContains", 1 << 30) > r["maxContains"]):
                issues.append(Issue(f"{path}/maxContains", f"maxContains narrowed -> {r['maxContains']}"))
        return issues

    # -- combinators ------------------------------------------------------------------------
    def _union(self, branches: list[Any], w: dict[str, Any], path: str, exclusive: bool) -> list[Issue]:
        first: list[Issue] | None = None
        for index, branch in enumerate(branches):
            found = self.compare(branch, w, f"{path}/{index}")
            if not found:
                if exclusive:
                    overlapping = [
                        j
                        for j, other in enumerate(branches)
                        if j != index and not self._disjoint(other, w) and not self._in_sibling(other, w, path)
                    ]
                    if overlapping:
                        return [Issue(path, f"oneOf branches {overlapping} may also match (not provably disjoint)")]
                return []
            first = first if first is not None else found
        keyword = "oneOf" if exclusive else "anyOf"
        detail = f" ({first[0]})" if first else ""
        return [Issue(path, f"writer matches no {keyword} branch{detail}")]

    def _disjoint(self, r: Any, w: dict[str, Any]) -> bool:
        """Provably no instance valid under both (by type, or by the writer's finite values)."""
        r = self._deref(r, "reader")
        if r is False:
            return True
        if not isinstance(r, dict):
            return False
        values = _values(w)
        if values is not None:
            return not any(self._accepts(r, v, "reader") for v in values)
        r_possible = _possible(r) if ("type" in r or _values(r) is not None) else None
        if r_possible is not None and not (r_possible & _possible(w)):
            return True
        r_values = _values(r)
        if r_values is not None:
            return not any(self._accepts(w, v, "writer") for v in r_values)
        for name in set(r.get("required", [])) & set(w.get("properties", {})):
            r_prop = self._deref(r.get("properties", {}).get(name, True), "reader")
            w_prop = self._flatten(w["properties"][name])
            required = name in w.get("required", [])
            if required and isinstance(r_prop, dict) and isinstance(w_prop, dict) and self._disjoint(r_prop, w_prop):
                return True
        return False

    def _in_sibling(self, r_branch: Any, w: Any, path: str) -> bool:
        """Is the reader's branch inside a sibling of the writer's oneOf branch ``w`` (which ``w``'s values miss)?"""
        _, others = self.siblings.get(id(w), (None, []))
        return any(not self._swap_compare(other, r_branch, path) for other in others)

    def _not(self, r_not: Any, w: dict[str, Any], path: str) -> list[Issue]:
        if "not" in w:  # not M within not N  <=>  N within M
            if not self._swap_compare(w["not"], r_not, path):
                return []
            return [Issue(path, "not widened")]
        if self._disjoint(r_not, w):
            return []
        return [Issue(path, "not added or changed: writer instances may match it")]

    def _swap_compare(self, reader_side: Any, writer_side: Any, path: str) -> list[Issue]:
        """Compare with the documents' roles swapped (inside ``not``, the writer's schema reads)."""
        if self.swapped is None:
            self.swapped = _Checker(self.roots["writer"], self.roots["reader"])
            self.swapped.swapped, self.swapped.steps, self.swapped.tag = self, self.steps, 1 - self.tag
            self.swapped.trail, self.swapped.active, self.swapped.low = self.trail, self.active, self.low
            self.swapped.assumed, self.swapped.provisional = self.assumed, self.provisional
        return self.swapped.compare(reader_side, writer_side, path)

    # -- a single value ---------------------------------------------------------------------
    def _accepts(self, schema: Any, value: Any, side: str, depth: int = 0) -> bool:
        """Does ``value`` validate under ``schema``? Unknown keywords count as not accepting."""
        schema = self._deref(schema, side)
        if schema is True or schema is False or depth > 32:
            return schema is not False
        if not isinstance(schema, dict):
            return False
        kind = _json_type(value)
        types = _types(schema)
        if types is not None and kind not in _widen(types):
            return False
        values = _values(schema)
        if values is not None and not any(value == v and _json_type(v) == kind for v in values):
            return False
        if kind in ("integer", "number"):
            low, up = _lower(schema), _upper(schema)
            if low is not None and (value < low[0] or (low[1] and value == low[0])):
                return False
            if up is not None and (value > up[0] or (up[1] and value == up[0])):
                return False
            if "multipleOf" in schema and (_fraction(value) / _fraction(schema["multipleOf"])).denominator != 1:
                return False
        if kind == "string":
            if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", len(value)):
                return False
            if "pattern" in schema and not re.search(schema["pattern"], value):
                return False
            if "format" in schema and side == "reader":
                return False  # formats are not validated here: not proven
        if kind == "object":
            if any(name not in value for name in schema.get("required", [])):
                return False
            if not schema.get("minProperties", 0) <= len(value) <= schema.get("maxProperties", len(value)):
                return False
            for name, item in value.items():
                if not all(self._accepts(s, item, side, depth + 1) for s in self._for_name(schema, name)):
                    return False
        if kind == "array":
            if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
                return False
            if schema.get("uniqueItems") is True and len({json.dumps(v, sort_keys=True) for v in value}) < len(value):
                return False
            prefix, rest = _tuple(schema)
            for index, item in enumerate(value):
                if not self._accepts(prefix[index] if index < len(prefix) else rest, item, side, depth + 1):
                    return False
        if not all(self._accepts(c, value, side, depth + 1) for c in schema.get("allOf", [])):
            return False
        if "anyOf" in schema and not any(self._accepts(c, value, side, depth + 1) for c in schema["anyOf"]):
            return False
        if "oneOf" in schema and sum(self._accepts(c, value, side, depth + 1) for c in schema["oneOf"]) != 1:
            return False
        if "not" in schema and self._accepts(schema["not"], value, side, depth + 1):
            return False
        return side == "writer" or all(k in _VALIDATED or k in _ANNOTATIONS for k in schema)


def _load(text: str | dict) -> Any:
    return load_json(text)


def check_read(reader: str, writer: str, reader_is_new: bool = True) -> list[Issue]:
    """Why a record valid under JSON Schema ``writer`` may be rejected by ``reader`` (empty: never)."""
    del reader_is_new  # containment depends only on which side validates
    reader_root, writer_root = _load(reader), _load(writer)
    if sys.getrecursionlimit() < _RECURSION_LIMIT:  # raised, never lowered: other threads may need it
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        return _Checker(reader_root, writer_root).compare(reader_root, writer_root, "")
    except RecursionError:  # a budget, never a verdict on the schemas
        raise CheckBudgetExceeded(
            "schemas too deeply nested or recursive to compare within the checker's budget "
            "(Python's recursion limit): compatibility not decided"
        ) from None
    except (TypeError, AttributeError, KeyError, re.error) as exc:
        raise ValueError(f"not a valid JSON Schema ({type(exc).__name__}: {exc})") from None
