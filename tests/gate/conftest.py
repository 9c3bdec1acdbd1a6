"""Stores for gate tests: a real DuckDB file, and a real PostgreSQL server on loopback."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tscontract import load_catalog, load_contract
from tscontract.gate.ingest import ingest
from tscontract.gate.store import DuckDBStore, PostgresStore, Store


@pytest.fixture(params=["duckdb", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "duckdb":
        return str(tmp_path / "warehouse.duckdb")
    return request.getfixturevalue("postgres_db")


def open_spec(spec: str) -> Store:
    return PostgresStore(spec) if spec.startswith("postgresql://") else DuckDBStore(spec)


def gate_into(spec: str, contract_path: Path, files: list[Path], catalog: Path, now: datetime, **kwargs: Any) -> Any:
    """``ingest`` of ``files`` into the store ``spec`` names, the store closed afterwards."""
    store = open_spec(spec)
    try:
        return ingest(load_contract(contract_path), files, store, catalog=load_catalog(catalog), now=now, **kwargs)
    finally:
        store.close()


def query(spec: str, sql: str) -> list[tuple[Any, ...]]:
    store = open_spec(spec)
    try:
        return store.query(sql)
    finally:
        store.close()
