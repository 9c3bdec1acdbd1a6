"""``/associations`` as Confluent 8's ``AssociationsResource`` answers it: statuses, error codes and
messages from its ``RestApiAssociationTest`` and ``AbstractSchemaRegistry.createOrUpdateAssociation``,
on the SQLite and PostgreSQL stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.registry.conftest import Registry, avro_record

A1 = avro_record("A", "x")
A2 = avro_record("B", "y")


def request(resource_id: str, *infos: dict[str, Any], name: str = "topic1", namespace: str = "default") -> dict:
    return {
        "resourceName": name,
        "resourceNamespace": namespace,
        "resourceId": resource_id,
        "resourceType": "topic",
        "associations": list(infos),
    }


def weak(subject: str, kind: str = "value") -> dict[str, Any]:
    return {"subject": subject, "associationType": kind, "lifecycle": "WEAK"}


def error(answer: tuple[int, Any]) -> tuple[int, int, str]:
    return answer[0], answer[1]["error_code"], answer[1]["message"]


def invalid(prop: str, detail: str) -> tuple[int, int, str]:
    return 422, 42212, f"The association specified an invalid value for property: '{prop}', detail: {detail}"


def test_weak_association_created_read_and_deleted(registry: Registry) -> None:
    assert registry.register("subject1", A1)[0] == 200
    status, created = registry.call("POST", "/associations", request("r-1", weak("subject1", "key")))
    assert status == 200
    assert created == {
        "resourceName": "topic1",
        "resourceNamespace": "default",
        "resourceId": "r-1",
        "resourceType": "topic",
        "associations": [{"subject": "subject1", "associationType": "key", "lifecycle": "WEAK", "frozen": False}],
    }
    entity = {
        "subject": "subject1",
        "resourceName": "topic1",
        "resourceNamespace": "default",
        "resourceId": "r-1",
        "resourceType": "topic",
        "associationType": "key",
        "lifecycle": "WEAK",
        "frozen": False,
    }
    assert registry.call("GET", "/associations/resources/default/topic1") == (200, [entity])
    assert registry.call("GET", "/associations/resources/-/topic1") == (200, [entity])  # any namespace
    assert registry.call("GET", "/associations/resources/other/topic1") == (200, [])
    assert registry.call("GET", "/associations/resources/default/topic1?associationType=value") == (200, [])
    assert registry.call("GET", "/associations/resources/default/topic1?lifecycle=STRONG") == (200, [])
    assert registry.call("GET", "/associations/resources/r-1") == (200, [entity])
    assert registry.call("GET", "/associations/subjects/subject1") == (200, [entity])
    # the same create again is idempotent; with another subject it conflicts (40903)
    assert registry.call("POST", "/associations", request("r-1", weak("subject1", "key")))[0] == 200
    assert registry.register("subject2", A1)[0] == 200
    assert error(registry.call("POST", "/associations", request("r-1", weak("subject2", "key")))) == (
        409,
        40903,
        "An association of type 'key' already exists for resource 'topic1'",
    )
    assert registry.call("DELETE", "/associations/resources/r-1") == (204, None)
    assert registry.call("GET", "/associations/resources/default/topic1") == (200, [])
    assert error(registry.call("DELETE", "/associations/resources/r-1")) == (
        404,
        40410,
        "Association for 'r-1' not found.",
    )
    assert registry.call("GET", "/subjects/subject1/versions") == (200, [1])  # a WEAK delete keeps the subject


def test_delete_by_association_type_keeps_the_others(registry: Registry) -> None:
    for subject in ("k", "v"):
        assert registry.register(subject, A1)[0] == 200
    assert registry.call("POST", "/associations", request("r-2", weak("k", "key"), weak("v")))[0] == 200
    assert registry.call("DELETE", "/associations/resources/r-2?associationType=key")[0] == 204
    assert [a["subject"] for a in registry.call("GET", "/associations/resources/r-2")[1]] == ["v"]


def test_strong_association_registers_its_schema_under_the_topic_subject(registry: Registry) -> None:
    """testCreateWithSchemaDefaultsToStrongFrozen, testAssociationFrozen."""
    body = request("r-3", {"associationType": "key", "schema": {"schema": A1}})
    status, created = registry.call("POST", "/associations", body)
    assert status == 200
    (info,) = created["associations"]
    assert (info["subject"], info["lifecycle"], info["frozen"]) == (":.default:topic1-key", "STRONG", True)
    assert (info["schema"]["version"], info["schema"]["subject"]) == (1, ":.default:topic1-key")
    assert registry.call("GET", "/subjects/:.default:topic1-key/versions") == (200, [1])
    assert registry.call("POST", "/associations", body)[0] == 200  # the same schema again: idempotent
    assert error(registry.call("DELETE", "/associations/resources/r-3")) == (
        409,
        40908,
        "The association of type  'key' is frozen for subject ':.default:topic1-key'",
    )
    # a WEAK association to a strongly held subject, from another resource (40905)
    other = request("r-4", weak(":.default:topic1-key"), name="topic2")
    assert error(registry.call("POST", "/associations", other)) == (
        409,
        40905,
        "A strong association already exists for subject ':.default:topic1-key'",
    )
    assert registry.call("DELETE", "/associations/resources/r-3?cascadeLifecycle=true")[0] == 204
    assert registry.call("GET", "/subjects/:.default:topic1-key/versions")[1]["error_code"] == 40401


def test_strong_association_on_a_shared_subject_conflicts(registry: Registry) -> None:
    """testAssociationForSubjectExists (40904); testNoActiveSubjectVersionExists (40907)."""
    assert registry.register(":.default:topic2-value", A1)[0] == 200
    assert registry.call("POST", "/associations", request("r-5", weak(":.default:topic2-value")))[0] == 200
    strong = {"associationType": "value", "schema": {"schema": A1}}
    assert error(registry.call("POST", "/associations", request("r-6", strong, name="topic2"))) == (
        409,
        40904,
        "An association already exists for subject ':.default:topic2-value'",
    )
    assert error(registry.call("POST", "/associations", request("r-7", weak("nothing")))) == (
        409,
        40907,
        "No active (non-deleted) version exists for subject 'nothing'",
    )


def test_frozen_association_needs_a_fresh_subject(registry: Registry) -> None:
    """testAssociationFrozen: without a schema; on a subject that already holds another one."""
    frozen = {"associationType": "key", "lifecycle": "STRONG", "frozen": True}
    assert error(registry.call("POST", "/associations", request("r-8", frozen))) == invalid(
        "schema", "schema must be provided when creating a frozen association"
    )
    assert registry.register(":.default:topic3-key", A2)[0] == 200
    with_schema = {**frozen, "schema": {"schema": A1}}
    assert error(registry.call("POST", "/associations", request("r-9", with_schema, name="topic3"))) == invalid(
        "frozen", "cannot create a frozen association when schemas already exist in the subject"
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"resourceName": ""}, ("resourceName", "cannot be null or empty")),
        ({"resourceNamespace": "a.b"}, ("resourceNamespace", "illegal character '.'")),
        ({"resourceName": "t" * 257}, ("resourceName", "exceeds max length of 256")),
        ({"resourceId": None}, ("resourceId", "cannot be null or empty")),
        ({"resourceType": "table"}, ("resourceType", "must be 'topic'")),
        ({"associations": []}, ("associations", "cannot be null or empty")),
        (
            {"associations": [{"subject": "s", "associationType": "header"}]},
            ("associationType", "must be either 'key' or 'value'"),
        ),
        ({"associations": [{"associationType": "value"}]}, ("subject", "must be provided for WEAK associations")),
        (
            {"associations": [weak(":.default:topic1-value")]},
            ("subject", "WEAK associations cannot use subject ':.default:topic1-value'"),
        ),
        (
            {"associations": [{**weak("s"), "frozen": True}]},
            ("frozen", "association with lifecycle of WEAK cannot be frozen=true"),
        ),
        (
            {"associations": [{**weak("s"), "schema": {"schema": A1}}]},
            ("lifecycle", "cannot be WEAK when schema is provided"),
        ),
        (
            {"associations": [{"associationType": "value", "frozen": False, "schema": {"schema": A1}}]},
            ("frozen", "cannot be false when a schema is provided"),
        ),
        (
            {"associations": [{"subject": "custom", "lifecycle": "STRONG", "schema": {"schema": A1}}]},
            ("subject", "frozen associations must use subject ':.default:topic1-value'"),
        ),
        (
            {"associations": [weak("s"), weak("t")]},
            ("associationType", "may only appear once per request, but 'value' appears more than once"),
        ),
    ],
)
def test_invalid_requests_answer_42212(registry: Registry, change: dict[str, Any], expected: tuple[str, str]) -> None:
    assert registry.register("s", A1)[0] == 200
    body = {**request("r-10", weak("s")), **change}
    assert error(registry.call("POST", "/associations", body)) == invalid(*expected)
    assert registry.call("GET", "/associations/resources/r-10") == (200, [])  # nothing written


def test_mixed_lifecycles_on_one_resource_are_refused(registry: Registry) -> None:
    """testCreateMixedLifecyclesInOneRequestFails, testAddStrongWhenWeakExistsForOtherTypeFails."""
    assert registry.register("s", A1)[0] == 200
    assert registry.call("POST", "/associations", request("r-11", weak("s")))[0] == 200
    strong_key = {"associationType": "key", "schema": {"schema": A1}}
    assert error(registry.call("POST", "/associations", request("r-11", strong_key))) == invalid(
        "lifecycle", "all associations for a resource must have the same lifecycle, but got value=WEAK, key=STRONG"
    )
    assert registry.call("GET", "/subjects/:.default:topic1-key/versions")[1]["error_code"] == 40401


def test_dry_run_writes_nothing(registry: Registry) -> None:
    assert registry.register("s", A1)[0] == 200
    assert registry.call("POST", "/associations?dryRun=true", request("r-12", weak("s")))[1]["associations"] == []
    assert registry.call("GET", "/associations/resources/r-12") == (200, [])


def test_an_associated_subject_keeps_a_live_version(registry: Registry) -> None:
    """RestApiAssociationTest's hard delete with an association: soft-deleting v1 is allowed while v2
    lives, hard-deleting it too; soft-deleting the last live version is not (40907), nor is deleting
    the subject (KafkaSchemaRegistry.deleteSubject: 40904)."""
    assert registry.register("subject1", A1)[0] == 200
    assert registry.register("subject1", A2)[0] == 200
    assert registry.call("POST", "/associations", request("r-13", weak("subject1", "key")))[0] == 200
    assert registry.call("DELETE", "/subjects/subject1/versions/1") == (200, 1)
    assert registry.call("DELETE", "/subjects/subject1/versions/1?permanent=true") == (200, 1)
    assert error(registry.call("DELETE", "/subjects/subject1/versions/2")) == (
        409,
        40907,
        "No active (non-deleted) version exists for subject 'subject1'",
    )
    assert error(registry.call("DELETE", "/subjects/subject1")) == (
        409,
        40904,
        "An association already exists for subject 'subject1'",
    )
    assert registry.call("GET", "/subjects/subject1/versions") == (200, [2])
    assert registry.call("DELETE", "/associations/resources/r-13")[0] == 204
    assert registry.call("DELETE", "/subjects/subject1") == (200, [2])


def test_a_strongly_associated_subject_is_not_a_reference_target(registry: Registry) -> None:
    """KafkaSchemaRegistry.register: 'has a strong association and cannot be referenced' (42205)."""
    body = request("r-14", {"associationType": "value", "schema": {"schema": A1}})
    assert registry.call("POST", "/associations", body)[0] == 200
    referring = {
        "schema": '{"type":"record","name":"R","fields":[{"name":"a","type":"A"}]}',
        "references": [{"name": "A", "subject": ":.default:topic1-value", "version": 1}],
    }
    assert error(registry.call("POST", "/subjects/r/versions", referring)) == (
        422,
        42205,
        "Subject ':.default:topic1-value' has a strong association and cannot be referenced",
    )


def test_what_is_not_provided_answers_so(registry: Registry) -> None:
    """The upsert and the batch operations (see docs/registry.md's REST table)."""
    assert registry.call("PUT", "/associations/resources/r-15", request("r-15", weak("s")))[0] == 405
    assert registry.call("POST", "/associations:batchGet", {"requests": [{"resourceId": "r-15"}]})[0] == 404


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_associations_outlive_the_server(store: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Stored in the registry's database (a table created on an older store too), not in the process."""
    db = tmp_path / "registry.sqlite" if store == "sqlite" else request.getfixturevalue("postgres_db")
    first = Registry(db)
    try:
        assert first.register("s", A1)[0] == 200
        assert first.call("POST", "/associations", request_body("r-16"))[0] == 200
    finally:
        first.close()
    second = Registry(db)
    try:
        assert [a["subject"] for a in second.call("GET", "/associations/resources/default/topic1")[1]] == ["s"]
    finally:
        second.close()


def request_body(resource_id: str) -> dict[str, Any]:
    return request(resource_id, weak("s"))
