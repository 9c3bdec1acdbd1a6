"""Bad input gets a 4xx JSON answer in Confluent's error format, never a 500 or an HTML page."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from tests.registry.conftest import CT, Registry, avro_record, id_only


def raw_exchange(reg: Registry, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (no client library tidying them) and read the one answer."""
    with socket.create_connection((reg.host, reg.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer:
                head, _, body = answer.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    None,
                )
                if length is not None and len(body) >= length:
                    break
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, body


def send(
    reg: Registry, method: str, path: str, body: bytes | None = None, content_type: str | None = CT
) -> tuple[int, str | None, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection(reg.host, reg.port, timeout=30)
    headers = {"Content-Type": content_type} if body is not None and content_type else {}
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, response.getheader("Content-Type"), data, dict(response.getheaders())


def assert_confluent_error(status: int, content_type: str | None, data: bytes, want: tuple[int, int]) -> dict:
    assert content_type == CT
    body = json.loads(data)
    assert (status, body["error_code"]) == want, body
    assert set(body) == {"error_code", "message"} and isinstance(body["message"], str) and body["message"]
    return body


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_content_length_not_a_number(tmp_path: Path, http: str) -> None:
    reg = Registry(tmp_path / "r.sqlite", http=http)
    try:
        request = b"POST /subjects/s/versions HTTP/1.1\r\nHost: x\r\nContent-Type: " + CT.encode()
        for length in (b"abc", b"-1", b"1e3", b"12, 13"):
            status, headers, body = raw_exchange(reg, request + b"\r\nContent-Length: " + length + b"\r\n\r\n{}")
            assert_confluent_error(status, headers.get("content-type"), body, (400, 400))
        # the server still serves the next client
        assert reg.call("GET", "/subjects") == (200, [])
    finally:
        reg.close()


def test_huge_schema_id_and_version_numbers(registry: Registry) -> None:
    registry.register("s", avro_record("T", "a"))
    for path, want in [
        ("/schemas/ids/99999999999999999999", (404, 40403)),
        ("/schemas/ids/9223372036854775808", (404, 40403)),
        ("/schemas/ids/-1", (404, 40403)),
        ("/schemas/ids/0x10", (404, 40403)),
        ("/subjects/s/versions/99999999999999999999", (422, 42202)),
        ("/subjects/s/versions/0", (422, 42202)),
        ("/subjects/s/versions/2147483648/schema", (422, 42202)),
        ("/subjects/s/versions/2147483647", (404, 40402)),
    ]:
        assert_confluent_error(*send(registry, "GET", path)[:3], want)


def test_deeply_nested_json_body(registry: Registry) -> None:
    # refused before parsing: a body holds at most MAX_BODY_VALUES arrays, objects and commas
    deep = b"[" * 100_000 + b"]" * 100_000
    answer = assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", deep)[:3], (413, 413))
    assert "limit of 10000 values" in answer["message"]
    deep_object = b'{"schema": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001
    assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", deep_object)[:3], (413, 413))
    # under that bound, nesting the JSON parser cannot follow is still unparseable JSON
    deep = b"[" * 5_000 + b"]" * 5_000
    assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", deep)[:3], (400, 400))
    # a deeply nested schema *text* inside a valid body is an invalid schema, not a crash
    nested_text = json.dumps({"schema": "[" * 50_000 + '"string"' + "]" * 50_000})
    assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", nested_text.encode())[:3], (422, 42201))
    assert registry.call("GET", "/subjects") == (200, [])


@pytest.mark.parametrize(
    "body",
    [
        {"schema": avro_record("T", "a"), "schemaType": 5},
        {"schema": avro_record("T", "a"), "schemaType": ["AVRO"]},
        {"schema": avro_record("T", "a"), "schemaType": {"type": "AVRO"}},
        {"schema": 12},
        {"schema": avro_record("T", "a"), "references": [{"name": "x", "subject": "y", "version": "one"}]},
        {"schema": avro_record("T", "a"), "references": [{"name": "x", "subject": "y", "version": 10**30}]},
        {"schema": avro_record("T", "a"), "references": "money"},
    ],
)
def test_wrongly_typed_fields_are_invalid_schemas(registry: Registry, body: dict) -> None:
    data = json.dumps(body).encode()
    assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", data)[:3], (422, 42201))
    assert_confluent_error(*send(registry, "POST", "/subjects/s", data)[:3], (422, 42201))


def test_methods_no_route_takes_are_405_json(registry: Registry) -> None:
    for method, path, allowed in [
        ("PATCH", "/subjects", "GET, HEAD"),
        ("PATCH", "/subjects/s/versions", "GET, HEAD, POST"),
        ("OPTIONS", "/subjects/s/versions/1", "DELETE, GET, HEAD"),
        ("OPTIONS", "/config", "DELETE, GET, HEAD, PUT"),
        ("PUT", "/schemas/ids/1", "GET, HEAD"),
        ("TRACE", "/schemas/types", "GET, HEAD"),
    ]:
        status, content_type, data, headers = send(registry, method, path)
        assert_confluent_error(status, content_type, data, (405, 405))
        assert headers["allow"] == allowed, (method, path)
    status, content_type, data, _ = send(registry, "PATCH", "/nowhere")
    assert_confluent_error(status, content_type, data, (404, 404))


def test_head_answers_like_get_without_a_body(registry: Registry) -> None:
    registry.register("s", avro_record("T", "a"))
    get = send(registry, "GET", "/subjects/s/versions/1")
    status, content_type, data, headers = send(registry, "HEAD", "/subjects/s/versions/1")
    assert (status, content_type, data) == (200, CT, b"")
    assert int(headers["content-length"]) == len(get[2]) > 0
    status, content_type, data, _ = send(registry, "HEAD", "/subjects/nope/versions")
    assert (status, content_type, data) == (404, CT, b"")


def test_body_media_types(registry: Registry) -> None:
    data = json.dumps({"schema": avro_record("T", "a")}).encode()
    for content_type in ("text/plain", "text/plain; charset=utf-8", "application/xml", "multipart/form-data"):
        assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", data, content_type)[:3], (415, 415))
    put = json.dumps({"compatibility": "FULL"}).encode()
    assert_confluent_error(*send(registry, "PUT", "/config", put, "text/plain")[:3], (415, 415))
    assert registry.call("GET", "/subjects") == (200, [])
    # the types Confluent reads, with parameters, and no type at all (octet-stream)
    for content_type in (CT, "application/vnd.schemaregistry+json", "application/json; charset=utf-8", None):
        status, _, answer, _ = send(registry, "POST", "/subjects/s/versions", data, content_type)
        assert id_only((status, json.loads(answer))) == (200, {"id": 1}), content_type


def test_body_that_is_not_json(registry: Registry) -> None:
    for data in (b"{not json", b"\xff\xfe\x00garbage", b'"a string"', b"[1, 2]"):
        assert_confluent_error(*send(registry, "POST", "/subjects/s/versions", data)[:3], (400, 400))


def test_avro_record_with_a_field_twice_is_refused(registry: Registry) -> None:
    twice = {
        "type": "record",
        "name": "Bar",
        "fields": [{"name": "px", "type": "double"}, {"name": "px", "type": "long"}],
    }
    body = assert_confluent_error(
        *send(registry, "POST", "/subjects/s/versions", json.dumps({"schema": json.dumps(twice)}).encode())[:3],
        (422, 42201),
    )
    assert "'px' twice" in body["message"]
    nested = {
        "type": "record",
        "name": "Outer",
        "fields": [
            {"name": "ok", "type": "string"},
            {
                "name": "inner",
                "type": ["null", {"type": "record", "name": "In", "fields": [{"name": "a", "type": "int"}] * 2}],
            },
        ],
    }
    body = assert_confluent_error(
        *send(registry, "POST", "/subjects/s/versions", json.dumps({"schema": json.dumps(nested)}).encode())[:3],
        (422, 42201),
    )
    assert "'In'" in body["message"] and "'a' twice" in body["message"]
    assert registry.call("GET", "/subjects") == (200, [])


def test_protobuf_that_does_not_compile_is_refused(registry: Registry) -> None:
    for text in ("message {{{", 'syntax = "proto3";\nmessage M { strin a = 1; }\n', 'syntax = "proto3";\nmessage M {'):
        status, body = registry.register("p", text, "PROTOBUF")
        assert (status, body["error_code"]) == (422, 42201), text
        assert "schema.proto:" in body["message"]  # protoc's line:column diagnostics reach the client
    status, body = registry.register("p", 'syntax = "proto3";\nmessage M { string a = 1; }\n', "PROTOBUF")
    assert status == 200
    assert registry.call("GET", "/subjects") == (200, ["p"])


@pytest.mark.parametrize(
    "quoted",
    ["a%00b", "bars%0A-value", "x%1B%5B31m", "..", "..%2F..%2Fetc%2Fpasswd", "a%2F..%2Fb", "a%2F.", "tab%09s", "a%7Fb"],
)
def test_bad_subject_names_are_refused(registry: Registry, quoted: str) -> None:
    schema = json.dumps({"schema": avro_record("T", "a")}).encode()
    assert_confluent_error(*send(registry, "POST", f"/subjects/{quoted}/versions", schema)[:3], (422, 42208))
    level = json.dumps({"compatibility": "FULL"}).encode()
    assert_confluent_error(*send(registry, "PUT", f"/config/{quoted}", level)[:3], (422, 42208))
    assert registry.call("GET", "/subjects") == (200, [])
    assert registry.call("GET", "/config/log") == (200, [])


def test_subject_names_a_registry_accepts(registry: Registry) -> None:
    for quoted, subject in [("team%2Fbars-value", "team/bars-value"), ("caf%C3%A9.v1", "café.v1"), ("a..b", "a..b")]:
        assert registry.register(quoted, avro_record("T", "a"))[0] == 200
        assert registry.call("GET", f"/subjects/{quoted}/versions/1")[1]["subject"] == subject
    assert registry.call("GET", "/subjects")[1] == sorted(["team/bars-value", "café.v1", "a..b"])
