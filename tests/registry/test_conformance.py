"""What Confluent clients rely on beyond the basic API: canonical ids, data-contract fields, modes (issue #15)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.registry.conftest import Registry, always_ok, id_only
from tscontract.registry.guids import schema_guid

BAR = {
    "type": "record",
    "name": "Bar",
    "namespace": "md",
    "fields": [
        {"name": "symbol", "type": "string"},
        {"name": "close", "type": {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 6}},
    ],
}


def post(registry: Registry, path: str, body: dict) -> tuple[int, dict]:
    return registry.call("POST", path, body)


# -- one id per schema, however it is written ---------------------------------------------------------


def test_whitespace_never_makes_a_new_id(registry: Registry) -> None:
    compact = json.dumps(BAR, separators=(",", ":"))
    spaced = json.dumps(BAR, indent=4)
    first = registry.register("bars-value", compact)
    again = registry.register("bars-value", spaced)
    assert first == again and id_only(first) == (200, {"id": 1}) and first[1]["version"] == 1
    assert registry.call("GET", "/subjects/bars-value/versions") == (200, [1])
    # the stored text is the canonical one, whatever was sent; a lookup of either form finds it
    assert registry.call("GET", "/subjects/bars-value/versions/1")[1]["schema"] == compact
    assert post(registry, "/subjects/bars-value", {"schema": spaced})[1]["version"] == 1


def test_normalize_makes_member_order_and_qualified_names_one_schema(registry: Registry) -> None:
    reordered = {"fields": BAR["fields"], "namespace": "md", "name": "Bar", "type": "record"}
    qualified = {"type": "record", "name": "md.Bar", "fields": BAR["fields"]}
    without = {registry.register("a-value", json.dumps(s))[1]["id"] for s in (BAR, reordered, qualified)}
    # as Confluent stores Avro (Java Avro's toString, AvroSchemaTest.testNormalization): one schema already
    assert without == {1} and registry.call("GET", "/subjects/a-value/versions") == (200, [1])
    ids = {
        post(registry, "/subjects/b-value/versions?normalize=true", {"schema": json.dumps(s)})[1]["id"]
        for s in (BAR, reordered, qualified)
    }
    assert len(ids) == 1
    assert registry.call("GET", "/subjects/b-value/versions") == (200, [1])
    found = post(registry, "/subjects/b-value?normalize=true", {"schema": json.dumps(qualified)})
    assert found[0] == 200 and found[1]["version"] == 1


def test_field_order_is_never_normalized(registry: Registry) -> None:
    """Avro's binary encoding follows field order: swapping two fields is another schema."""
    swapped = dict(BAR, fields=list(reversed(BAR["fields"])))
    ids = [
        post(registry, "/subjects/c-value/versions?normalize=true", {"schema": json.dumps(s)})[1]["id"]
        for s in (BAR, swapped)
    ]
    assert ids[0] != ids[1]


def test_json_schema_and_protobuf_canonical_forms(registry: Registry) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "number", "minimum": 0}}, "required": ["v"]}
    shuffled = {"required": ["v"], "properties": {"v": {"minimum": 0, "type": "number"}}, "type": "object"}
    one = registry.register("j-value", json.dumps(schema, indent=2), "JSON")[1]["id"]
    assert registry.register("j-value", json.dumps(schema), "JSON")[1]["id"] == one
    normalized = [
        post(registry, "/subjects/j2-value/versions?normalize=true", {"schema": json.dumps(s), "schemaType": "JSON"})
        for s in (schema, shuffled)
    ]
    assert normalized[0][1]["id"] == normalized[1][1]["id"]

    proto = 'syntax = "proto3";\npackage md;\nmessage Bar {\n  string symbol = 1;\n  double close = 2;\n}\n'
    commented = (
        '// bars from the vendor feed\nsyntax="proto3"; package md;\n'
        "message Bar { string symbol = 1; /* ticker */ double close = 2; }"
    )
    p1 = registry.register("p-value", proto, "PROTOBUF")[1]["id"]
    assert registry.register("p-value", commented, "PROTOBUF")[1]["id"] == p1
    assert registry.call("GET", f"/schemas/ids/{p1}")[1]["schema"] == proto
    imports = [
        'syntax = "proto3";\nimport "google/protobuf/timestamp.proto";\nimport "google/protobuf/duration.proto";\n',
        'syntax = "proto3";\nimport "google/protobuf/duration.proto";\nimport "google/protobuf/timestamp.proto";\n',
    ]
    tail = "message T {\n  google.protobuf.Timestamp at = 1;\n  google.protobuf.Duration d = 2;\n}\n"
    plain = [registry.register("q-value", text + tail, "PROTOBUF")[1]["id"] for text in imports]
    assert plain[0] != plain[1]
    normal = [
        post(registry, "/subjects/q2-value/versions?normalize=true", {"schema": text + tail, "schemaType": "PROTOBUF"})[
            1
        ]["id"]
        for text in imports
    ]
    assert normal[0] == normal[1]


