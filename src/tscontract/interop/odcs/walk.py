"""Reading one schema object of an ODCS document: the elements taken, lost or kept, and what is left over."""

from __future__ import annotations

import json
import re
from typing import Any

from tscontract.contract.odcs_carried import CARRY_DOCUMENT as _CARRY_DOCUMENT
from tscontract.contract.odcs_carried import CARRY_OBJECT as _CARRY_OBJECT
from tscontract.contract.odcs_carried import CARRY_PROPERTY as _CARRY_PROPERTY
from tscontract.contract.odcs_carried import KEPT as _KEPT
from tscontract.contract.source import load_yaml
from tscontract.errors import InputError, TscontractError
from tscontract.interop.odcs.draft import Loss, _Clause, _plain, shown
from tscontract.interop.odcs.types import Choices, server_type


def load_document(text: str) -> dict[str, Any]:
    """The ODCS document as a plain tree, or a one-line :class:`InputError`."""
    try:
        tree, _ = load_yaml(text, "<odcs>")
    except TscontractError as exc:
        raise InputError(f"not an ODCS document: {exc.one_line()}") from None
    if not isinstance(tree, dict) or tree.get("kind") != "DataContract":
        raise InputError("not an ODCS document: kind is not DataContract")
    if not str(tree.get("apiVersion", "")).startswith("v3."):
        raise InputError(f"ODCS apiVersion {tree.get('apiVersion')!r} is not v3.x")
    objects = tree.get("schema")
    if not isinstance(objects, list) or not objects or not all(isinstance(o, dict) for o in objects):
        raise InputError("the ODCS document has no schema objects to import")
    return tree


def object_names(tree: dict[str, Any]) -> list[str]:
    return [str(o.get("name") or o.get("physicalName") or f"schema[{i}]") for i, o in enumerate(tree["schema"])]


_ROUND_TRIP_SECTIONS = {
    "series": "series",
    "time": "time",
    "units": "units",
    "revisionPolicy": "revision_policy",
    "completeness": "completeness",
    "freshness": "freshness",
    "provenanceRequired": "provenance_required",
    "calendars": "calendars",
}
_ROUND_TRIP_FIELD = ("unit", "dimension", "nullable", "value", "default", "aliases", "deprecated", "flag_of", "note")
# quality entries the export writes, each derived from a contract clause that the import restores
_CARRIED = re.compile(
    r"^(invariants\[\d+\]|key\.unique|source\.rows|time\.\w+|completeness|freshness|catalog\.\w+"
    r"|field\.\w+\.(value|constraint|flag_of)|plausibility\..+|series\.pattern)$"
)
# reasons for what has no place and is not kept (_KEPT): a rule's own keys, relationships
_NO_PLACE = {
    "tags": "tags of a rule: no place in a tscontract clause",
    "authoritativeDefinitions": "links of a rule: no place in a tscontract clause",
    "customProperties": "custom properties of a rule: no place in a tscontract clause",
    "relationships": "relationships (foreign keys): no tscontract clause",
    "schedule": "scheduling: tscontract checks each batch it is given",
    "scheduler": "scheduling: tscontract checks each batch it is given",
    "businessImpact": "business impact: no place in a tscontract contract",
    "method": "no place in a tscontract contract",
    "id": "a rule id: tscontract names each check by its clause (check ids)",
}
# flags whose false (the default) states nothing a contract would carry
_FALSE_SAYS_NOTHING = ("partitioned", "criticalDataElement", "unique", "primaryKey")
NULL_METRICS = ("nullValues", "nullCheck")
DUPLICATE_METRICS = ("duplicateValues", "duplicateCount", "uniqueCheck", "unique")
# the keys of a quality rule a native clause carries; the others (schedule, businessImpact ...) are listed
_RULE_KEYS = ("type", "metric", "rule", "arguments", "unit", "severity", "dimension", "description", "name")
_RULE_KEYS_SQL = ("query", "id")  # a sql rule's id names the check when it has no name


