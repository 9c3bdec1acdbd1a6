"""Confluent's exact answers where a client reads more than a status (#28), over raw HTTP, on both stores.

Each test names the Confluent source it follows: ``SubjectVersionsResource.register`` (the
``RegisterSchemaResponse``), ``SubjectsResource.getLatestWithMetadata``, the lookup cache after a
permanent delete (``InMemoryCache.schemaTombstoned``), ``Errors`` (message texts) and Jersey's
resource matching (415 before 406).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.registry.conftest import CT, Registry, always_ok, avro_record
from tscontract.evolution.proto_compat import compile_proto

A1 = avro_record("A", "x")
A2 = avro_record("A", "x", "y")
PROTO = 'syntax = "proto3";\npackage acme;\nmessage Reading {\n  string meter = 1;\n}\n'


@pytest.fixture(params=["sqlite", "postgres"])
def strict_registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Registry]:
    """The registry with ``--strict``: Confluent's answer even where tscontract deliberately differs."""
    db = tmp_path / "strict.sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_db")
    reg = Registry(db, compat=always_ok, strict=True)
    yield reg
    reg.close()


def descriptor(text: str) -> str:
    """``text`` as confluent-kafka's ProtobufSerializer sends it: a base64 ``FileDescriptorProto``."""
    (file,) = [f for f in compile_proto(text).file if f.name == "schema.proto"]
    return base64.b64encode(file.SerializeToString()).decode()


def guid_of(answer: dict) -> str:
    guid = answer.pop("guid")
    assert str(uuid.UUID(guid)) == guid
    return guid


# -- POST /subjects/{s}/versions: RegisterSchemaResponse -------------------------------------------


def test_register_answers_confluents_register_schema_response(registry: Registry) -> None:
    """``new RegisterSchemaResponse(result)``: id, version, guid, schemaType (AVRO too), references,
    metadata, ruleSet (empty ones left out), schema as stored; no subject."""
    status, first = registry.register("a-value", json.dumps(json.loads(A1), indent=2))
    guid = guid_of(first)
    assert (status, first) == (200, {"id": 1, "version": 1, "schemaType": "AVRO", "schema": A1})
    assert registry.call("GET", "/subjects/a-value/versions/1")[1]["guid"] == guid
    metadata = {"properties": {"owner": "billing"}}
    body = {"schema": A2, "metadata": metadata, "references": []}
    status, second = registry.call("POST", "/subjects/a-value/versions", body)
    guid_of(second)
    assert (status, second) == (
        200,
        {"id": 2, "version": 2, "schemaType": "AVRO", "metadata": metadata, "schema": A2},
    )
    # a schema the subject holds answers the version holding it, not a new one
    again = registry.register("a-value", A1)[1]
    assert (again["id"], again["version"], guid_of(again)) == (1, 1, guid)
    # the same schema under another subject: the same id, that subject's version
    other = registry.register("b-value", A2)[1]
    assert (other["id"], other["version"]) == (3, 1)  # no metadata: another schema


def test_register_answers_references_and_the_import_version(registry: Registry) -> None:
    address = avro_record("Address", "city")
    customer = json.dumps(
        {"type": "record", "name": "Customer", "fields": [{"name": "home", "type": "Address"}]},
        separators=(",", ":"),
    )
    registry.register("address", address)
    reference = {"name": "Address", "subject": "address", "version": 1}
    body = {"schema": customer, "references": [reference]}
    status, answer = registry.call("POST", "/subjects/customer/versions", body)
    assert (status, answer["version"], answer["references"], answer["schema"]) == (200, 1, [reference], customer)
    assert registry.call("PUT", "/mode/imported", {"mode": "IMPORT"})[0] == 200
    imported = registry.call("POST", "/subjects/imported/versions", {"schema": A1, "id": 500, "version": 7})[1]
    assert (imported["id"], imported["version"], imported["schema"]) == (500, 7, A1)


def test_register_a_protobuf_descriptor_answers_no_schema_unless_strict(
    registry: Registry, strict_registry: Registry
) -> None:
    """Deliberate difference: confluent-kafka caches a registration's answer by id whatever format a
    later read asks; the ``.proto`` text Confluent answers would reach a ProtobufDeserializer sharing
    the client, which wants the descriptor. ``--strict`` answers as Confluent."""
    body = {"schema": descriptor(PROTO), "schemaType": "PROTOBUF"}
    status, answer = registry.call("POST", "/subjects/p-value/versions", body)
    assert (status, answer["id"], answer["version"], answer["schemaType"]) == (200, 1, 1, "PROTOBUF")
    assert "schema" not in answer
    stored = registry.call("GET", "/subjects/p-value/versions/1")[1]["schema"]
    # the .proto text sent as text answers it, and format=serialized the descriptor
    assert registry.call("POST", "/subjects/p-value/versions", {"schema": stored, "schemaType": "PROTOBUF"})[1][
        "schema"
    ] == (stored)
    serialized = registry.call("POST", "/subjects/p-value/versions?format=serialized", body)[1]["schema"]
    assert serialized == registry.call("GET", "/schemas/ids/1?format=serialized")[1]["schema"]
    strict = strict_registry.call("POST", "/subjects/p-value/versions", body)[1]
    assert (strict["id"], strict["schema"]) == (1, stored)


