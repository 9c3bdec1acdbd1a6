"""DuckDB's memory is bounded (1 GiB unless --memory-limit / TSCONTRACT_MEMORY_LIMIT says otherwise).

Beyond the limit DuckDB spills to a private temporary directory; what cannot fit is one
line naming the limit (exit 2), never an internal error.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli
from tests.engines.conftest import SENSOR
from tscontract import validate
from tscontract.engines.duckdb import MEMORY_LIMIT_ENV, connect
from tscontract.errors import InputError

NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def long_sensor_csv(tmp_path_factory) -> Path:
    """200,000 readings of one sensor every 10 s (23 days), valid against the sensor contract."""
    path = tmp_path_factory.mktemp("memory") / "data.csv"
    duckdb.sql(
        "COPY (SELECT 'T-204.bearing_temp' AS series_id, strftime(TIMESTAMPTZ '2026-10-01 00:00:00+00' "
        "+ to_seconds(i * 10), '%Y-%m-%dT%H:%M:%S.000Z') AS event_ts, '65.0000' AS value, 'degC' AS unit, "
        "'good' AS quality, 'CAL-T204-2026A' AS calibration_id, 'plc' AS source_id, 'run-1' AS ingest_run_id, "
        f"'2.0.0' AS transform_version, 0 AS revision FROM range(200000) t(i)) TO '{path}' (HEADER)"
    )
    return path


def setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    row = con.execute(f"SELECT current_setting('{name}')").fetchone()
    assert row is not None
    return str(row[0])


def test_default_limit_and_private_spill_directory(monkeypatch):
    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    con = connect()
    assert setting(con, "memory_limit") == "1.0 GiB"  # DuckDB's own default is 80% of the machine
    spill = setting(con, "temp_directory")
    assert Path(spill).parent == Path(tempfile.gettempdir()) and "tscontract-spill-" in spill
    assert Path(spill).resolve() != (Path.cwd() / ".tmp").resolve()
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "3GiB")
    assert setting(connect(), "memory_limit") == "3.0 GiB"


def test_a_smaller_limit_gives_the_same_report(long_sensor_csv, monkeypatch):
    def report(limit: str) -> dict:
        monkeypatch.setenv(MEMORY_LIMIT_ENV, limit)
        found = validate(SENSOR / "contract.yaml", long_sensor_csv, catalog=SENSOR / "catalog.yaml", now=NOW)
        data = found.to_json()
        data.pop("elapsed_s")
        return data

    roomy = report("4GiB")
    assert roomy["checks"] and all(c["status"] == "passed" for c in roomy["checks"]), roomy
    assert report("100MB") == roomy


def test_too_little_memory_is_one_line_naming_the_limit(long_sensor_csv, monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "24MB")
    with pytest.raises(InputError, match=r"more memory than the limit of 24MB .*--memory-limit"):
        validate(SENSOR / "contract.yaml", long_sensor_csv, catalog=SENSOR / "catalog.yaml", now=NOW)
    args = ["validate", SENSOR / "contract.yaml", long_sensor_csv, "-c", SENSOR / "catalog.yaml"]
    done = run_cli("--memory-limit", "24MB", *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "limit of 24MB" in done.stderr and "Traceback" not in done.stderr
    assert run_cli("--memory-limit", "2GiB", *args, "--now", "2026-12-01T00:00:00Z").returncode == 0


@pytest.mark.parametrize("value", ["3zz", "lots", "1.5 furlongs"])
def test_a_size_duckdb_cannot_read_is_refused(value):
    done = run_cli(
        "--memory-limit",
        value,
        "validate",
        SENSOR / "contract.yaml",
        SENSOR / "data" / "good.csv",
        "-c",
        SENSOR / "catalog.yaml",
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: memory limit {value!r}: give a size such as 512MB, 2GiB or 80% (--memory-limit, {MEMORY_LIMIT_ENV})"
    )
