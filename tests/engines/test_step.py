"""``fields.<name>.step`` (issue 25 item 3): a Celsius reading in a Fahrenheit column, found and named.

The data is shaped like hourly airport observations (METAR): two stations, air temperature in °F,
one reading of 13.1 between neighbours of 57 (a value typed in °C), a missing reading (null) and a
three-hour outage. 13.1 is inside every physical range, so only a step against its neighbours finds it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import write
from tscontract import validate
from tscontract.contract.loader import parse_contract
from tscontract.errors import ContractError, InputError

CONTRACT = """\
contract: airport_temperature
version: 1.0.0
key: [station, observed_at, revision]
time:
  column: observed_at
  timezone: UTC instant
  cadence: irregular
fields:
  station: {type: string, nullable: false}
  observed_at: {type: timestamp_us_utc, nullable: false}
  revision: {type: int32, nullable: false}
  temp_f:
    type: float64
    unit: degF
    constraint: between -80 and 130
    step: STEP
"""
START = datetime(2026, 7, 1, tzinfo=UTC)
KJFK = [57.0, 57.2, 56.8, 13.1, 57.4, None, 57.9, 58.1, 58.0, 57.6, 57.2]  # row 4 is °C
KORD = [61.0, 61.4, 61.9, 62.2, 62.0, 70.9, 71.2]  # after a 3 h outage: a front came through


def readings(tmp_path: Path, extra: list[str] | None = None, name: str = "obs.csv") -> Path:
    lines = ["station,observed_at,revision,temp_f"]
    for i, v in enumerate(KJFK):
        lines.append(f"KJFK,{(START + timedelta(hours=i)).isoformat()},0,{'' if v is None else v}")
    for i, v in enumerate(KORD):
        hour = i if i < 5 else i + 3  # 05:00..07:00 missing
        lines.append(f"KORD,{(START + timedelta(hours=hour)).isoformat()},0,{v}")
    path = tmp_path / name
    path.write_text("\n".join([*lines, *(extra or [])]) + "\n")
    return path


def contract(tmp_path: Path, step: str) -> Path:
    return write(tmp_path, CONTRACT.replace("STEP", step), "temp.yaml")


def step_result(tmp_path: Path, step: str, data: Path) -> dict:
    report = validate(contract(tmp_path, step), data).to_json()
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["field.temp_f.constraint"]["status"] == "passed"  # 13.1 °F is a possible temperature
    return checks["field.temp_f.step"]


def test_max_abs_names_the_jump_away_and_the_jump_back(tmp_path):
    found = step_result(tmp_path, "{max_abs: 10}", readings(tmp_path))
    assert found["status"] == "failed" and found["failed_rows"] == 2
    rows = [(e["row"], e["temp_f"], e["previous"]) for e in found["examples"]]
    # KJFK 13.1 after 56.8, 57.4 back after 13.1; KORD's front (+8.9 across the outage) is not over 10
    assert rows == [(4, 13.1, 56.8), (5, 57.4, 13.1)]
    assert found["examples"][0]["previous_row"] == 3
    assert found["examples"][0]["station"] == "KJFK"


def test_a_null_neither_fails_nor_breaks_the_chain(tmp_path):
    found = step_result(tmp_path, "{max_abs: 0.45}", readings(tmp_path))
    by_row = {e["row"]: e for e in found["examples"]}
    assert 6 not in by_row  # the null itself
    assert by_row[7]["previous"] == 57.4  # 57.9 is compared with 57.4, the point before the null


def test_max_gap_leaves_steps_across_an_outage_unjudged(tmp_path):
    without = step_result(tmp_path, "{max_abs: 5}", readings(tmp_path))
    assert 17 in {e["row"] for e in without["examples"]}  # KORD 62.0 -> 70.9 across 4 h
    with_gap = step_result(tmp_path, "{max_abs: 5, max_gap: 2h}", readings(tmp_path))
    assert 17 not in {e["row"] for e in with_gap["examples"]}
    assert with_gap["failed_rows"] == 2


def test_max_mad_names_the_spike_not_its_way_back(tmp_path):
    found = step_result(tmp_path, "{max_mad: 6, window: 5}", readings(tmp_path))
    spike, front = found["examples"]
    assert (spike["row"], spike["temp_f"], spike["neighbours"]) == (4, 13.1, 4)
    assert spike["median"] == pytest.approx(57.3)  # 56.8, 57.2 | 57.4, 57.9: the null is skipped
    assert spike["mad"] == pytest.approx(0.3)
    # the first point after KORD's outage sits 8.7 above its neighbours before the outage
    assert (front["row"], front["station"], front["median"]) == (17, "KORD", pytest.approx(62.2))
    found = step_result(tmp_path, "{max_mad: 6, window: 5, max_gap: 2h}", readings(tmp_path))
    assert [e["row"] for e in found["examples"]] == [4]  # KORD's 70.9 keeps one neighbour: not judged
    assert found["examples"][0]["neighbours"] == 3  # 57.9 is 3 h after the spike


def test_a_flat_series_does_not_fail_on_tiny_noise(tmp_path):
    flat = [f"KBOS,{(START + timedelta(hours=i)).isoformat()},0,{50.1 if i == 4 else 50.0}" for i in range(9)]
    found = step_result(tmp_path, "{max_mad: 6, window: 5}", readings(tmp_path, flat))
    assert "KBOS" not in {e["station"] for e in found["examples"]}  # MAD 0, floor 1% of 50: 0.1 is noise
    jump = [line.replace(",50.1", ",53.5") for line in flat]
    found = step_result(tmp_path, "{max_mad: 6, window: 5}", readings(tmp_path, jump))
    assert "KBOS" in {e["station"] for e in found["examples"]}  # 3.5 > 6 * 0.5
    found = step_result(tmp_path, "{max_mad: 6, window: 5, min_mad: 1}", readings(tmp_path, jump))
    assert "KBOS" not in {e["station"] for e in found["examples"]}  # 3.5 <= 6 * 1: min_mad raises the floor


def test_only_the_latest_revision_counts(tmp_path):
    fixed = [f"KJFK,{(START + timedelta(hours=3)).isoformat()},1,55.6"]  # 13.1 °C restated as 55.6 °F
    for step in ("{max_abs: 10}", "{max_mad: 6, window: 5, max_gap: 2h}"):
        found = step_result(tmp_path, step, readings(tmp_path, fixed))
        assert found["status"] == "passed", step


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ("{max_abs: 10, max_mad: 6, window: 5}", "exactly one of max_abs"),
        ("{max_mad: 6}", "odd window"),
        ("{max_mad: 6, window: 4}", "odd window"),
        ("{max_abs: 0}", "above 0"),
        ("{max_abs: 10, window: 5}", "belong to max_mad"),
        ("{max_abs: 10, max_gap: 2 trading days}", "fixed duration"),
        ("{max_abs: 10, within: 5}", "within"),
    ],
)
def test_a_step_written_wrong_is_refused_with_its_reason(step, says):
    with pytest.raises(ContractError, match=says):
        parse_contract(CONTRACT.replace("STEP", step))


def test_a_step_on_text_is_refused_by_name(tmp_path):
    text = CONTRACT.replace("STEP", "{max_abs: 1}").replace("station: {type: string", "station: {type: string")
    text = (
        text.replace("temp_f:\n    type: float64", "temp_f:\n    type: string")
        .replace("    constraint: between -80 and 130\n", "")
        .replace("    unit: degF\n", "")
    )
    with pytest.raises(InputError, match=r"fields\.temp_f\.step: temp_f is string, not a number"):
        validate(write(tmp_path, text, "t.yaml"), readings(tmp_path))
