"""The registry's state: schemas, subject versions, compatibility config and its log (SQLite or PostgreSQL).

Connections are pooled (one per concurrent request at most). Every read is one indexed query:
reading a version never loads the subject's other versions. A registration checks compatibility
*outside* the write lock (optimistic): it notes the subject's state (last version number, live
versions, mode), runs the check, then in a short write transaction re-reads that state and inserts
only when it is unchanged; when another writer got in between, it checks again. After a few lost
races it checks inside the lock, so a hot subject still makes progress. Writes take the database's
write lock up front (SQLite ``BEGIN IMMEDIATE`` in WAL mode with a busy timeout, a PostgreSQL
advisory lock), so versions are consecutive and schema ids unique and increasing in commit order.
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from tscontract.contract.model import COMPATIBILITY_MODES
from tscontract.errors import InputError
from tscontract.registry.contract_fields import properties_match, property_value
from tscontract.registry.errors import RegistryError, schema_not_found, subject_not_found, version_not_found
from tscontract.registry.references import self_contained

COMPATIBILITY_LEVELS = COMPATIBILITY_MODES  # the modes a contract's evolution section names
DEFAULT_COMPATIBILITY = "FULL_TRANSITIVE"
_GLOBAL = ""  # the config row of the global level
MAX_ID = 2**31 - 1  # Confluent's ids and versions are 32-bit
_OPTIMISTIC_TRIES = 3  # lost races before a registration checks inside the write lock
_IDLE_CONNECTIONS = 32
_CHECK_SLOTS = max(2, min(4, os.cpu_count() or 1))  # compatibility checks running at once

# a schema's identity: (schema type, text, references, metadata, ruleSet); one id per identity
Identity = tuple[str, str, str, str, str]
# compat(mode, schema_type, new_schema_text, older_schema_texts_newest_first) -> (ok, messages)
CompatFn = Callable[[str, str, str, list[str]], tuple[bool, list[str]]]

_DDL = """
CREATE TABLE IF NOT EXISTS schemas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    schema_type TEXT NOT NULL,
    schema_text TEXT NOT NULL,
    refs TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '',
    rule_set TEXT NOT NULL DEFAULT '',
    UNIQUE (schema_type, schema_text, refs, metadata, rule_set)
);
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
# a store written before schemas carried Confluent's metadata and ruleSet: rebuilt in one transaction
# (SQLite's procedure for a changed constraint: new table, copy, drop, rename, foreign keys off)
_MIGRATE_SCHEMAS = (
    "CREATE TABLE schemas_with_rules (id INTEGER PRIMARY KEY AUTOINCREMENT, schema_type TEXT NOT NULL,"
    " schema_text TEXT NOT NULL, refs TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '',"
    " rule_set TEXT NOT NULL DEFAULT '', UNIQUE (schema_type, schema_text, refs, metadata, rule_set))",
    "INSERT INTO schemas_with_rules (id, schema_type, schema_text, refs)"
    " SELECT id, schema_type, schema_text, refs FROM schemas",
    "DROP TABLE schemas",
    "ALTER TABLE schemas_with_rules RENAME TO schemas",
)
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
DEFAULT_MODE = "READWRITE"


MAX_SUBJECT_CHARS = 512
# Confluent's reserved names of the global and default contexts
_RESERVED_SUBJECTS = ("__GLOBAL", "__EMPTY")


def subject_problem(subject: str) -> str | None:
    """Why ``subject`` is not a valid subject name, or None: the one rule every route and store write applies.

    Confluent's practical rules (not empty, no control characters, not a reserved context name) plus
    what keeps a name from reading as a path anywhere it lands (files, URLs, logs): no backslash, at
    most ``MAX_SUBJECT_CHARS`` characters, and split on ``/`` no empty, ``.`` or ``..`` part (so
    ``/``, ``a//b`` and ``../x`` are refused, ``team/bars-value`` and ``a..b`` are not)."""
    if not subject:
        return "empty"
    if len(subject) > MAX_SUBJECT_CHARS:
        return f"longer than {MAX_SUBJECT_CHARS} characters"
    bad = next((c for c in subject if unicodedata.category(c) in ("Cc", "Cf", "Cs")), None)
    if bad is not None:
        return f"control character U+{ord(bad):04X}"
    if "\\" in subject:
        return "backslash"
    if subject in _RESERVED_SUBJECTS:
        return "reserved name"
    if any(part in ("", ".", "..") for part in subject.split("/")):
        return "empty, '.' or '..' path part"
    return None


