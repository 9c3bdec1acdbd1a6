"""Cadence with tolerance, sessions on a real exchange calendar, completeness, freshness."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.conftest import write
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tscontract import parse_contract, validate

SENSOR_HEADER = (
    "series_id,event_ts,value,unit,quality,calibration_id,source_id,ingest_run_id,transform_version,revision"
)


def sensor_csv(tmp_path, offsets_s: list[float], series="T-204.bearing_temp", unit="degC", cal="CAL-T204-2026A"):
    start = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    lines = [SENSOR_HEADER]
    for offset in offsets_s:
        ts = (start + timedelta(seconds=offset)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        lines.append(f"{series},{ts},65.0000,{unit},good,{cal},plc,run-1,2.0.0,0")
    return write(tmp_path, "\n".join(lines) + "\n", "data.csv")


def sensor_report(path, contract=SENSOR / "contract.yaml", now=NOW):
    return validate(contract, path, catalog=SENSOR / "catalog.yaml", now=now)


def test_cadence_tolerance_is_ten_percent_of_the_catalog_interval(tmp_path):
    # T-204 reports every 10s; +/-10% allows 9..11 s
    ok = sensor_report(sensor_csv(tmp_path, [0, 10, 21, 30, 39, 49]))
    assert ok.check("time.cadence").status == "passed"
    late = sensor_report(sensor_csv(tmp_path, [0, 10, 21.5, 31.5]))
    cadence = late.check("time.cadence")
    assert cadence.status == "failed" and cadence.failed_rows == 1
    assert cadence.examples[0]["gap_s"] == 11.5 and cadence.examples[0]["expected_s"] == 10.0


def test_revisions_share_a_point_for_cadence(tmp_path):
    path = sensor_csv(tmp_path, [0, 10, 20])
    text = path.read_text().splitlines()
    text.append(text[2].replace(",0", ",1").replace("65.0000", "65.1000"))  # revision 1 of the 10 s point
    path.write_text("\n".join(text) + "\n")
    report = sensor_report(path)
    assert report.check("time.cadence").status == "passed"
    assert report.check("key.unique").status == "passed"


def test_freshness_against_now(tmp_path):
    contract = write(tmp_path, (SENSOR / "contract.yaml").read_text() + "freshness: {max_age: 15m}\n", "c.yaml")
    path = sensor_csv(tmp_path, [0, 10, 20])
    fresh = sensor_report(path, contract, now=datetime(2026, 11, 30, 12, 10, tzinfo=UTC))
    assert fresh.check("freshness").status == "passed"
    stale = sensor_report(path, contract, now=datetime(2026, 11, 30, 12, 40, tzinfo=UTC))
    check = stale.check("freshness")
    assert check.status == "failed" and check.examples[0]["age_s"] == 40 * 60 - 20
    assert check.clause == "max_age: 15m"


def test_completeness_reports_windows_and_gap_intervals(tmp_path):
    text = (SENSOR / "contract.yaml").read_text() + "completeness: {window: 1m, expected_count: per cadence}\n"
    contract = write(tmp_path, text, "c.yaml")
    full = sensor_report(sensor_csv(tmp_path, list(range(0, 120, 10))), contract)
    assert full.check("completeness").status == "passed"
    # 12:00:30 and 12:00:40 missing: the first minute holds 4 of 6 points
    gappy = sensor_report(sensor_csv(tmp_path, [0, 10, 20, 50, *range(60, 120, 10)]), contract)
    check = gappy.check("completeness")
    assert check.status == "failed" and check.failed_rows == 1
    assert check.examples[0]["expected"] == 6 and check.examples[0]["actual"] == 4
    assert check.examples[0]["gaps"] == [["2026-11-30T12:00:30Z", "2026-11-30T12:00:50Z"]]


def test_completeness_integer_count_per_window(tmp_path):
    text = (SENSOR / "contract.yaml").read_text() + "completeness: {window: 1m, expected_count: 5}\n"
    contract = write(tmp_path, text, "c.yaml")
    report = sensor_report(sensor_csv(tmp_path, [0, 10, 20, 30, 60, 70, 80, 90, 100, 110, 120]), contract)
    check = report.check("completeness")
    assert check.status == "failed" and check.examples[0]["actual"] == 4


OHLCV_HEADER = (
    "symbol,bar_start,open,high,low,close,volume,trade_count,adjusted,source_id,ingest_run_id,"
    "transform_version,revision"
)


def bars(tmp_path, instants: list[str]):
    lines = [OHLCV_HEADER] + [
        f"AAPL,{t},230.00,230.10,229.90,230.05,1000.0000,10,false,vendor,run,1.0.0,0" for t in instants
    ]
    return write(tmp_path, "\n".join(lines) + "\n", "bars.csv")


def test_sessions_from_the_exchange_calendar(tmp_path):
    # Friday 2026-11-27 is the half day after Thanksgiving: XNAS closes at 18:00 UTC; Monday opens 14:30 UTC.
    instants = [
        "2026-11-27T17:58:00.000Z",
        "2026-11-27T17:59:00.000Z",
        "2026-11-30T14:30:00.000Z",
        "2026-11-30T14:31:00.000Z",
    ]
    # the batch says it covers 17:58 Friday to 14:32 Monday: the weekend is not a gap inside a session
    covered = (datetime(2026, 11, 27, 17, 58, tzinfo=UTC), datetime(2026, 11, 30, 14, 32, tzinfo=UTC))
    report = validate(
        OHLCV / "contract.yaml", bars(tmp_path, instants), catalog=OHLCV / "catalog.yaml", now=NOW, coverage=covered
    )
    assert report.check("time.session").status == "passed"
    assert report.check("time.cadence").status == "passed"
    # without --from/--to both sessions count whole: Friday's first bars and Monday's last are missing
    report = validate(OHLCV / "contract.yaml", bars(tmp_path, instants), catalog=OHLCV / "catalog.yaml", now=NOW)
    cadence = report.check("time.cadence")
    assert cadence.failed_rows == 2
    assert [(e["edge"], e["missing"]) for e in cadence.examples] == [
        ("session start", ["2026-11-27T14:30:00Z", "2026-11-27T17:58:00Z"]),
        ("session end", ["2026-11-30T14:32:00Z", "2026-11-30T21:00:00Z"]),
    ]
    late = [*instants[:2], "2026-11-27T18:00:00.000Z", "2026-11-26T15:00:00.000Z"]  # after close; Thanksgiving
    report = validate(OHLCV / "contract.yaml", bars(tmp_path, late), catalog=OHLCV / "catalog.yaml", now=NOW)
    session = report.check("time.session")
    assert session.failed_rows == 2
    assert [e["bar_start"] for e in session.examples] == ["2026-11-26T15:00:00Z", "2026-11-27T18:00:00Z"]


def test_session_check_needs_a_calendar(tmp_path):
    path = bars(tmp_path, ["2026-11-30T14:30:00.000Z"])
    report = validate(OHLCV / "contract.yaml", path, now=NOW)  # no catalog: no venue calendar
    assert report.check("time.session").status == "error"
    named = (
        (OHLCV / "contract.yaml")
        .read_text()
        .replace("session boundaries defined per venue calendar", "session boundaries defined by calendar XNYS")
    )
    report = validate(parse_contract(named, "c.yaml"), path, now=NOW)
    assert report.check("time.session").status == "passed"


def test_a_zero_cadence_tolerance_is_exact(tmp_path):
    # a logger that stamps exactly every 10 s: '+/-0s' says any drift at all is a fault
    exact = (SENSOR / "contract.yaml").read_text().replace("tolerance +/-10% of interval", "tolerance +/-0s")
    contract = write(tmp_path, exact, "exact.yaml")
    assert parse_contract(exact, "exact.yaml").time.cadence.tolerance.amount == 0
    ok = sensor_report(sensor_csv(tmp_path, [0, 10, 20, 30]), contract)
    assert ok.check("time.cadence").status == "passed"
    drift = sensor_report(sensor_csv(tmp_path, [0, 10, 20.001, 30]), contract).check("time.cadence")
    assert drift.status == "failed" and drift.failed_rows == 2
