"""The step clause (issue 25 item 3) exported to dbt and run by dbt-duckdb: the test fails on the same
number of points as ``tscontract validate``, for both rules, and passes where validate passes."""

from __future__ import annotations

import re

from tests.conftest import write
from tests.engines.test_step import CONTRACT, readings
from tests.interop.test_dbt import make_project, run_dbt
from tscontract import load_contract, validate
from tscontract.interop.exports import export

CASES = {
    "abs": ("{max_abs: 10}", 2),
    "gap": ("{max_abs: 5, max_gap: 2h}", 2),
    "mad": ("{max_mad: 6, window: 5}", 2),
    "madgap": ("{max_mad: 6, window: 5, max_gap: 2h}", 1),
    "loose": ("{max_abs: 50}", 0),
}


def test_dbt_step_test_fails_the_points_validate_fails(tmp_path):
    data = readings(tmp_path)
    jobs, expected = [], {}
    for name, (step, failing) in CASES.items():
        path = write(tmp_path, CONTRACT.replace("STEP", step), f"{name}.yaml")
        contract = load_contract(path)
        result = export("dbt", contract)
        assert "field.temp_f.step" in result.exported
        make_project(tmp_path / name, contract, result, data)
        jobs.append({"name": name, "dir": str(tmp_path / name), "args": []})
        report = validate(path, data)
        assert report.check("field.temp_f.step").failed_rows == failing
        expected[name] = failing
    runs = run_dbt(jobs, tmp_path)
    for name, failing in expected.items():
        (node,) = [n for n in runs[name]["nodes"] if n["meta"].get("tscontract_check") == "field.temp_f.step"]
        if failing:
            assert node["status"] == "fail", (name, node)
            assert re.search(rf"\bGot {failing} results?\b", node["message"]), (name, node["message"])
        else:
            assert node["status"] == "pass", (name, node)
