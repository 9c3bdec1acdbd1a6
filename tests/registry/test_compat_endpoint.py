"""The compatibility endpoint as Confluent's RestApiTest asserts it (CompatibilityResource), on both stores.

Written from RestApiTest: testRegisterInvalidSchemaBadType (FORWARD_TRANSITIVE: ``latest`` checks
the latest version only, ``/versions`` every version), testCompatibilityNonExistentSubject,
testCompatibilityNonExistentVersion, testCompatibilityInvalidVersion and the verbose answer of
an invalid schema (messages[0] holds "Invalid schema"-style text).
"""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from tests.registry.conftest import Registry, id_only


def _record(*fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": "myrecord", "fields": [{"type": "string", "name": f} for f in fields]},
        separators=(",", ":"),
    )


S1, S2, S3 = _record("f1", "f2"), _record("f1"), _record("f1", "f3")


def _post(registry: Registry, path: str, schema: str, **extra: Any) -> tuple[int, Any]:
    return registry.call("POST", path, {"schema": schema, **extra})


def _forward_transitive_subject(registry: Registry, subject: str = "testSubject") -> None:
    assert registry.call("PUT", f"/config/{subject}", {"compatibility": "NONE", "reason": "set up"})[0] == 200
    assert id_only(registry.register(subject, S1)) == (200, {"id": 1})
    assert id_only(registry.register(subject, S2)) == (200, {"id": 2})
    assert registry.call("PUT", f"/config/{subject}", {"compatibility": "FORWARD_TRANSITIVE"})[0] == 200


def test_latest_checks_only_the_latest_and_versions_checks_what_the_mode_names(
    default_store_registry: Registry,
) -> None:
    reg = default_store_registry
    _forward_transitive_subject(reg)
    # S3 is compatible with S2 (the latest) but not with S1: FORWARD_TRANSITIVE checks S1 only without a version
    assert _post(reg, "/compatibility/subjects/testSubject/versions/latest", S3) == (200, {"is_compatible": True})
    assert _post(reg, "/compatibility/subjects/testSubject/versions/-1", S3) == (200, {"is_compatible": True})
    assert _post(reg, "/compatibility/subjects/testSubject/versions/2", S3) == (200, {"is_compatible": True})
    assert _post(reg, "/compatibility/subjects/testSubject/versions/1", S3) == (200, {"is_compatible": False})
    assert _post(reg, "/compatibility/subjects/testSubject/versions", S3) == (200, {"is_compatible": False})
    status, body = reg.register("testSubject", S3)
    assert (status, body["error_code"]) == (409, 40901)

    client = SchemaRegistryClient({"url": reg.url})
    schema = Schema(S3, "AVRO")
    assert client.test_compatibility("testSubject", schema) is True
    assert client.test_compatibility("testSubject", schema, version=1) is False
    assert client.test_compatibility_all_versions("testSubject", schema) is False


def test_non_transitive_versions_checks_the_latest_only(default_store_registry: Registry) -> None:
    reg = default_store_registry
    _forward_transitive_subject(reg)
    assert reg.call("PUT", "/config/testSubject", {"compatibility": "FORWARD"})[0] == 200
    assert _post(reg, "/compatibility/subjects/testSubject/versions", S3) == (200, {"is_compatible": True})


def test_unknown_subject_is_compatible_and_unknown_version_is_40402(default_store_registry: Registry) -> None:
    reg = default_store_registry
    for path in ("/compatibility/subjects/non-existent-subject/versions/latest", "/compatibility/subjects/x/versions"):
        assert _post(reg, path, S1) == (200, {"is_compatible": True}), path
    client = SchemaRegistryClient({"url": reg.url})
    assert client.test_compatibility("non-existent-subject", Schema(S1, "AVRO")) is True
    assert client.test_compatibility_all_versions("non-existent-subject", Schema(S1, "AVRO")) is True

    status, body = _post(reg, "/compatibility/subjects/non-existent-subject/versions/3", S1)
    assert (status, body["error_code"]) == (404, 40402)
    assert reg.register("test", S1)[0] == 200
    status, body = _post(reg, "/compatibility/subjects/test/versions/100", S1)
    assert (status, body["error_code"]) == (404, 40402)
    status, body = _post(reg, "/compatibility/subjects/test/versions/earliest", S1)
    assert (status, body["error_code"]) == (422, 42202)
    # a soft-deleted version is not checked against: latest moves to the newest live one, a number is 40402
    assert reg.call("PUT", "/config/test", {"compatibility": "NONE", "reason": "set up"})[0] == 200
    assert reg.register("test", S3)[0] == 200
    assert reg.call("PUT", "/config/test", {"compatibility": "BACKWARD"})[0] == 200
    assert reg.call("DELETE", "/subjects/test/versions/2")[0] == 200
    status, body = _post(reg, "/compatibility/subjects/test/versions/2", S1)
    assert (status, body["error_code"]) == (404, 40402)
    assert _post(reg, "/compatibility/subjects/test/versions/latest", S1) == (200, {"is_compatible": True})


