"""``/associations``, as Confluent 8's ``AssociationsResource`` answers the three calls confluent-kafka's
``SchemaRegistryClient`` makes (``create_association``, ``get_associations_by_resource_name``,
``delete_associations``), plus the by-id and by-subject reads.

An association links a resource (a topic: name, namespace, id) to a subject as its ``key`` or ``value``,
with a lifecycle: WEAK (a shared subject; not frozen) or STRONG (the topic owns the subject
``:.{namespace}:{name}-{type}``; frozen, created with its schema, which is registered under it). Checks,
error codes and messages as Confluent's ``AssociationCreateOrUpdateRequest.validate`` and
``AbstractSchemaRegistry.createOrUpdateAssociation``: 42212 for an invalid property, 40903 an association
of that type already on the resource, 40904/40905 a subject another resource holds (strongly), 40907 no
live version, 40908 a frozen association deleted without ``cascadeLifecycle``, 40410 nothing to delete,
42206 a STRONG association on a referenced subject. A delete with ``cascadeLifecycle`` of a STRONG
association deletes its subject (soft then permanent), as Confluent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tscontract.registry.errors import RegistryError
from tscontract.registry.listing import Query, flag, page

TOPIC = "topic"
_TYPES = ("key", "value")
_NAME_MAX = 256  # RestValidation.NAME_MAX_LENGTH
_SCHEMAS_EXIST = "cannot create a frozen association when schemas already exist in the subject"


class _Store(Protocol):
    def associations_by_name(
        self, name: str, namespace: str, resource_type: str, association_types: Any, lifecycle: str | None
    ) -> list[dict[str, Any]]: ...

    def associations_by_id(
        self, resource_id: str, resource_type: str, association_types: Any = ()
    ) -> list[dict[str, Any]]: ...

    def associations_of_subject(self, subject: str) -> list[dict[str, Any]]: ...

    def put_associations(self, entities: Any) -> None: ...

    def delete_associations(self, resource_id: str, resource_type: str, association_types: Any) -> None: ...

    def mode(self, subject: str | None = None, default_to_global: bool = True) -> str | None: ...

    def versions(self, subject: str, include_deleted: bool = False) -> list[int]: ...

    def referenced_by(self, subject: str, version: int, include_deleted: bool = False) -> list[int]: ...

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]: ...


class _Call(Protocol):
    query: Query

    def body(self) -> dict[str, Any]: ...


class _App(Protocol):
    @property
    def store(self) -> _Store: ...

    def register_for(self, call: Any, subject: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def held_version(self, subject: str, body: dict[str, Any]) -> int | None: ...


def invalid(prop: str, detail: str) -> RegistryError:
    """Confluent's ``RestInvalidAssociationException`` (422/42212)."""
    return RegistryError(
        422, 42212, f"The association specified an invalid value for property: '{prop}', detail: {detail}"
    )


def _conflict(code: int, message: str) -> RegistryError:
    return RegistryError(409, code, message)


def _check_name(value: Any, prop: str) -> None:
    if not isinstance(value, str) or not value:
        raise invalid(prop, "cannot be null or empty")
    if len(value) > _NAME_MAX:
        raise invalid(prop, f"exceeds max length of {_NAME_MAX}")
    bad = next((c for c in value if not (c.isalnum() or c in "_-")), None)
    if bad is not None:
        raise invalid(prop, f"illegal character '{bad}'")


def _apply_defaults(info: dict[str, Any]) -> None:
    """``AssociationCreateOrUpdateInfo.applyDefaults`` then ``validate``, for a create."""
    lifecycle, frozen = info.get("lifecycle"), info.get("frozen")
    if lifecycle not in (None, "STRONG", "WEAK"):
        raise invalid("lifecycle", "must be STRONG or WEAK")
    if info.get("schema") is not None:
        if lifecycle == "WEAK":
            raise invalid("lifecycle", "cannot be WEAK when schema is provided")
        if frozen is False:
            raise invalid("frozen", "cannot be false when a schema is provided")
        lifecycle = "STRONG"
    lifecycle = lifecycle or "WEAK"
    if frozen is not None and frozen != (lifecycle == "STRONG"):
        raise invalid("frozen", f"association with lifecycle of {lifecycle} cannot be frozen={str(frozen).lower()}")
    info["lifecycle"], info["frozen"] = lifecycle, lifecycle == "STRONG"
    kind = info.get("associationType") or "value"
    if kind not in _TYPES:
        raise invalid("associationType", "must be either 'key' or 'value'")
    info["associationType"] = kind


