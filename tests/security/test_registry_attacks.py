"""Attacks on `tscontract registry serve` from anyone who can reach its port (issue #26).

Each test runs the real CLI server on loopback (a subprocess, so its memory can be read from
/proc) or the in-process server, and sends only to 127.0.0.1."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, stop
from tests.registry.conftest import Registry, avro_record, id_only

CT = "application/vnd.schemaregistry.v1+json"
SERVE = [sys.executable, "-m", "tscontract", "registry", "serve", "--port", "0"]
RSS_BOUND_KB = 300 * 1024  # a bound on the server process, not a timing


class Served:
    def __init__(self, proc: subprocess.Popen[str], port: int, stderr: Path) -> None:
        self.proc, self.url, self.stderr_path = proc, f"http://127.0.0.1:{port}", stderr

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", CT)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


@contextmanager
def served(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """`tscontract registry serve --port 0 ARGS` in its own process; stopped with SIGTERM."""
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            [*SERVE, "--db", str(tmp_path / "reg.sqlite"), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert banner.startswith("tscontract registry on http://"), (banner, stderr.read_text())
        port = int(banner.split(" on ", 1)[1].split(" ", 1)[0].rsplit(":", 1)[1])
        yield Served(proc, port, stderr)
    finally:
        stop(proc)


def nested_proto(levels: int) -> str:
    return 'syntax = "proto3";\n' + "".join(f"message M{i} {{ " for i in range(levels)) + "}" * levels


def test_protobuf_nesting_bomb_is_refused_and_the_server_stays_small(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        assert id_only(server.call("POST", "/subjects/ok/versions", {"schema": avro_record("T", "a")})) == (
            200,
            {"id": 1},
        )
        before = server.rss_kb()
        for levels in (20_000, 60_000):  # 400 KB once left 760 MB allocated; 1.2 MB got the server killed
            for _ in range(3):
                body = {"schema": nested_proto(levels), "schemaType": "PROTOBUF"}
                status, answer = server.call("POST", "/subjects/bomb/versions", body)
                assert (status, answer["error_code"]) == (422, 42201), answer
                assert "registry's limit" in answer["message"]
        status, answer = server.call(
            "POST", "/compatibility/subjects/ok/versions/latest", {"schema": "[" * 300 + "]" * 300}
        )
        assert (status, answer["error_code"]) == (422, 42201) and "limit of 256" in answer["message"]
        # an unclosed comment once made the formatter quadratic: refused in one pass
        body = {"schema": "message A {" + "/*x" * 300_000, "schemaType": "PROTOBUF"}
        status, answer = server.call("POST", "/subjects/bomb/versions", body)
        assert (status, answer["error_code"]) == (422, 42201) and "never closed" in answer["message"]
        assert server.call("GET", "/subjects") == (200, ["ok"])  # still answering
        after = server.rss_kb()
        assert after < RSS_BOUND_KB and before < RSS_BOUND_KB, (before, after)


def test_protobuf_compiles_in_a_child_and_still_works(tmp_path: Path) -> None:
    proto = 'syntax = "proto3";\nmessage Bar { string symbol = 1; }\n'
    with served(tmp_path) as server:
        registered = server.call("POST", "/subjects/p/versions", {"schema": proto, "schemaType": "PROTOBUF"})
        assert id_only(registered) == (200, {"id": 1})
        bad = {"schema": 'syntax = "proto3";\nmessage Bar { nope symbol = 1; }\n', "schemaType": "PROTOBUF"}
        status, answer = server.call("POST", "/subjects/p/versions", bad)
        assert (status, answer["error_code"]) == (422, 42201) and '"nope" is not defined' in answer["message"]
        # the compatibility check of a Protobuf subject runs in the child too
        retyped = {"schema": proto.replace("string", "int64"), "schemaType": "PROTOBUF"}  # len -> varint
        status, answer = server.call("POST", "/compatibility/subjects/p/versions/latest", retyped)
        assert status == 200 and answer["is_compatible"] is False


def test_sandbox_caps_memory_and_time_and_recovers() -> None:
    from tscontract.registry.sandbox import Sandbox, SandboxLimit

    sandbox = Sandbox(workers=1, memory=256 * 1024 * 1024, seconds=2)
    try:
        with pytest.raises(SandboxLimit, match="memory limit of 256 MiB"):
            sandbox.run(bytearray, 1024 * 1024 * 1024)
        with pytest.raises(SandboxLimit, match="time limit of 2 s"):
            sandbox.run(time.sleep, 30)
        assert sandbox.run(len, "still works") == 11
        with pytest.raises(RuntimeError, match="ValueError"):
            sandbox.run(int, "x")
    finally:
        sandbox.close()


def test_request_bodies_are_bounded(tmp_path: Path) -> None:
    reg = Registry(tmp_path / "r.sqlite")
    try:
        status, answer = reg.call("POST", "/subjects/s/versions", [{}] * 200_000)
        assert (status, answer["error_code"]) == (413, 413) and "10000 values" in answer["message"]
        # refused on the declared length, before a byte of the body is read
        with socket.create_connection(("127.0.0.1", reg.port), timeout=30) as sock:
            sock.sendall(
                b"POST /subjects/s/versions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                + CT.encode()
                + b"\r\nContent-Length: 5242880\r\n\r\n"
            )
            answer_bytes = sock.recv(65536)
        assert answer_bytes.startswith(b"HTTP/1.1 413") and b"limit of 4194304 bytes" in answer_bytes
        assert reg.call("GET", "/subjects") == (200, [])
    finally:
        reg.close()


def test_compatibility_and_config_log_need_credentials(tmp_path: Path) -> None:
    reg = Registry(tmp_path / "r.sqlite", token="s3cret")
    bearer = {"Authorization": "Bearer s3cret"}
    try:
        assert id_only(reg.register("s", avro_record("T", "a"), headers=bearer)) == (200, {"id": 1})
        compat = "/compatibility/subjects/s/versions/latest"
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            status, answer = reg.call("POST", compat, {"schema": avro_record("T", "a", "b")}, headers=headers)
            assert (status, answer["error_code"]) == (401, 40101)
            assert reg.call("GET", "/config/log", headers=headers)[0] == 401
        status, answer = reg.call("POST", compat, {"schema": avro_record("T", "a", "b")}, headers=bearer)
        assert status == 200 and answer["is_compatible"] is True
        assert reg.call("GET", "/config/log", headers=bearer) == (200, [])
        assert reg.call("GET", "/subjects/s/versions/1")[0] == 200  # reads stay open
    finally:
        reg.close()


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_credentials_from_a_file_and_from_the_environment(tmp_path: Path) -> None:
    schema = {"schema": avro_record("T", "a")}
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    with served(tmp_path, "--token-file", str(token_file)) as server:
        assert server.call("POST", "/subjects/s/versions", schema)[0] == 401
        assert server.call("POST", "/subjects/s/versions", schema, {"Authorization": "Bearer from-file"})[0] == 200
        assert "warning" not in server.stderr()
    with served(tmp_path, env={"TSCONTRACT_REGISTRY_TOKEN": "from-env"}) as server:
        assert server.call("GET", "/config/log")[0] == 401
        assert server.call("GET", "/config/log", headers={"Authorization": "Bearer from-env"})[0] == 200
    basic_file = tmp_path / "basic"
    basic_file.write_text("alice:pw1\nbob:pw2\n")
    with served(tmp_path, "--basic-file", str(basic_file), env={"TSCONTRACT_REGISTRY_BASIC": "carol:pw3"}) as server:
        for user in ("bob:pw2", "carol:pw3"):
            headers = {"Authorization": "Basic " + _b64(user)}
            assert server.call("GET", "/config/log", headers=headers)[0] == 200
        assert server.call("GET", "/config/log", headers={"Authorization": "Basic " + _b64("bob:pw1")})[0] == 401


def test_command_line_secrets_and_exposed_hosts_warn(tmp_path: Path) -> None:
    with served(tmp_path, "--token", "visible") as server:
        assert server.call("GET", "/config/log", headers={"Authorization": "Bearer visible"})[0] == 200
        lines = server.stderr().splitlines()
    assert len(lines) == 1 and "--token on the command line is visible" in lines[0] and "visible" not in lines[0][-8:]
    with served(tmp_path, "--host", "0.0.0.0") as server:  # traffic only to 127.0.0.1
        assert server.call("GET", "/subjects") == (200, [])
        lines = server.stderr().splitlines()
    assert len(lines) == 1 and "0.0.0.0 (not loopback) without credentials" in lines[0]
    with served(tmp_path, "--host", "0.0.0.0", "--token-file", str(_secret(tmp_path))) as server:
        assert server.stderr() == ""
    with served(tmp_path) as server:  # loopback without credentials: the documented default, no warning
        assert server.stderr() == ""


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_text("t0ken")
    return path


@pytest.mark.parametrize("token_args", [("--token", "a", "--token-file", "f"), ("--token-file", "missing")])
def test_bad_credential_options_are_one_line_errors(tmp_path: Path, token_args: tuple[str, ...]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tscontract", "registry", "serve", "--port", "0", "--db", str(tmp_path / "x.sqlite")]
        + [arg if arg not in ("f", "missing") else str(tmp_path / arg) for arg in token_args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "quoted",
    ["..%5C..%5Cx", "%2F", "a%2F%2Fb", "%2Fetc", "x%2F", "__GLOBAL", "a%5Cb", "x" * 513, "%E2%80%AEevil", "a%0Db"],
)
def test_subject_names_one_rule_everywhere(tmp_path: Path, quoted: str) -> None:
    reg = Registry(tmp_path / "r.sqlite")
    try:
        for method, path, body in [
            ("POST", f"/subjects/{quoted}/versions", {"schema": avro_record("T", "a")}),
            ("PUT", f"/config/{quoted}", {"compatibility": "NONE"}),
            ("PUT", f"/mode/{quoted}", {"mode": "READWRITE"}),
            ("GET", f"/subjects/{quoted}/versions", None),
            ("DELETE", f"/mode/{quoted}", None),
        ]:
            status, answer = reg.call(method, path, body)
            assert (status, answer["error_code"]) == (422, 42208), (method, path, answer)
        reference = {"name": "x", "subject": "..\\..\\x", "version": 1}
        status, answer = reg.call(
            "POST", "/subjects/ok/versions", {"schema": avro_record("T", "a"), "references": [reference]}
        )
        assert (status, answer["error_code"]) == (422, 42201)
        assert reg.call("GET", "/subjects") == (200, [])
    finally:
        reg.close()
