"""Content negotiation as Confluent's registry does it (Jersey): the ``Accept`` header picks the answer's type.

Confluent's resources ``@Produces`` three types, each with a server quality (``Versions``):
``application/vnd.schemaregistry.v1+json`` (1), ``application/vnd.schemaregistry+json`` (0.9)
and ``application/json`` (0.5). Jersey ranks each type the ``Accept`` header admits by the
client's ``q`` and then the server's quality, so ``*/*`` (and no header) gets the v1 type and
``application/json`` gets ``application/json``. A header that admits none of them is
``406 Not Acceptable``: Jersey's ``NotAcceptableException`` as rest-utils maps it,
``{"error_code": 406, "message": "HTTP 406 Not Acceptable"}``, after the path and method matched
(an unknown path is still 404, a method the path does not take 405).

``acceptable`` decides (the endpoint raises the 406 before a handler runs: nothing is written);
``ContentNegotiation`` (ASGI middleware) gives every answer written as the v1 type the
negotiated one.
"""

from __future__ import annotations

from typing import Any

from tscontract.registry.errors import RegistryError

V1 = "application/vnd.schemaregistry.v1+json"
# what the registry produces, with Jersey's server quality (qs) for each
PRODUCED: tuple[tuple[str, float], ...] = (
    (V1, 1.0),
    ("application/vnd.schemaregistry+json", 0.9),
    ("application/json", 0.5),
)


def _ranges(accept: str) -> list[tuple[str, str, float]]:
    """(type, subtype, q) per media range of an Accept header; a range that does not parse is skipped."""
    ranges = []
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        media = "*/*" if media == "*" else media.lower()
        kind, slash, sub = media.partition("/")
        if not (kind and slash and sub):
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        ranges.append((kind, sub, q))
    return ranges


def negotiate(accept: str | None) -> str | None:
    """The type an answer to ``accept`` carries, or None when the registry produces none it admits."""
    if accept is None or not accept.strip():
        return V1  # no Accept header: anything
    ranges = _ranges(accept)
    best: tuple[float, float, str] | None = None
    for media, qs in PRODUCED:
        kind, sub = media.split("/")
        # the most specific range that matches this type gives its q (RFC 9110 12.5.1)
        matching = [
            (2 if (k, s) == (kind, sub) else 1 if (k, s) == (kind, "*") else 0, q)
            for k, s, q in ranges
            if (k, s) in ((kind, sub), (kind, "*"), ("*", "*"))
        ]
        if not matching:
            continue
        q = max(matching)[1]
        if q > 0 and (best is None or (q, qs) > best[:2]):
            best = (q, qs, media)
    return None if best is None else best[2]


def acceptable(headers: Any) -> str:
    """The negotiated type for a request's headers; 406 as Confluent answers it when there is none."""
    media = negotiate(headers.get("accept"))
    if media is None:
        raise RegistryError(406, 406, "HTTP 406 Not Acceptable")
    return media


class ContentNegotiation:
    """ASGI middleware: an answer the app writes as the v1 type carries the type ``Accept`` negotiates."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accept = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"accept"]
        media = negotiate(", ".join(accept) if accept else None)
        if media is None or media == V1:
            await self.app(scope, receive, send)
            return
        wanted = media.encode()

        async def negotiated(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (k, wanted if k.lower() == b"content-type" and v == V1.encode() else v)
                    for k, v in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, send=negotiated)
