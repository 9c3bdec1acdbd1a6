"""diff: a version going down is flagged, forbidden changes read once, two different contracts are refused."""

from __future__ import annotations

import json

from tests.conftest import OHLCV_CONTRACT, SENSOR_CONTRACT, run_cli, write
from tscontract import parse_contract
from tscontract.evolution.diff import diff

BASE = OHLCV_CONTRACT.read_text()
VOLUME = "  volume:   {type: decimal(24,4), unit: base_units_per_venue_contract, nullable: false}"


def test_a_version_going_down_is_flagged_even_without_changes(tmp_path):
    down = write(tmp_path, BASE.replace("version: 3.1.0", "version: 3.0.0"), "down.yaml")
    result = run_cli("diff", OHLCV_CONTRACT, down)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "ohlcv_1m 3.1.0 -> 3.0.0: declared version goes down, required none — NOT OK"
    assert lines[1] == "  problem: version goes down: 3.1.0 -> 3.0.0; a new version must be higher than the old one"
    assert "none bump" not in result.stdout
    data = json.loads(run_cli("diff", OHLCV_CONTRACT, down, "--format", "json").stdout)
    assert data["version_down"] is True and data["ok"] is False
    assert (
        json.loads(run_cli("diff", OHLCV_CONTRACT, OHLCV_CONTRACT, "--format", "json").stdout)["version_down"] is False
    )


def test_an_unchanged_version_with_changes_says_so():
    new_text = BASE.replace("- volume >= 0", "- volume >= 0\n  - trade_count >= 0")
    report = diff(parse_contract(BASE, "a.yaml"), parse_contract(new_text, "b.yaml"))
    assert report.problems == ["version 3.1.0 is unchanged; the changes need a major bump"]


def test_a_forbidden_change_names_the_rule_once():
    text = BASE.replace(VOLUME, VOLUME.replace("decimal(24,4)", "decimal(24,2)")).replace(
        "version: 3.1.0", "version: 4.0.0"
    )
    assert VOLUME in BASE
    report = diff(parse_contract(BASE, "a.yaml"), parse_contract(text, "b.yaml"))
    assert report.problems == [
        "fields.volume.type: change scale 'decimal(24,4)' -> 'decimal(24,2)' is never allowed on the same field: "
        "a new field"
    ]
    assert all(p.count("never") == 1 for p in report.problems)


def test_two_different_contracts_are_refused():
    result = run_cli("diff", OHLCV_CONTRACT, SENSOR_CONTRACT)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: ohlcv_1m 3.1.0 and plant_sensor_reading 2.0.0 are different contracts: diff compares two "
        "versions of one contract (a contract under a new name is a new dataset)"
    )
    assert result.stdout == ""
