"""Rules data engineers already write (issue 14): regex, unique on a non-key column, row-count bounds,
percent thresholds, SQL checks, each with its severity -- loaded, refused with a position, run on DuckDB.

The fixture is a vendor trade-print feed: share classes with a dot (``BRK.B``), sale-condition codes
(``@``, ``F``, ``T``, ``I``), millisecond instants, and the vendor's replays of a print under a new
sequence number (the same ``trade_id`` twice) -- the classic case for ``unique`` beside the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli, write
from tscontract import validate
from tscontract.contract.loader import parse_contract
from tscontract.errors import ContractError

TRADES = """\
contract: equity_trades
version: 1.0.0
key: [symbol, trade_time, seq]
time:
  column: trade_time
  precision: ms
  timezone: UTC instant
  cadence: irregular
fields:
  symbol:
    type: string
    nullable: false
    constraint: matches '^[A-Z]{1,5}([.][A-Z])?$'
  trade_time: {type: timestamp_ms_utc, nullable: false}
  seq: {type: int64, nullable: false}
  trade_id:
    type: string
    nullable: false
    unique: true
  price: {type: decimal(18,4), unit: quote_currency, nullable: false}
  size: {type: int64, nullable: false}
  condition: {type: string, nullable: true}
invariants:
  - {clause: "condition is null or condition matches '[@FTIZ]{1,4}'", severity: warning}
  - {clause: "size > 0", max_failing: "5%"}
row_count: {min: 1, max: 100}
sql_checks:
  - name: no_free_trades
    sql: "SELECT count(*) FROM {object} WHERE price <= 0"
    must_be: 0
  - name: symbols_seen
    sql: "SELECT count(DISTINCT symbol) FROM {object}"
    must_be_between: [1, 3]
    severity: warning