def validate_create(body: dict[str, Any], dry_run: bool) -> list[dict[str, Any]]:
    """``AssociationCreateOrUpdateRequest.validate(isCreate=true)``: the infos with their defaults."""
    _check_name(body.get("resourceName"), "resourceName")
    _check_name(body.get("resourceNamespace"), "resourceNamespace")
    if not dry_run and not body.get("resourceId"):
        raise invalid("resourceId", "cannot be null or empty")
    if body.get("resourceType") and body["resourceType"] != TOPIC:
        raise invalid("resourceType", f"must be '{TOPIC}'")
    body["resourceType"] = TOPIC
    infos = body.get("associations")
    if not isinstance(infos, list) or not infos or not all(isinstance(i, dict) for i in infos):
        raise invalid("associations", "cannot be null or empty")
    seen: set[str] = set()
    for info in infos:
        if info.get("subject") is not None and (not isinstance(info["subject"], str) or not info["subject"]):
            raise invalid("subject", "cannot be null or empty")
        if info.get("schema") is not None and not isinstance(info["schema"], dict):
            raise invalid("schema", "must be a schema registration object")
        _apply_defaults(info)
        default = f":.{body['resourceNamespace']}:{body['resourceName']}-{info['associationType']}"
        if info.get("subject") is None:
            if info["lifecycle"] == "WEAK":
                raise invalid("subject", "must be provided for WEAK associations")
            info["subject"] = default
        if info["frozen"] and info["subject"] != default:
            raise invalid("subject", f"frozen associations must use subject '{default}'")
        if info["lifecycle"] == "WEAK" and info["subject"] == default:
            raise invalid("subject", f"WEAK associations cannot use subject '{default}'")
        if info["associationType"] in seen:
            kind = info["associationType"]
            raise invalid("associationType", f"may only appear once per request, but '{kind}' appears more than once")
        seen.add(info["associationType"])
    return infos


def _check_against_stored(app: _App, body: dict[str, Any], infos: list[dict[str, Any]]) -> set[str]:
    """The checks against what is stored, before anything is written; the types already held as asked."""
    store = app.store
    old = {a["associationType"]: a for a in store.associations_by_id(body["resourceId"] or "", TOPIC)}
    skip: set[str] = set()
    for info in infos:
        subject, kind = info["subject"], info["associationType"]
        _writable(store, subject)
        held = old.get(kind)
        if held is None:
            if info["frozen"] and store.mode(subject) != "IMPORT":
                if info.get("schema") is None:
                    raise invalid("schema", "schema must be provided when creating a frozen association")
                live = _live_versions(store, subject)
                if live and (live[-1] != 1 or app.held_version(subject, info["schema"]) is None):
                    raise invalid("frozen", _SCHEMAS_EXIST)
            continue
        same = (held["subject"], held["lifecycle"], held["frozen"]) == (subject, info["lifecycle"], info["frozen"])
        if not same or (info.get("schema") is not None and app.held_version(subject, info["schema"]) is None):
            resource = held["resourceName"]
            raise _conflict(40903, f"An association of type '{kind}' already exists for resource '{resource}'")
        skip.add(kind)
    lifecycles = {kind: a["lifecycle"] for kind, a in old.items()}
    lifecycles.update((i["associationType"], i["lifecycle"]) for i in infos)
    if len(set(lifecycles.values())) > 1:
        detail = ", ".join(f"{kind}={lifecycle}" for kind, lifecycle in lifecycles.items())
        raise invalid("lifecycle", f"all associations for a resource must have the same lifecycle, but got {detail}")
    for info in infos:
        _check_subject_free(store, body, info)
    return skip


def _writable(store: _Store, subject: str) -> None:
    if store.mode(subject) == "READONLY":
        raise RegistryError(422, 42205, f"Subject {subject} in context . is in read-only mode")


def _live_versions(store: _Store, subject: str) -> list[int]:
    try:
        return store.versions(subject)
    except RegistryError:
        return []


def _check_subject_free(store: _Store, body: dict[str, Any], info: dict[str, Any]) -> None:
    subject = info["subject"]
    if info.get("schema") is not None and store.mode(subject) == "IMPORT":
        raise invalid("schema", f"cannot be provided while subject '{subject}' is in IMPORT mode")
    if info.get("schema") is None and not _live_versions(store, subject):
        raise _conflict(40907, f"No active (non-deleted) version exists for subject '{subject}'")
    others = [
        a
        for a in store.associations_of_subject(subject)
        if (a["resourceId"], a["associationType"]) != (body["resourceId"], info["associationType"])
    ]
    if info["lifecycle"] == "STRONG":
        if others:
            raise _conflict(40904, f"An association already exists for subject '{subject}'")
        if any(store.referenced_by(subject, v) for v in _live_versions(store, subject)):
            raise RegistryError(422, 42206, subject)  # Confluent's ReferenceExistsException(subject)
    elif any(a["lifecycle"] == "STRONG" for a in others):
        raise _conflict(40905, f"A strong association already exists for subject '{subject}'")


def create(app: _App, call: _Call) -> tuple[int, Any]:
    """``POST /associations``: Confluent's ``AssociationResponse``."""
    body = call.body()
    dry_run = flag(call.query, "dryRun")
    infos = validate_create(body, dry_run)
    skip = _check_against_stored(app, body, infos)
    response: dict[str, Any] = {k: body[k] for k in ("resourceName", "resourceNamespace", "resourceId", "resourceType")}
    if dry_run:
        return 200, {**response, "associations": []}
    schemas = {
        info["associationType"]: app.register_for(call, info["subject"], info["schema"])
        for info in infos
        if info.get("schema") is not None
    }
    entities = [{**response, **_info(info)} for info in infos if info["associationType"] not in skip]
    app.store.put_associations(entities)
    answered = []
    for entity in entities:
        info = _info(entity)
        if entity["associationType"] in schemas:
            info["schema"] = schemas[entity["associationType"]]
        answered.append(info)
    return 200, {**response, "associations": answered}


