"""Registering, importing and deleting versions: ``RegistryStore``, the registry's state in SQLite."""

from __future__ import annotations

import json
from typing import Any

from tscontract.registry.contract_fields import properties_match, property_value
from tscontract.registry.errors import RegistryError, subject_not_found, version_not_found
from tscontract.registry.store.config import StoreConfig
from tscontract.registry.store.records import (
    _GLOBAL,
    DEFAULT_COMPATIBILITY,
    MAX_ID,
    CompatFn,
    Identity,
    _now,
    _refs_key,
    olds_for_mode,
)
from tscontract.registry.store.subjects import check_subject

_OPTIMISTIC_TRIES = 3  # lost races before a registration checks inside the write lock
INCOMPATIBLE = 40901  # Errors.INCOMPATIBLE_SCHEMA_ERROR_CODE (Confluent 8.x; HTTP 409)


def incompatible(subject: str, mode: str, messages: list[str]) -> RegistryError:
    """Confluent's 409 for an incompatible registration: its text, the reasons then its mode line."""
    details = ", ".join([*messages, f"{{validateFields: 'false', compatibility: '{mode}'}}"])
    return RegistryError(
        409,
        INCOMPATIBLE,
        f'Schema being registered is incompatible with an earlier schema for subject "{subject}", details: [{details}]',
    )


