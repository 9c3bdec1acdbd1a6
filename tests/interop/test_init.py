"""tscontract init: a draft contract and catalog from a sample, that lints and validates its sample."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import run_cli
from tests.engines.conftest import OHLCV, SENSOR
from tscontract import load_catalog, load_contract
from tscontract.errors import InputError
from tscontract.interop.infer import infer

NOW = "2026-11-30T21:05:00Z"


def init(tmp_path, *data, extra=()):
    out = tmp_path / "draft.yaml"
    done = run_cli("init", *data, "-o", out, "--format", "json", *extra)
    return done, out, tmp_path / "catalog.yaml"


def test_sensor_sample_drafts_a_contract_and_catalog_that_pass_their_sample(tmp_path):
    done, out, catalog = init(tmp_path, SENSOR / "data" / "good.csv")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["key"] == ["series_id", "event_ts"]
    contract = load_contract(out)
    assert contract.fields["event_ts"].type.text == "timestamp_ms_utc" and contract.time.precision == "ms"
    value = contract.fields["value"]
    assert value.type.text == "decimal(9,4)" and value.nullable is True  # 8.4345: 4 places; one null
    assert "4 fraction digits" in value.note and "1 null" in value.note
    # intervals differ per series: 10 s for two, 60 s for the flow meter, in the catalog
    assert contract.time.cadence is not None and contract.time.cadence.source == "catalog"
    cadences = {k: v.cadence.text for k, v in load_catalog(catalog).series.items()}
    assert cadences == {"F-310.inlet_flow": "1m", "P-101.discharge_pressure": "10s", "T-204.bearing_temp": "10s"}
    # provenance columns and calibrations (the id in force from its first point) come from the sample
    assert list(contract.provenance_required) == [
        "source_id",
        "ingest_run_id",
        "transform_version",
        "revision",
        "calibration_id",
    ]
    calibrations = load_catalog(catalog).series["P-101.discharge_pressure"].calibrations
    assert [(c.id, c.valid_to is not None) for c in calibrations] == [
        ("CAL-P101-2026A", True),
        ("CAL-P101-2026B", False),
    ]
    lint = run_cli("lint", out, "--catalog", catalog, "--format", "json")
    assert lint.returncode in (0, 1) and not [
        f for f in json.loads(lint.stdout)["findings"] if f["severity"] == "error"
    ]
    checked = run_cli("validate", out, SENSOR / "data" / "good.csv", "--catalog", catalog, "--now", NOW)
    assert checked.returncode == 0, checked.stdout


def test_bars_sample_finds_the_revision_in_the_key_and_a_one_minute_cadence(tmp_path):
    done, out, catalog = init(tmp_path, OHLCV / "data" / "good.csv")
    assert done.returncode == 0, done.stderr
    contract = load_contract(out)
    assert list(contract.key) == ["symbol", "bar_start", "revision"]  # a restated bar repeats (symbol, bar_start)
    assert contract.fields["volume"].type.text == "decimal(11,4)" and contract.fields["adjusted"].type.text == "bool"
    assert contract.fields["trade_count"].nullable is True and contract.time.cadence.interval.seconds == 60
    assert not catalog.exists()  # one interval for every series: nothing per series
    checked = run_cli("validate", out, OHLCV / "data" / "good.csv", "--now", NOW)
    assert checked.returncode == 0, checked.stdout
    # the draft is strict: the known-bad file fails it
    assert run_cli("validate", out, OHLCV / "data" / "bad.csv", "--now", NOW).returncode == 1


def test_parquet_types_units_from_suffixes_and_bounds(tmp_path):
    minutes = [f"2026-03-29T00:{m:02d}:00Z" for m in range(0, 30, 5)]
    table = pa.table(
        {
            "sensor": pa.array(["boiler-1"] * 6 + ["boiler-2"] * 6),
            "ts": pa.array([*minutes, *minutes], pa.string()).cast(pa.timestamp("ms", tz="UTC")),
            "pressure_kpa": pa.array([101.3, 101.5, 101.2, 101.8, 101.1, 101.4] * 2, pa.float64()),
        }
    )
    path = tmp_path / "boilers.parquet"
    pq.write_table(table, path)
    draft = infer([path], name="boilers")
    by_name = {c.name: c for c in draft.columns}
    assert by_name["pressure_kpa"].type == "float64" and by_name["pressure_kpa"].unit == "kPa"
    assert by_name["ts"].type == "timestamp_s_utc"  # whole seconds: the coarsest precision that holds them
    assert draft.key == ["sensor", "ts"] and draft.cadence == "5m"
    # the 1st to 99th percentile, [101.105, 101.785], widened by that range on each side, rounded outward
    assert draft.catalog["boiler-1"]["hard_bounds"] == ["100.424", "102.466"]
    out = tmp_path / "boilers.yaml"
    assert run_cli("init", path, "-o", out).returncode == 0
    assert run_cli("validate", out, path, "--catalog", tmp_path / "catalog.yaml", "--now", NOW).returncode == 0


def test_refusals_are_one_line(tmp_path):
    naive = tmp_path / "naive.csv"
    naive.write_text("sensor,ts,value\nA,2026-03-29 01:00:00,1.5\nA,2026-03-29 01:05:00,1.6\n")
    with pytest.raises(InputError, match="without a UTC offset"):
        infer([naive], name="x")
    two = tmp_path / "two.csv"
    two.write_text("sensor,ts,seen,value\nA,2026-03-29T01:00:00Z,2026-03-29T01:00:03Z,1.5\n")
    with pytest.raises(InputError, match=r"--time-column.*ts, seen"):
        infer([two], name="x")
    assert infer([two], name="x", time_column="ts").time_column == "ts"
    first, out, _ = init(tmp_path, OHLCV / "data" / "good.csv")
    assert first.returncode == 0
    again = run_cli("init", OHLCV / "data" / "good.csv", "-o", out)
    assert again.returncode == 2 and "exists; --force" in again.stderr and len(again.stderr.splitlines()) == 1


# ---------------------------------------------------------------- exchange sessions

NEW_YORK, LONDON = ZoneInfo("America/New_York"), ZoneInfo("Europe/London")
THANKSGIVING, BLACK_FRIDAY = date(2026, 11, 26), date(2026, 11, 27)


def _bars(
    path, first: date, last: date, symbols: dict[str, tuple[ZoneInfo, time, time]], skip_minutes: int = 0
) -> None:
    """5-minute bars as a vendor delivers them, written from the venue's published hours (not from a
    calendar library): New York 09:30-16:00 with Thanksgiving closed and the day after closing at
    13:00; London 08:00-16:30. US clocks change on 1 November, UK clocks on 25 October."""
    header = "symbol,bar_start,close_usd,volume,source_id,ingest_run_id,transform_version,revision\n"
    lines = []
    for symbol, (zone, opens, closes) in symbols.items():
        day = first
        while day <= last:
            if day.weekday() < 5 and not (zone is NEW_YORK and day == THANKSGIVING):
                close = time(13, 0) if zone is NEW_YORK and day == BLACK_FRIDAY else closes
                bar = datetime.combine(day, opens, zone) + timedelta(minutes=skip_minutes if day == first else 0)
                end = datetime.combine(day, close, zone)
                i = 0
                while bar < end:
                    stamp = bar.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
                    lines.append(f"{symbol},{stamp},{229.5 + i % 7 / 100:.4f},{100 + i % 13},vendorA,run-1,v1,0\n")
                    bar += timedelta(minutes=5)
                    i += 1
            day += timedelta(days=1)
    path.write_text(header + "".join(lines))


def test_bars_inside_exchange_sessions_get_the_session_cadence_and_calendar(tmp_path):
    sample = tmp_path / "bars.csv"
    ny = (NEW_YORK, time(9, 30), time(16, 0))
    _bars(sample, date(2026, 10, 29), date(2026, 11, 30), {"AAPL": ny, "MSFT": ny})
    text = sample.read_text()
    assert "2026-10-30T13:30:00.000Z" in text and "2026-11-02T14:30:00.000Z" in text  # the DST change
    assert "2026-11-26T" not in text and "2026-11-27T17:55:00.000Z" in text  # holiday, early close
    done, out, catalog = init(tmp_path, sample)
    assert done.returncode == 0, done.stderr
    contract = load_contract(out)
    assert contract.time.cadence.text == "5m within session; no bars outside session"
    assert contract.time.calendar == "XNYS" and not catalog.exists()
    note = out.read_text().split("calendar: XNYS   # ")[1].splitlines()[0]
    # the evidence: every bar inside, every session whole; XNAS keeps the same sessions; Toronto
    # (same hours, open on US Thanksgiving and all day after it) is next
    assert note.startswith("XNYS: 3360 of 3360 bars inside its regular sessions, 44 of 44 sessions whole (2 series)")
    assert "XNAS fits equally" in note and "next best XTSE: 3360 of 3360 bars inside, 42 of 46 sessions whole" in note
    lint = run_cli("lint", out, "--format", "json")
    assert not [f for f in json.loads(lint.stdout)["findings"] if f["severity"] == "error"], lint.stdout
    checked = run_cli("validate", out, sample, "--now", "2026-11-30T21:05:00Z")
    assert checked.returncode == 0, checked.stdout[-3000:]
    late = tmp_path / "late.csv"  # a bar after the early close of the day after Thanksgiving
    late.write_text(text + "AAPL,2026-11-27T18:30:00.000Z,229.5000,100,vendorA,run-1,v1,0\n")
    failed = run_cli("validate", out, late, "--now", "2026-11-30T21:05:00Z", "--format", "json")
    statuses = {c["id"]: c["status"] for c in json.loads(failed.stdout)["checks"]}
    assert failed.returncode == 1 and statuses["time.session"] == "failed"


def test_series_on_different_venues_get_their_calendars_in_the_catalog(tmp_path):
    sample = tmp_path / "bars.csv"
    venues = {"AAPL": (NEW_YORK, time(9, 30), time(16, 0)), "VOD": (LONDON, time(8, 0), time(16, 30))}
    _bars(sample, date(2026, 10, 22), date(2026, 11, 4), venues)
    done, out, catalog = init(tmp_path, sample)
    assert done.returncode == 0, done.stderr
    contract = load_contract(out)
    assert contract.time.cadence.text == "5m within session; no bars outside session"
    assert contract.time.calendar is None
    series = load_catalog(catalog).series
    assert (series["AAPL"].calendar, series["VOD"].calendar) == ("XNYS", "XLON")
    checked = run_cli("validate", out, sample, "--catalog", catalog, "--now", "2026-11-04T21:05:00Z")
    assert checked.returncode == 0, checked.stdout[-3000:]


def test_a_partial_first_session_stays_irregular_with_the_calendar_in_the_note(tmp_path):
    sample = tmp_path / "bars.csv"
    _bars(sample, date(2026, 11, 2), date(2026, 11, 6), {"AAPL": (NEW_YORK, time(9, 30), time(16, 0))}, 30)
    draft = infer([sample], name="bars")
    assert draft.cadence == "irregular" and draft.calendar is None
    # the sample starts at 10:00: cadence within session would report the first session's edge as a hole
    assert "closest exchange calendar XNYS: 384 of 384 bars inside its regular sessions, 4 of 5 sessions whole" in (
        draft.cadence_note
    )


# ---------------------------------------------------------------- plausibility bounds and sets


def test_plausibility_bounds_warn_on_the_spike_and_text_sets_become_enums(tmp_path):
    sample = tmp_path / "boilers.csv"
    lines = ["sensor,ts,pressure_kpa,status,feed,source_id,ingest_run_id,transform_version,revision"]
    start = datetime(2026, 3, 29, 0, 0, tzinfo=UTC)
    for sensor, base in (("boiler-1", 101.3), ("boiler-2", 240.0)):
        for i in range(200):
            value = 103.3 if (sensor, i) == ("boiler-1", 150) else base + ((i * 37) % 17 - 8) / 10  # one spike
            status = "MAINT" if i % 17 == 0 else "OK"
            feed = "gas/LNG" if i % 2 else "gas/pipeline"
            stamp = (start + timedelta(seconds=30 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            lines.append(f"{sensor},{stamp},{value:.2f},{status},{feed},scada-1,run-9,v2,0")
    sample.write_text("\n".join(lines) + "\n")
    draft = infer([sample], name="boilers")
    entry = draft.catalog["boiler-1"]
    # the 1st to 99th percentile widened by itself (hard) and by half itself (plausible): the spike moves neither
    assert entry["hard_bounds"] == ["98.9", "103.7"]
    assert entry["plausibility_bounds"] == ["99.7", "102.9"]
    assert draft.catalog["boiler-2"]["plausibility_bounds"] == ["238.4", "241.6"]
    by_name = {c.name: c for c in draft.columns}
    assert by_name["status"].type == "enum[MAINT, OK]" and "2 distinct values in 400" in by_name["status"].note
    assert by_name["feed"].type == "string" and by_name["feed"].constraint == "in ('gas/LNG', 'gas/pipeline')"
    assert by_name["source_id"].type == "string"  # provenance: never a set
    out = tmp_path / "boilers.yaml"
    assert run_cli("init", sample, "-o", out).returncode == 0
    catalog = tmp_path / "catalog.yaml"
    lint = run_cli("lint", out, "--catalog", catalog, "--format", "json")
    assert not [f for f in json.loads(lint.stdout)["findings"] if f["severity"] == "error"], lint.stdout
    checked = run_cli("validate", out, sample, "--catalog", catalog, "--now", NOW, "--format", "json")
    assert checked.returncode == 0  # the spike is a warning, not a failure
    report = json.loads(checked.stdout)
    (plausible,) = [c for c in report["checks"] if "plausibility_bounds" in c["clause"]]
    assert (plausible["status"], plausible["severity"], plausible["failed_rows"]) == ("failed", "warning", 1)
    bad = tmp_path / "bad.csv"
    bad.write_text(sample.read_text().replace(",MAINT,gas/LNG,", ",TRIP,gas/LNG,", 1))
    assert run_cli("validate", out, bad, "--catalog", catalog, "--now", NOW).returncode == 1


# ---------------------------------------------------------------- samples whose gaps span two calendar years


def _hourly_weather_over_new_year(path):
    """Hourly airport temperatures from 28 December to 5 January with a six-hour outage on 2 January."""
    rows, moment, i = ["time,station,temp_c"], datetime(2023, 12, 28, tzinfo=UTC), 0
    while moment < datetime(2024, 1, 6, tzinfo=UTC):
        if not datetime(2024, 1, 2, 3, tzinfo=UTC) <= moment < datetime(2024, 1, 2, 9, tzinfo=UTC):
            rows.append(f"{moment:%Y-%m-%dT%H:%M:%SZ},KSEA,{5 + i % 7}.5")
        moment, i = moment + timedelta(hours=1), i + 1
    path.write_text("\n".join(rows) + "\n")


def _call_centre_first_week_of_january(path):
    """5-minute call counts, weekdays 07:00-21:00 New York time, from 2 January (the calendar margin reaches
    back into December)."""
    rows = ["time,queue,calls"]
    for day in range(2, 6):
        start = datetime(2024, 1, day, 7, tzinfo=NEW_YORK).astimezone(UTC)
        rows += [f"{start + timedelta(minutes=5 * k):%Y-%m-%dT%H:%M:%SZ},retail,{k % 9}" for k in range(14 * 12)]
    path.write_text("\n".join(rows) + "\n")


def test_a_regular_series_with_an_outage_keeps_its_interval_and_reports_the_gap(tmp_path):
    sample = tmp_path / "sample.csv"
    _hourly_weather_over_new_year(sample)
    draft = infer([sample], name="sample")
    assert draft.cadence == "1h" and draft.gap_count == 1
    assert [(g.after, g.before, g.missing) for g in draft.gaps] == [("2024-01-02T02:00:00Z", "2024-01-02T09:00:00Z", 6)]
    assert not any(word in draft.contract_yaml() for word in ("XNYS", "session", "bars"))  # no exchange fits


def test_a_sub_daily_sample_whose_gaps_span_two_years_drafts_an_irregular_cadence(tmp_path):
    # two years of sessions of every candidate calendar are more rows than go in as literals: they were
    # registered as Arrow while the span query's result was still open ("unfinished result", internal error)
    sample = tmp_path / "sample.csv"
    _call_centre_first_week_of_january(sample)
    draft = infer([sample], name="sample")
    assert draft.cadence == "irregular"
    # the sessions were tried over both years; the calls stand outside every exchange's hours: none is named
    assert not [w for w in ("XNYS", "exchange", "session") if w in draft.cadence_note], draft.cadence_note
    done = init(tmp_path, sample)[0]
    assert done.returncode == 0, done.stderr
