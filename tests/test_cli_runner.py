"""run_cli's fork server (tests/cli_runner.py) against a fresh `python -m tscontract`: the same exit
codes, output and tracebacks; the caller's environment and working directory; nothing kept between calls."""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from tests.cli_runner import run_forked, run_fresh
from tests.cli_zygote import _exit_code
from tests.conftest import EXAMPLES, SENSOR_CONTRACT

OHLCV = EXAMPLES / "ohlcv_1m"


def _timeless(text: str) -> str:
    """``text`` without the run's elapsed seconds (the one part two runs may differ in)."""
    return re.sub(r"\b\d+\.\d+s\b|\"elapsed_s\": [0-9.e-]+", "<elapsed>", text)


def _same(args: tuple[str | Path, ...], cwd: Path | None = None) -> int:
    forked, fresh = run_forked(*args, cwd=cwd), run_fresh(*args, cwd=cwd)
    assert forked.returncode == fresh.returncode
    assert _timeless(forked.stdout) == _timeless(fresh.stdout) and forked.stderr == fresh.stderr
    assert forked.args == fresh.args
    return forked.returncode


def test_exit_codes_and_output_match_a_fresh_interpreter(tmp_path: Path) -> None:
    assert _same(("version", "--format", "json")) == 0
    assert _same(("validate", OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv")) == 1
    assert _same(("validate", OHLCV / "contract.yaml", tmp_path / "missing.csv", "--format", "json")) == 2
    assert _same(("lint", SENSOR_CONTRACT, "--no-such-option")) == 2


def test_an_uncaught_exception_is_the_interpreters_traceback_and_exit_1(tmp_path: Path) -> None:
    # --debug lets the error of a missing file propagate out of the entry point
    args = ("--debug", "validate", OHLCV / "contract.yaml", tmp_path / "missing.csv")
    forked = run_forked(*args)
    assert forked.returncode == 1 and forked.stderr.startswith("Traceback (most recent call last):\n")
    assert "cli_zygote" not in forked.stderr
    assert _same(args) == 1


def test_output_larger_than_a_pipe_buffer(tmp_path: Path) -> None:
    text = (OHLCV / "contract.yaml").read_text(encoding="utf-8")
    fields = "".join(f"  extra_field_{i}: {{type: int64, nullable: true}}\n" for i in range(1500))
    big = tmp_path / "big.yaml"
    big.write_text(text.replace("invariants:\n", fields + "invariants:\n", 1), encoding="utf-8")
    forked = run_forked("show", big, "--format", "json")
    assert forked.returncode == 0 and len(forked.stdout) > 4 * 65536
    assert sum(name.startswith("extra_field_") for name in json.loads(forked.stdout)["fields"]) == 1500
    assert _same(("show", big, "--format", "json")) == 0


def test_the_callers_environment_and_directory_reach_the_child(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "contract.yaml").write_text((OHLCV / "contract.yaml").read_text(encoding="utf-8"))
    assert _same(("show", "contract.yaml", "--format", "json"), cwd=tmp_path) == 0
    missing = ("validate", OHLCV / "contract.yaml", tmp_path / "missing.csv")
    monkeypatch.setenv("TSCONTRACT_DEBUG", "1")  # main() re-raises: a traceback instead of one line
    assert run_forked(*missing).stderr.startswith("Traceback")
    monkeypatch.delenv("TSCONTRACT_DEBUG")
    plain = run_forked(*missing)
    assert plain.returncode == 2 and plain.stderr.startswith("error: ") and "Traceback" not in plain.stderr


def test_a_call_keeps_nothing_for_the_next(tmp_path: Path) -> None:
    # the root option --debug sets TSCONTRACT_DEBUG in the child's environment: the next call has none
    missing = ("validate", OHLCV / "contract.yaml", tmp_path / "missing.csv")
    assert run_forked("--debug", *missing).returncode == 1
    assert run_forked(*missing).returncode == 2
    assert "TSCONTRACT_DEBUG" not in os.environ


@pytest.mark.parametrize(("code", "status", "printed"), [(None, 0, ""), (3, 3, ""), ("bye", 1, "bye\n")])
def test_system_exit_codes_as_the_interpreter_maps_them(code: object, status: int, printed: str) -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        assert _exit_code(SystemExit(code)) == status
    assert err.getvalue() == printed
