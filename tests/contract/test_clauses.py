"""Clauses parse into structured clauses whose sqlglot predicates mean what the words say.

Predicates are evaluated in a real DuckDB database on small tables.
"""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tscontract.contract.clauses import parse_cadence, parse_timezone
from tscontract.contract.durations import parse_duration
from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.row_parser import parse_field_constraint, parse_invariant
from tscontract.contract.row_resolve import resolve_columns
from tscontract.contract.types import parse_type

TYPES = {
    "low": parse_type("decimal(18,8)"),
    "open": parse_type("decimal(18,8)"),
    "high": parse_type("decimal(18,8)"),
    "volume": parse_type("decimal(24,4)"),
    "trade_count": parse_type("int64"),
    "value": parse_type("decimal(12,4)"),
    "quality": parse_type("enum[good, suspect, bad]"),
    "unit": parse_type("string"),
    "series_id": parse_type("string"),
}


def violations(clause_text: str, rows: list[tuple], columns: str) -> list[int]:
    """Row numbers (1-based) that violate the clause: predicate FALSE (NULL passes)."""
    clause = resolve_columns(parse_invariant(clause_text), TYPES)
    con = duckdb.connect()
    names = [c.strip() for c in columns.split(",")]
    values = ", ".join(
        "(" + ", ".join("NULL" if v is None else repr(v) for v in row) + f", {i})" for i, row in enumerate(rows, 1)
    )
    con.execute(f"CREATE TABLE t AS SELECT * FROM (VALUES {values}) v({', '.join(names)}, rn)")
    sql = f"SELECT rn FROM t WHERE NOT ({clause.sql}) ORDER BY rn"
    return [r[0] for r in con.execute(sql).fetchall()]


def test_chained_comparison_checks_both_sides():
    rows = [(1, 2, 3), (2, 1, 3), (1, 4, 3), (1, 1, 1)]
    assert violations("low <= open <= high", rows, "low, open, high") == [2, 3]


def test_is_null_or():
    rows = [(None,), (0,), (-1,), (5,)]
    assert violations("trade_count is null or trade_count >= 0", rows, "trade_count") == [3]


def test_null_only_when_is_an_implication_and_unknown_condition_does_not_excuse():
    rows = [(None, "bad"), (None, "good"), (None, None), (1.5, "good"), (2.0, "bad")]
    assert violations("value is null only when quality = bad", rows, "value, quality") == [2, 3]


def test_arithmetic_functions_between_in_not():
    assert violations("abs(high - low) / high < 0.5", [(10, 11), (1, 3)], "low, high") == [2]
    assert violations("volume between 0 and 10", [(5,), (11,), (-1,)], "volume") == [2, 3]
    assert violations("quality in (good, suspect)", [("good",), ("bad",)], "quality") == [2]
    assert violations("not (volume > 5)", [(5,), (6,)], "volume") == [2]


def test_catalog_clauses_compile_to_catalog_columns():
    bound = parse_invariant("value within catalog hard_bounds for series_id")
    assert bound.kind == "catalog_bound"
    assert bound.sql == "value BETWEEN catalog.hard_bounds_low AND catalog.hard_bounds_high"
    assert (bound.catalog.attribute, bound.catalog.key) == ("hard_bounds", "series_id")
    equals = parse_invariant("unit equals catalog unit for series_id")
    assert equals.sql == "unit = catalog.unit" and equals.columns == ("unit",)
    constraint = parse_field_constraint("unit", "equals catalog unit for series_id")
    assert constraint.sql == equals.sql and constraint.subject == "unit"


def test_catalog_clause_joined_in_duckdb_catches_kpa():
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE data AS SELECT * FROM (VALUES ('P1', 850.0, 'kPa'), ('P1', 8.5, 'bar')) v(series_id, value, unit)"
    )
    con.execute(
        "CREATE TABLE catalog AS SELECT 'P1' AS series_id, 'bar' AS unit, 0 AS hard_bounds_low, 60 AS hard_bounds_high"
    )
    failed = []
    for text in ("unit equals catalog unit for series_id", "value within catalog hard_bounds for series_id"):
        clause = resolve_columns(parse_invariant(text), TYPES)
        predicate = clause.qualified("data").sql(dialect="duckdb")
        sql = f"SELECT count(*) FILTER (WHERE NOT ({predicate})) FROM data JOIN catalog USING (series_id)"
        failed.append(con.execute(sql).fetchone()[0])
    assert failed == [1, 1]


