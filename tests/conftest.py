"""Shared fixtures: the seed contracts beside the checkout, the examples, the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seed"
EXAMPLES = ROOT / "examples"
OHLCV_SEED = SEED / "ohlcv_1m.contract.yaml"
SENSOR_SEED = SEED / "plant_sensor_reading.contract.yaml"


@pytest.fixture(scope="session")
def seed_dir() -> Path:
    # The seed is part of the suite, not optional: CI lays ../shared beside the clone.
    assert SEED.is_dir(), f"seed contracts not found at {SEED}"
    return SEED


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real console entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "tscontract", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        check=False,
    )


def write(tmp_path: Path, text: str, name: str = "contract.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
