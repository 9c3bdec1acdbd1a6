"""Confluent data-contract fields of a registration: ``metadata`` and ``ruleSet``.

Checked for shape (what Confluent's serializers read from them), then kept as compact JSON with
sorted keys: part of the schema's identity, so the same schema text with another rule set is a
new id (a consumer looks up the rules it must run by the id in each message).

* ``metadata``: ``{"tags": {path: [tag...]}, "properties": {name: text}, "sensitive": [name...]}``;
* ``ruleSet``: ``{"domainRules": [rule...], "migrationRules": [rule...], "encodingRules": [rule...],
  "enableAt"?: ALL|CLIENT|GATEWAY|SERVER|NONE}``,
  each rule ``{"name", "kind": CONDITION|TRANSFORM, "mode", "type", "expr"?, "doc"?, "tags"?,
  "params"?, "onSuccess"?, "onFailure"?, "disabled"?}``; what Confluent requires of the names,
  modes and actions, a registration meets in ``registry.rulesets`` (42210).
"""

from __future__ import annotations

import json
from typing import Any

from tscontract.contract.confluent_rules import RULE_KINDS, RULE_MODES
from tscontract.registry.errors import RegistryError

RULE_LISTS = ("migrationRules", "domainRules", "encodingRules")
# where a rule set's rules run (Confluent's ExecutionEnvironment): part of the schema's identity and guid
ENABLE_AT = ("ALL", "CLIENT", "GATEWAY", "SERVER", "NONE")
_RULE_TEXT = ("name", "kind", "mode", "type", "expr", "doc", "onSuccess", "onFailure")


def _invalid(message: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema: {message}")


def _text_map(value: Any, where: str, items: str) -> None:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise _invalid(f"{where} must be an object")
    for key, item in value.items():
        if items == "str" and not isinstance(item, str):
            raise _invalid(f"{where}.{key} must be a string")
        if items == "list" and not (isinstance(item, list) and all(isinstance(t, str) for t in item)):
            raise _invalid(f"{where}.{key} must be a list of strings")


def check_metadata(metadata: Any) -> dict[str, Any]:
    if not isinstance(metadata, dict):
        raise _invalid("'metadata' must be an object")
    unknown = sorted(set(metadata) - {"tags", "properties", "sensitive"})
    if unknown:
        raise _invalid(f"'metadata' has unknown member(s) {', '.join(unknown)}; known: tags, properties, sensitive")
    if metadata.get("tags") is not None:
        _text_map(metadata["tags"], "metadata.tags", "list")
    if metadata.get("properties") is not None:
        _text_map(metadata["properties"], "metadata.properties", "str")
    sensitive = metadata.get("sensitive")
    if sensitive is not None and not (isinstance(sensitive, list) and all(isinstance(s, str) for s in sensitive)):
        raise _invalid("metadata.sensitive must be a list of strings")
    return metadata


def check_rule(rule: Any, where: str) -> None:
    if not isinstance(rule, dict):
        raise _invalid(f"{where} must be an object")
    for key in _RULE_TEXT:
        if rule.get(key) is not None and not isinstance(rule[key], str):
            raise _invalid(f"{where}.{key} must be a string")
    # a kind or mode Confluent's enums lack fails as JSON that does not map (Jackson): 400, not 422;
    # a missing name or type, and which modes a list takes, are ``registry.rulesets``' (42210)
    for key, enum, values in (("kind", "RuleKind", RULE_KINDS), ("mode", "RuleMode", RULE_MODES)):
        if rule.get(key) is not None and rule[key] not in values:
            raise RegistryError(
                400,
                400,
                f"Cannot deserialize value of type `{enum}` from String {json.dumps(rule[key])}: "
                f"not one of the values accepted for Enum class: [{', '.join(values)}]",
            )
    if rule.get("tags") is not None and not (
        isinstance(rule["tags"], list) and all(isinstance(t, str) for t in rule["tags"])
    ):
        raise _invalid(f"{where}.tags must be a list of strings")
    if rule.get("params") is not None:
        _text_map(rule["params"], f"{where}.params", "str")
    if rule.get("disabled") is not None and not isinstance(rule["disabled"], bool):
        raise _invalid(f"{where}.disabled must be true or false")


def check_rule_set(rule_set: Any) -> dict[str, Any]:
    if not isinstance(rule_set, dict):
        raise _invalid("'ruleSet' must be an object")
    unknown = sorted(set(rule_set) - {*RULE_LISTS, "enableAt"})
    if unknown:
        known = ", ".join([*RULE_LISTS, "enableAt"])
        raise _invalid(f"'ruleSet' has unknown member(s) {', '.join(unknown)}; known: {known}")
    enable_at = rule_set.get("enableAt")
    if enable_at is not None and enable_at not in ENABLE_AT:
        # as Jackson answers a value Confluent's ExecutionEnvironment enum lacks (a 400, as kind and mode)
        raise RegistryError(
            400,
            400,
            f"Cannot deserialize value of type `ExecutionEnvironment` from String {json.dumps(enable_at)}: "
            f"not one of the values accepted for Enum class: [{', '.join(ENABLE_AT)}]",
        )
    for name in RULE_LISTS:
        rules = rule_set.get(name)
        if rules is None:
            continue
        if not isinstance(rules, list):
            raise _invalid(f"ruleSet.{name} must be a list")
        for index, rule in enumerate(rules):
            check_rule(rule, f"ruleSet.{name}[{index}]")
    return rule_set


def _stored(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _pruned(value: dict[str, Any]) -> dict[str, Any]:
    """Without empty or null members: confluent-kafka's client sends ``"migrationRules": []`` and
    ``"sensitive": []`` for a schema registered without them, and must find it."""
    return {key: item for key, item in value.items() if item not in (None, [], {})}


def contract_fields(body: dict[str, Any]) -> tuple[str, str]:
    """(metadata, ruleSet) of a registration body as stored: compact sorted JSON, '' when absent or empty."""
    metadata, rule_set = body.get("metadata"), body.get("ruleSet")
    if metadata is not None:
        metadata = _pruned(check_metadata(metadata))
    if rule_set is not None:
        rule_set = _pruned(check_rule_set(rule_set))
    return (_stored(metadata) if metadata else "", _stored(rule_set) if rule_set else "")


def property_value(metadata: str, key: str) -> str | None:
    """One property of stored metadata (None when absent)."""
    return ((json.loads(metadata) if metadata else {}).get("properties") or {}).get(key)


def has_properties(metadata: str) -> bool:
    """Does stored metadata carry a ``properties`` map (Confluent matches metadata only against one)?"""
    return bool(metadata) and isinstance(json.loads(metadata).get("properties"), dict)


def properties_match(metadata: str, wanted: dict[str, str | None]) -> bool:
    """Do the stored metadata's properties hold every wanted key with its value (None: absent)?"""
    return all(property_value(metadata, key) == value for key, value in wanted.items())


def payload_fields(metadata: str, rule_set: str) -> dict[str, Any]:
    """The members an answer carries for stored fields (none when a field is empty)."""
    out: dict[str, Any] = {}
    if metadata:
        out["metadata"] = json.loads(metadata)
    if rule_set:
        out["ruleSet"] = json.loads(rule_set)
    return out
