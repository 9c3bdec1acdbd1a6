"""READONLY and IMPORT as Confluent's RestApiModeTest and KafkaSchemaRegistry assert them, on both stores.

* a schema the subject already holds answers its id in any mode (testRegisterSchemaWithNoIdAfterImport:
  "auto-registering clients do not fail when SR is in import mode and the schema already exists");
* READONLY refuses a new schema with 422/42205 (testReadOnlyMode);
* moving to IMPORT needs no live subject in scope unless ``?force=true`` (testInvalidImportMode),
  for the global mode and a subject's; the soft-deleted versions are then removed for good, so an
  import can take their numbers (testRegisterSchemaWithSameIdAfterImport).
"""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from tests.registry.conftest import Registry, avro_record, id_only

V1, V2 = avro_record("T", "a"), avro_record("T", "a", "b")


def _post(registry: Registry, subject: str, body: dict[str, Any]) -> tuple[int, Any]:
    return registry.call("POST", f"/subjects/{subject}/versions", body)


def test_readonly_answers_a_held_schema_and_refuses_a_new_one(registry: Registry) -> None:
    assert id_only(registry.register("s", V1)) == (200, {"id": 1})
    for mode in ("READONLY", "READONLY_OVERRIDE"):
        assert registry.call("PUT", "/mode", {"mode": mode}) == (200, {"mode": mode})
        assert id_only(registry.register("s", V1)) == (200, {"id": 1})
        assert id_only(registry.register("s", json.dumps(json.loads(V1), indent=2))) == (
            200,
            {"id": 1},
        )  # same canonical
        status, body = registry.register("s", V2)
        assert (status, body["error_code"]) == (422, 42205) and "read-only" in body["message"]
        status, body = registry.register("other", V1)  # held by another subject only: a new version
        assert (status, body["error_code"]) == (422, 42205)
    client = SchemaRegistryClient({"url": registry.url})
    assert client.register_schema("s", Schema(V1, "AVRO")) == 1
    assert registry.call("GET", "/subjects/s/versions") == (200, [1])


def test_import_answers_a_held_schema_without_an_id(registry: Registry) -> None:
    assert registry.call("PUT", "/mode", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert id_only(_post(registry, "s", {"schema": V1, "id": 7, "version": 1})) == (200, {"id": 7})
    assert id_only(registry.register("s", V1)) == (200, {"id": 7})  # as an auto-registering serializer sends it
    assert id_only(_post(registry, "s", {"schema": V1, "id": 7})) == (200, {"id": 7})
    assert id_only(_post(registry, "s", {"schema": V1, "version": 1})) == (200, {"id": 7})
    client = SchemaRegistryClient({"url": registry.url})
    assert client.register_schema("s", Schema(V1, "AVRO")) == 7
    status, body = registry.register("s", V2)  # a new schema still needs its id in IMPORT
    assert (status, body["error_code"]) == (422, 42205)
    # an id that differs from the held one is an import: as Confluent's, the same schema under a second id
    # (RestApiModeTest.testImportModeWithSameSchemaDifferentId)
    status, body = _post(registry, "s", {"schema": V1, "id": 8, "version": 2})
    assert (status, body["id"], body["version"]) == (200, 8, 2)
    assert registry.call("GET", "/subjects/s/versions") == (200, [1, 2])
    assert registry.call("GET", "/subjects/s/versions/1")[1]["id"] == 7
    assert _post(registry, "t", {"schema": V1, "id": 9, "version": 1})[1]["id"] == 9  # another subject too
    found = registry.call("POST", "/subjects/s", {"schema": V1})[1]
    assert (found["id"], found["version"]) == (8, 2)  # the newest version holding it
    ids = registry.call("GET", f"/schemas/guids/{found['guid']}/ids")
    assert ids == (200, [{"context": ".", "id": 7}, {"context": ".", "id": 8}, {"context": ".", "id": 9}])


def test_import_needs_force_while_live_subjects_exist(registry: Registry) -> None:
    assert id_only(registry.register("s", V1)) == (200, {"id": 1})
    for path in ("/mode", "/mode/s"):
        status, body = registry.call("PUT", path, {"mode": "IMPORT"})
        assert (status, body["error_code"]) == (422, 42205), path
        assert "existing subjects" in body["message"]
    assert registry.call("GET", "/mode") == (200, {"mode": "READWRITE"})
    # another subject's mode is not held back by s
    assert registry.call("PUT", "/mode/t", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert registry.call("PUT", "/mode/s?force=true", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert registry.call("PUT", "/mode?force=true", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert registry.call("PUT", "/mode", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})  # already IMPORT
    assert id_only(registry.register("s", V1)) == (200, {"id": 1})
    assert registry.call("GET", "/subjects/s/versions/1")[1]["id"] == 1  # force keeps what is there
    client = SchemaRegistryClient({"url": registry.url})
    assert client.update_global_mode("READWRITE") == "READWRITE"
    assert client.delete_mode("s") == "IMPORT"
    try:
        client.update_mode("s", "IMPORT")
        raise AssertionError("IMPORT without force over a live subject must be refused")
    except SchemaRegistryError as exc:
        assert (exc.http_status_code, exc.error_code) == (422, 42205)
    assert client.update_mode("s", "IMPORT", force=True) == "IMPORT"
    assert client.update_global_mode("IMPORT", force=True) == "IMPORT"


def test_import_after_a_soft_delete_reuses_the_numbers(registry: Registry) -> None:
    assert id_only(registry.register("s", V1)) == (200, {"id": 1})
    assert registry.call("DELETE", "/subjects/s") == (200, [1])
    assert registry.call("PUT", "/mode", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    # the soft-deleted version is gone for good
    status, body = registry.call("GET", "/subjects/s/versions?deleted=true")
    assert (status, body["error_code"]) == (404, 40401)
    assert id_only(_post(registry, "s", {"schema": V1, "id": 1, "version": 1})) == (200, {"id": 1})
    assert registry.call("GET", "/subjects/s/versions/1")[1]["schema"] == V1
    # deleted again while in IMPORT: the same import brings the version back
    assert registry.call("DELETE", "/subjects/s") == (200, [1])
    assert id_only(_post(registry, "s", {"schema": V1, "id": 1, "version": 1})) == (200, {"id": 1})
    assert registry.call("GET", "/subjects/s/versions") == (200, [1])
    assert id_only(_post(registry, "s", {"schema": V2, "id": 2, "version": 2})) == (200, {"id": 2})
    assert registry.call("GET", "/subjects/s/versions/2")[1]["schema"] == V2