def test_field_constraint_forms():
    assert parse_field_constraint("volume", ">= 0").sql == "volume >= 0"
    assert parse_field_constraint("q", "in [a, b]").sql == "q IN (a, b)"
    assert parse_field_constraint("x", "between 1 and 2").sql == "x BETWEEN 1 AND 2"


KEYWORDS = ["not", "and", "or", "is", "null", "in", "between", "within", "equals", "matches", "catalog", "at"]


@settings(deadline=None)  # the first example builds the parser
@given(st.sampled_from(KEYWORDS), st.from_regex(r"[a-z0-9_]{1,8}", fullmatch=True), st.sampled_from(["a", "A"]))
def test_a_column_named_like_a_keyword_is_one_name(keyword, rest, case):
    # Earley read 'notional >= 0' as 'not (ional >= 0)' and 'nota is null' as 'not (a is null)'
    name = (keyword.upper() if case == "A" else keyword) + rest
    comparison = parse_invariant(f"{name} >= 0")
    assert comparison.kind == "comparison" and comparison.columns == (name,)
    assert parse_invariant(f"not {name} >= 0").columns == (name,)
    null_rule = parse_invariant(f"{name} is null")
    assert null_rule.kind == "null_rule" and null_rule.columns == (name,)


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ("low <= open <=", "ends too early", 14),
        ("low <== open", "unexpected", 6),
        ("value is nul", "unexpected", 9),
        ("sqrt(value) > 0", "unknown function 'sqrt'", 0),
        ("value within catalog bounds for series_id", "not a catalog lookup", 0),
        ("value = null", "is null", 8),
        ("volume", "ends too early", 6),
    ],
)
def test_bad_invariants_say_what_and_where(text, message, offset):
    with pytest.raises(ClauseSyntaxError) as info:
        parse_invariant(text)
    assert message in info.value.message
    assert info.value.offset == offset


def test_unknown_column_and_enum_member_resolution():
    with pytest.raises(ClauseSyntaxError, match="unknown column 'valu'") as info:
        resolve_columns(parse_invariant("valu >= 0"), TYPES)
    assert info.value.offset == 0
    with pytest.raises(ClauseSyntaxError, match="unknown column 'terrible'"):
        resolve_columns(parse_invariant("value is null only when quality = terrible"), TYPES)
    with pytest.raises(ClauseSyntaxError, match="'terrible' is not a member"):
        resolve_columns(parse_invariant("quality = 'terrible'"), TYPES)
    resolved = resolve_columns(parse_invariant("quality != suspect"), TYPES)
    assert resolved.sql == "quality <> 'suspect'" and resolved.columns == ("quality",)


def test_cadence_forms():
    c = parse_cadence("60s within session; no bars outside session")
    assert (c.source, c.interval.seconds, c.within_session, c.outside_session_forbidden) == (
        "fixed",
        Decimal(60),
        True,
        True,
    )
    c = parse_cadence("per series from catalog; tolerance +/-10% of interval")
    assert (c.source, c.tolerance_ratio) == ("catalog", Decimal("0.1"))
    c = parse_cadence("1m; tolerance +/-5s")
    assert c.interval.seconds == 60 and c.tolerance.seconds == 5
    assert parse_cadence("irregular").source == "irregular"
    for bad in (
        "every minute",
        "60s; tolerance +/-150% of interval",
        "5 trading days",
        "60s; tolerance +/-1s; tolerance +/-2s",
    ):
        with pytest.raises(ClauseSyntaxError):
            parse_cadence(bad)


