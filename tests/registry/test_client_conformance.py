"""Every public method of confluent-kafka's ``SchemaRegistryClient`` against a real ``registry serve`` (#28).

Each test drives the installed client over loopback, on the SQLite store and on a real PostgreSQL
server, and asserts what Confluent's Schema Registry answers (its resources under
``core/src/main/java/io/confluent/kafka/schemaregistry/rest/resources``). Where the registry does not
answer as Confluent yet, the test still asserts Confluent's answer and is ``xfail(strict=True)`` with
the missing endpoint as its reason: it turns red the day the endpoint lands, and the marker must go.
``test_every_public_client_method_is_covered`` fails when a client release adds a method.
"""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Iterator

import pytest

pytest.importorskip("confluent_kafka.schema_registry")
from confluent_kafka.schema_registry import (
    Metadata,
    RegisteredSchema,
    RuleSet,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
    ServerConfig,
)
from confluent_kafka.schema_registry.common.schema_registry_client import (
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    ConfigCompatibilityLevel,
    SchemaVersion,
)

from tests.registry.conftest import Registry, avro_record

# the client methods that talk to no registry endpoint, and the ones each test below drives
COVERED = {
    "clear_caches",
    "clear_latest_caches",
    "close",
    "config",
    "create_association",
    "delete_associations",
    "delete_config",
    "delete_mode",
    "delete_subject",
    "delete_version",
    "get_associations_by_resource_name",
    "get_compatibility",
    "get_config",
    "get_contexts",
    "get_global_mode",
    "get_latest_version",
    "get_latest_with_metadata",
    "get_mode",
    "get_referenced_by",
    "get_schema",
    "get_schema_by_guid",
    "get_schema_types",
    "get_schema_versions",
    "get_subjects",
    "get_subjects_by_schema_id",
    "get_version",
    "get_versions",
    "lookup_schema",
    "new_client",
    "register_schema",
    "register_schema_full_response",
    "set_compatibility",
    "set_config",
    "test_compatibility",
    "test_compatibility_all_versions",
    "update_global_mode",
    "update_mode",
}

A1 = avro_record("A", "x")
A2 = avro_record("A", "x", "y")
A3 = avro_record("A", "x", "y", "z")
ADDRESS = json.dumps(
    {"type": "record", "name": "Address", "namespace": "acme", "fields": [{"name": "city", "type": "string"}]},
    separators=(",", ":"),
)
CUSTOMER = json.dumps(
    {
        "type": "record",
        "name": "Customer",
        "namespace": "acme",
        # as Avro's toString writes it: the referenced type's name relative to the namespace
        "fields": [{"name": "name", "type": "string"}, {"name": "home", "type": "Address"}],
    },
    separators=(",", ":"),
)
METADATA = Metadata.from_dict({"properties": {"owner": "billing", "major": "2"}, "tags": {"Customer.name": ["PII"]}})
RULE_SET = RuleSet.from_dict(
    {
        "domainRules": [
            {
                "name": "named",
                "kind": "CONDITION",
                "mode": "WRITE",
                "type": "CEL",
                "expr": "message.name != ''",
                "onFailure": "ERROR",
            }
        ]
    }
)


# tscontract's deliberate difference from Confluent (whose default is BACKWARD): every version is
# checked against every other both ways unless a subject or the global config says otherwise
DEFAULT_LEVEL = "FULL_TRANSITIVE"


def lacks(endpoint: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"registry lacks {endpoint} (#28)")


@pytest.fixture
def client(registry: Registry) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": registry.url}) as sr:
        yield sr


@pytest.fixture
def checked(default_store_registry: Registry) -> Iterator[SchemaRegistryClient]:
    """A client of the registry with its real compatibility checks."""
    with SchemaRegistryClient({"url": default_store_registry.url}) as sr:
        yield sr


def avro(text: str, **kwargs: object) -> Schema:
    return Schema(text, "AVRO", **kwargs)  # type: ignore[arg-type]


