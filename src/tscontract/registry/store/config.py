"""The store's configuration: compatibility levels (with their log), groups and modes."""

from __future__ import annotations

from typing import Any

from tscontract.registry.errors import RegistryError
from tscontract.registry.store.associations import StoreAssociations
from tscontract.registry.store.records import (
    _GLOBAL,
    COMPATIBILITY_LEVELS,
    DEFAULT_COMPATIBILITY,
    DEFAULT_MODE,
    MODES,
    _now,
)
from tscontract.registry.store.subjects import check_subject


class StoreConfig(StoreAssociations):
    """Compatibility levels, compatibility groups and modes, per subject or global."""

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

    def set_mode(self, subject: str | None, mode: str, force: bool = False) -> str:
        """Set the subject's (or the global) mode. Moving to IMPORT, as Confluent does, needs no live
        version in scope (the subject, or every subject for the global mode) unless ``force``: else
        422/42205; the soft-deleted versions in scope are then removed for good (42206 when referenced)
        so imported versions can take their numbers."""
        if subject:
            check_subject(subject)
        if mode not in MODES:
            raise RegistryError(422, 42204, f"Invalid mode {mode!r}; one of {', '.join(MODES)}")
        with self._write() as conn:
            if mode == "IMPORT" and not force and self._mode(conn, subject) != "IMPORT":
                self._clear_for_import(conn, subject)
            conn.execute(
                "INSERT INTO modes (subject, mode) VALUES (?, ?)"
                " ON CONFLICT (subject) DO UPDATE SET mode = excluded.mode",
                (subject or _GLOBAL, mode),
            )
        return mode

    def _clear_for_import(self, conn: Any, subject: str | None) -> None:
        """42205 when a live version is in scope (``RegistryStore`` also purges soft-deleted ones)."""
        sql = "SELECT 1 FROM subject_versions WHERE deleted = 0"
        params: tuple = ()
        if subject:
            sql, params = sql + " AND subject = ?", (subject,)
        if conn.execute(sql + " LIMIT 1", params).fetchone() is not None:
            raise RegistryError(
                422,
                42205,
                "Cannot import since found existing subjects: delete them first or set the mode with ?force=true",
            )

    def delete_mode(self, subject: str | None, recursive: bool = False) -> str | None:
        """Remove the subject's own mode (the global one applies again), or the global mode (READWRITE
        applies again; ``recursive`` also removes every subject's); returns the mode removed. As
        Confluent, a subject without its own mode is 40401 unless ``recursive`` (then None)."""
        with self._write() as conn:
            old = self._mode(conn, subject, subject is None)
            if old is None and not recursive:
                raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
            conn.execute("DELETE FROM modes WHERE subject = ?", (subject or _GLOBAL,))
            if recursive and subject is None:
                conn.execute("DELETE FROM modes")
        return old

    def delete_compatibility(self, subject: str | None, who: str) -> dict[str, str]:
        """Remove the subject's (or the global) compatibility and group; returns them as they were
        (Confluent's ``DELETE /config[/{s}]``). A subject with neither is 40401."""
        with self._write() as conn:
            key = subject or _GLOBAL
            row = conn.execute("SELECT compatibility FROM config WHERE subject = ?", (key,)).fetchone()
            group = conn.execute("SELECT property FROM config_groups WHERE subject = ?", (key,)).fetchone()
            if subject and row is None and group is None:
                raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
            old = row[0] if row is not None else (None if subject else DEFAULT_COMPATIBILITY)
            conn.execute("DELETE FROM config WHERE subject = ?", (key,))
            conn.execute("DELETE FROM config_groups WHERE subject = ?", (key,))
            conn.execute(
                "INSERT INTO config_log (subject, who, changed_at, old, new, reason) VALUES (?, ?, ?, ?, ?, ?)",
                (subject, who, _now(), old, None, "config deleted"),
            )
        answer = {} if old is None else {"compatibilityLevel": old}
        if group is not None and group[0]:
            answer["compatibilityGroup"] = group[0]
        return answer

    # -- compatibility groups ----------------------------------------------------------------
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
