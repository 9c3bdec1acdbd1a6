"""The store's reads: subjects, versions, schemas by id, lookups (each one indexed query)."""

from __future__ import annotations

import json
from typing import Any

from tscontract.registry.errors import schema_not_found, subject_not_found, version_not_found
from tscontract.registry.references import self_contained
from tscontract.registry.store.pool import StoreConnections
from tscontract.registry.store.records import (
    _SELECT_VERSION,
    MAX_ID,
    Identity,
    RegisteredVersion,
    StoredSchema,
    _refs_key,
)


class StoreReads(StoreConnections):
    """Reads of subjects, versions and schemas."""

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

    @staticmethod
    def _has_any(conn: Any, subject: str) -> bool:
        row = conn.execute("SELECT 1 FROM subject_versions WHERE subject = ? LIMIT 1", (subject,))
        return row.fetchone() is not None

    def get_version(self, subject: str, version: int | str, include_deleted: bool = False) -> RegisteredVersion:
        """One version (``latest`` or -1 for the newest live one; a soft-deleted one too with
        ``include_deleted``, as ``?deleted=true`` asks): one indexed query."""
        live = "" if include_deleted else " AND v.deleted = 0"
        with self._connect() as conn:
            if version in ("latest", -1):
                row = conn.execute(
                    _SELECT_VERSION + f" WHERE v.subject = ?{live} ORDER BY v.version DESC LIMIT 1",
                    (subject,),
                ).fetchone()
            elif isinstance(version, int) and 1 <= version <= MAX_ID:
                row = conn.execute(
                    _SELECT_VERSION + f" WHERE v.subject = ? AND v.version = ?{live}", (subject, version)
                ).fetchone()
            else:
                row = None
            if row is None:
                if not self._has_live(conn, subject) and not (include_deleted and self._has_any(conn, subject)):
                    raise subject_not_found(subject)
                raise version_not_found(subject, version)
        return self._registered(subject, row)

    def live_versions(self, subject: str) -> list[RegisteredVersion]:
        """The subject's live versions, newest first ([] when it has none)."""
        with self._connect() as conn:
            rows = conn.execute(
                _SELECT_VERSION + " WHERE v.subject = ? AND v.deleted = 0 ORDER BY v.version DESC", (subject,)
            ).fetchall()
        return [self._registered(subject, row) for row in rows]

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
            if schema_id in self._gone:  # read from a snapshot taken before its delete committed
                return found
            self._schema_cache[schema_id] = found
            if len(self._schema_cache) > 4096:
                self._schema_cache.popitem(last=False)
        return found

    def holds_schema(self, schema_id: int) -> bool:
        """Is ``schema_id`` still held (its last version not permanently deleted)?"""
        with self._connect() as conn:
            return conn.execute("SELECT 1 FROM schemas WHERE id = ?", (schema_id,)).fetchone() is not None

    def ids_of_content(self, schema_id: int) -> list[int]:
        """Every id holding the same schema as ``schema_id`` (IMPORT may keep one schema under several), ascending."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT b.id FROM schemas a JOIN schemas b ON b.schema_type = a.schema_type AND b.schema_text ="
                " a.schema_text AND b.refs = a.refs AND b.metadata = a.metadata AND b.rule_set = a.rule_set"
                " WHERE a.id = ? ORDER BY b.id",
                (schema_id,),
            ).fetchall()
        return [int(row[0]) for row in rows]

    def schema_ids(self) -> list[int]:
        """Every schema id, ascending (what ``GET /schemas/guids/{guid}`` learns guids from)."""
        with self._connect() as conn:
            return [row[0] for row in conn.execute("SELECT id FROM schemas ORDER BY id").fetchall()]

    def versions_of_id(self, schema_id: int, include_deleted: bool = False) -> list[tuple[str, int]] | None:
        """(subject, version) pairs holding the schema, by subject then version; None when no version
        (live or soft-deleted) holds it, as ``GET /schemas/ids/{id}/versions`` answers 40403 then."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT subject, version, deleted FROM subject_versions WHERE schema_id = ? ORDER BY subject, version",
                (schema_id,),
            ).fetchall()
        if not rows:
            return None
        return [(subject, version) for subject, version, deleted in rows if include_deleted or not deleted]

    def referenced_by(self, subject: str, version: int, include_deleted: bool = False) -> list[int]:
        """Ids of the schemas that reference this subject version and that a (live, or with
        ``include_deleted`` any) version holds, ascending."""
        live = "" if include_deleted else " AND v.deleted = 0"
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT DISTINCT s.id, s.refs FROM schemas s JOIN subject_versions v ON v.schema_id = s.id"
                f" WHERE s.refs LIKE ?{live} ORDER BY s.id",
                ("%" + json.dumps(subject)[1:-1] + "%",),
            ).fetchall()
        return [
            int(schema_id)
            for schema_id, refs in rows
            if any(r.get("subject") == subject and r.get("version") == version for r in json.loads(refs))
        ]

    def all_versions(self, prefix: str = "", include_deleted: bool = False) -> list[RegisteredVersion]:
        """Every version of every subject starting with ``prefix``, by subject then version."""
        sql = _SELECT_VERSION.replace(" FROM", ", v.subject FROM", 1) + " WHERE substr(v.subject, 1, ?) = ?"
        if not include_deleted:
            sql += " AND v.deleted = 0"
        with self._connect() as conn:
            rows = conn.execute(sql + " ORDER BY v.subject, v.version", (len(prefix), prefix)).fetchall()
        return [self._registered(row[7], row[:7]) for row in rows]

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
        include_deleted: bool = False,
    ) -> RegisteredVersion:
        """The newest live version of the subject holding this schema (a soft-deleted one too with
        ``include_deleted``). Without ``metadata``/``rule_set`` (None) any stored ones match, as a
        serializer looking up its schema expects."""
        live = "" if include_deleted else " AND v.deleted = 0"
        sql = _SELECT_VERSION + f" WHERE v.subject = ?{live} AND s.schema_type = ? AND s.schema_text = ?"
        sql += " AND s.refs = ?"
        params: list[Any] = [subject, schema_type, text, _refs_key(references)]
        for column, value in (("metadata", metadata), ("rule_set", rule_set)):
            if value is not None:
                sql, params = sql + f" AND s.{column} = ?", [*params, value]
        with self._connect() as conn:
            row = conn.execute(sql + " ORDER BY v.version DESC LIMIT 1", params).fetchone()
            if row is None:
                if not (self._has_any(conn, subject) if include_deleted else self._has_live(conn, subject)):
                    raise subject_not_found(subject)
                raise schema_not_found()
        return self._registered(subject, row)
