"""Raw vendor files, validated and gated through their mappings (examples/vendors/).

Each shape copies a real public download: Alpha Vantage intraday bars (naive New York
times, newest first, extended hours, across the DST change and Thanksgiving), Yahoo daily
bars (one per session, float-printed prices), the NAB machine-temperature file (a device's
local clock across both DST changes) and the UCI AirQuality file (';', decimal commas,
-200 for missing, date and time columns, the Rome clock). Each has a file with injected
defects that must be caught, with exact findings. Everything runs the real CLI.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, run_cli
from tscontract.gate.store import DuckDBStore

VENDORS = EXAMPLES / "vendors"
INTRADAY = VENDORS / "intraday_bars"
DAILY = VENDORS / "daily_bars"
NAB = VENDORS / "machine_temperature"


def validate(shape: Path, *data: str, contract: str = "contract.yaml", catalog: str = "catalog.yaml", **extra: str):
    args = [shape / contract, *(shape / "data" / d for d in data), "--catalog", shape / catalog]
    args += ["--mapping", shape / "mapping.yaml", "--format", "json"]
    for option, value in extra.items():
        args += [f"--{option}", value]
    done = run_cli("validate", *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def ingest(tmp_path: Path, shape: Path, *data: str, contract: str = "contract.yaml", catalog: str = "catalog.yaml"):
    store = tmp_path / "warehouse.duckdb"
    done = run_cli(
        "ingest",
        shape / contract,
        *(shape / "data" / d for d in data),
        "--store",
        store,
        "--catalog",
        shape / catalog,
        "--mapping",
        shape / "mapping.yaml",
        "--now",
        "2026-12-31T23:00:00Z",
        "--format",
        "json",
    )
    assert done.returncode in (0, 1), done.stderr
    opened = DuckDBStore(str(store))
    try:
        return done.returncode, json.loads(done.stdout), opened.query
    finally:
        pass


def failed(report: dict[str, Any]) -> dict[str, int]:
    return {c["id"]: c["failed_rows"] for c in report["checks"] if c["status"] != "passed"}


def examples(report: dict[str, Any], check_id: str) -> list[dict[str, Any]]:
    return next(c["examples"] for c in report["checks"] if c["id"] == check_id)


# ---------------------------------------------------------------- Alpha Vantage intraday bars
def test_intraday_bars_of_every_size_pass_across_dst_thanksgiving_and_the_half_day():
    code, report = validate(INTRADAY, "AAPL_5min.csv", contract="contract_5min.yaml", catalog="catalog_5min.yaml")
    assert (code, report["rows"], failed(report)) == (0, 960, {})  # 5 sessions of 192 bars, 04:00-20:00
    assert report["conversion"] == {
        "mapping": "alpha_vantage_intraday",
        "transform_version": "1.0.0",
        "rows_read": 960,
        "dropped": [],
    }
    # Wednesday, then Friday's half day (extended hours until 17:00): 960 + 780 one-minute bars
    code, report = validate(INTRADAY, "AAPL_1min.csv", contract="contract_1min.yaml", catalog="catalog_1min.yaml")
    assert (code, report["rows"], failed(report)) == (0, 1740, {})
    # two files, the symbol of each from its name
    code, report = validate(
        INTRADAY, "AAPL_60min.csv", "MSFT_60min.csv", contract="contract_60min.yaml", catalog="catalog_60min.yaml"
    )
    assert (code, report["rows"], failed(report)) == (0, 922, {})


def test_intraday_defects_are_caught(tmp_path):
    code, report = validate(INTRADAY, "bad/AAPL_5min.csv", contract="contract_5min.yaml", catalog="catalog_5min.yaml")
    assert code == 1
    assert failed(report) == {"field.bar_start.type": 1, "key.unique": 2, "time.cadence": 2, "time.session": 1}
    assert examples(report, "field.bar_start.type") == [
        {
            "row": 191,
            "symbol": "AAPL",
            "bar_start": "11/02/2026 04:05",
            "reason": "'11/02/2026 04:05' does not match '%Y-%m-%d %H:%M:%S'",
        }
    ]
    assert examples(report, "key.unique") == [
        {"rows": [2, 3], "symbol": "AAPL", "bar_start": "2026-11-03T00:50:00Z", "count": 2}  # file lines 3 and 4
    ]
    # 10:00 New York (15:00Z, standard time) never delivered; 04:05 there but unreadable
    assert [(e["previous"], e["bar_start"]) for e in examples(report, "time.cadence")] == [
        ("2026-11-02T09:00:00Z", "2026-11-02T09:10:00Z"),
        ("2026-11-02T14:55:00Z", "2026-11-02T15:05:00Z"),
    ]
    assert examples(report, "time.session") == [
        {"symbol": "AAPL", "bar_start": "2026-11-02T08:55:00Z", "calendar": "XNAS"}  # 03:55, before 04:00
    ]
    code, result, query = ingest(
        tmp_path, INTRADAY, "bad/AAPL_5min.csv", contract="contract_5min.yaml", catalog="catalog_5min.yaml"
    )
    assert (code, result["rows_in"], result["published"], result["quarantined"]) == (1, 193, 189, 4)
    assert result["row_failures"] == {"field.bar_start.type": 1, "key.unique": 2, "time.session": 1}
    assert result["reported"] == ["time.cadence"]
    # the quarantined record keeps the vendor's text
    record = query("SELECT _record FROM intraday_bars_5min__quarantine WHERE _checks LIKE '%type%'")[0][0]
    assert json.loads(record)["timestamp"] == "11/02/2026 04:05"


def test_intraday_ingest_puts_new_york_bars_on_utc_across_the_dst_change(tmp_path):
    code, result, query = ingest(
        tmp_path, INTRADAY, "AAPL_5min.csv", contract="contract_5min.yaml", catalog="catalog_5min.yaml"
    )
    assert (code, result["published"], result["quarantined"]) == (0, 960, 0)
    opens = query(
        "SELECT strftime(min(bar_start), '%Y-%m-%dT%H:%MZ') FROM intraday_bars_5min "
        "GROUP BY CAST(bar_start - INTERVAL 4 HOUR AS DATE) ORDER BY 1"
    )
    # 04:00 New York: 08:00Z in daylight time (to 2026-10-30), 09:00Z after 2026-11-01
    assert [r[0] for r in opens] == [
        "2026-10-29T08:00Z",
        "2026-10-30T08:00Z",
        "2026-11-02T09:00Z",
        "2026-11-03T09:00Z",
        "2026-11-04T09:00Z",
    ]
    assert query("SELECT DISTINCT source_id, transform_version FROM intraday_bars_5min") == [("alpha-vantage", "1.0.0")]


# ---------------------------------------------------------------- Yahoo daily bars
def test_daily_bars_one_per_session_pass(tmp_path):
    code, report = validate(DAILY, "AAPL.csv", "MSFT.csv")
    assert (code, report["rows"], failed(report)) == (0, 128, {})  # 64 sessions in Q4 2026, per symbol
    code, result, query = ingest(tmp_path, DAILY, "AAPL.csv")
    assert (code, result["published"]) == (0, 64)
    rows = query(
        "SELECT strftime(session_date, '%Y-%m-%dT%H:%MZ'), open, adj_close FROM daily_bars "
        "WHERE session_date::DATE IN ('2026-10-30', '2026-11-27') ORDER BY 1"
    )
    # 00:00 New York of the session date; 228.789998 as Yahoo prints it, rounded half-even to the cent
    assert [(r[0], r[1]) for r in rows] == [
        ("2026-10-30T04:00Z", Decimal("228.79")),
        ("2026-11-27T05:00Z", Decimal("234.57")),
    ]
    assert rows[1][2] == Decimal("237.010008")  # the adjusted close as delivered


def test_daily_defects_are_caught(tmp_path):
    code, report = validate(DAILY, "bad/AAPL.csv")
    assert code == 1
    assert failed(report) == {
        "field.open.nullable": 1,
        "key.unique": 2,
        "time.cadence": 1,
        "time.session": 1,
        "completeness": 1,  # the week of the missing session holds 4 of its 5
    }
    assert examples(report, "time.cadence") == [
        {
            "symbol": "AAPL",
            "session_date": "2026-11-18T05:00:00Z",
            "session": "2026-11-18",
            "missing": "no point stamped at this session",
        }
    ]
    # Thanksgiving: the vendor carried a bar forward into a closed day
    assert examples(report, "time.session") == [
        {"symbol": "AAPL", "session_date": "2026-11-26T05:00:00Z", "calendar": "XNAS"}
    ]
    assert examples(report, "key.unique")[0]["session_date"] == "2026-11-19T05:00:00Z"
    week = examples(report, "completeness")[0]
    assert (week["expected"], week["actual"]) == (5, 4)
    assert week["window_start"] <= "2026-11-18T05:00:00Z" < week["window_end"]
    assert examples(report, "field.open.nullable")[0]["row"] == 11  # 'null', as Yahoo writes it
    code, result, _ = ingest(tmp_path, DAILY, "bad/AAPL.csv")
    assert (code, result["published"], result["quarantined"]) == (1, 7, 4)


def test_daily_profile_and_html_from_raw_files(tmp_path):
    bounds = tmp_path / "bounds.yaml"
    done = run_cli(
        "profile",
        DAILY / "contract.yaml",
        DAILY / "data" / "AAPL.csv",
        DAILY / "data" / "MSFT.csv",
        "--catalog",
        DAILY / "catalog.yaml",
        "--mapping",
        DAILY / "mapping.yaml",
        "--out",
        bounds,
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["fields"]["open"] == 2  # AAPL and MSFT, from the file names
    assert "p50: '229.39'" in bounds.read_text()  # rounded to the cent before profiling
    html = tmp_path / "report.html"
    code, _ = validate(DAILY, "bad/AAPL.csv", html=str(html))
    assert code == 1
    page = html.read_text()
    assert "AAPL" in page and "2026-11-26" in page  # the converted session dates are plotted


def test_spark_refuses_a_mapping_in_one_line():
    done = run_cli(
        "validate",
        DAILY / "contract.yaml",
        DAILY / "data" / "AAPL.csv",
        "--mapping",
        DAILY / "mapping.yaml",
        "--engine",
        "spark",
    )
    assert done.returncode == 2
    assert done.stderr == "error: a mapping converts raw files in DuckDB: validate them with --engine duckdb\n"


# ---------------------------------------------------------------- NAB machine temperature
def test_machine_temperature_across_both_dst_changes(tmp_path):
    code, report = validate(NAB, "machine_M17_2026-03-08.csv")
    assert (code, report["rows"], failed(report)) == (0, 277, {})  # 02:00-02:55 absent: they do not exist
    code, result, query = ingest(tmp_path, NAB, "machine_M17_2026-11-01.csv")
    assert (code, result["published"], result["quarantined"]) == (0, 301, 0)
    # 01:00-01:55 written twice, in order: daylight time first (06:xxZ), then standard time (07:xxZ)
    rows = query(
        "SELECT strftime(ts, '%H:%MZ'), temperature_degf FROM machine_temperature "
        "WHERE ts BETWEEN '2026-11-01 05:55:00+00' AND '2026-11-01 08:00:00+00' ORDER BY ts"
    )
    every_5_min = [f"{h:02d}:{m:02d}Z" for h in (5, 6, 7) for m in range(0, 60, 5)]
    assert [r[0] for r in rows] == [*every_5_min[11:], "08:00Z"]
    lines = (NAB / "data" / "machine_M17_2026-11-01.csv").read_text().splitlines()
    first, second = [line for line in lines if line.startswith("2026-11-01 01:30:00")]
    assert query("SELECT temperature_degf FROM machine_temperature WHERE ts = '2026-11-01 06:30:00+00'")[0][0] == (
        Decimal(first.split(",")[1]).quantize(Decimal("0.0001"))
    )
    assert query("SELECT temperature_degf FROM machine_temperature WHERE ts = '2026-11-01 07:30:00+00'")[0][0] == (
        Decimal(second.split(",")[1]).quantize(Decimal("0.0001"))
    )


def test_machine_temperature_clock_that_did_not_spring_forward(tmp_path):
    code, report = validate(NAB, "bad/machine_M17_2026-03-08.csv")
    assert (code, failed(report)) == (1, {"field.ts.type": 12})
    assert examples(report, "field.ts.type")[0] == {
        "row": 25,
        "machine_id": "M17",
        "ts": "2026-03-08 02:00:00",
        "reason": "local time 2026-03-08 02:00:00 does not exist in America/Chicago (skipped when clocks go "
        "forward; the mapping may say nonexistent: shift_forward)",
    }
    code, result, query = ingest(tmp_path, NAB, "bad/machine_M17_2026-03-08.csv")
    assert (code, result["published"], result["quarantined"]) == (1, 37, 12)
    rows = query("SELECT _record, _checks, _clauses FROM machine_temperature__quarantine ORDER BY _row")
    # each quarantined row as written, and the mapping's reason in place of the type clause
    assert [json.loads(r[0])["timestamp"] for r in rows] == [f"2026-03-08 02:{m:02d}:00" for m in range(0, 60, 5)]
    assert {r[1] for r in rows} == {'["field.ts.type"]'}
    assert json.loads(rows[0][2]) == [
        "local time 2026-03-08 02:00:00 does not exist in America/Chicago (skipped when clocks go forward; "
        "the mapping may say nonexistent: shift_forward)"
    ]


# ---------------------------------------------------------------- UCI air quality
AIR = VENDORS / "air_quality"


def test_air_quality_semicolons_decimal_commas_sentinels_and_the_rome_clock(tmp_path):
    code, report = validate(AIR, "AirQualityUCI.csv")
    assert (code, report["rows"], failed(report)) == (0, 145, {})  # 2026-10-22 18:00 to 10-28 17:00, 02:00 twice
    # the header names 15 of 17 columns (column16, column17 by position, dropped by the mapping); the
    # three empty lines at the end: dropped, counted
    assert report["conversion"]["rows_read"] == 148
    assert report["conversion"]["dropped"] == [{"id": "mapping.filter", "clause": "Date IS NOT NULL", "rows": 3}]
    code, result, query = ingest(tmp_path, AIR, "AirQualityUCI.csv")
    assert (code, result["rows_in"], result["published"], result["quarantined"], result["dropped"]) == (
        0,
        148,
        145,
        0,
        3,
    )
    run = json.loads(query("SELECT checks FROM tscontract_runs")[0][0])
    assert run["mapping.filter"] == {"status": "dropped", "failed_rows": 3, "clause": "Date IS NOT NULL"}
    rows = query(
        "SELECT strftime(ts, '%Y-%m-%dT%H:%MZ'), co_mg_m3, nmhc_ug_m3, c6h6_ug_m3, t_degc, ah_g_m3 "
        "FROM air_quality_hourly WHERE ts BETWEEN '2026-10-24 22:00:00+00' AND '2026-10-25 02:00:00+00' ORDER BY ts"
    )
    # Rome: 01:00 CEST is 23:00Z; 02:00 is written twice (00:00Z, then 01:00Z); 03:00 CET is 02:00Z
    assert [r[0] for r in rows] == [
        "2026-10-24T22:00Z",
        "2026-10-24T23:00Z",
        "2026-10-25T00:00Z",
        "2026-10-25T01:00Z",
        "2026-10-25T02:00Z",
    ]
    assert rows[2][1:] == (Decimal("2.6"), None, Decimal("25.3"), Decimal("16.3"), Decimal("1.6739"))  # -200: null
    assert rows[3][1] == Decimal("9.7")
    # the analyser calibrates at 04:00: CO(GT) -200, so null; nullable in the contract
    assert query("SELECT co_mg_m3, nox_ppb FROM air_quality_hourly WHERE ts = '2026-10-23 02:00:00+00'") == [
        (None, None)
    ]


def test_air_quality_defects_are_caught(tmp_path):
    code, report = validate(AIR, "bad/AirQualityUCI.csv")
    assert code == 1
    assert failed(report) == {"field.ts.type": 1, "field.t_degc.type": 1, "invariants[1]": 1, "time.cadence": 1}
    assert [(e["row"], e["reason"]) for e in examples(report, "field.ts.type")] == [
        (4, "'31/09/2026 21.00.00' does not match '%d/%m/%Y %H.%M.%S'")  # September has 30 days; data row 4
    ]
    assert [(e["row"], e["t_degc"], e["reason"]) for e in examples(report, "field.t_degc.type")] == [
        (6, "18.0", "'18.0' has '.' where the mapping's decimal separator is ','")
    ]
    assert examples(report, "invariants[1]")[0]["rh_percent"] == "-999.0"  # an unlisted sentinel, at decimal(4,1)
    code, result, _ = ingest(tmp_path, AIR, "bad/AirQualityUCI.csv")
    assert (code, result["rows_in"], result["published"], result["quarantined"], result["dropped"]) == (
        1,
        25,
        21,
        3,
        1,
    )


def test_the_vendor_files_are_what_the_generator_writes(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("vendor_generate", VENDORS / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.HERE = tmp_path
    for write_files in (
        generator.intraday_files,
        generator.daily_files,
        generator.nab_files,
        generator.uci_files,
        generator.cgm_files,
    ):
        write_files()
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.csv"))
    committed = sorted(p.relative_to(VENDORS) for p in VENDORS.rglob("*.csv"))
    assert written == committed and len(written) == 15
    for name in written:
        assert (tmp_path / name).read_bytes() == (VENDORS / name).read_bytes(), name
    assert sum((VENDORS / name).stat().st_size for name in written) < 400_000  # small fixtures


# ---------------------------------------------------------------- CGM glucose (issue 32: sentinels)
CGM = VENDORS / "cgm_glucose"


def test_cgm_flags_are_published_on_both_stores(store_spec):
    """40 (LOW), 400 (HIGH), nil and the warm-up's empty cells: null values with their flag, published."""
    from datetime import UTC, datetime

    from tests.gate.conftest import open_spec
    from tscontract import load_contract
    from tscontract.engines.inputs.mapping import load_mapping
    from tscontract.gate.ingest import ingest

    store = open_spec(store_spec)
    try:
        result = ingest(
            load_contract(CGM / "contract.yaml"),
            [CGM / "data" / "cgm_8G1234.csv"],
            store,
            mapping=load_mapping(CGM / "mapping.yaml"),
            now=datetime(2026, 1, 13, 12, tzinfo=UTC),
        )
        assert (result.published, result.quarantined) == (312, 0)
        rows = store.query(
            "SELECT glucose_flag, count(*), count(glucose_mg_dl), min(glucose_mg_dl), max(glucose_mg_dl) "
            "FROM cgm_glucose GROUP BY glucose_flag ORDER BY glucose_flag"
        )
    finally:
        store.close()
    assert [tuple(r) for r in rows] == [
        ("above_range", 3, 0, None, None),
        ("below_range", 5, 0, None, None),
        ("no_reading", 6, 0, None, None),
        ("warming_up", 24, 0, None, None),
        (None, 274, 274, 77, 162),
    ]


def test_cgm_profile_sees_no_sentinel(tmp_path):
    bounds = tmp_path / "bounds.yaml"
    args = [CGM / "contract.yaml", CGM / "data" / "cgm_8G1234.csv", "--mapping", CGM / "mapping.yaml"]
    done = run_cli("profile", *args, "--out", bounds)
    assert done.returncode == 0, done.stderr
    assert "count: 274" in bounds.read_text()  # the 38 flagged rows have no value to profile