"""

HEADER = "symbol,trade_time,seq,trade_id,price,size,condition"
GOOD_ROWS = [
    f"{sym},2026-11-30T14:30:{sec:02d}.{ms:03d}Z,{seq},T-{1000 + i},{price},{size},{cond}"
    for i, (sym, sec, ms, seq, price, size, cond) in enumerate(
        [
            ("BRK.B", 0, 125, 1, "472.1500", 100, "@"),
            ("AAPL", 0, 250, 1, "230.0100", 50, "@F"),
            ("AAPL", 0, 250, 2, "230.0100", 25, "@F"),
            ("MSFT", 1, 0, 1, "421.7700", 200, ""),
            ("BRK.B", 1, 500, 2, "472.1600", 10, "@TI"),
            ("AAPL", 2, 999, 3, "230.0200", 300, "@"),
            ("MSFT", 3, 1, 2, "421.7500", 1, "I"),
            ("AAPL", 4, 10, 4, "230.0000", 100, "@"),
            ("BRK.B", 5, 0, 3, "472.1400", 5, "Z"),
            ("MSFT", 6, 333, 3, "421.8000", 40, "@F"),
            ("AAPL", 7, 0, 5, "229.9900", 20, "@"),
            ("MSFT", 8, 120, 4, "421.8100", 60, ""),
            ("AAPL", 9, 450, 6, "229.9800", 75, "@"),
            ("BRK.B", 10, 0, 4, "472.1000", 15, "@"),
            ("MSFT", 11, 900, 5, "421.7900", 35, "@"),
            ("AAPL", 12, 0, 7, "229.9700", 80, "@"),
            ("MSFT", 13, 0, 6, "421.7800", 90, "@"),
            ("AAPL", 14, 0, 8, "229.9600", 10, "@"),
            ("BRK.B", 15, 0, 5, "472.0900", 12, "@"),
            ("AAPL", 16, 0, 9, "229.9500", 44, "@"),
        ]
    )
]


def trades_contract(tmp_path: Path, text: str = TRADES) -> Path:
    return write(tmp_path, text, "trades.yaml")


def trades_csv(tmp_path: Path, rows: list[str], name: str = "trades.csv") -> Path:
    return write(tmp_path, "\n".join([HEADER, *rows]) + "\n", name)


def bad_rows() -> list[str]:
    rows = list(GOOD_ROWS)
    rows[1] = rows[1].replace("AAPL,", "aapl,", 1)  # row 2: lower case from a second vendor
    rows[6] = rows[6].replace("MSFT,", "MSFT ,", 1)  # row 7: a trailing blank kept as written
    rows[11] = rows[11].replace(",T-1011,", ",T-1004,")  # row 12: a replay of row 5's print, new seq
    rows[12] = rows[12].replace(",75,", ",0,")  # row 13: a zero-size print (1 of 20 rows: 5%)
    rows[13] = rows[13].replace(",@", ",X")  # row 14: an unknown condition code (warning)
    rows[14] = rows[14].replace("421.7900", "0.0000")  # row 15: a free trade
    return rows


def by_id(report: object) -> dict[str, dict]:
    return {c["id"]: c for c in report.to_json()["checks"]}  # type: ignore[attr-defined]


def test_good_trades_pass_every_new_rule(tmp_path):
    report = validate(trades_contract(tmp_path), trades_csv(tmp_path, GOOD_ROWS))
    checks = by_id(report)
    assert report.passed, [c for c in checks.values() if c["status"] != "passed"]
    for check_id in (
        "field.symbol.constraint",
        "field.trade_id.unique",
        "invariants[0]",
        "invariants[1]",
        "batch.row_count",
        "sql_checks.no_free_trades",
        "sql_checks.symbols_seen",
    ):
        assert checks[check_id]["status"] == "passed", check_id
    assert checks["sql_checks.symbols_seen"]["examples"] == [{"value": 3}]


def test_bad_trades_fail_with_rows_values_and_ratios(tmp_path):
    report = validate(trades_contract(tmp_path), trades_csv(tmp_path, bad_rows()))
    checks = by_id(report)
    assert not report.passed
    symbol = checks["field.symbol.constraint"]
    assert symbol["status"] == "failed" and symbol["failed_rows"] == 2
    assert [(e["row"], e["symbol"]) for e in symbol["examples"]] == [(2, "aapl"), (7, "MSFT ")]

    unique = checks["field.trade_id.unique"]
    assert unique["status"] == "failed" and unique["failed_rows"] == 2
    assert unique["examples"] == [{"rows": [5, 12], "trade_id": "T-1004", "count": 2}]
    assert unique["clause"] == "unique: true"

    warning = checks["invariants[0]"]
    assert (warning["status"], warning["severity"], warning["failed_rows"]) == ("failed", "warning", 1)
    assert warning["examples"][0]["row"] == 14

    tolerated = checks["invariants[1]"]  # 1 row of 20 is 5%: at most 5% may fail
    assert tolerated["status"] == "passed" and tolerated["failed_rows"] == 1
    assert tolerated["examples"][0]["row"] == 13
    assert tolerated["message"] == "1 of 20 rows (5%) fail; at most 5% may"

    free = checks["sql_checks.no_free_trades"]
    assert free["status"] == "failed" and free["examples"] == [{"value": 1}]
    assert free["message"] == "the query returned 1; must_be: 0"
    assert checks["batch.row_count"]["status"] == "passed"


def test_percent_threshold_fails_above_its_share(tmp_path):
    rows = bad_rows()
    rows[15] = rows[15].replace(",80,", ",0,")  # a second zero-size print: 2 of 20 = 10% > 5%
    checks = by_id(validate(trades_contract(tmp_path), trades_csv(tmp_path, rows)))
    over = checks["invariants[1]"]
    assert over["status"] == "failed" and over["failed_rows"] == 2
    assert [e["row"] for e in over["examples"]] == [13, 16]
    assert over["message"] == "2 of 20 rows (10%) fail; at most 5% may"


def test_unique_with_severity_and_threshold(tmp_path):
    text = TRADES.replace("    unique: true\n", "    unique: {severity: warning}\n")
    report = validate(
        trades_contract(tmp_path, text), trades_csv(tmp_path, [*GOOD_ROWS, GOOD_ROWS[0].replace(",1,", ",9,")])
    )
    unique = by_id(report)["field.trade_id.unique"]
    assert (unique["status"], unique["severity"]) == ("failed", "warning")
    assert unique["examples"] == [{"rows": [1, 21], "trade_id": "T-1000", "count": 2}]
    assert report.passed  # a warning rejects nothing

    text = TRADES.replace("    unique: true\n", "    unique: {max_failing: '10%'}\n")
    unique = by_id(validate(trades_contract(tmp_path, text), trades_csv(tmp_path, bad_rows())))["field.trade_id.unique"]
    assert unique["status"] == "passed" and unique["failed_rows"] == 2
    assert unique["message"] == "1 value(s) of trade_id appear more than once; 2 of 20 rows (10%) fail; at most 10% may"


def test_row_count_bounds(tmp_path):
    contract = trades_contract(tmp_path)
    empty = by_id(validate(contract, trades_csv(tmp_path, [])))["batch.row_count"]
    assert empty["status"] == "failed" and empty["message"] == "the batch has 0 rows; at least 1 expected"
    assert empty["clause"] == "row_count: min: 1, max: 100"
    small = trades_contract(
        tmp_path, TRADES.replace("row_count: {min: 1, max: 100}", "row_count: {max: 10, severity: warning}")
    )
    report = validate(small, trades_csv(tmp_path, GOOD_ROWS))
    too_many = by_id(report)["batch.row_count"]
    assert (too_many["status"], too_many["severity"]) == ("failed", "warning")
    assert too_many["message"] == "the batch has 20 rows; at most 10 expected"
    assert report.passed


def test_sql_check_that_cannot_run_is_an_error_not_a_pass(tmp_path):
    text = TRADES.replace("WHERE price <= 0", "WHERE prize <= 0")
    free = by_id(validate(trades_contract(tmp_path, text), trades_csv(tmp_path, GOOD_ROWS)))[
        "sql_checks.no_free_trades"
    ]
    assert free["status"] == "error" and free["message"].startswith("the query failed:")
    assert "prize" in free["message"]


def test_cli_exit_codes(tmp_path):
    contract = trades_contract(tmp_path)
    assert run_cli("validate", contract, trades_csv(tmp_path, GOOD_ROWS)).returncode == 0
    bad = run_cli("validate", contract, trades_csv(tmp_path, bad_rows(), "bad.csv"), "--quiet")
    assert bad.returncode == 1
    assert "field.trade_id.unique" in bad.stdout and "sql_checks.no_free_trades" in bad.stdout
    table = run_cli("validate", contract, tmp_path / "bad.csv")  # a tolerated share: rows and share shown
    assert table.returncode == 1 and "1 of 20 rows (5%) fail; at most 5% may" in table.stdout
    assert "row=13" in table.stdout
    broken = write(tmp_path, TRADES.replace("must_be: 0", "must_be: 0\n    must_be_less_than: 1"), "broken.yaml")
    refused = run_cli("validate", broken, trades_csv(tmp_path, GOOD_ROWS))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "broken.yaml:" in refused.stderr and "exactly one of must_be" in refused.stderr


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("regex", "message"),
    [
        ("^(A)\\\\1$", "backreference"),
        ("^(?=A)[A-Z]+$", "lookahead or lookbehind"),
        ("^(?<!X)[A-Z]+$", "negative lookahead or lookbehind"),
        ("^[A-Z{1,5}$", "not a valid regular expression: unterminated character set"),
        ("^(?P<root>[A-Z]+)$", "named groups"),
        ("^[A-Z]+\\\\Z", "\\Z means different things"),
        ("^[[:upper:]]+$", "inside a character class"),
        ("^[A-Z]{,5}$", "{0,n}"),
        ("^\\\\p{Lu}+$", "bad escape"),
        ("^[A-Z]++$", "possessive quantifier"),
        ("(?x)^[A-Z]+$", "only the flags"),
    ],
)
def test_regex_refused_at_load_with_position(regex, message):
    text = TRADES.replace("condition matches '[@FTIZ]{1,4}'", f"condition matches '{regex}'")
    with pytest.raises(ContractError) as info:
        parse_contract(text, "trades.yaml")
    shown = str(info.value)
    assert message in shown
    assert f"trades.yaml:{_line_of(text, 'condition matches')}:" in shown


def test_regex_on_a_number_column_is_refused():
    text = TRADES.replace('  - {clause: "size > 0"', "  - {clause: \"size matches '[0-9]+'\"")
    with pytest.raises(ContractError, match="'matches' reads text; 'size' is int64"):
        parse_contract(text, "trades.yaml")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"SELECT count(*) FROM {object} WHERE price <= 0"', '"DELETE FROM {object} WHERE price <= 0"', "one SELECT"),
        ('"SELECT count(*) FROM {object} WHERE price <= 0"', '"SELECT 1 FROM {object}; SELECT 2"', "one SELECT"),
        (
            '"SELECT count(*) FROM {object} WHERE price <= 0"',
            '"SELECT count(*) FROM trades"',
            "reads the batch as {object}",
        ),
        (
            '"SELECT count(*) FROM {object} WHERE price <= 0"',
            '"SELECT count(*) FROM {object} JOIN other USING (symbol)"',
            "not 'other'",
        ),
        (
            '"SELECT count(*) FROM {object} WHERE price <= 0"',
            "\"SELECT count(*) FROM read_csv('/etc/passwd'), {object}\"",
            "reads only {object}",
        ),
        ('"SELECT count(*) FROM {object} WHERE price <= 0"', '"SELECT * FROM {object}"', "exactly one value"),
        (
            '"SELECT count(*) FROM {object} WHERE price <= 0"',
            '"SELECT count(*) FROM {object} WHERE (price"',
            "does not parse",
        ),
        ("must_be: 0\n", "severity: error\n", "exactly one of must_be"),
        ("must_be_between: [1, 3]", "must_be_between: [3, 1]", "low <= high"),
        ("name: symbols_seen", "name: no_free_trades", "given twice: no_free_trades"),
        ("row_count: {min: 1, max: 100}", "row_count: {min: 100, max: 1}", "min 100 is above max 1"),
        ("row_count: {min: 1, max: 100}", "row_count: {}", "states min, max or both"),
        ('max_failing: "5%"', 'max_failing: "5 rows"', "percentage of rows"),
        ('max_failing: "5%"', 'max_failing: "150%"', "more than 100%"),
        ("    unique: true\n", "    unique: {}\n", "write unique: true"),
    ],
)
def test_bad_rule_input_is_a_positioned_contract_error(old, new, message, tmp_path):
    assert old in TRADES
    text = TRADES.replace(old, new, 1)
    with pytest.raises(ContractError) as info:
        parse_contract(text, "trades.yaml")
    every = " | ".join(str(e) for e in info.value.all_errors())
    assert message in every
    assert "trades.yaml:" in every
    result = run_cli("lint", write(tmp_path, text, "trades.yaml"))
    assert result.returncode == 2 and "Traceback" not in result.stderr


FOLDED = TRADES.replace(
    '    sql: "SELECT count(*) FROM {object} WHERE price <= 0"',
    "    sql: >-\n      SELECT count(*) FROM {object}\n      WHERE price <= 0",
).replace(
    "  trade_id:\n    type: string\n",
    "  trade_id:\n    description: >\n      The vendor's print id,\n      kept across replays.\n    type: string\n",
)


def test_folded_scalars_fold_to_spaces_in_sql_checks_descriptions_and_exports(tmp_path):
    # ruamel's round-trip composer marks every fold with a BEL (\x07): the SQL check was refused and the
    # descriptions carried it into the dbt and JSON Schema exports
    contract = trades_contract(tmp_path, FOLDED)
    checks = by_id(validate(contract, trades_csv(tmp_path, GOOD_ROWS)))
    assert checks["sql_checks.no_free_trades"]["status"] == "passed"
    assert parse_contract(FOLDED, "trades.yaml").fields["trade_id"].description == (
        "The vendor's print id, kept across replays.\n"
    )
    for target in ("jsonschema", "dbt"):
        out = tmp_path / target
        done = run_cli("export", target, contract, "--out", out)
        assert done.returncode == 0, done.stderr
        written = "".join(f.read_text() for f in sorted(out.rglob("*")) if f.is_file())
        assert "kept across replays" in written and "\x07" not in written and "\\u0007" not in written
