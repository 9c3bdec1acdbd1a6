"""Content negotiation as Confluent's registry (Jersey) does it, on a real loopback socket (#28)."""

from __future__ import annotations

import http.client
import json

import pytest

from tests.registry.conftest import CT, Registry, avro_record
from tscontract.registry.negotiation import negotiate

CLIENTS = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
NOT_ACCEPTABLE = {"error_code": 406, "message": "HTTP 406 Not Acceptable"}


def send(
    reg: Registry, method: str, path: str, accept: str | None, body: dict | None = None
) -> tuple[int, str | None, dict | None]:
    connection = http.client.HTTPConnection(reg.host, reg.port, timeout=30)
    headers = {} if accept is None else {"Accept": accept}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = CT
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        return response.status, response.getheader("Content-Type"), json.loads(raw) if raw else None
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        (None, CT),
        ("", CT),
        ("*/*", CT),
        ("*", CT),
        ("application/*", CT),
        (CLIENTS, CT),  # what confluent-kafka sends
        ("text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2", CT),  # Java's HttpURLConnection (the Java client)
        ("application/json", "application/json"),
        ("application/vnd.schemaregistry+json", "application/vnd.schemaregistry+json"),
        ("application/json, */*", CT),  # Jersey: the client's q first, then the server's (v1 1, json 0.5)
        ("application/json, */*;q=0.1", "application/json"),
        ("text/html, application/json;q=0.8", "application/json"),
        ("APPLICATION/JSON; charset=utf-8", "application/json"),
        ("text/html", None),
        ("application/xml, text/plain;q=0.5", None),
        ("application/json;q=0", None),
        ("not a media type", None),
    ],
)
def test_negotiate(accept: str | None, media: str | None) -> None:
    assert negotiate(accept) == media


def test_answers_carry_the_negotiated_type(registry: Registry) -> None:
    schema = avro_record("Bar", "close")
    assert send(registry, "POST", "/subjects/bars/versions", CLIENTS, {"schema": schema})[:2] == (200, CT)
    for accept, media in [(None, CT), ("*/*", CT), ("application/json", "application/json"), (CLIENTS, CT)]:
        status, content_type, body = send(registry, "GET", "/subjects/bars/versions/1", accept)
        assert (status, content_type) == (200, media) and body is not None and body["schema"] == schema
    # an error answers in the negotiated type too
    status, content_type, body = send(registry, "GET", "/subjects/nope/versions", "application/json")
    assert (status, content_type, body and body["error_code"]) == (404, "application/json", 40401)


def test_an_accept_header_the_registry_cannot_answer_is_406(registry: Registry) -> None:
    schema = avro_record("Bar", "close")
    assert send(registry, "GET", "/subjects", "text/html") == (406, CT, NOT_ACCEPTABLE)
    assert send(registry, "GET", "/schemas/types", "application/xml") == (406, CT, NOT_ACCEPTABLE)
    # refused before the handler runs: nothing is registered
    assert send(registry, "POST", "/subjects/bars/versions", "text/html", {"schema": schema}) == (
        406,
        CT,
        NOT_ACCEPTABLE,
    )
    assert send(registry, "GET", "/subjects", None) == (200, CT, [])
    # as Jersey: the path and the method are matched first
    assert send(registry, "GET", "/nowhere", "text/html")[0] == 404
    assert send(registry, "PATCH", "/subjects", "text/html")[0] == 405
