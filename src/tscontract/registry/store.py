"""SQLite store of the schema registry: schemas, subject versions, compatibility config and its log.

One connection per operation (WAL mode, so readers never wait for the writer); every write is one
``BEGIN IMMEDIATE`` transaction, which takes SQLite's write lock up front: two registrations can
never read the same "next version" or interleave their check and insert, and schema ids come from
an AUTOINCREMENT key, so they are unique and increase in commit order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tscontract.contract.model import COMPATIBILITY_MODES

COMPATIBILITY_LEVELS = COMPATIBILITY_MODES  # the modes a contract's evolution section names
DEFAULT_COMPATIBILITY = "FULL_TRANSITIVE"
SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")
_GLOBAL = ""  # the config row of the global level

# compat(mode, schema_type, new_schema_text, older_schema_texts_newest_first) -> (ok, messages)
CompatFn = Callable[[str, str, str, list[str]], tuple[bool, list[str]]]

_DDL = """
CREATE TABLE IF NOT EXISTS schemas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    schema_type TEXT NOT NULL,
    schema_text TEXT NOT NULL,
    refs TEXT NOT NULL,
    UNIQUE (schema_type, schema_text, refs)
);
CREATE TABLE IF NOT EXISTS subject_versions (
    subject TEXT NOT NULL,
    version INTEGER NOT NULL,
    schema_id INTEGER NOT NULL REFERENCES schemas (id),
    deleted INTEGER NOT NULL DEFAULT 0,
    registered_at TEXT NOT NULL,
    PRIMARY KEY (subject, version)
);
CREATE TABLE IF NOT EXISTS config (
    subject TEXT PRIMARY KEY,
    compatibility TEXT NOT NULL
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
"""


class RegistryError(Exception):
    """An error the REST layer returns as ``{error_code, message}`` with ``http_status``."""

    def __init__(self, http_status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.error_code = error_code
        self.message = message


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(subject: str, version: object) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found for subject '{subject}'.")


def schema_not_found(detail: str = "Schema not found") -> RegistryError:
    return RegistryError(404, 40403, detail)


@dataclass(frozen=True)
class RegisteredVersion:
    subject: str
    version: int
    schema_id: int
    schema_type: str
    schema_text: str
    references: list[dict]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _refs_key(references: list[dict] | None) -> str:
    return json.dumps(
        [{"name": r.get("name"), "subject": r.get("subject"), "version": r.get("version")} for r in references or []],
        sort_keys=True,
    )


def olds_for_mode(mode: str, olds_newest_first: list[str]) -> list[str]:
    """Confluent semantics: a transitive mode checks every live version, the others only the latest."""
    if mode == "NONE":
        return []
    return list(olds_newest_first) if mode.endswith("_TRANSITIVE") else olds_newest_first[:1]


class RegistryStore:
    """The registry's persistent state in one SQLite file (created on first use)."""

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = str(db_path)
        self.description = self.db_path
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_DDL)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.db_path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA foreign_keys=ON")
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- reads -------------------------------------------------------------------------------

    def subjects(self, include_deleted: bool = False) -> list[str]:
        sql = "SELECT DISTINCT subject FROM subject_versions"
        if not include_deleted:
            sql += " WHERE deleted = 0"
        with self._connect() as conn:
            return [row[0] for row in conn.execute(sql + " ORDER BY subject")]

    def versions(self, subject: str, include_deleted: bool = False) -> list[int]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT version FROM subject_versions WHERE subject = ? AND (deleted = 0 OR ? = 1) ORDER BY version",
                (subject, int(include_deleted)),
            ).fetchall()
        if not rows:
            raise subject_not_found(subject)
        return [row[0] for row in rows]

    def _live_versions(self, conn: sqlite3.Connection, subject: str) -> list[RegisteredVersion]:
        """Live versions of a subject, newest first."""
        rows = conn.execute(
            "SELECT v.version, s.id, s.schema_type, s.schema_text, s.refs FROM subject_versions v"
            " JOIN schemas s ON s.id = v.schema_id WHERE v.subject = ? AND v.deleted = 0 ORDER BY v.version DESC",
            (subject,),
        ).fetchall()
        return [RegisteredVersion(subject, v, i, t, text, json.loads(refs)) for v, i, t, text, refs in rows]

    def get_version(self, subject: str, version: int | str) -> RegisteredVersion:
        with self._connect() as conn:
            live = self._live_versions(conn, subject)
        if not live:
            raise subject_not_found(subject)
        if version in ("latest", -1):
            return live[0]
        for registered in live:
            if registered.version == version:
                return registered
        raise version_not_found(subject, version)

    def schema_by_id(self, schema_id: int) -> tuple[str, str, list[dict]]:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT schema_type, schema_text, refs FROM schemas WHERE id = ?", (schema_id,)
            ).fetchone()
        if row is None:
            raise schema_not_found(f"Schema {schema_id} not found")
        return row[0], row[1], json.loads(row[2])

    def lookup(self, subject: str, schema_type: str, text: str, references: list[dict] | None) -> RegisteredVersion:
        with self._connect() as conn:
            live = self._live_versions(conn, subject)
        if not live:
            raise subject_not_found(subject)
        refs = _refs_key(references)
        for registered in live:
            if (registered.schema_type, registered.schema_text, _refs_key(registered.references)) == (
                schema_type,
                text,
                refs,
            ):
                return registered
        raise schema_not_found()

    def compatibility(self, subject: str | None = None, default_to_global: bool = True) -> str | None:
        """The subject's level (or the global one); None when the subject has none and no fallback asked."""
        with self._connect() as conn:
            return self._compatibility(conn, subject, default_to_global)

    def _compatibility(self, conn: sqlite3.Connection, subject: str | None, default_to_global: bool) -> str | None:
        if subject:
            row = conn.execute("SELECT compatibility FROM config WHERE subject = ?", (subject,)).fetchone()
            if row is not None:
                return row[0]
            if not default_to_global:
                return None
        row = conn.execute("SELECT compatibility FROM config WHERE subject = ?", (_GLOBAL,)).fetchone()
        return row[0] if row is not None else DEFAULT_COMPATIBILITY

    def config_log(self, subject: str | None = None) -> list[dict]:
        sql = "SELECT id, subject, who, changed_at, old, new, reason FROM config_log"
        params: tuple = ()
        if subject is not None:
            sql, params = sql + " WHERE subject = ?", (subject,)
        with self._connect() as conn:
            rows = conn.execute(sql + " ORDER BY id", params).fetchall()
        keys = ("id", "subject", "who", "changed_at", "old", "new", "reason")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    # -- writes ------------------------------------------------------------------------------

    def register(
        self, subject: str, schema_type: str, text: str, references: list[dict] | None, compat: CompatFn
    ) -> int:
        """Register a schema under a subject and return its global id.

        The same schema already live under the subject returns its id without a new version; the
        same schema under another subject reuses its global id. Otherwise the subject's mode is
        checked against its live versions (inside the write lock, so no version slips in between).
        """
        refs = _refs_key(references)
        with self._write() as conn:
            live = self._live_versions(conn, subject)
            for registered in live:
                if (registered.schema_type, registered.schema_text, _refs_key(registered.references)) == (
                    schema_type,
                    text,
                    refs,
                ):
                    return registered.schema_id
            mode = self._compatibility(conn, subject, True) or DEFAULT_COMPATIBILITY
            olds = olds_for_mode(mode, [r.schema_text for r in live if r.schema_type == schema_type])
            if live and live[0].schema_type != schema_type and mode != "NONE":
                raise RegistryError(
                    409, 409, f"Schema type {schema_type} differs from the subject's {live[0].schema_type}"
                )
            ok, messages = compat(mode, schema_type, text, olds)
            if not ok:
                detail = "; ".join(messages) or "incompatible"
                raise RegistryError(
                    409,
                    409,
                    f"Schema being registered is incompatible with an earlier schema "
                    f"for subject '{subject}' ({mode}): {detail}",
                )
            row = conn.execute(
                "SELECT id FROM schemas WHERE schema_type = ? AND schema_text = ? AND refs = ?",
                (schema_type, text, refs),
            ).fetchone()
            if row is None:
                schema_id = conn.execute(
                    "INSERT INTO schemas (schema_type, schema_text, refs) VALUES (?, ?, ?) RETURNING id",
                    (schema_type, text, refs),
                ).fetchone()[0]
            else:
                schema_id = row[0]
            (last,) = conn.execute(
                "SELECT coalesce(max(version), 0) FROM subject_versions WHERE subject = ?", (subject,)
            ).fetchone()
            conn.execute(
                "INSERT INTO subject_versions (subject, version, schema_id, registered_at) VALUES (?, ?, ?, ?)",
                (subject, last + 1, schema_id, _now()),
            )
            return int(schema_id)

    def set_compatibility(self, subject: str | None, level: str, who: str, reason: str | None) -> str:
        if level not in COMPATIBILITY_LEVELS:
            raise RegistryError(
                422, 42203, f"Invalid compatibility level '{level}'; one of {', '.join(COMPATIBILITY_LEVELS)}"
            )
        if level == "NONE" and not (reason and reason.strip()):
            raise RegistryError(
                422,
                42203,
                "Compatibility NONE turns off every evolution check; give a reason "
                "(body field 'reason' or header X-Tscontract-Reason)",
            )
        with self._write() as conn:
            old = self._compatibility(conn, subject, False) if subject else self._compatibility(conn, None, True)
            conn.execute(
                "INSERT INTO config (subject, compatibility) VALUES (?, ?)"
                " ON CONFLICT (subject) DO UPDATE SET compatibility = excluded.compatibility",
                (subject or _GLOBAL, level),
            )
            conn.execute(
                "INSERT INTO config_log (subject, who, changed_at, old, new, reason) VALUES (?, ?, ?, ?, ?, ?)",
                (subject, who, _now(), old, level, reason),
            )
        return level

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        with self._write() as conn:
            if permanent:
                rows = conn.execute(
                    "SELECT version, deleted FROM subject_versions WHERE subject = ? ORDER BY version", (subject,)
                ).fetchall()
                if not rows:
                    raise subject_not_found(subject)
                if any(deleted == 0 for _, deleted in rows):
                    raise RegistryError(
                        404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted"
                    )
                conn.execute("DELETE FROM subject_versions WHERE subject = ?", (subject,))
                return [version for version, _ in rows]
            rows = conn.execute(
                "SELECT version FROM subject_versions WHERE subject = ? AND deleted = 0 ORDER BY version", (subject,)
            ).fetchall()
            if not rows:
                raise subject_not_found(subject)
            conn.execute("UPDATE subject_versions SET deleted = 1 WHERE subject = ?", (subject,))
            return [row[0] for row in rows]

    def delete_version(self, subject: str, version: int | str) -> int:
        registered = self.get_version(subject, version)
        with self._write() as conn:
            changed = conn.execute(
                "UPDATE subject_versions SET deleted = 1 WHERE subject = ? AND version = ? AND deleted = 0",
                (subject, registered.version),
            ).rowcount
        if not changed:
            raise version_not_found(subject, version)
        return registered.version