def fresh(registry: Registry) -> SchemaRegistryClient:
    """A second client with empty caches: what it answers came from the registry, not from memory."""
    return SchemaRegistryClient({"url": registry.url})


def pairs(versions: list[SchemaVersion]) -> list[SchemaVersion]:
    """Subject-version pairs in a fixed order (Confluent's follows its lookup cache)."""
    return sorted(versions, key=lambda pair: (pair.subject or "", pair.version or 0))


def guided(found: RegisteredSchema) -> RegisteredSchema:
    """The answer with its guid checked (a UUID, as Confluent's content hash) and then set aside."""
    assert found.guid is not None and str(uuid.UUID(found.guid)) == found.guid
    return RegisteredSchema(
        schema_id=found.schema_id, guid=None, schema=found.schema, subject=found.subject, version=found.version
    )


def error_of(call: object) -> tuple[int, int]:
    assert callable(call)
    with pytest.raises(SchemaRegistryError) as caught:
        call()
    return caught.value.http_status_code, caught.value.error_code


# -- the method list ---------------------------------------------------------------------------------


def test_every_public_client_method_is_covered() -> None:
    public = {name for name, _ in inspect.getmembers(SchemaRegistryClient) if not name.startswith("_")}
    assert public - COVERED == set(), "a new client method: give it a test and name it in COVERED"
    assert COVERED - public == set(), "a method the client no longer has: drop it from COVERED"


def test_client_plumbing_methods(registry: Registry) -> None:
    sr = SchemaRegistryClient.new_client({"url": registry.url})
    assert type(sr) is SchemaRegistryClient and sr.config()["url"] == registry.url
    sr.register_schema("plumb-value", avro(A1))
    sr.register_schema("plumb-value", avro(A2))
    assert sr.get_latest_version("plumb-value").version == 2
    assert sr.lookup_schema("plumb-value", avro(A2)).version == 2
    assert registry.call("DELETE", "/subjects/plumb-value/versions/2") == (200, 2)  # behind the client's back
    assert sr.get_latest_version("plumb-value").version == 2  # from the latest cache
    sr.clear_latest_caches()
    assert sr.get_latest_version("plumb-value").version == 1
    assert sr.lookup_schema("plumb-value", avro(A2)).version == 2  # from the schema cache
    sr.clear_caches()
    assert error_of(lambda: sr.lookup_schema("plumb-value", avro(A2))) == (404, 40403)
    sr.close()


# -- register, lookup, read ----------------------------------------------------------------------------


def test_register_schema_and_normalize(client: SchemaRegistryClient, registry: Registry) -> None:
    assert client.register_schema("a-value", avro(A1)) == 1
    assert client.register_schema("a-value", avro(A1)) == 1  # cached, then asked again below
    assert fresh(registry).register_schema("a-value", avro(json.dumps(json.loads(A1), indent=2))) == 1
    assert client.register_schema("a-value", avro(A2)) == 2
    assert client.register_schema("b-value", avro(A1)) == 1  # one id per schema across subjects
    reordered = json.dumps({"fields": json.loads(A1)["fields"], "name": "A", "type": "record"})
    assert fresh(registry).register_schema("c-value", avro(reordered)) == 1  # Avro's toString: one schema
    normalized = fresh(registry).register_schema("d-value", avro(A1), normalize_schemas=True)
    assert fresh(registry).register_schema("d-value", avro(reordered), normalize_schemas=True) == normalized
    assert client.get_versions("d-value") == [1]


def test_register_schema_full_response_id(client: SchemaRegistryClient) -> None:
    first = client.register_schema_full_response("a-value", avro(A1))
    assert first.schema_id == 1 and first.subject == "a-value"


