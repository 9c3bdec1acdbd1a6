"""Calendar cadences on PostgreSQL, chdb and Spark find what the reference finds (#32).

The generated cases of ``test_calendar_cadence.py``; every engine only joins points to the expected
points listed per zone, so each must agree with :mod:`tscontract.contract.calendar_time` exactly. Spark
runs a few batched cases (several series each): its start-up dominates the suite's time.
The deep profile (CI) runs 60 cases on chdb and PostgreSQL and 4 on Spark: DuckDB explores 300 against
the same reference in test_calendar_cadence.py, and CI time is bounded (#29).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.engines.calendar_cases import Case, cases, engine_findings, reference_findings
from tests.engines.test_semantics_engines import _cases

pytest.importorskip("psycopg", reason="the PostgreSQL engine is part of the dev install")
pytest.importorskip("chdb", reason="the chdb engine is part of the dev install")


@_cases(15, 60)
@given(cases())
def test_chdb_finds_what_the_reference_finds(case: Case) -> None:
    assert engine_findings(case, "chdb") == reference_findings(case)


@_cases(15, 60)
@given(case=cases())
def test_postgres_finds_what_the_reference_finds(postgres_url: str, case: Case) -> None:
    assert engine_findings(case, "postgres", postgres_url) == reference_findings(case)


@_cases(2, 4)
@given(case=cases(max_series=6))
def test_spark_finds_what_the_reference_finds(spark: Any, tmp_path: Path, case: Case) -> None:
    assert engine_findings(case, "spark", tmp_path) == reference_findings(case)
