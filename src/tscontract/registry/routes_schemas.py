"""Schema reads as Confluent's ``SchemasResource`` and ``SubjectVersionsResource`` answer them.

* ``GET /schemas``: every version of the subjects starting with ``subjectPrefix``, by subject then
  version; ``deleted=true`` adds the soft-deleted ones, ``latestOnly=true`` keeps each subject's
  newest, ``ruleType`` those whose rule set has a rule of that type; then ``offset``/``limit``.
* ``GET /schemas/ids/{id}/versions`` (``[{subject, version}]``) and ``/subjects`` (names): the
  versions holding the schema, live ones unless ``deleted=true``; 40403 when no version holds it.
* ``GET /schemas/ids/{id}/schema``: the schema text itself, as stored (not a JSON document about it).
* ``GET /subjects/{s}/versions/{v}/referencedby``: the ids of the schemas that reference the
  version (live ones unless ``deleted=true``), ascending; 40401/40402 as a version read.

A handler takes the app (``_App``), the call and the path parameters and returns (status, payload).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from tscontract.registry.errors import RegistryError
from tscontract.registry.listing import Query, flag, page
from tscontract.registry.store import MAX_ID, RegisteredVersion, StoredSchema


class Raw(NamedTuple):
    """A payload sent as it is, not as JSON (Confluent's ``String`` answers)."""

    text: str


class _Store(Protocol):
    def schema_by_id(self, schema_id: int) -> StoredSchema: ...

    def versions_of_id(self, schema_id: int, include_deleted: bool = False) -> list[tuple[str, int]] | None: ...

    def referenced_by(self, subject: str, version: int, include_deleted: bool = False) -> list[int]: ...

    def all_versions(self, prefix: str = "", include_deleted: bool = False) -> list[RegisteredVersion]: ...

    def get_version(self, subject: str, version: int | str, include_deleted: bool = False) -> RegisteredVersion: ...


class _Call(Protocol):
    query: Query


class _App(Protocol):
    @property
    def store(self) -> _Store: ...

    def version_payload(self, registered: Any, call: Any = None) -> dict[str, Any]: ...

    def schema_text(self, call: Any, stored: Any) -> str: ...

    def version_number(self, text: str) -> int | str: ...


def parse_schema_id(text: str) -> int:
    """A path's schema id; anything else is no schema (40403), as Confluent's lookup answers."""
    try:
        number = int(text)
    except ValueError:
        raise RegistryError(404, 40403, f"Schema {text} not found") from None
    if not 1 <= number <= MAX_ID:
        raise RegistryError(404, 40403, f"Schema {text} not found")
    return number


def _versions_of(app: _App, call: _Call, text: str) -> list[tuple[str, int]]:
    found = app.store.versions_of_id(parse_schema_id(text), flag(call.query, "deleted"))
    if found is None:
        raise RegistryError(404, 40403, "Schema not found")
    return found


def id_versions(app: _App, call: _Call, schema_id: str) -> tuple[int, Any]:
    found = _versions_of(app, call, schema_id)
    return 200, page([{"subject": subject, "version": version} for subject, version in found], call.query)


def id_subjects(app: _App, call: _Call, schema_id: str) -> tuple[int, Any]:
    subjects = list(dict.fromkeys(subject for subject, _ in _versions_of(app, call, schema_id)))
    return 200, page(subjects, call.query)


def id_schema(app: _App, call: _Call, schema_id: str) -> tuple[int, Any]:
    return 200, Raw(app.schema_text(call, app.store.schema_by_id(parse_schema_id(schema_id))))


def referenced_by(app: _App, call: _Call, subject: str, version: str) -> tuple[int, Any]:
    registered = app.store.get_version(subject, app.version_number(version), include_deleted=True)
    ids = app.store.referenced_by(subject, registered.version, flag(call.query, "deleted"))
    return 200, page(ids, call.query)


def _has_rule_type(rule_set: str, rule_type: str) -> bool:
    if not rule_set:
        return False
    rules = json.loads(rule_set)
    kinds = ("migrationRules", "domainRules", "encodingRules")
    return any(rule.get("type") == rule_type for kind in kinds for rule in rules.get(kind) or [])


def schemas(app: _App, call: _Call) -> tuple[int, Any]:
    prefix = call.query.get("subjectPrefix", [""])[-1]
    versions = app.store.all_versions("" if prefix == ":*:" else prefix, flag(call.query, "deleted"))
    if flag(call.query, "latestOnly"):
        newest: dict[str, RegisteredVersion] = {}
        for registered in versions:
            newest[registered.subject] = registered  # ascending: the last one is the newest
        versions = list(newest.values())
    rule_type = call.query.get("ruleType", [""])[-1]
    if rule_type:
        versions = [registered for registered in versions if _has_rule_type(registered.rule_set, rule_type)]
    return 200, [app.version_payload(registered, call) for registered in page(versions, call.query)]


# (method, path pattern, handler): app.py routes these beside its own
ROUTES: list[tuple[str, str, Callable[..., tuple[int, Any]]]] = [
    ("GET", r"/schemas", schemas),
    ("GET", r"/schemas/ids/(?P<schema_id>[^/]+)/versions", id_versions),
    ("GET", r"/schemas/ids/(?P<schema_id>[^/]+)/subjects", id_subjects),
    ("GET", r"/schemas/ids/(?P<schema_id>[^/]+)/schema", id_schema),
    ("GET", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)/referencedby", referenced_by),
]
