"""A gate process killed at any moment leaves the whole batch or none of it.

The test kills a real `tscontract ingest` process with SIGKILL at points spread over its
run, then checks the store: every recorded run's published and quarantined rows are
all there, no row belongs to an unrecorded run, and a final ingest completes.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import ROOT, write
from tests.engines.conftest import SENSOR
from tests.gate.conftest import open_spec

SERIES = (
    ("P-101.discharge_pressure", "bar", 10, "CAL-P101-2026A", "8.5"),
    ("T-204.bearing_temp", "degC", 10, "CAL-T204-2026A", "65.2"),
    ("F-310.inlet_flow", "m**3/h", 60, "CAL-F310-2026A", "220.5"),
)
HEADER = "series_id,event_ts,value,unit,quality,calibration_id,source_id,ingest_run_id,transform_version,revision"


def big_batch(tmp_path, rows_per_series: int):
    start = datetime(2026, 6, 2, tzinfo=UTC)
    lines = [HEADER]
    for sid, unit, step, cal, value in SERIES:
        for i in range(rows_per_series):
            ts = (start + timedelta(seconds=i * step)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            quality = "suspect" if i % 997 == 0 else "good"
            bad_value = "" if i % 1499 == 0 else value  # some rows break 'value is null only when quality = bad'
            lines.append(f"{sid},{ts},{bad_value},{unit},{quality},{cal},plc,x,2.0.0,0")
    return write(tmp_path, "\n".join(lines) + "\n", "big.csv")


def consistent(spec: str) -> tuple[int, int]:
    """Check the store's invariants; return (committed runs, published rows)."""
    store = open_spec(spec)
    try:
        try:
            runs = store.query("SELECT run_id, rows_in, published, quarantined FROM tscontract_runs")
        except Exception:
            return 0, 0  # killed before the schema was created
        published = dict(store.query("SELECT _run_id, count(*) FROM plant_sensor_reading__published GROUP BY 1"))
        quarantined = dict(store.query("SELECT _run_id, count(*) FROM plant_sensor_reading__quarantine GROUP BY 1"))
    finally:
        store.close()
    recorded = {r[0] for r in runs}
    assert set(published) <= recorded and set(quarantined) <= recorded, "rows of an uncommitted run are visible"
    for run_id, rows_in, n_pub, n_quar in runs:
        assert published.get(run_id, 0) == n_pub and quarantined.get(run_id, 0) == n_quar
        assert n_pub + n_quar == rows_in
    assert len(runs) <= 1  # the same file is never committed twice
    return len(runs), sum(published.values())


def ingest_cmd(spec, data):
    return [
        sys.executable,
        "-m",
        "tscontract",
        "ingest",
        str(SENSOR / "contract.yaml"),
        str(data),
        "--store",
        spec,
        "--catalog",
        str(SENSOR / "catalog.yaml"),
        "--now",
        "2026-06-10T00:00:00Z",
        "--format",
        "json",
    ]


@pytest.mark.parametrize("kills", [4])
def test_killed_ingest_publishes_all_or_nothing(store_spec, tmp_path, kills):
    data = big_batch(tmp_path, 20_000)
    started = time.perf_counter()
    full = subprocess.run(ingest_cmd(store_spec, data), capture_output=True, text=True, cwd=ROOT)
    duration = time.perf_counter() - started
    assert full.returncode == 1, full.stderr  # some rows are quarantined by design
    runs, published = consistent(store_spec)
    assert runs == 1 and published == 60_000 - 3 * 14  # 14 rows per series break the null rule
    # now on a fresh store: kill at moments spread over the run, check after each kill, resume at the end
    spec = fresh_store(store_spec, tmp_path, "killed")
    # one kill while the ingest starts and reads; the others one in each equal slice of the span from
    # half its run to past its end, where it writes the store, commits and exits (earliest first: each
    # kill before the commit finds the store still without a run)
    rng = random.Random(20261202)
    slice_s = duration * 0.6 / (kills - 1)
    late = [duration / 2 + slice_s * (i + rng.random()) for i in range(kills - 1)]
    for seconds in [rng.uniform(0.05, duration / 2), *late]:
        kill_after(spec, data, seconds)
        consistent(spec)
    final = subprocess.run(ingest_cmd(spec, data), capture_output=True, text=True, cwd=ROOT)
    assert final.returncode in (0, 1), final.stderr
    assert consistent(spec) == (1, 60_000 - 3 * 14)
    # a kill before the commit, made certain rather than hoped for: on fresh stores, kill earlier and
    # earlier until one lands before the commit (a kill right after the start always does), then resume
    delay, attempt = duration / 2, 0
    while True:
        attempt += 1
        early = fresh_store(store_spec, tmp_path, f"early{attempt}")
        kill_after(early, data, delay)
        if consistent(early) == (0, 0):
            break
        delay = delay / 2 if delay > 0.02 else 0.0
    resumed = subprocess.run(ingest_cmd(early, data), capture_output=True, text=True, cwd=ROOT)
    assert resumed.returncode == 1, resumed.stderr
    assert consistent(early) == (1, 60_000 - 3 * 14)


def fresh_store(store_spec: str, tmp_path, name: str) -> str:
    """An empty store of the same kind as ``store_spec``."""
    if not store_spec.startswith("postgresql://"):
        return str(tmp_path / f"{name}.duckdb")
    import psycopg

    server, database = store_spec.rsplit("/", 1)
    with psycopg.connect(server + "/postgres", autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}_{database}")
    return f"{server}/{name}_{database}"


def kill_after(spec: str, data, seconds: float) -> None:
    """Start an ingest of ``data`` into ``spec`` and SIGKILL it ``seconds`` later."""
    process = subprocess.Popen(ingest_cmd(spec, data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    if seconds:
        time.sleep(seconds)
    process.kill()
    process.wait()
