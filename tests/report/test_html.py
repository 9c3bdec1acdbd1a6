"""The HTML report, rendered for real in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tscontract.engines import validate
from tscontract.report.html import render_html, series_data
from tscontract.report.model import CheckResult, ValidationReport

ROOT = Path(__file__).resolve().parents[2]
SENSOR = ROOT / "examples" / "plant_sensor"
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def _chromium() -> str:
    found = shutil.which("chromium") or (Path("/usr/bin/chromium").is_file() and "/usr/bin/chromium")
    if not found:
        pytest.fail("headless Chromium not found: apt-get install chromium")
    return str(found)


def _run(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    cmd = [_chromium(), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def _console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Uncaught" in line or ("CONSOLE" in line and "ERROR" in line)]


@pytest.fixture(scope="module")
def sensor_html(tmp_path_factory: pytest.TempPathFactory) -> tuple[ValidationReport, str, Path]:
    contract, data, catalog = SENSOR / "contract.yaml", SENSOR / "data" / "bad.csv", SENSOR / "catalog.yaml"
    report = validate(contract, data, catalog=catalog, now=NOW)
    html = render_html(report, series=series_data(contract, data, catalog, report))
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(html, encoding="utf-8")
    return report, html, path


def test_self_contained(sensor_html: tuple[ValidationReport, str, Path]) -> None:
    _, html, _ = sensor_html
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html


def test_series_data_marks_failures_and_bounds(sensor_html: tuple[ValidationReport, str, Path]) -> None:
    report, _, _ = sensor_html
    contract, data, catalog = SENSOR / "contract.yaml", SENSOR / "data" / "bad.csv", SENSOR / "catalog.yaml"
    data_dict = series_data(contract, data, catalog, report)
    assert data_dict["field"] == "value"
    flow = data_dict["points"]["F-310.inlet_flow"]
    assert ("2026-11-30T11:57:00Z", 612.5, True) in flow  # outside hard bounds [0, 500]
    assert data_dict["bounds"]["F-310.inlet_flow"]["hard"] == [0.0, 500.0]
    assert data_dict["gaps"]["P-101.discharge_pressure"] == [["2026-11-30T12:01:30Z", "2026-11-30T12:01:44Z"]]
    small = series_data(contract, data, catalog, report, max_points=3)
    pressure = small["points"]["P-101.discharge_pressure"]
    assert len(pressure) < 17 and all(p[2] for p in pressure if p[0] == "2026-11-30T12:01:44Z")


def test_escapes_text() -> None:
    check = CheckResult("x.y", "row", "fields", "a < b & <script>", "c", "error", "failed", 1, [{"v": "<b>"}])
    html = render_html(ValidationReport("c<1>", "1.0.0", 1, "duckdb", 0.1, ["d.csv"], [check]))
    assert "<script>" not in html and "<b>" not in html and "a &lt; b &amp; &lt;script&gt;" in html


def test_completeness_plot() -> None:
    check = CheckResult("completeness", "completeness", "completeness", "window: 1h", "c", "error", "failed", 1)
    report = ValidationReport("c", "1.0.0", 3, "duckdb", 0.1, ["d.csv"], [check])
    series = {
        "field": "value",
        "points": {"s": [("2026-01-01T00:00:00Z", 1.0, False), ("2026-01-01T02:00:00Z", 2.0, False)]},
        "windows": {"s": [("2026-01-01T00:00:00Z", 60, 60), ("2026-01-01T01:00:00Z", 60, 12)]},
        "gaps": {"s": [["2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"]]},
    }
    html = render_html(report, series=series)
    assert 'class="plot plot-completeness"' in html and 'class="gap"' in html


def test_dom_in_headless_chromium(sensor_html: tuple[ValidationReport, str, Path], tmp_path: Path) -> None:
    report, _, path = sensor_html
    result = _run(["--dump-dom", path.as_uri()], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for check in report.checks:
        assert f'id="check-{check.id}"' in dom
    assert 'class="status status-failed"' in dom
    assert "unit equals catalog unit for series_id" in dom
    for kind in ("timeline", "cadence"):
        assert re.search(rf'<svg[^>]*class="plot plot-{kind}"', dom), kind
    assert dom.count('class="plot plot-timeline"') == 4  # one per series
    assert 'class="failing"' in dom and 'class="gap"' in dom and "bound-hard" in dom
    assert "FAILED" in dom and 'id="examples-invariants[2]"' in dom
    assert not _console_errors(result.stderr), _console_errors(result.stderr)


def test_screenshot_in_headless_chromium(sensor_html: tuple[ValidationReport, str, Path], tmp_path: Path) -> None:
    _, _, path = sensor_html
    png = tmp_path / "report.png"
    result = _run([f"--screenshot={png}", "--window-size=1280,2000", path.as_uri()], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert png.is_file() and png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not _console_errors(result.stderr), _console_errors(result.stderr)
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    shutil.copyfile(png, out / "report.png")


def test_cli_validate_writes_the_html_report(tmp_path):
    from tests.conftest import EXAMPLES, run_cli

    sensor = EXAMPLES / "plant_sensor"
    out = tmp_path / "report.html"
    result = run_cli(
        "validate",
        sensor / "contract.yaml",
        sensor / "data" / "bad_kpa.csv",
        "--catalog",
        sensor / "catalog.yaml",
        "--now",
        "2026-11-30T21:05:00Z",
        "--html",
        out,
    )
    assert result.returncode == 1
    page = out.read_text()
    assert "<svg" in page and "unit equals catalog unit for series_id" in page and "<script" not in page
