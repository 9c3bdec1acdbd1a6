"""A subject version another schema references cannot be deleted (Confluent's 422/42206)."""

from __future__ import annotations

import json

from tests.registry.conftest import Registry, avro_record


def test_referenced_version_cannot_be_deleted(registry: Registry) -> None:
    assert registry.register("money", avro_record("acme.Money", "units"))[0] == 200
    user = json.dumps({"type": "record", "name": "Pay", "fields": [{"name": "m", "type": "acme.Money"}]})
    body = {"schema": user, "references": [{"name": "acme.Money", "subject": "money", "version": 1}]}
    assert registry.call("POST", "/subjects/pay-value/versions", body)[0] == 200
    message = "One or more references exist to the schema {subject=money, version=1}."
    for path in ("/subjects/money/versions/1", "/subjects/money", "/subjects/money?permanent=true"):
        assert registry.call("DELETE", path) == (422, {"error_code": 42206, "message": message}), path
    assert registry.call("GET", "/subjects/money/versions/1")[0] == 200
    # once the referring subject is gone for good, the referenced one can go
    assert registry.call("DELETE", "/subjects/pay-value")[0] == 200
    assert registry.call("DELETE", "/subjects/pay-value?permanent=true")[0] == 200
    assert registry.call("DELETE", "/subjects/money/versions/1") == (200, 1)


def test_deleted_true_reads_a_soft_deleted_version(registry: Registry) -> None:
    assert registry.register("s", avro_record("R", "a"))[0] == 200
    assert registry.call("DELETE", "/subjects/s/versions/1") == (200, 1)
    assert registry.call("GET", "/subjects/s/versions/1")[1]["error_code"] == 40401
    status, found = registry.call("GET", "/subjects/s/versions/1?deleted=true")
    assert status == 200 and found["version"] == 1 and found["subject"] == "s"


def test_soft_deleted_referrers_block_only_a_permanent_delete(registry: Registry) -> None:
    """Confluent's getReferencedBy(key, permanent): a soft delete counts live referrers only."""
    assert registry.register("money", avro_record("acme.Money", "units"))[0] == 200
    user = json.dumps({"type": "record", "name": "Pay", "fields": [{"name": "m", "type": "acme.Money"}]})
    body = {"schema": user, "references": [{"name": "acme.Money", "subject": "money", "version": 1}]}
    assert registry.call("POST", "/subjects/pay-value/versions", body)[0] == 200
    assert registry.call("DELETE", "/subjects/pay-value")[0] == 200  # the referrer soft-deleted
    assert registry.call("DELETE", "/subjects/money/versions/1") == (200, 1)
    assert registry.call("DELETE", "/subjects/money/versions/1?permanent=true")[1]["error_code"] == 42206
    assert registry.call("DELETE", "/subjects/money?permanent=true")[1]["error_code"] == 42206
    assert registry.call("DELETE", "/subjects/pay-value?permanent=true")[0] == 200
    assert registry.call("DELETE", "/subjects/money?permanent=true") == (200, [1])


def test_a_subject_referencing_its_own_version_can_be_deleted(registry: Registry) -> None:
    assert registry.register("s", avro_record("acme.Money", "units"))[0] == 200
    user = json.dumps({"type": "record", "name": "Pay", "fields": [{"name": "m", "type": "acme.Money"}]})
    body = {"schema": user, "references": [{"name": "acme.Money", "subject": "s", "version": 1}]}
    assert registry.call("POST", "/subjects/s/versions", body)[0] == 200
    assert registry.call("DELETE", "/subjects/s/versions/1")[1]["error_code"] == 42206  # a version delete counts it
    assert registry.call("DELETE", "/subjects/s") == (200, [1, 2])
    assert registry.call("DELETE", "/subjects/s?permanent=true") == (200, [1, 2])
