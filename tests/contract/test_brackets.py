"""Brackets keep their meaning from the contract's words to every generated text (issue #25).

The real case: daily VIX bars with ``(high - low) / close < 0.5``. The brackets were dropped on the
way to SQL, so every good bar failed and the gate quarantined good data.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pyarrow as pa
import pytest

from tscontract import parse_contract, validate
from tscontract.contract.row_parser import parse_invariant

VIX = """
contract: vix_daily
version: 1.0.0
owner: research@example
key: [symbol, bar_date]
time:
  column: bar_date
  precision: s
  timezone: UTC instant
  cadence: irregular
fields:
  symbol: {type: string, nullable: false}
  bar_date: {type: timestamp_s_utc, nullable: false}
  open: {type: decimal(10,2), nullable: false}
  high: {type: decimal(10,2), nullable: false}
  low: {type: decimal(10,2), nullable: false}
  close: {type: decimal(10,2), nullable: false}
invariants:
  - (high - low) / close < 0.5
  - 2 * (high - low) < close
  - -(low - high) >= 0
  - high - (low - low) >= low
"""


@pytest.mark.parametrize(
    ("text", "sql"),
    [
        ("(high - low) / close < 0.5", "(high - low) / close < 0.5"),
        ("2 * (high - low) < close", "2 * (high - low) < close"),
        ("-(a + b) > 0", "-(a + b) > 0"),
        ("a - (b - c) > 0", "a - (b - c) > 0"),
        ("a / (b * c) > 1", "a / (b * c) > 1"),
        ("a - b - c > 0", "a - b - c > 0"),
        ("(a + b) * (c - d) >= 0", "(a + b) * (c - d) >= 0"),
        ("not (a > 1 or b > 2) and c > 3", "NOT (a > 1 OR b > 2) AND c > 3"),
        ("a > 1 and (b > 2 or c > 3)", "a > 1 AND (b > 2 OR c > 3)"),
    ],
)
def test_generated_sql_keeps_the_grouping(text: str, sql: str) -> None:
    assert parse_invariant(text).sql == sql


def vix_bars(days: int = 44) -> pa.Table:
    start = datetime(2026, 1, 2, tzinfo=UTC)
    closes = [Decimal("17.20") + Decimal(i % 7) for i in range(days)]
    return pa.table(
        {
            "symbol": ["VIX"] * days,
            "bar_date": [start + timedelta(days=i) for i in range(days)],
            "open": pa.array([c - Decimal("0.40") for c in closes], pa.decimal128(10, 2)),
            "high": pa.array([c + Decimal("1.10") for c in closes], pa.decimal128(10, 2)),
            "low": pa.array([c - Decimal("0.90") for c in closes], pa.decimal128(10, 2)),
            "close": pa.array(closes, pa.decimal128(10, 2)),
        }
    )


def test_good_vix_bars_pass_and_a_wide_bar_fails() -> None:
    contract = parse_contract(VIX)
    report = validate(contract, vix_bars(), now=datetime(2026, 3, 1, tzinfo=UTC))
    failed = {r.id: (r.status, r.message) for r in report.checks if r.status != "passed"}
    assert not failed, failed
    wide = vix_bars().to_pylist()
    wide[3]["high"] = wide[3]["close"] * 2  # (high - low) / close > 1: only the bracketed reading fails it
    table = pa.Table.from_pylist(wide, schema=vix_bars().schema)
    report = validate(contract, table, now=datetime(2026, 3, 1, tzinfo=UTC))
    failing = {r.id: [e["row"] for e in r.examples] for r in report.checks if r.status == "failed"}
    assert failing == {"invariants[0]": [4], "invariants[1]": [4]}
