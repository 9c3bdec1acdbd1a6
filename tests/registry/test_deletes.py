"""Deletes with Confluent's codes (``KafkaSchemaRegistry.deleteSubject``/``deleteSchemaVersion``, ``Errors``)."""

from __future__ import annotations

from tests.registry.conftest import Registry, avro_record

SOFT_SUBJECT = "Subject 's' was soft deleted.Set permanent=true to delete permanently"
NOT_SOFT_SUBJECT = "Subject 's' was not deleted first before being permanently deleted"


def _three(registry: Registry) -> None:
    for field in ("a", "b", "c"):
        assert registry.register("s", avro_record("T", field))[0] == 200


def test_subject_delete_codes(registry: Registry) -> None:
    _three(registry)
    assert registry.call("DELETE", "/subjects/nope") == (
        404,
        {"error_code": 40401, "message": "Subject 'nope' not found."},
    )
    assert registry.call("DELETE", "/subjects/nope?permanent=true")[1]["error_code"] == 40401
    assert registry.call("DELETE", "/subjects/s?permanent=true") == (
        404,
        {"error_code": 40405, "message": NOT_SOFT_SUBJECT},
    )
    assert registry.call("DELETE", "/subjects/s") == (200, [1, 2, 3])
    assert registry.call("DELETE", "/subjects/s") == (404, {"error_code": 40404, "message": SOFT_SUBJECT})
    assert registry.call("DELETE", "/subjects/s?permanent=true") == (200, [1, 2, 3])
    assert registry.call("DELETE", "/subjects/s?permanent=true")[1]["error_code"] == 40401
    assert registry.call("GET", "/subjects?deleted=true") == (200, [])


def test_permanent_subject_delete_forgets_its_mode_and_compatibility(registry: Registry) -> None:
    _three(registry)
    assert registry.call("PUT", "/config/s", {"compatibility": "BACKWARD"})[0] == 200
    assert registry.call("PUT", "/mode/s", {"mode": "READWRITE"})[0] == 200
    assert registry.call("DELETE", "/subjects/s")[0] == 200
    assert registry.call("GET", "/config/s")[0] == 200  # a soft delete keeps them
    assert registry.call("DELETE", "/subjects/s?permanent=true")[0] == 200
    assert registry.call("GET", "/config/s")[1]["error_code"] == 40408
    assert registry.call("GET", "/mode/s")[1]["error_code"] == 40409


def test_version_delete_codes(registry: Registry) -> None:
    _three(registry)
    not_soft = "Subject 's' Version 2 was not deleted first before being permanently deleted"
    assert registry.call("DELETE", "/subjects/s/versions/2?permanent=true") == (
        404,
        {"error_code": 40407, "message": not_soft},
    )
    assert registry.call("GET", "/subjects/s/versions") == (200, [1, 2, 3])  # not soft-deleted on the way
    assert registry.call("DELETE", "/subjects/s/versions/2") == (200, 2)
    soft = "Subject 's' Version 2 was soft deleted.Set permanent=true to delete permanently"
    assert registry.call("DELETE", "/subjects/s/versions/2") == (404, {"error_code": 40406, "message": soft})
    assert registry.call("GET", "/subjects/s/versions?deleted=true") == (200, [1, 2, 3])
    assert registry.call("DELETE", "/subjects/s/versions/2?permanent=true") == (200, 2)
    assert registry.call("GET", "/subjects/s/versions?deleted=true") == (200, [1, 3])
    assert registry.call("DELETE", "/subjects/s/versions/2?permanent=true")[1]["error_code"] == 40402
    assert registry.call("DELETE", "/subjects/s/versions/9")[1]["error_code"] == 40402
    assert registry.call("DELETE", "/subjects/nope/versions/1")[1]["error_code"] == 40401
    assert registry.call("DELETE", "/subjects/s/versions/x")[1]["error_code"] == 42202
    # latest is the newest live version; with permanent=true, the newest one
    assert registry.call("DELETE", "/subjects/s/versions/latest") == (200, 3)
    assert registry.call("DELETE", "/subjects/s/versions/latest") == (200, 1)
    assert registry.call("DELETE", "/subjects/s/versions/latest?permanent=true") == (200, 3)
    assert registry.call("DELETE", "/subjects/s/versions/1?permanent=true") == (200, 1)
    assert registry.call("GET", "/subjects?deleted=true") == (200, [])


def test_a_subject_with_only_soft_deleted_versions_answers_40402_for_a_missing_version(registry: Registry) -> None:
    _three(registry)
    assert registry.call("DELETE", "/subjects/s")[0] == 200
    assert registry.call("DELETE", "/subjects/s/versions/9")[1]["error_code"] == 40402
    assert registry.call("DELETE", "/subjects/s/versions/1")[1]["error_code"] == 40406
