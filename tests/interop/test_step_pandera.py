"""The step clause (issue 25 item 3) exported to pandera (a frame-wide check, series by series) and run in
the pandera venv: the failing rows are the rows ``tscontract validate`` names, for both rules, in
pandera's pandas and polars backends."""

from __future__ import annotations

import pytest

from tests.conftest import write
from tests.engines.test_step import CONTRACT, readings
from tests.interop._tools import run_in_venv
from tests.interop.test_pandera import SCRIPT
from tscontract import load_contract, validate
from tscontract.interop.exports import pandera as pandera_export
from tscontract.plan.checks import build_plan

CASES = {
    "abs": "{max_abs: 10}",
    "gap": "{max_abs: 5, max_gap: 2h}",
    "mad": "{max_mad: 6, window: 5}",
    "madgap": "{max_mad: 6, window: 5, max_gap: 2h}",
    "loose": "{max_abs: 50}",
}


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_pandera_step_check_fails_the_rows_validate_names(tmp_path, backend):
    plain = readings(tmp_path)
    fixed = readings(tmp_path, ["KJFK,2026-07-01T03:00:00+00:00,1,55.6"], "fixed.csv")
    jobs, expected = [], {}
    for name, step in CASES.items():
        path = write(tmp_path, CONTRACT.replace("STEP", step), f"{name}.yaml")
        contract = load_contract(path)
        result = pandera_export.export(build_plan(contract))
        assert "field.temp_f.step" in result.exported
        (module,) = result.write(tmp_path / name)
        types = {n: spec.type.to_json() for n, spec in contract.fields.items()}
        jobs.append(
            {
                "contract": name,
                "module": str(module),
                "module_name": f"step_{name}",
                "types": types,
                "files": {"plain": str(plain), "fixed": str(fixed)},
            }
        )
        for label, data in (("plain", plain), ("fixed", fixed)):
            check = validate(path, data, examples=100).check("field.temp_f.step")
            expected[name, label] = sorted(e["row"] for e in check.examples)
    assert expected["mad", "plain"] == [4, 17] and expected["loose", "plain"] == []
    tool = run_in_venv("pandera", SCRIPT, {"jobs": jobs, "backend": backend})
    for (name, label), rows in expected.items():
        failed = tool["contracts"][name]["files"][label]["failed"]
        found = failed.get("field.temp_f.step", {"rows": []})["rows"]
        assert found == rows, (name, label, found, rows)
        assert set(failed) <= {"field.temp_f.step"}, (name, label, failed)
