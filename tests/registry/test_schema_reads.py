"""Schema reads as Confluent's SchemasResource answers them: /schemas, /schemas/ids/{id}/versions,
/subjects and /schema, /subjects/{s}/versions/{v}/referencedby, lookup with ?deleted=true."""

from __future__ import annotations

import json
import urllib.request

from tests.registry.conftest import Registry, avro_record, id_only
from tscontract.registry.guids import schema_guid

A, B, C = avro_record("A", "x"), avro_record("B", "y"), avro_record("C", "z")


def _setup(registry: Registry) -> None:
    assert id_only(registry.register("s", A)) == (200, {"id": 1})
    assert id_only(registry.register("s", B)) == (200, {"id": 2})
    assert id_only(registry.register("t", A)) == (200, {"id": 1})
    assert id_only(registry.register("u", C)) == (200, {"id": 3})


def test_versions_and_subjects_of_an_id(registry: Registry) -> None:
    _setup(registry)
    both = [{"subject": "s", "version": 1}, {"subject": "t", "version": 1}]
    assert registry.call("GET", "/schemas/ids/1/versions") == (200, both)
    assert registry.call("GET", "/schemas/ids/1/subjects") == (200, ["s", "t"])
    assert registry.call("GET", "/schemas/ids/1/subjects?offset=1") == (200, ["t"])
    assert registry.call("GET", "/schemas/ids/1/versions?limit=1") == (200, both[:1])
    assert registry.call("DELETE", "/subjects/t")[0] == 200
    assert registry.call("GET", "/schemas/ids/1/versions") == (200, both[:1])
    assert registry.call("GET", "/schemas/ids/1/subjects") == (200, ["s"])
    assert registry.call("GET", "/schemas/ids/1/versions?deleted=true") == (200, both)
    assert registry.call("GET", "/schemas/ids/1/subjects?deleted=true") == (200, ["s", "t"])
    assert registry.call("DELETE", "/subjects/u")[0] == 200
    assert registry.call("GET", "/schemas/ids/3/subjects") == (200, [])  # held, but only soft-deleted
    assert registry.call("DELETE", "/subjects/u?permanent=true")[0] == 200
    not_found = {"error_code": 40403, "message": "Schema not found"}
    for path in ("/schemas/ids/3/versions", "/schemas/ids/3/subjects", "/schemas/ids/99/versions"):
        assert registry.call("GET", path) == (404, not_found), path
    assert registry.call("GET", "/schemas/ids/x/subjects")[1]["error_code"] == 40403


def test_raw_schema_of_an_id(registry: Registry) -> None:
    _setup(registry)
    proto = 'syntax = "proto3";\nmessage M {\n  string a = 1;\n}\n'
    assert id_only(registry.register("p", proto, "PROTOBUF")) == (200, {"id": 4})
    for schema_id, text in ((1, A), (4, proto)):
        with urllib.request.urlopen(f"{registry.url}/schemas/ids/{schema_id}/schema", timeout=30) as response:
            assert response.status == 200
            assert response.read().decode() == text  # the stored text itself, not a JSON document about it
    assert registry.call("GET", "/schemas/ids/99/schema") == (
        404,
        {"error_code": 40403, "message": "Schema 99 not found"},
    )
    assert registry.call("GET", "/schemas/ids/0/schema")[1]["error_code"] == 40403


