"""tscontract init on an ordinary meter file: local wall-clock times or offsets, a resent reading, gaps and a
glitch. One ``init`` drafts the contract, catalog and mapping; the draft lints clean and ``validate`` of the
same sample reports exactly the sample's planted problems."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_cli
from tests.interop.meter_sample import BERLIN, METER, NEGATIVE, RESENT, readings, write_local, write_offsets
from tscontract import load_catalog, load_contract
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.interop.draft import duration
from tscontract.interop.infer import infer

NOW = "2026-10-26T23:00:00Z"  # the sample's last reading is 22:45Z: fresh
EXCHANGE_WORDS = ("XNYS", "XNAS", "session", "bars", "exchange", "calendar")


def _failed(report: dict) -> dict[str, tuple[str, int]]:
    return {c["id"]: (c["severity"], c["failed_rows"]) for c in report["checks"] if c["status"] != "passed"}


def _rows_of(path: Path, text: str) -> list[int]:
    """The 1-based data rows (header not counted) whose line holds ``text``."""
    return [i for i, line in enumerate(path.read_text().splitlines()[1:], 1) if text in line]


def test_a_berlin_meter_file_drafts_lints_and_validates_in_one_init(tmp_path):
    sample = tmp_path / "meter.csv"
    write_local(sample)
    out = tmp_path / "out" / "dir" / "contract.yaml"  # the directory does not exist yet
    done = run_cli("init", sample, "--timezone", "Europe/Berlin", "-o", out, "--format", "json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    # the name comes from the data file, not from -o's stem
    assert summary["name"] == "meter" and load_contract(out).contract == "meter"
    assert summary["key"] == ["meter_id", "timestamp"] and summary["cadence"] == "15m"
    # the resent reading: reported with its rows and values, kept in the key (key.unique fails it), no stop
    resent = _rows_of(sample, RESENT)
    assert summary["duplicates"]["keys"] == 1 and len(resent) == 2
    assert summary["duplicates"]["first"] == [
        f"meter_id=MTR-4711, timestamp=2026-06-15T10:00:00Z: rows {resent[0]}, {resent[1]} "
        "(energy_kwh=0.480; energy_kwh=0.480)"
    ]
    assert summary["gaps"]["count"] == 4 and [g["missing"] for g in summary["gaps"]["first"]] == [1, 3, 1, 1]
    assert summary["gaps"]["first"][0] == {
        "series": "MTR-4711",
        "after": "2026-03-29T07:45:00Z",
        "before": "2026-03-29T08:15:00Z",
        "missing": 1,
    }
    catalog, mapping_path = out.parent / "catalog.yaml", out.parent / "mapping.yaml"
    # the mapping states the zone and both DST policies; the catalog records the zone per series
    rule = load_mapping(mapping_path).columns["timestamp"]
    assert (rule.zone, rule.nonexistent, rule.ambiguous) == ("Europe/Berlin", "fail", "file_order")
    entry = load_catalog(catalog).series["MTR-4711"]
    assert entry.device_zone == "Europe/Berlin"
    assert entry.hard_bounds is not None and entry.hard_bounds[0] == 0  # robust: the glitch is not learned
    contract = load_contract(out)
    assert contract.completeness is not None and contract.completeness.window.text == "1 local day"
    assert contract.fields["energy_kwh"].unit == "kWh" and contract.fields["energy_kwh"].dimension == "energy"
    text = out.read_text()
    assert not [w for w in EXCHANGE_WORDS if w in text], text
    lint = run_cli("lint", out, "--catalog", catalog, "--format", "json")
    assert lint.returncode == 0 and json.loads(lint.stdout)["findings"] == [], lint.stdout
    checked = run_cli(
        "validate", out, sample, "--catalog", catalog, "--mapping", mapping_path, "--now", NOW, "--format", "json"
    )
    assert checked.returncode == 1, checked.stderr
    report = json.loads(checked.stdout)
    assert _failed(report) == {
        "time.cadence": ("error", 4),  # the four gaps
        "completeness": ("error", 4),  # the four days holding them
        "key.unique": ("error", 2),  # the resent reading
        "invariants[0]": ("error", 1),  # the negative reading, below the hard bounds
        "invariants[1]": ("warning", 1),  # ... and below the plausibility bounds
    }
    by_id = {c["id"]: c for c in report["checks"]}
    days = {e["window_start"][:10]: (e["expected"], e["actual"]) for e in by_id["completeness"]["examples"]}
    assert days["2026-03-28"] == (92, 91) and days["2026-10-24"] == (100, 99)  # the DST days, local
    (glitch,) = by_id["invariants[0]"]["examples"]
    assert glitch["energy_kwh"] == NEGATIVE[1] and glitch["row"] == _rows_of(sample, NEGATIVE[0])[0]


def test_times_with_offsets_become_instants_the_draft_then_accepts(tmp_path):
    sample = tmp_path / "meter.csv"
    write_offsets(sample)
    assert "2026-03-29T01:45:00+01:00" in sample.read_text()
    out = tmp_path / "draft" / "meter.yaml"
    done = run_cli("init", sample, "-o", out)
    assert done.returncode == 0, done.stderr
    assert "the sample repeats 1 key(s)" in done.stdout and "the sample has 4 gap(s)" in done.stdout
    mapping_path = out.parent / "mapping.yaml"
    rule = load_mapping(mapping_path).columns["timestamp"]
    assert (rule.parse, rule.zone) == ("rfc3339", None)  # the offset says which instant: no zone guessed
    checked = run_cli(
        "validate",
        out,
        sample,
        "--catalog",
        out.parent / "catalog.yaml",
        "--mapping",
        mapping_path,
        "--now",
        NOW,
        "--format",
        "json",
    )
    failed = _failed(json.loads(checked.stdout))
    assert "time.timezone" not in failed and checked.returncode == 1
    assert failed == {
        "time.cadence": ("error", 4),
        "key.unique": ("error", 2),
        "invariants[0]": ("error", 1),
        "invariants[1]": ("warning", 1),
    }


def test_naive_times_without_a_zone_are_refused_naming_the_option(tmp_path):
    sample = tmp_path / "meter.csv"
    sample.write_text("meter_id,timestamp,energy_kwh\nM1,2026-03-29 01:00:00,0.1\nM1,2026-03-29 01:15:00,0.2\n")
    done = run_cli("init", sample, "-o", tmp_path / "c.yaml")
    assert done.returncode == 2 and "--timezone ZONE" in done.stderr and len(done.stderr.splitlines()) == 1
    bad = run_cli("init", sample, "--timezone", "Mars/Olympus", "-o", tmp_path / "c.yaml")
    assert bad.returncode == 2 and "--timezone Mars/Olympus" in bad.stderr


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    interval_s=st.sampled_from([1, 10, 60, 300, 900, 3600]),
    points=st.integers(min_value=60, max_value=240),
    data=st.data(),
)
def test_cadence_is_the_dominant_interval_and_holes_are_gaps(interval_s, points, data):
    # interior points removed, at most 4% of them: the interval stays, each run of removed points is one gap
    removed = data.draw(st.sets(st.integers(min_value=1, max_value=points - 2), max_size=points * 4 // 100))
    start = datetime(2026, 3, 29, tzinfo=UTC)
    lines = ["station,ts,temp_degc"]
    lines += [
        f"S1,{start + timedelta(seconds=interval_s * i):%Y-%m-%dT%H:%M:%SZ},{10 + i % 7}.5"
        for i in range(points)
        if i not in removed
    ]
    runs = sum(1 for i in removed if i - 1 not in removed)
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "station.csv"
        sample.write_text("\n".join(lines) + "\n")
        draft = infer([sample], name="station")
    assert draft.cadence == duration(interval_s * 1000)
    assert draft.gap_count == runs
    listed = draft.gaps if runs <= 5 else []  # the first five are listed with their missing points
    assert sum(g.missing for g in listed) == (len(removed) if runs <= 5 else 0)


def _without_meter_column(tmp_path: Path, write: Any, name: str) -> Path:
    full = tmp_path / "full.csv"
    write(full)
    sample = tmp_path / name  # one meter per file: no id column
    sample.write_text("".join(line.split(",", 1)[1] + "\n" for line in full.read_text().splitlines()))
    return sample


def test_one_meter_per_file_the_file_name_names_the_series(tmp_path):
    sample = _without_meter_column(tmp_path, write_local, "kitchen.csv")
    out = tmp_path / "kitchen" / "contract.yaml"
    assert run_cli("init", sample, "--timezone", "Europe/Berlin", "-o", out).returncode == 0
    mapping_path, catalog = out.parent / "mapping.yaml", out.parent / "catalog.yaml"
    assert load_mapping(mapping_path).columns["series_id"].file_name == r"^(?P<series>.+)\.csv$"
    assert load_catalog(catalog).series["kitchen"].device_zone == "Europe/Berlin"
    assert json.loads(run_cli("lint", out, "-c", catalog, "-f", "json").stdout)["findings"] == []
    checked = run_cli("validate", out, sample, "-c", catalog, "--mapping", mapping_path, "--now", NOW, "-f", "json")
    assert _failed(json.loads(checked.stdout)) == {
        "time.cadence": ("error", 4),
        "completeness": ("error", 4),
        "key.unique": ("error", 2),
        "invariants[0]": ("error", 1),
        "invariants[1]": ("warning", 1),
    }


def test_without_a_series_the_bounds_are_invariants(tmp_path):
    sample = _without_meter_column(tmp_path, write_offsets, "kitchen.csv")
    out = tmp_path / "kitchen" / "contract.yaml"
    assert run_cli("init", sample, "-o", out).returncode == 0
    assert not (out.parent / "catalog.yaml").exists()
    invariants = [i.text for i in load_contract(out).invariants]
    assert invariants[0] == "energy_kwh between 0 and 1.29"  # robust: not learned from the glitch
    checked = run_cli("validate", out, sample, "--mapping", out.parent / "mapping.yaml", "--now", NOW, "-f", "json")
    assert _failed(json.loads(checked.stdout)) == {
        "time.cadence": ("error", 4),
        "key.unique": ("error", 2),
        "invariants[0]": ("error", 1),
        "invariants[1]": ("warning", 1),
    }


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.integers(min_value=1, max_value=500),
    points=st.integers(min_value=100, max_value=400),
    glitch=st.sampled_from([-1, 50]),  # a sign flip, or fifty times the scale
    at=st.floats(min_value=0.05, max_value=0.95),
)
def test_bounds_are_not_learned_from_a_glitch(base, points, glitch, at):
    # a non-negative reading with one glitch: the drafted hard bounds keep the readings and leave out the glitch
    start = datetime(2026, 3, 29, tzinfo=UTC)
    values = [base + (i * 37 % 11) for i in range(points)]
    where = int(at * points)
    values[where] = base * glitch
    lines = ["meter_id,ts,energy_kwh"]
    lines += [f"M1,{start + timedelta(minutes=15 * i):%Y-%m-%dT%H:%M:%SZ},{v}" for i, v in enumerate(values)]
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "meter.csv"
        sample.write_text("\n".join(lines) + "\n")
        draft = infer([sample], name="meter")
    low, high = (Decimal(b) for b in draft.catalog["M1"]["hard_bounds"])
    readings = [v for i, v in enumerate(values) if i != where]
    assert low <= min(readings) and max(readings) <= high
    assert not low <= values[where] <= high
    assert low >= 0  # a non-negative quantity stays non-negative


def test_a_parquet_file_of_naive_local_timestamps_drafts_the_same(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = readings()
    local = [m.astimezone(BERLIN).replace(tzinfo=None) for m, _ in rows]
    table = pa.table(
        {
            "meter_id": pa.array([METER] * len(rows)),
            "timestamp": pa.array(local, pa.timestamp("s")),  # no zone in the file: the wall clock
            "energy_kwh": pa.array([kwh for _, kwh in rows]),
        }
    )
    sample = tmp_path / "meter.parquet"
    pq.write_table(table, sample)
    assert run_cli("init", sample, "-o", tmp_path / "x.yaml").returncode == 2  # no zone: refused, never guessed
    out = tmp_path / "draft" / "contract.yaml"
    assert run_cli("init", sample, "--timezone", "Europe/Berlin", "-o", out).returncode == 0
    catalog, mapping_path = out.parent / "catalog.yaml", out.parent / "mapping.yaml"
    checked = run_cli("validate", out, sample, "-c", catalog, "--mapping", mapping_path, "--now", NOW, "-f", "json")
    assert set(_failed(json.loads(checked.stdout))) == {
        "time.cadence",
        "completeness",
        "key.unique",
        "invariants[0]",
        "invariants[1]",
    }
