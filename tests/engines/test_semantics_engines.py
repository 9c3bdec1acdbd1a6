"""PostgreSQL, chdb and Spark mean what the reference evaluator says a row clause means (issue #25).

The same generated clauses and rows as the DuckDB differential test
(``tests/contract/test_semantics_differential.py``), run on each other engine: for each clause
the failing rows must be the ones :func:`tscontract.contract.semantics.holds` fails. The fast
profile is small (PostgreSQL and chdb ~50 cases, Spark a few batches of several clauses);
``TSCONTRACT_CLAUSE_PROFILE=deep`` runs many more.
"""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.contract.clause_strategies import COLUMNS, clauses, contract_text, rows, table
from tests.contract.test_semantics_differential import DEEP, NOW, expected_failures, runnable
from tests.engines.pg_tables import load_table
from tscontract import parse_contract, validate

pytest.importorskip("psycopg", reason="the PostgreSQL engine is part of the dev install")
pytest.importorskip("chdb", reason="the chdb engine is part of the dev install")


def _cases(fast: int, deep: int) -> settings:
    return settings(
        max_examples=deep if DEEP else fast,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
        derandomize=not DEEP,
    )


def failures(contract_yaml: str, data: Any, rows_count: int, **kwargs: Any) -> dict[str, list[int]]:
    """Each invariant's failing row numbers as the engine reports them; any other status is a defect."""
    report = validate(parse_contract(contract_yaml), data, now=NOW, examples=rows_count, **kwargs)
    found = {}
    for check in report.checks:
        if check.id.startswith("invariants["):
            assert check.status in ("passed", "failed"), (check.clause, check.status, check.message)
            found[check.clause] = [example["row"] for example in check.examples]
    return found


def on_engine(engine: str, texts: list[str], batch: list[dict], where: Any) -> dict[str, list[int]]:
    """``texts`` over ``batch`` on ``engine``: ``where`` is the PostgreSQL URL or a directory for Parquet."""
    contract, data = contract_text(texts), table(batch)
    if engine == "postgres":
        name = f"public.t{time.time_ns()}"
        load_table(where, name, data)
        return failures(contract, f"{where}#{name}", len(batch))
    if engine == "spark":
        path = Path(where) / f"rows{time.time_ns()}.parquet"
        pq.write_table(data, path)
        return failures(contract, path, len(batch), engine="spark")
    return failures(contract, data, len(batch), engine=engine)


def agree(engine: str, texts: list[str], batch: list[dict], where: Any = None) -> None:
    texts = list(dict.fromkeys(runnable(texts)))
    if not texts:
        return
    found = on_engine(engine, texts, batch, where)
    for text in texts:
        assert found[text] == expected_failures(text, batch), text


@_cases(50, 1000)
@given(st.lists(clauses(), min_size=1, max_size=4), rows())
def test_chdb_fails_the_rows_the_reference_fails(texts: list[str], batch: list[dict]) -> None:
    agree("chdb", texts, batch)


@_cases(50, 1000)
@given(texts=st.lists(clauses(), min_size=1, max_size=4), batch=rows())
def test_postgres_fails_the_rows_the_reference_fails(postgres_url: str, texts: list[str], batch: list[dict]) -> None:
    agree("postgres", texts, batch, postgres_url)


@_cases(3, 60)
@given(texts=st.lists(clauses(), min_size=6, max_size=10), batch=rows(max_size=20))
def test_spark_fails_the_rows_the_reference_fails(
    spark: Any, tmp_path: Path, texts: list[str], batch: list[dict]
) -> None:
    agree("spark", texts, batch, tmp_path)


# ---------------------------------------------------------------- named cases

NEAR_LIMIT = Decimal("99999999.9999")


def _wide_products(engine: str, where: Any) -> dict[str, list[int]]:
    """Three decimal(12,4) columns multiplied (36 digits): a verdict, never an overflow error."""
    texts = ["p1 * p2 * p3 < 1e30", "p1 * p2 * p3 < 1e23"]
    types = {name: pa.decimal128(12, 4) for name in ("p1", "p2", "p3")}
    fields = "\n".join(f"  {name}: {{type: 'decimal(12,4)', nullable: true}}" for name in ("p1", "p2", "p3"))
    contract = contract_text(texts).replace("fields:\n", f"fields:\n{fields}\n", 1)
    values = [NEAR_LIMIT, -NEAR_LIMIT, Decimal("1.0000")]
    batch = [{**{n: None for n in COLUMNS}, "p1": v, "p2": NEAR_LIMIT, "p3": NEAR_LIMIT} for v in values]
    data = table(batch)
    for name, arrow in types.items():
        data = data.append_column(name, pa.array([row[name] for row in batch], arrow))
    if engine == "postgres":
        name = f"public.t{time.time_ns()}"
        load_table(where, name, data)
        return failures(contract, f"{where}#{name}", len(batch))
    if engine == "spark":
        path = Path(where) / "wide.parquet"
        pq.write_table(data, path)
        return failures(contract, path, len(batch), engine="spark")
    return failures(contract, data, len(batch), engine=engine)


@pytest.mark.parametrize("engine", ["duckdb", "chdb", "postgres", "spark"])
def test_three_wide_decimals_multiply_to_a_verdict(engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    where = request.getfixturevalue("postgres_url") if engine == "postgres" else tmp_path
    if engine == "spark":
        request.getfixturevalue("spark")
    # 99999999.9999 ** 3 is about 1e24: under 1e30, over 1e23 (row 1 only: row 2 is negative, row 3 about 1e16)
    assert _wide_products(engine, where) == {"p1 * p2 * p3 < 1e30": [], "p1 * p2 * p3 < 1e23": [1]}
