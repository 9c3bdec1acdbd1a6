"""``export odcs`` of a contract imported from ODCS: the document's own elements written back in ODCS form.

The import keeps what the document states with no clause in the contract's ``odcs`` section (its id,
status, object and physical names and types, servers, SLA, team, roles, support, tags, custom
properties, links ...) and, under ``odcs.rules``, the rule or ``logicalTypeOptions`` each clause came from
with the clause it became. The export writes those back as written: an element while the contract still
says what it was read as (a property's type, a clause with its severity and share, the freshness), the
contract's own form otherwise. Nothing here decides what a check means; it only restores the words.
"""

from __future__ import annotations

from typing import Any

from tscontract.contract.model import Contract
from tscontract.contract.odcs_carried import TYPED
from tscontract.interop.odcs.reread import options_read_as, reads_as, type_options, type_reads_as
from tscontract.plan.checks import Check
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import SqlCheckParams

# ODCS v3's order of a document's top-level keys
DOCUMENT_ORDER = (
    "apiVersion", "kind", "id", "name", "version", "status", "tenant", "domain", "dataProduct",
    "authoritativeDefinitions", "description", "schema", "support", "price", "team", "roles",
    "slaDefaultElement", "slaProperties", "servers", "tags", "customProperties", "contractCreatedTs",
)  # fmt: skip
_KEYED = ("primaryKey", "primaryKeyPosition")  # as written while the contract's key is the one read


def said(check: Check, contract: Contract) -> str:
    """What a check says, as the import writes it in ``odcs.rules`` (``clause``)."""
    column = check.columns[0] if check.columns else None
    if check.kind == CheckKind.NOT_NULL:
        return f"{column} is not null"
    if check.kind == CheckKind.UNIQUE_KEY:
        return "key.unique"
    if check.kind == CheckKind.UNIQUE:
        return f"unique: {column}"
    if check.kind == CheckKind.ROW_COUNT:
        return "row_count"
    if check.kind == CheckKind.FRESHNESS and contract.freshness is not None:
        return f"freshness: {contract.freshness.max_age.text}"
    if check.kind == CheckKind.SQL_CHECK:
        return f"sql_checks: {check.params_of(SqlCheckParams).rule.name}"
    if check.kind == CheckKind.CONSTRAINT:
        return f"{column} {check.clause}"
    return check.clause


def _same_terms(entry: dict[str, Any], check: Check, contract: Contract) -> bool:
    share = check.params.max_failing
    same = entry.get("severity", "error") == check.severity and entry.get("max_failing") == (
        share.text if share is not None else None
    )
    text, rules = said(check, contract), entry.get("rules") or []
    options = "options" not in entry or options_read_as(entry["options"], entry.get("field"), text)
    return same and options and all(reads_as(rule, check, contract, entry.get("at"), text) for rule in rules)


def written_back(
    check: Check,
    contract: Contract,
    properties: dict[str, dict[str, Any]],
    record_quality: list[dict[str, Any]],
) -> bool:
    """Write the rules and options the check came from, as written; False when it came from none."""
    carried = contract.odcs or {}
    clause = said(check, contract)
    found = [
        e
        for e in carried.get("rules") or []
        if isinstance(e, dict) and e.get("clause") == clause and _same_terms(e, check, contract)
    ]
    typed = carried.get("properties") or {}
    found = [
        e
        for e in found
        if not ("options" in e or "stated" in e)
        or (
            e.get("field") in contract.fields
            and (typed.get(e["field"]) or {}).get("type") == contract.fields[e["field"]].type.text
        )
    ]
    if not found:
        return False
    for entry in found:
        if isinstance(entry.get("options"), dict) and entry.get("field") in properties:
            properties[entry["field"]].setdefault("logicalTypeOptions", {}).update(entry["options"])
        for rule in entry.get("rules") or []:
            at = entry.get("at")
            if at in properties:
                properties[at].setdefault("quality", []).append(rule)
            else:
                record_quality.append(rule)
    return True


