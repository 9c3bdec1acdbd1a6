"""A registration's ruleSet as Confluent validates it (#28): 422, 42210, Confluent's message."""

from __future__ import annotations

import json

import pytest

from tests.registry.conftest import Registry
from tscontract.contract.confluent_rules import rule_name_problem, rule_names, rule_set_problem

SCHEMA = json.dumps({"type": "record", "name": "Bar", "fields": [{"name": "close", "type": "double"}]})


def rule(name: str | None = "r", mode: str | None = "WRITE", **more: str) -> dict[str, str]:
    out = {"kind": "CONDITION", "type": "CEL", "expr": "message.close > 0", **more}
    if name is not None:
        out["name"] = name
    if mode is not None:
        out["mode"] = mode
    return out


# (ruleSet, Confluent's message) as RuleSet.validate() / Rule.validate() write it
REFUSED = [
    ({"domainRules": [rule(None)]}, "Missing rule name"),
    ({"domainRules": [rule("")]}, "Empty rule name"),
    ({"domainRules": [rule("r" * 257)]}, "Rule name too long"),
    ({"domainRules": [rule("field.adjusted.value")]}, "Illegal character in rule name: field.adjusted.value"),
    ({"domainRules": [rule("0rule")]}, "Illegal initial character in rule name: 0rule"),
    ({"domainRules": [rule("-rule")]}, "Illegal initial character in rule name: -rule"),
    ({"domainRules": [rule("With space")]}, "Illegal character in rule name: With space"),
    ({"domainRules": [rule("a\U0001d400")]}, "Illegal character in rule name: a\U0001d400"),  # a surrogate pair
    ({"domainRules": [rule("r", type=None)]}, "Missing rule type"),  # type: null
    ({"domainRules": [rule("r", onFailure="NONE,ERROR")]}, "Multiple actions only valid with WRITEREAD and UPDOWN"),
    ({"domainRules": [rule("r", "UPGRADE")]}, "Domain rules can only be WRITE, READ, WRITEREAD"),
    ({"encodingRules": [rule("r", "UPDOWN")]}, "Encoding rules can only be WRITE, READ, WRITEREAD"),
    ({"migrationRules": [rule("r", "READ")]}, "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN"),
    ({"migrationRules": [rule("r", None)]}, "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN"),  # WRITEREAD
    ({"domainRules": [rule("r"), rule("r", "READ")]}, "Found rule with duplicate name 'r'"),
    ({"migrationRules": [rule("r", "UPGRADE")], "domainRules": [rule("r")]}, "Found rule with duplicate name 'r'"),
    # the duplicate is found before the rule's own faults, migration rules before domain rules
    ({"domainRules": [rule("r"), rule("r", "UPGRADE")]}, "Found rule with duplicate name 'r'"),
    (
        {"migrationRules": [rule("m", "WRITE")], "domainRules": [rule("0")]},
        "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN",
    ),
]

ACCEPTED = [
    {"domainRules": [rule("_r-1"), rule("Ünïcode_ß", "READ"), rule("r" * 256, "WRITEREAD", onFailure="NONE,ERROR")]},
    {"domainRules": [rule("r", None)]},  # no mode: WRITEREAD, a domain mode
    {"migrationRules": [rule("up", "UPGRADE"), rule("both", "UPDOWN", onSuccess="NONE,NONE")]},
    {"migrationRules": [], "domainRules": [], "encodingRules": [rule("e", "WRITE")]},
]


@pytest.mark.parametrize(("rule_set", "message"), REFUSED)
def test_confluent_messages(rule_set: dict, message: str) -> None:
    assert rule_set_problem(rule_set) == message


@pytest.mark.parametrize("rule_set", ACCEPTED)
def test_what_confluent_accepts(rule_set: dict) -> None:
    assert rule_set_problem(rule_set) is None


