"""confluent-kafka's ProtobufSerializer and ProtobufDeserializer against a real ``registry serve``.

The serializer registers base64 ``FileDescriptorProto`` texts (its dependencies as references); the
deserializer reads them back with ``?format=serialized`` and resolves references with
``GET /subjects/{s}/versions/{v}?deleted=true&format=serialized``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

pytest.importorskip("confluent_kafka.schema_registry.protobuf")
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests.registry.conftest import Registry, id_only
from tscontract.evolution.proto_compat import bundle, compile_proto
from tscontract.registry.protobuf_descriptor import descriptor_text

UNITS = """syntax = "proto3";
package acme.units;
enum Unit { UNIT_UNSPECIFIED = 0; KWH = 1; MWH = 2; }
"""
READING = """syntax = "proto3";
package acme.meter;
import "acme/units.proto";
import "google/protobuf/timestamp.proto";
message Reading {
  string meter_id = 1;
  google.protobuf.Timestamp ts = 2;
  double value = 3;
  acme.units.Unit unit = 4;
  map<string, string> labels = 5;
  optional int64 sequence = 6;
  oneof source { string device = 7; int32 channel = 8; }
  repeated Sample samples = 9;
  message Sample { int32 at = 1; bytes raw = 2; }
  reserved 20, 30 to 40;
  reserved "legacy";
}
"""


def _message_class(pool_files: list[descriptor_pb2.FileDescriptorProto], full_name: str) -> Any:
    pool = descriptor_pool.DescriptorPool()
    for file in pool_files:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


def _reading_class() -> Any:
    files = compile_proto(bundle(READING, {"acme/units.proto": UNITS})).file
    renamed = []
    for file in files:
        copy = descriptor_pb2.FileDescriptorProto()
        copy.CopyFrom(file)
        if copy.name == "schema.proto":
            copy.name = "acme/meter.proto"
        renamed.append(copy)
    return _message_class(renamed, "acme.meter.Reading")


def test_descriptor_text_round_trips_through_protoc() -> None:
    files = {f.name: f for f in compile_proto(bundle(READING, {"acme/units.proto": UNITS})).file}
    main = files["schema.proto"]
    text = descriptor_text(base64.b64encode(main.SerializeToString()).decode())
    assert "message Reading {" in text and "map<string, string> labels = 5;" in text
    again = {f.name: f for f in compile_proto(bundle(text, {"acme/units.proto": UNITS})).file}["schema.proto"]
    for described in (main, again):
        described.ClearField("source_code_info")
    assert again == main  # the text describes the very same file


PROTO2 = """syntax = "proto2";
package legacy;
option java_package = "com.acme.legacy";
message Old {
  required string id = 1;
  optional int32 n = 2 [default = 7];
  optional string s = 3 [default = "a \\"b\\""];
  optional Kind kind = 4 [default = B];
  repeated int32 packed = 5 [packed = true];
  enum Kind { A = 0; B = 1; }
  extensions 100 to max;
}
extend Old { optional string note = 100; }
service Svc { rpc Get(Old) returns (stream Old); }
"""


def test_descriptor_text_proto2_round_trip() -> None:
    main = compile_proto(PROTO2).file[-1]
    text = descriptor_text(base64.b64encode(main.SerializeToString()).decode())
    again = compile_proto(text).file[-1]
    assert again == main, text


def test_descriptor_text_leaves_proto_text_alone() -> None:
    assert descriptor_text(READING) == READING
    assert descriptor_text("bm90IGEgZGVzY3JpcHRvcg==") == "bm90IGEgZGVzY3JpcHRvcg=="  # base64, not a descriptor


def test_protobuf_serializer_round_trip(registry: Registry) -> None:
    client = SchemaRegistryClient({"url": registry.url})
    reading_class = _reading_class()
    serializer = ProtobufSerializer(reading_class, client, {"use.deprecated.format": False})
    deserializer = ProtobufDeserializer(reading_class, {"use.deprecated.format": False}, client)
    ctx = SerializationContext("meters", MessageField.VALUE)
    record = reading_class(meter_id="m-1", value=1.5, unit=2, sequence=7, device="d-9")
    record.ts.seconds = 1_700_000_000
    record.labels["site"] = "north"
    record.samples.add(at=3, raw=b"\x00\x01")

    payload = serializer(record, ctx)  # auto-registers acme/units.proto, then meters-value
    assert payload[0] == 0 and payload[5:6] == b"\x00"  # magic byte, id, message index [0]
    schema_id = int.from_bytes(payload[1:5], "big")
    assert deserializer(payload, ctx) == record

    status, stored = registry.call("GET", f"/schemas/ids/{schema_id}")
    assert status == 200 and stored["schemaType"] == "PROTOBUF"
    assert stored["schema"].startswith('syntax = "proto3";') and "message Reading" in stored["schema"]
    assert stored["references"] == [{"name": "acme/units.proto", "subject": "acme/units.proto", "version": 1}]
    status, serial = registry.call("GET", f"/schemas/ids/{schema_id}?format=serialized")
    file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serial["schema"]))
    assert [m.name for m in file.message_type] == ["Reading"] and "acme/units.proto" in file.dependency
    status, version = registry.call("GET", "/subjects/meters-value/versions/1?format=serialized")
    assert status == 200 and version["schema"] == serial["schema"]

    # the .proto text and the descriptor are one schema: one id, found by lookup either way
    again = registry.call("POST", "/subjects/meters-value/versions", _body(stored))
    assert id_only(again) == (200, {"id": schema_id})
    status, found = registry.call("POST", "/subjects/meters-value", {**_body(stored), "schema": serial["schema"]})
    assert status == 200 and found["id"] == schema_id and found["version"] == 1


def _body(stored: dict[str, Any]) -> dict[str, Any]:
    return {"schema": stored["schema"], "schemaType": "PROTOBUF", "references": stored["references"]}


def test_invalid_base64_descriptor_is_42201(registry: Registry) -> None:
    status, body = registry.register("x-value", base64.b64encode(b"\xff\xff\xff").decode(), "PROTOBUF")
    assert status == 422 and body["error_code"] == 42201, json.dumps(body)