# -- Confluent data contracts: metadata and ruleSet ---------------------------------------------------

RULES = {
    "domainRules": [
        {
            "name": "ohlc_order",
            "kind": "CONDITION",
            "mode": "WRITE",
            "type": "CEL",
            "expr": "message.low <= message.open && message.open <= message.high",
            "doc": "low <= open <= high",
            "onFailure": "ERROR",
        }
    ]
}
METADATA = {"properties": {"owner": "market-data", "contract_version": "3.1.0"}, "tags": {"Bar.close": ["PII"]}}


def test_metadata_and_rule_set_are_stored_returned_and_part_of_the_id(registry: Registry) -> None:
    text = json.dumps(BAR, separators=(",", ":"))
    body = {"schema": text, "metadata": METADATA, "ruleSet": RULES}
    first = post(registry, "/subjects/bars-value/versions", body)
    assert first[0] == 200
    got = registry.call("GET", "/subjects/bars-value/versions/latest")[1]
    assert got["metadata"] == METADATA and got["ruleSet"] == RULES
    by_id = registry.call("GET", f"/schemas/ids/{first[1]['id']}")[1]
    assert by_id["ruleSet"] == RULES and by_id["metadata"] == METADATA
    # the same again: the same id, no new version
    assert post(registry, "/subjects/bars-value/versions", body) == first
    # a changed rule is a new version with a new id (consumers find the rules by the id)
    changed = json.loads(json.dumps(RULES))
    changed["domainRules"][0]["onFailure"] = "DLQ"
    second = post(registry, "/subjects/bars-value/versions", {"schema": text, "metadata": METADATA, "ruleSet": changed})
    assert second[0] == 200 and second[1]["id"] != first[1]["id"]
    assert registry.call("GET", "/subjects/bars-value/versions") == (200, [1, 2])
    # a lookup without metadata or rules finds the newest version holding the schema text
    assert post(registry, "/subjects/bars-value", {"schema": text})[1]["version"] == 2
    looked = post(registry, "/subjects/bars-value", {"schema": text, "metadata": METADATA, "ruleSet": RULES})
    assert looked[1]["version"] == 1


