"""``GET /schemas/guids/{guid}`` and ``/schemas/guids/{guid}/ids``: the guid is Confluent's content hash."""

from __future__ import annotations

import hashlib
import uuid

from tests.registry.conftest import Registry, avro_record
from tscontract.registry.guids import schema_guid


def test_guid_is_the_md5_of_the_text_as_a_uuid() -> None:
    assert schema_guid('"string"', []) == str(uuid.UUID(bytes=hashlib.md5(b'"string"').digest()))
    # a reference adds name, subject and the version as four big-endian bytes
    ref = {"name": "n", "subject": "s", "version": 1}
    assert schema_guid("x", [ref]) == str(uuid.UUID(bytes=hashlib.md5(b"xns\x00\x00\x00\x01").digest()))
    # a rule without kind and mode hashes as Confluent's Rule fills them in: TRANSFORM, WRITEREAD
    bare = '{"domainRules":[{"name":"r","type":"CEL"}]}'
    full = '{"domainRules":[{"name":"r","type":"CEL","kind":"TRANSFORM","mode":"WRITEREAD"}]}'
    assert schema_guid("x", [], "", bare) == schema_guid("x", [], "", full)


def test_schema_by_guid_and_its_ids(registry: Registry) -> None:
    a, b = avro_record("A", "x"), avro_record("B", "y")
    registry.register("s", a)
    registry.register("t", b)
    registry.register("u", a)  # the same schema under a second subject: one id, one guid
    guid = registry.call("GET", "/subjects/s/versions/1")[1]["guid"]
    assert guid == schema_guid(a, [])
    assert registry.call("GET", "/subjects/u/versions/1")[1]["guid"] == guid
    assert registry.call("GET", f"/schemas/guids/{guid}") == (200, {"schema": a, "guid": guid})
    assert registry.call("GET", f"/schemas/guids/{guid}/ids") == (200, [{"context": ".", "id": 1}])
    other = schema_guid(b, [])
    assert registry.call("GET", f"/schemas/guids/{other}")[1]["schema"] == b
    missing = str(uuid.UUID(int=7))
    assert registry.call("GET", f"/schemas/guids/{missing}") == (
        404,
        {"error_code": 40403, "message": f"Schema {missing} not found"},
    )
    assert registry.call("GET", f"/schemas/guids/{missing}/ids") == (200, [])
    c = avro_record("C", "z")  # registered after the index learnt ids 1 and 2
    registry.register("v", c)
    assert registry.call("GET", f"/schemas/guids/{schema_guid(c, [])}/ids") == (200, [{"context": ".", "id": 3}])
