"""Serve the registry's ASGI application (``tscontract.registry.app``) with uvicorn.

``serve(...)`` binds the listening socket at once (``port=0`` picks a free port, with a deep
backlog so bursts of clients queue instead of being reset) and returns a ``RegistryServer``;
``serve_forever()`` runs uvicorn on that socket until ``shutdown()``. Starlette and uvicorn are
the optional extra ``tscontract[registry]``: importing this module does not need them, serving does.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from tscontract.errors import InputError
from tscontract.registry.checks import ProcessChecks
from tscontract.registry.contained import ContainedSchemas
from tscontract.registry.credentials import credentials, parse_basic
from tscontract.registry.sandbox import WORKERS as SANDBOX_WORKERS
from tscontract.registry.sandbox import Sandbox
from tscontract.registry.schemas import default_compat, parse_schema
from tscontract.registry.store import CompatFn, RegistryStore, open_registry_store, redact

__all__ = ["RegistryServer", "default_compat", "main", "parse_basic", "parse_schema", "serve", "serve_in_thread"]

BACKLOG = 2048  # the kernel caps it at net.core.somaxconn
# how long a thread running Python keeps the interpreter lock while another waits (default 5 ms):
# the event loop waits that long after every socket call whenever a write's thread parses a
# schema, so reads queue behind writes; 0.5 ms hands the lock back ten times sooner
SWITCH_INTERVAL = 0.0005
INSTALL_HINT = "the schema registry server needs Starlette and uvicorn: pip install 'tscontract[registry]'"


def require_asgi() -> None:
    """InputError (one line, naming the extra) when Starlette or uvicorn is missing."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise InputError(INSTALL_HINT) from None


def _protocol_class(http: str = "auto") -> type:
    """uvicorn's HTTP protocol (httptools when installed, else h11; or as ``http`` names it), answering a
    request it cannot parse (``Content-Length: abc``) in JSON."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    base: type = H11Protocol
    if http != "h11":
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

            base = HttpToolsProtocol
        except ImportError:  # httptools is in the registry extra; h11 comes with uvicorn
            if http == "httptools":
                raise

    class JsonErrorProtocol(base):
        def send_400_response(self, msg: str) -> None:
            body = json.dumps({"error_code": 400, "message": f"Bad request: {msg}"}).encode()
            head = (
                b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/vnd.schemaregistry.v1+json\r\n"
                b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
            )
            self.transport.write(head + body)
            self.transport.close()

    return JsonErrorProtocol


def _listen(address: tuple[str, int], backlog: int) -> socket.socket:
    """A listening TCP socket. Made with proto IPPROTO_TCP (``socket.create_server`` leaves it 0): asyncio
    sets TCP_NODELAY only on such sockets, and without it a response sent in two writes (head, then
    body) waits for the client's delayed ACK, 40 ms a request."""
    host, port = address
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


class RegistryServer:
    """A bound registry: ``serve_forever()`` serves, ``shutdown()`` stops, ``server_close()`` releases."""

    def __init__(
        self,
        address: tuple[str, int],
        store: RegistryStore,
        compat: CompatFn = default_compat,
        token: str | None = None,
        basic: dict[str, str] | None = None,
        backlog: int = BACKLOG,
        check_processes: int = 0,
        http: str = "auto",
        sandbox_processes: int = SANDBOX_WORKERS,
        strict: bool = False,
    ) -> None:
        require_asgi()
        import uvicorn

        from tscontract.registry.app import RegistryApp

        self.store = store
        self.checks: ProcessChecks | None = None
        # protoc runs only in the sandbox's capped children (registry.contained)
        self.sandbox = Sandbox(sandbox_processes)
        contained = ContainedSchemas(self.sandbox)
        if compat is default_compat:
            if check_processes > 0:
                self.checks = ProcessChecks(check_processes)
                contained.inner = self.checks
            compat = contained.compat
        self.app = RegistryApp(
            store, compat=compat, token=token, basic=basic, parse_problem=contained.parse_problem, strict=strict
        )
        self.socket = _listen(address, backlog)
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        config = uvicorn.Config(
            self.app.asgi,
            http=_protocol_class(http),
            lifespan="off",
            log_config=None,
            access_log=False,
            log_level="warning",
            backlog=backlog,
            timeout_keep_alive=30,
            timeout_graceful_shutdown=5,
            server_header=False,
        )
        self._uvicorn = uvicorn.Server(config)
        self._running = threading.Lock()
        if self.checks is not None:
            self.checks.warm()

    @property
    def compat(self) -> CompatFn:
        return self.app.compat

    @property
    def url(self) -> str:
        host, port = self.server_address
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def serve_forever(self, poll_interval: float | None = None) -> None:
        """Serve until ``shutdown()`` (or SIGINT/SIGTERM in the main thread); ``poll_interval`` is ignored."""
        with self._running:
            if not self._uvicorn.should_exit:  # shut down before it started: nothing to serve
                sys.setswitchinterval(SWITCH_INTERVAL)
                self._uvicorn.run(sockets=[self.socket])

    def shutdown(self) -> None:
        """Stop serving and wait until the loop has finished (in-flight requests get 5 s)."""
        self._uvicorn.should_exit = True
        with self._running:
            pass

    def server_close(self) -> None:
        self.socket.close()
        self.store.close()
        self.sandbox.close()
        if self.checks is not None:
            self.checks.close()


