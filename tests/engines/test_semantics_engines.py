"""PostgreSQL, chdb and Spark mean what the reference evaluator says a row clause means (issue #25).

The same generated clauses and rows as the DuckDB differential test
(``tests/contract/test_semantics_differential.py``), run on each other engine: for each clause
the failing rows must be the ones :func:`tscontract.contract.semantics.holds` fails. The fast
profile is small (chdb 4 batches, PostgreSQL 3, Spark 2 in one run, each up to 25 clauses on up to 120 rows,
``tests/contract/clause_batches.py``); ``TSCONTRACT_CLAUSE_PROFILE=deep`` runs more.

Clause-row pairs judged (fast / deep), as examples x clauses x rows at most: PostgreSQL and chdb each
before the batches 50 / 400 x 4 x 12 = 2,400 / 19,200, now 4 (PostgreSQL 3) / 12 x 25 x 120 =
12,000 (9,000) / 36,000; Spark before 3 / 12 x 10 x 20 = 600 / 2,400, now one run of the batches joined: every
clause on the rows of every batch, up to 50 x 240 = 12,000 / 100 x 480 = 48,000.
"""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given

from tests.contract.clause_batches import (
    DEEP,
    NOW,
    Batch,
    assert_agrees,
    batches,
    expected_failures,
    generated_batches,
    profile,
    runnable,
)
from tests.contract.clause_strategies import COLUMNS, contract_text, table
from tests.contract.test_semantics_differential import invariant_failures
from tests.engines.pg_tables import load_table
from tscontract import parse_contract, validate

pytest.importorskip("psycopg", reason="the PostgreSQL engine is part of the dev install")
pytest.importorskip("chdb", reason="the chdb engine is part of the dev install")


def failures(contract_yaml: str, data: Any, rows_count: int, **kwargs: Any) -> dict[str, list[int]]:
    """Each invariant's failing row numbers as the engine reports them; any other status is a defect."""
    return invariant_failures(validate(parse_contract(contract_yaml), data, now=NOW, examples=rows_count, **kwargs))


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


@profile(fast=4, deep=12)
@given(batches())
def test_chdb_fails_the_rows_the_reference_fails(batch: Batch) -> None:
    texts, rows = batch
    assert_agrees(texts, rows, on_engine("chdb", texts, rows, None))


@profile(fast=3, deep=12)
@given(batch=batches())
def test_postgres_fails_the_rows_the_reference_fails(postgres_url: str, batch: Batch) -> None:
    texts, rows = batch
    assert_agrees(texts, rows, on_engine("postgres", texts, rows, postgres_url))


def test_spark_fails_the_rows_the_reference_fails(spark: Any, tmp_path: Path) -> None:
    """The batches one after another in one Spark run (a Spark run costs ~10 s of planning, the rows nothing):
    every clause of every batch judged on every row of all of them."""
    cases = generated_batches(4 if DEEP else 2)
    texts = runnable(text for case_texts, _ in cases for text in case_texts)
    rows = [row for _, case_rows in cases for row in case_rows]
    assert assert_agrees(texts, rows, on_engine("spark", texts, rows, tmp_path)) > 0


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


# found by these tests (and the cases each engine's documentation gives away): clause, rows, failing rows
COUNTER_EXAMPLES: list[tuple[str, list[dict[str, Any]], list[int]]] = [
    # chdb: no common type of Int64 and Decimal64 in IN; two decimal scales in coalesce; Int64 beside Decimal(15,6)
    ("i in (-400, 1256.2)", [{"i": 1}, {"i": -400}], [1]),
    ("coalesce(least(8893, d2), d6) > 0", [{"d2": Decimal("-1.00")}, {"d6": Decimal("1.000000")}], [1]),
    ("i <= d6", [{"i": 2**62, "d6": Decimal("0.000000")}, {"i": 0, "d6": Decimal("0.000000")}], [1]),
    # least/greatest are null beside a null (DuckDB, PostgreSQL and Spark skipped it)
    ("least(i, j) > 0", [{"i": -1}, {"i": -1, "j": 1}], [2]),
    ("greatest(f, d2) < 0", [{"f": float("nan"), "d2": Decimal("1.00")}, {"f": -1.0}], [1]),
    # PostgreSQL: no ISNAN; a zero divisor raises; Spark: a zero divisor gives NULL
    ("f >= 0", [{"f": float("nan")}, {"f": 1.0}], [1]),
    ("i / j > 0", [{"i": 1, "j": 0}, {"i": -1, "j": 0}, {"i": 0, "j": 0}], [2, 3]),
    ("f / d2 > 0", [{"f": 1.0, "d2": Decimal("0.00")}, {"f": -0.0, "d2": Decimal("0.00")}], [2]),
    ("1 / f > 0", [{"f": -0.0}, {"f": 0.0}], [1]),
    # PostgreSQL orders text by locale: by code point here
    ("s < 'a'", [{"s": "Z"}, {"s": "é"}, {"s": "_"}], [2]),
    # Spark's and ClickHouse's upperUTF8('ß') are 'SS', PostgreSQL's 'ß'; ClickHouse's upper maps ASCII only
    ("upper(s) = 'ẞ'", [{"s": "ß"}, {"s": "ss"}], [2]),
    ("lower(s) = 'é'", [{"s": "É"}, {"s": "E"}], [2]),
    ("length(upper(s)) = 2", [{"s": "ßa"}, {"s": "ﬁ"}], [2]),
    # \d \w \s are ASCII classes (RE2, Java); (?i) folds case beyond ASCII
    ("s matches '\\d+'", [{"s": "\u0661\u0662"}, {"s": "12"}], [1]),
    ("s matches '\\w+'", [{"s": "é"}, {"s": "e_1"}], [1]),
    ("s matches '[\\d.]+'", [{"s": "\u0663.1"}, {"s": "3.1"}], [1]),
    ("s matches '(?i)é'", [{"s": "É"}, {"s": "e"}], [2]),
    # PostgreSQL raises "value out of range" where IEEE rounds to ±Inf or ±0
    ("f * f > 0", [{"f": 1e308}, {"f": -1e308}, {"f": 2.0}], []),
    ("f * f > 1e300", [{"f": 1e308}, {"f": 1.0}], [2]),
    ("f * 1e-300 > 0", [{"f": 5e-324}, {"f": 1.0}], [1]),
    ("f + f > 0", [{"f": 1.7e308}, {"f": -1.7e308}], [2]),
    ("f - i < 0", [{"f": -1.7e308, "i": 2**62}], []),
    ("f / 1e-300 < 1", [{"f": 1e300}, {"f": 5e-324}, {"f": -1e300}], [1]),
    # literals under 1 compared: a common DECIMAL narrower than its scale (DECIMAL(1, 2)) was refused
    ("i < 0.00 < 0.01", [{}, {"i": -1}, {"i": 0}], [3]),
]