def test_timezone_rule_and_durations():
    rule = parse_timezone("UTC instant; session boundaries defined per venue calendar")
    assert rule.utc_instant and rule.sessions == "venue"
    assert parse_timezone("UTC instant; session boundaries defined by calendar XNYS").session_calendar == "XNYS"
    with pytest.raises(ClauseSyntaxError):
        parse_timezone("local time")
    with pytest.raises(ClauseSyntaxError):
        parse_timezone("UTC instant; whatever the device says")
    assert parse_duration("15m").seconds == 900
    assert parse_duration("500ms").seconds == Decimal("0.5")
    assert parse_duration("5 minutes").seconds == 300
    window = parse_duration("5 trading days")
    assert window.on_trading_calendar and window.amount == 5
    with pytest.raises(ValueError, match="needs a calendar"):
        _ = window.seconds
    with pytest.raises(ClauseSyntaxError):
        parse_duration("5 trading hours")
    with pytest.raises(ClauseSyntaxError):
        parse_duration("soon")


@pytest.mark.parametrize(
    ("text", "kind", "detail"),
    [
        ("decimal(18,8)", "decimal", (18, 8)),
        ("decimal(18, 8)", "decimal", (18, 8)),
        ("numeric(9,3)", "decimal", (9, 3)),
        ("enum[good, suspect, bad]", "enum", ("good", "suspect", "bad")),
        ("enum['a b', c]", "enum", ("a b", "c")),
        ("timestamp_ms_utc", "timestamp", "ms"),
        ("timestamp_us_utc", "timestamp", "us"),
        ("int64", "int", 64),
        ("int32", "int", 32),
        ("bool", "bool", None),
        ("string", "string", None),
        ("float64", "float", 64),
    ],
)
def test_type_expressions(text, kind, detail):
    t = parse_type(text)
    assert t.kind == kind
    if kind == "decimal":
        assert (t.precision, t.scale) == detail
    elif kind == "enum":
        assert t.members == detail
    elif kind == "timestamp":
        assert t.time_unit == detail
    elif kind in ("int", "float"):
        assert t.bits == detail


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("decimal(4,6)", "scale 6 exceeds precision 4"),
        ("decimal(40,2)", "out of range"),
        ("decimal", "needs precision and scale"),
        ("decimal(18", "cannot parse type"),
        ("enum[a, a]", "listed twice"),
        ("enum", "needs its members"),
        ("timestamp_ms", "naive timestamp"),
        ("timestamp", "naive timestamp"),
        ("timestamp_ps_utc", "unknown timestamp type"),
        ("strng", "unknown type 'strng'"),
    ],
)
def test_bad_types(text, message):
    with pytest.raises(ClauseSyntaxError, match=message):
        parse_type(text)


def test_a_doubled_quote_is_one_quote_in_every_literal():
    """As in SQL: `'d''Ivoire'` is d'Ivoire in a comparison, an in-list, an enum member and a pattern;
    brackets inside quotes never count towards the nesting limit."""
    assert parse_invariant("s = 'Côte d''Ivoire'").sql == "s = 'Côte d''Ivoire'"
    assert parse_field_constraint("s", 'in (\'it\'\'s\', "say ""hi""")').sql == "s IN ('it''s', 'say \"hi\"')"
    assert parse_type("enum[a, 'it''s']").members == ("a", "it's")
    assert parse_field_constraint("s", "matches 'd''[A-Z]+'").sql == "REGEXP_FULL_MATCH(s, 'd''[A-Z]+')"
    assert parse_invariant("s <> '((((((''(((((((((((((((((((((((((((((((('").sql.startswith("s <> '")
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('Côte d''Ivoire'), ('Cote d''Ivoire')) v(s)")
    predicate = parse_invariant("s in ('Côte d''Ivoire', 'x')").sql
    assert con.execute(f"SELECT s FROM t WHERE {predicate}").fetchall() == [("Côte d'Ivoire",)]
    # a doubled quote never closes the literal: what follows it is text, not SQL
    injected = parse_invariant("s = 'x'' or 1=1 --'").sql
    assert con.execute(f"SELECT count(*) FROM t WHERE {injected}").fetchone() == (0,)
    with pytest.raises(ClauseSyntaxError):
        parse_invariant("s = 'd'Ivoire'")  # a single quote inside still ends the literal
