"""The step clause (issue 25 item 3) exported to SodaCL (a failed rows check with tscontract's own query)
and scanned by soda-core on DuckDB: it fails exactly where ``tscontract validate`` fails, for both rules."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.conftest import write
from tests.engines.test_step import CONTRACT, readings
from tests.interop.test_soda import checks_yaml, load_sql, run_soda
from tscontract import load_contract, validate
from tscontract.interop.exports import export

CASES = {
    "abs": "{max_abs: 10}",
    "madgap": "{max_mad: 6, window: 5, max_gap: 2h}",
    "loose": "{max_abs: 50}",
    "fixed": "{max_mad: 6, window: 5, max_gap: 2h}",  # with the revision that corrects the spike
}


def test_soda_step_check_fails_where_validate_fails(tmp_path):
    plain = readings(tmp_path)
    fixed = readings(tmp_path, ["KJFK,2026-07-01T03:00:00+00:00,1,55.6"], "fixed.csv")
    jobs, expected = [], {}
    for name, step in CASES.items():
        path = write(tmp_path, CONTRACT.replace("STEP", step), f"{name}.yaml")
        contract = load_contract(path)
        result = export("soda", contract)
        assert "field.temp_f.step" in result.exported
        data = fixed if name == "fixed" else plain
        load = load_sql(contract, contract.contract, data)
        jobs.append({"name": name, "load": load, "checks": checks_yaml(result), "now": datetime.now(UTC).isoformat()})
        expected[name] = validate(path, data).check("field.temp_f.step").status
    assert expected == {"abs": "failed", "madgap": "failed", "loose": "passed", "fixed": "passed"}
    scans = run_soda(jobs, tmp_path)
    for name, status in expected.items():
        assert scans[name]["errors"] is None, scans[name]["errors"]
        (check,) = [c for c in scans[name]["checks"] if c["name"].startswith("step: ")]
        assert check["outcome"] == ("fail" if status == "failed" else "pass"), (name, check)
