"""The registry's state in PostgreSQL: the same store over psycopg, with an advisory write lock."""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from typing import Any

from tscontract.registry.store.records import Identity
from tscontract.registry.store.writes import RegistryStore

_PG_DDL = (
    "CREATE TABLE IF NOT EXISTS schemas (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "schema_type TEXT NOT NULL, schema_text TEXT NOT NULL, refs TEXT NOT NULL)",
    # a store written before schemas carried Confluent's metadata and ruleSet gains the columns
    "ALTER TABLE schemas ADD COLUMN IF NOT EXISTS metadata TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE schemas ADD COLUMN IF NOT EXISTS rule_set TEXT NOT NULL DEFAULT ''",
    "DROP INDEX IF EXISTS schemas_unique",
    # not unique: IMPORT mode may keep one schema under two ids, as another registry gave them (the
    # write lock keeps every other schema to one id); md5 of the text: a btree row cannot hold a large schema
    "DROP INDEX IF EXISTS schemas_identity",
    "CREATE INDEX IF NOT EXISTS schemas_content ON schemas"
    " (schema_type, md5(schema_text), md5(refs), md5(metadata), md5(rule_set))",
    "CREATE TABLE IF NOT EXISTS subject_versions (subject TEXT NOT NULL, version INTEGER NOT NULL, "
    "schema_id BIGINT NOT NULL REFERENCES schemas (id), deleted INTEGER NOT NULL DEFAULT 0, "
    "registered_at TEXT NOT NULL, PRIMARY KEY (subject, version))",
    "CREATE INDEX IF NOT EXISTS subject_versions_schema ON subject_versions (schema_id, subject)",
    "CREATE TABLE IF NOT EXISTS config (subject TEXT PRIMARY KEY, compatibility TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS config_groups (subject TEXT PRIMARY KEY, property TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS config_log (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, subject TEXT, "
    "who TEXT NOT NULL, changed_at TEXT NOT NULL, old TEXT, new TEXT, reason TEXT)",
    "CREATE INDEX IF NOT EXISTS config_log_subject ON config_log (subject, id)",
    "CREATE TABLE IF NOT EXISTS modes (subject TEXT PRIMARY KEY, mode TEXT NOT NULL)",
)
_PG_WRITE_LOCK = 7352  # one registry writer at a time: versions and ids follow commit order


class _PostgresConnection:
    """The slice of sqlite3's connection API the store uses, over psycopg (``?`` placeholders)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, params: tuple | list = ()) -> Any:
        cursor = self.conn.cursor()
        cursor.execute(sql.replace("?", "%s"), tuple(params))
        return cursor

    def close(self) -> None:
        self.conn.close()


class PostgresRegistryStore(RegistryStore):
    """The same registry state in PostgreSQL (``postgresql://...``), for teams that run one."""

    # the unique index is on md5 of the text: compare the hashes (indexed), then the texts
    _find_schema_sql = (
        "SELECT id FROM schemas WHERE schema_type = ? AND md5(schema_text) = md5(?) AND md5(refs) = md5(?)"
        " AND md5(metadata) = md5(?) AND md5(rule_set) = md5(?) AND schema_text = ? AND refs = ?"
        " ORDER BY id DESC LIMIT 1"
    )
    inline_reads = False  # a round trip to a server: reads take a thread

    def __init__(self, url: str) -> None:
        import psycopg

        self._psycopg = psycopg
        self.db_path = url
        self.description = url
        self._pool = queue.LifoQueue()
        self._schema_cache = OrderedDict()
        self._gone = set()
        self._cache_lock = threading.Lock()
        self._init_locks()
        with self._write() as conn:
            for statement in _PG_DDL + self._extra_ddl:
                conn.execute(statement)

    @staticmethod
    def _find_schema_params(identity: Identity) -> tuple:
        return (*identity, identity[1], identity[2])

    def _insert_schema(self, conn: Any, identity: Identity, explicit_id: int | None) -> int:
        if explicit_id is None:
            return super()._insert_schema(conn, identity, None)
        conn.execute(
            "INSERT INTO schemas (id, schema_type, schema_text, refs, metadata, rule_set)"
            " OVERRIDING SYSTEM VALUE VALUES (?, ?, ?, ?, ?, ?)",
            (explicit_id, *identity),
        )
        # the identity sequence continues after the largest id, imported or not, and never goes back
        # (the largest may have been permanently deleted: its id is not given again)
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('schemas', 'id'), GREATEST((SELECT max(id) FROM schemas),"
            " pg_sequence_last_value(pg_get_serial_sequence('schemas', 'id')::regclass)))"
        )
        return explicit_id

    def _open(self) -> Any:
        return _PostgresConnection(self._psycopg.connect(self.db_path, autocommit=True))

    def _begin(self, conn: Any) -> None:
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_PG_WRITE_LOCK,))