def test_verbose_messages_in_confluents_shape(default_store_registry: Registry) -> None:
    reg = default_store_registry
    _forward_transitive_subject(reg)
    status, body = _post(reg, "/compatibility/subjects/testSubject/versions?verbose=true", S3)
    assert status == 200 and body["is_compatible"] is False
    assert len(body["messages"]) >= 2
    assert body["messages"][-1] == "{validateFields: 'false', compatibility: 'FORWARD_TRANSITIVE'}"
    ok = _post(reg, "/compatibility/subjects/testSubject/versions/latest?verbose=true", S3)
    assert ok == (200, {"is_compatible": True, "messages": []})
    # an invalid schema: 42201, or with verbose a 200 that says why
    bad_default = json.dumps(
        {"type": "record", "name": "test", "fields": [{"name": "s", "type": "string", "default": None}]}
    )
    status, body = _post(reg, "/compatibility/subjects/testSubject/versions/latest", bad_default)
    assert (status, body["error_code"]) == (422, 42201)
    status, body = _post(reg, "/compatibility/subjects/testSubject/versions?verbose=true", bad_default)
    assert status == 200 and body["is_compatible"] is False
    assert len(body["messages"]) == 1 and "Invalid" in body["messages"][0]
    client = SchemaRegistryClient({"url": reg.url})
    assert client.test_compatibility("testSubject", Schema(S3, "AVRO"), verbose=True) is True


def test_a_different_schema_type_is_incompatible(registry: Registry) -> None:
    assert id_only(registry.register("mixed", S1)) == (200, {"id": 1})
    body = {"schema": '{"type": "object"}', "schemaType": "JSON"}
    status, answer = registry.call("POST", "/compatibility/subjects/mixed/versions/latest?verbose=true", body)
    assert status == 200 and answer["is_compatible"] is False
    assert answer["messages"][0] == "Incompatible because of different schema type"


def test_confluents_recursive_oneof_pair_is_decided_and_a_budget_is_422(default_store_registry: Registry) -> None:
    from tests.evolution.test_json_compat import _chain, _confluent_trade

    reg = default_store_registry
    trade = {"schema": json.dumps(_confluent_trade()), "schemaType": "JSON"}
    changed = {"schema": json.dumps(_confluent_trade("number")), "schemaType": "JSON"}
    assert id_only(reg.call("POST", "/subjects/trade/versions", trade)) == (200, {"id": 1})
    assert reg.call("POST", "/compatibility/subjects/trade/versions/latest", trade) == (200, {"is_compatible": True})
    assert reg.call("POST", "/compatibility/subjects/trade/versions/latest", changed) == (
        200,
        {"is_compatible": False},
    )
    status, body = reg.call("POST", "/subjects/trade/versions", changed)
    assert (status, body["error_code"]) == (409, 40901) and "RecursionError" not in body["message"]

    deep = {"schema": _chain(600, "string"), "schemaType": "JSON"}
    deeper = {"schema": _chain(600, "integer"), "schemaType": "JSON"}
    assert id_only(reg.call("POST", "/subjects/chain/versions", deep)) == (200, {"id": 2})
    for method, path in (("POST", "/subjects/chain/versions"), ("POST", "/compatibility/subjects/chain/versions")):
        status, body = reg.call(method, path, deeper)
        assert (status, body["error_code"]) == (422, 422), (path, body)
        assert "budget" in body["message"] and "Invalid" not in body["message"]
    assert reg.call("GET", "/subjects/chain/versions") == (200, [1])
