"""A regular-hours contract fed a vendor's extended-hours file: the mapping drops the pre- and
post-market bars at conversion, counts them, and the run records how many."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import EXAMPLES, run_cli, write
from tscontract.gate.store import DuckDBStore

INTRADAY = EXAMPLES / "vendors" / "intraday_bars"
DROPPED = {"id": "mapping.outside_session", "clause": "outside_session: drop", "rows": 570}


def regular_hours(tmp_path: Path, drop: bool) -> tuple[Path, Path]:
    catalog = (INTRADAY / "catalog_5min.yaml").read_text().replace("session: extended", "session: regular")
    mapping = (INTRADAY / "mapping.yaml").read_text() + ("outside_session: drop\n" if drop else "")
    return write(tmp_path, catalog, "catalog.yaml"), write(tmp_path, mapping, "mapping.yaml")


def validate(tmp_path: Path, drop: bool) -> tuple[int, dict]:
    catalog, mapping = regular_hours(tmp_path, drop)
    data = INTRADAY / "data" / "AAPL_5min.csv"
    args = [INTRADAY / "contract_5min.yaml", data, "--catalog", catalog, "--mapping", mapping, "--format", "json"]
    done = run_cli("validate", *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_pre_and_post_market_bars_fail_a_regular_hours_contract(tmp_path):
    code, report = validate(tmp_path, drop=False)
    session = next(c for c in report["checks"] if c["id"] == "time.session")
    # 5 sessions of 192 extended-hours bars, 78 of them in regular hours
    assert (code, report["rows"], session["failed_rows"]) == (1, 960, 570)


def test_the_mapping_drops_them_counted(tmp_path):
    code, report = validate(tmp_path, drop=True)
    assert code == 0, [c for c in report["checks"] if c["status"] != "passed"]
    assert report["rows"] == 390
    assert report["conversion"]["rows_read"] == 960 and report["conversion"]["dropped"] == [DROPPED]


def test_ingest_records_the_dropped_bars_in_the_run(tmp_path):
    catalog, mapping = regular_hours(tmp_path, drop=True)
    store = tmp_path / "warehouse.duckdb"
    done = run_cli(
        "ingest",
        INTRADAY / "contract_5min.yaml",
        INTRADAY / "data" / "AAPL_5min.csv",
        "--store",
        store,
        "--catalog",
        catalog,
        "--mapping",
        mapping,
        "--now",
        "2026-12-31T23:00:00Z",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["rows_in"], result["published"], result["quarantined"]) == (960, 390, 0)
    runs = DuckDBStore(str(store)).query("SELECT checks FROM tscontract_runs")
    assert "mapping.outside_session" in str(runs)


def test_a_session_cadence_refuses_the_drop(tmp_path):
    daily = EXAMPLES / "vendors" / "daily_bars"
    mapping = write(tmp_path, (daily / "mapping.yaml").read_text() + "outside_session: drop\n", "m.yaml")
    files = sorted((daily / "data").glob("*.csv"))
    done = run_cli(
        "validate", daily / "contract.yaml", files[0], "--catalog", daily / "catalog.yaml", "--mapping", mapping
    )
    assert done.returncode == 2 and "one per session" in done.stderr


def test_a_calendar_declared_by_its_hours_drops_the_same_bars(tmp_path):
    """New York's regular hours written as weekly hours (no holiday in these five days) drop what XNAS drops."""
    hours = (
        'calendars:\n  ny_regular:\n    zone: America/New_York\n    hours: {mon-fri: "09:30-16:00"}\n'
        "    holidays: [2026-11-26]\n"
    )
    catalog, mapping = regular_hours(tmp_path, drop=True)
    text = catalog.read_text().replace("calendar: XNAS, session: regular", "calendar: ny_regular")
    assert text.count("calendar: ny_regular") == 2
    write(tmp_path, text + hours, "catalog.yaml")
    args = [INTRADAY / "contract_5min.yaml", INTRADAY / "data" / "AAPL_5min.csv", "--catalog", catalog]
    done = run_cli("validate", *args, "--mapping", mapping, "--format", "json")
    report = json.loads(done.stdout)
    assert done.returncode == 0, [c for c in report["checks"] if c["status"] != "passed"]
    assert report["rows"] == 390 and report["conversion"]["dropped"] == [DROPPED]
