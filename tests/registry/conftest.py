"""A registry on a real loopback socket (SQLite, or the suite's real PostgreSQL) and a tiny urllib client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tscontract.registry import serve, serve_in_thread

CT = "application/vnd.schemaregistry.v1+json"


def avro_record(name: str, *fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": f, "type": "string", "default": ""} for f in fields]},
        separators=(",", ":"),  # the registry's canonical text: stored and answered as written
    )


def id_only(answer: tuple[int, Any]) -> tuple[int, Any]:
    """A registration's answer as (status, {"id": id}) when it succeeded: for the tests about which id a
    schema gets (Confluent's full registration answer is test_client_conformance's), else as it came."""
    status, body = answer[0], answer[1]
    return (status, {"id": body["id"]}) if status == 200 and isinstance(body, dict) else (status, body)


def always_ok(mode: str, schema_type: str, new: str, olds: list[str]) -> tuple[bool, list[str]]:
    return True, []


class Registry:
    """A running server plus a tiny urllib client."""

    def __init__(self, db: Path | str, **kwargs: Any) -> None:
        self.server = serve("127.0.0.1", 0, db, **kwargs)
        self.thread = serve_in_thread(self.server)
        self.url = self.server.url
        self.host, self.port = self.server.server_address

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        content_type: str = CT,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer = response.read()
                return response.status, json.loads(answer) if answer else None  # 204: no body
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def register(self, subject: str, schema: str, schema_type: str | None = None, **kw: Any) -> tuple[int, Any]:
        body: dict[str, Any] = {"schema": schema}
        if schema_type:
            body["schemaType"] = schema_type
        return self.call("POST", f"/subjects/{subject}/versions", body, **kw)


@pytest.fixture(params=["sqlite", "postgres"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Registry]:
    """The same registry on its embedded SQLite store and on a real PostgreSQL server."""
    db = tmp_path / "registry.sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_db")
    reg = Registry(db, compat=always_ok)
    yield reg
    reg.close()


@pytest.fixture(params=["sqlite", "postgres"])
def default_store_registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Registry]:
    """The registry with its default compatibility checks, on SQLite and on PostgreSQL."""
    db = tmp_path / "registry.sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_db")
    reg = Registry(db)
    yield reg
    reg.close()


@pytest.fixture
def default_registry(tmp_path: Path) -> Iterator[Registry]:
    reg = Registry(tmp_path / "default.sqlite")
    yield reg
    reg.close()


@pytest.fixture
def auth_registry(tmp_path: Path) -> Iterator[Registry]:
    reg = Registry(tmp_path / "auth.sqlite", token="s3cret", basic={"alice": "pw"}, compat=always_ok)
    yield reg
    reg.close()
