"""Schema references across subjects in register, lookup and compatibility, with the default checks (issue #15)."""

from __future__ import annotations

import json

from tests.registry.conftest import Registry

MONEY = {
    "type": "record",
    "name": "Money",
    "namespace": "com.acme",
    "fields": [{"name": "units", "type": "long"}, {"name": "currency", "type": "string"}],
}


def trade(*extra: dict, price: object = "com.acme.Money") -> str:
    fields = [{"name": "symbol", "type": "string"}, {"name": "price", "type": price}, *extra]
    return json.dumps({"type": "record", "name": "Trade", "namespace": "com.acme.md", "fields": fields})


def register(registry: Registry, subject: str, schema: str, refs: list[dict], schema_type: str = "AVRO") -> tuple:
    body = {"schema": schema, "schemaType": schema_type, "references": refs}
    return registry.call("POST", f"/subjects/{subject}/versions", body)


def test_avro_references_register_look_up_and_check(default_store_registry: Registry) -> None:
    reg = default_store_registry
    assert reg.register("money-value", json.dumps(MONEY))[0] == 200
    refs = [{"name": "com.acme.Money", "subject": "money-value", "version": 1}]
    first = register(reg, "trades-value", trade(), refs)
    assert first[0] == 200, first
    # a compatible evolution: checked with Money's definition, not refused as an unknown type
    added = trade({"name": "venue", "type": ["null", "string"], "default": None})
    assert register(reg, "trades-value", added, refs)[0] == 200
    # an incompatible one is refused by the real check
    status, body = register(reg, "trades-value", trade(price="string"), refs[:0])
    assert status == 409 and "price" in body["message"], body
    looked = reg.call("POST", "/subjects/trades-value", {"schema": trade(), "references": refs})
    assert looked[0] == 200 and looked[1]["version"] == 1 and looked[1]["references"] == refs
    missing = register(reg, "other-value", trade(), [{"name": "com.acme.Money", "subject": "nope", "version": 1}])
    assert (missing[0], missing[1]["error_code"]) == (422, 42201) and "reference" in missing[1]["message"]


def test_a_change_inside_a_referenced_avro_type_is_a_break(default_registry: Registry) -> None:
    reg = default_registry
    reg.register("money-value", json.dumps(MONEY))
    reg.call("PUT", "/config/money-value", {"compatibility": "NONE", "reason": "a new Money for the test"})
    money_v2 = dict(MONEY, fields=[{"name": "units", "type": "string"}, {"name": "currency", "type": "string"}])
    assert reg.register("money-value", json.dumps(money_v2))[0] == 200
    assert (
        register(reg, "trades-value", trade(), [{"name": "com.acme.Money", "subject": "money-value", "version": 1}])[0]
        == 200
    )
    status, body = register(
        reg, "trades-value", trade(), [{"name": "com.acme.Money", "subject": "money-value", "version": 2}]
    )
    assert status == 409 and "units" in body["message"], body


MONEY_PROTO = 'syntax = "proto3";\npackage acme;\nmessage Money {\n  int64 units = 1;\n  string currency = 2;\n}\n'


def trade_proto(extra: str = "", price: str = "acme.Money price = 2;") -> str:
    return (
        'syntax = "proto3";\npackage acme.md;\nimport "acme/money.proto";\n'
        f"message Trade {{\n  string symbol = 1;\n  {price}\n  {extra}\n}}\n"
    )


def test_protobuf_imports_as_references(default_registry: Registry) -> None:
    reg = default_registry
    assert reg.register("acme-money", MONEY_PROTO, "PROTOBUF")[0] == 200
    refs = [{"name": "acme/money.proto", "subject": "acme-money", "version": 1}]
    first = register(reg, "trades-value", trade_proto(), refs, "PROTOBUF")
    assert first[0] == 200, first
    # without the reference the import cannot compile: 422 with protoc's message
    alone = reg.register("alone-value", trade_proto(), "PROTOBUF")
    assert (alone[0], alone[1]["error_code"]) == (422, 42201) and "money.proto" in alone[1]["message"]
    assert register(reg, "trades-value", trade_proto("string venue = 3;"), refs, "PROTOBUF")[0] == 200
    changed = trade_proto("string venue = 3;", price="string price = 2;")
    status, body = register(reg, "trades-value", changed, refs, "PROTOBUF")
    assert status == 409 and "/Trade/fields/2/type: message -> string" in body["message"], body
    escape = register(reg, "x-value", trade_proto(), [dict(refs[0], name="../money.proto")], "PROTOBUF")
    assert (escape[0], escape[1]["error_code"]) == (422, 42201)


def test_json_schema_refs_to_other_subjects_are_followed(default_registry: Registry) -> None:
    reg = default_registry
    money = {"type": "object", "properties": {"units": {"type": "integer"}}, "additionalProperties": False}
    assert reg.register("money-json", json.dumps(money), "JSON")[0] == 200
    reg.call("PUT", "/config/money-json", {"compatibility": "NONE", "reason": "a new Money for the test"})
    money_v2 = dict(money, properties={"units": {"type": "string"}})
    assert reg.register("money-json", json.dumps(money_v2), "JSON")[0] == 200
    quote = json.dumps({"type": "object", "properties": {"price": {"$ref": "money.json"}}, "required": ["price"]})
    v1 = [{"name": "money.json", "subject": "money-json", "version": 1}]
    assert register(reg, "quotes-value", quote, v1, "JSON")[0] == 200
    status, body = register(reg, "quotes-value", quote, [dict(v1[0], version=2)], "JSON")
    assert status == 409 and "units" in body["message"], body