_PG_DDL = (
    "CREATE TABLE IF NOT EXISTS schemas (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "schema_type TEXT NOT NULL, schema_text TEXT NOT NULL, refs TEXT NOT NULL)",
    # md5 of the text: a btree row cannot hold a large schema itself
    "CREATE UNIQUE INDEX IF NOT EXISTS schemas_unique ON schemas (schema_type, md5(schema_text), md5(refs))",
    "CREATE TABLE IF NOT EXISTS subject_versions (subject TEXT NOT NULL, version INTEGER NOT NULL, "
    "schema_id BIGINT NOT NULL REFERENCES schemas (id), deleted INTEGER NOT NULL DEFAULT 0, "
    "registered_at TEXT NOT NULL, PRIMARY KEY (subject, version))",
    "CREATE TABLE IF NOT EXISTS config (subject TEXT PRIMARY KEY, compatibility TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS config_log (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, subject TEXT, "
    "who TEXT NOT NULL, changed_at TEXT NOT NULL, old TEXT, new TEXT, reason TEXT)",
)
_PG_WRITE_LOCK = 7352  # one registry writer at a time: versions and ids follow commit order


class _PostgresConnection:
    """The slice of sqlite3's connection API the store uses, over psycopg (``?`` placeholders)."""

    def __init__(self, conn: object) -> None:
        self.conn = conn

    def execute(self, sql: str, params: tuple | list = ()) -> object:
        cursor = self.conn.cursor()  # type: ignore[attr-defined]
        cursor.execute(sql.replace("?", "%s"), tuple(params))
        return cursor


class PostgresRegistryStore(RegistryStore):
    """The same registry state in PostgreSQL (``postgresql://...``), for teams that run one."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise RegistryError(500, 50001, "a PostgreSQL registry store needs psycopg") from None
        self._psycopg = psycopg
        self.db_path = url
        self.description = url
        with self._write() as conn:
            for statement in _PG_DDL:
                conn.execute(statement)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with self._psycopg.connect(self.db_path, autocommit=True) as conn:
            yield _PostgresConnection(conn)  # type: ignore[misc]

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._psycopg.connect(self.db_path) as conn, conn.transaction():
            wrapped = _PostgresConnection(conn)
            wrapped.execute("SELECT pg_advisory_xact_lock(?)", (_PG_WRITE_LOCK,))
            yield wrapped  # type: ignore[misc]


def open_registry_store(spec: str | Path) -> RegistryStore:
    """A SQLite file, or ``postgresql://`` for a PostgreSQL database."""
    text = str(spec)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresRegistryStore(text)
    return RegistryStore(text)