def check_subject(subject: str) -> str:
    """The subject, or 42208 naming what ``subject_problem`` found."""
    problem = subject_problem(subject)
    if problem is not None:
        shown = subject if len(subject) <= 80 else subject[:80] + "..."
        raise RegistryError(422, 42208, f"The specified subject {shown!r} is not valid: {problem}")
    return subject


@dataclass(frozen=True)
class RegisteredVersion:
    subject: str
    version: int
    schema_id: int
    schema_type: str
    schema_text: str
    references: list[dict]
    metadata: str = ""  # compact JSON, '' when none
    rule_set: str = ""


class StoredSchema(NamedTuple):
    """A schema by its global id."""

    schema_type: str
    schema_text: str
    references: list[dict]
    metadata: str = ""
    rule_set: str = ""


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


_SELECT_VERSION = (
    "SELECT v.version, s.id, s.schema_type, s.schema_text, s.refs, s.metadata, s.rule_set FROM subject_versions v"
    " JOIN schemas s ON s.id = v.schema_id"
)


class RegistryStore:
    """The registry's persistent state in one SQLite file (created on first use)."""

    _find_schema_sql = (
        "SELECT id FROM schemas WHERE schema_type = ? AND schema_text = ? AND refs = ?"
        " AND metadata = ? AND rule_set = ?"
    )
    # an indexed read of a local SQLite file in WAL mode takes microseconds and never waits for a
    # writer: the server answers it on its event loop instead of paying a thread hop
    inline_reads = True

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = str(db_path)
        self.description = self.db_path
        self._pool: queue.LifoQueue[Any] = queue.LifoQueue()
        self._schema_cache: OrderedDict[int, tuple[str, str, list[dict]]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._init_locks()
        conn = self._open()
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            columns = {row[1] for row in conn.execute("PRAGMA table_info(schemas)").fetchall()}
            if columns and "metadata" not in columns:
                conn.execute("PRAGMA foreign_keys=OFF")
                conn.execute("BEGIN IMMEDIATE")
                for statement in _MIGRATE_SCHEMAS:
                    conn.execute(statement)
                conn.execute("COMMIT")
                conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(_DDL)
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

    # -- reads -------------------------------------------------------------------------------

    def subjects(self, include_deleted: bool = False) -> list[str]:
        sql = "SELECT DISTINCT subject FROM subject_versions"
        if not include_deleted:
            sql += " WHERE deleted = 0"
        with self._connect() as conn:
            return [row[0] for row in conn.execute(sql + " ORDER BY subject").fetchall()]

    def versions(self, subject: str, include_deleted: bool = False) -> list[int]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT version FROM subject_versions WHERE subject = ? AND (deleted = 0 OR ? = 1) ORDER BY version",
                (subject, int(include_deleted)),
            ).fetchall()
        if not rows:
            raise subject_not_found(subject)
        return [row[0] for row in rows]

    @staticmethod
    def _registered(subject: str, row: tuple) -> RegisteredVersion:
        version, schema_id, schema_type, text, refs, metadata, rule_set = row
        return RegisteredVersion(subject, version, schema_id, schema_type, text, json.loads(refs), metadata, rule_set)

    @staticmethod
    def _has_live(conn: Any, subject: str) -> bool:
        row = conn.execute("SELECT 1 FROM subject_versions WHERE subject = ? AND deleted = 0 LIMIT 1", (subject,))
        return row.fetchone() is not None

    def get_version(self, subject: str, version: int | str) -> RegisteredVersion:
        """One version (``latest`` or -1 for the newest live one): one indexed query."""
        with self._connect() as conn:
            if version in ("latest", -1):
                row = conn.execute(
                    _SELECT_VERSION + " WHERE v.subject = ? AND v.deleted = 0 ORDER BY v.version DESC LIMIT 1",
                    (subject,),
                ).fetchone()
            elif isinstance(version, int) and 1 <= version <= MAX_ID:
                row = conn.execute(
                    _SELECT_VERSION + " WHERE v.subject = ? AND v.version = ? AND v.deleted = 0", (subject, version)
                ).fetchone()
            else:
                row = None
            if row is None:
                if not self._has_live(conn, subject):
                    raise subject_not_found(subject)
                raise version_not_found(subject, version)
        return self._registered(subject, row)

    def live_texts(self, subject: str) -> list[tuple[str, str]]:
        """(schema type, text) of the subject's live versions, newest first (what a transitive check needs)."""
        with self._connect() as conn:
            return self._live_texts(conn, subject, None)

    def _live_texts(self, conn: Any, subject: str, limit: int | None) -> list[tuple[str, str]]:
        """(schema type, text) of live versions, newest first; a version with references as one
        self-contained text (what a compatibility check reads)."""
        return [(kind, text) for kind, text, _ in self._live_rows(conn, subject, limit)]

    def _live_rows(self, conn: Any, subject: str, limit: int | None) -> list[tuple[str, str, str]]:
        """(schema type, self-contained text, metadata) of live versions, newest first."""
        sql = (
            "SELECT s.schema_type, s.schema_text, s.refs, s.metadata FROM subject_versions v"
            " JOIN schemas s ON s.id = v.schema_id WHERE v.subject = ? AND v.deleted = 0 ORDER BY v.version DESC"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = conn.execute(sql, (subject,)).fetchall()
        return [(kind, self.check_text(kind, text, json.loads(refs)), meta) for kind, text, refs, meta in rows]

    def check_text(self, schema_type: str, text: str, references: list[dict]) -> str:
        """The text a compatibility check reads: ``text`` itself, or with what its references reach."""
        if not references:
            return text

        return self_contained(self, schema_type, text, references)

    def cached_schema(self, schema_id: int) -> StoredSchema | None:
        """The schema with this id when it was read before (no database access), else None."""
        with self._cache_lock:
            cached = self._schema_cache.get(schema_id)
            if cached is not None:
                self._schema_cache.move_to_end(schema_id)
            return cached

    def schema_by_id(self, schema_id: int) -> StoredSchema:
        """A schema by its global id; ids are never reused and a schema never changes, so answers are cached."""
        if not isinstance(schema_id, int) or not 1 <= schema_id <= 2**63 - 1:
            raise schema_not_found(f"Schema {schema_id} not found")
        cached = self.cached_schema(schema_id)
        if cached is not None:
            return cached
        with self._connect() as conn:
            row = conn.execute(
                "SELECT schema_type, schema_text, refs, metadata, rule_set FROM schemas WHERE id = ?", (schema_id,)
            ).fetchone()
        if row is None:
            raise schema_not_found(f"Schema {schema_id} not found")
        found = StoredSchema(row[0], row[1], json.loads(row[2]), row[3], row[4])
        with self._cache_lock:
            self._schema_cache[schema_id] = found
            if len(self._schema_cache) > 4096:
                self._schema_cache.popitem(last=False)
        return found

    def _find_schema(self, conn: Any, identity: Identity) -> int | None:
        row = conn.execute(self._find_schema_sql, self._find_schema_params(identity)).fetchone()
        return None if row is None else int(row[0])

    @staticmethod
    def _find_schema_params(identity: Identity) -> tuple:
        return identity

    def _live_version_of(self, conn: Any, subject: str, identity: Identity) -> tuple | None:
        """(version, schema id) of the newest live version of the subject holding exactly this schema."""
        schema_id = self._find_schema(conn, identity)
        if schema_id is None:
            return None
        row = conn.execute(
            "SELECT version FROM subject_versions WHERE schema_id = ? AND subject = ? AND deleted = 0"
            " ORDER BY version DESC LIMIT 1",
            (schema_id, subject),
        ).fetchone()
        return None if row is None else (row[0], schema_id)

    def lookup(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: list[dict] | None,
        metadata: str | None = None,
        rule_set: str | None = None,
    ) -> RegisteredVersion:
        """The newest live version of the subject holding this schema. Without ``metadata``/``rule_set``
        (None) any stored ones match, as a serializer looking up its schema expects."""
        sql = _SELECT_VERSION + " WHERE v.subject = ? AND v.deleted = 0 AND s.schema_type = ? AND s.schema_text = ?"
        sql += " AND s.refs = ?"
        params: list[Any] = [subject, schema_type, text, _refs_key(references)]
        for column, value in (("metadata", metadata), ("rule_set", rule_set)):
            if value is not None:
                sql, params = sql + f" AND s.{column} = ?", [*params, value]
        with self._connect() as conn:
            row = conn.execute(sql + " ORDER BY v.version DESC LIMIT 1", params).fetchone()
            if row is None:
                if not self._has_live(conn, subject):
                    raise subject_not_found(subject)
                raise schema_not_found()
        return self._registered(subject, row)

    def compatibility(self, subject: str | None = None, default_to_global: bool = True) -> str | None:
        """The subject's level (or the global one); None when the subject has none and no fallback asked."""
        with self._connect() as conn:
            return self._compatibility(conn, subject, default_to_global)

    def _compatibility(self, conn: Any, subject: str | None, default_to_global: bool) -> str | None:
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

    # -- modes -------------------------------------------------------------------------------

    def mode(self, subject: str | None = None, default_to_global: bool = True) -> str | None:
        """The subject's mode (or the global one, READWRITE by default); None when asked for the subject's own."""
        with self._connect() as conn:
            return self._mode(conn, subject, default_to_global)

    @staticmethod
    def _mode(conn: Any, subject: str | None, default_to_global: bool = True) -> str | None:
        if subject:
            row = conn.execute("SELECT mode FROM modes WHERE subject = ?", (subject,)).fetchone()
            if row is not None:
                return row[0]
            if not default_to_global:
                return None
        row = conn.execute("SELECT mode FROM modes WHERE subject = ?", (_GLOBAL,)).fetchone()
        return row[0] if row is not None else DEFAULT_MODE

    def set_mode(self, subject: str | None, mode: str) -> str:
        if subject:
            check_subject(subject)
        if mode not in MODES:
            raise RegistryError(422, 42204, f"Invalid mode {mode!r}; one of {', '.join(MODES)}")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO modes (subject, mode) VALUES (?, ?)"
                " ON CONFLICT (subject) DO UPDATE SET mode = excluded.mode",
                (subject or _GLOBAL, mode),
            )
        return mode

    def delete_mode(self, subject: str) -> str:
        """Remove the subject's own mode (the global one applies again); returns the mode removed."""
        with self._write() as conn:
            old = self._mode(conn, subject, False)
            if old is None:
                raise RegistryError(404, 40409, f"Subject '{subject}' does not have a subject-level mode configured")
            conn.execute("DELETE FROM modes WHERE subject = ?", (subject,))
        return old

    # -- writes ------------------------------------------------------------------------------

    def _subject_state(self, conn: Any, subject: str) -> tuple:
        """What a compatibility decision depends on: last version number, live versions, the mode in force."""
        # one statement: it also runs under the write lock, where every extra round trip waits for
        # the interpreter lock while other writers queue behind it
        last, live, own_mode, global_mode, own_group, global_group = conn.execute(
            "SELECT coalesce(max(version), 0), coalesce(sum(1 - deleted), 0),"
            " (SELECT compatibility FROM config WHERE subject = ?),"
            " (SELECT compatibility FROM config WHERE subject = ?),"
            " (SELECT property FROM config_groups WHERE subject = ?),"
            " (SELECT property FROM config_groups WHERE subject = ?)"
            " FROM subject_versions WHERE subject = ?",
            (subject, _GLOBAL, subject, _GLOBAL, subject),
        ).fetchone()
        mode = own_mode or global_mode or DEFAULT_COMPATIBILITY
        group = own_group if own_group is not None else global_group
        return int(last), int(live), mode, group or None

    @staticmethod
    def _group(conn: Any, subject: str | None) -> str | None:
        """The metadata property that splits the subject into compatibility groups (subject's, else global)."""
        for key in ([subject] if subject else []) + [_GLOBAL]:
            row = conn.execute("SELECT property FROM config_groups WHERE subject = ?", (key,)).fetchone()
            if row is not None:
                return row[0] or None
        return None

    def compatibility_group(self, subject: str | None = None) -> str | None:
        with self._connect() as conn:
            return self._group(conn, subject)

    def set_compatibility_group(self, subject: str | None, prop: str) -> None:
        """Check a new version only against versions with the same value of metadata property ``prop``
        (Confluent's ``compatibilityGroup``, e.g. ``major_version``); '' turns grouping off."""
        if subject:
            check_subject(subject)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO config_groups (subject, property) VALUES (?, ?)"
                " ON CONFLICT (subject) DO UPDATE SET property = excluded.property",
                (subject or _GLOBAL, prop),
            )

    def _decide(
        self, conn: Any, subject: str, identity: Identity, compat: CompatFn, check_text: str | None = None
    ) -> tuple[tuple, int | None]:
        """(the subject's state, the id when this schema is already live there); raises 409 when incompatible."""
        state = self._subject_state(conn, subject)
        found = self._live_version_of(conn, subject, identity)
        if found is not None:
            return state, found[1]
        mode, group = state[2], state[3]
        schema_type, text = identity[0], identity[1]
        transitive = mode.endswith("_TRANSITIVE")
        if group:
            wanted = {group: property_value(identity[3], group)}
            rows = self._live_rows(conn, subject, None)
            live = [(kind, old) for kind, old, metadata in rows if properties_match(metadata, wanted)]
            live = live if transitive else live[:1]
        else:
            live = self._live_texts(conn, subject, None if transitive else 1)
        if live and live[0][0] != schema_type and mode != "NONE":
            raise RegistryError(409, 409, f"Schema type {schema_type} differs from the subject's {live[0][0]}")
        olds = olds_for_mode(mode, [old for kind, old in live if kind == schema_type])
        with self._check_slots:
            ok, messages = compat(mode, schema_type, check_text or text, olds)
        if not ok:
            detail = "; ".join(messages) or "incompatible"
            raise RegistryError(
                409,
                409,
                f"Schema being registered is incompatible with an earlier schema for subject '{subject}' ({mode}): "
                f"{detail}",
            )
        return state, None

    def register(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: list[dict] | None,
        compat: CompatFn,
        metadata: str = "",
        rule_set: str = "",
        check_text: str | None = None,
    ) -> int:
        """Register a schema under a subject and return its global id (``check_text``: the text the
        compatibility check reads when it is not ``text``, e.g. with its references resolved).

        The same schema already live under the subject returns its id without a new version; the
        same schema under another subject reuses its global id. Otherwise the subject's mode is
        checked against its live versions outside the write lock, and the insert happens only if
        the subject did not change since (else the check runs again).
        """
        check_subject(subject)
        identity = (schema_type, text, _refs_key(references), metadata, rule_set)
        for _ in range(_OPTIMISTIC_TRIES):
            with self._connect() as conn:
                state, existing = self._decide(conn, subject, identity, compat, check_text)
            if existing is not None:
                return existing
            with self._write() as conn:
                if self._subject_state(conn, subject) == state:
                    return self._insert(conn, subject, identity, state[0] + 1)
        with self._write() as conn:  # lost every race: decide under the lock
            state, existing = self._decide(conn, subject, identity, compat, check_text)
            if existing is not None:
                return existing
            return self._insert(conn, subject, identity, state[0] + 1)

    def import_schema(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: list[dict] | None,
        schema_id: int,
        version: int | None = None,
        metadata: str = "",
        rule_set: str = "",
    ) -> int:
        """IMPORT mode: keep the id (and version) another registry gave the schema; no compatibility check.

        Importing the same thing again answers the same id. An id held by another schema, a schema
        held under another id, or a version of the subject held by another schema is refused (42205).
        """
        check_subject(subject)
        identity = (schema_type, text, _refs_key(references), metadata, rule_set)
        with self._write() as conn:
            existing = self._find_schema(conn, identity)
            if existing is not None and existing != schema_id:
                raise RegistryError(
                    422, 42205, f"Schema already registered with id {existing}; cannot import it as id {schema_id}"
                )
            if existing is None:
                taken = conn.execute("SELECT 1 FROM schemas WHERE id = ?", (schema_id,)).fetchone()
                if taken is not None:
                    raise RegistryError(
                        422,
                        42205,
                        f"Overwrite new schema with id {schema_id} is not permitted: it holds another schema",
                    )
            number = version
            if number is None:
                row = conn.execute(
                    "SELECT coalesce(max(version), 0) FROM subject_versions WHERE subject = ?", (subject,)
                ).fetchone()
                number = int(row[0]) + 1
            held = conn.execute(
                "SELECT schema_id FROM subject_versions WHERE subject = ? AND version = ?", (subject, number)
            ).fetchone()
            if held is not None:
                if held[0] == schema_id:
                    return schema_id
                raise RegistryError(
                    422, 42205, f"Version {number} of subject '{subject}' already holds schema id {held[0]}"
                )
            return self._insert(conn, subject, identity, number, schema_id)

    def _insert(self, conn: Any, subject: str, identity: Identity, version: int, explicit_id: int | None = None) -> int:
        schema_id = self._find_schema(conn, identity)
        if schema_id is None:
            schema_id = self._insert_schema(conn, identity, explicit_id)
        conn.execute(
            "INSERT INTO subject_versions (subject, version, schema_id, registered_at) VALUES (?, ?, ?, ?)",
            (subject, version, schema_id, _now()),
        )
        return int(schema_id)

    def _insert_schema(self, conn: Any, identity: Identity, explicit_id: int | None) -> int:
        columns = "schema_type, schema_text, refs, metadata, rule_set"
        if explicit_id is None:
            sql = f"INSERT INTO schemas ({columns}) VALUES (?, ?, ?, ?, ?) RETURNING id"
            return int(conn.execute(sql, identity).fetchone()[0])
        conn.execute(f"INSERT INTO schemas (id, {columns}) VALUES (?, ?, ?, ?, ?, ?)", (explicit_id, *identity))
        return explicit_id

    def set_compatibility(self, subject: str | None, level: str, who: str, reason: str | None) -> str:
        if subject:
            check_subject(subject)
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
        with self._write() as conn:
            if version in ("latest", -1):
                row = conn.execute(
                    "SELECT max(version) FROM subject_versions WHERE subject = ? AND deleted = 0", (subject,)
                ).fetchone()
                number = row[0] if row else None
            else:
                number = version
            changed = 0
            if isinstance(number, int) and 1 <= number <= MAX_ID:
                changed = conn.execute(
                    "UPDATE subject_versions SET deleted = 1 WHERE subject = ? AND version = ? AND deleted = 0",
                    (subject, number),
                ).rowcount
            if not changed:
                if not self._has_live(conn, subject):
                    raise subject_not_found(subject)
                raise version_not_found(subject, version)
        return int(number)  # type: ignore[arg-type]


