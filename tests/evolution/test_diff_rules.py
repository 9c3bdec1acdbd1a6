"""`tscontract diff` classifies issue 14's rules: unique, row_count, max_failing, SQL checks, regex clauses."""

from __future__ import annotations

import pytest

from tests.conftest import OHLCV_CONTRACT
from tests.evolution.test_diff import only_change

BASE = OHLCV_CONTRACT.read_text()
SYMBOL = "  symbol:   {type: string, nullable: false}"
ROWS = "row_count: {min: 1, max: 1000}\n"
SQL = (
    "sql_checks:\n"
    "  - name: no_zero_volume\n"
    '    sql: "SELECT count(*) FROM {object} WHERE volume = 0"\n'
    "    must_be_less_than: 5\n"
)


@pytest.mark.parametrize(
    ("old", "replacements", "expected"),
    [
        (
            BASE,
            [(SYMBOL, SYMBOL[:-1] + ", unique: true}")],
            [("tighten_unique", "fields.symbol.unique", "no", "major")],
        ),
        (
            BASE.replace(SYMBOL, SYMBOL[:-1] + ", unique: true}"),
            [("unique: true", "unique: {severity: warning}")],
            [("relax_unique", "fields.symbol.unique", "notice", "minor")],
        ),
        (
            BASE.replace(SYMBOL, SYMBOL[:-1] + ", unique: {severity: warning}}"),
            [("severity: warning}", "severity: error}")],
            [("tighten_unique", "fields.symbol.unique.severity", "no", "major")],
        ),
        (
            BASE.replace(SYMBOL, SYMBOL[:-1] + ", unique: {severity: error}}"),
            [("severity: error}", "severity: error, max_failing: '1%'}")],
            [("relax_unique", "fields.symbol.unique.max_failing", "notice", "minor")],
        ),
        (BASE, [("revision_policy:", ROWS + "revision_policy:")], [("tighten_row_count", "row_count", "no", "major")]),
        (
            BASE.replace("revision_policy:", ROWS + "revision_policy:"),
            [("max: 1000", "max: 5000")],
            [("relax_row_count", "row_count.max", "notice", "minor")],
        ),
        (
            BASE.replace("revision_policy:", ROWS + "revision_policy:"),
            [("min: 1,", "min: 10,")],
            [("tighten_row_count", "row_count.min", "no", "major")],
        ),
        (BASE, [("revision_policy:", SQL + "revision_policy:")], [("tighten_sql_checks", "sql_checks", "no", "major")]),
        (
            BASE.replace("revision_policy:", SQL + "revision_policy:"),
            [("must_be_less_than: 5\n", "must_be_less_than: 5\n    severity: warning\n")],
            [("relax_sql_checks", "sql_checks", "notice", "minor")],
        ),
        (
            BASE.replace("revision_policy:", SQL + "revision_policy:"),
            [("must_be_less_than: 5", "must_be_less_than: 50")],
            [("change_sql_checks", "sql_checks", "no", "major")],
        ),
        (
            BASE.replace("revision_policy:", SQL + "revision_policy:"),
            [(SQL, "")],
            [("relax_sql_checks", "sql_checks", "notice", "minor")],
        ),
        (
            BASE,
            [("  - volume >= 0", '  - {clause: volume >= 0, max_failing: "0.1%"}')],
            [("relax_invariant_threshold", "invariants", "notice", "minor")],
        ),
        (
            BASE.replace("  - volume >= 0", '  - {clause: volume >= 0, max_failing: "1%"}'),
            [('max_failing: "1%"', 'max_failing: "0.5%"')],
            [("tighten_invariant_threshold", "invariants", "no", "major")],
        ),
        (
            BASE,
            [("  - volume >= 0", "  - volume >= 0\n  - symbol matches '^[A-Z.]{1,6}$'")],
            [("tighten_range", "invariants", "no", "major")],
        ),
    ],
)
def test_rules_are_classified(old, replacements, expected):
    assert only_change(old, replacements) == expected
