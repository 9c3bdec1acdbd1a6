"""The HTML report, rendered for real in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tscontract.engines import validate
from tscontract.engines.plot_data import series_data
from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.report.html import render_html

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
    # only the plotted field's checks mark points: the calibration, unit and cadence rows do not
    assert {t for t, _, failed in flow + data_dict["points"]["T-204.bearing_temp"] if failed} == {
        "2026-11-30T11:57:00Z",  # invariants[1], hard bounds
        "2026-11-30T12:01:00Z",  # field.value.type, 5 decimal places
        "2026-11-30T11:55:20Z",  # invariants[0], value null while quality good
    }
    assert not [p for p in data_dict["points"]["P-101.discharge_pressure"] if p[2]]
    small = series_data(contract, data, catalog, report, max_points=4)
    pressure = small["points"]["P-101.discharge_pressure"]
    assert len(pressure) < 17 and ("2026-11-30T11:57:00Z", 612.5, True) in small["points"]["F-310.inlet_flow"]


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


# ---------------------------------------------------------------- plots show what was checked


def _sensor_rows(start: datetime, temps: list[str | None], units: dict[int, str] | None = None) -> list[str]:
    """T-204 bearing temperatures every 10 s, as the historian exports them, plus a short P-101 run."""
    from datetime import timedelta

    units = units or {}
    rows = []
    for i, value in enumerate(temps):
        ts = (start + timedelta(seconds=10 * i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        quality = "suspect" if value == "-200.0000" else "good"  # the historian's sentinel for "no reading"
        rows.append(
            f"T-204.bearing_temp,{ts},{value or ''},{units.get(i, 'degC')},{quality},CAL-T204-2026A,"
            "historian-1,run-0200,2.0.0,0"
        )
    for i in range(360):
        ts = (start + timedelta(seconds=10 * i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        rows.append(
            f"P-101.discharge_pressure,{ts},{8.4 + (i % 17) / 100:.4f},bar,good,CAL-P101-2026A,"
            "plc-gw-1,run-0200,2.0.0,0"
        )
    return rows


def _bearing(n: int, offset: int = 0) -> list[str | None]:
    # a slow daily swing between about 55 and 65 degC, 4 decimals as the contract's decimal(12,4)
    import math

    return [f"{60 + 5 * math.sin((i + offset) / 900):.4f}" for i in range(n)]


HEADER = "series_id,event_ts,value,unit,quality,calibration_id,source_id,ingest_run_id,transform_version,revision"
# across the end of US daylight saving time (America/Chicago, the device zone: 2026-11-01 07:00Z)
BATCH_START = datetime(2026, 10, 31, 22, 0, tzinfo=UTC)
SENTINELS = range(2000, 2040)  # the historian lost the sensor for 400 s and wrote -200
SPIKE = 3337  # one real bearing spike, inside the hard bounds: a plausibility warning
WRONG_UNIT = (4100, 4101, 4102)  # rows exported in degF: the unit clause fails, the value is fine


@pytest.fixture(scope="module")
def bearing_batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from datetime import timedelta

    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.loader import load_contract
    from tscontract.engines.profile import profile
    from tscontract.plan.bounds import save_bounds

    root = tmp_path_factory.mktemp("bearing")
    history = root / "history.csv"
    history.write_text("\n".join([HEADER, *_sensor_rows(BATCH_START - timedelta(days=1), _bearing(6000, 7))]) + "\n")
    bounds = root / "bounds.yaml"
    contract, catalog = load_contract(SENSOR / "contract.yaml"), load_catalog(SENSOR / "catalog.yaml")
    save_bounds(profile(contract, history, catalog=catalog), bounds)
    temps = _bearing(6000)
    for i in SENTINELS:
        temps[i] = "-200.0000"
    temps[SPIKE] = "141.5000"
    batch = root / "batch.csv"
    batch.write_text("\n".join([HEADER, *_sensor_rows(BATCH_START, temps, {i: "degF" for i in WRONG_UNIT})]) + "\n")
    spiked = _bearing(6000)
    for i in (SPIKE, SPIKE + 500, SPIKE + 900):
        spiked[i] = "141.5000"
    warnings_only = root / "warnings_only.csv"
    warnings_only.write_text("\n".join([HEADER, *_sensor_rows(BATCH_START, spiked)]) + "\n")
    # a catalog that states plausibility bounds no clause of the contract applies
    catalog = root / "catalog.yaml"
    catalog.write_text(
        (SENSOR / "catalog.yaml")
        .read_text()
        .replace("    hard_bounds: [-40, 150]\n", "    hard_bounds: [-40, 150]\n    plausibility_bounds: [10, 90]\n")
    )
    return {"batch": batch, "bounds": bounds, "warnings_only": warnings_only, "catalog": catalog}


def _marked(points: list) -> list[str]:
    return [t for t, _, failed in points if failed]


def _at(i: int) -> str:
    from datetime import timedelta

    return (BATCH_START + timedelta(seconds=10 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_every_failing_point_of_the_plotted_field_is_drawn(bearing_batch: dict[str, Path]) -> None:
    contract, catalog = SENSOR / "contract.yaml", SENSOR / "catalog.yaml"
    report = validate(contract, bearing_batch["batch"], catalog=catalog, now=NOW, examples=5)
    hard = report.check("invariants[1]")
    assert hard.failed_rows == 40 and len(hard.examples) == 5  # the report shows five
    assert report.check("invariants[2]").failed_rows == 3  # degF rows: another field's clause
    data = series_data(contract, bearing_batch["batch"], catalog, report)
    temps = data["points"]["T-204.bearing_temp"]
    # all 40 sentinel readings are drawn as failing, and nothing else: the degF rows fail the unit clause
    assert _marked(temps) == [_at(i) for i in SENTINELS]
    assert {v for t, v, failed in temps if failed} == {-200.0}
    assert _marked(data["points"]["P-101.discharge_pressure"]) == []
    # bounded: at most max_failing per series, the first ones in time
    few = series_data(contract, bearing_batch["batch"], catalog, report, max_failing=10)
    assert _marked(few["points"]["T-204.bearing_temp"]) == [_at(i) for i in SENTINELS[:10]]


def test_downsampling_keeps_peaks(bearing_batch: dict[str, Path]) -> None:
    contract, catalog = SENSOR / "contract.yaml", SENSOR / "catalog.yaml"
    report = validate(contract, bearing_batch["batch"], catalog=catalog, now=NOW)
    data = series_data(contract, bearing_batch["batch"], catalog, report, max_points=200)
    temps = data["points"]["T-204.bearing_temp"]
    assert len(temps) <= 200 + 40  # min/max/first/last of 50 buckets, plus the failing points
    values = [v for _, v, _ in temps]
    assert 141.5 in values and (_at(SPIKE), 141.5, False) in temps  # a one-reading spike survives
    assert max(values) == 141.5 and min(values) == -200.0
    # the swing keeps its shape: each bucket's extremes are there
    assert 64.9 < max(v for v in values if v < 100) <= 65.0 and 55.0 <= min(v for v in values if v > 0) < 55.1
    assert temps == sorted(temps, key=lambda p: p[0])


def test_applied_bounds_are_drawn_not_the_catalog_ones(bearing_batch: dict[str, Path], tmp_path: Path) -> None:
    from tscontract.plan.bounds import load_bounds

    contract, catalog = SENSOR / "contract.yaml", bearing_batch["catalog"]
    bounds = load_bounds(bearing_batch["bounds"])
    report = validate(contract, bearing_batch["batch"], catalog=catalog, now=NOW, bounds=bounds)
    assert report.check("plausibility.value").status == "failed"
    data = series_data(contract, bearing_batch["batch"], catalog, report, bounds=bounds)
    drawn = data["bounds"]["T-204.bearing_temp"]
    low, high = bounds.fields["value"]["T-204.bearing_temp"].limits(bounds.margin)
    assert drawn["profiled"] == [float(low), float(high)]
    assert drawn["hard"] == [-40.0, 150.0]  # applied by invariants[1]
    assert drawn["plausibility"] is None  # in the catalog, but no clause applies it
    unapplied = series_data(contract, bearing_batch["batch"], catalog, report)
    assert unapplied["bounds"]["T-204.bearing_temp"]["profiled"] is None
    html = render_html(report, series=data)
    assert "bound-profiled" in html and "bound-plausibility" not in html
    assert f"{float(low):.6g}" in html and f"{float(high):.6g}" in html
    # the plausibility warning's spike is drawn as failing; it is a check on value
    assert (_at(SPIKE), 141.5, True) in data["points"]["T-204.bearing_temp"]


def test_header_says_passed_with_warnings(bearing_batch: dict[str, Path], tmp_path: Path) -> None:
    from tscontract.plan.bounds import load_bounds

    contract, catalog = SENSOR / "contract.yaml", SENSOR / "catalog.yaml"
    bounds = load_bounds(bearing_batch["bounds"])
    data_file = bearing_batch["warnings_only"]
    report = validate(contract, data_file, catalog=catalog, now=NOW, bounds=bounds)
    warned = [c for c in report.checks if c.status == "failed"]
    assert report.passed and [(c.id, c.severity, c.failed_rows) for c in warned] == [
        ("plausibility.value", "warning", 3)
    ]
    page = tmp_path / "report.html"
    page.write_text(render_html(report, series=series_data(contract, data_file, catalog, report, bounds=bounds)))
    result = _run(["--dump-dom", page.as_uri()], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    verdict = re.search(r'<span class="verdict ([a-z]+)">([^<]*)</span>', result.stdout)
    assert verdict and verdict.groups() == ("warn", "PASSED with 1 warning")
    assert '<span class="count-warning">1 warning</span>' in result.stdout
    assert '<span class="count-failed">0 failed</span>' in result.stdout
    assert not _console_errors(result.stderr)
    png = tmp_path / "warned.png"
    shot = _run([f"--screenshot={png}", "--window-size=1280,1400", page.as_uri()], tmp_path)
    assert shot.returncode == 0 and png.stat().st_size > 10_000
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    shutil.copyfile(png, out / "report_warnings.png")


def test_cli_html_draws_the_applied_bounds(bearing_batch: dict[str, Path], tmp_path: Path) -> None:
    from tests.conftest import run_cli

    out = tmp_path / "report.html"
    result = run_cli(
        "validate",
        SENSOR / "contract.yaml",
        bearing_batch["warnings_only"],
        "--catalog",
        bearing_batch["catalog"],
        "--bounds",
        bearing_batch["bounds"],
        "--now",
        "2026-11-30T21:05:00Z",
        "--html",
        out,
    )
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert "PASSED with 1 warning" in page and "bound-profiled" in page and "bound-plausibility" not in page


CALL_CENTRE = """\
contract: calls_5m
version: 1.0.0
key: [queue, slot_start]
time: {column: slot_start, precision: s, timezone: UTC instant, cadence: 5m}
fields:
  queue: {type: string, nullable: false}
  slot_start: {type: timestamp_s_utc, nullable: false}
  calls: {type: int, nullable: false}