def _named_batch(values: list[dict]) -> list[dict]:
    return [{name: None for name in COLUMNS} | row for row in values]


@pytest.mark.parametrize("engine", ["duckdb", "chdb", "postgres"])
@pytest.mark.parametrize(("text", "values", "failing"), COUNTER_EXAMPLES)
def test_found_counter_examples(
    engine: str, text: str, values: list[dict], failing: list[int], request: pytest.FixtureRequest
) -> None:
    batch = _named_batch(values)
    assert expected_failures(text, batch) == failing
    where = request.getfixturevalue("postgres_url") if engine == "postgres" else None
    assert on_engine(engine, [text], batch, where)[text] == failing


def _within(rows: list[int], start: int, end: int) -> list[int]:
    """The row numbers in ``(start, end]``, counted from ``start``."""
    return [n - start for n in rows if start < n <= end]


def test_found_counter_examples_on_spark(spark: Any, tmp_path: Path) -> None:
    """Every named case and every pattern (the test below) in one Spark run (a Spark run is slow): the cases'
    rows one after another, every clause judged on every row against the reference (a verdict is per row)."""
    batch: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    for text, values, failing in COUNTER_EXAMPLES:
        assert expected_failures(text, _named_batch(values)) == failing
        spans.append((len(batch), len(batch) + len(values)))
        batch += _named_batch(values)
    patterns, lines = _pattern_cases()
    texts = list(dict.fromkeys([text for text, _, _ in COUNTER_EXAMPLES] + patterns))
    start = len(batch)
    batch += lines
    found = on_engine("spark", texts, batch, tmp_path)
    assert_agrees(texts, batch, found)
    for (text, _, failing), span in zip(COUNTER_EXAMPLES, spans, strict=True):
        assert _within(found[text], *span) == failing, text
    _assert_patterns_read_alike({text: _within(found[text], start, len(batch)) for text in patterns}, lines)


# ---------------------------------------------------------------- patterns against line breaks and non-ASCII text

# every pattern the generator writes, against the texts where engines read a pattern differently:
# PostgreSQL's '.' took '\n'; Java's '.' refuses '\r', U+0085, U+2028 as line terminators
PATTERN_TEXTS = ["a\nb", "a\rb", "a\u0085b", "a\u2028b", "ab\n", "\nz", "\u0661\u0662", "é", "É", " \t", "abz", "a"]


def _pattern_cases() -> tuple[list[str], list[dict]]:
    from tests.contract.clause_strategies import PATTERNS

    texts = [f"s matches '{pattern}'" for pattern in PATTERNS]
    return texts, _named_batch([{"s": text} for text in PATTERN_TEXTS])


def _assert_patterns_read_alike(found: dict[str, list[int]], batch: list[dict]) -> None:
    expected = {text: expected_failures(text, batch) for text in found}
    # the reference: '.' takes every character but '\n' ((?s): that too); the others are not line breaks
    assert expected["s matches 'a.b'"] == [1, *range(5, 13)]
    assert expected["s matches '(?s)a.b'"] == list(range(5, 13))
    assert {t: f for t, f in found.items() if f != expected[t]} == {}


@pytest.mark.parametrize("engine", ["duckdb", "chdb", "postgres"])  # Spark: test_found_counter_examples_on_spark
def test_patterns_mean_the_same_on_line_breaks_and_non_ascii(
    engine: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    where = request.getfixturevalue("postgres_url") if engine == "postgres" else tmp_path
    texts, batch = _pattern_cases()
    _assert_patterns_read_alike(on_engine(engine, texts, batch, where), batch)
