"""Progress shows on a terminal and stays quiet under --format json or when not a TTY."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import EXAMPLES, ROOT, run_cli

OHLCV = EXAMPLES / "ohlcv_1m"
ARGS = [
    "validate",
    str(OHLCV / "contract.yaml"),
    str(OHLCV / "data" / "good.csv"),
    "--catalog",
    str(OHLCV / "catalog.yaml"),
    "--now",
    "2026-11-30T21:05:00Z",
]


def test_status_line_on_a_terminal(tmp_path):
    script = shutil.which("script")
    assert script, "util-linux 'script' is needed to give the CLI a terminal"
    log = tmp_path / "tty.log"
    command = " ".join([sys.executable, "-m", "tscontract", *ARGS])
    subprocess.run([script, "-qec", command, str(log)], cwd=ROOT, capture_output=True, check=False, timeout=120)
    shown = log.read_bytes().decode("utf-8", "replace")
    # the live status line (a spinner with the current phase) is drawn on the terminal
    assert "validating" in shown or "row checks: one fused scan" in shown


def test_quiet_when_piped_or_json():
    piped = run_cli(*ARGS)
    assert piped.returncode == 0 and piped.stderr == ""
    as_json = run_cli(*ARGS, "--format", "json")
    assert as_json.returncode == 0 and as_json.stderr == "" and as_json.stdout.lstrip().startswith("{")
