"""Opening a store: read-only commands never create one, and a busy DuckDB file is waited for."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, run_cli
from tests.engines.conftest import OHLCV, SENSOR
from tests.gate.conftest import query

NOW = "2026-11-30T21:05:00Z"


def read_only_commands(store: str) -> list[tuple[str, ...]]:
    return [
        ("corrections", store),
        ("corrections", store, "--format", "json"),
        ("check-store", str(OHLCV / "contract.yaml"), store, "--catalog", str(OHLCV / "catalog.yaml")),
    ]


def assert_one_line_refusal(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_read_only_commands_refuse_a_missing_duckdb_store(tmp_path):
    store = tmp_path / "nonexist.duckdb"
    for args in read_only_commands(str(store)):
        assert_one_line_refusal(run_cli(*args), "nonexist.duckdb", "does not exist")
        assert not store.exists(), args  # nothing was created


def test_read_only_commands_refuse_a_store_without_tables(tmp_path, postgres_db):
    import duckdb

    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    for store in (str(empty), postgres_db):
        for args in read_only_commands(store):
            assert_one_line_refusal(run_cli(*args), "has no table tscontract_runs")
    # a store that holds another contract's data: check-store names the missing table of this one
    run_cli(
        "ingest",
        SENSOR / "contract.yaml",
        SENSOR / "data" / "good.csv",
        "--store",
        postgres_db,
        "--catalog",
        SENSOR / "catalog.yaml",
        "--now",
        NOW,
    )
    other = run_cli("check-store", OHLCV / "contract.yaml", postgres_db)
    assert_one_line_refusal(other, "has no table ohlcv_1m__published")
    assert run_cli("corrections", postgres_db).stdout.strip() == "0 correction(s)"


HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


def hold(store: str, seconds: float) -> subprocess.Popen[str]:
    """Another process with the DuckDB file open for ``seconds`` (returns once it has it)."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, store, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "holding"
    return process


def ingest_cmd(store: str, contract_dir, data, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tscontract",
        "ingest",
        str(contract_dir / "contract.yaml"),
        str(data),
        "--store",
        store,
        "--catalog",
        str(contract_dir / "catalog.yaml"),
        "--now",
        NOW,
        *extra,
    ]


def test_concurrent_ingests_wait_for_each_other(tmp_path):
    store = str(tmp_path / "warehouse.duckdb")
    holder = hold(store, 2.0)
    # both ingests start while the file is held, so they certainly overlap and contend for it
    first = subprocess.Popen(
        ingest_cmd(store, OHLCV, OHLCV / "data" / "good.csv", "--reason", "late_trades"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    second = subprocess.Popen(
        ingest_cmd(store, SENSOR, SENSOR / "data" / "good.csv"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outcomes = [p.communicate(timeout=120) for p in (first, second)]
    holder.wait(timeout=30)
    assert [first.returncode, second.returncode] == [0, 0], outcomes
    runs = query(store, "SELECT contract, rows_in, published FROM tscontract_runs ORDER BY contract")
    assert runs == [("ohlcv_1m", 781, 781), ("plant_sensor_reading", 96, 96)]


@pytest.mark.parametrize("command", ["ingest", "corrections"])
def test_a_store_held_too_long_is_a_one_line_error(tmp_path, command):
    store = str(tmp_path / "warehouse.duckdb")
    holder = hold(store, 30.0)
    try:
        started = time.monotonic()
        if command == "ingest":
            args = ingest_cmd(store, OHLCV, OHLCV / "data" / "good.csv", "--lock-timeout", "1.5")
            result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
        else:
            result = run_cli("corrections", store, "--lock-timeout", "1.5")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert_one_line_refusal(result, "warehouse.duckdb", "still in use", "1.5s", "--lock-timeout", f"PID {holder.pid}")
    assert waited >= 1.5


def test_lock_timeout_must_be_a_number_of_seconds(tmp_path):
    result = run_cli("corrections", tmp_path / "w.duckdb", "--lock-timeout", "soon")
    assert_one_line_refusal(result, "--lock-timeout", "SECONDS")


def test_a_postgres_store_locked_too_long_is_a_one_line_error(postgres_db):
    """Another session holding a table lock: the ingest waits --lock-timeout, then one line, exit 2."""
    import psycopg

    first = subprocess.run(
        ingest_cmd(postgres_db, OHLCV, OHLCV / "data" / "good.csv", "--reason", "late_trades"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    with psycopg.connect(postgres_db) as holder:
        holder.execute("LOCK TABLE ohlcv_1m__published, tscontract_runs IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        args = ingest_cmd(postgres_db, OHLCV, OHLCV / "data" / "good.csv", "--lock-timeout", "1.5")
        result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
        waited = time.monotonic() - started
        holder.rollback()
    assert_one_line_refusal(result, "still in use by another session", "1.5s", "--lock-timeout", "lock timeout")
    assert 1.5 <= waited < 45
    # nothing of the refused run was written
    with psycopg.connect(postgres_db) as con:
        assert con.execute("SELECT count(*) FROM tscontract_runs").fetchone() == (1,)
