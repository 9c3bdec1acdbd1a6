"""Many generated clauses judged on many generated rows in one call to a target (issue #29).

A differential test of clause meaning compares a target (an engine or an export) with the reference,
:func:`tscontract.contract.semantics.holds`, on (clause, row) pairs. A call into a target costs far
more than a judged pair (a DuckDB connection, a contract parsed, a tool's process), so one hypothesis
example is a *batch*: many clauses (:func:`clause_strategies.clauses`) over many rows, every clause
judged on every row in one call and compared with the reference pair by pair. Invariants are row
predicates over one fixed column set, so every clause can be judged on every row.

The sizes are drawn (from 1 up to the maximum), so hypothesis shrinks a failing batch to one clause
and the rows that tell it apart; the assertion names the clause, both verdicts and the rows that differ.
``TSCONTRACT_CLAUSE_PROFILE=deep`` (set by CI) runs more batches than the fast default profile; both are
derandomized, so CI never turns red by chance.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tscontract.contract.clauses import RowClause
from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.row_parser import parse_invariant
from tscontract.contract.row_resolve import resolve_columns
from tscontract.contract.semantics import holds
from tscontract.contract.types import parse_type

from .clause_strategies import COLUMNS, clauses, reference_row, rows

DEEP = os.environ.get("TSCONTRACT_CLAUSE_PROFILE") == "deep"
NOW = datetime(2026, 4, 1, tzinfo=UTC)
TYPES = {name: parse_type(dtype) for name, (dtype, _) in COLUMNS.items()} | {
    "series_id": parse_type("string"),
    "ts": parse_type("timestamp_us_utc"),
}
# the largest batch: a target call judges up to CLAUSES x ROWS pairs. A clause costs a target far more
# than a row (an Earley parse, SQL lowered and run: ~35 ms against ~2 ms), so a batch has more rows than
# clauses; a drawn clause is ~50 units of hypothesis' 8,192 per example, a row ~52: the largest batch fits.
CLAUSES = 25
ROWS = 120

Batch = tuple[list[str], list[dict[str, Any]]]
# a target's verdict on one clause: its failing row numbers (from 1), or why it refuses the clause
Verdict = list[int] | str


def profile(fast: int, deep: int) -> settings:
    """``fast`` examples by default, ``deep`` under ``TSCONTRACT_CLAUSE_PROFILE=deep``; the same every run."""
    return settings(
        max_examples=deep if DEEP else fast,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
        derandomize=True,  # the same cases every run, deep or fast: CI never goes red by chance
    )


@cache
def _resolved(text: str) -> RowClause | str:
    """The clause as the contract reader resolves it, or why the reader refuses it (parsed once per text)."""
    try:
        return resolve_columns(parse_invariant(text), TYPES)
    except ClauseSyntaxError as exc:
        return exc.message


def runnable(texts: Iterable[str]) -> list[str]:
    """The distinct clauses the contract reader accepts (arithmetic past 38 digits is refused at load)."""
    kept = []
    for text in dict.fromkeys(texts):
        resolved = _resolved(text)
        if isinstance(resolved, str):
            assert "digits" in resolved, (text, resolved)
            continue
        kept.append(text)
    return kept


def expected_failures(text: str, batch: list[dict[str, Any]]) -> list[int]:
    """The rows (numbered from 1) the reference fails: where the clause is false, not unknown."""
    resolved = _resolved(text)
    assert not isinstance(resolved, str), (text, resolved)
    return [n + 1 for n, row in enumerate(batch) if holds(resolved.predicate, reference_row(row, n)) is False]


@st.composite
def batches(
    draw: st.DrawFn,
    max_clauses: int = CLAUSES,
    max_rows: int = ROWS,
    least: tuple[int, int] = (1, 1),
    clause: st.SearchStrategy[str] | None = None,
) -> Batch:
    """At least ``least`` and up to ``max_clauses`` runnable clauses and ``max_rows`` rows.

    Each size is drawn uniformly, not left to ``st.lists`` or ``st.integers`` (both favour a handful of
    elements): a batch is half the largest on average, and shrinks to ``least`` (one clause, one row).
    """
    count = draw(st.sampled_from(range(least[0], max_clauses + 1)))
    texts = runnable(draw(st.lists(clauses() if clause is None else clause, min_size=count, max_size=count)))
    assume(texts)  # every drawn clause past 38 digits (rare, and only in a small batch)
    size = draw(st.sampled_from(range(least[1], max_rows + 1)))
    return texts, draw(rows(min_size=size, max_size=size))


def generated_batches(count: int, **sizes: Any) -> list[Batch]:
    """``count`` batches (the same every run) for a tool run once over all of them.

    Hypothesis tries the simplest example first (one clause, drawn ``least`` times, on rows of nulls):
    it is left out, and ``count`` others kept.
    """
    found: list[Batch] = []

    @settings(profile(count + 1, count + 1), database=None)
    @given(batches(**sizes))
    def gather(batch: Batch) -> None:
        found.append(batch)

    gather()
    return found[1:]


def assert_agrees(
    texts: list[str],
    batch: list[dict[str, Any]],
    found: Mapping[str, Verdict],
    refusal: Callable[[str], bool] = lambda reason: False,
    judged: Callable[[int], bool] = lambda number: True,
) -> int:
    """Each clause fails the same rows in ``found`` as in the reference; how many (clause, row) pairs agreed.

    A clause the target refuses must be refused for a reason ``refusal`` accepts; ``judged`` says which
    rows (numbered from 1) the target can judge at all (JSON holds no NaN): the others are not compared.
    """
    pairs = 0
    for text in texts:
        assert text in found, f"no verdict on {text!r}: {sorted(found)[:5]}"
        verdict = found[text]
        if isinstance(verdict, str):
            assert refusal(verdict), f"{text!r} refused for an unexpected reason: {verdict}"
            continue
        expected = [n for n in expected_failures(text, batch) if judged(n)]
        if verdict != expected:
            differ = sorted(set(verdict) ^ set(expected))
            shown = {n: {k: v for k, v in batch[n - 1].items() if v is not None} for n in differ[:3]}
            raise AssertionError(f"{text!r} failed rows {verdict}, the reference {expected}; rows {shown}")
        pairs += sum(1 for n in range(1, len(batch) + 1) if judged(n))
    return pairs
