"""confluent-kafka's Avro, JSON Schema and Protobuf serializers against a real ``registry serve`` (#28).

Each round trip uses a schema that references another subject (an Avro named type, a JSON Schema
``$ref``, a ``.proto`` import), with ``auto.register.schemas`` on, and off with ``use.latest.version``
or a lookup, on SQLite and on PostgreSQL. The bytes are checked one by one: magic byte 0, the
registered id as 4 bytes big-endian, for Protobuf the message-index array (zigzag varints, ``[0]`` as
the single byte 0), then exactly what fastavro, ``json`` or protobuf encode the record as.
"""

from __future__ import annotations

import base64
import io
import json
import struct
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("confluent_kafka.schema_registry")
import fastavro
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests.registry.conftest import Registry

ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "acme",
    "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"], "default": None}],
}
CUSTOMER = {
    "type": "record",
    "name": "Customer",
    "namespace": "acme",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "age", "type": "long"},
        {"name": "home", "type": "acme.Address"},
        {"name": "others", "type": {"type": "array", "items": "acme.Address"}},
    ],
}
CUSTOMER_RECORD = {
    "name": "Zoë",
    "age": 41,
    "home": {"city": "Lyon", "zip": 69001},
    "others": [{"city": "Oslo", "zip": None}],
}
AVRO_REF = SchemaReference("acme.Address", "acme.Address", 1)

ADDRESS_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
    "required": ["city"],
}
CUSTOMER_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "home": {"$ref": "address.json"},
        "others": {"type": "array", "items": {"$ref": "address.json"}},
    },
    "required": ["name", "home"],
}
JSON_REF = SchemaReference("address.json", "address-json", 1)

UNITS_PROTO = """syntax = "proto3";
package acme.units;
enum Unit { UNIT_UNSPECIFIED = 0; KWH = 1; MWH = 2; }
message Quantity { double value = 1; Unit unit = 2; }
"""
METER_PROTO = """syntax = "proto3";
package acme.meter;
import "acme/units.proto";
message Header { string source = 1; }
message Reading {
  string meter_id = 1;
  acme.units.Quantity quantity = 2;
  repeated Sample samples = 3;
  message Sample { int32 at = 1; bytes raw = 2; }
}
"""


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"))


@pytest.fixture
def client(registry: Registry) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": registry.url}) as sr:
        yield sr


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def framed(payload: bytes, schema_id: int) -> bytes:
    """The Confluent frame, checked: magic byte 0 and the id; answers what follows."""
    assert payload[0] == 0, payload[:8]
    assert payload[1:5] == struct.pack(">I", schema_id), payload[:8]
    return payload[5:]


# -- Avro ---------------------------------------------------------------------------------------------


def avro_body(record: dict[str, Any]) -> bytes:
    named: dict[str, Any] = {}
    fastavro.parse_schema(ADDRESS, named_schemas=named)
    parsed = fastavro.parse_schema(CUSTOMER, named_schemas=named)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, record)
    return out.getvalue()


def test_avro_round_trip_with_a_reference_auto_registered(client: SchemaRegistryClient, registry: Registry) -> None:
    assert client.register_schema("acme.Address", Schema(text(ADDRESS), "AVRO")) == 1
    customer = Schema(text(CUSTOMER), "AVRO", [AVRO_REF])
    serializer = AvroSerializer(client, customer, conf={"auto.register.schemas": True})
    payload = serializer(CUSTOMER_RECORD, ctx("customers"))
    assert payload is not None
    registered = SchemaRegistryClient({"url": registry.url}).get_latest_version("customers-value")
    assert (registered.version, registered.schema.references) == (1, [AVRO_REF])
    assert framed(payload, registered.schema_id) == avro_body(CUSTOMER_RECORD)
    assert registered.schema_id == 2
    reader = AvroDeserializer(SchemaRegistryClient({"url": registry.url}))
    assert reader(payload, ctx("customers")) == CUSTOMER_RECORD


