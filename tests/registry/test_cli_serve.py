"""`tscontract registry serve` as a user runs it: a real process, real sockets, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import ROOT, run_cli, stop
from tests.registry.conftest import CT, avro_record, id_only
from tests.registry.test_registry import AVRO_NO_DEFAULT


@contextmanager
def cli_server(*args: str) -> Iterator[tuple[str, str, int]]:
    """Start `tscontract registry serve --port 0 ARGS`; yield (url, banner, pid); stop it (SIGTERM)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tscontract", "registry", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert banner.startswith("tscontract registry on http://127.0.0.1:"), (banner, proc.stderr.read())
        yield banner.split(" on ", 1)[1].split(" ", 1)[0], banner, proc.pid
    finally:
        stop(proc)


def test_serve_on_postgresql_through_the_cli(postgres_db: str) -> None:
    import psycopg
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    # trust authentication ignores the password: it is there to prove the banner hides it
    with_password = postgres_db.replace("postgresql://tsc@", "postgresql://tsc:hunter2@")
    with cli_server("--db", with_password) as (url, banner, _):
        assert "hunter2" not in banner and "tsc:***@" in banner
        client = SchemaRegistryClient({"url": url})
        first = client.register_schema("bars-value", Schema(avro_record("Bar", "symbol"), "AVRO"))
        second = client.register_schema("bars-value", Schema(avro_record("Bar", "symbol", "venue"), "AVRO"))
        assert client.get_latest_version("bars-value").version == 2
    # the versions are in PostgreSQL, not in a file named after a mangled URL
    with psycopg.connect(postgres_db) as con:
        rows = con.execute("SELECT subject, version, schema_id FROM subject_versions ORDER BY version").fetchall()
    assert rows == [("bars-value", 1, first), ("bars-value", 2, second)]
    assert not list(Path(ROOT).glob("postgresql*")) and not (Path(ROOT) / "postgresql:").exists()
    # a second server on the same database sees them
    with (
        cli_server("--db", postgres_db) as (url, _, _),
        urllib.request.urlopen(url + "/subjects/bars-value/versions") as r,
    ):
        assert json.loads(r.read()) == [1, 2]


def register(url: str, subject: str, schema: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{url}/subjects/{subject}/versions",
        data=json.dumps({"schema": schema}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return "Z" not in state.split(":", 1)[1].split()[0]


def test_serve_on_sqlite_through_the_cli_with_check_processes(tmp_path: Path) -> None:
    db = tmp_path / "reg.sqlite"
    with cli_server("--db", str(db), "--check-processes", "2") as (url, banner, server_pid):
        assert f"(db {db})" in banner
        workers = children(server_pid)
        assert len(workers) >= 2  # the check processes (and multiprocessing's resource tracker)
        assert id_only(register(url, "s", avro_record("T", "a"))) == (200, {"id": 1})
        assert id_only(register(url, "s", avro_record("T", "a", "b"))) == (200, {"id": 2})
        # the checker's verdict and reasons come back from the worker process
        status, body = register(url, "s", AVRO_NO_DEFAULT)
        assert (status, body["error_code"]) == (409, 40901) and "olds[" in body["message"]
    assert db.exists()
    # SIGTERM stopped the server and its check processes with it
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if alive(pid)]


def test_unreachable_postgresql_is_one_line_exit_2(tmp_path: Path) -> None:
    done = run_cli("registry", "serve", "--port", "0", "--db", "postgresql://tsc:pw@127.0.0.1:9/nowhere")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot open the registry store postgresql://tsc:***@127.0.0.1:9/nowhere" in lines[0]
    assert "Traceback" not in done.stderr and "pw@" not in done.stderr


def test_sqlite_file_in_a_missing_directory_is_one_line_exit_2(tmp_path: Path) -> None:
    done = run_cli("registry", "serve", "--port", "0", "--db", str(tmp_path / "no" / "such" / "reg.sqlite"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "cannot open the registry store" in done.stderr


def test_without_the_registry_extra_serve_names_it(tmp_path: Path) -> None:
    # as if Starlette and uvicorn were not installed (a None entry makes their import fail)
    code = (
        "import sys; sys.modules['uvicorn'] = None; sys.modules['starlette'] = None; "
        "from tscontract.cli import main; main(sys.argv[1:])"
    )
    args = ["registry", "serve", "--port", "0", "--db", str(tmp_path / "r.sqlite")]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: the schema registry server needs Starlette and uvicorn: pip install 'tscontract[registry]'"
    ]
    # the rest of the package (lint --registry included) imports without them
    lint = "import sys; sys.modules['uvicorn'] = None; sys.modules['starlette'] = None; import tscontract.registry.lint"
    assert subprocess.run([sys.executable, "-c", lint], cwd=ROOT).returncode == 0


def test_check_processes_exit_when_the_server_is_killed(tmp_path: Path) -> None:
    """SIGKILL gives the server no chance to stop its pool: the check processes notice and exit."""
    import signal

    with cli_server("--db", str(tmp_path / "reg.sqlite"), "--check-processes", "2") as (url, _, server_pid):
        assert id_only(register(url, "s", avro_record("T", "a"))) == (200, {"id": 1})
        workers = children(server_pid)
        assert len(workers) >= 2
        os.kill(server_pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in workers if alive(pid)]


def test_strict_answers_a_protobuf_descriptor_registration_as_confluent(tmp_path: Path) -> None:
    """``--strict``: the registration answer carries the stored ``.proto`` text, as Confluent's does."""
    from tests.registry.test_conformance_answers import PROTO, descriptor

    body = json.dumps({"schema": descriptor(PROTO), "schemaType": "PROTOBUF"}).encode()
    answers = []
    for flags in ((), ("--strict",)):
        with cli_server("--db", str(tmp_path / f"reg{len(flags)}.sqlite"), *flags) as (url, _, _):
            request = urllib.request.Request(
                f"{url}/subjects/p/versions", data=body, method="POST", headers={"Content-Type": CT}
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                answers.append(json.loads(response.read()))
    assert [answer["id"] for answer in answers] == [1, 1]
    assert "schema" not in answers[0] and answers[1]["schema"].startswith('syntax = "proto3";')
