"""The inline share of failing rows (``size > 0; at most 5% of rows``) on an invariant and on a field
constraint: parsed with its position, judged like ``max_failing`` on both engines, shown by ``show``
with the other rule keys (unique, row_count, sql_checks, severity)."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli, write
from tests.engines.test_rules import GOOD_ROWS, TRADES, bad_rows, by_id, trades_csv
from tscontract import validate
from tscontract.contract.loader import parse_contract
from tscontract.errors import ContractError

INLINE = TRADES.replace(
    '  - {clause: "size > 0", max_failing: "5%"}\n', '  - "size > 0; at most 5% of rows"\n'
).replace(
    "    constraint: matches '^[A-Z]{1,5}([.][A-Z])?$'\n",
    "    constraint: matches '^[A-Z]{1,5}([.][A-Z])?$'; at most 10% of rows\n",
)


def test_inline_share_is_max_failing():
    assert INLINE != TRADES
    contract = parse_contract(INLINE)
    size = contract.invariants[1]
    assert (size.text, size.sql, size.max_failing.text) == ("size > 0; at most 5% of rows", "size > 0", "5%")
    symbol = contract.constraints["symbol"]
    assert symbol.max_failing.text == "10%" and symbol.sql.startswith("REGEXP_FULL_MATCH(symbol")


@pytest.mark.parametrize(
    ("clause", "at", "message"),
    [
        ('"size > 0; at most 120% of rows"', "120%", "is more than 100% of rows"),
        ('"size > 0; at most 5 % of rows"', "5 %", "expected percent"),
        ('"size > 0; at least 5% of rows"', "least", "expected 'most'"),
        ('{clause: "size > 0; at most 5% of rows", max_failing: "1%"}', "{", "max_failing is written twice"),
    ],
)
def test_inline_share_errors_are_positioned(clause, at, message):
    """The error points at the character: the share, the word, or the invariant written twice."""
    where = len("  - ") + clause.index(at) + 1
    text = TRADES.replace('{clause: "size > 0", max_failing: "5%"}', clause)
    with pytest.raises(ContractError, match=message) as caught:
        parse_contract(text, "trades.yaml")
    line = text.splitlines().index(f"  - {clause}") + 1
    assert (caught.value.location.line, caught.value.location.column) == (line, where)


def test_inline_shares_judge_the_batch(tmp_path):
    contract = write(tmp_path, INLINE, "trades.yaml")
    rows = bad_rows()  # symbol fails on 2 of 20 rows (10%): tolerated; size 0 on 1 of 20 (5%): tolerated
    checks = by_id(validate(contract, trades_csv(tmp_path, rows)))
    symbol = checks["field.symbol.constraint"]
    assert (symbol["status"], symbol["failed_rows"]) == ("passed", 2)
    assert (checks["invariants[1]"]["status"], checks["invariants[1]"]["failed_rows"]) == ("passed", 1)
    rows[2] = rows[2].replace("AAPL,", "aapl,", 1)  # a third bad symbol: 15%
    checks = by_id(validate(contract, trades_csv(tmp_path, rows, "worse.csv")))
    assert (checks["field.symbol.constraint"]["status"], checks["field.symbol.constraint"]["failed_rows"]) == (
        "failed",
        3,
    )


def test_show_prints_every_rule_key(tmp_path):
    text = INLINE.replace("    unique: true\n", "    unique: {severity: warning, max_failing: '1%'}\n").replace(
        "row_count: {min: 1, max: 100}", "row_count: {min: 1, max: 100, severity: warning}"
    )
    shown = run_cli("show", write(tmp_path, text, "trades.yaml"))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "matches '^[A-Z]{1,5}([.][A-Z])?$'; at most 10% of rows" in out
    assert "unique (severity: warning, max_failing: 1%)" in out
    assert "size > 0; at most 5% of rows  ->  size > 0\n" in out
    assert "condition is null or condition matches '[@FTIZ]{1,4}'" in out and "(severity: warning)" in out
    assert "row_count: min: 1, max: 100 (severity: warning)\n" in out
    assert "sql check no_free_trades: SELECT count(*) FROM {object} WHERE price <= 0  (must_be: 0)\n" in out
    assert "sql check symbols_seen: " in out and "(must_be_between: [1, 3]) (severity: warning)" in out


@pytest.mark.parametrize("rows", ["bad", "good"])
def test_inline_shares_on_spark(spark, tmp_path, rows):  # the shared session (tests/conftest.py)
    pytest.importorskip("pyspark", reason="the Spark engine is part of the dev install")
    contract = write(tmp_path, INLINE, "trades.yaml")
    data = trades_csv(tmp_path, bad_rows() if rows == "bad" else GOOD_ROWS)
    duck = validate(contract, data, engine="duckdb").to_json()
    on_spark = validate(contract, data, engine="spark", spark_master="local[1]").to_json()
    for report in (duck, on_spark):
        report.pop("elapsed_s"), report.pop("engine")
    assert duck == on_spark
