"""tscontract init: a draft contract and catalog from a sample, that lints and validates its sample."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import run_cli
from tests.engines.conftest import OHLCV, SENSOR
from tscontract import load_catalog, load_contract
from tscontract.errors import InputError
from tscontract.export.infer import infer

NOW = "2026-11-30T21:05:00Z"


def init(tmp_path, *data, extra=()):
    out = tmp_path / "draft.yaml"
    done = run_cli("init", *data, "-o", out, "--format", "json", *extra)
    return done, out, tmp_path / "catalog.yaml"


def test_sensor_sample_drafts_a_contract_and_catalog_that_pass_their_sample(tmp_path):
    done, out, catalog = init(tmp_path, SENSOR / "data" / "good.csv")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["key"] == ["series_id", "event_ts"]
    contract = load_contract(out)
    assert contract.fields["event_ts"].type.text == "timestamp_ms_utc" and contract.time.precision == "ms"
    value = contract.fields["value"]
    assert value.type.text == "decimal(9,4)" and value.nullable is True  # 8.4345: 4 places; one null
    assert "4 fraction digits" in value.note and "1 null" in value.note
    # intervals differ per series: 10 s for two, 60 s for the flow meter, in the catalog
    assert contract.time.cadence is not None and contract.time.cadence.source == "catalog"
    cadences = {k: v.cadence.text for k, v in load_catalog(catalog).series.items()}
    assert cadences == {"F-310.inlet_flow": "1m", "P-101.discharge_pressure": "10s", "T-204.bearing_temp": "10s"}
    # provenance columns and calibrations (the id in force from its first point) come from the sample
    assert list(contract.provenance_required) == [
        "source_id",
        "ingest_run_id",
        "transform_version",
        "revision",
        "calibration_id",
    ]
    calibrations = load_catalog(catalog).series["P-101.discharge_pressure"].calibrations
    assert [(c.id, c.valid_to is not None) for c in calibrations] == [
        ("CAL-P101-2026A", True),
        ("CAL-P101-2026B", False),
    ]
    lint = run_cli("lint", out, "--catalog", catalog, "--format", "json")
    assert lint.returncode in (0, 1) and not [
        f for f in json.loads(lint.stdout)["findings"] if f["severity"] == "error"
    ]
    checked = run_cli("validate", out, SENSOR / "data" / "good.csv", "--catalog", catalog, "--now", NOW)
    assert checked.returncode == 0, checked.stdout


def test_bars_sample_finds_the_revision_in_the_key_and_a_one_minute_cadence(tmp_path):
    done, out, catalog = init(tmp_path, OHLCV / "data" / "good.csv")
    assert done.returncode == 0, done.stderr
    contract = load_contract(out)
    assert list(contract.key) == ["symbol", "bar_start", "revision"]  # a restated bar repeats (symbol, bar_start)
    assert contract.fields["volume"].type.text == "decimal(11,4)" and contract.fields["adjusted"].type.text == "bool"
    assert contract.fields["trade_count"].nullable is True and contract.time.cadence.interval.seconds == 60
    assert not catalog.exists()  # one interval for every series: nothing per series
    checked = run_cli("validate", out, OHLCV / "data" / "good.csv", "--now", NOW)
    assert checked.returncode == 0, checked.stdout
    # the draft is strict: the known-bad file fails it
    assert run_cli("validate", out, OHLCV / "data" / "bad.csv", "--now", NOW).returncode == 1


def test_parquet_types_units_from_suffixes_and_bounds(tmp_path):
    minutes = [f"2026-03-29T00:{m:02d}:00Z" for m in range(0, 30, 5)]
    table = pa.table(
        {
            "sensor": pa.array(["boiler-1"] * 6 + ["boiler-2"] * 6),
            "ts": pa.array([*minutes, *minutes], pa.string()).cast(pa.timestamp("ms", tz="UTC")),
            "pressure_kpa": pa.array([101.3, 101.5, 101.2, 101.8, 101.1, 101.4] * 2, pa.float64()),
        }
    )
    path = tmp_path / "boilers.parquet"
    pq.write_table(table, path)
    draft = infer([path], name="boilers")
    by_name = {c.name: c for c in draft.columns}
    assert by_name["pressure_kpa"].type == "float64" and by_name["pressure_kpa"].unit == "kPa"
    assert by_name["ts"].type == "timestamp_s_utc"  # whole seconds: the coarsest precision that holds them
    assert draft.key == ["sensor", "ts"] and draft.cadence == "5m"
    assert draft.catalog["boiler-1"]["hard_bounds"] == ["100.4", "102.5"]  # [101.1, 101.8] widened by 0.7
    out = tmp_path / "boilers.yaml"
    assert run_cli("init", path, "-o", out).returncode == 0
    assert run_cli("validate", out, path, "--catalog", tmp_path / "catalog.yaml", "--now", NOW).returncode == 0


def test_refusals_are_one_line(tmp_path):
    naive = tmp_path / "naive.csv"
    naive.write_text("sensor,ts,value\nA,2026-03-29 01:00:00,1.5\nA,2026-03-29 01:05:00,1.6\n")
    with pytest.raises(InputError, match="without a UTC offset"):
        infer([naive], name="x")
    two = tmp_path / "two.csv"
    two.write_text("sensor,ts,seen,value\nA,2026-03-29T01:00:00Z,2026-03-29T01:00:03Z,1.5\n")
    with pytest.raises(InputError, match=r"--time-column.*ts, seen"):
        infer([two], name="x")
    assert infer([two], name="x", time_column="ts").time_column == "ts"
    first, out, _ = init(tmp_path, OHLCV / "data" / "good.csv")
    assert first.returncode == 0
    again = run_cli("init", OHLCV / "data" / "good.csv", "-o", out)
    assert again.returncode == 2 and "exists; --force" in again.stderr and len(again.stderr.splitlines()) == 1