# -- GET /subjects/{s}/metadata ---------------------------------------------------------------------


def test_latest_with_metadata_deleted(registry: Registry) -> None:
    """``getLatestWithMetadata(subject, metadata, lookupDeletedSchema)``: ``deleted=true`` reads
    soft-deleted versions too; 40401 when the subject has no version to read, else 40403."""
    for text, major in ((A1, "1"), (A2, "2")):
        body = {"schema": text, "metadata": {"properties": {"major": major}}}
        assert registry.call("POST", "/subjects/a-value/versions", body)[0] == 200
    assert registry.call("DELETE", "/subjects/a-value/versions/2") == (200, 2)
    missing = registry.call("GET", "/subjects/a-value/metadata?key=major&value=2")
    assert missing == (404, {"error_code": 40403, "message": "Schema not found"})
    status, found = registry.call("GET", "/subjects/a-value/metadata?key=major&value=2&deleted=true")
    assert (status, found["version"], found["id"]) == (200, 2, 2)
    assert registry.call("DELETE", "/subjects/a-value") == (200, [1])
    assert registry.call("GET", "/subjects/a-value/metadata?key=major&value=1")[1]["error_code"] == 40401
    found = registry.call("GET", "/subjects/a-value/metadata?key=major&value=1&deleted=true")[1]
    assert (found["subject"], found["version"]) == ("a-value", 1)
    # keys and values pair up to the shorter list, as Confluent reads them
    assert registry.call("GET", "/subjects/a-value/metadata?key=major&value=1&key=owner&deleted=true")[0] == 200


def test_latest_with_metadata_needs_properties(registry: Registry) -> None:
    """A version without metadata properties never matches, not even an empty query."""
    registry.register("a-value", A1)
    assert registry.call("GET", "/subjects/a-value/metadata")[1]["error_code"] == 40403
    body = {"schema": A2, "metadata": {"properties": {"major": "2"}}}
    registry.call("POST", "/subjects/a-value/versions", body)
    assert registry.call("GET", "/subjects/a-value/metadata")[1]["version"] == 2


# -- a permanently deleted schema -------------------------------------------------------------------


def test_schema_of_a_permanently_deleted_version_is_gone(registry: Registry) -> None:
    """Confluent tombstones the version; the id then reaches no version and answers 40403, by id and
    by guid, and the same schema registered again gets a new id (ids are never reused)."""
    registry.register("a-value", A1)
    guid = registry.register("a-value", A2)[1]["guid"]
    registry.register("b-value", A1)
    assert registry.call("GET", "/schemas/ids/2")[0] == 200  # read once: the registry caches it
    assert registry.call("GET", f"/schemas/guids/{guid}")[0] == 200
    assert registry.call("DELETE", "/subjects/a-value/versions/2") == (200, 2)
    assert registry.call("GET", "/schemas/ids/2")[0] == 200  # soft-deleted: still readable by id
    assert registry.call("DELETE", "/subjects/a-value/versions/2?permanent=true") == (200, 2)
    gone = (404, {"error_code": 40403, "message": "Schema 2 not found"})
    assert registry.call("GET", "/schemas/ids/2") == gone
    assert registry.call("GET", "/schemas/ids/2/versions?deleted=true")[1]["error_code"] == 40403
    assert registry.call("GET", f"/schemas/guids/{guid}")[1]["error_code"] == 40403
    assert registry.call("GET", f"/schemas/guids/{guid}/ids") == (200, [])
    # a schema another subject still holds stays
    assert registry.call("DELETE", "/subjects/a-value") == (200, [1])
    assert registry.call("DELETE", "/subjects/a-value?permanent=true") == (200, [1])
    assert registry.call("GET", "/schemas/ids/1")[1]["schema"] == A1
    # registered again: a new id, and its guid finds it
    again = registry.register("a-value", A2)[1]
    assert (again["id"], again["version"], again["guid"]) == (3, 1, guid)
    assert registry.call("GET", f"/schemas/guids/{guid}")[1]["schema"] == A2
    assert registry.call("GET", f"/schemas/guids/{guid}/ids") == (200, [{"context": ".", "id": 3}])


