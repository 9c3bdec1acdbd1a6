"""Reading one schema object of an ODCS document: the elements taken, lost or kept, and what is left over."""

from __future__ import annotations

import json
import re
from typing import Any

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
# elements that describe rather than check, kept as written in the note of their field (a property's)
# or of the contract (the document's, the object's): ``<path>: <value as JSON>``, one line each
_KEPT = frozenset(
    (
        "name", "description", "status", "tenant", "domain", "dataProduct", "contractCreatedTs", "tags",
        "authoritativeDefinitions", "customProperties", "servers", "team", "roles", "support", "price",
        "slaDefaultElement", "slaProperties", "physicalName", "physicalType", "logicalType", "businessName",
        "dataGranularityDescription", "classification", "examples", "criticalDataElement", "encryptedName",
        "partitioned", "partitionKeyPosition", "transformSourceObjects", "transformLogic", "transformDescription",
    )
)  # fmt: skip
_NULL_METRICS = ("nullValues", "nullCheck")
_DUPLICATE_METRICS = ("duplicateValues", "duplicateCount", "uniqueCheck", "unique")
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
        self.kept: list[str] = []  # paths of the descriptive elements kept in notes

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
        """A descriptive element as written, in its field's note (a property's) or the contract's."""
        rest = path[len(self.base) :] if path[0] == "schema" else ()
        prop = self.record["properties"][rest[1]] if len(rest) > 2 and rest[0] == "properties" else None
        name = self.names.get(str(prop.get("name") or prop.get("physicalName"))) if prop is not None else None
        text = node if isinstance(node, str) else json.dumps(_plain(node), ensure_ascii=False)
        self.field_notes.setdefault(name if name in self.fields else "", []).append(f"{self.render(path)}: {text}")
        self.kept.append(self.render(path))

    def round_trip(self, base: tuple[Any, ...], names: tuple[str, ...]) -> dict[str, Any]:
        """customProperties this package's export writes, taken back."""
        found = {}
        element = self.at(base) if base else self.tree
        for i, item in enumerate(element.get("customProperties") or []):
            if isinstance(item, dict) and item.get("property") in names:
                found[item["property"]] = item.get("value")
                self.take(*base, "customProperties", i)
        return found