def test_register_schema_full_response_is_confluents_full_schema(client: SchemaRegistryClient) -> None:
    """Confluent answers a registration with ``RegisterSchemaResponse(result)``: id, version, guid, the
    schema and its type, references, metadata and ruleSet."""
    client.register_schema("a-value", avro(A1))
    second = client.register_schema_full_response("a-value", avro(A2, metadata=METADATA))
    assert (second.subject, second.version, second.schema_id) == ("a-value", 2, 2)
    assert second.schema == avro(A2, metadata=METADATA)
    assert second.guid is not None and uuid.UUID(second.guid)


def test_schema_with_references_metadata_and_rule_set(client: SchemaRegistryClient, registry: Registry) -> None:
    assert client.register_schema("acme.Address", avro(ADDRESS)) == 1
    reference = SchemaReference("acme.Address", "acme.Address", 1)
    customer = avro(CUSTOMER, references=[reference], metadata=METADATA, rule_set=RULE_SET)
    assert client.register_schema("customers-value", customer) == 2
    sr = fresh(registry)
    assert sr.get_schema(2) == customer
    assert sr.get_schema(2, subject_name="customers-value") == customer
    latest = sr.get_latest_version("customers-value")
    assert (latest.subject, latest.version, latest.schema_id, latest.schema) == ("customers-value", 1, 2, customer)
    found = sr.lookup_schema("customers-value", customer)
    assert (found.subject, found.version, found.schema_id, found.schema) == ("customers-value", 1, 2, customer)
    # the same text without the metadata and rules is another schema: another id, version 2
    assert sr.register_schema("customers-value", avro(CUSTOMER, references=[reference])) == 3
    assert sr.get_versions("customers-value") == [1, 2]


