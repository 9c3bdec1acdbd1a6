"""Monthly, quarterly and 5-yearly series with calendar cadences, on DuckDB against the reference (#32).

The named series plant gaps across leap years, month ends and DST (Europe/Berlin, America/New_York)
and assert exactly those are found; the generated cases check every finding of the engine against
:mod:`tscontract.contract.calendar_time`. The other engines run the same cases in
``test_calendar_cadence_parity.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, example, given, settings

from tests.contract.clause_batches import DEEP
from tests.engines.calendar_cases import SCHEMA, Case, cases, engine_findings, per_case, reference_findings
from tests.engines.calendar_cases import panel_contract as contract
from tscontract import parse_contract, validate
from tscontract.contract.calendar_time import CalendarStep

BATCH = 5  # cases per validate: 300 cases in the deep profile, 40 in the fast one
CASES = settings(
    max_examples=60 if DEEP else 8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def run(text: str, points: dict[str, list[datetime]], now: datetime, **options: object) -> dict[str, object]:
    rows = [{"series_id": s, "ts": t, "value": 1.0} for s, ts in points.items() for t in ts]
    report = validate(parse_contract(text), pa.Table.from_pylist(rows, schema=SCHEMA), now=now, examples=50, **options)
    return {c.id: c for c in report.checks}


def test_a_monthly_month_end_series_in_berlin_finds_the_missing_leap_day_and_nothing_else() -> None:
    step = CalendarStep(1, "end")
    months = range(2023 * 12, 2025 * 12)  # Jan 2023 .. Dec 2024: 00:00 Berlin, 23:00Z or 22:00Z the day before
    missing = {2024 * 12 + 1, 2024 * 12 + 9}  # 2024-02-29 and 2024-10-31 (the day of a DST change week)
    points = {"DE": [step.at(k, "Europe/Berlin") for k in months if k not in missing]}
    points["FR"] = [step.at(k, "Europe/Berlin") for k in months]
    extra = "completeness: {window: 1 year, expected_count: per cadence}\nfreshness: {max_age: 2 months}\n"
    checks = run(contract("1 month; anchored at month end", "Europe/Berlin", extra), points, utc(2025, 2, 27))
    cadence, completeness = checks["time.cadence"], checks["completeness"]
    assert [(e["ts"], e["previous"], e["missing_periods"]) for e in cadence.examples] == [
        ("2024-03-30T23:00:00Z", "2024-01-30T23:00:00Z", 1),
        ("2024-11-29T23:00:00Z", "2024-09-29T22:00:00Z", 1),
    ]
    assert [
        (e["series_id"], e["window_start"], e["expected"], e["actual"], e["missing"]) for e in completeness.examples
    ] == [("DE", "2023-12-31T23:00:00Z", 12, 10, ["2024-02-28T23:00:00Z", "2024-10-30T23:00:00Z"])]
    # Dec 31 00:00 + 2 months is Feb 28 00:00 Berlin (the day clamped to February's last): 2025-02-27T23:00Z
    assert checks["freshness"].status == "passed"
    stale = run(contract("1 month; anchored at month end", "Europe/Berlin", extra), points, utc(2025, 2, 27, 23, 1))
    assert stale["freshness"].failed_rows == 2
    assert stale["freshness"].examples[0]["stale_since"] == "2025-02-27T23:00:00Z"


def test_a_quarterly_series_in_new_york_across_dst_with_from_to() -> None:
    step = CalendarStep(3, "start")
    quarters = [step.at(k, "America/New_York") for k in range(2023 * 4, 2025 * 4)]
    assert {q.hour for q in quarters} == {4, 5}  # EDT in April, July, October; EST in January
    planted = quarters[:4] + quarters[5:]  # 2024-01-01 missing
    planted.append(utc(2024, 7, 1))  # UTC midnight: 20:00 the day before in New York, off the calendar
    coverage = (utc(2022, 7, 1), utc(2025, 6, 1))
    extra = "completeness: {window: 1 year, expected_count: per cadence}\n"
    checks = run(
        contract("1 quarter; anchored at quarter start", "America/New_York", extra),
        {"US": planted},
        utc(2030, 1, 1),
        coverage=coverage,
    )
    found = [
        (e["ts"], e.get("edge", e.get("off_calendar", "gap")[:3]), e.get("missing_periods"))
        for e in checks["time.cadence"].examples
    ]
    assert found == [
        ("2022-07-01T04:00:00Z", "coverage start", 2),  # Jul and Oct 2022 before the first point
        ("2024-04-01T04:00:00Z", "gap", 1),  # the point after the gap
        ("2024-07-01T00:00:00Z", "not", None),
        ("2025-01-01T05:00:00Z", "coverage end", 2),  # Jan and Apr 2025, before --to
    ]
    short = [(e["window_start"], e.get("counted"), e["expected"], e["actual"]) for e in checks["completeness"].examples]
    assert short == [
        ("2022-01-01T05:00:00Z", ["2022-07-01T00:00:00Z", "2023-01-01T05:00:00Z"], 2, 0),
        ("2024-01-01T05:00:00Z", None, 4, 3),
        ("2025-01-01T05:00:00Z", ["2025-01-01T05:00:00Z", "2025-06-01T00:00:00Z"], 2, 0),
    ]


def test_a_five_yearly_panel_counts_years_not_hours() -> None:
    step = CalendarStep(60, "end", 1996 * 12)  # census years 2000, 2005 ... stamped Dec 31
    points = {c: [step.at(k, "UTC") for k in range(399, 405)] for c in ("AT", "BE", "CH")}
    points["BE"].remove(step.at(402, "UTC"))  # 2015 missing: the gap is reported at 2020
    text = contract(
        "5 years; anchored at year end; aligned to 2000; tolerance +/-12h",
        "UTC",
        "completeness: {window: 10 years, expected_count: per cadence}\n",
    )
    points["CH"] = [p + timedelta(hours=12) for p in points["CH"]]  # noon: within the tolerance
    checks = run(text, points, utc(2030, 1, 1))
    assert [(e["series_id"], e["ts"], e["missing_periods"]) for e in checks["time.cadence"].examples] == [
        ("BE", "2020-12-31T00:00:00Z", 1)
    ]
    assert [
        (e["series_id"], e["window_start"], e["expected"], e["actual"]) for e in checks["completeness"].examples
    ] == [("BE", "2010-01-01T00:00:00Z", 2, 1)]


# a window reaching months before the first point: the expected points listed cover it whole
WIDE_WINDOW = Case(CalendarStep(2, "start", 24001), "UTC", 0, 8, {"s0": [utc(2019, 12, 1), utc(2020, 2, 1)]})


@CASES
@given(cases(size=BATCH))
@example(WIDE_WINDOW)
def test_duckdb_finds_what_the_reference_finds(case: Case) -> None:
    """300 generated cases (40 in the fast profile), 5 to a panel judged by one validate, each case's
    findings equal to the reference's."""
    assert per_case(engine_findings(case)) == per_case(reference_findings(case))


