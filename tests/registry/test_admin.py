"""Admin endpoints as Confluent's Root, Contexts, Config and Mode resources answer them."""

from __future__ import annotations

from tests.registry.conftest import Registry, avro_record


def test_root_and_contexts(registry: Registry) -> None:
    assert registry.call("GET", "/") == (200, {})
    assert registry.call("GET", "/contexts") == (200, ["."])
    assert registry.call("GET", "/contexts?contextPrefix=.") == (200, ["."])
    assert registry.call("GET", "/contexts?contextPrefix=:x") == (200, [])
    assert registry.call("GET", "/contexts?offset=1") == (200, [])


def test_delete_global_config_answers_it_and_restores_the_default(registry: Registry) -> None:
    assert registry.call("GET", "/config") == (200, {"compatibilityLevel": "FULL_TRANSITIVE"})
    assert registry.call("DELETE", "/config") == (200, {"compatibilityLevel": "FULL_TRANSITIVE"})
    assert registry.call("PUT", "/config", {"compatibility": "BACKWARD"})[0] == 200
    assert registry.call("DELETE", "/config") == (200, {"compatibilityLevel": "BACKWARD"})
    assert registry.call("GET", "/config") == (200, {"compatibilityLevel": "FULL_TRANSITIVE"})
    log = registry.call("GET", "/config/log")[1]
    assert (log[-1]["old"], log[-1]["new"]) == ("BACKWARD", None)


def test_delete_subject_config(registry: Registry) -> None:
    assert registry.register("s", avro_record("A", "x"))[0] == 200
    assert registry.call("DELETE", "/config/s") == (404, {"error_code": 40401, "message": "Subject 's' not found."})
    assert registry.call("PUT", "/config/s", {"compatibility": "FORWARD"})[0] == 200
    assert registry.call("PUT", "/config/s", {"compatibilityGroup": "major"})[0] == 200
    answer = {"compatibilityLevel": "FORWARD", "compatibilityGroup": "major"}
    assert registry.call("DELETE", "/config/s") == (200, answer)
    assert registry.call("GET", "/config/s")[1]["error_code"] == 40408
    assert registry.call("GET", "/config/s?defaultToGlobal=true") == (200, {"compatibilityLevel": "FULL_TRANSITIVE"})
    assert registry.call("DELETE", "/config/s")[1]["error_code"] == 40401


def test_delete_mode(registry: Registry) -> None:
    assert registry.call("DELETE", "/mode") == (200, {"mode": "READWRITE"})
    assert registry.call("PUT", "/mode", {"mode": "READONLY"})[0] == 200
    assert registry.call("PUT", "/mode/s", {"mode": "READWRITE"})[0] == 200
    assert registry.call("DELETE", "/mode") == (200, {"mode": "READONLY"})
    assert registry.call("GET", "/mode") == (200, {"mode": "READWRITE"})
    assert registry.call("GET", "/mode/s") == (200, {"mode": "READWRITE"})  # not recursive: kept
    assert registry.call("DELETE", "/mode/s") == (200, {"mode": "READWRITE"})
    assert registry.call("DELETE", "/mode/s") == (404, {"error_code": 40401, "message": "Subject 's' not found."})
    assert registry.call("DELETE", "/mode/s?recursive=true") == (200, {"mode": None})
    assert registry.call("PUT", "/mode/t", {"mode": "READONLY"})[0] == 200
    assert registry.call("DELETE", "/mode?recursive=true") == (200, {"mode": "READWRITE"})
    assert registry.call("GET", "/mode/t")[1]["error_code"] == 40409


def test_admin_writes_need_the_credentials(auth_registry: Registry) -> None:
    for path in ("/config", "/config/s", "/mode", "/mode/s"):
        assert auth_registry.call("DELETE", path)[1]["error_code"] == 40101, path
    assert auth_registry.call("DELETE", "/mode", headers={"Authorization": "Bearer s3cret"})[0] == 200
    assert auth_registry.call("GET", "/") == (200, {})
    assert auth_registry.call("GET", "/contexts") == (200, ["."])
