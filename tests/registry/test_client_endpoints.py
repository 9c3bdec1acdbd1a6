"""confluent-kafka's SchemaRegistryClient against the endpoints and delete codes of #28."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from tests.registry.conftest import Registry, avro_record


def _code(call) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with pytest.raises(SchemaRegistryError) as caught:
        call()
    return caught.value.http_status_code, caught.value.error_code


def test_client_reads_by_id_and_deletes(registry: Registry) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    a, b = Schema(avro_record("A", "x"), "AVRO"), Schema(avro_record("B", "y"), "AVRO")
    assert client.register_schema("s", a) == 1
    assert client.register_schema("s", b) == 2
    assert client.register_schema("t", a) == 1
    assert client.get_subjects_by_schema_id(1) == ["s", "t"]
    assert [(v.subject, v.version) for v in client.get_schema_versions(1)] == [("s", 1), ("t", 1)]
    assert client.get_schema_by_guid(client.get_version("s", 1).guid).schema_str == a.schema_str
    assert client.get_contexts() == ["."]

    assert _code(lambda: client.delete_version("s", 2, permanent=True)) == (404, 40407)
    assert client.delete_version("s", 2) == 2
    assert _code(lambda: client.delete_version("s", 2)) == (404, 40406)
    assert client.get_versions("s") == [1]
    assert client.get_versions("s", deleted=True) == [1, 2]
    assert client.lookup_schema("s", b, deleted=True).version == 2
    assert client.delete_version("s", 2, permanent=True) == 2
    assert client.get_versions("s", deleted=True) == [1]

    assert _code(lambda: client.delete_subject("t", permanent=True)) == (404, 40405)
    assert client.delete_subject("t") == [1]
    assert _code(lambda: client.delete_subject("t")) == (404, 40404)
    assert client.get_subjects() == ["s"]
    assert client.get_subjects(deleted=True) == ["s", "t"]
    assert client.get_subjects_by_schema_id(1) == ["s"]
    assert client.get_subjects_by_schema_id(1, deleted=True) == ["s", "t"]
    assert client.delete_subject("t", permanent=True) == [1]
    assert _code(lambda: client.get_subjects_by_schema_id(2)) == (404, 40403)


def test_client_config_mode_and_referenced_by(registry: Registry) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    client.register_schema("money", Schema(avro_record("acme.Money", "units"), "AVRO"))
    pay = json.dumps({"type": "record", "name": "Pay", "fields": [{"name": "m", "type": "acme.Money"}]})
    refs = [SchemaReference("acme.Money", "money", 1)]
    pay_id = client.register_schema("pay-value", Schema(pay, "AVRO", refs))
    assert client.get_referenced_by("money", 1) == [pay_id]
    assert client.get_referenced_by("money") == [pay_id]

    client.set_compatibility("pay-value", "BACKWARD")
    assert client.delete_config("pay-value").compatibility_level.value == "BACKWARD"
    assert _code(lambda: client.delete_config("pay-value")) == (404, 40401)
    assert client.delete_config().compatibility_level.value == "FULL_TRANSITIVE"
    client.update_mode("pay-value", "READONLY")
    assert client.delete_mode("pay-value") == "READONLY"
    assert _code(lambda: client.delete_mode("pay-value")) == (404, 40401)
