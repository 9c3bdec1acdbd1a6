"""The ``odcs`` section: what an ODCS document said with no clause, carried for ``export odcs`` to write back.

``import odcs`` fills it, and a contract written by hand may hold one, so it is input like any other: it
may carry the document's, the schema object's and each property's descriptive elements (names, physical
names and types, descriptions, team, servers, SLA, tags ...), never what the contract states itself. A
carried ``apiVersion``, ``version`` or ``schema`` would replace the export's own, and a carried
``quality`` would put checks in the exported document that no clause of the contract makes: both are
refused when the contract loads, naming the element.
"""

from __future__ import annotations

from typing import Any

# what the import carries whenever written: the document's id, name and status; the object's and each
# property's names, physical names and types
CARRY_DOCUMENT = ("id", "name", "status", "description", "slaDefaultElement", "slaProperties")
CARRY_OBJECT = ("name", "physicalName", "physicalType", "description", "businessName", "dataGranularityDescription")
CARRY_PROPERTY = (
    "name", "physicalName", "physicalType", "logicalType", "businessName", "primaryKey", "primaryKeyPosition",
)  # fmt: skip
# a property's elements that state its type (written back while they read as the field's type)
TYPED = ("physicalType", "logicalType", "logicalTypeOptions")
# elements that describe rather than check, kept as written (and carried where they are the document's,
# the object's or a property's the contract keeps)
KEPT = frozenset(
    (
        "name", "description", "status", "tenant", "domain", "dataProduct", "contractCreatedTs", "tags",
        "authoritativeDefinitions", "customProperties", "servers", "team", "roles", "support", "price",
        "slaDefaultElement", "slaProperties", "physicalName", "physicalType", "logicalType", "businessName",
        "dataGranularityDescription", "classification", "examples", "criticalDataElement", "encryptedName",
        "partitioned", "partitionKeyPosition", "transformSourceObjects", "transformLogic", "transformDescription",
    )
)  # fmt: skip
# the document's own elements, the schema object's, each field's property's, and the rules clauses came from
PARTS: dict[str, type] = {"document": dict, "object": dict, "properties": dict, "rules": list}
_ALLOWED = {
    "document": KEPT | set(CARRY_DOCUMENT),
    "object": KEPT | set(CARRY_OBJECT) | {"properties"},  # properties: those the contract drops, as written
    "property": KEPT | set(CARRY_PROPERTY) | set(TYPED) | {"type"},
}


def carried_section(value: Any) -> dict[str, Any]:
    """The section as written, or ``ValueError`` naming the first element a contract cannot carry."""
    if not isinstance(value, dict):
        raise ValueError("odcs: a mapping of document, object, properties and rules")
    unknown = sorted(set(value) - set(PARTS))
    if unknown:
        raise ValueError(f"odcs: unknown part(s) {', '.join(map(str, unknown))}; known: {', '.join(PARTS)}")
    for part, kind in PARTS.items():
        if part in value and not isinstance(value[part], kind):
            raise ValueError(f"odcs.{part}: a {'list' if kind is list else 'mapping'}")
    _elements("document", value.get("document") or {}, "document")
    carried_object = value.get("object") or {}
    _elements("object", carried_object, "object")
    dropped = carried_object.get("properties", [])
    if not isinstance(dropped, list) or not all(isinstance(p, dict) for p in dropped):
        raise ValueError("object.properties: a list of the properties the contract drops, each a mapping")
    for i, prop in enumerate(dropped):
        if "quality" in prop:
            raise ValueError(f"object.properties[{i}].quality: {_NO_CHECKS}")
    for name, prop in (value.get("properties") or {}).items():
        if not isinstance(prop, dict):
            raise ValueError(f"properties.{name}: a mapping of the property's elements")
        _elements(f"properties.{name}", prop, "property")
    return dict(value)


_NO_CHECKS = "not carried: the export writes as quality what the contract's clauses check, nothing else"
_OWN = "not carried: the export writes the contract's own (apiVersion, kind, version, schema), or it is no ODCS element"


def _elements(where: str, carried: dict[str, Any], kind: str) -> None:
    for key in carried:
        if key not in _ALLOWED[kind]:
            raise ValueError(f"{where}.{key}: {_NO_CHECKS if key == 'quality' else _OWN}")