class RegistryStore(StoreConfig):
    """The registry's persistent state in one SQLite file (created on first use)."""

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
            raise incompatible(subject, mode, ["Incompatible because of different schema type"])
        olds = olds_for_mode(mode, [old for kind, old in live if kind == schema_type])
        with self._check_slots:
            ok, messages = compat(mode, schema_type, check_text or text, olds)
        if not ok:
            raise incompatible(subject, mode, [str(m) for m in messages] or ["incompatible"])
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
        """IMPORT mode: keep the id (and version) another registry gave the schema; no compatibility
        check; returns the version. As Confluent's, the same schema may come under a second id
        (``testImportModeWithSameSchemaDifferentId``); an id held by another schema, or a version of the
        subject held by another id, is refused (42205). Importing the same thing again is the same version."""
        check_subject(subject)
        identity = (schema_type, text, _refs_key(references), metadata, rule_set)
        with self._write() as conn:
            held = conn.execute(
                "SELECT schema_type, schema_text, refs, metadata, rule_set FROM schemas WHERE id = ?", (schema_id,)
            ).fetchone()
            if held is not None and tuple(held) != identity:
                raise RegistryError(422, 42205, f"Overwrite new schema with id {schema_id} is not permitted.")
            number = version
            if number is None:
                row = conn.execute(
                    "SELECT coalesce(max(version), 0) FROM subject_versions WHERE subject = ?", (subject,)
                ).fetchone()
                number = int(row[0]) + 1
            taken = conn.execute(
                "SELECT schema_id FROM subject_versions WHERE subject = ? AND version = ?", (subject, number)
            ).fetchone()
            if taken is not None:
                if taken[0] == schema_id:  # the same import again; a soft-deleted one comes back
                    conn.execute(
                        "UPDATE subject_versions SET deleted = 0 WHERE subject = ? AND version = ?", (subject, number)
                    )
                    return number
                raise RegistryError(
                    422, 42205, f"Version {number} of subject '{subject}' already holds schema id {taken[0]}"
                )
            if held is None:
                self._insert_schema(conn, identity, schema_id)
            conn.execute(
                "INSERT INTO subject_versions (subject, version, schema_id, registered_at) VALUES (?, ?, ?, ?)",
                (subject, number, schema_id, _now()),
            )
            return number

    def _insert(self, conn: Any, subject: str, identity: Identity, version: int) -> int:
        schema_id = self._find_schema(conn, identity)
        if schema_id is None:
            schema_id = self._insert_schema(conn, identity, None)
        conn.execute(
            "INSERT INTO subject_versions (subject, version, schema_id, registered_at) VALUES (?, ?, ?, ?)",
            (subject, version, schema_id, _now()),
        )
        # as Confluent's register: a soft-deleted earlier version of the subject holding the same id goes for
        # good (the schema lives on in the new version), unless a schema references it
        rows = conn.execute(
            "SELECT version FROM subject_versions WHERE subject = ? AND schema_id = ? AND deleted = 1 AND version < ?",
            (subject, schema_id, version),
        ).fetchall()
        for (old,) in rows:
            try:
                self._refuse_referenced(conn, subject, [old])
            except RegistryError:
                continue
            conn.execute("DELETE FROM subject_versions WHERE subject = ? AND version = ?", (subject, old))
        return int(schema_id)

    def _insert_schema(self, conn: Any, identity: Identity, explicit_id: int | None) -> int:
        columns = "schema_type, schema_text, refs, metadata, rule_set"
        if explicit_id is None:
            sql = f"INSERT INTO schemas ({columns}) VALUES (?, ?, ?, ?, ?) RETURNING id"
            return int(conn.execute(sql, identity).fetchone()[0])
        conn.execute(f"INSERT INTO schemas (id, {columns}) VALUES (?, ?, ?, ?, ?, ?)", (explicit_id, *identity))
        return explicit_id

    @staticmethod
    def _refuse_referenced(
        conn: Any, subject: str, versions: list[int], include_deleted: bool = True, own: bool = True
    ) -> None:
        """422/42206 when a registered schema references one of the subject's versions. As Confluent:
        a soft delete counts only referrers a live version holds (``include_deleted=False``), a
        permanent one soft-deleted referrers too; a subject delete ignores the subject's own
        versions (``own=False``)."""
        live = "" if include_deleted else " AND v.deleted = 0"
        rows = conn.execute(
            "SELECT DISTINCT s.refs, v.subject FROM schemas s JOIN subject_versions v ON v.schema_id = s.id"
            f" WHERE s.refs LIKE ?{live}",
            ("%" + json.dumps(subject)[1:-1] + "%",),
        ).fetchall()
        for refs, holder in rows:
            if holder == subject and not own:
                continue
            for reference in json.loads(refs):
                if reference.get("subject") == subject and reference.get("version") in versions:
                    raise RegistryError(
                        422,
                        42206,
                        f"One or more references exist to the schema {{subject={subject}, "
                        f"version={reference['version']}}}.",
                    )

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        """Confluent's subject delete: soft marks every live version deleted (40404 when none is live
        but some are soft-deleted); permanent removes the soft-deleted versions, the subject's mode
        and compatibility (40405 while a version is live). 40401 when the subject holds nothing."""
        with self._write() as conn:
            rows = conn.execute(
                "SELECT version, deleted FROM subject_versions WHERE subject = ? ORDER BY version", (subject,)
            ).fetchall()
            if not rows:
                raise subject_not_found(subject)
            live = [version for version, deleted in rows if deleted == 0]
            if not permanent and not live:
                raise RegistryError(
                    404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently"
                )
            scope = [version for version, _ in rows] if permanent else live
            self._refuse_referenced(conn, subject, scope, permanent, own=False)  # 42206 before 40405, as Confluent
            if permanent and live:
                raise RegistryError(
                    404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted"
                )
            if not permanent:
                conn.execute("UPDATE subject_versions SET deleted = 1 WHERE subject = ?", (subject,))
                return live
            ids = self._ids_of(conn, "subject = ?", (subject,))
            conn.execute("DELETE FROM subject_versions WHERE subject = ?", (subject,))
            self._forget_subject(conn, subject)
            dropped = self._drop_orphans(conn, ids)
        self._evict(dropped)
        return [version for version, _ in rows]

    @staticmethod
    def _forget_subject(conn: Any, subject: str) -> None:
        """A subject with no version left loses its own mode and compatibility, as in Confluent."""
        for table in ("modes", "config", "config_groups"):
            conn.execute(f"DELETE FROM {table} WHERE subject = ?", (subject,))

    def delete_version(self, subject: str, version: int | str, permanent: bool = False) -> int:
        """Confluent's version delete: soft on a live version (40406 when it is soft-deleted already);
        permanent on a soft-deleted one (40407 while it is live). ``latest`` is the newest live version,
        or with ``permanent`` the newest one. 40401 when the subject holds nothing, else 40402."""
        with self._write() as conn:
            if version in ("latest", -1):
                live = "" if permanent else " AND deleted = 0"
                row = conn.execute(
                    f"SELECT max(version) FROM subject_versions WHERE subject = ?{live}", (subject,)
                ).fetchone()
                number = row[0] if row else None
            else:
                number = version
            row = None
            if isinstance(number, int) and 1 <= number <= MAX_ID:
                row = conn.execute(
                    "SELECT deleted FROM subject_versions WHERE subject = ? AND version = ?", (subject, number)
                ).fetchone()
            if row is None:
                if not self._has_any(conn, subject):
                    raise subject_not_found(subject)
                raise version_not_found(subject, version)
            assert isinstance(number, int)
            if not permanent and row[0]:
                raise RegistryError(
                    404,
                    40406,
                    f"Subject '{subject}' Version {number} was soft deleted.Set permanent=true to delete permanently",
                )
            self._refuse_referenced(conn, subject, [number], permanent)  # before 40407, as Confluent
            if permanent and not row[0]:
                raise RegistryError(
                    404,
                    40407,
                    f"Subject '{subject}' Version {number} was not deleted first before being permanently deleted",
                )
            dropped: list[int] = []
            if permanent:
                ids = self._ids_of(conn, "subject = ? AND version = ?", (subject, number))
                conn.execute("DELETE FROM subject_versions WHERE subject = ? AND version = ?", (subject, number))
                if not self._has_any(conn, subject):
                    self._forget_subject(conn, subject)
                dropped = self._drop_orphans(conn, ids)
            else:
                conn.execute(
                    "UPDATE subject_versions SET deleted = 1 WHERE subject = ? AND version = ?", (subject, number)
                )
        self._evict(dropped)
        return number

    @staticmethod
    def _ids_of(conn: Any, where: str, params: tuple) -> list[int]:
        rows = conn.execute(f"SELECT DISTINCT schema_id FROM subject_versions WHERE {where}", params).fetchall()
        return [int(row[0]) for row in rows]

    @staticmethod
    def _drop_orphans(conn: Any, ids: list[int]) -> list[int]:
        """Remove the schemas among ``ids`` that no version holds any more (a permanent delete took the
        last one): as in Confluent's registry, the id then answers 40403 everywhere, and the same schema
        registered again gets a new id (ids are never reused: SQLite AUTOINCREMENT, a PostgreSQL identity)."""
        dropped = []
        for schema_id in ids:
            if conn.execute("SELECT 1 FROM subject_versions WHERE schema_id = ? LIMIT 1", (schema_id,)).fetchone():
                continue
            conn.execute("DELETE FROM schemas WHERE id = ?", (schema_id,))
            dropped.append(schema_id)
        return dropped

    def _evict(self, dropped: list[int]) -> None:
        """Forget dropped schemas once their delete is committed (a read before could cache them again)."""
        with self._cache_lock:
            for schema_id in dropped:
                self._schema_cache.pop(schema_id, None)
                self._gone.add(schema_id)

    def _clear_for_import(self, conn: Any, subject: str | None) -> None:
        """No live version in scope (else 42205); then the soft-deleted ones go for good, unless referenced."""
        super()._clear_for_import(conn, subject)
        sql = "SELECT subject, version FROM subject_versions"
        params: tuple = ()
        if subject:
            sql, params = sql + " WHERE subject = ?", (subject,)
        held: dict[str, list[int]] = {}
        for name, version in conn.execute(sql, params).fetchall():
            held.setdefault(name, []).append(version)
        for name, versions in held.items():
            self._refuse_referenced(conn, name, versions)
            ids = self._ids_of(conn, "subject = ?", (name,))
            conn.execute("DELETE FROM subject_versions WHERE subject = ?", (name,))
            self._evict(self._drop_orphans(conn, ids))  # before the commit: a mode change, rare
