"""validate --format junit / github / --quiet: CI sees each failed clause; people see one line when all pass."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from tests.conftest import run_cli
from tests.engines.conftest import NOW, OHLCV, SENSOR

CONTRACT = OHLCV / "contract.yaml"


def run_validate(data: str, *extra: str):
    return run_cli(
        "validate", CONTRACT, OHLCV / "data" / data, "--catalog", OHLCV / "catalog.yaml", "--now", NOW, *extra
    )


def contract_line(text: str) -> int:
    """The 1-based line of the contract file that starts with ``text`` (after indentation)."""
    lines = CONTRACT.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(text))


def test_junit_has_one_testcase_per_check_and_a_failure_per_failed_check():
    report = json.loads(run_validate("bad.csv", "--format", "json").stdout)
    result = run_validate("bad.csv", "--format", "junit", "--examples", "2")
    assert result.returncode == 1, result.stderr
    root = ET.fromstring(result.stdout)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "ohlcv_1m 3.1.0"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [c["id"] for c in report["checks"]]
    failed = {c["id"]: c for c in report["checks"] if c["status"] == "failed"}
    failures = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert set(failures) == set(failed) and len(failed) == 13
    assert suite.get("tests") == root.get("tests") == "38"
    assert suite.get("failures") == root.get("failures") == "13" and suite.get("errors") == "0"
    unique = failures["key.unique"]
    assert unique.get("message") == "2 row(s) fail [key: [symbol, bar_start, revision]]: 1 key(s) appear more than once"
    assert unique.get("type") == "unique_key"
    open_type = failures["field.open.type"]
    assert "row=8" in (open_type.text or "") and "reason=more than 8 decimal places" in (open_type.text or "")
    by_name = {c.get("name"): c for c in cases}
    assert by_name["invariants[2]"].get("line") == str(contract_line("- volume >= 0"))
    assert by_name["field.open.type"].get("line") == str(contract_line("open:"))
    assert all(c.get("file") == "examples/ohlcv_1m/contract.yaml" for c in cases)
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["rows"] == "781" and properties["data"].endswith("bad.csv")


def test_junit_of_a_passing_batch_has_no_failures():
    result = run_validate("good.csv", "--format", "junit")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    assert root.get("failures") == "0" and root.get("errors") == "0" and root.get("tests") == "38"
    assert not list(root.iter("failure")) and not list(root.iter("error"))


def test_github_annotations_point_at_the_clause_line():
    result = run_validate("bad.csv", "--format", "github", "--examples", "1")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    annotations = [line for line in lines if line.startswith("::error ")]
    assert len(annotations) == 13
    volume = next(a for a in annotations if "title=invariants[2]" in a)
    assert volume == (
        f"::error file=examples/ohlcv_1m/contract.yaml,line={contract_line('- volume >= 0')},title=invariants[2]::"
        "1 row(s) fail [volume >= 0]%0Arow=4, symbol=AAPL, bar_start=2026-11-30T14:33:00Z, revision=0, "
        "volume=-39270.0000"
    )
    assert lines[-1] == "ohlcv_1m 3.1.0: 781 rows from examples/ohlcv_1m/data/bad.csv: 13 of 38 checks failed — failed"
    passing = run_validate("good.csv", "--format", "github")
    assert passing.returncode == 0 and not any(line.startswith("::") for line in passing.stdout.splitlines())


def test_github_warnings_for_warning_severity_checks(tmp_path):
    def sensor(fmt: str):
        contract, data, catalog = SENSOR / "contract.yaml", SENSOR / "data" / "bad_kpa.csv", SENSOR / "catalog.yaml"
        return run_cli("validate", contract, data, "--catalog", catalog, "--now", NOW, "--format", fmt)

    bad = sensor("github")
    report = json.loads(sensor("json").stdout)
    expected = {
        ("error" if c["severity"] == "error" else "warning", c["id"])
        for c in report["checks"]
        if c["status"] != "passed"
    }
    got = {
        (line[2:].split(" ", 1)[0], line.split("title=", 1)[1].split("::", 1)[0])
        for line in bad.stdout.splitlines()
        if line.startswith("::")
    }
    assert got == expected and expected


def test_quiet_is_one_line_when_all_pass_and_only_failures_otherwise():
    good = run_validate("good.csv", "--quiet")
    assert good.returncode == 0
    assert good.stdout.splitlines() == [
        "validate ohlcv_1m 3.1.0 — 781 rows from examples/ohlcv_1m/data/good.csv: 38 checks passed"
    ]
    bad = run_validate("bad.csv", "-q", "--examples", "1")
    assert bad.returncode == 1
    lines = bad.stdout.splitlines()
    heads = [line for line in lines if not line.startswith("  - ")]
    assert len(heads) == 14 and len(lines) == 14 + 13  # a line per failed check, its one example, the verdict
    assert "failed invariants[2] [volume >= 0] 1 row(s)" in heads
    assert heads[-1].endswith("13 of 38 checks failed — failed")
    assert "passed" not in "\n".join(heads[:-1])  # passing checks are not listed