def test_avro_use_latest_version_and_lookup(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("acme.Address", Schema(text(ADDRESS), "AVRO"))
    customer = Schema(text(CUSTOMER), "AVRO", [AVRO_REF])
    schema_id = client.register_schema("customers-value", customer)
    latest = AvroSerializer(
        SchemaRegistryClient({"url": registry.url}),
        customer,
        conf={"auto.register.schemas": False, "use.latest.version": True},
    )
    looked_up = AvroSerializer(
        SchemaRegistryClient({"url": registry.url}), customer, conf={"auto.register.schemas": False}
    )
    for serializer in (latest, looked_up):
        payload = serializer(CUSTOMER_RECORD, ctx("customers"))
        assert payload is not None and framed(payload, schema_id) == avro_body(CUSTOMER_RECORD)
        reader = AvroDeserializer(SchemaRegistryClient({"url": registry.url}), customer)
        assert reader(payload, ctx("customers")) == CUSTOMER_RECORD
    assert client.get_versions("customers-value") == [1]  # neither registered anything


def test_avro_without_auto_register_an_unknown_schema_fails(client: SchemaRegistryClient) -> None:
    client.register_schema("acme.Address", Schema(text(ADDRESS), "AVRO"))
    serializer = AvroSerializer(
        client, Schema(text(CUSTOMER), "AVRO", [AVRO_REF]), conf={"auto.register.schemas": False}
    )
    with pytest.raises(Exception, match="40401"):
        serializer(CUSTOMER_RECORD, ctx("customers"))
    assert client.get_subjects() == ["acme.Address"]


# -- JSON Schema --------------------------------------------------------------------------------------

JSON_RECORD = {"name": "Zoë", "home": {"city": "Lyon", "zip": 69001}, "others": [{"city": "Oslo"}]}


def json_body(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def test_json_round_trip_with_a_ref_auto_registered(client: SchemaRegistryClient, registry: Registry) -> None:
    assert client.register_schema("address-json", Schema(text(ADDRESS_JSON), "JSON")) == 1
    customer = Schema(text(CUSTOMER_JSON), "JSON", [JSON_REF])
    serializer = JSONSerializer(customer, client, conf={"auto.register.schemas": True})
    payload = serializer(JSON_RECORD, ctx("customers"))
    assert payload is not None
    registered = SchemaRegistryClient({"url": registry.url}).get_latest_version("customers-value")
    assert (registered.schema_id, registered.version, registered.schema.references) == (2, 1, [JSON_REF])
    assert registered.schema.schema_type == "JSON"
    assert framed(payload, 2) == json_body(JSON_RECORD)
    reader = JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": registry.url}))
    assert reader(payload, ctx("customers")) == JSON_RECORD


def test_json_use_latest_version_and_lookup(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("address-json", Schema(text(ADDRESS_JSON), "JSON"))
    customer = Schema(text(CUSTOMER_JSON), "JSON", [JSON_REF])
    schema_id = client.register_schema("customers-value", customer)
    for conf in ({"auto.register.schemas": False, "use.latest.version": True}, {"auto.register.schemas": False}):
        serializer = JSONSerializer(customer, SchemaRegistryClient({"url": registry.url}), conf=conf)
        payload = serializer(JSON_RECORD, ctx("customers"))
        assert payload is not None and framed(payload, schema_id) == json_body(JSON_RECORD)
        reader = JSONDeserializer(customer, schema_registry_client=SchemaRegistryClient({"url": registry.url}))
        assert reader(payload, ctx("customers")) == JSON_RECORD
    assert client.get_versions("customers-value") == [1]


def test_json_serializer_validates_through_the_reference(client: SchemaRegistryClient) -> None:
    client.register_schema("address-json", Schema(text(ADDRESS_JSON), "JSON"))
    serializer = JSONSerializer(Schema(text(CUSTOMER_JSON), "JSON", [JSON_REF]), client)
    with pytest.raises(Exception, match="city"):
        serializer({"name": "x", "home": {"zip": 1}}, ctx("customers"))  # the referenced schema requires city


# -- Protobuf -----------------------------------------------------------------------------------------


def proto_classes(tmp_path: Path) -> dict[str, Any]:
    """Message classes for meter.proto (and the units.proto it imports), compiled by grpcio-tools' protoc."""
    grpc_tools = pytest.importorskip("grpc_tools")
    from grpc_tools import protoc

    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "units.proto").write_text(UNITS_PROTO)
    (tmp_path / "acme" / "meter.proto").write_text(METER_PROTO)
    out = tmp_path / "set.pb"
    include = resources.files(grpc_tools) / "_proto"
    argv = ["protoc", f"-I{tmp_path}", f"-I{include}", f"--descriptor_set_out={out}", "--include_imports"]
    assert protoc.main([*argv, "acme/meter.proto"]) == 0
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    names = ["acme.meter.Header", "acme.meter.Reading", "acme.meter.Reading.Sample", "acme.units.Quantity"]
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name)) for name in names}


