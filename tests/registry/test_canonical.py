"""One schema, one id: the canonical form registration, lookup and the compatibility test share.

* Avro: ``{"type": "int"}`` is ``"int"`` (Avro's parser prints a primitive with no other attribute
  as its name; Confluent stores that canonical string), at the top and nested, without
  ``normalize``; with a logical type it stays an object.
* ``normalize=true`` sorts nested objects: JSON Schema ``properties`` at every depth; Avro objects
  inside custom properties and defaults, and aliases (Confluent's AvroSchemaUtils.toNormalizedString).
* A store written before the Avro rule still answers lookups and re-registrations of its schemas.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from tests.registry.conftest import Registry, always_ok, id_only
from tscontract.registry.canonical import canonical_text


def _compact(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"))


def _record(field_type: Any, **extra: Any) -> str:
    return _compact({"type": "record", "name": "R", "fields": [{"name": "a", "type": field_type}], **extra})


def test_an_avro_primitive_object_is_the_primitive(registry: Registry) -> None:
    assert id_only(registry.register("p", _compact({"type": "int"}))) == (200, {"id": 1})
    assert id_only(registry.register("p", '"int"')) == (200, {"id": 1})
    assert registry.call("GET", "/subjects/p/versions") == (200, [1])
    assert registry.call("GET", "/subjects/p/versions/1")[1]["schema"] == '"int"'
    assert id_only(registry.register("q", '"int"')) == (200, {"id": 1})  # the same id under another subject
    found = registry.call("POST", "/subjects/p", {"schema": _compact({"type": "int"})})
    assert found[0] == 200 and (found[1]["id"], found[1]["version"]) == (1, 1)

    nested = _record({"type": "array", "items": {"type": "long"}})
    plain = _record({"type": "array", "items": "long"})
    assert id_only(registry.register("r", nested)) == (200, {"id": 2})
    assert id_only(registry.register("r", plain)) == (200, {"id": 2})
    assert id_only(registry.register("r", _record(["null", {"type": "string"}]))) == (200, {"id": 3})
    status, body = registry.call("POST", "/subjects/r", {"schema": _record(["null", "string"])})
    assert (status, body["id"]) == (200, 3)
    verbose = "/compatibility/subjects/r/versions/latest?verbose=true"
    assert registry.call("POST", verbose, {"schema": _record(["null", {"type": "string"}])}) == (
        200,
        {"is_compatible": True, "messages": []},
    )
    # a logical type (or any other attribute) keeps the object: another schema
    assert id_only(registry.register("d", _compact({"type": "int", "logicalType": "date"}))) == (200, {"id": 4})
    client = SchemaRegistryClient({"url": registry.url})
    assert client.register_schema("p", Schema(_compact({"type": "int"}), "AVRO")) == 1
    assert client.lookup_schema("p", Schema('"int"', "AVRO")).schema_id == 1


def test_normalize_sorts_nested_json_schema_properties(registry: Registry) -> None:
    one = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"properties": {"y": {}, "x": {}}}}}
    other = {"properties": {"a": {"properties": {"x": {}, "y": {}}}, "b": {"type": "string"}}, "type": "object"}
    body = {"schema": _compact(one), "schemaType": "JSON"}
    assert id_only(registry.call("POST", "/subjects/j/versions?normalize=true", body)) == (200, {"id": 1})
    again = {"schema": _compact(other), "schemaType": "JSON"}
    assert id_only(registry.call("POST", "/subjects/j/versions?normalize=true", again)) == (200, {"id": 1})
    status, found = registry.call("POST", "/subjects/j?normalize=true", again)
    assert (status, found["id"]) == (200, 1)
    stored = json.loads(found["schema"])
    assert list(stored) == ["properties", "type"] and list(stored["properties"]["a"]["properties"]) == ["x", "y"]
    # without normalize the member order is kept, as in Confluent: another schema
    status, answer = registry.call("POST", "/subjects/j", body)
    assert (status, answer["error_code"]) == (404, 40403)


def test_normalize_sorts_avro_custom_properties_defaults_and_aliases(registry: Registry) -> None:
    one = _record("string", aliases=["Z", "A"], props={"b": 1, "a": {"d": 2, "c": 3}})
    other = _record("string", props={"a": {"c": 3, "d": 2}, "b": 1}, aliases=["A", "Z"])
    assert id_only(registry.call("POST", "/subjects/n/versions?normalize=true", {"schema": one})) == (200, {"id": 1})
    assert id_only(registry.call("POST", "/subjects/n/versions?normalize=true", {"schema": other})) == (200, {"id": 1})

    def with_default(default: dict[str, int]) -> str:
        field = {"name": "m", "type": {"type": "map", "values": "int"}, "default": default}
        return _compact({"type": "record", "name": "M", "fields": [field]})

    field_default, swapped = with_default({"y": 1, "x": 2}), with_default({"x": 2, "y": 1})
    assert canonical_text("AVRO", field_default, True) == canonical_text("AVRO", swapped, True)
    assert canonical_text("AVRO", field_default) != canonical_text("AVRO", swapped)


def test_a_store_written_before_the_primitive_rule_still_answers(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    old_form = _record({"type": "string"})
    reg = Registry(db, compat=always_ok)
    try:
        assert id_only(reg.register("s", old_form)) == (200, {"id": 1})
        with sqlite3.connect(db) as conn:  # as an earlier release stored it
            conn.execute("UPDATE schemas SET schema_text = ? WHERE id = 1", (old_form,))
        status, found = reg.call("POST", "/subjects/s", {"schema": old_form})
        assert (status, found["id"], found["version"]) == (200, 1, 1)
        status, found = reg.call("POST", "/subjects/s", {"schema": _record("string")})
        assert (status, found["error_code"]) == (404, 40403)  # the old store never held the collapsed text
        assert id_only(reg.register("s", old_form)) == (200, {"id": 1})
        assert reg.call("GET", "/subjects/s/versions") == (200, [1])
        assert reg.call("PUT", "/mode/s", {"mode": "READONLY"})[0] == 200
        assert id_only(reg.register("s", old_form)) == (200, {"id": 1})
    finally:
        reg.close()
