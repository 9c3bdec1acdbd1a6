"""Where completeness windows start, and how a window cut by --from/--to is counted (#32)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from tests.engines.calendar_cases import SCHEMA, panel_contract
from tscontract import parse_contract, validate
from tscontract.errors import ContractError


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def contract(cadence: str, completeness: str, zone: str = "UTC") -> str:
    return panel_contract(cadence, zone, f"completeness: {completeness}\n")


def short(text: str, points: list[datetime], now: datetime, **options: object) -> list[tuple[object, ...]]:
    rows = [{"series_id": "a", "ts": t, "value": 1.0} for t in points]
    report = validate(parse_contract(text), pa.Table.from_pylist(rows, schema=SCHEMA), now=now, **options)
    check = next(c for c in report.checks if c.id == "completeness")
    assert check.status in ("passed", "failed"), check.message
    return [(e["window_start"], e["window_end"], e.get("counted"), e["expected"], e["actual"]) for e in check.examples]


# six days of hourly points, Wed 2026-01-07 .. Mon 2026-01-12, one hour missing on Saturday
HOURS = [utc(2026, 1, 7) + timedelta(hours=h) for h in range(6 * 24) if h != 3 * 24 + 5]
NOW = utc(2026, 2, 1)


def test_fixed_windows_start_at_multiples_of_their_length_from_monday_2000_01_03() -> None:
    week = short(contract("1h", '{window: "1w"}'), HOURS, NOW)
    assert week == [
        ("2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z", None, 168, 119),  # Monday to Monday, whole
        ("2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z", None, 168, 24),
    ]


@pytest.mark.parametrize(
    ("window", "starts"),
    [
        ('"1w; aligned to Saturday"', ["2026-01-03T00:00:00Z", "2026-01-10T00:00:00Z"]),
        ("{window: 1w, aligned_to: Wednesday}", ["2026-01-07T00:00:00Z"]),
        ('"2 weeks; aligned to 2026-01-07"', ["2026-01-07T00:00:00Z"]),
        ('"1826d 12h; aligned to 2026-01-10"', ["2021-01-09T12:00:00Z", "2026-01-10T00:00:00Z"]),
    ],
)
def test_aligned_windows_start_where_the_contract_says(window: str, starts: list[str]) -> None:
    completeness = window if window.startswith("{") else f"{{window: {window}}}"
    found = short(contract("1h", completeness), HOURS, NOW)
    assert [w[0] for w in found] == starts


def test_a_window_cut_by_from_to_is_counted_over_the_part_covered() -> None:
    coverage = (utc(2026, 1, 7, 12), utc(2026, 1, 10, 12))
    found = short(contract("1h", "{window: 1d}"), HOURS, NOW, coverage=coverage)
    # the window of Jan 10 is cut at 12:00: 12 points expected there, 11 present (05:00 is missing)
    assert found == [
        ("2026-01-10T00:00:00Z", "2026-01-11T00:00:00Z", ["2026-01-10T00:00:00Z", "2026-01-10T12:00:00Z"], 12, 11)
    ]


def test_a_fiscal_year_of_a_monthly_series_from_july() -> None:
    from tscontract.contract.calendar_time import CalendarStep

    months = [CalendarStep(1, "end").at(k, "Europe/Berlin") for k in range(2023 * 12 + 6, 2025 * 12 + 6)]
    del months[12]  # July 2024
    fiscal = contract("1 month; anchored at month end", '{window: "1 year; aligned to 2023-07"}', "Europe/Berlin")
    found = short(fiscal, months, NOW)
    assert found == [("2024-06-30T22:00:00Z", "2025-06-30T22:00:00Z", None, 12, 11)]


@pytest.mark.parametrize(
    ("completeness", "message"),
    [
        ('"1 session; aligned to Monday"', "first covered session"),
        ('"1 month; aligned to Monday"', "year-month"),
        ('"1d; aligned to someday"', "weekday"),
        ('"1d; starting Monday"', "aligned to Monday"),
        ('{window: "1d; aligned to Monday", aligned_to: Tuesday}', "twice"),
    ],
)
def test_an_alignment_the_window_cannot_take_is_refused(completeness: str, message: str) -> None:
    completeness = completeness if completeness.startswith("{") else f"{{window: {completeness}}}"
    with pytest.raises(ContractError, match=message):
        parse_contract(contract("1h", completeness))