def default_check_processes() -> int:
    """None on 2 cores or fewer, else one compatibility-check process per core, at most 4.

    Parsed schemas and pairwise verdicts are cached, so a check is cheap; on 2 cores the round
    trip to a worker (pickling, the pool's threads) cost more of the server's interpreter lock than
    the check itself (bench/registry.py: 150-180 writes/s and 1,000-1,450 reads/s in process
    against 135-145 and 800-900 with 2 workers). More cores let checks run beside the event loop."""
    cores = os.cpu_count() or 1
    return 0 if cores <= 2 else min(4, cores)


def serve(
    host: str = "127.0.0.1",
    port: int = 8081,
    db_path: str | Path = "registry.sqlite",
    token: str | None = None,
    basic: dict[str, str] | None = None,
    compat: CompatFn = default_compat,
    check_processes: int = 0,
    http: str = "auto",
    strict: bool = False,
) -> RegistryServer:
    """Bind the registry (not yet serving): call ``serve_forever()`` on it, or run it in a thread.

    ``db_path`` is a SQLite file or a ``postgresql://`` URL. ``port=0`` picks a free port
    (``server.server_address``); ``basic`` maps user names to passwords. ``check_processes > 0``
    runs the default compatibility checks in that many worker processes (``ProcessChecks``);
    ``http`` picks uvicorn's HTTP parser (``auto``: httptools when installed, else ``h11``);
    ``strict`` answers as Confluent even where the registry deliberately differs for a client's sake.
    """
    require_asgi()
    store = open_registry_store(db_path)
    try:
        return RegistryServer(
            (host, port),
            store,
            compat=compat,
            token=token,
            basic=basic,
            check_processes=check_processes,
            http=http,
            strict=strict,
        )
    except BaseException:
        store.close()
        raise


def serve_in_thread(server: RegistryServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


class _Terminated(Exception):
    pass


def _terminated(signum: int, frame: Any) -> None:
    raise _Terminated


def run(server: RegistryServer, db: str | Path, echo: Any = print) -> None:
    """Print the banner and serve until SIGINT or SIGTERM (the CLI's loop), then release everything.

    uvicorn finishes the requests in flight and then re-raises the signal it caught: SIGTERM then
    raises here instead of ending the process at once, so the check processes are stopped too.
    """
    server.sandbox.warm()  # the first Protobuf schema must not wait for its compiler's process to start
    echo(f"tscontract registry on {server.url} (db {redact(str(db))})")
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if main_thread else None
    try:
        server.serve_forever()
    except (KeyboardInterrupt, _Terminated):
        pass
    finally:
        server.server_close()
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


STRICT_HELP = (
    "answer as Confluent's registry even where tscontract deliberately differs to keep confluent-kafka clients"
    " working (see the README's REST table)"
)


def main(argv: list[str] | None = None) -> int:
    """``tscontract registry serve [--db registry.sqlite|postgresql://...] [--host 127.0.0.1] [--port 8081]``."""
    parser = argparse.ArgumentParser(prog="tscontract registry serve", description="Serve the schema registry.")
    parser.add_argument("--db", default="registry.sqlite", help="SQLite file (created if missing) or postgresql:// URL")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument(
        "--token", default=None, help="bearer token required for writes (visible in ps: prefer --token-file)"
    )
    parser.add_argument("--token-file", type=Path, default=None, help="file holding the bearer token")
    parser.add_argument(
        "--basic",
        action="append",
        default=[],
        metavar="USER:PASSWORD",
        help="basic-auth credentials allowed to write (repeatable; visible in ps: prefer --basic-file)",
    )
    parser.add_argument(
        "--basic-file", action="append", type=Path, default=[], help="file of USER:PASSWORD lines (repeatable)"
    )
    parser.add_argument(
        "--check-processes",
        type=int,
        default=default_check_processes(),
        help="worker processes for compatibility checks (0: in the server process)",
    )
    parser.add_argument("--strict", action="store_true", help=STRICT_HELP)
    args = parser.parse_args(argv)
    try:
        token, basic, warnings = credentials(args.token, args.token_file, args.basic, args.basic_file, args.host)
        for warning in warnings:
            print(warning, file=sys.stderr, flush=True)
        server = serve(
            args.host,
            args.port,
            args.db,
            token=token,
            basic=basic or None,
            check_processes=args.check_processes,
            strict=args.strict,
        )
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot bind {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    run(server, args.db, lambda line: print(line, flush=True))
    return 0