def test_each_series_keeps_its_months_in_its_catalog_zone(tmp_path: Path) -> None:
    """A catalog ``device_zone`` beats ``time.zone``: Tokyo's month starts are 15:00Z the day before."""
    step = CalendarStep(1, "start")
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("catalog: panel\nseries:\n  JP: {device_zone: Asia/Tokyo}\n  US: {}\n", encoding="utf-8")
    points = {
        "JP": [step.at(k, "Asia/Tokyo") for k in range(2024 * 12, 2024 * 12 + 6)],
        "US": [step.at(k, "America/New_York") for k in range(2024 * 12, 2024 * 12 + 6) if k != 2024 * 12 + 2],
    }
    text = contract("1 month; anchored at month start", "America/New_York")
    checks = run(text, points, utc(2030, 1, 1), catalog=catalog)
    assert [(e["series_id"], e["ts"], e["missing_periods"]) for e in checks["time.cadence"].examples] == [
        ("US", "2024-04-01T04:00:00Z", 1)
    ]
    assert points["JP"][0] == utc(2023, 12, 31, 15)


def test_a_stray_year_9999_point_is_off_the_calendar_and_widens_nothing() -> None:
    step = CalendarStep(1, "start")
    points = {"a": [step.at(k, "UTC") for k in range(2024 * 12, 2024 * 12 + 6)] + [utc(9999, 12, 1)]}
    extra = "completeness: {window: 1 year}\nfreshness: {max_age: 2 months}\n"
    checks = run(contract("1 month; anchored at month start", "UTC", extra), points, utc(2024, 7, 15))
    assert [(e["ts"], "off_calendar" in e) for e in checks["time.cadence"].examples] == [("9999-12-01T00:00:00Z", True)]
    # the year under way is counted up to now: July 1 was due and is missing; nothing of year 9999 is expected
    (window,) = checks["completeness"].examples
    assert (window["expected"], window["actual"], window["missing"], window["counted"]) == (
        7,
        6,
        ["2024-07-01T00:00:00Z"],
        ["2024-01-01T00:00:00Z", "2024-07-15T00:00:00Z"],
    )
    assert checks["freshness"].status == "passed"  # the newest point is far ahead, never stale
