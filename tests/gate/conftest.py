"""Stores for gate tests: a real DuckDB file, and a real PostgreSQL server on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tscontract.gate.store import DuckDBStore, PostgresStore, Store


@pytest.fixture(params=["duckdb", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "duckdb":
        return str(tmp_path / "warehouse.duckdb")
    return request.getfixturevalue("postgres_db")


def open_spec(spec: str) -> Store:
    return PostgresStore(spec) if spec.startswith("postgresql://") else DuckDBStore(spec)
