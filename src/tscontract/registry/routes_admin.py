"""The registry's admin endpoints as Confluent's ``RootResource``, ``ContextsResource``,
``ConfigResource`` and ``ModeResource`` answer them.

* ``GET /``: ``{}`` (a liveness probe).
* ``GET /contexts``: ``["."]``, the default context, the only one here (``contextPrefix``, ``offset``
  and ``limit`` as Confluent's).
* ``DELETE /config``: the global compatibility (and group) as it was; the default applies again.
  ``DELETE /config/{s}``: the subject's, then the global one applies; 40401 when it has none.
* ``DELETE /mode``: the global mode as it was; READWRITE applies again (``recursive=true`` also
  removes every subject's mode). ``DELETE /mode/{s}``: the subject's; 40401 when it has none,
  unless ``recursive=true`` (then ``{"mode": null}``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tscontract.registry.listing import Query, flag, page


class _Store(Protocol):
    def delete_mode(self, subject: str | None, recursive: bool = False) -> str | None: ...

    def delete_compatibility(self, subject: str | None, who: str) -> dict[str, str]: ...


class _Call(Protocol):
    query: Query
    who: str


class _App(Protocol):
    @property
    def store(self) -> _Store: ...


def root(app: _App, call: _Call) -> tuple[int, Any]:
    return 200, {}


def contexts(app: _App, call: _Call) -> tuple[int, Any]:
    prefix = call.query.get("contextPrefix", [""])[-1]
    return 200, page([context for context in ["."] if context.startswith(prefix)], call.query)


def delete_config(app: _App, call: _Call, subject: str | None = None) -> tuple[int, Any]:
    return 200, app.store.delete_compatibility(subject or None, call.who)


def delete_mode(app: _App, call: _Call, subject: str | None = None) -> tuple[int, Any]:
    return 200, {"mode": app.store.delete_mode(subject or None, flag(call.query, "recursive"))}


# (method, path pattern, handler): app.py routes these beside its own; every one but GET is a write
ROUTES: list[tuple[str, str, Callable[..., tuple[int, Any]]]] = [
    ("GET", r"/", root),
    ("GET", r"/contexts", contexts),
    ("DELETE", r"/config", delete_config),
    ("DELETE", r"/config/(?P<subject>[^/]+)", delete_config),
    ("DELETE", r"/mode", delete_mode),
    ("DELETE", r"/mode/(?P<subject>[^/]+)", delete_mode),
]