def test_permanent_subject_delete_drops_its_schemas(registry: Registry) -> None:
    registry.register("a-value", A1)
    registry.call("DELETE", "/subjects/a-value")
    assert registry.call("DELETE", "/subjects/a-value?permanent=true") == (200, [1])
    assert registry.call("GET", "/schemas/ids/1")[1]["error_code"] == 40403
    assert registry.call("GET", "/schemas") == (200, [])
    assert registry.register("b-value", A1)[1]["id"] == 2


# -- error texts and the order of refusals ----------------------------------------------------------


def test_version_not_found_text_is_confluents(registry: Registry) -> None:
    """``Errors.VERSION_NOT_FOUND_MESSAGE_FORMAT``: "Version %s not found." (no subject)."""
    registry.register("a-value", A1)
    assert registry.call("GET", "/subjects/a-value/versions/9") == (
        404,
        {"error_code": 40402, "message": "Version 9 not found."},
    )
    registry.call("DELETE", "/subjects/a-value/versions/1")
    assert registry.call("GET", "/subjects/a-value/versions/latest?deleted=true")[0] == 200
    assert registry.call("DELETE", "/subjects/a-value/versions/3")[1] == {
        "error_code": 40402,
        "message": "Version 3 not found.",
    }


def test_unsupported_body_type_is_refused_before_an_unacceptable_accept(registry: Registry) -> None:
    """Jersey matches the path, the method, then the body's type (415), then ``Accept`` (406)."""
    import urllib.error
    import urllib.request

    def send(content_type: str, accept: str) -> tuple[int, dict]:
        data = json.dumps({"schema": A1}).encode()
        request = urllib.request.Request(registry.url + "/subjects/a/versions", data=data, method="POST")
        request.add_header("Content-Type", content_type)
        request.add_header("Accept", accept)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    unsupported = (415, {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"})
    assert send("text/plain", "text/html") == unsupported
    assert send("text/plain", CT) == unsupported
    assert send(CT, "text/html") == (406, {"error_code": 406, "message": "HTTP 406 Not Acceptable"})
    assert registry.call("GET", "/subjects") == (200, [])


# -- Avro's canonical form: Schema.toString() ------------------------------------------------------

# Confluent's AvroSchemaTest.testNormalizationPreservesMetadataForPrimitiveTypes: canonicalString()
ENVELOPE = {
    "connect.name": "some.scope.Envelope",
    "fields": [
        {
            "default": None,
            "name": "before",
            "type": [
                "null",
                {
                    "connect.name": "some.scope.Value",
                    "fields": [
                        {
                            "name": "created_at",
                            "type": {
                                "connect.name": "io.debezium.time.Timestamp",
                                "connect.version": 1,
                                "type": "long",
                            },
                        },
                        {"name": "normal_long", "type": "long"},
                    ],
                    "name": "Value",
                    "type": "record",
                },
            ],
        },
        {"default": None, "name": "after", "type": ["null", "Value"]},
    ],
    "name": "Envelope",
    "namespace": "some.scope",
    "type": "record",
}
ENVELOPE_CANONICAL = (
    '{"type":"record","name":"Envelope","namespace":"some.scope","fields":[{"name":"before","type":["null",'
    '{"type":"record","name":"Value","fields":[{"name":"created_at","type":{"type":"long","connect.name":'
    '"io.debezium.time.Timestamp","connect.version":1}},{"name":"normal_long","type":"long"}],"connect.name":'
    '"some.scope.Value"}],"default":null},{"name":"after","type":["null","Value"],"default":null}],'
    '"connect.name":"some.scope.Envelope"}'
)


def test_avro_is_stored_as_avros_to_string(registry: Registry) -> None:
    """``AvroSchema.canonicalString()`` is Java Avro's ``toString``: attributes in Avro's order, a
    nested type's redundant namespace left out, properties after, without ``normalize``."""
    assert registry.register("env-value", json.dumps(ENVELOPE))[1]["schema"] == ENVELOPE_CANONICAL
    assert registry.call("GET", "/schemas/ids/1/schema") == (200, json.loads(ENVELOPE_CANONICAL))
    # the same schema written another way: the same id, no new version
    qualified = json.loads(json.dumps(ENVELOPE))
    qualified.pop("namespace")
    qualified["name"] = "some.scope.Envelope"
    qualified["fields"][1]["type"] = ["null", "some.scope.Value"]
    qualified["fields"][0]["order"] = "ascending"
    again = registry.register("env-value", json.dumps(dict(reversed(list(qualified.items())))))[1]
    assert (again["id"], again["version"], again["schema"]) == (1, 1, ENVELOPE_CANONICAL)
    found = registry.call("POST", "/subjects/env-value", {"schema": json.dumps(qualified)})[1]
    assert (found["id"], found["version"]) == (1, 1)


def test_avro_texts_stored_before_avros_order_are_still_found(tmp_path: Path) -> None:
    """A store written before the registry wrote Avro's order holds the text as sent (compact): a
    lookup or a re-registration of that text finds it, no new version."""
    import sqlite3

    reg = Registry(tmp_path / "old.sqlite", compat=always_ok)
    try:
        reg.register("env-value", A1)
    finally:
        reg.close()
    old_form = json.dumps(ENVELOPE, separators=(",", ":"))
    with sqlite3.connect(tmp_path / "old.sqlite") as con:
        con.execute("UPDATE schemas SET schema_text = ?", (old_form,))
    reg = Registry(tmp_path / "old.sqlite", compat=always_ok)
    try:
        assert reg.register("env-value", json.dumps(ENVELOPE, indent=2))[1]["id"] == 1
        assert reg.call("POST", "/subjects/env-value", {"schema": old_form})[1]["version"] == 1
        assert reg.call("GET", "/subjects/env-value/versions") == (200, [1])
    finally:
        reg.close()


def test_a_store_with_one_id_per_schema_is_migrated_for_import(tmp_path: Path) -> None:
    """The ``schemas`` table of an earlier version held each schema once (UNIQUE): rebuilt on open, so
    IMPORT can keep a second id; the id sequence survives (a permanently deleted largest id is not reused)."""
    import sqlite3

    db = tmp_path / "unique.sqlite"
    with sqlite3.connect(db) as con:
        con.executescript(
            """
            CREATE TABLE schemas (id INTEGER PRIMARY KEY AUTOINCREMENT, schema_type TEXT NOT NULL,
                schema_text TEXT NOT NULL, refs TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '',
                rule_set TEXT NOT NULL DEFAULT '', UNIQUE (schema_type, schema_text, refs, metadata, rule_set));
            CREATE TABLE subject_versions (subject TEXT NOT NULL, version INTEGER NOT NULL,
                schema_id INTEGER NOT NULL REFERENCES schemas (id), deleted INTEGER NOT NULL DEFAULT 0,
                registered_at TEXT NOT NULL, PRIMARY KEY (subject, version));
            INSERT INTO schemas (schema_type, schema_text, refs) VALUES ('AVRO', '"string"', '[]');
            INSERT INTO schemas (schema_type, schema_text, refs) VALUES ('AVRO', '"int"', '[]');
            DELETE FROM schemas WHERE id = 2;
            INSERT INTO subject_versions VALUES ('old-value', 1, 1, 0, '2026-01-01T00:00:00.000Z');
            """
        )
    reg = Registry(db, compat=always_ok)
    try:
        assert reg.call("GET", "/schemas/ids/1")[1]["schema"] == '"string"'
        assert reg.register("next", '"long"')[1]["id"] == 3  # 2 was given once: never again
        assert reg.call("PUT", "/mode/copy", {"mode": "IMPORT"})[0] == 200
        imported = reg.call("POST", "/subjects/copy/versions", {"schema": '"string"', "id": 50, "version": 1})
        assert (imported[0], imported[1]["id"]) == (200, 50)
        assert reg.register("later", '"bytes"')[1]["id"] == 51
    finally:
        reg.close()
    with sqlite3.connect(db) as con:
        (table,) = con.execute("SELECT sql FROM sqlite_master WHERE name = 'schemas'").fetchone()
    assert "UNIQUE" not in table.upper()


def test_registering_again_tombstones_the_soft_deleted_version_of_the_same_id(registry: Registry) -> None:
    """``KafkaSchemaRegistry.register``: a soft-deleted earlier version of the subject holding the id
    the new version gets is tombstoned (``RestApiTest.testDeleteSchemaVersionPermanent``'s re-register)."""
    registry.register("a-value", A1)
    registry.register("a-value", A2)
    assert registry.call("DELETE", "/subjects/a-value/versions/1") == (200, 1)
    again = registry.register("a-value", A1)[1]
    assert (again["id"], again["version"]) == (1, 3)
    assert registry.call("GET", "/subjects/a-value/versions?deleted=true") == (200, [2, 3])
    assert registry.call("GET", "/subjects/a-value/versions/1?deleted=true")[1]["error_code"] == 40402