def test_malformed_rule_sets_are_refused(registry: Registry) -> None:
    text = json.dumps(BAR)
    for bad, says in [
        ({"domainRules": {"name": "r"}}, "must be a list"),
        ({"domainRulez": []}, "unknown member"),
        ({"domainRules": [{"name": 7, "mode": "WRITE", "type": "CEL"}]}, "name must be a string"),
    ]:
        status, body = post(registry, "/subjects/s-value/versions", {"schema": text, "ruleSet": bad})
        assert (status, body["error_code"]) == (422, 42201), body
        assert says in body["message"]
    # a kind or mode Confluent's enums lack is JSON that does not map onto its Rule: 400, as Jackson says it
    for key, value, enum in [("mode", "SOMETIMES", "RuleMode"), ("kind", "CHECK", "RuleKind")]:
        rule = {"name": "r", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", key: value}
        status, body = post(
            registry, "/subjects/s-value/versions", {"schema": text, "ruleSet": {"domainRules": [rule]}}
        )
        assert (status, body["error_code"]) == (400, 400), body
        assert body["message"].startswith(f'Cannot deserialize value of type `{enum}` from String "{value}"')
    status, body = post(registry, "/subjects/s-value/versions", {"schema": text, "metadata": {"properties": {"a": 1}}})
    assert (status, body["error_code"]) == (422, 42201) and "metadata.properties.a" in body["message"]


def test_the_real_confluent_client_round_trips_rules(registry: Registry) -> None:
    from confluent_kafka.schema_registry import (
        Metadata,
        MetadataProperties,
        MetadataTags,
        Rule,
        RuleKind,
        RuleMode,
        RuleSet,
        Schema,
        SchemaRegistryClient,
    )

    client = SchemaRegistryClient({"url": registry.url})
    rule = Rule(
        "ohlc_order",
        "low <= open <= high",
        RuleKind.CONDITION,
        RuleMode.WRITE,
        "CEL",
        None,
        None,
        "message.low <= message.open && message.open <= message.high",
        None,
        "ERROR",
        False,
    )
    schema = Schema(
        json.dumps(BAR),
        "AVRO",
        [],
        Metadata(MetadataTags({}), MetadataProperties({"owner": "market-data"}), set()),
        RuleSet(None, [rule]),
    )
    schema_id = client.register_schema("bars-value", schema)
    latest = client.get_latest_version("bars-value")
    assert latest.schema_id == schema_id
    assert latest.schema.rule_set.domain_rules[0].expr == rule.expr
    assert latest.schema.metadata.properties.properties == {"owner": "market-data"}


# -- modes ----------------------------------------------------------------------------------------------


def test_readonly_mode_refuses_writes_and_answers_reads(registry: Registry) -> None:
    text = json.dumps(BAR)
    assert registry.register("bars-value", text)[0] == 200
    assert registry.call("GET", "/mode") == (200, {"mode": "READWRITE"})
    assert registry.call("PUT", "/mode", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    status, body = registry.register("bars-value", json.dumps(dict(BAR, doc="v2")))
    assert (status, body["error_code"]) == (422, 42205) and "read-only" in body["message"]
    assert registry.call("DELETE", "/subjects/bars-value")[1]["error_code"] == 42205
    assert registry.call("GET", "/subjects/bars-value/versions/1")[0] == 200
    # a subject's own mode wins over the global one, and removing it brings the global one back
    assert registry.call("PUT", "/mode/other-value", {"mode": "READWRITE"}) == (200, {"mode": "READWRITE"})
    assert registry.register("other-value", text)[0] == 200
    assert registry.call("GET", "/mode/other-value") == (200, {"mode": "READWRITE"})
    assert registry.call("DELETE", "/mode/other-value") == (200, {"mode": "READWRITE"})
    assert registry.call("GET", "/mode/other-value")[1]["error_code"] == 40409
    assert registry.call("GET", "/mode/other-value?defaultToGlobal=true") == (200, {"mode": "READONLY"})
    assert registry.call("PUT", "/mode", {"mode": "SOMETIMES"})[1]["error_code"] == 42204


def test_import_mode_keeps_ids_and_versions_from_another_registry(registry: Registry) -> None:
    text = json.dumps(BAR, separators=(",", ":"))
    v2 = json.dumps(dict(BAR, doc="v2"), separators=(",", ":"))
    refused = post(registry, "/subjects/bars-value/versions", {"schema": text, "id": 70000})
    assert (refused[0], refused[1]["error_code"]) == (422, 42205)  # an explicit id needs IMPORT
    assert registry.call("PUT", "/mode/bars-value", {"mode": "IMPORT"})[0] == 200
    no_id = registry.register("bars-value", text)
    assert (no_id[0], no_id[1]["error_code"]) == (422, 42205)
    # versions arrive in any order, with gaps; ids are kept
    assert id_only(post(registry, "/subjects/bars-value/versions", {"schema": v2, "id": 70010, "version": 5})) == (
        200,
        {"id": 70010},
    )
    assert id_only(post(registry, "/subjects/bars-value/versions", {"schema": text, "id": 70000, "version": 1})) == (
        200,
        {"id": 70000},
    )
    assert post(registry, "/subjects/bars-value/versions", {"schema": text, "id": 70000, "version": 1})[0] == 200
    taken = post(registry, "/subjects/bars-value/versions", {"schema": json.dumps({"type": "string"}), "id": 70000})
    assert (taken[0], taken[1]["error_code"]) == (422, 42205)
    other = {"schema": json.dumps({"type": "int"}), "id": 1, "version": 5}
    held = post(registry, "/subjects/bars-value/versions", other)
    assert (held[0], held[1]["error_code"]) == (422, 42205)
    assert registry.call("GET", "/subjects/bars-value/versions") == (200, [1, 5])
    assert registry.call("GET", "/subjects/bars-value/versions/5")[1]["id"] == 70010
    # back to READWRITE: new ids continue after the largest imported one
    assert registry.call("DELETE", "/mode/bars-value")[0] == 200
    fresh = registry.register("new-value", json.dumps({"type": "string"}))
    assert fresh[0] == 200 and fresh[1]["id"] > 70010


def test_a_store_written_before_rule_sets_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        CREATE TABLE schemas (id INTEGER PRIMARY KEY AUTOINCREMENT, schema_type TEXT NOT NULL,
            schema_text TEXT NOT NULL, refs TEXT NOT NULL, UNIQUE (schema_type, schema_text, refs));
        CREATE TABLE subject_versions (subject TEXT NOT NULL, version INTEGER NOT NULL,
            schema_id INTEGER NOT NULL REFERENCES schemas (id), deleted INTEGER NOT NULL DEFAULT 0,
            registered_at TEXT NOT NULL, PRIMARY KEY (subject, version));
        INSERT INTO schemas (schema_type, schema_text, refs) VALUES ('AVRO', '"string"', '[]');
        INSERT INTO subject_versions VALUES ('old-value', 1, 1, 0, '2026-01-01T00:00:00.000Z');
        """
    )
    conn.commit()
    conn.close()
    reg = Registry(db, compat=always_ok)
    try:
        assert reg.call("GET", "/subjects/old-value/versions/1") == (
            200,
            {"subject": "old-value", "version": 1, "id": 1, "schema": '"string"', "guid": schema_guid('"string"', [])},
        )
        body = {"schema": '"string"', "ruleSet": RULES}
        assert id_only(post(reg, "/subjects/old-value/versions", body)) == (200, {"id": 2})
    finally:
        reg.close()


def test_empty_rule_lists_and_metadata_members_are_absent(registry: Registry) -> None:
    """confluent-kafka sends `migrationRules: []`, `sensitive: []` when it looks up a schema registered without them."""
    text = json.dumps(BAR, separators=(",", ":"))
    first = post(registry, "/subjects/bars-value/versions", {"schema": text, "ruleSet": RULES})
    padded = dict(RULES, migrationRules=[], encodingRules=[])
    again = post(
        registry, "/subjects/bars-value/versions", {"schema": text, "ruleSet": padded, "metadata": {"sensitive": []}}
    )
    assert again == first
    assert "metadata" not in registry.call("GET", "/subjects/bars-value/versions/1")[1]


def test_latest_version_with_metadata(registry: Registry) -> None:
    """GET /subjects/{s}/metadata?key=K&value=V: what a consumer with use.latest.with.metadata asks for."""
    for major, doc in (("1", "v1"), ("2", "v2"), ("1", "v1.1")):
        body = {"schema": json.dumps(dict(BAR, doc=doc)), "metadata": {"properties": {"major_version": major}}}
        assert post(registry, "/subjects/bars-value/versions", body)[0] == 200
    found = registry.call("GET", "/subjects/bars-value/metadata?key=major_version&value=1")
    assert found[0] == 200 and found[1]["version"] == 3
    assert registry.call("GET", "/subjects/bars-value/metadata?key=major_version&value=2")[1]["version"] == 2
    none = registry.call("GET", "/subjects/bars-value/metadata?key=major_version&value=3")
    assert (none[0], none[1]["error_code"]) == (404, 40403)


def test_compatibility_group_checks_only_the_same_major_version(default_store_registry: Registry) -> None:
    """Confluent's compatibilityGroup: a breaking change is a new major version, checked only against its own group."""
    reg = default_store_registry

    def version(fields: list[dict], major: str) -> dict:
        return {"schema": json.dumps(dict(BAR, fields=fields)), "metadata": {"properties": {"major_version": major}}}

    kpa = [BAR["fields"][0], {"name": "pressure_kpa", "type": "double"}]
    bar = [BAR["fields"][0], {"name": "pressure_bar", "type": "double"}]
    assert post(reg, "/subjects/p-value/versions", version(bar, "1"))[0] == 200
    assert post(reg, "/subjects/p-value/versions", version(kpa, "2"))[0] == 409  # FULL_TRANSITIVE over everything
    assert reg.call("PUT", "/config/p-value", {"compatibilityGroup": "major_version"}) == (
        200,
        {"compatibilityGroup": "major_version"},
    )
    assert reg.call("GET", "/config/p-value")[1]["compatibilityGroup"] == "major_version"
    assert post(reg, "/subjects/p-value/versions", version(kpa, "2"))[0] == 200
    # within a group the checks still hold: major 2 cannot drop pressure_kpa
    status, body = post(reg, "/subjects/p-value/versions", version(bar, "2"))
    assert status == 409 and "pressure" in body["message"], body
