"""Calendar cadences on PostgreSQL, chdb and Spark find what the reference finds (#32).

The generated cases of ``test_calendar_cadence.py``; every engine only joins points to the expected
points listed per zone, so each must agree with :mod:`tscontract.contract.calendar_time` exactly.
An engine's cost is per statement (chdb, PostgreSQL) or per job (Spark), not per row, so cases are judged
in panels (:func:`cases` with ``size``): one validate per panel, each case's findings compared with the
reference's. The deep profile (CI) judges 60 cases on chdb and PostgreSQL in 10 panels of 6 (18 in 3 in the
fast profile) and 8 on Spark in one panel (4 in the fast profile): DuckDB explores 300 against the same reference
in test_calendar_cadence.py, and CI time is bounded (#29). On Spark a panel costs about 20 jobs, and one
more per short completeness window (the example's ``missing`` points are fetched window by window), so
its panels stay small.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from tests.contract.clause_batches import DEEP
from tests.contract.clause_batches import profile as _cases
from tests.engines.calendar_cases import Case, cases, engine_findings, per_case, reference_findings

pytest.importorskip("psycopg", reason="the PostgreSQL engine is part of the dev install")
pytest.importorskip("chdb", reason="the chdb engine is part of the dev install")

PANEL = 6  # cases per validate on chdb and PostgreSQL
SPARK_PANEL = 8 if DEEP else 4


@_cases(3, 10)
@given(cases(size=PANEL))
def test_chdb_finds_what_the_reference_finds(case: Case) -> None:
    assert per_case(engine_findings(case, "chdb")) == per_case(reference_findings(case))


@_cases(3, 10)
@given(case=cases(size=PANEL))
def test_postgres_finds_what_the_reference_finds(postgres_url: str, case: Case) -> None:
    assert per_case(engine_findings(case, "postgres", postgres_url)) == per_case(reference_findings(case))


def test_spark_finds_what_the_reference_finds(spark: Any, tmp_path: Path) -> None:
    """One panel, one validate (a Spark validate costs ~10 s of planning): hypothesis' second case, not its
    first (the simplest one it tries first: one zone, the fewest points)."""
    drawn: list[Case] = []

    @settings(_cases(2, 2), database=None)
    @given(cases(size=SPARK_PANEL))
    def draw(case: Case) -> None:
        drawn.append(case)

    draw()
    case = drawn[-1]
    assert per_case(engine_findings(case, "spark", tmp_path)) == per_case(reference_findings(case))