_PG_DDL = (
    "CREATE TABLE IF NOT EXISTS schemas (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "schema_type TEXT NOT NULL, schema_text TEXT NOT NULL, refs TEXT NOT NULL)",
    # a store written before schemas carried Confluent's metadata and ruleSet gains the columns
    "ALTER TABLE schemas ADD COLUMN IF NOT EXISTS metadata TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE schemas ADD COLUMN IF NOT EXISTS rule_set TEXT NOT NULL DEFAULT ''",
    "DROP INDEX IF EXISTS schemas_unique",
    # md5 of the text: a btree row cannot hold a large schema itself
    "CREATE UNIQUE INDEX IF NOT EXISTS schemas_identity ON schemas"
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
    )
    inline_reads = False  # a round trip to a server: reads take a thread

    def __init__(self, url: str) -> None:
        import psycopg

        self._psycopg = psycopg
        self.db_path = url
        self.description = url
        self._pool = queue.LifoQueue()
        self._schema_cache = OrderedDict()
        self._cache_lock = threading.Lock()
        self._init_locks()
        with self._write() as conn:
            for statement in _PG_DDL:
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
        # the identity sequence continues after the largest id, imported or not
        conn.execute("SELECT setval(pg_get_serial_sequence('schemas', 'id'), (SELECT max(id) FROM schemas))")
        return explicit_id

    def _open(self) -> Any:
        return _PostgresConnection(self._psycopg.connect(self.db_path, autocommit=True))

    def _begin(self, conn: Any) -> None:
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_PG_WRITE_LOCK,))


def open_registry_store(spec: str | Path) -> RegistryStore:
    """A SQLite file, or ``postgresql://`` for a PostgreSQL database; InputError when it cannot be opened."""
    text = str(spec)
    try:
        if text.startswith(("postgresql://", "postgres://")):
            try:
                import psycopg  # noqa: F401
            except ImportError:
                raise InputError(
                    "a PostgreSQL registry store needs psycopg: pip install 'tscontract[postgres]'"
                ) from None
            return PostgresRegistryStore(text)
        return RegistryStore(text)
    except InputError:
        raise
    except Exception as exc:  # sqlite3.Error, psycopg.Error, OSError: a store that cannot be opened is bad input
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"cannot open the registry store {redact(text)}: {reason}") from None


def redact(spec: str) -> str:
    """A store URL without its password (for banners and errors)."""
    if "://" not in spec or "@" not in spec:
        return spec
    scheme, rest = spec.split("://", 1)
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}{':***' if ':' in credentials else ''}@{host}"
