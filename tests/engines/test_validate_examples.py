"""Every clause of both seed contracts, exercised by the example data: good passes, bad fails.

The expected failures are the ones examples/README.md documents for each bad file.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tscontract import validate


def failures(report):
    return {c.id: c for c in report.checks if c.status != "passed"}


@pytest.mark.parametrize("dataset", [OHLCV, SENSOR], ids=["ohlcv", "sensor"])
def test_good_data_passes_every_check(dataset):
    report = validate(
        dataset / "contract.yaml", dataset / "data" / "good.csv", catalog=dataset / "catalog.yaml", now=NOW
    )
    assert report.passed, [(c.id, c.message, c.examples) for c in report.failed]
    assert not report.failed
    assert report.rows > 60 and report.engine == "duckdb"


def test_ohlcv_bad_file_each_violation_caught_once():
    report = validate(OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv", catalog=OHLCV / "catalog.yaml", now=NOW)
    failed = failures(report)
    expected = {
        "invariants[0]": ("AAPL", "2026-11-30T14:31:00Z", 1),
        "invariants[1]": ("AAPL", "2026-11-30T14:32:00Z", 1),
        "invariants[2]": ("AAPL", "2026-11-30T14:33:00Z", 1),
        "invariants[3]": ("AAPL", "2026-11-30T14:34:00Z", 1),
        "field.adjusted.value": ("AAPL", "2026-11-30T14:35:00Z", 1),
        "field.open.type": ("AAPL", "2026-11-30T14:37:00Z", 1),
        "time.timezone": ("AAPL", "2026-11-30T14:45:00.000", 1),
        "field.close.nullable": ("MSFT", "2026-11-30T14:32:00Z", 1),
        "provenance.source_id": ("MSFT", "2026-11-30T14:33:00Z", 1),
        "time.precision": ("MSFT", "2026-11-30T14:45:00.000123Z", 1),
    }
    for check_id, (symbol, bar_start, count) in expected.items():
        check = failed.pop(check_id)
        assert check.failed_rows == count, check_id
        assert (check.examples[0]["symbol"], check.examples[0]["bar_start"]) == (symbol, bar_start), check_id
    # each bad row is reported by one check only (229.780000001 breaks its type, so no invariant judges it)
    assert len({c.id for c in report.checks}) == len(report.checks)
    flagged = [e["row"] for c in report.failed for e in c.examples if "row" in e]
    assert sorted(flagged) == [2, 3, 4, 5, 6, 8, 16, 19, 20, 32]
    key = failed.pop("key.unique")
    assert key.failed_rows == 2
    assert key.examples == [
        {"rows": [23, 24], "symbol": "MSFT", "bar_start": "2026-11-30T14:36:00Z", "revision": 0, "count": 2}
    ]
    cadence = failed.pop("time.cadence")
    # MSFT 14:40 is missing; the naive (AAPL) and sub-millisecond (MSFT) 14:45 bars cannot be placed
    # in time, so their minutes are holes too
    assert cadence.failed_rows == 3
    assert cadence.examples[0] == {
        "symbol": "AAPL",
        "bar_start": "2026-11-30T14:46:00Z",
        "previous": "2026-11-30T14:44:00Z",
        "gap_s": 120.0,
        "expected_s": 60.0,
    }
    assert [(e["symbol"], e["bar_start"]) for e in cadence.examples[1:]] == [
        ("MSFT", "2026-11-30T14:41:00Z"),
        ("MSFT", "2026-11-30T14:46:00Z"),
    ]
    session = failed.pop("time.session")
    assert session.failed_rows == 1 and session.examples[0]["bar_start"] == "2026-11-30T21:30:00Z"
    assert failed == {}  # nothing else fails: every violation is reported by exactly its clause
    assert report.check("field.open.type").examples[0]["reason"] == "more than 8 decimal places"
    assert report.check("invariants[0]").clause == "low <= open <= high"
    assert report.check("invariants[0]").examples[0]["row"] == 2  # data row 2 = file line 3


def test_sensor_bad_file_each_violation_caught_once():
    report = validate(SENSOR / "contract.yaml", SENSOR / "data" / "bad.csv", catalog=SENSOR / "catalog.yaml", now=NOW)
    failed = failures(report)
    expected = {
        "invariants[0]": "T-204.bearing_temp",
        "invariants[1]": "F-310.inlet_flow",
        "field.quality.type": "T-204.bearing_temp",
        "invariants[2]": "T-204.bearing_temp",
        "field.unit.constraint": "T-204.bearing_temp",
        "catalog.calibration": "P-101.discharge_pressure",
        "provenance.calibration_id": "P-101.discharge_pressure",
        "time.timezone": "T-204.bearing_temp",
        "catalog.series": "P-102.discharge_pressure",
        "field.value.type": "F-310.inlet_flow",
    }
    for check_id, series in expected.items():
        check = failed.pop(check_id)
        assert check.failed_rows == 1 and check.examples[0]["series_id"] == series, check_id
    assert failed.pop("key.unique").failed_rows == 2
    cadence = failed.pop("time.cadence")
    assert cadence.examples[0]["gap_s"] == 14.0 and cadence.examples[0]["expected_s"] == 10.0
    assert failed == {}
    assert report.check("catalog.calibration").examples[0]["calibration_id"] == "CAL-P101-2026A"
    assert report.check("invariants[2]").clause == "unit equals catalog unit for series_id"


def test_kpa_incident_is_caught_by_the_unit_clause_and_hard_bounds():
    report = validate(
        SENSOR / "contract.yaml", SENSOR / "data" / "bad_kpa.csv", catalog=SENSOR / "catalog.yaml", now=NOW
    )
    failed = failures(report)
    assert set(failed) == {"invariants[1]", "invariants[2]", "field.unit.constraint"}
    assert failed["invariants[2]"].failed_rows == 36
    assert failed["invariants[2]"].examples[0]["unit"] == "kPa"
    assert failed["invariants[1]"].failed_rows == 36


def test_catalog_clauses_report_error_without_catalog():
    report = validate(SENSOR / "contract.yaml", SENSOR / "data" / "good.csv", now=NOW)
    assert report.check("invariants[1]").status == "error"
    assert "needs the series catalog" in report.check("invariants[1]").message
    assert report.check("time.cadence").status == "error"
    assert not report.passed


def test_cli_validate_exit_codes_and_json_shape():
    good = run_cli(
        "validate",
        SENSOR / "contract.yaml",
        SENSOR / "data" / "good.csv",
        "--catalog",
        SENSOR / "catalog.yaml",
        "--now",
        "2026-11-30T12:30:00Z",
        "--format",
        "json",
    )
    assert good.returncode == 0, good.stderr
    data = json.loads(good.stdout)
    assert set(data) == {"contract", "version", "passed", "rows", "engine", "elapsed_s", "data", "checks"}
    assert set(data["checks"][0]) >= {"id", "kind", "clause", "status", "failed_rows", "examples"}
    bad = run_cli(
        "validate",
        OHLCV / "contract.yaml",
        OHLCV / "data" / "bad.csv",
        "--catalog",
        OHLCV / "catalog.yaml",
        "--examples",
        "1",
    )
    assert bad.returncode == 1
    assert "low <= open <= high" in bad.stdout and "more than 8 decimal places" in bad.stdout
    missing = run_cli("validate", OHLCV / "contract.yaml", OHLCV / "data" / "nope.csv")
    assert missing.returncode == 2 and missing.stderr.startswith("error: data file not found")
    badnow = run_cli("validate", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "--now", "yesterday")
    assert badnow.returncode == 2 and "--now" in badnow.stderr


def test_row_and_key_examples_show_values_in_the_contract_type(tmp_path):
    # the VIX shape: a bar whose close is above its high, and a repeated key; revision is an integer
    # in both kinds of examples, prices are exact decimal text at the contract's scale
    header = (OHLCV / "data" / "good.csv").read_text().splitlines()[0]
    row = "AAPL,2026-11-30T14:30:00Z,230.00,230.10,229.90,231.5,1000.0000,10,false,vendor,run,1.0.0,0"
    assert header.split(",")[0] == "symbol" and len(header.split(",")) == len(row.split(","))
    path = tmp_path / "bars.csv"
    path.write_text("\n".join([header, row, row]) + "\n")
    report = validate(OHLCV / "contract.yaml", path, catalog=OHLCV / "catalog.yaml", now=NOW)
    invariant = next(c for c in report.failed if c.kind == "invariant" and "close" in c.clause)
    key = report.check("key.unique")
    assert invariant.examples[0]["revision"] == 0 and key.examples[0]["revision"] == 0
    assert invariant.examples[0]["close"] == "231.50000000"
    assert invariant.examples[0]["bar_start"] == key.examples[0]["bar_start"] == "2026-11-30T14:30:00Z"
    text = run_cli("validate", OHLCV / "contract.yaml", path, "--catalog", OHLCV / "catalog.yaml", "--format", "json")
    shown = {c["id"]: c for c in json.loads(text.stdout)["checks"]}
    assert shown[invariant.id]["examples"][0]["revision"] == 0
