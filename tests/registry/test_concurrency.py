"""Many clients at once: no resets, no 5xx, versions consecutive, checks outside the write lock, indexed reads."""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from tests.registry.conftest import CT, Registry, always_ok, avro_record, id_only
from tscontract.registry.store import RegistryStore


def evolving(subject_fields: int) -> str:
    """Version n of a record: n optional fields, each with a default (FULL_TRANSITIVE compatible)."""
    return avro_record("Bar", *[f"f{i}" for i in range(subject_fields)])


class Client:
    """One keep-alive connection, as a producer's serializer holds it."""

    def __init__(self, reg: Registry) -> None:
        self.conn = http.client.HTTPConnection(reg.host, reg.port, timeout=60)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers={"Content-Type": CT} if data else {})
        response = self.conn.getresponse()
        return response.status, json.loads(response.read())


def test_twenty_writers_on_one_subject(default_store_registry: Registry) -> None:
    """20 writers race to register the next version of one subject, with the real compatibility checks."""
    reg = default_store_registry
    writers, rounds = 20, 3
    statuses: list[int] = []
    failures: list[BaseException] = []
    ids: dict[int, int] = {}  # field count -> schema id
    start = threading.Barrier(writers)

    def write(worker: int) -> None:
        try:
            client = Client(reg)
            start.wait(timeout=30)
            for step in range(rounds):
                fields = 1 + step * writers + worker  # every writer a distinct, growing schema
                status, body = client.request("POST", "/subjects/bars-value/versions", {"schema": evolving(fields)})
                statuses.append(status)
                if status == 200:
                    ids[fields] = body["id"]
        except BaseException as exc:  # a reset connection lands here
            failures.append(exc)

    began = time.monotonic()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert time.monotonic() - began < 60
    assert not failures, failures[:3]
    assert len(statuses) == writers * rounds
    # every field has a default, so any of these schemas is FULL compatible with any other: all accepted
    assert set(statuses) == {200}, sorted(set(statuses))
    versions = reg.call("GET", "/subjects/bars-value/versions")[1]
    assert versions == list(range(1, writers * rounds + 1))
    registered = [reg.call("GET", f"/subjects/bars-value/versions/{v}")[1] for v in versions]
    by_schema = {len(json.loads(r["schema"])["fields"]): r["id"] for r in registered}
    assert by_schema == ids  # every schema registered exactly once, under the id its writer was given
    assert [r["id"] for r in registered] == sorted(r["id"] for r in registered)


def test_a_burst_of_connections_is_queued_not_reset(registry: Registry) -> None:
    """300 clients connect at the same instant (the old server's backlog of 5 reset some)."""
    clients = 300
    start = threading.Barrier(clients)
    outcomes: list[object] = []

    def one(worker: int) -> None:
        try:
            start.wait(timeout=30)
            with socket.create_connection((registry.host, registry.port), timeout=60) as sock:
                sock.sendall(b"GET /schemas/types HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = b""
                while chunk := sock.recv(4096):
                    answer += chunk
            outcomes.append(int(answer.split(b" ", 2)[1]))
        except BaseException as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=one, args=(w,)) for w in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert outcomes == [200] * clients, [o for o in outcomes if o != 200][:5]


