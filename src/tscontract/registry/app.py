"""The registry's REST API as a Starlette (ASGI) application: the Confluent Schema Registry subset.

Routes match the raw request path, so a subject holding ``/`` (sent as ``%2F``) stays one
subject. Every answer is JSON; every error is Confluent's ``{"error_code", "message"}``: an
unknown path 404, a method a path does not take 405 (HEAD answers as GET without the body), a
body that is not JSON 400, a body media type the registry does not read 415, bad input 422 with
Confluent's code. Store calls run in the thread pool; reads are open; writes (register, change
config, delete), compatibility tests and the config log need the bearer token or basic credentials
when the server has them. Every subject in a path or a reference passes ``check_subject``.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hmac
import json
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple
from urllib.parse import parse_qs, unquote

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from tscontract.evolution.issues import CheckBudgetExceeded
from tscontract.registry import routes_admin, routes_associations, routes_schemas
from tscontract.registry.canonical import canonical_text, legacy_texts
from tscontract.registry.contract_fields import contract_fields, has_properties, payload_fields, properties_match
from tscontract.registry.errors import RegistryError, schema_not_found
from tscontract.registry.guids import GuidIndex, schema_guid
from tscontract.registry.limits import (
    MAX_BODY_BYTES,
    MAX_RESOLVED_BYTES,
    LimitError,
    check_body,
    check_schema_text,
    check_size,
)
from tscontract.registry.listing import list_subjects, list_versions
from tscontract.registry.negotiation import PRODUCED, V1, ContentNegotiation, acceptable
from tscontract.registry.protobuf_descriptor import descriptor_text, serialized
from tscontract.registry.routes_compat import compatibility_answer
from tscontract.registry.routes_schemas import Raw, parse_schema_id
from tscontract.registry.rulesets import refuse_defaults_and_overrides, validate_rule_set
from tscontract.registry.schemas import SCHEMA_TYPES, default_compat, parse_problem
from tscontract.registry.store import (
    COMPATIBILITY_LEVELS,
    MAX_ID,
    MODES,
    CompatFn,
    RegisteredVersion,
    RegistryStore,
    check_subject,
    subject_problem,
)

CONTENT_TYPE = V1
# the media types Confluent's registry reads a body as (the ones it produces, and octet-stream); else 415
BODY_TYPES = (*(media for media, _quality in PRODUCED), "application/octet-stream")
WRITE_THREADS = 12  # writes (and compatibility tests) in progress at once; the rest queue without a thread
_LOG = logging.getLogger("tscontract.registry")

_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (method, re.compile(pattern), name)
    for method, pattern, name in [
        ("GET", r"/subjects", "list_subjects"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/versions", "list_versions"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/metadata", "latest_with_metadata"),
        ("POST", r"/subjects/(?P<subject>[^/]+)/versions", "register"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)", "get_version"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)/schema", "get_version_schema"),
        ("DELETE", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)", "delete_version"),
        ("POST", r"/subjects/(?P<subject>[^/]+)", "lookup"),
        ("DELETE", r"/subjects/(?P<subject>[^/]+)", "delete_subject"),
        ("GET", r"/schemas/ids/(?P<schema_id>[^/]+)", "get_schema"),
        ("GET", r"/schemas/types", "schema_types"),
        ("GET", r"/schemas/guids/(?P<guid>[^/]+)", "get_schema_by_guid"),
        ("GET", r"/schemas/guids/(?P<guid>[^/]+)/ids", "guid_ids"),
        ("GET", r"/config/log", "config_log"),
        ("GET", r"/config", "get_config"),
        ("PUT", r"/config", "put_config"),
        ("GET", r"/config/(?P<subject>[^/]+)", "get_config"),
        ("PUT", r"/config/(?P<subject>[^/]+)", "put_config"),
        ("POST", r"/compatibility/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)", "test_compat"),
        ("POST", r"/compatibility/subjects/(?P<subject>[^/]+)/versions", "test_compat"),
        ("GET", r"/mode", "get_mode"),
        ("PUT", r"/mode", "put_mode"),
        ("GET", r"/mode/(?P<subject>[^/]+)", "get_mode"),
        ("PUT", r"/mode/(?P<subject>[^/]+)", "put_mode"),
    ]
]
# the routes other modules answer: name -> handler(app, call, **path parameters)
_MODULE_HANDLERS: dict[str, Callable[..., tuple[int, Any]]] = {}
_WRITES = {"register", "put_config", "delete_subject", "delete_version", "put_mode"}
for _module in (routes_schemas, routes_admin, routes_associations):
    for _method, _pattern, _handler in _module.ROUTES:
        _name = f"{_module.__name__.rsplit('.', 1)[-1]}.{_handler.__name__}"
        _ROUTES.append((_method, re.compile(_pattern), _name))
        _MODULE_HANDLERS[_name] = _handler
        if _method != "GET":
            _WRITES.add(_name)
# what needs the credentials when the server has them: writes, compatibility tests (they run the checks,
# the costliest work a request can ask for) and the config log (who changed what, and why)
_GUARDED = _WRITES | {"test_compat", "config_log"}
# one indexed query each, no schema parsing: answered on the event loop when the store allows it
_INLINE_READS = {"list_versions", "get_version", "get_version_schema", "get_schema", "get_config", "schema_types"}


def error_body(error_code: int, message: str) -> bytes:
    return json.dumps({"error_code": error_code, "message": message}).encode()


def _version(text: str) -> int | str:
    if text == "latest":
        return "latest"
    try:
        number = int(text)
    except ValueError:
        raise RegistryError(422, 42202, f"The specified version '{text}' is not a valid version id") from None
    if number == -1:
        return "latest"
    if not 1 <= number <= MAX_ID:
        raise RegistryError(422, 42202, f"The specified version '{text}' is not a valid version id")
    return number


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() == "true"


class _Call:
    """One request as the handlers see it: path parameters, query, caller, headers, the body read in full."""

    def __init__(self, query: dict[str, list[str]], who: str, headers: Any, raw: bytes) -> None:
        self.query, self.who, self.headers, self.raw = query, who, headers, raw
        self._body: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        """The JSON body, parsed once (a registration reads its ruleSet before its schema)."""
        if self._body is None:
            self._body = self._parse()
        return self._body

    def _parse(self) -> dict[str, Any]:
        if not self.raw.strip():
            return {}
        try:
            check_body(self.raw)
        except LimitError as exc:
            raise RegistryError(413, 413, f"Request body too large: {exc}") from None
        try:
            body = json.loads(self.raw)
        except RecursionError:
            raise RegistryError(400, 400, "Unparseable JSON body: nested too deeply") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise RegistryError(400, 400, f"Unparseable JSON body: {exc}") from None
        if not isinstance(body, dict):
            raise RegistryError(400, 400, "JSON body must be an object")
        return body


class RegistryApp:
    """The handlers over one store, plus authentication; ``asgi`` is the Starlette application."""

    def __init__(
        self,
        store: RegistryStore,
        compat: CompatFn = default_compat,
        token: str | None = None,
        basic: dict[str, str] | None = None,
        parse_problem: Callable[[str, str], str | None] = parse_problem,
        strict: bool = False,
    ) -> None:
        self.store = store
        self.strict = strict  # answer as Confluent even where tscontract deliberately differs for a client's sake
        self.compat = compat
        self.parse_problem = parse_problem  # why a schema text does not parse (42201), or None
        self.token = token
        self.basic = dict(basic or {})
        self._guids = GuidIndex()  # GET /schemas/guids/{guid}
        # every path reaches one endpoint that routes on the raw path (Starlette's own routes would
        # match the decoded path, where %2F and %0A are no longer what the client sent)
        self._read_threads = anyio.CapacityLimiter(32)
        # few write threads: a write parses, queries and checks; fifty threads doing that at once spend
        # the interpreter lock handing it between them (50 writers, 2 cores: 12 threads register more
        # schemas per second than 64 did, and reads answer twice as fast)
        self._write_threads = anyio.CapacityLimiter(WRITE_THREADS)
        self.asgi = Starlette()
        self.asgi.router.default = self._asgi_endpoint
        self.asgi.add_exception_handler(HTTPException, self._http_error)  # e.g. a method no route lists
        self.asgi.add_exception_handler(Exception, self._unhandled)
        self.asgi.add_middleware(ContentNegotiation)  # answers carry the type Accept negotiates

    def authenticate(self, header: str | None) -> str | None:
        """The writer's name, 'anonymous' when auth is off, None when the credentials do not match."""
        if self.token is None and not self.basic:
            return "anonymous"
        if not header:
            return None
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and self.token is not None:
            return "token" if hmac.compare_digest(value.strip().encode(), self.token.encode()) else None
        if scheme.lower() == "basic" and self.basic:
            try:
                user, _, password = base64.b64decode(value.strip()).decode().partition(":")
            except Exception:
                return None
            expected = self.basic.get(user)
            if expected is not None and hmac.compare_digest(password.encode(), expected.encode()):
                return user
        return None

    # -- plumbing ---------------------------------------------------------------------------

    @staticmethod
    def _json(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
        if status == 204:
            return Response(b"", 204, headers=headers)
        return Response(json.dumps(payload).encode(), status, headers=headers, media_type=CONTENT_TYPE)

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 400)
        detail = getattr(exc, "detail", "") or ""
        return Response(error_body(status, f"HTTP {status} {detail}".strip()), status, media_type=CONTENT_TYPE)

    async def _unhandled(self, request: Request, exc: Exception) -> Response:
        _LOG.error("registry: unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path)
        return Response(error_body(50001, f"Error in the backend data store: {exc}"), 500, media_type=CONTENT_TYPE)

    async def _read_body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise RegistryError(413, 413, f"Request body over the registry's limit of {MAX_BODY_BYTES} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise RegistryError(413, 413, f"Request body over the registry's limit of {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _route(self, method: str, path: str) -> tuple[str, dict[str, str]]:
        allowed: list[str] = []
        for route_method, pattern, name in _ROUTES:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            allowed.append(route_method)
            if route_method == method or (method == "HEAD" and route_method == "GET"):
                try:
                    params = {key: unquote(value, errors="strict") for key, value in match.groupdict().items()}
                except UnicodeDecodeError:
                    raise RegistryError(404, 404, f"Not found: {path} (not UTF-8)") from None
                if "subject" in params:
                    check_subject(params["subject"])
                return name, params
        if allowed:
            if "GET" in allowed:
                allowed.append("HEAD")
            raise _MethodNotAllowed(method, path, sorted(set(allowed)))
        raise RegistryError(404, 404, f"HTTP 404 Not Found: {path}")

    async def _asgi_endpoint(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        response = await self._endpoint(Request(scope, receive))
        await response(scope, receive, send)

    async def _endpoint(self, request: Request) -> Response:
        method = request.method.upper()
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        path = raw_path.decode("latin-1").split("?", 1)[0].rstrip("/") or "/"
        try:
            name, params = self._route(method, path)
            raw = await self._read_body(request)
            who = "anonymous"
            authorization = request.headers.get("authorization")
            if name in _GUARDED:
                known = self.authenticate(authorization)
                if known is None:
                    raise RegistryError(401, 40101, "Unauthorized: missing or wrong credentials")
                who = known
            elif authorization:
                who = self.authenticate(authorization) or "anonymous"
            # as Jersey: after the route and the credentials, the body's type (415), then Accept (406)
            _readable(request.headers, raw)
            acceptable(request.headers)
            call = _Call(parse_qs(request.url.query), who, request.headers, raw)
            handler = self._handler(name)
            serialize = "format" in call.query  # compiles a Protobuf schema: not on the event loop
            if not serialize and (
                (name == "get_schema" and self._cached_id(params["schema_id"]))
                or (name in _INLINE_READS and self.store.inline_reads)
            ):
                status, payload = handler(call, **params)  # from memory or one local query: no thread hop
            else:
                # reads and writes take threads from separate pools: writers queued for the write lock
                # or a check slot must not hold every thread while reads wait behind them
                limiter = self._write_threads if name in _WRITES or name == "test_compat" else self._read_threads
                status, payload = await anyio.to_thread.run_sync(
                    functools.partial(handler, call, **params), limiter=limiter
                )
            if isinstance(payload, Raw):
                return Response(payload.text.encode(), status, media_type=CONTENT_TYPE)
            return self._json(status, payload)
        except ClientDisconnect:
            return Response(b"", 400)  # nobody is listening for the answer
        except _MethodNotAllowed as exc:
            return self._json(405, {"error_code": 405, "message": str(exc)}, {"Allow": ", ".join(exc.allowed)})
        except RegistryError as exc:
            headers = {"WWW-Authenticate": 'Bearer realm="tscontract"'} if exc.http_status == 401 else None
            return self._json(exc.http_status, {"error_code": exc.error_code, "message": exc.message}, headers)

    def _handler(self, name: str) -> Callable[..., tuple[int, Any]]:
        found = _MODULE_HANDLERS.get(name)
        return getattr(self, "_h_" + name) if found is None else functools.partial(found, self)

    version_number = staticmethod(_version)

    def _cached_id(self, text: str) -> bool:
        return text.isdigit() and len(text) < 12 and self.store.cached_schema(int(text)) is not None

    def _submitted(self, call: _Call) -> _Submitted:
        """A registration, lookup or compatibility body: the schema in the registry's canonical text
        (``normalize=true`` normalises it further), its references, metadata and ruleSet, and the
        self-contained text (references resolved) that must parse and that checks read."""
        body = call.body()
        text = body.get("schema")
        if not isinstance(text, str) or not text:
            raise RegistryError(422, 42201, "Invalid schema: field 'schema' must be a non-empty string")
        schema_type = body.get("schemaType") or "AVRO"
        if not isinstance(schema_type, str):
            raise RegistryError(422, 42201, f"Invalid schema: 'schemaType' must be a string, got {schema_type!r}")
        schema_type = schema_type.upper()
        if schema_type not in SCHEMA_TYPES:
            raise RegistryError(422, 42201, f"Invalid schema: unknown schemaType {schema_type!r}")
        references = body.get("references") or []
        if not isinstance(references, list) or not all(_is_reference(r) for r in references):
            raise RegistryError(
                422, 42201, "Invalid schema: 'references' must be a list of {name, subject, version} objects"
            )
        metadata, rule_set = contract_fields(body)
        normalize = _flag(call.query, "normalize")
        kind = {"AVRO": "Avro", "JSON": "JSON", "PROTOBUF": "Protobuf"}[schema_type]
        try:
            check_schema_text(schema_type, text)  # before any parser, the canonical formatter included
            described = descriptor_text(text) if schema_type == "PROTOBUF" else text
            # a base64 FileDescriptorProto, as confluent-kafka's ProtobufSerializer sends it
            descriptor = described != text
            sent, text = described, canonical_text(schema_type, described, normalize)
            legacies = legacy_texts(schema_type, sent, normalize, text)
            check_size(text, "canonical schema text")
        except (ValueError, RecursionError) as exc:  # over a limit, not JSON (Avro, JSON Schema)
            raise RegistryError(422, 42201, f"Invalid schema ({kind}): {exc or type(exc).__name__}") from None
        if normalize:
            references = sorted(references, key=lambda r: (r["name"], r["subject"], r["version"]))
        check_text = self.store.check_text(schema_type, text, references)
        try:
            check_size(check_text, "schema text with its references", MAX_RESOLVED_BYTES)
        except LimitError as exc:
            raise RegistryError(422, 42201, f"Invalid schema ({kind}): {exc}") from None
        problem = self.parse_problem(schema_type, check_text)
        if problem:
            raise RegistryError(422, 42201, problem)
        return _Submitted(
            body,
            schema_type,
            text,
            references,
            metadata,
            rule_set,
            check_text,
            legacies,
            descriptor,
        )

    def schema_text(self, call: _Call, stored: Any) -> str:
        """The schema text as asked: ``?format=serialized`` gives a Protobuf schema as the base64
        ``FileDescriptorProto`` that confluent-kafka's ``ProtobufDeserializer`` reads."""
        text: str = stored.schema_text
        if stored.schema_type != "PROTOBUF" or call.query.get("format", [""])[-1] != "serialized":
            return text
        try:
            return serialized(self.store.check_text(stored.schema_type, text, stored.references))
        except ValueError as exc:
            raise RegistryError(422, 42201, f"Invalid schema (Protobuf): cannot serialize it: {exc}") from None

    def version_payload(self, registered: Any, call: _Call | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "subject": registered.subject,
            "version": registered.version,
            "id": registered.schema_id,
            "schema": registered.schema_text if call is None else self.schema_text(call, registered),
        }
        if registered.schema_type != "AVRO":
            payload["schemaType"] = registered.schema_type
        if registered.references:
            payload["references"] = registered.references
        payload.update(payload_fields(registered.metadata, registered.rule_set))
        payload["guid"] = self._guid_of(registered)
        return payload

    # -- handlers: each returns (status, payload); they run in the thread pool -------------------

    def _h_list_subjects(self, call: _Call) -> tuple[int, Any]:
        return 200, list_subjects(self.store, call.query)

    def _h_list_versions(self, call: _Call, subject: str) -> tuple[int, Any]:
        return 200, list_versions(self.store, subject, call.query)

    def _h_register(self, call: _Call, subject: str) -> tuple[int, Any]:
        """Confluent's ``RegisterSchemaResponse``: the version registered (or already held), see
        ``register_payload``."""
        validate_rule_set(call.body().get("ruleSet"))  # as Confluent: before the schema is read (42210)
        submitted = self._submitted(call)
        mode = self.store.mode(check_subject(subject))
        explicit_id = submitted.body.get("id")
        # as Confluent: a schema the subject holds answers its id in any mode (READWRITE finds it as it registers)
        for text in ([] if mode == "READWRITE" else [submitted.text]) + list(submitted.legacies):
            held = self._held(subject, submitted, text) if text else None
            if held is not None:
                return 200, self.register_payload(call, held, submitted)
        if explicit_id is not None:
            if mode != "IMPORT":
                raise RegistryError(
                    422,
                    42205,
                    f"Subject '{subject}' is in {mode} mode: a registration with an explicit id needs IMPORT",
                )
            version = submitted.body.get("version")
            number = self.store.import_schema(
                subject,
                submitted.schema_type,
                submitted.text,
                submitted.references,
                _body_number(explicit_id, "id"),
                None if version is None else _body_number(version, "version"),
                submitted.metadata,
                submitted.rule_set,
            )
            return 200, self.register_payload(call, self.store.get_version(subject, number), submitted)
        if mode == "IMPORT":
            raise RegistryError(
                422, 42205, f"Subject '{subject}' is in IMPORT mode: a registration needs its 'id' (and 'version')"
            )
        _writable(subject, mode)
        routes_associations.guard_references(self.store, submitted.references)
        with _budget():
            self.store.register(
                subject,
                submitted.schema_type,
                submitted.text,
                submitted.references,
                self.compat,
                submitted.metadata,
                submitted.rule_set,
                submitted.check_text,
            )
        return 200, self.register_payload(call, self._registered(subject, submitted), submitted)

    def register_for(self, call: _Call, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        """Register ``body`` (a registration's JSON) under ``subject`` as ``POST /subjects/{s}/versions``
        would, for an association created with its schema: Confluent's ``Schema`` of the version."""
        inner = _Call({}, call.who, call.headers, json.dumps(body).encode())
        self._h_register(inner, check_subject(subject))
        return self.version_payload(self._registered(subject, self._submitted(inner)), inner)

    def held_version(self, subject: str, body: dict[str, Any]) -> int | None:
        """The live version of ``subject`` holding the schema ``body`` names, or None."""
        inner = _Call({}, "anonymous", {}, json.dumps(body).encode())
        submitted = self._submitted(inner)
        held = self._held(subject, submitted, submitted.text)
        return None if held is None else held.version

    def _registered(self, subject: str, submitted: _Submitted) -> RegisteredVersion:
        """The subject's newest live version holding the schema just registered or imported."""
        s = submitted
        return self.store.lookup(subject, s.schema_type, s.text, s.references, s.metadata, s.rule_set)

    def register_payload(self, call: _Call, registered: RegisteredVersion, submitted: _Submitted) -> dict[str, Any]:
        """Confluent's ``RegisterSchemaResponse(Schema)``: id, version, guid, schemaType (``AVRO`` too),
        references, metadata, ruleSet (the empty ones left out, as its ``NON_EMPTY``) and the schema
        as stored (``format`` as on a read); no ``subject``.

        Deliberate difference (``strict`` off): a Protobuf schema sent as a base64 ``FileDescriptorProto``
        answers without ``schema``. confluent-kafka's client caches a registration's answer by id
        whatever format a later read asks, so the ``.proto`` text Confluent answers here breaks a
        ``ProtobufDeserializer`` sharing the serializer's client (it reads ``format=serialized``);
        without it the client caches the descriptor it sent."""
        payload: dict[str, Any] = {
            "id": registered.schema_id,
            "version": registered.version,
            "guid": self._guid_of(registered),
            "schemaType": registered.schema_type,
        }
        if registered.references:
            payload["references"] = registered.references
        payload.update(payload_fields(registered.metadata, registered.rule_set))
        if self.strict or not submitted.descriptor or "format" in call.query:
            payload["schema"] = self.schema_text(call, registered)
        return payload

    def _held(self, subject: str, submitted: _Submitted, text: str) -> RegisteredVersion | None:
        """The version when the subject holds this schema (as ``text``) live and the body's ``id``/``version``
        (if any) agree."""
        try:
            found = self.store.lookup(
                subject,
                submitted.schema_type,
                text,
                submitted.references,
                submitted.metadata,
                submitted.rule_set,
            )
        except RegistryError:  # 40401, 40403: not held
            return None
        explicit_id, version = submitted.body.get("id"), submitted.body.get("version")
        if explicit_id is not None and _body_number(explicit_id, "id") != found.schema_id:
            return None
        if version is not None and version not in (-1, 0) and _body_number(version, "version") != found.version:
            return None
        return found

    def _h_get_version(self, call: _Call, subject: str, version: str) -> tuple[int, Any]:
        registered = self.store.get_version(subject, _version(version), _flag(call.query, "deleted"))
        return 200, self.version_payload(registered, call)

    def _h_get_version_schema(self, call: _Call, subject: str, version: str) -> tuple[int, Any]:
        """The schema text itself, as stored (Confluent answers a ``String``, not JSON about it)."""
        registered = self.store.get_version(subject, _version(version), _flag(call.query, "deleted"))
        return 200, Raw(self.schema_text(call, registered))

    def _h_latest_with_metadata(self, call: _Call, subject: str) -> tuple[int, Any]:
        """Confluent's ``GET /subjects/{s}/metadata?key=K&value=V...``: the newest live version (any with
        ``deleted=true``) whose metadata properties hold every pair (what ``use.latest.with.metadata``
        asks for); as Confluent, keys and values pair up to the shorter list, and a version without
        metadata properties never matches. 40401 when the subject holds no such version at all."""
        keys, values = call.query.get("key", []), call.query.get("value", [])
        wanted: dict[str, str | None] = dict(zip(keys, values, strict=False))
        deleted = _flag(call.query, "deleted")
        for version in reversed(self.store.versions(subject, include_deleted=deleted)):
            registered = self.store.get_version(subject, version, include_deleted=deleted)
            if has_properties(registered.metadata) and properties_match(registered.metadata, wanted):
                return 200, self.version_payload(registered, call)
        raise schema_not_found()

    def _h_lookup(self, call: _Call, subject: str) -> tuple[int, Any]:
        s = self._submitted(call)
        given = "metadata" in s.body or "ruleSet" in s.body  # else any stored metadata and rules match
        metadata, rule_set = (s.metadata, s.rule_set) if given else (None, None)
        deleted = _flag(call.query, "deleted")  # a soft-deleted version answers too
        first: RegistryError | None = None
        for text in (s.text, *s.legacies):
            try:
                found = self.store.lookup(subject, s.schema_type, text, s.references, metadata, rule_set, deleted)
            except RegistryError as exc:
                if exc.error_code != 40403:
                    raise
                first = first or exc
                continue
            return 200, self.version_payload(found, call)
        assert first is not None
        raise first

    def _h_delete_version(self, call: _Call, subject: str, version: str) -> tuple[int, Any]:
        _writable(subject, self.store.mode(subject))
        permanent = _flag(call.query, "permanent")
        if not permanent:
            routes_associations.guard_version_delete(self.store, subject, _version(version))
        return 200, self.store.delete_version(subject, _version(version), permanent=permanent)

    def _h_delete_subject(self, call: _Call, subject: str) -> tuple[int, Any]:
        _writable(subject, self.store.mode(subject))
        routes_associations.guard_subject_delete(self.store, subject)
        return 200, self.store.delete_subject(subject, permanent=_flag(call.query, "permanent"))

    def _h_get_schema(self, call: _Call, schema_id: str) -> tuple[int, Any]:
        return 200, self._schema_payload(call, self.store.schema_by_id(parse_schema_id(schema_id)))

    def _schema_payload(self, call: _Call, stored: Any) -> dict[str, Any]:
        payload: dict[str, Any] = {"schema": self.schema_text(call, stored)}
        if stored.schema_type != "AVRO":
            payload["schemaType"] = stored.schema_type
        if stored.references:
            payload["references"] = stored.references
        payload.update(payload_fields(stored.metadata, stored.rule_set))
        payload["guid"] = self._guid_of(stored)
        return payload

    @staticmethod
    def _guid_of(stored: Any) -> str:
        return schema_guid(stored.schema_text, stored.references, stored.metadata, stored.rule_set)

    def _id_of_guid(self, guid: str) -> int | None:
        store = self.store
        for _ in range(2):
            found = self._guids.find(
                guid, store.schema_ids, lambda schema_id: self._guid_of(store.schema_by_id(schema_id))
            )
            if found is None or store.holds_schema(found):
                return found
            self._guids.forget(guid)  # permanently deleted since: the schema may hold a new id
        return None

    def _h_get_schema_by_guid(self, call: _Call, guid: str) -> tuple[int, Any]:
        """``GET /schemas/guids/{guid}``: the schema whose content has this guid (see ``registry.guids``)."""
        schema_id = self._id_of_guid(guid)
        if schema_id is None:
            raise RegistryError(404, 40403, f"Schema {guid} not found")
        return 200, self._schema_payload(call, self.store.schema_by_id(schema_id))

    def _h_guid_ids(self, call: _Call, guid: str) -> tuple[int, Any]:
        """``GET /schemas/guids/{guid}/ids``: the ids holding it, by context (only the default one here);
        several when IMPORT mode kept the schema under more than one id."""
        schema_id = self._id_of_guid(guid)
        ids = [] if schema_id is None else self.store.ids_of_content(schema_id)
        return 200, [{"context": ".", "id": found} for found in ids]

    def _h_schema_types(self, call: _Call) -> tuple[int, Any]:
        return 200, list(SCHEMA_TYPES)

    def _h_config_log(self, call: _Call) -> tuple[int, Any]:
        return 200, self.store.config_log(call.query.get("subject", [None])[-1])

    def _h_get_config(self, call: _Call, subject: str | None = None) -> tuple[int, Any]:
        default_to_global = subject is None or _flag(call.query, "defaultToGlobal")
        group = self.store.compatibility_group(subject)
        own_group = subject is not None and group is not None and group != self.store.compatibility_group(None)
        level = self.store.compatibility(subject, default_to_global=default_to_global or own_group)
        if level is None:
            raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")
        answer = {"compatibilityLevel": level}
        if group:
            answer["compatibilityGroup"] = group
        return 200, answer

    def _h_put_config(self, call: _Call, subject: str | None = None) -> tuple[int, Any]:
        body = call.body()
        refuse_defaults_and_overrides(body)
        level = body.get("compatibility", body.get("compatibilityLevel"))
        group = body.get("compatibilityGroup")
        if group is not None:
            if not isinstance(group, str):
                raise RegistryError(422, 42203, "'compatibilityGroup' must be a metadata property name (or '')")
            self.store.set_compatibility_group(subject, group)
            if level is None:
                return 200, {"compatibilityGroup": group}
        if not isinstance(level, str) or level.upper() not in COMPATIBILITY_LEVELS:
            raise RegistryError(
                422, 42203, f"Invalid compatibility level {level!r}; one of {', '.join(COMPATIBILITY_LEVELS)}"
            )
        reason = body.get("reason") or call.headers.get("x-tscontract-reason")
        if reason is not None and not isinstance(reason, str):
            raise RegistryError(422, 42203, "'reason' must be a string")
        self.store.set_compatibility(subject, level.upper(), call.who, reason)
        return 200, {"compatibility": level.upper()}

    def _h_get_mode(self, call: _Call, subject: str | None = None) -> tuple[int, Any]:
        default_to_global = subject is None or _flag(call.query, "defaultToGlobal")
        mode = self.store.mode(subject, default_to_global=default_to_global)
        if mode is None:
            raise RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")
        return 200, {"mode": mode}

    def _h_put_mode(self, call: _Call, subject: str | None = None) -> tuple[int, Any]:
        mode = call.body().get("mode")
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise RegistryError(422, 42204, f"Invalid mode {mode!r}; one of {', '.join(MODES)}")
        return 200, {"mode": self.store.set_mode(subject, mode.upper(), force=_flag(call.query, "force"))}

    def _h_test_compat(self, call: _Call, subject: str, version: str | None = None) -> tuple[int, Any]:
        wanted = None if version is None else _version(version)
        verbose = _flag(call.query, "verbose")
        with _budget():
            return 200, compatibility_answer(
                self.store, self.compat, lambda: self._submitted(call), subject, wanted, verbose
            )


class _Submitted(NamedTuple):
    body: dict[str, Any]
    schema_type: str
    text: str
    references: list[dict]
    metadata: str
    rule_set: str
    check_text: str
    legacies: tuple[str, ...] = ()  # the forms stores written before hold (``canonical.legacy_texts``)
    descriptor: bool = False  # sent as a base64 FileDescriptorProto (confluent-kafka's ProtobufSerializer)


@contextlib.contextmanager
def _budget() -> Iterator[None]:
    """A check over its budget (too large or too recursive to compare) decided nothing: 422 with the
    budget's message, never 'incompatible' (409) and never 'invalid schema' (42201)."""
    try:
        yield
    except CheckBudgetExceeded as exc:
        raise RegistryError(422, 422, f"Compatibility not decided: {exc}") from None


def _readable(headers: Any, raw: bytes) -> None:
    """415 unless a body comes as a media type Confluent's resources consume (none given: octet-stream)."""
    if not raw.strip():
        return
    media = (headers.get("content-type") or "application/octet-stream").split(";")[0].strip().lower()
    if media not in BODY_TYPES:
        raise RegistryError(415, 415, "HTTP 415 Unsupported Media Type")  # as rest-utils maps Jersey's


def _writable(subject: str, mode: str | None) -> None:
    """42205 unless the subject's mode lets a registration or a delete through."""
    if mode in ("READONLY", "READONLY_OVERRIDE"):
        raise RegistryError(422, 42205, f"Subject '{subject}' is in read-only mode ({mode})")


def _body_number(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_ID:
        raise RegistryError(422, 42201, f"Invalid schema: '{name}' must be an integer from 1 to {MAX_ID}")
    return value


class _MethodNotAllowed(Exception):
    def __init__(self, method: str, path: str, allowed: list[str]) -> None:
        super().__init__(f"HTTP 405 Method Not Allowed: {method} on {path} (allowed: {', '.join(allowed)})")
        self.allowed = allowed


def _is_reference(reference: object) -> bool:
    if not isinstance(reference, dict):
        return False
    version = reference.get("version")
    return (
        isinstance(reference.get("name"), str)
        and isinstance(reference.get("subject"), str)
        and subject_problem(reference["subject"]) is None
        and isinstance(version, int)
        and not isinstance(version, bool)
        and (version == -1 or 1 <= version <= MAX_ID)
    )
