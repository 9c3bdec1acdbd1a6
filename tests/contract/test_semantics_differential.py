"""Every engine and export means what the reference evaluator says a clause means (issue #25).

Clauses and rows are generated (``clause_strategies``); for each clause the set of failing rows
must be the same in :func:`tscontract.contract.semantics.holds` and in each target. The fast
profile runs in the default test command; ``TSCONTRACT_CLAUSE_PROFILE=deep`` (set by CI) runs
many more cases.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import given

from tscontract import parse_contract, validate
from tscontract.plan.result import ValidationReport

from .clause_batches import NOW, Batch, assert_agrees, batches, expected_failures, profile, runnable
from .clause_strategies import COLUMNS, START, contract_text, table


def invariant_failures(report: ValidationReport) -> dict[str, list[int]]:
    """Each invariant's failing row numbers as a report gives them; any status but passed/failed is a defect."""
    found = {}
    for check in report.checks:
        if check.id.startswith("invariants["):
            assert check.status in ("passed", "failed"), (check.clause, check.status, check.message)
            found[check.clause] = [example["row"] for example in check.examples]
    return found


def engine_failures(texts: list[str], batch: list[dict], engine: str = "duckdb") -> dict[str, list[int]]:
    contract = parse_contract(contract_text(texts))
    return invariant_failures(validate(contract, table(batch), now=NOW, engine=engine, examples=len(batch)))


@profile(fast=6, deep=40)
@given(batches())
def test_duckdb_fails_the_rows_the_reference_fails(batch: Batch) -> None:
    """Each example a batch: up to 25 clauses on up to 120 rows in one DuckDB run.

    Clause-row pairs judged (fast / deep profile), as examples x clauses x rows at most: before the
    batches 150 / 1,500 examples x 4 x 12 = 7,200 / 72,000; now 6 / 40 x 25 x 120 = 18,000 / 120,000.
    """
    texts, rows = batch
    assert_agrees(texts, rows, engine_failures(texts, rows))


@pytest.mark.parametrize(
    ("text", "failing"),
    [
        ("f >= 0", [2, 3, 4]),  # NaN, -Inf fail; null does not
        ("f < 0", [1, 2, 5]),
        ("not (f < 0)", [3, 4]),
        ("f between -1 and 1", [1, 2, 3, 4]),
        ("f = f", [2]),
    ],
)
def test_nan_is_not_a_number(text: str, failing: list[int]) -> None:
    batch = [{name: None for name in COLUMNS} | {"f": value} for value in (5.0, float("nan"), float("-inf"), None, 0.0)]
    batch[4]["f"] = float("inf") if text != "f between -1 and 1" else 0.5
    assert expected_failures(text, batch) == engine_failures([text], batch)[text]


@pytest.mark.parametrize(
    ("text", "values", "failing"),
    [
        # found by the deep profile: DuckDB stopped with "Overflow on abs" on the smallest BIGINT
        ("abs(i) > 0", [{"i": -(2**63)}, {"i": 0}], [2]),
        ("-i > 0", [{"i": -(2**63)}, {"i": 1}], [2]),
        # a null beside a NaN is unknown, not false: ISNAN alone failed the row
        ("i < i < f", [{"f": float("nan")}, {"i": 1, "f": float("nan")}], [2]),
        ("f between i and 1", [{"f": float("nan")}, {"i": 0, "f": float("nan")}, {"f": 2.0}, {"f": 0.5}], [1, 2, 3]),
        ("t2 < '2026-03-29T01:00:00+02:00'", [{"t2": START}, {"t2": START - timedelta(hours=2)}], [1]),
        ("t2 >= '2026-03-29'", [{"t2": START}, {"t2": START - timedelta(hours=1)}], [2]),
        # two literals under 1 compared: DuckDB refused CAST(0.00 AS DECIMAL(1, 2)) ("scale greater than width")
        ("i < 0.00 < 0.01", [{}, {"i": -1}, {"i": 0}], [3]),
        ("least(0.01, d2) < 0.5", [{"d2": Decimal("1.00")}, {"d2": Decimal("0.40")}], []),
    ],
)
def test_found_counter_examples(text: str, values: list[dict], failing: list[int]) -> None:
    batch = [{name: None for name in COLUMNS} | row for row in values]
    assert expected_failures(text, batch) == failing
    assert engine_failures([text], batch)[text] == failing


def test_a_comparison_past_38_digits_at_its_common_scale_is_refused() -> None:
    # found by the deep profile of the exports: d2 < i * i was cast to DECIMAL(38,2) and overflowed at run
    assert runnable(["i < d2 < i * i", "d2 < i * j"]) == ["d2 < i * j"]