class ObjectWalk:
    """One schema object of a parsed ODCS document: what was taken, lost and kept, by path."""

    def __init__(
        self,
        tree: dict[str, Any],
        index: int,
        single: bool,
        key: list[str] | None,
        time_column: str | None,
        choices: Choices,
    ) -> None:
        self.tree = tree
        self.choices = choices
        self.server = server_type(tree.get("servers"))
        self.open: dict[str, list[str]] = {}  # what the document leaves open (ending in its option) -> columns
        self.zones: dict[str, str] = {}  # field -> the zone its naive timestamps are read in
        self.index = index
        self.record: dict[str, Any] = tree["schema"][index]
        self.single = single
        self.key_option = key
        self.time_option = time_column
        self.losses: list[Loss] = []
        self.consumed: set[tuple[Any, ...]] = set()
        self.clauses: list[_Clause] = []
        self.fields: dict[str, dict[str, Any]] = {}
        self.columns: dict[str, str] = {}  # field -> data column, where they differ
        self.drop: list[str] = []
        self.names: dict[str, str] = {}  # ODCS property name -> field name
        self.base: tuple[Any, ...] = ("schema", index)
        # (property path, field, key) with unique: true (isUnique: true, ODCS v2's spelling)
        self.unique: list[tuple[tuple[Any, ...], str, str]] = []
        self.uniques: dict[str, _Clause] = {}  # field -> its unique clause (unique: true, duplicateValues)
        self.row_count: dict[str, int] = {}
        self.row_count_origin: _Clause | None = None
        self.sql_checks: list[tuple[dict[str, Any], _Clause]] = []
        self.field_notes: dict[str, list[str]] = {}  # rules folded into nullable: false, their texts
        self.own = False  # a document this package's export wrote
        self.carrying = True  # the odcs section is written (not for a document the export wrote without one)
        self.kept: list[str] = []  # paths of the descriptive elements carried (the odcs section)
        # the keys carried, of the document (()), the object (("",)) and each field's property ((field,))
        self.carry_keys: dict[tuple[str, ...], set[str]] = {(): set(), ("",): set()}
        self.stated: set[tuple[Any, ...]] = set()  # logicalTypeOptions keys the field's type states (format ...)
        self.own_taken: set[tuple[Any, ...]] = set()  # customProperties this package's export wrote
        self.rules_carried: list[dict[str, Any]] = []  # the rules and options clauses came from, as written
        self.dropped: list[tuple[Any, ...]] = []  # properties the contract does not carry (--drop), carried as written
        self.rules_folded: list[dict[str, Any]] = []  # rules read as nullable: false or the key's uniqueness

    # ------------------------------------------------------------ bookkeeping
    def take(self, *path: Any) -> None:
        self.consumed.add(path)

    def lose(self, path: tuple[Any, ...], reason: str, value: Any = None) -> None:
        self.consumed.add(path)
        self.losses.append(Loss(self.render(path), shown(self.at(path) if value is None else value), reason))

    def at(self, path: tuple[Any, ...]) -> Any:
        node: Any = self.tree
        for part in path:
            node = node[part]
        return node

    def render(self, path: tuple[Any, ...]) -> str:
        text, parent = "", None
        node: Any = self.tree
        for part in path:
            if isinstance(part, int):
                item = node[part]
                name = item.get("name") if isinstance(item, dict) and parent in ("schema", "properties") else None
                text += f"[{name}]" if isinstance(name, str) else f"[{part}]"
            else:
                text += part if not text else f".{part}"
            parent, node = part, node[part]
        return text

    def leftovers(self) -> None:
        """Every element nothing took, listed at the highest level where nothing below it was taken."""
        touched = {path[:i] for path in self.consumed for i in range(len(path) + 1)}

        def walk(node: Any, path: tuple[Any, ...]) -> None:
            if path in self.consumed:
                return
            if path in touched and isinstance(node, dict | list):
                items = node.items() if isinstance(node, dict) else enumerate(node)
                for k, v in items:
                    walk(v, (*path, k))
                return
            last = next((p for p in reversed(path) if isinstance(p, str)), "")
            if node in (None, [], {}, "") or (node is False and last in _FALSE_SAYS_NOTHING):
                return
            if self.owner_key(path) in _KEPT:
                self.keep(path, node)
                return
            self.losses.append(
                Loss(self.render(path), shown(node), _NO_PLACE.get(last, "no place in a tscontract contract"))
            )

        for k, v in self.tree.items():
            if k != "schema":
                walk(v, (k,))
        walk(self.record, self.base)

    def owner_key(self, path: tuple[Any, ...]) -> Any:
        """The key an element has in the document, its object or its property (``tags`` of ``...tags[0]``)."""
        if path[0] != "schema":
            return path[0]
        rest = path[len(self.base) :]
        return rest[2] if len(rest) > 2 and rest[0] == "properties" else rest[0] if rest else None

    def keep(self, path: tuple[Any, ...], node: Any) -> None:
        """A descriptive element as written, carried in the contract's ``odcs`` section (:meth:`carried`)."""
        rest = path[len(self.base) :] if path[0] == "schema" else ()
        prop = self.record["properties"][rest[1]] if len(rest) > 2 and rest[0] == "properties" else None
        name = self.names.get(str(prop.get("name") or prop.get("physicalName"))) if prop is not None else None
        if path[0] != "schema":
            self.carry_keys[()].add(path[0])
        elif name in self.fields:
            self.carry_keys.setdefault((name,), set()).add(rest[2])
        elif prop is None and rest:
            self.carry_keys[("",)].add(rest[0])
        else:  # an element of a property the contract does not carry (--drop): in the contract's note
            text = node if isinstance(node, str) else json.dumps(_plain(node), ensure_ascii=False)
            self.field_notes.setdefault("", []).append(f"{self.render(path)}: {text}")
        self.kept.append(self.render(path))

    def carried(self) -> dict[str, Any]:
        """The ``odcs`` section: the document's, the object's and each field's property's elements kept or
        named (id, status, names, physical names and types), as written, and the rules clauses came from."""
        props = self.record.get("properties") or []
        by_field = {
            self.names[str(p.get("name") or p.get("physicalName"))]: (*self.base, "properties", i)
            for i, p in enumerate(props)
            if isinstance(p, dict) and self.names.get(str(p.get("name") or p.get("physicalName"))) in self.fields
        }
        out: dict[str, Any] = {
            "document": self.elements((), {*_CARRY_DOCUMENT, *self.carry_keys[()]}),
            "object": self.elements(self.base, {*_CARRY_OBJECT, *self.carry_keys[("",)]}),
        }
        if self.dropped:  # as written but for their quality, which no clause checks (the note: left out, --drop)
            out["object"]["properties"] = [
                {k: v for k, v in _plain(self.at(at)).items() if k != "quality"} for at in self.dropped
            ]
        properties = {}
        for name, at in by_field.items():
            entry = self.elements(at, {*_CARRY_PROPERTY, *self.carry_keys.get((name,), set())})
            if entry.get("name") == name:
                del entry["name"]
            options = self.at(at).get("logicalTypeOptions")
            stated = {k: v for k, v in (options or {}).items() if (*at, "logicalTypeOptions", k) in self.stated}
            if stated:
                entry["logicalTypeOptions"] = stated
            if entry:
                properties[name] = {**entry, "type": self.fields[name]["type"]}
        if properties:
            out["properties"] = properties
        if self.rules_carried:
            out["rules"] = self.rules_carried
        return {k: v for k, v in out.items() if v}

    def elements(self, at: tuple[Any, ...], keys: set[str]) -> dict[str, Any]:
        """The keys of an element as written (customProperties without those this package's export wrote)."""
        node = self.at(at) if at else self.tree
        out = {}
        for k in [k for k in node if k in keys]:
            value = node[k]
            if k == "customProperties" and isinstance(value, list):
                value = [item for i, item in enumerate(value) if (*at, k, i) not in self.own_taken]
            if value not in (None, [], {}, ""):
                out[k] = _plain(value)
        return out

    def round_trip(self, base: tuple[Any, ...], names: tuple[str, ...]) -> dict[str, Any]:
        """customProperties this package's export writes, taken back."""
        found = {}
        element = self.at(base) if base else self.tree
        for i, item in enumerate(element.get("customProperties") or []):
            if isinstance(item, dict) and item.get("property") in names:
                found[item["property"]] = item.get("value")
                self.take(*base, "customProperties", i)
                self.own_taken.add((*base, "customProperties", i))
        return found