def test_get_schema_and_get_schema_types(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("a-value", avro(A1))
    assert fresh(registry).get_schema(1) == avro(A1)
    assert error_of(lambda: fresh(registry).get_schema(99)) == (404, 40403)
    assert sorted(client.get_schema_types()) == ["AVRO", "JSON", "PROTOBUF"]


def test_get_schema_by_guid(client: SchemaRegistryClient, registry: Registry) -> None:
    registered = client.register_schema_full_response("a-value", avro(A1))
    assert registered.guid is not None
    assert fresh(registry).get_schema_by_guid(registered.guid) == avro(A1)


def test_get_subjects_by_schema_id(client: SchemaRegistryClient) -> None:
    for subject in ("b-value", "a-value", "c-value"):
        client.register_schema(subject, avro(A1))
    client.register_schema("c-value", avro(A2))
    client.delete_version("c-value", 1)
    # Confluent lists them as its lookup cache holds them: the order is not part of the answer
    assert sorted(client.get_subjects_by_schema_id(1)) == ["a-value", "b-value"]
    assert sorted(client.get_subjects_by_schema_id(1, deleted=True)) == ["a-value", "b-value", "c-value"]
    # ``subject`` names the context to look the id up in (Confluent's getSchemaKeyUsingContexts), not a filter
    assert sorted(client.get_subjects_by_schema_id(1, subject_name="b-value")) == ["a-value", "b-value"]
    assert error_of(lambda: client.get_subjects_by_schema_id(99)) == (404, 40403)


def test_get_schema_versions(client: SchemaRegistryClient) -> None:
    client.register_schema("b-value", avro(A1))
    client.register_schema("a-value", avro(A2))
    client.register_schema("a-value", avro(A1))
    assert pairs(client.get_schema_versions(1)) == [SchemaVersion("a-value", 2), SchemaVersion("b-value", 1)]
    client.delete_version("a-value", 2)
    assert client.get_schema_versions(1) == [SchemaVersion("b-value", 1)]
    assert pairs(client.get_schema_versions(1, deleted=True)) == [
        SchemaVersion("a-value", 2),
        SchemaVersion("b-value", 1),
    ]
    # ``subject`` names the context to look the id up in (Confluent's getSchemaKeyUsingContexts), not a filter
    assert pairs(client.get_schema_versions(1, subject_name="b-value")) == [SchemaVersion("b-value", 1)]
    assert error_of(lambda: client.get_schema_versions(99)) == (404, 40403)


def test_lookup_schema(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("a-value", avro(A1))
    client.register_schema("a-value", avro(A2))
    sr = fresh(registry)
    assert guided(sr.lookup_schema("a-value", avro(A2))) == RegisteredSchema("a-value", 2, 2, None, avro(A2))
    reordered = json.dumps({"fields": json.loads(A1)["fields"], "name": "A", "type": "record"})
    assert sr.lookup_schema("a-value", avro(reordered)).version == 1  # Avro's toString: one schema
    normalized = sr.register_schema("n-value", avro(A1), normalize_schemas=True)
    found = fresh(registry).lookup_schema("n-value", avro(reordered), normalize_schemas=True)
    assert (found.subject, found.version, found.schema_id) == ("n-value", 1, normalized)
    assert error_of(lambda: sr.lookup_schema("a-value", avro(A3))) == (404, 40403)
    assert error_of(lambda: sr.lookup_schema("nobody-value", avro(A1))) == (404, 40401)


def test_lookup_schema_deleted(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("a-value", avro(A1))
    client.register_schema("a-value", avro(A2))
    client.delete_version("a-value", 1)
    assert error_of(lambda: fresh(registry).lookup_schema("a-value", avro(A1))) == (404, 40403)
    found = fresh(registry).lookup_schema("a-value", avro(A1), deleted=True)
    assert (found.subject, found.version, found.schema_id, found.schema) == ("a-value", 1, 1, avro(A1))


# -- subjects and versions -------------------------------------------------------------------------


def test_get_subjects_and_versions(client: SchemaRegistryClient, registry: Registry) -> None:
    for subject in ("orders-value", "orders-key", "users-value"):
        client.register_schema(subject, avro(A1))
    client.register_schema("orders-value", avro(A2))
    client.register_schema("orders-value", avro(A3))
    assert client.get_subjects() == ["orders-key", "orders-value", "users-value"]
    assert client.get_versions("orders-value") == [1, 2, 3]
    got = fresh(registry).get_version("orders-value", 2)
    assert guided(got) == RegisteredSchema("orders-value", 2, 2, None, avro(A2))
    assert fresh(registry).get_version("orders-value", "latest").version == 3
    latest = fresh(registry).get_latest_version("orders-value")
    assert (latest.version, latest.schema_id, latest.schema) == (3, 3, avro(A3))
    assert error_of(lambda: client.get_version("orders-value", 9)) == (404, 40402)
    assert error_of(lambda: client.get_version("nobody", 1)) == (404, 40401)
    assert error_of(lambda: client.get_versions("nobody")) == (404, 40401)
    assert error_of(lambda: fresh(registry).get_latest_version("nobody")) == (404, 40401)


def test_get_subjects_prefix(client: SchemaRegistryClient) -> None:
    for subject in ("orders-value", "orders-key", "users-value"):
        client.register_schema(subject, avro(A1))
    assert client.get_subjects(subject_prefix="orders") == ["orders-key", "orders-value"]
    assert client.get_subjects(subject_prefix="nobody") == []


def test_get_subjects_and_versions_paged(client: SchemaRegistryClient) -> None:
    for subject in ("c-value", "a-value", "b-value"):
        client.register_schema(subject, avro(A1))
    for text in (A2, A3):
        client.register_schema("a-value", avro(text))
    assert client.get_subjects(offset=1, limit=1) == ["b-value"]
    assert client.get_subjects(offset=2) == ["c-value"]
    assert client.get_versions("a-value", offset=1, limit=1) == [2]
    assert client.get_versions("a-value", limit=2) == [1, 2]


def test_soft_and_permanent_subject_delete(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("a-value", avro(A1))
    client.register_schema("a-value", avro(A2))
    client.register_schema("b-value", avro(A1))
    assert client.delete_subject("a-value") == [1, 2]
    assert client.get_subjects() == ["b-value"]
    assert client.get_subjects(deleted=True) == ["a-value", "b-value"]
    # the client sends deleted_only, Confluent reads deletedOnly: the parameter is ignored there
    assert client.get_subjects(deleted_only=True) == ["b-value"]
    assert error_of(lambda: client.get_versions("a-value")) == (404, 40401)
    assert client.get_versions("a-value", deleted=True) == [1, 2]
    assert fresh(registry).get_version("a-value", 2, deleted=True).schema == avro(A2)
    assert client.delete_subject("a-value", permanent=True) == [1, 2]
    assert client.get_subjects(deleted=True) == ["b-value"]
    assert error_of(lambda: client.delete_subject("a-value")) == (404, 40401)
    assert fresh(registry).get_schema(1) == avro(A1)  # still held by b-value


def test_permanent_subject_delete_needs_a_soft_delete_first(client: SchemaRegistryClient) -> None:
    client.register_schema("a-value", avro(A1))
    assert error_of(lambda: client.delete_subject("a-value", permanent=True)) == (404, 40405)
    assert client.get_versions("a-value") == [1]


def test_second_soft_subject_delete_is_40404(client: SchemaRegistryClient) -> None:
    client.register_schema("a-value", avro(A1))
    assert client.delete_subject("a-value") == [1]
    assert error_of(lambda: client.delete_subject("a-value")) == (404, 40404)


def test_soft_version_delete(client: SchemaRegistryClient, registry: Registry) -> None:
    for text in (A1, A2, A3):
        client.register_schema("a-value", avro(text))
    assert client.delete_version("a-value", 2) == 2
    assert client.get_versions("a-value") == [1, 3]
    assert client.get_versions("a-value", deleted=True) == [1, 2, 3]
    # the client sends deleted_only, Confluent reads deletedOnly: the parameter is ignored there
    assert client.get_versions("a-value", deleted_only=True) == [1, 3]
    assert error_of(lambda: fresh(registry).get_version("a-value", 2)) == (404, 40402)
    assert fresh(registry).get_version("a-value", 2, deleted=True).schema == avro(A2)
    assert client.delete_version("a-value", "latest") == 3  # type: ignore[arg-type]
    assert fresh(registry).get_latest_version("a-value").version == 1


def test_permanent_version_delete(client: SchemaRegistryClient, registry: Registry) -> None:
    client.register_schema("a-value", avro(A1))
    client.register_schema("a-value", avro(A2))
    assert error_of(lambda: client.delete_version("a-value", 2, permanent=True)) == (404, 40407)
    assert client.delete_version("a-value", 2) == 2
    assert error_of(lambda: client.delete_version("a-value", 2)) == (404, 40406)
    assert client.delete_version("a-value", 2, permanent=True) == 2
    assert client.get_versions("a-value", deleted=True) == [1]
    assert error_of(lambda: fresh(registry).get_schema(2)) == (404, 40403)


def test_get_latest_with_metadata(client: SchemaRegistryClient, registry: Registry) -> None:
    one = Metadata.from_dict({"properties": {"owner": "billing", "major": "1"}})
    two = Metadata.from_dict({"properties": {"owner": "billing", "major": "2"}})
    client.register_schema("a-value", avro(A1, metadata=one))
    client.register_schema("a-value", avro(A2, metadata=two))
    client.register_schema("a-value", avro(A3, metadata=one))
    sr = fresh(registry)
    found = sr.get_latest_with_metadata("a-value", {"major": "2"})
    assert guided(found) == RegisteredSchema("a-value", 2, 2, None, avro(A2, metadata=two))
    assert sr.get_latest_with_metadata("a-value", {"owner": "billing", "major": "1"}).version == 3
    assert error_of(lambda: sr.get_latest_with_metadata("a-value", {"major": "3"})) == (404, 40403)


def test_get_latest_with_metadata_deleted(client: SchemaRegistryClient, registry: Registry) -> None:
    two = Metadata.from_dict({"properties": {"major": "2"}})
    client.register_schema("a-value", avro(A1))
    client.register_schema("a-value", avro(A2, metadata=two))
    client.delete_version("a-value", 2)
    assert error_of(lambda: fresh(registry).get_latest_with_metadata("a-value", {"major": "2"})) == (404, 40403)
    found = fresh(registry).get_latest_with_metadata("a-value", {"major": "2"}, deleted=True)
    assert (found.version, found.schema_id, found.schema) == (2, 2, avro(A2, metadata=two))


def test_get_referenced_by(client: SchemaRegistryClient) -> None:
    client.register_schema("acme.Address", avro(ADDRESS))
    reference = SchemaReference("acme.Address", "acme.Address", 1)
    assert client.register_schema("customers-value", avro(CUSTOMER, references=[reference])) == 2
    assert client.register_schema("people-value", avro(CUSTOMER, references=[reference])) == 2
    other = CUSTOMER.replace("Customer", "Shop")
    assert client.register_schema("shops-value", avro(other, references=[reference])) == 3
    assert client.get_referenced_by("acme.Address", 1) == [2, 3]
    assert client.get_referenced_by("acme.Address") == [2, 3]
    assert client.get_referenced_by("customers-value", 1) == []


# -- config, compatibility, mode, contexts ---------------------------------------------------------------


def test_compatibility_levels(client: SchemaRegistryClient) -> None:
    assert client.get_compatibility() == DEFAULT_LEVEL
    assert client.set_compatibility(level="full") == {"compatibility": "FULL"}
    assert client.get_compatibility() == "FULL"
    client.register_schema("a-value", avro(A1))
    assert error_of(lambda: client.get_compatibility("a-value")) == (404, 40408)  # no subject level
    assert client.set_compatibility("a-value", "FORWARD_TRANSITIVE") == {"compatibility": "FORWARD_TRANSITIVE"}
    assert client.get_compatibility("a-value") == "FORWARD_TRANSITIVE"
    assert error_of(lambda: client.set_compatibility("a-value", "SOMETIMES")) == (422, 42203)
    with pytest.raises(ValueError):
        client.set_compatibility("a-value")


def test_set_and_get_config(client: SchemaRegistryClient) -> None:
    assert client.get_config() == ServerConfig(compatibility_level=ConfigCompatibilityLevel(DEFAULT_LEVEL))
    answer = client.set_config(config=ServerConfig(compatibility=ConfigCompatibilityLevel.BACKWARD))
    assert answer == {"compatibility": "BACKWARD"}
    assert client.get_config().compatibility_level == ConfigCompatibilityLevel.BACKWARD
    client.set_config("a-value", ServerConfig(compatibility=ConfigCompatibilityLevel.FORWARD))
    assert client.get_config("a-value") == ServerConfig(compatibility_level=ConfigCompatibilityLevel.FORWARD)
    assert error_of(lambda: client.get_config("b-value")) == (404, 40408)
    group = client.set_config("a-value", ServerConfig(compatibility_group="major"))
    assert group == {"compatibilityGroup": "major"}
    assert client.get_config("a-value").compatibility_group == "major"
    with pytest.raises(ValueError):
        client.set_config("a-value")


def test_delete_config(client: SchemaRegistryClient) -> None:
    client.set_config("a-value", ServerConfig(compatibility=ConfigCompatibilityLevel.FORWARD))
    assert client.delete_config("a-value") == ServerConfig(compatibility_level=ConfigCompatibilityLevel.FORWARD)
    assert error_of(lambda: client.get_config("a-value")) == (404, 40408)
    assert error_of(lambda: client.delete_config("a-value")) == (404, 40401)
    client.set_config(config=ServerConfig(compatibility=ConfigCompatibilityLevel.FULL))
    assert client.delete_config() == ServerConfig(compatibility_level=ConfigCompatibilityLevel.FULL)
    assert client.get_compatibility() == DEFAULT_LEVEL  # the default again


def test_test_compatibility(checked: SchemaRegistryClient) -> None:
    required = json.dumps(
        {"type": "record", "name": "A", "fields": [{"name": "x", "type": "string"}, {"name": "q", "type": "int"}]}
    )
    checked.register_schema("a-value", avro(A1))
    checked.register_schema("a-value", avro(A2))
    assert checked.test_compatibility("a-value", avro(A3)) is True
    assert checked.test_compatibility("a-value", avro(A3), version=1) is True
    assert checked.test_compatibility("a-value", avro(required)) is False  # a new field without a default
    assert checked.test_compatibility("a-value", avro(required), version=1, verbose=True) is False
    assert checked.test_compatibility_all_versions("a-value", avro(A3)) is True
    assert checked.test_compatibility_all_versions("a-value", avro(required), verbose=True) is False
    assert checked.test_compatibility("nobody-value", avro(A1)) is True  # nothing to be compatible with
    assert error_of(lambda: checked.test_compatibility("a-value", avro(A3), version=7)) == (404, 40402)
    assert error_of(lambda: checked.test_compatibility("a-value", avro("{"))) == (422, 42201)


def test_test_compatibility_transitive(checked: SchemaRegistryClient) -> None:
    """``.../versions`` (every version) against ``.../versions/latest``: FORWARD_TRANSITIVE reads the
    new schema with every old reader; only the oldest lacks the field the new schema drops."""
    wide = json.dumps({"type": "record", "name": "A", "fields": [{"name": "x", "type": "string"}]})
    checked.set_compatibility("a-value", "FORWARD_TRANSITIVE")
    checked.register_schema("a-value", avro(wide))
    checked.register_schema("a-value", avro(A2))
    assert checked.test_compatibility("a-value", avro(A2), normalize=True) is True
    assert checked.test_compatibility_all_versions("a-value", avro(A2), normalize=True) is True


def test_modes(client: SchemaRegistryClient) -> None:
    assert client.get_global_mode() == "READWRITE"
    client.register_schema("a-value", avro(A1))
    assert error_of(lambda: client.get_mode("a-value")) == (404, 40409)
    assert client.update_mode("a-value", "READONLY") == "READONLY"
    assert client.get_mode("a-value") == "READONLY"
    assert error_of(lambda: client.register_schema("a-value", avro(A2))) == (422, 42205)
    assert error_of(lambda: client.delete_version("a-value", 1)) == (422, 42205)
    assert client.delete_mode("a-value") == "READONLY"  # Confluent answers the mode it deleted
    assert error_of(lambda: client.get_mode("a-value")) == (404, 40409)
    assert client.register_schema("a-value", avro(A2)) == 2
    assert client.update_global_mode("READONLY") == "READONLY"
    assert client.get_global_mode() == "READONLY"
    assert error_of(lambda: client.register_schema("b-value", avro(A3))) == (422, 42205)
    assert client.update_global_mode("READWRITE") == "READWRITE"
    assert error_of(lambda: client.update_mode("a-value", "SOMETIMES")) == (422, 42204)


def test_import_mode_needs_force_on_a_subject_with_schemas(client: SchemaRegistryClient) -> None:
    client.register_schema("a-value", avro(A1))
    assert error_of(lambda: client.update_mode("a-value", "IMPORT")) == (422, 42205)
    assert client.update_mode("a-value", "IMPORT", force=True) == "IMPORT"
    assert client.update_global_mode("IMPORT", force=True) == "IMPORT"
    assert client.get_global_mode() == "IMPORT"


def test_get_contexts(client: SchemaRegistryClient) -> None:
    assert client.get_contexts() == ["."]  # the default context, always listed
    client.register_schema("a-value", avro(A1))
    assert client.get_contexts(offset=1) == []


def test_associations(client: SchemaRegistryClient) -> None:
    client.register_schema("orders-value", avro(A1))
    assert client.get_associations_by_resource_name("orders", "lkc-1") == []
    request = AssociationCreateOrUpdateRequest(
        resource_name="orders",
        resource_namespace="lkc-1",
        resource_id="topic-orders",
        resource_type="topic",
        associations=[AssociationCreateOrUpdateInfo(subject="orders-value", association_type="value")],
    )
    created = client.create_association(request)
    assert created.resource_id == "topic-orders" and created.associations is not None
    assert [a.subject for a in created.associations] == ["orders-value"]
    found = client.get_associations_by_resource_name("orders", "lkc-1")
    assert [(a.subject, a.association_type) for a in found] == [("orders-value", "value")]
    client.delete_associations("topic-orders")
    assert client.get_associations_by_resource_name("orders", "lkc-1") == []


def test_strong_association_with_its_schema(client: SchemaRegistryClient) -> None:
    """A topic-owned (STRONG, frozen) association registers its schema; only a cascading delete removes it."""
    request = AssociationCreateOrUpdateRequest(
        resource_name="payments",
        resource_namespace="lkc-1",
        resource_id="topic-payments",
        associations=[AssociationCreateOrUpdateInfo(association_type="key", schema=avro(A1))],
    )
    created = client.create_association(request)
    assert created.associations is not None
    (info,) = created.associations
    assert (info.subject, info.lifecycle, info.frozen) == (":.lkc-1:payments-key", "STRONG", True)
    assert info.schema is not None and info.schema.schema_str == A1
    assert client.get_latest_version(":.lkc-1:payments-key").version == 1
    found = client.get_associations_by_resource_name("payments", "-", resource_type="topic", association_types=["key"])
    assert [a.resource_id for a in found] == ["topic-payments"]
    assert error_of(lambda: client.delete_associations("topic-payments")) == (409, 40908)
    client.delete_associations("topic-payments", cascade_lifecycle=True)
    assert client.get_subjects() == []


def test_config_defaults_and_overrides_are_refused_not_ignored(
    client: SchemaRegistryClient, registry: Registry
) -> None:
    """Deliberate difference: Confluent merges a config's defaultRuleSet < the schema's own < its
    overrideRuleSet into every registration; this registry does not, so it refuses them (422) rather
    than register schemas without the rules the config names; likewise the other members it does not
    apply (``normalize``, ``validateFields``...)."""
    for config in (ServerConfig(override_rule_set=RULE_SET), ServerConfig(default_rule_set=RULE_SET)):
        assert error_of(lambda config=config: client.set_config("a-value", config)) == (422, 42210)
    assert error_of(lambda: client.set_config(config=ServerConfig(default_metadata=METADATA))) == (422, 422)
    for member in ("normalize", "validateFields"):  # members confluent-kafka's ServerConfig does not send
        status, answer = registry.call("PUT", "/config/a-value", {member: True})
        assert (status, answer["error_code"]) == (422, 422) and member in answer["message"]
    assert error_of(lambda: client.get_config("a-value")) == (404, 40408)  # nothing was stored


def test_rule_set_enable_at(client: SchemaRegistryClient, registry: Registry) -> None:
    """``RuleSet.enableAt`` (Confluent's ExecutionEnvironment) is stored, answered and part of the identity."""
    rules = RULE_SET.to_dict()
    at_client = avro(A1, rule_set=RuleSet.from_dict({**rules, "enableAt": "CLIENT"}))
    registered = client.register_schema_full_response("a-value", at_client)
    assert fresh(registry).get_schema(registered.schema_id) == at_client
    assert fresh(registry).get_schema(registered.schema_id).rule_set.enable_at == "CLIENT"
    at_server = avro(A1, rule_set=RuleSet.from_dict({**rules, "enableAt": "SERVER"}))
    assert client.register_schema("a-value", at_server) == registered.schema_id + 1
    body = {"schema": A1, "ruleSet": {**rules, "enableAt": "SOMETIMES"}}
    status, answer = registry.call("POST", "/subjects/a-value/versions", body)
    assert (status, answer["error_code"]) == (400, 400) and "ExecutionEnvironment" in answer["message"]