completeness: {window: 1h, min_ratio: 1.0}
"""


def _call_counts(tmp_path: Path, queues: int, hole: bool = True) -> Path:
    """5-minute call counts per queue, 08:00-11:00Z; each queue misses 09:10-09:40 (six slots)."""
    lines = ["queue,slot_start,calls"]
    for q in range(queues):
        for n in range(36):
            moment = datetime(2026, 11, 30, 8, tzinfo=UTC).timestamp() + n * 300
            slot = datetime.fromtimestamp(moment, UTC)
            if hole and datetime(2026, 11, 30, 9, 10, tzinfo=UTC) <= slot < datetime(2026, 11, 30, 9, 40, tzinfo=UTC):
                continue
            lines.append(f"q{q:02d},{slot.isoformat().replace('+00:00', 'Z')},{10 + n % 7}")
    path = tmp_path / f"calls_{queues}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _panels(page: str, kind: str) -> list[str]:
    return re.findall(rf'<svg class="plot plot-{kind}".*?</svg>', page, re.S)


def test_every_series_is_drawn_with_its_gaps_and_lines_break_at_holes(tmp_path):
    contract = tmp_path / "calls.yaml"
    contract.write_text(CALL_CENTRE)
    data = _call_counts(tmp_path, 8)
    report = validate(contract, data, now=NOW, examples=5)
    assert len(report.check("time.cadence").examples) == 5  # fewer examples than series
    page = render_html(report, series=series_data(contract, data, None, report, now=NOW))
    timelines, cadences = _panels(page, "timeline"), _panels(page, "cadence")
    completeness = _panels(page, "completeness")
    assert len(timelines) == len(cadences) == len(completeness) == 8
    assert all(panel.count('class="gap"') == 1 for panel in cadences)  # every queue's hole, not five
    assert all(panel.count("<rect") == 1 for panel in completeness)  # the short 09:00 window of each
    # the line stops at 09:05 and starts again at 09:40: two pieces, none across the hole
    assert all(panel.count('class="line"') == 2 for panel in timelines)
    labels = re.findall(r'<text[^>]*text-anchor="(?:start|middle|end)">([^<]*UTC)</text>', timelines[0])
    assert labels and all(label.startswith("2026-11-30 ") for label in labels)
    assert "series drawn" not in page
    whole = _call_counts(tmp_path, 1, hole=False)
    unbroken = render_html(report, series=series_data(contract, whole, None, report, now=NOW))
    assert _panels(unbroken, "timeline")[0].count('class="line"') == 1


def test_the_series_cap_is_said_on_the_page(tmp_path):
    contract = tmp_path / "calls.yaml"
    contract.write_text(CALL_CENTRE)
    data = _call_counts(tmp_path, 53)
    report = validate(contract, data, now=NOW, examples=5)
    page = render_html(report, series=series_data(contract, data, None, report, now=NOW))
    assert len(_panels(page, "timeline")) == 50
    assert "50 of 53 series drawn (at most 50" in page
