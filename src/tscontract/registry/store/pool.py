"""The store's connections: a pool, the SQLite schema, and the write transaction (one writer at a time)."""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tscontract.registry.errors import RegistryError
from tscontract.registry.store.records import StoredSchema

_IDLE_CONNECTIONS = 32
_CHECK_SLOTS = max(2, min(4, os.cpu_count() or 1))  # compatibility checks running at once

_DDL = """
CREATE TABLE IF NOT EXISTS schemas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    schema_type TEXT NOT NULL,
    schema_text TEXT NOT NULL,
    refs TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '',
    rule_set TEXT NOT NULL DEFAULT ''
);
-- one id per schema, except what IMPORT mode keeps from another registry (the write lock keeps it so)
CREATE INDEX IF NOT EXISTS schemas_content ON schemas (schema_type, schema_text, refs, metadata, rule_set);
CREATE TABLE IF NOT EXISTS subject_versions (
    subject TEXT NOT NULL,
    version INTEGER NOT NULL,
    schema_id INTEGER NOT NULL REFERENCES schemas (id),
    deleted INTEGER NOT NULL DEFAULT 0,
    registered_at TEXT NOT NULL,
    PRIMARY KEY (subject, version)
);
CREATE INDEX IF NOT EXISTS subject_versions_schema ON subject_versions (schema_id, subject);
CREATE TABLE IF NOT EXISTS config (
    subject TEXT PRIMARY KEY,
    compatibility TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS config_groups (
    subject TEXT PRIMARY KEY,
    property TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS config_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subject TEXT,
    who TEXT NOT NULL,
    changed_at TEXT NOT NULL,
    old TEXT,
    new TEXT,
    reason TEXT
);
CREATE INDEX IF NOT EXISTS config_log_subject ON config_log (subject, id);
CREATE TABLE IF NOT EXISTS modes (
    subject TEXT PRIMARY KEY,
    mode TEXT NOT NULL
);
"""
# a store written before schemas carried Confluent's metadata and ruleSet, or before IMPORT could keep one
# schema under two ids (a UNIQUE constraint): rebuilt in one transaction (SQLite's procedure for a changed
# constraint: new table, copy, drop, rename, foreign keys off; the id sequence kept, so no id comes back)
_REBUILT_SCHEMAS = (
    "CREATE TABLE schemas_rebuilt (id INTEGER PRIMARY KEY AUTOINCREMENT, schema_type TEXT NOT NULL,"
    " schema_text TEXT NOT NULL, refs TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '',"
    " rule_set TEXT NOT NULL DEFAULT '')"
)


def _migrate_schemas(conn: Any) -> None:
    """Rebuild an older store's ``schemas`` table (see ``_REBUILT_SCHEMAS``); nothing on a current one."""
    found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'schemas'").fetchone()
    if found is None or "UNIQUE" not in found[0].upper():
        return
    columns = [row[1] for row in conn.execute("PRAGMA table_info(schemas)").fetchall()]
    kept = ", ".join(c for c in ("id", "schema_type", "schema_text", "refs", "metadata", "rule_set") if c in columns)
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("BEGIN IMMEDIATE")
    sequence = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'schemas'").fetchone()
    conn.execute(_REBUILT_SCHEMAS)
    conn.execute(f"INSERT INTO schemas_rebuilt ({kept}) SELECT {kept} FROM schemas")
    conn.execute("DROP TABLE schemas")
    conn.execute("ALTER TABLE schemas_rebuilt RENAME TO schemas")
    if sequence is not None:
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'schemas'", (sequence[0],))
    conn.execute("COMMIT")
    conn.execute("PRAGMA foreign_keys=ON")


class StoreConnections:
    """Pooled connections to the registry's SQLite file (created on first use) and its write transaction."""

    _find_schema_sql = (
        "SELECT id FROM schemas WHERE schema_type = ? AND schema_text = ? AND refs = ?"
        " AND metadata = ? AND rule_set = ? ORDER BY id DESC LIMIT 1"  # IMPORT may keep two ids: the newest
    )
    # an indexed read of a local SQLite file in WAL mode takes microseconds and never waits for a
    # writer: the server answers it on its event loop instead of paying a thread hop
    inline_reads = True
    _extra_ddl: tuple[str, ...] = ()  # the tables a subclass adds (its DDL runs after ``_DDL``)

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = str(db_path)
        self.description = self.db_path
        self._pool: queue.LifoQueue[Any] = queue.LifoQueue()
        self._schema_cache: OrderedDict[int, StoredSchema] = OrderedDict()
        self._gone: set[int] = set()  # ids permanently deleted: never cached again
        self._cache_lock = threading.Lock()
        self._init_locks()
        conn = self._open()
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            _migrate_schemas(conn)
            conn.executescript(_DDL)
            for statement in self._extra_ddl:
                conn.execute(statement)
        finally:
            conn.close()

    def _init_locks(self) -> None:
        # writers of this process queue here, in arrival order, rather than in SQLite's busy handler,
        # which polls with growing sleeps and lets a late writer overtake one that has waited seconds
        self._write_lock = threading.Lock()
        # compatibility checks are pure Python: run in parallel they only contend for the GIL and
        # starve the reads; a few at a time keep the server answering
        self._check_slots = threading.BoundedSemaphore(_CHECK_SLOTS)

    # -- connections ---------------------------------------------------------------------------

    def _open(self) -> Any:
        conn = sqlite3.connect(self.db_path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=30000")  # a writer waits for the lock, never 'database is locked'
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        try:
            conn = self._pool.get_nowait()
        except queue.Empty:
            conn = self._open()
        healthy = False
        try:
            yield conn
            healthy = True
        except RegistryError:
            healthy = True
            raise
        finally:
            if healthy and self._pool.qsize() < _IDLE_CONNECTIONS:
                self._pool.put(conn)
            else:
                conn.close()

    def _begin(self, conn: Any) -> None:
        conn.execute("BEGIN IMMEDIATE")  # the write lock up front: no read-then-upgrade deadlock

    @contextmanager
    def _write(self) -> Iterator[Any]:
        with self._write_lock, self._connect() as conn:
            self._begin(conn)
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close the pooled connections (a later call opens new ones)."""
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return