def test_compatibility_checks_run_outside_the_write_lock(tmp_path: Path) -> None:
    """Ten slow checks on ten subjects overlap instead of queueing behind one lock."""

    def slow(mode: str, schema_type: str, new: str, olds: list[str]) -> tuple[bool, list[str]]:
        time.sleep(0.5)
        return True, []

    reg = Registry(tmp_path / "slow.sqlite", compat=slow)
    try:
        results: list[int] = []

        def write(worker: int) -> None:
            results.append(Client(reg).request("POST", f"/subjects/s{worker}/versions", {"schema": evolving(1)})[0])

        began = time.monotonic()
        threads = [threading.Thread(target=write, args=(w,)) for w in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        elapsed = time.monotonic() - began
        assert results == [200] * 10
        assert elapsed < 3.0, f"10 checks of 0.5 s took {elapsed:.1f} s: they ran one at a time"
    finally:
        reg.close()


def test_a_version_registered_during_a_check_makes_the_check_run_again(tmp_path: Path) -> None:
    """Optimistic registration: the subject changed between check and commit, so the check is redone."""
    calls: list[tuple[str, list[str]]] = []
    interloper = threading.Event()
    reg: Registry

    def compat(mode: str, schema_type: str, new: str, olds: list[str]) -> tuple[bool, list[str]]:
        calls.append((new, list(olds)))
        if new == evolving(3) and not interloper.is_set():
            interloper.set()  # while this check runs, another writer registers version 2
            assert Client(reg).request("POST", "/subjects/s/versions", {"schema": evolving(2)})[0] == 200
        return '"f9"' not in new, [] if '"f9"' not in new else ["no f9"]

    reg = Registry(tmp_path / "race.sqlite", compat=compat)
    try:
        assert id_only(reg.register("s", evolving(1))) == (200, {"id": 1})
        assert id_only(reg.register("s", evolving(3))) == (200, {"id": 3})
        # the check of evolving(3) ran against v1, then again against v2 (newest first) and v1
        assert [olds for new, olds in calls if new == evolving(3)] == [
            [evolving(1)],
            [evolving(2), evolving(1)],
        ]
        assert reg.call("GET", "/subjects/s/versions") == (200, [1, 2, 3])
        assert [reg.call("GET", f"/subjects/s/versions/{v}")[1]["id"] for v in (1, 2, 3)] == [1, 2, 3]
    finally:
        reg.close()


class TracedStore(RegistryStore):
    """The real SQLite store, recording the statements each connection runs."""

    statements: list[str]

    def _open(self) -> sqlite3.Connection:
        conn = super()._open()
        conn.set_trace_callback(self.statements.append)
        return conn


def test_reading_one_version_does_not_load_the_others(tmp_path: Path) -> None:
    TracedStore.statements = []
    store = TracedStore(tmp_path / "big.sqlite")
    store.register("other", "AVRO", evolving(2), None, always_ok)
    with sqlite3.connect(tmp_path / "big.sqlite") as bulk:  # 2,000 versions of one subject, written at once
        bulk.executemany(
            "INSERT INTO schemas (id, schema_type, schema_text, refs) VALUES (?, 'AVRO', ?, '[]')",
            [(n + 1, evolving(1) + " " * n) for n in range(1, 2001)],
        )
        bulk.executemany(
            "INSERT INTO subject_versions (subject, version, schema_id, registered_at) VALUES ('big', ?, ?, '')",
            [(n, n + 1) for n in range(1, 2001)],
        )
    TracedStore.statements.clear()

    began = time.monotonic()
    for version in range(1, 2001, 10):
        assert store.get_version("big", version).version == version
    assert store.get_version("big", "latest").version == 2000
    assert store.lookup("big", "AVRO", evolving(1) + " " * 1234, None).version == 1234
    assert store.schema_by_id(1501)[1].endswith(" " * 1500)
    assert time.monotonic() - began < 5  # 2,000 versions: 204 reads, each one indexed row

    reads = [s for s in TracedStore.statements if s.lstrip().upper().startswith("SELECT")]
    assert reads
    plan_conn = sqlite3.connect(tmp_path / "big.sqlite")
    for statement in set(reads):
        plan = " | ".join(row[-1] for row in plan_conn.execute("EXPLAIN QUERY PLAN " + statement))
        assert "SCAN" not in plan.replace("SCAN CONSTANT ROW", ""), (statement, plan)
    plan_conn.close()
    store.close()


def test_postgres_reads_have_an_index_for_every_query(postgres_db: str) -> None:
    """The same reads on PostgreSQL: with sequential scans priced out, every statement plans on an index."""
    import psycopg

    from tscontract.registry.store import PostgresRegistryStore, _PostgresConnection

    statements: list[tuple[str, tuple]] = []

    class Recording(_PostgresConnection):
        def execute(self, sql: str, params: tuple | list = ()) -> Any:
            statements.append((sql, tuple(params)))
            return super().execute(sql, params)

    class TracedPostgres(PostgresRegistryStore):
        def _open(self) -> Any:
            return Recording(psycopg.connect(self.db_path, autocommit=True))

    store = TracedPostgres(postgres_db)
    for n in range(1, 30):
        store.register("big", "AVRO", evolving(n), None, always_ok)
    statements.clear()
    assert store.get_version("big", 7).version == 7
    assert store.get_version("big", "latest").version == 29
    assert store.lookup("big", "AVRO", evolving(12), None).version == 12
    assert store.versions("big")[-1] == 29
    store.close()

    reads = [(sql, params) for sql, params in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(reads) >= 4  # one indexed query for each read
    with psycopg.connect(postgres_db, autocommit=True) as con:
        con.execute("SET enable_seqscan = off")
        for sql, params in reads:
            plan = "\n".join(row[0] for row in con.execute("EXPLAIN " + sql.replace("?", "%s"), params))
            assert "Seq Scan" not in plan, (sql, plan)
