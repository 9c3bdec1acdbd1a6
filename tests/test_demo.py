"""`make demo`: installs the core only, prints little, announces and asserts each expected failure."""

from __future__ import annotations

import subprocess

from tests.conftest import ROOT


def make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True)


def test_demo_installs_the_core_and_calendars_only(tmp_path):
    plan = make("-n", "demo", f"VENV={tmp_path / 'venv'}").stdout
    installs = [line for line in plan.splitlines() if "pip install" in line and "-e" in line]
    assert installs == [f"{tmp_path / 'venv'}/bin/python -m pip install -q -e '.[calendars]'"]
    test_plan = make("-n", "test", f"VENV={tmp_path / 'venv'}").stdout
    assert f"{tmp_path / 'venv'}/bin/python -m pip install -q -e '.[dev]'" in test_plan.splitlines()


def test_demo_is_short_and_expected_failures_are_asserted(tmp_path):
    result = make("demo", f"OUT={tmp_path}")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) < 120, len(lines)
    assert "Error" not in result.stdout + result.stderr and "ignored" not in result.stdout + result.stderr
    expected = [i for i, line in enumerate(lines) if line.startswith("# expected: exit 1")]
    assert len(expected) == 4
    for i in expected:  # the announced command runs next and reports a failure
        assert lines[i + 1].startswith(".venv/bin/tscontract "), lines[i + 1]
    assert sum(line.endswith("checks passed") for line in lines) == 3  # two good files, the published store
    assert (tmp_path / "warehouse.duckdb").is_file() and (tmp_path / "ohlcv_bounds.yaml").is_file()


def test_demo_fails_when_a_bad_file_unexpectedly_passes():
    # the expect-1 wrapper, given a command that exits 0, stops the demo with a clear message
    probe = subprocess.run(
        ["make", "--no-print-directory", "-f", "Makefile", "-f", "-", "probe"],
        cwd=ROOT,
        input="probe:\n\t$(call expect1,true)\n",
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0
    assert "demo: expected exit 1, got 0" in probe.stderr
    passes = subprocess.run(
        ["make", "--no-print-directory", "-f", "Makefile", "-f", "-", "probe"],
        cwd=ROOT,
        input="probe:\n\t$(call expect1,false)\n",
        capture_output=True,
        text=True,
    )
    assert passes.returncode == 0, passes.stderr
