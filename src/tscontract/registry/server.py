"""A Confluent Schema Registry REST subset on the standard library's threading HTTP server.

Reads are open; writes (register, change config, delete) need the bearer token or basic
credentials when the server was started with them. Compatibility is decided by one injectable
callable, ``compat(mode, schema_type, new_schema_text, older_schema_texts_newest_first)``.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tscontract.registry.store import (
    COMPATIBILITY_LEVELS,
    SCHEMA_TYPES,
    CompatFn,
    RegistryError,
    RegistryStore,
    olds_for_mode,
    open_registry_store,
    version_not_found,
)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_MAX_BODY = 16 * 1024 * 1024


# -- schema parsing and the default compatibility callable -------------------------------------


def parse_schema(schema_type: str, text: str, named: dict[str, Any] | None = None) -> Any:
    """Parse a schema of its type or raise ValueError with the reason (the registry's 42201)."""
    if schema_type == "AVRO":
        import fastavro

        try:
            return fastavro.parse_schema(json.loads(text), named_schemas=named if named is not None else {})
        except Exception as exc:
            raise ValueError(f"Invalid Avro schema: {exc}") from exc
    if schema_type == "JSON":
        import jsonschema

        try:
            document = json.loads(text)
            jsonschema.validators.validator_for(document).check_schema(document)
        except Exception as exc:
            raise ValueError(f"Invalid JSON schema: {exc}") from exc
        return document
    if schema_type == "PROTOBUF":
        if not text.strip():
            raise ValueError("Invalid Protobuf schema: empty text")
        return text
    raise ValueError(f"Unknown schemaType '{schema_type}'; one of {', '.join(SCHEMA_TYPES)}")


_CHECKER_FORMATS = {"AVRO": "avro", "PROTOBUF": "protobuf", "JSON": "jsonschema"}


def default_compat(mode: str, schema_type: str, new_text: str, olds_newest_first: list[str]) -> tuple[bool, list[str]]:
    """The registry's default compatibility decision.

    Every schema must parse; NONE or no older version is compatible; otherwise the decision is
    ``tscontract.evolution.check(mode, new, olds, fmt)`` when that exists. Without it the answer is
    *not compatible* (fail closed): a registry that said yes would let any change through.
    """
    try:
        parse_schema(schema_type, new_text)
        for old in olds_newest_first:
            parse_schema(schema_type, old)
    except ValueError as exc:
        return False, [str(exc)]
    if mode == "NONE" or not olds_newest_first:
        return True, []
    try:
        from tscontract.evolution import check
    except ImportError:
        return False, [
            f"no compatibility checker available for {schema_type} (tscontract.evolution.check is not installed); "
            f"cannot prove {mode} compatibility"
        ]
    try:
        result = check(mode, new_text, olds_newest_first, _CHECKER_FORMATS[schema_type])
    except Exception as exc:  # a checker that cannot decide must not let the change through
        return False, [f"compatibility checker failed: {type(exc).__name__}: {exc}"]
    if isinstance(result, tuple):
        ok, messages = result
        return bool(ok), [str(m) for m in messages]
    # tscontract.evolution.CompatResult: compatible, reasons (break it), warnings (do not)
    messages = [str(m) for m in getattr(result, "reasons", [])]
    messages += [f"warning: {m}" for m in getattr(result, "warnings", [])]
    return bool(result.compatible), messages


# -- HTTP ------------------------------------------------------------------------------------


class RegistryServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        store: RegistryStore,
        compat: CompatFn = default_compat,
        token: str | None = None,
        basic: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.compat = compat
        self.token = token
        self.basic = dict(basic or {})
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

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


_Route = tuple[str, re.Pattern[str], str]
_ROUTES: list[_Route] = [
    (method, re.compile(pattern), name)
    for method, pattern, name in [
        ("GET", r"/subjects", "list_subjects"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/versions", "list_versions"),
        ("POST", r"/subjects/(?P<subject>[^/]+)/versions", "register"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)", "get_version"),
        ("GET", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)/schema", "get_version_schema"),
        ("DELETE", r"/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)", "delete_version"),
        ("POST", r"/subjects/(?P<subject>[^/]+)", "lookup"),
        ("DELETE", r"/subjects/(?P<subject>[^/]+)", "delete_subject"),
        ("GET", r"/schemas/ids/(?P<schema_id>[^/]+)", "get_schema"),
        ("GET", r"/schemas/types", "schema_types"),
        ("GET", r"/config/log", "config_log"),
        ("GET", r"/config", "get_config"),
        ("PUT", r"/config", "put_config"),
        ("GET", r"/config/(?P<subject>[^/]+)", "get_config"),
        ("PUT", r"/config/(?P<subject>[^/]+)", "put_config"),
        ("POST", r"/compatibility/subjects/(?P<subject>[^/]+)/versions/(?P<version>[^/]+)", "test_compat"),
        ("POST", r"/compatibility/subjects/(?P<subject>[^/]+)/versions", "test_compat"),
    ]
]
_WRITES = {"register", "put_config", "delete_subject", "delete_version"}


def _version(subject: str, text: str) -> int | str:
    if text == "latest":
        return "latest"
    try:
        number = int(text)
    except ValueError:
        raise RegistryError(422, 42202, f"The specified version '{text}' is not a valid version id") from None
    if number == -1:
        return "latest"
    if number < 1:
        raise RegistryError(422, 42202, f"The specified version '{text}' is not a valid version id")
    return number


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() == "true"


class _Handler(BaseHTTPRequestHandler):
    server: RegistryServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and CLI print their own
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # -- plumbing ---------------------------------------------------------------------------

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict[str, Any]:
        raw = self._raw
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise RegistryError(400, 400, f"Unparseable JSON body: {exc}") from None
        if not isinstance(body, dict):
            raise RegistryError(400, 400, "JSON body must be an object")
        return body

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = parse_qs(url.query)
        self._raw = b""
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY:
                self.close_connection = True
                raise RegistryError(413, 413, "request body too large")
            # read the whole body first, so an early error never leaves it in a kept-alive stream
            self._raw = self.rfile.read(length) if length > 0 else b""
            allowed = False
            for route_method, pattern, name in _ROUTES:
                match = pattern.fullmatch(path)
                if match is None:
                    continue
                allowed = True
                if route_method != method:
                    continue
                who = "anonymous"
                if name in _WRITES:
                    who = self.server.authenticate(self.headers.get("Authorization"))
                    if who is None:
                        raise RegistryError(401, 40101, "Unauthorized: missing or wrong credentials for a write")
                elif self.headers.get("Authorization"):
                    who = self.server.authenticate(self.headers.get("Authorization")) or "anonymous"
                params = {key: unquote(value) for key, value in match.groupdict().items()}
                status, payload = getattr(self, "_h_" + name)(query=query, who=who, **params)
                self._send(status, payload)
                return
            if allowed:
                raise RegistryError(405, 405, f"Method {method} not allowed on {path}")
            raise RegistryError(404, 404, f"Not found: {path}")
        except RegistryError as exc:
            headers = {"WWW-Authenticate": 'Bearer realm="tscontract"'} if exc.http_status == 401 else None
            self._send(exc.http_status, {"error_code": exc.error_code, "message": exc.message}, headers)
        except Exception as exc:  # a bug must still answer in the registry's error shape
            self._send(500, {"error_code": 50001, "message": f"Error in the backend data store: {exc}"})

    def _schema_request(self, body: dict[str, Any]) -> tuple[str, str, list[dict]]:
        text = body.get("schema")
        if not isinstance(text, str) or not text:
            raise RegistryError(422, 42201, "Invalid schema: field 'schema' must be a non-empty string")
        schema_type = (body.get("schemaType") or "AVRO").upper()
        if schema_type not in SCHEMA_TYPES:
            raise RegistryError(422, 42201, f"Invalid schema: unknown schemaType '{schema_type}'")
        references = body.get("references") or []
        if not isinstance(references, list) or not all(isinstance(r, dict) for r in references):
            raise RegistryError(422, 42201, "Invalid schema: 'references' must be a list of objects")
        named: dict[str, Any] = {}
        for reference in references:
            try:
                referenced = self.server.store.get_version(str(reference.get("subject")), reference.get("version"))
            except RegistryError:
                raise RegistryError(422, 42201, f"Invalid schema: unresolved reference {reference}") from None
            if schema_type == "AVRO":
                try:
                    parse_schema("AVRO", referenced.schema_text, named)
                except ValueError as exc:
                    raise RegistryError(422, 42201, f"Invalid schema: reference {reference}: {exc}") from None
        if not references or schema_type != "AVRO":
            named = {}
        try:
            parse_schema(schema_type, text, named)
        except ValueError as exc:
            raise RegistryError(422, 42201, str(exc)) from None
        return schema_type, text, references

    @staticmethod
    def _version_payload(registered: Any) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "subject": registered.subject,
            "version": registered.version,
            "id": registered.schema_id,
            "schema": registered.schema_text,
        }
        if registered.schema_type != "AVRO":
            payload["schemaType"] = registered.schema_type
        if registered.references:
            payload["references"] = registered.references
        return payload

    # -- handlers: each returns (status, payload) ---------------------------------------------

    def _h_list_subjects(self, query: dict, who: str) -> tuple[int, Any]:
        return 200, self.server.store.subjects(_flag(query, "deleted"))

    def _h_list_versions(self, query: dict, who: str, subject: str) -> tuple[int, Any]:
        return 200, self.server.store.versions(subject, _flag(query, "deleted"))

    def _h_register(self, query: dict, who: str, subject: str) -> tuple[int, Any]:
        schema_type, text, references = self._schema_request(self._body())
        schema_id = self.server.store.register(subject, schema_type, text, references, self.server.compat)
        return 200, {"id": schema_id}

    def _h_get_version(self, query: dict, who: str, subject: str, version: str) -> tuple[int, Any]:
        registered = self.server.store.get_version(subject, _version(subject, version))
        return 200, self._version_payload(registered)

    def _h_get_version_schema(self, query: dict, who: str, subject: str, version: str) -> tuple[int, Any]:
        registered = self.server.store.get_version(subject, _version(subject, version))
        if registered.schema_type == "PROTOBUF":
            return 200, registered.schema_text
        return 200, json.loads(registered.schema_text)

    def _h_delete_version(self, query: dict, who: str, subject: str, version: str) -> tuple[int, Any]:
        return 200, self.server.store.delete_version(subject, _version(subject, version))

    def _h_lookup(self, query: dict, who: str, subject: str) -> tuple[int, Any]:
        body = self._body()
        self.server.store.versions(subject)  # 40401 before any schema complaint
        schema_type, text, references = self._schema_request(body)
        return 200, self._version_payload(self.server.store.lookup(subject, schema_type, text, references))

    def _h_delete_subject(self, query: dict, who: str, subject: str) -> tuple[int, Any]:
        return 200, self.server.store.delete_subject(subject, permanent=_flag(query, "permanent"))

    def _h_get_schema(self, query: dict, who: str, schema_id: str) -> tuple[int, Any]:
        try:
            number = int(schema_id)
        except ValueError:
            raise RegistryError(404, 40403, f"Schema {schema_id} not found") from None
        schema_type, text, references = self.server.store.schema_by_id(number)
        payload: dict[str, Any] = {"schema": text}
        if schema_type != "AVRO":
            payload["schemaType"] = schema_type
        if references:
            payload["references"] = references
        return 200, payload

    def _h_schema_types(self, query: dict, who: str) -> tuple[int, Any]:
        return 200, list(SCHEMA_TYPES)

    def _h_config_log(self, query: dict, who: str) -> tuple[int, Any]:
        subject = query.get("subject", [None])[-1]
        return 200, self.server.store.config_log(subject)

    def _h_get_config(self, query: dict, who: str, subject: str | None = None) -> tuple[int, Any]:
        default_to_global = subject is None or _flag(query, "defaultToGlobal")
        level = self.server.store.compatibility(subject, default_to_global=default_to_global)
        if level is None:
            raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")
        return 200, {"compatibilityLevel": level}

    def _h_put_config(self, query: dict, who: str, subject: str | None = None) -> tuple[int, Any]:
        body = self._body()
        level = body.get("compatibility", body.get("compatibilityLevel"))
        if not isinstance(level, str) or level.upper() not in COMPATIBILITY_LEVELS:
            raise RegistryError(
                422, 42203, f"Invalid compatibility level {level!r}; one of {', '.join(COMPATIBILITY_LEVELS)}"
            )
        reason = body.get("reason") or self.headers.get("X-Tscontract-Reason")
        if reason is not None and not isinstance(reason, str):
            raise RegistryError(422, 42203, "'reason' must be a string")
        self.server.store.set_compatibility(subject, level.upper(), who, reason)
        return 200, {"compatibility": level.upper()}

    def _h_test_compat(self, query: dict, who: str, subject: str, version: str | None = None) -> tuple[int, Any]:
        body = self._body()
        store = self.server.store
        store.versions(subject)  # 40401
        schema_type, text, _ = self._schema_request(body)
        mode = store.compatibility(subject) or "FULL_TRANSITIVE"
        if version is None or _version(subject, version) == "latest":
            versions = sorted(store.versions(subject), reverse=True)
            olds = olds_for_mode(mode, [store.get_version(subject, v).schema_text for v in versions])
        else:
            try:
                olds = [store.get_version(subject, _version(subject, version)).schema_text]
            except RegistryError as exc:
                if exc.error_code == 40402:
                    raise version_not_found(subject, version) from None
                raise
            olds = olds_for_mode(mode, olds)
        ok, messages = self.server.compat(mode, schema_type, text, olds)
        return 200, {"is_compatible": bool(ok), "messages": list(messages)}


# -- entry points ----------------------------------------------------------------------------


def parse_basic(pairs: list[str]) -> dict[str, str]:
    """``USER:PASSWORD`` pairs (``--basic``) as a user -> password map."""
    credentials = {}
    for pair in pairs:
        user, sep, password = pair.partition(":")
        if not sep:
            raise ValueError(f"--basic expects USER:PASSWORD, got {pair!r}")
        credentials[user] = password
    return credentials


def serve(
    host: str = "127.0.0.1",
    port: int = 8081,
    db_path: str | Path = "registry.sqlite",
    token: str | None = None,
    basic: dict[str, str] | None = None,
    compat: CompatFn = default_compat,
) -> RegistryServer:
    """Bind the registry (not yet serving): call ``serve_forever()`` on it, or run it in a thread.

    ``port=0`` picks a free port (``server.server_address``); ``basic`` maps user names to passwords.
    """
    return RegistryServer((host, port), open_registry_store(db_path), compat=compat, token=token, basic=basic)


def serve_in_thread(server: RegistryServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> int:
    """``tscontract registry serve [--db registry.sqlite] [--host 127.0.0.1] [--port 8081] [--token T]``."""
    parser = argparse.ArgumentParser(prog="tscontract registry serve", description="Serve the schema registry.")
    parser.add_argument("--db", default="registry.sqlite", help="SQLite file (created if missing)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--token", default=None, help="bearer token required for writes")
    parser.add_argument(
        "--basic",
        action="append",
        default=[],
        metavar="USER:PASSWORD",
        help="basic-auth credentials allowed to write (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        basic = parse_basic(args.basic)
    except ValueError as exc:
        parser.error(str(exc))
    server = serve(args.host, args.port, args.db, token=args.token, basic=basic or None)
    print(f"tscontract registry on {server.url} (db {args.db})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
