"""The store's associations: Confluent 8's resource (a topic) to subject links, one row per
(resource id, resource type, association type), as its ``AssociationKey`` keeps them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tscontract.registry.store.reads import StoreReads
from tscontract.registry.store.records import _now

# the table, the same DDL in SQLite and PostgreSQL (created when missing: a store written before keeps its data)
ASSOCIATIONS_DDL = (
    "CREATE TABLE IF NOT EXISTS associations (resource_id TEXT NOT NULL, resource_type TEXT NOT NULL,"
    " association_type TEXT NOT NULL, resource_name TEXT NOT NULL, resource_namespace TEXT NOT NULL,"
    " subject TEXT NOT NULL, lifecycle TEXT NOT NULL, frozen INTEGER NOT NULL, created_at TEXT NOT NULL,"
    " PRIMARY KEY (resource_id, resource_type, association_type))",
    "CREATE INDEX IF NOT EXISTS associations_name ON associations (resource_name, resource_namespace)",
    "CREATE INDEX IF NOT EXISTS associations_subject ON associations (subject)",
)
_COLUMNS = "subject, resource_name, resource_namespace, resource_id, resource_type, association_type, lifecycle, frozen"
_ORDER = " ORDER BY resource_name, resource_namespace, resource_type, association_type, subject"


def _entity(row: Sequence[Any]) -> dict[str, Any]:
    """Confluent's ``Association`` as JSON."""
    keys = ("subject", "resourceName", "resourceNamespace", "resourceId", "resourceType", "associationType")
    entity: dict[str, Any] = dict(zip(keys, row[:6], strict=True))
    entity["lifecycle"], entity["frozen"] = row[6], bool(row[7])
    return entity


def _types_clause(association_types: Sequence[str]) -> tuple[str, list[str]]:
    if not association_types:
        return "", []
    return f" AND association_type IN ({', '.join('?' * len(association_types))})", list(association_types)


class StoreAssociations(StoreReads):
    """Reads and writes of associations."""

    _extra_ddl = ASSOCIATIONS_DDL

    def associations_by_name(
        self, name: str, namespace: str, resource_type: str, association_types: Sequence[str], lifecycle: str | None
    ) -> list[dict[str, Any]]:
        """By resource name (``-``: any) and namespace (``-``: any), as Confluent's by-name and
        by-namespace lookups."""
        sql = f"SELECT {_COLUMNS} FROM associations WHERE resource_type = ?"
        params: list[Any] = [resource_type]
        for column, value in (("resource_name", name), ("resource_namespace", namespace)):
            if value != "-":
                sql += f" AND {column} = ?"
                params.append(value)
        return self._associations(sql, params, association_types, lifecycle)

    def associations_by_id(
        self, resource_id: str, resource_type: str, association_types: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        sql = f"SELECT {_COLUMNS} FROM associations WHERE resource_id = ? AND resource_type = ?"
        return self._associations(sql, [resource_id, resource_type], association_types, None)

    def associations_of_subject(self, subject: str) -> list[dict[str, Any]]:
        return self._associations(f"SELECT {_COLUMNS} FROM associations WHERE subject = ?", [subject], (), None)

    def _associations(
        self, sql: str, params: list[Any], association_types: Sequence[str], lifecycle: str | None
    ) -> list[dict[str, Any]]:
        clause, types = _types_clause(association_types)
        sql, params = sql + clause, params + types
        if lifecycle is not None:
            sql, params = sql + " AND lifecycle = ?", [*params, lifecycle]
        with self._connect() as conn:
            return [_entity(row) for row in conn.execute(sql + _ORDER, params).fetchall()]

    def put_associations(self, entities: Sequence[dict[str, Any]]) -> None:
        """Insert (or replace) associations in one transaction."""
        with self._write() as conn:
            for e in entities:
                key = (e["resourceId"], e["resourceType"], e["associationType"])
                conn.execute(
                    "DELETE FROM associations WHERE resource_id = ? AND resource_type = ? AND association_type = ?",
                    key,
                )
                conn.execute(
                    f"INSERT INTO associations ({_COLUMNS}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        e["subject"],
                        e["resourceName"],
                        e["resourceNamespace"],
                        *key,
                        e["lifecycle"],
                        int(e["frozen"]),
                        _now(),
                    ),
                )

    def delete_associations(self, resource_id: str, resource_type: str, association_types: Sequence[str]) -> None:
        clause, types = _types_clause(association_types)
        with self._write() as conn:
            conn.execute(
                "DELETE FROM associations WHERE resource_id = ? AND resource_type = ?" + clause,
                [resource_id, resource_type, *types],
            )