def write_property(entry: dict[str, Any], contract: Contract, name: str) -> dict[str, Any]:
    """A property with its carried elements: its name, physical name and, while its type is the one read,
    its physical and logical type as written."""
    carried = ((contract.odcs or {}).get("properties") or {}).get(name)
    if not isinstance(carried, dict):
        return entry
    out = {"name": carried.get("name", name)}
    if "physicalName" in carried:
        out["physicalName"] = carried["physicalName"]
    same_type = carried.get("type") == contract.fields[name].type.text and type_reads_as(carried, contract, name)
    same_key = {"clause": f"key: [{', '.join(contract.key)}]"} in (contract.odcs or {}).get("rules", [])
    for k, v in entry.items():
        if k in ("name", "physicalName") or (same_type and k in TYPED) or (same_key and k in _KEYED):
            continue
        out[k] = v
    if same_type:
        for k in TYPED:
            if k in carried:
                out[k] = type_options(carried[k], contract, name) if isinstance(carried[k], dict) else carried[k]
    for k, v in carried.items():
        if k not in ("name", "physicalName", "type", *TYPED, *_KEYED) or (same_key and k in _KEYED):
            out[k] = _merged(k, v, out.get(k))
    return out


def write_object(schema_object: dict[str, Any], contract: Contract) -> dict[str, Any]:
    """The schema object with its carried name, physical name and type and its other elements."""
    carried = (contract.odcs or {}).get("object")
    if not isinstance(carried, dict):
        return schema_object
    out = {"name": carried.get("name", schema_object["name"])}
    if "physicalName" in carried:
        out["physicalName"] = carried["physicalName"]
    for k, v in schema_object.items():
        if k not in ("name", "physicalName"):
            out[k] = v
    for k, v in carried.items():
        if k == "properties" and isinstance(v, list):  # the properties the contract does not carry (--drop)
            out["properties"] = [*out["properties"], *v]
        elif k not in ("name", "physicalName"):
            out[k] = _merged(k, v, out.get(k))
    return out


def write_document(document: dict[str, Any], contract: Contract, status: Any) -> dict[str, Any]:
    """The document with its carried id, name, status, servers, SLA, team, roles, support, links ..."""
    carried = (contract.odcs or {}).get("document")
    if not isinstance(carried, dict):
        document["status"] = status or "active"
        return document
    out = dict(document)
    for k, v in carried.items():
        if k == "team" and not _names(v, contract.owner):
            continue  # another owner: the contract's
        if k == "description" and isinstance(v, dict) and contract.description not in _descriptions(v, contract):
            out[k] = {**v, "purpose": contract.description}
            continue
        if k == "slaProperties" and isinstance(v, list):
            out[k] = _sla(v, document.get(k) or [], contract)
            continue
        out[k] = _merged(k, v, out.get(k))
    if status is not None or "status" not in out:
        out["status"] = status or "active"
    if not out.get("slaProperties"):
        out.pop("slaProperties", None)
    return {k: out[k] for k in sorted(out, key=lambda k: DOCUMENT_ORDER.index(k) if k in DOCUMENT_ORDER else 99)}


def _merged(key: str, carried: Any, generated: Any) -> Any:
    """customProperties: the carried ones, then this package's own; any other key: as carried."""
    if key == "customProperties" and isinstance(carried, list) and isinstance(generated, list):
        return [*carried, *generated]
    return carried


def _names(team: Any, owner: str | None) -> bool:
    """Whether a team (v3.0 list, v3.1 ``{name, members}``) names the owner."""
    members = team.get("members") if isinstance(team, dict) else team
    usernames = {m.get("username") for m in members or [] if isinstance(m, dict)}
    return owner is None or owner in usernames or (isinstance(team, dict) and team.get("name") == owner)


def _descriptions(described: dict[str, Any], contract: Contract) -> tuple[Any, ...]:
    own = ((contract.odcs or {}).get("object") or {}).get("description")
    return described.get("purpose"), own


def _sla(carried: list[Any], generated: list[dict[str, Any]], contract: Contract) -> list[Any]:
    """The SLA properties as written; the one read as the freshness only while the contract's is the same."""
    read = next(
        (
            e
            for e in (contract.odcs or {}).get("rules") or []
            if isinstance(e, dict) and str(e.get("clause")).startswith("freshness: ")
        ),
        None,
    )
    freshness = contract.freshness
    if read is None:
        return [*carried, *generated]
    if freshness is not None and read["clause"] == f"freshness: {freshness.max_age.text}":
        return carried
    index = read.get("sla")
    return [*(s for i, s in enumerate(carried) if i != index), *generated]
