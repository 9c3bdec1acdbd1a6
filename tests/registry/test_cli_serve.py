"""`tscontract registry serve` as a user runs it: a real process, real sockets, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import ROOT, run_cli
from tests.registry.conftest import avro_record


@contextmanager
def cli_server(*args: str) -> Iterator[tuple[str, str]]:
    """Start `tscontract registry serve --port 0 ARGS`; yield (url, banner); stop it."""
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
        yield banner.split(" on ", 1)[1].split(" ", 1)[0], banner
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_serve_on_postgresql_through_the_cli(postgres_db: str) -> None:
    import psycopg
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    # trust authentication ignores the password: it is there to prove the banner hides it
    with_password = postgres_db.replace("postgresql://tsc@", "postgresql://tsc:hunter2@")
    with cli_server("--db", with_password) as (url, banner):
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
        cli_server("--db", postgres_db) as (url, _),
        urllib.request.urlopen(url + "/subjects/bars-value/versions") as r,
    ):
        assert json.loads(r.read()) == [1, 2]


def test_serve_on_sqlite_through_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "reg.sqlite"
    with cli_server("--db", str(db)) as (url, banner):
        assert f"(db {db})" in banner
        request = urllib.request.Request(
            url + "/subjects/s/versions",
            data=json.dumps({"schema": avro_record("T", "a")}).encode(),
            headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read()) == {"id": 1}
    assert db.exists()


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