def test_get_schemas(registry: Registry) -> None:
    _setup(registry)

    def entry(subject: str, version: int, schema_id: int, text: str) -> dict:
        return {"subject": subject, "version": version, "id": schema_id, "schema": text, "guid": schema_guid(text, [])}

    every = [entry("s", 1, 1, A), entry("s", 2, 2, B), entry("t", 1, 1, A), entry("u", 1, 3, C)]
    assert registry.call("GET", "/schemas") == (200, every)
    assert registry.call("GET", "/schemas?subjectPrefix=s") == (200, every[:2])
    assert registry.call("GET", "/schemas?subjectPrefix=:*:") == (200, every)
    assert registry.call("GET", "/schemas?latestOnly=true") == (200, every[1:])
    assert registry.call("GET", "/schemas?offset=1&limit=2") == (200, every[1:3])
    assert registry.call("DELETE", "/subjects/s/versions/2")[0] == 200
    assert registry.call("GET", "/schemas?subjectPrefix=s") == (200, every[:1])
    assert registry.call("GET", "/schemas?subjectPrefix=s&latestOnly=true") == (200, every[:1])
    assert registry.call("GET", "/schemas?subjectPrefix=s&deleted=true") == (200, every[:2])
    assert registry.call("GET", "/schemas?subjectPrefix=s&deleted=true&latestOnly=true") == (200, every[1:2])
    assert registry.call("GET", "/schemas?subjectPrefix=zzz") == (200, [])
    assert registry.call("GET", "/schemas?ruleType=CEL") == (200, [])


def test_referenced_by(registry: Registry) -> None:
    assert registry.register("money", avro_record("acme.Money", "units"))[0] == 200
    pay = json.dumps({"type": "record", "name": "Pay", "fields": [{"name": "m", "type": "acme.Money"}]})
    body = {"schema": pay, "references": [{"name": "acme.Money", "subject": "money", "version": 1}]}
    assert id_only(registry.call("POST", "/subjects/pay-value/versions", body)) == (200, {"id": 2})
    assert id_only(registry.call("POST", "/subjects/other-value/versions", body)) == (200, {"id": 2})
    assert registry.call("GET", "/subjects/money/versions/1/referencedby") == (200, [2])
    assert registry.call("GET", "/subjects/money/versions/latest/referencedby") == (200, [2])
    assert registry.call("GET", "/subjects/pay-value/versions/1/referencedby") == (200, [])
    assert registry.call("DELETE", "/subjects/pay-value")[0] == 200
    assert registry.call("DELETE", "/subjects/other-value")[0] == 200
    assert registry.call("GET", "/subjects/money/versions/1/referencedby") == (200, [])
    assert registry.call("GET", "/subjects/money/versions/1/referencedby?deleted=true") == (200, [2])
    assert registry.call("GET", "/subjects/nope/versions/1/referencedby")[1]["error_code"] == 40401
    assert registry.call("GET", "/subjects/money/versions/7/referencedby")[1]["error_code"] == 40402
    assert registry.call("GET", "/subjects/money/versions/x/referencedby")[1]["error_code"] == 42202


def test_lookup_with_deleted(registry: Registry) -> None:
    _setup(registry)
    assert registry.call("DELETE", "/subjects/s/versions/1")[0] == 200
    assert registry.call("POST", "/subjects/s", {"schema": A})[1]["error_code"] == 40403
    status, found = registry.call("POST", "/subjects/s?deleted=true", {"schema": A})
    assert (status, found["version"], found["id"]) == (200, 1, 1)
    assert registry.call("DELETE", "/subjects/s")[0] == 200
    assert registry.call("POST", "/subjects/s", {"schema": B})[1]["error_code"] == 40401
    assert registry.call("POST", "/subjects/s?deleted=true", {"schema": B})[1]["version"] == 2
    assert registry.call("POST", "/subjects/s?deleted=true", {"schema": C})[1]["error_code"] == 40403
    assert registry.call("POST", "/subjects/nope?deleted=true", {"schema": C})[1]["error_code"] == 40401


def test_raw_schema_of_a_version(registry: Registry) -> None:
    _setup(registry)
    proto = 'syntax = "proto3";\nmessage M {\n  string a = 1;\n}\n'
    assert registry.register("p", proto, "PROTOBUF")[0] == 200
    for path, text in (("/subjects/s/versions/2/schema", B), ("/subjects/p/versions/latest/schema", proto)):
        with urllib.request.urlopen(registry.url + path, timeout=30) as response:
            assert response.read().decode() == text  # as stored, byte for byte
    assert registry.call("DELETE", "/subjects/s/versions/2")[0] == 200
    assert registry.call("GET", "/subjects/s/versions/2/schema")[1]["error_code"] == 40402
    assert registry.call("GET", "/subjects/s/versions/2/schema?deleted=true") == (200, json.loads(B))