def test_a_registry_refuses_with_42210_and_accepts_the_rest(registry: Registry) -> None:
    for rule_set, message in REFUSED:
        status, body = registry.call("POST", "/subjects/bars-value/versions", {"schema": SCHEMA, "ruleSet": rule_set})
        assert (status, body) == (422, {"error_code": 42210, "message": message}), rule_set
    assert registry.call("GET", "/subjects")[1] == []
    # as Confluent: the ruleSet is checked before the schema is read
    status, body = registry.call("POST", "/subjects/s/versions", {"schema": "{not avro", "ruleSet": REFUSED[0][0]})
    assert (status, body["error_code"]) == (422, 42210)
    for number, rule_set in enumerate(ACCEPTED):
        status, body = registry.call("POST", f"/subjects/ok{number}/versions", {"schema": SCHEMA, "ruleSet": rule_set})
        assert status == 200, body
        got = registry.call("GET", f"/subjects/ok{number}/versions/latest")[1]
        assert got["ruleSet"] == {k: v for k, v in rule_set.items() if v}


def test_rule_names_are_valid_unique_readable_and_stable() -> None:
    ids = ["field.adjusted.value", "invariants[0]", "field_adjusted_value", "0dd", "ü.x", "x" * 300, "x" * 301, ""]
    names = rule_names(ids, taken=["upgrade"])
    assert names[:2] == ["field_adjusted_value", "invariants_0"]
    assert names[2].startswith("field_adjusted_value_") and len(names[2]) == len("field_adjusted_value_") + 8
    assert names[3] == "_0dd" and names[4] == "x" and names[7] == "rule"
    assert len(set(names)) == len(names) and "upgrade" not in names
    assert all(len(n) <= 64 and rule_name_problem(n) is None and n.isascii() for n in names)
    assert rule_names(ids, taken=["upgrade"]) == names  # deterministic
    assert rule_names(["upgrade", "upgrade"], taken=["upgrade"])[0] != rule_names(["upgrade"])[0]


@pytest.mark.parametrize("contract", ["ohlcv_1m", "plant_sensor"])  # the seed contracts' copies
def test_the_real_client_registers_the_export_of_each_seed(registry: Registry, contract: str) -> None:
    """``export confluent`` as confluent-kafka's SchemaRegistryClient sends it: accepted, the rules intact."""
    from confluent_kafka.schema_registry import Metadata, RuleSet, Schema, SchemaRegistryClient

    from tests.conftest import EXAMPLES
    from tscontract.contract.loader import load_contract
    from tscontract.interop.exports import export

    body = json.loads(export("confluent", load_contract(EXAMPLES / contract / "contract.yaml")).artifacts[0].content)
    schema = Schema(
        body["schema"], "AVRO", [], Metadata.from_dict(body["metadata"]), RuleSet.from_dict(body["ruleSet"])
    )
    client = SchemaRegistryClient({"url": registry.url})
    schema_id = client.register_schema("bars-value", schema)
    latest = client.get_latest_version("bars-value")
    assert latest.schema_id == schema_id
    names = [r.name for r in latest.schema.rule_set.domain_rules]
    assert names == [r["name"] for r in body["ruleSet"]["domainRules"]] and names
    if contract.startswith("ohlcv"):
        assert "field_adjusted_value" in names


def test_the_real_client_sees_42210_for_a_name_confluent_refuses(registry: Registry) -> None:
    from confluent_kafka.schema_registry import RuleSet, Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    old_style = RuleSet.from_dict({"domainRules": [rule("field.adjusted.value")]})  # the name exports once gave
    with pytest.raises(SchemaRegistryError) as caught:
        SchemaRegistryClient({"url": registry.url}).register_schema("s", Schema(SCHEMA, "AVRO", rule_set=old_style))
    assert (caught.value.http_status_code, caught.value.error_code) == (422, 42210)
    assert caught.value.error_message == "Illegal character in rule name: field.adjusted.value"
