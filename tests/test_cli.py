"""CLI conventions shared by every command."""

from __future__ import annotations

import json

from tests.conftest import EXAMPLES, SENSOR_CONTRACT, run_cli


def test_show_json_has_every_section():
    result = run_cli("show", SENSOR_CONTRACT, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["contract"] == "plant_sensor_reading" and data["key"] == ["series_id", "event_ts", "revision"]
    assert data["fields"]["value"]["type"] == {
        "text": "decimal(12,4)",
        "kind": "decimal",
        "precision": 12,
        "scale": 4,
    }
    assert data["fields"]["quality"]["type"]["members"] == ["good", "suspect", "bad"]
    assert data["fields"]["revision"]["implied_by"] == "provenance_required"
    assert data["fields"]["unit"]["constraint"]["sql"] == "unit = catalog.unit"
    assert [i["kind"] for i in data["invariants"]] == ["null_only_when", "catalog_bound", "catalog_equals"]
    assert data["time"]["cadence"]["tolerance_ratio"] == "0.1"
    assert data["series_column"] == "series_id"


def test_show_text_and_version():
    text = run_cli("show", EXAMPLES / "ohlcv_1m" / "contract.yaml")
    assert text.returncode == 0
    assert "decimal(18,8)" in text.stdout and "low <= open AND open <= high" in text.stdout
    version = run_cli("version", "--format", "json")
    assert json.loads(version.stdout)["tscontract"]


def test_unreadable_catalog_exits_2_with_json_error(tmp_path):
    bad = tmp_path / "catalog.yaml"
    bad.write_text("catalog: x\nseries:\n  S1: {unit: barz}\n")
    result = run_cli("lint", SENSOR_CONTRACT, "--catalog", bad, "--format", "json")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert error["line"] == 3 and error["section"] == "series.S1.unit" and "barz" in error["message"]