def _info(source: dict[str, Any]) -> dict[str, Any]:
    return {k: source[k] for k in ("subject", "associationType", "lifecycle", "frozen")}


def _filters(query: Query) -> tuple[str, list[str], str | None]:
    lifecycle = query.get("lifecycle", [None])[-1]
    if lifecycle is not None and lifecycle not in ("STRONG", "WEAK"):
        raise RegistryError(404, 404, f"HTTP 404 Not Found: query parameter lifecycle={lifecycle!r} is not valid")
    return query.get("resourceType", [""])[-1] or TOPIC, query.get("associationType", []), lifecycle


def by_resource_name(app: _App, call: _Call, namespace: str, name: str) -> tuple[int, Any]:
    """``GET /associations/resources/{namespace}/{name}`` (``-``: any name or namespace)."""
    resource_type, types, lifecycle = _filters(call.query)
    return 200, page(app.store.associations_by_name(name, namespace, resource_type, types, lifecycle), call.query)


def by_resource_id(app: _App, call: _Call, resource_id: str) -> tuple[int, Any]:
    resource_type, types, lifecycle = _filters(call.query)
    found = app.store.associations_by_id(resource_id, resource_type, types)
    return 200, page([a for a in found if lifecycle in (None, a["lifecycle"])], call.query)


def by_subject(app: _App, call: _Call, subject: str) -> tuple[int, Any]:
    resource_type, types, lifecycle = _filters(call.query)
    found = app.store.associations_of_subject(subject)
    wanted = [
        a
        for a in found
        if a["resourceType"] == resource_type
        and (not types or a["associationType"] in types)
        and lifecycle in (None, a["lifecycle"])
    ]
    return 200, page(wanted, call.query)


def delete(app: _App, call: _Call, resource_id: str) -> tuple[int, Any]:
    """``DELETE /associations/resources/{id}``: 204; 40410 when none matches, 40908 for a frozen one
    without ``cascadeLifecycle``; with it a STRONG association's subject is deleted too."""
    resource_type, types, _ = _filters(call.query)
    found = app.store.associations_by_id(resource_id, resource_type, types)
    if not found:
        raise RegistryError(404, 40410, f"Association for '{resource_id}' not found.")
    cascade = flag(call.query, "cascadeLifecycle")
    for association in found:
        subject = association["subject"]
        _writable(app.store, subject)
        if association["frozen"] and not cascade:
            kind = association["associationType"]
            raise _conflict(40908, f"The association of type  '{kind}' is frozen for subject '{subject}'")
    if flag(call.query, "dryRun"):
        return 204, None
    app.store.delete_associations(resource_id, resource_type, types)
    for association in found:
        subject = association["subject"]
        if cascade and association["lifecycle"] == "STRONG" and app.store.mode(subject) != "IMPORT":
            if _live_versions(app.store, subject):
                app.store.delete_subject(subject)
            app.store.delete_subject(subject, permanent=True)
    return 204, None


def guard_subject_delete(store: _Store, subject: str) -> None:
    """As Confluent's ``deleteSubject``: a subject an association names is not deleted (409/40904)."""
    if store.associations_of_subject(subject):
        raise _conflict(40904, f"An association already exists for subject '{subject}'")


def guard_version_delete(store: _Store, subject: str, version: int | str) -> None:
    """As Confluent's ``deleteSchemaVersion``: the last live version of a subject an association names
    is not soft-deleted (409/40907)."""
    if not store.associations_of_subject(subject):
        return
    live = _live_versions(store, subject)
    if live and (version == "latest" or version in live) and len(live) == 1:
        raise _conflict(40907, f"No active (non-deleted) version exists for subject '{subject}'")


def guard_references(store: _Store, references: list[dict]) -> None:
    """As Confluent's ``register``: a subject with a STRONG association is not a reference target (42205)."""
    for reference in references:
        subject = reference.get("subject")
        if any(a["lifecycle"] == "STRONG" for a in store.associations_of_subject(str(subject))):
            raise RegistryError(422, 42205, f"Subject '{subject}' has a strong association and cannot be referenced")


# (method, path pattern, handler): app.py routes these beside its own; every one but GET is a write
ROUTES: list[tuple[str, str, Callable[..., tuple[int, Any]]]] = [
    ("POST", r"/associations", create),
    ("GET", r"/associations/resources/(?P<namespace>[^/]+)/(?P<name>[^/]+)", by_resource_name),
    ("GET", r"/associations/resources/(?P<resource_id>[^/]+)", by_resource_id),
    ("GET", r"/associations/subjects/(?P<subject>[^/]+)", by_subject),
    ("DELETE", r"/associations/resources/(?P<resource_id>[^/]+)", delete),
]
