"""Run-time containment (issue 26): even a query that slipped past the allow-list cannot read,
write or fetch anything but the batch -- DuckDB's locked configuration refuses it; PostgreSQL runs
a contract's query in a read-only transaction with a statement timeout."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
import sqlglot

from tests.conftest import write
from tests.security.test_contract_sql import CONTRACT, SECRET
from tscontract.contract.loader import parse_contract
from tscontract.engines.duckdb import DuckDBEngine, connect
from tscontract.engines.inputs.sources import open_source
from tscontract.engines.sandbox import is_locked, lock
from tscontract.plan.checks import build_plan
from tscontract.plan.params import SqlCheckParams

DATA = "sensor,ts,value\na,2026-01-01T00:00:00Z,1\nb,2026-01-01T00:00:01Z,2\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    secret = tmp_path / "private" / "secret.csv"
    secret.parent.mkdir()
    secret.write_text(f"token\n{SECRET}\n", encoding="utf-8")
    return write(tmp_path, DATA, "data.csv"), secret


def _refused(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    return str(info.value)


def test_a_locked_connection_reads_its_input_and_nothing_else(files: tuple[Path, Path], tmp_path: Path) -> None:
    data, secret = files
    con = connect()
    source = open_source(con, [data])  # a lazy view over the CSV file
    lock(con, source.paths)
    assert is_locked(con)
    assert con.execute("SELECT count(*) FROM __tsc_source").fetchall() == [(2,)]
    for sql in (
        f"SELECT * FROM read_text('{secret}')",
        f"SELECT * FROM read_csv('{secret}')",
        f"SELECT * FROM '{secret}'",
        f"SELECT * FROM read_text('{data}/../private/secret.csv')",
        f"SELECT * FROM glob('{tmp_path}/*')",
        "SELECT * FROM 'https://example.com/x.csv'",
        f"COPY (SELECT 1) TO '{tmp_path}/out.csv'",
        f"ATTACH '{tmp_path}/new.db' AS n",
        f"EXPORT DATABASE '{tmp_path}/export'",
        "INSTALL httpfs",
        "LOAD httpfs",
    ):
        message = _refused(con, sql)
        assert SECRET not in message
    for sql in ("SET enable_external_access = true", "RESET lock_configuration", "SET allowed_paths = ['/']"):
        assert "locked" in _refused(con, sql)
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "new.db").exists()
    con.close()


def test_a_query_that_slipped_past_the_allow_list_cannot_read_a_file(files: tuple[Path, Path]) -> None:
    data, secret = files
    contract = parse_contract(CONTRACT.replace("SQL", "SELECT count(*) FROM {object} WHERE value < 0"), "c.yaml")
    plan = build_plan(contract)
    check = next(c for c in plan.checks if c.kind == "sql_check")
    # what the allow-list refuses, put into the plan by hand
    evil = f"SELECT CAST(content AS INT) FROM __tsc_object, LATERAL read_text('{secret}') LIMIT 1"
    query = sqlglot.parse_one(evil, read="duckdb")
    assert isinstance(query, sqlglot.exp.Select)
    evil_check = replace(check, params=replace(check.params_of(SqlCheckParams), query=query))
    plan = replace(plan, checks=tuple(evil_check if c is check else c for c in plan.checks))
    report = DuckDBEngine().run(plan, [str(data)])
    result = next(r for r in report.checks if r.id == check.id)
    assert result.status == "error"
    assert "disabled by configuration" in (result.message or "")
    assert SECRET not in json.dumps(report.to_json(), default=str)


def test_validation_still_reads_lazily_read_files_after_the_lock(files: tuple[Path, Path], tmp_path: Path) -> None:
    data, _ = files
    parquet = tmp_path / "data.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_csv('{data}')) TO '{parquet}' (FORMAT parquet)")
    con.close()
    contract = parse_contract(CONTRACT.replace("SQL", "SELECT count(*) FROM {object} WHERE value < 0"), "c.yaml")
    for path in (data, parquet):
        report = DuckDBEngine().run(build_plan(contract), [str(path)])
        assert report.rows == 2 and report.passed, [c for c in report.checks if c.status != "passed"]
