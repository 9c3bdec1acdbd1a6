"""The schema registry on a real socket: the Confluent client, raw HTTP for every endpoint and code."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import stop
from tests.registry.conftest import Registry, avro_record, id_only
from tscontract.registry import default_compat, main
from tscontract.registry.guids import schema_guid

# a new field without a default: new readers cannot read old data, so BACKWARD (and FULL) fails
AVRO_NO_DEFAULT = json.dumps(
    {
        "type": "record",
        "name": "T",
        "fields": [{"name": "a", "type": "string", "default": ""}, {"name": "z", "type": "long"}],
    }
)


# -- the real Confluent client ---------------------------------------------------------------


def test_confluent_client_round_trip(registry: Registry) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError
    from confluent_kafka.schema_registry.schema_registry_client import ConfigCompatibilityLevel, ServerConfig

    client = SchemaRegistryClient({"url": registry.url})
    v1 = Schema(avro_record("Bar", "symbol"), "AVRO")
    schema_id = client.register_schema("bars-value", v1)
    assert schema_id == client.register_schema("bars-value", v1)
    latest = client.get_latest_version("bars-value")
    assert (latest.version, latest.schema_id, latest.subject) == (1, schema_id, "bars-value")
    assert json.loads(latest.schema.schema_str) == json.loads(v1.schema_str)

    found = client.lookup_schema("bars-value", v1)
    assert (found.version, found.schema_id) == (1, schema_id)
    with pytest.raises(SchemaRegistryError) as missing:
        client.lookup_schema("bars-value", Schema(avro_record("Bar", "other"), "AVRO"))
    assert missing.value.error_code == 40403

    v2 = Schema(avro_record("Bar", "symbol", "venue"), "AVRO")
    assert client.test_compatibility("bars-value", v2) is True

    client.set_config("bars-value", ServerConfig(compatibility=ConfigCompatibilityLevel.BACKWARD))
    assert str(client.get_config("bars-value").compatibility_level) == "BACKWARD"
    client.set_config(config=ServerConfig(compatibility=ConfigCompatibilityLevel.FORWARD_TRANSITIVE))
    assert str(client.get_config().compatibility_level) == "FORWARD_TRANSITIVE"

    json_id = client.register_schema("quotes-value", Schema('{"type": "object"}', "JSON"))
    assert json_id != schema_id
    assert client.get_schema(json_id).schema_type == "JSON"

    assert client.delete_subject("bars-value") == [1]
    assert "bars-value" not in client.get_subjects()


def test_confluent_client_sees_incompatible(default_registry: Registry) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    client = SchemaRegistryClient({"url": default_registry.url})
    client.register_schema("s", Schema(avro_record("T", "a"), "AVRO"))
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("s", Schema(AVRO_NO_DEFAULT, "AVRO"))
    assert refused.value.http_status_code == 409


# -- raw HTTP: every endpoint ------------------------------------------------------------------


def test_register_same_schema_same_id_and_reuse_across_subjects(registry: Registry) -> None:
    schema = avro_record("T", "a")
    assert id_only(registry.register("one", schema)) == (200, {"id": 1})
    assert id_only(registry.register("one", schema)) == (200, {"id": 1})
    assert registry.call("GET", "/subjects/one/versions") == (200, [1])
    assert id_only(registry.register("two", schema)) == (200, {"id": 1})
    assert registry.call("GET", "/subjects/two/versions/latest")[1]["id"] == 1
    assert id_only(registry.register("one", avro_record("T", "a", "b"))) == (200, {"id": 2})
    assert registry.call("GET", "/subjects") == (200, ["one", "two"])
    # plain application/json is accepted too
    assert id_only(registry.register("one", schema, content_type="application/json")) == (200, {"id": 1})


def test_get_versions_and_schemas(registry: Registry) -> None:
    a, b = avro_record("T", "a"), avro_record("T", "a", "b")
    registry.register("s", a)
    registry.register("s", b)
    assert registry.call("GET", "/subjects/s/versions") == (200, [1, 2])
    v1 = {"subject": "s", "version": 1, "id": 1, "schema": a, "guid": schema_guid(a, [])}
    assert registry.call("GET", "/subjects/s/versions/1") == (200, v1)
    assert registry.call("GET", "/subjects/s/versions/latest")[1]["version"] == 2
    assert registry.call("GET", "/subjects/s/versions/-1")[1]["version"] == 2
    assert registry.call("GET", "/subjects/s/versions/2/schema") == (200, json.loads(b))
    assert registry.call("GET", "/schemas/ids/2") == (200, {"schema": b, "guid": schema_guid(b, [])})
    assert registry.call("GET", "/schemas/types")[1] == ["AVRO", "PROTOBUF", "JSON"]

    proto = 'syntax = "proto3";\nmessage M {\n  string a = 1;\n}\n'  # canonical: stored as written
    status, body = registry.register("p", proto, "PROTOBUF")
    assert status == 200
    answer = {"schema": proto, "schemaType": "PROTOBUF", "guid": schema_guid(proto, [])}
    assert registry.call("GET", f"/schemas/ids/{body['id']}") == (200, answer)
    assert registry.call("GET", "/subjects/p/versions/1")[1]["schemaType"] == "PROTOBUF"


def test_lookup(registry: Registry) -> None:
    schema = avro_record("T", "a")
    registry.register("s", schema)
    assert registry.call("POST", "/subjects/s", {"schema": schema}) == (
        200,
        {"subject": "s", "version": 1, "id": 1, "schema": schema, "guid": schema_guid(schema, [])},
    )
    status, body = registry.call("POST", "/subjects/s", {"schema": avro_record("T", "zzz")})
    assert (status, body["error_code"]) == (404, 40403)
    status, body = registry.call("POST", "/subjects/nope", {"schema": schema})
    assert (status, body["error_code"]) == (404, 40401)


def test_error_codes(registry: Registry) -> None:
    registry.register("s", avro_record("T", "a"))
    cases = [
        (("GET", "/subjects/nope/versions"), 404, 40401),
        (("GET", "/subjects/nope/versions/1"), 404, 40401),
        (("GET", "/subjects/s/versions/7"), 404, 40402),
        (("GET", "/subjects/s/versions/zero"), 422, 42202),
        (("GET", "/schemas/ids/99"), 404, 40403),
        (("POST", "/subjects/s/versions", {"schema": "{not json"}), 422, 42201),
        (("POST", "/subjects/s/versions", {"schema": '{"type": "record"}'}), 422, 42201),
        (("POST", "/subjects/s/versions", {"schema": '{"type": 12}', "schemaType": "JSON"}), 422, 42201),
        (("POST", "/subjects/s/versions", {"schema": "  ", "schemaType": "PROTOBUF"}), 422, 42201),
        (("POST", "/subjects/s/versions", {"schema": "x", "schemaType": "XML"}), 422, 42201),
        (("POST", "/subjects/s/versions", {}), 422, 42201),
        (("PUT", "/config", {"compatibility": "SIDEWAYS"}), 422, 42203),
        (("PUT", "/config/s", {}), 422, 42203),
        (("GET", "/config/s"), 404, 40408),
        (("DELETE", "/subjects/nope"), 404, 40401),
        (("DELETE", "/subjects/s/versions/9"), 404, 40402),
        (("POST", "/compatibility/subjects/nope/versions/3", {"schema": avro_record("T", "a")}), 404, 40402),
        (("POST", "/compatibility/subjects/s/versions/5", {"schema": avro_record("T", "a")}), 404, 40402),
        (("GET", "/nowhere"), 404, 404),
        (("PUT", "/subjects"), 405, 405),
    ]
    for args, status, code in cases:
        got_status, body = registry.call(*args)
        assert (got_status, body.get("error_code")) == (status, code), (args, body)
        assert isinstance(body["message"], str) and body["message"]


def test_delete_subject_and_version(registry: Registry) -> None:
    registry.register("s", avro_record("T", "a"))
    registry.register("s", avro_record("T", "a", "b"))
    registry.register("s", avro_record("T", "a", "b", "c"))
    assert registry.call("DELETE", "/subjects/s/versions/2") == (200, 2)
    assert registry.call("GET", "/subjects/s/versions") == (200, [1, 3])
    assert registry.call("GET", "/subjects/s/versions?deleted=true") == (200, [1, 2, 3])
    status, body = registry.call("DELETE", "/subjects/s?permanent=true")
    assert (status, body["error_code"]) == (404, 40405)
    assert registry.call("DELETE", "/subjects/s") == (200, [1, 3])
    assert registry.call("GET", "/subjects") == (200, [])
    assert registry.call("GET", "/subjects?deleted=true") == (200, ["s"])
    assert registry.call("GET", "/schemas/ids/1")[0] == 200  # ids outlive soft deletes
    # a new registration continues the version numbering
    registry.register("s", avro_record("T", "new"))
    assert registry.call("GET", "/subjects/s/versions") == (200, [4])
    assert registry.call("DELETE", "/subjects/s")[0] == 200
    assert registry.call("DELETE", "/subjects/s?permanent=true") == (200, [1, 2, 3, 4])
    assert registry.call("GET", "/subjects?deleted=true") == (200, [])


def test_config_defaults_and_subject_levels(registry: Registry) -> None:
    assert registry.call("GET", "/config") == (200, {"compatibilityLevel": "FULL_TRANSITIVE"})
    assert registry.call("PUT", "/config", {"compatibility": "BACKWARD"}) == (200, {"compatibility": "BACKWARD"})
    assert registry.call("PUT", "/config/s", {"compatibilityLevel": "forward"}) == (200, {"compatibility": "FORWARD"})
    assert registry.call("GET", "/config/s") == (200, {"compatibilityLevel": "FORWARD"})
    assert registry.call("GET", "/config/other?defaultToGlobal=true") == (200, {"compatibilityLevel": "BACKWARD"})
    assert registry.call("GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})


def test_none_needs_a_reason_and_every_change_is_logged(registry: Registry) -> None:
    status, body = registry.call("PUT", "/config/s", {"compatibility": "NONE"})
    assert (status, body["error_code"]) == (422, 42203)
    assert "reason" in body["message"]
    status, body = registry.call("PUT", "/config", {"compatibility": "NONE", "reason": "   "})
    assert (status, body["error_code"]) == (422, 42203)
    assert registry.call("GET", "/config/log") == (200, [])

    ok = registry.call("PUT", "/config/s", {"compatibility": "NONE", "reason": "replay of 2026-11 backfill"})
    assert ok == (200, {"compatibility": "NONE"})
    ok = registry.call("PUT", "/config", {"compatibility": "NONE"}, headers={"X-Tscontract-Reason": "migration"})
    assert ok == (200, {"compatibility": "NONE"})
    registry.call("PUT", "/config/s", {"compatibility": "FULL"})

    status, log = registry.call("GET", "/config/log")
    assert status == 200
    assert [(e["subject"], e["old"], e["new"], e["reason"], e["who"]) for e in log] == [
        ("s", None, "NONE", "replay of 2026-11 backfill", "anonymous"),
        (None, "FULL_TRANSITIVE", "NONE", "migration", "anonymous"),
        ("s", "NONE", "FULL", None, "anonymous"),
    ]
    assert all(e["changed_at"].endswith("Z") for e in log)
    assert len(registry.call("GET", "/config/log?subject=s")[1]) == 2


def test_compatibility_endpoint_and_injected_callable(tmp_path: Path) -> None:
    calls: list[tuple[str, str, str, list[str]]] = []

    def only_additions(mode: str, schema_type: str, new: str, olds: list[str]) -> tuple[bool, list[str]]:
        calls.append((mode, schema_type, new, olds))
        ok = '"bad"' not in new
        return ok, [] if ok else ["field 'bad' is not allowed"]

    reg = Registry(tmp_path / "r.sqlite", compat=only_additions)
    try:
        v1, v2, v3 = avro_record("T", "a"), avro_record("T", "a", "b"), avro_record("T", "a", "b", "c")
        assert reg.register("s", v1)[0] == 200
        assert reg.register("s", v2)[0] == 200
        assert calls[-1] == ("FULL_TRANSITIVE", "AVRO", v2, [v1])
        assert reg.register("s", v3)[0] == 200
        assert calls[-1] == ("FULL_TRANSITIVE", "AVRO", v3, [v2, v1])  # newest first, every version

        status, body = reg.register("s", avro_record("T", "bad"))
        assert (status, body["error_code"]) == (409, 40901)
        assert "field 'bad'" in body["message"]
        assert reg.call("GET", "/subjects/s/versions") == (200, [1, 2, 3])

        bad = {"schema": avro_record("T", "bad")}
        assert reg.call("POST", "/compatibility/subjects/s/versions/latest?verbose=true", bad) == (
            200,
            {
                "is_compatible": False,
                "messages": [
                    "field 'bad' is not allowed",
                    "{validateFields: 'false', compatibility: 'FULL_TRANSITIVE'}",
                ],
            },
        )
        assert reg.call("POST", "/compatibility/subjects/s/versions/latest", bad) == (200, {"is_compatible": False})
        good = {"schema": avro_record("T", "a", "b", "c", "d")}
        # as Confluent: a version in the path is the one version checked, whatever the mode
        assert reg.call("POST", "/compatibility/subjects/s/versions/latest", good)[1]["is_compatible"] is True
        assert calls[-1][3] == [v3]
        # no version: the versions the mode names (every one under FULL_TRANSITIVE), as registering checks
        assert reg.call("POST", "/compatibility/subjects/s/versions", good)[1]["is_compatible"] is True
        assert calls[-1][3] == [v3, v2, v1]
        assert reg.call("POST", "/compatibility/subjects/s/versions/1", good)[1]["is_compatible"] is True
        assert calls[-1][3] == [v1]

        reg.call("PUT", "/config/s", {"compatibility": "BACKWARD"})
        reg.register("s", avro_record("T", "a", "b", "c", "d"))
        assert calls[-1][0] == "BACKWARD" and len(calls[-1][3]) == 1  # non-transitive: the latest only
    finally:
        reg.close()


def test_default_compat_fails_closed_without_a_checker(
    default_registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tscontract.evolution", None)  # as if the checkers were not installed
    reg = default_registry
    assert reg.register("s", avro_record("T", "a"))[0] == 200  # a first version needs no checker
    status, body = reg.register("s", avro_record("T", "a", "b"))
    assert (status, body["error_code"]) == (409, 40901)
    assert "no compatibility checker" in body["message"]
    status, body = reg.call("POST", "/compatibility/subjects/s/versions/latest", {"schema": avro_record("T", "a", "b")})
    assert status == 200 and body["is_compatible"] is False
    reg.call("PUT", "/config/s", {"compatibility": "NONE", "reason": "test"})
    assert reg.register("s", avro_record("T", "c"))[0] == 200

    ok, messages = default_compat("NONE", "AVRO", "{", [])
    assert not ok and messages[0].startswith("Invalid schema (Avro)")
    assert default_compat("NONE", "AVRO", avro_record("X", "a"), ["junk"])[0] is False
    assert default_compat("NONE", "JSON", '{"type": "string"}', ['{"type": "object"}']) == (True, [])
    assert default_compat("FULL", "AVRO", avro_record("X", "a"), [avro_record("X", "b")])[0] is False


def test_default_compat_uses_tscontract_evolution(default_registry: Registry) -> None:
    reg = default_registry
    assert reg.register("s", avro_record("T", "a"))[0] == 200
    assert reg.register("s", avro_record("T", "a", "b"))[0] == 200  # a field with a default: FULL_TRANSITIVE holds
    status, body = reg.register("s", AVRO_NO_DEFAULT)
    assert (status, body["error_code"]) == (409, 40901)
    assert "olds[" in body["message"]
    assert reg.call("GET", "/subjects/s/versions") == (200, [1, 2])

    # JSON reaches the checker as fmt 'jsonschema'
    assert reg.register("j", '{"type": "object", "properties": {"a": {"type": "string"}}}', "JSON")[0] == 200
    status, body = reg.call(
        "POST",
        "/compatibility/subjects/j/versions/latest",
        {"schema": '{"type": "object", "properties": {"a": {"type": "string"}}}', "schemaType": "JSON"},
    )
    assert (status, body["is_compatible"]) == (200, True)


def test_avro_references(registry: Registry) -> None:
    money = json.dumps(
        {"type": "record", "name": "Money", "namespace": "t", "fields": [{"name": "v", "type": "string"}]}
    )
    registry.register("money", money)
    trade = json.dumps(
        {"type": "record", "name": "Trade", "namespace": "t", "fields": [{"name": "p", "type": "t.Money"}]}
    )
    ref = [{"name": "t.Money", "subject": "money", "version": 1}]
    status, body = registry.call("POST", "/subjects/trade/versions", {"schema": trade, "references": ref})
    assert status == 200
    assert registry.call("GET", f"/schemas/ids/{body['id']}")[1]["references"] == ref
    status, body = registry.call("POST", "/subjects/trade/versions", {"schema": trade})
    assert (status, body["error_code"]) == (422, 42201)
    bad_ref = [{"name": "t.Money", "subject": "money", "version": 9}]
    status, body = registry.call("POST", "/subjects/trade/versions", {"schema": trade, "references": bad_ref})
    assert (status, body["error_code"]) == (422, 42201)


# -- concurrency -------------------------------------------------------------------------------


def test_concurrent_writers_get_unique_increasing_ids(registry: Registry) -> None:
    writers, per_writer = 8, 20
    results: dict[int, list[int]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(writers)

    def write(worker: int) -> None:
        try:
            start.wait(timeout=30)
            ids = []
            for i in range(per_writer):
                status, body = registry.register("shared", avro_record(f"W{worker}_{i}", "a"))
                assert status == 200, body
                ids.append(body["id"])
            results[worker] = ids
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)

    all_ids = [i for ids in results.values() for i in ids]
    assert len(all_ids) == len(set(all_ids)) == writers * per_writer
    for ids in results.values():
        assert ids == sorted(ids) and len(set(ids)) == len(ids)  # each writer's ids strictly increase
    # in commit order (the subject's version order) ids strictly increase: no gaps reused, no duplicates
    versions = registry.call("GET", "/subjects/shared/versions")[1]
    assert versions == list(range(1, writers * per_writer + 1))
    by_version = [registry.call("GET", f"/subjects/shared/versions/{v}")[1]["id"] for v in versions]
    assert by_version == sorted(by_version) and len(set(by_version)) == len(by_version)
    assert sorted(by_version) == sorted(all_ids)


# -- auth ------------------------------------------------------------------------------------


def test_writes_need_credentials_reads_do_not(auth_registry: Registry) -> None:
    reg = auth_registry
    schema = avro_record("T", "a")
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic " + _b64("alice:nope")}):
        status, body = reg.register("s", schema, headers=headers)
        assert (status, body["error_code"]) == (401, 40101)
        status, body = reg.call("PUT", "/config", {"compatibility": "FULL"}, headers=headers)
        assert status == 401
        assert reg.call("DELETE", "/subjects/s", headers=headers)[0] == 401
    assert reg.call("GET", "/subjects") == (200, [])

    assert id_only(reg.register("s", schema, headers={"Authorization": "Bearer s3cret"})) == (200, {"id": 1})
    assert reg.call("GET", "/subjects/s/versions/latest")[0] == 200
    assert reg.call("POST", "/subjects/s", {"schema": schema})[0] == 200  # lookup is a read

    basic = {"Authorization": "Basic " + _b64("alice:pw")}
    reason = {"compatibility": "NONE", "reason": "one-off"}
    assert reg.call("PUT", "/config/s", reason, headers=basic) == (200, {"compatibility": "NONE"})
    assert reg.call("PUT", "/config", {"compatibility": "FULL"}, headers={"Authorization": "Bearer s3cret"})[0] == 200
    assert reg.call("GET", "/config/log")[0] == 401  # who changed what, and why: behind the credentials
    assert [e["who"] for e in reg.call("GET", "/config/log", headers=basic)[1]] == ["alice", "token"]


def test_confluent_client_with_basic_auth(auth_registry: Registry) -> None:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    schema = Schema(avro_record("T", "a"), "AVRO")
    with pytest.raises(SchemaRegistryError) as refused:
        SchemaRegistryClient({"url": auth_registry.url}).register_schema("s", schema)
    assert refused.value.http_status_code == 401
    client = SchemaRegistryClient({"url": auth_registry.url, "basic.auth.user.info": "alice:pw"})
    assert client.register_schema("s", schema) == 1


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# -- CLI entry ---------------------------------------------------------------------------------


def test_main_rejects_bad_basic_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "x.sqlite"), "--port", "0", "--basic", "nocolon"]) == 2
    assert capsys.readouterr().err == "error: --basic expects USER:PASSWORD, got 'nocolon'\n"


def test_main_serves_until_stopped(tmp_path: Path) -> None:
    db = tmp_path / "cli.sqlite"
    code = "import sys; from tscontract.registry import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--db", str(db), "--port", "0", "--token", "T"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        url = banner.split(" on ", 1)[1].split(" ", 1)[0]
        with urllib.request.urlopen(url + "/config", timeout=10) as response:
            assert json.loads(response.read()) == {"compatibilityLevel": "FULL_TRANSITIVE"}
        request = urllib.request.Request(url + "/config", data=b'{"compatibility": "FULL"}', method="PUT")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
    finally:
        stop(proc)
    assert db.exists()


def test_lint_warns_about_a_registry_subject_left_in_none(registry: Registry) -> None:
    from tests.conftest import EXAMPLES, run_cli

    contract = EXAMPLES / "ohlcv_1m" / "contract.yaml"
    clean = run_cli("lint", contract, "--registry", registry.url, "--format", "json")
    assert clean.returncode == 0 and not [f for f in json.loads(clean.stdout)["findings"] if f["code"] == "TS151"]
    status, _ = registry.call(
        "PUT", "/config/ohlcv_1m-value", {"compatibility": "NONE", "reason": "one-off backfill CHG-42"}
    )
    assert status == 200
    warned = run_cli("lint", contract, "--registry", registry.url, "--format", "json")
    finding = next(f for f in json.loads(warned.stdout)["findings"] if f["code"] == "TS151")
    assert "NONE" in finding["message"] and "CHG-42" in finding["message"] and finding["severity"] == "warning"
    down = run_cli("lint", contract, "--registry", "http://127.0.0.1:9")
    assert down.returncode == 2 and "cannot reach the registry" in down.stderr