def reading(classes: dict[str, Any]) -> Any:
    record = classes["acme.meter.Reading"](meter_id="m-1")
    record.quantity.value = 1.5
    record.quantity.unit = 2
    record.samples.add(at=3, raw=b"\x00\x01")
    return record


PB_CONF = {"use.deprecated.format": False}


def test_protobuf_round_trip_with_an_import_auto_registered(
    client: SchemaRegistryClient, registry: Registry, tmp_path: Path
) -> None:
    classes = proto_classes(tmp_path)
    reading_class = classes["acme.meter.Reading"]
    serializer = ProtobufSerializer(reading_class, client, {**PB_CONF, "auto.register.schemas": True})
    record = reading(classes)
    payload = serializer(record, ctx("meters"))
    assert payload is not None
    sr = SchemaRegistryClient({"url": registry.url})
    units = sr.get_latest_version("acme/units.proto")
    meters = sr.get_latest_version("meters-value")
    assert (units.schema_id, units.version, meters.version) == (1, 1, 1)
    assert meters.schema.references == [SchemaReference("acme/units.proto", "acme/units.proto", 1)]
    serialized = sr.get_version("meters-value", 1, fmt="serialized").schema.schema_str
    assert serialized is not None and serialized == sr.get_schema(meters.schema_id, fmt="serialized").schema_str
    described = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert [m.name for m in described.message_type] == ["Header", "Reading"]
    assert list(described.dependency) == ["acme/units.proto"]
    # Reading is the file's second message: the index array [1], zigzag: length 1 -> 2, index 1 -> 2
    assert framed(payload, meters.schema_id) == b"\x02\x02" + record.SerializeToString()
    reader = ProtobufDeserializer(reading_class, PB_CONF, SchemaRegistryClient({"url": registry.url}))
    assert reader(payload, ctx("meters")) == record

    header = classes["acme.meter.Header"](source="plant-7")  # the first message: [0] is the single byte 0
    first = ProtobufSerializer(classes["acme.meter.Header"], client, PB_CONF)(header, ctx("meters"))
    assert first is not None and framed(first, meters.schema_id) == b"\x00" + header.SerializeToString()
    sample = reading_class.Sample(at=9, raw=b"\xff")  # nested: [1, 0] -> length 2 -> 4, then 2, 0
    nested = ProtobufSerializer(classes["acme.meter.Reading.Sample"], client, PB_CONF)(sample, ctx("meters"))
    assert nested is not None and framed(nested, meters.schema_id) == b"\x04\x02\x00" + sample.SerializeToString()
    sample_reader = ProtobufDeserializer(classes["acme.meter.Reading.Sample"], PB_CONF, client)
    assert sample_reader(nested, ctx("meters")) == sample
    assert sr.get_versions("meters-value") == [1]  # one file, one schema, whichever message is sent


def test_protobuf_use_latest_version_and_lookup(
    client: SchemaRegistryClient, registry: Registry, tmp_path: Path
) -> None:
    classes = proto_classes(tmp_path)
    reading_class = classes["acme.meter.Reading"]
    record = reading(classes)
    registered = ProtobufSerializer(reading_class, client, PB_CONF)(record, ctx("meters"))
    assert registered is not None
    schema_id = int.from_bytes(registered[1:5], "big")
    for conf in ({"auto.register.schemas": False, "use.latest.version": True}, {"auto.register.schemas": False}):
        sr = SchemaRegistryClient({"url": registry.url})
        payload = ProtobufSerializer(reading_class, sr, {**PB_CONF, **conf})(record, ctx("meters"))
        assert payload is not None and framed(payload, schema_id) == b"\x02\x02" + record.SerializeToString()
        reader = ProtobufDeserializer(reading_class, PB_CONF, SchemaRegistryClient({"url": registry.url}))
        assert reader(payload, ctx("meters")) == record
    assert client.get_versions("meters-value") == [1]
    assert client.get_versions("acme/units.proto") == [1]
