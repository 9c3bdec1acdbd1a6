"""Generated row clauses and rows (hypothesis) for the differential tests of clause meaning.

A clause is generated as the words a contract author writes (brackets, unary minus, mixed
``* / + -``, and/or/not, chained comparisons, ``between``, ``in``, ``is null``, ``matches``) over
the columns of :data:`CONTRACT`, well typed: numbers with numbers, text with text, instants with
instants. Rows hold nulls and extremes: integers at their limits, floats with NaN, ±Inf and -0.0,
decimals at their precision, text with quotes and non-ASCII letters.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from functools import cache
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

# name -> (contract type, arrow type)
COLUMNS: dict[str, tuple[str, pa.DataType]] = {
    "i": ("int64", pa.int64()),
    "j": ("int32", pa.int32()),
    "d2": ("decimal(10,2)", pa.decimal128(10, 2)),
    "d6": ("decimal(15,6)", pa.decimal128(15, 6)),
    "f": ("float64", pa.float64()),
    "s": ("string", pa.string()),
    "q": ("enum[good, suspect, bad]", pa.string()),
    "b": ("bool", pa.bool_()),
    "t2": ("timestamp_us_utc", pa.timestamp("us", tz="UTC")),
}
EXACT = ["i", "j", "d2", "d6"]
NUMERIC = [*EXACT, "f"]
START = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # the night Europe's clocks go forward


def contract_text(clauses: list[str]) -> str:
    fields = "\n".join(f"  {name}: {{type: '{dtype}', nullable: true}}" for name, (dtype, _) in COLUMNS.items())
    invariants = "\n".join(f"  - {json.dumps(clause)}" for clause in clauses)
    return f"""
contract: generated
version: 1.0.0
owner: semantics@example
key: [series_id, ts]
time:
  column: ts
  precision: us
  timezone: UTC instant
  cadence: irregular
fields:
  series_id: {{type: string, nullable: false}}
  ts: {{type: timestamp_us_utc, nullable: false}}
{fields}
invariants:
{invariants}
"""


# ---------------------------------------------------------------- clauses


@st.composite
def _literal(draw: st.DrawFn) -> str:
    value = draw(st.one_of(st.integers(-100, 100), st.integers(-(2**31), 2**31), _decimal_literal()))
    return str(value)


@st.composite
def _decimal_literal(draw: st.DrawFn) -> Decimal:
    places = draw(st.integers(0, 4))
    unscaled = draw(st.integers(-(10**6), 10**6))
    return Decimal(unscaled).scaleb(-places)


@cache  # a strategy is immutable: built once, drawn from many times (building one each draw was slow)
def _number_leaf() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(NUMERIC), _literal())


@cache
def _numeric(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _number_leaf()
    inner = _numeric(depth - 1)
    return st.one_of(
        _number_leaf(),
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"-({e})"),
        st.sampled_from(NUMERIC).map(lambda c: f"-{c}"),
        inner.map(lambda e: f"abs({e})"),
        st.tuples(inner, inner).map(lambda t: f"coalesce({t[0]}, {t[1]})"),
        st.tuples(st.sampled_from(["least", "greatest"]), inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    )


_COMPARE = st.sampled_from(["<", "<=", ">", ">=", "=", "<>", "!="])
# a quote inside a literal is written twice, as in SQL ('d''Ivoire')
_TEXT_LITERALS = st.text(alphabet=st.sampled_from(list("abzAZ09 _-'éß日")), min_size=0, max_size=4).map(
    lambda s: "'" + s.replace("'", "''") + "'"
)


# '.' against line breaks (PostgreSQL's '.' takes '\n', Java's '\r'), the ASCII classes against '١' (an
# Arabic-Indic digit) and 'é', the flags each engine spells its own way
PATTERNS = [
    *("[a-z]*", "a.*", ".*[0-9]", "[^ ]+", "", "a.b", ".+", "\\d+", "\\w+", "\\s.*", "\\S*", "\\D+"),
    *("(?i)[A-Z]+", "(?i)É.*", "(?s).*", "(?s)a.b", "(?m)a.*", "(?m)^a", "(?is).*z", "[\\d\\s]+"),
    *("a\\b.*", ".*\\B.", "\\bé"),
]
_PATTERNS = st.sampled_from(PATTERNS)


@st.composite
def _comparison(draw: st.DrawFn, depth: int) -> str:
    kind = draw(st.sampled_from(["number", "number", "chain", "between", "in", "null", "text", "enum", "instant"]))
    number = _numeric(depth)
    if kind == "number":
        return f"{draw(number)} {draw(_COMPARE)} {draw(number)}"
    if kind == "chain":
        ops = draw(st.lists(st.sampled_from(["<", "<="]), min_size=2, max_size=3))
        parts = [draw(number) for _ in range(len(ops) + 1)]
        return parts[0] + "".join(f" {op} {part}" for op, part in zip(ops, parts[1:], strict=True))
    if kind == "between":
        negated = draw(st.booleans())
        text = f"{draw(number)} between {draw(number)} and {draw(number)}"
        return f"not ({text})" if negated else text
    if kind == "in":
        values = draw(st.lists(_literal(), min_size=1, max_size=4))
        return f"{draw(st.sampled_from(NUMERIC))} in ({', '.join(values)})"
    if kind == "null":
        column = draw(st.sampled_from(list(COLUMNS)))
        return f"{column} is {'not ' if draw(st.booleans()) else ''}null"
    if kind == "text":
        left = draw(st.sampled_from(["s", "lower(s)", "upper(s)"]))
        if draw(st.booleans()):
            return f"length({left}) {draw(_COMPARE)} {draw(st.integers(0, 5))}"
        if draw(st.booleans()):
            return f"s matches '{draw(_PATTERNS)}'"
        return f"{left} {draw(_COMPARE)} {draw(_TEXT_LITERALS)}"
    if kind == "enum":
        if draw(st.booleans()):
            return f"q in ({', '.join(draw(st.lists(st.sampled_from(['good', 'suspect', 'bad']), min_size=1)))})"
        return f"q {draw(st.sampled_from(['=', '<>']))} {draw(st.sampled_from(['good', 'bad']))}"
    if draw(st.booleans()):
        return f"t2 {draw(_COMPARE)} ts"
    return f"t2 {draw(_COMPARE)} '{draw(_time_literal())}'"


@st.composite
def _time_literal(draw: st.DrawFn) -> str:
    """An instant near START written as authors write one: Z, an offset, no offset, a bare date."""
    at = START + timedelta(seconds=draw(st.integers(-7200, 7200)))
    form = draw(st.sampled_from(["z", "offset", "naive", "date"]))
    if form == "z":
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")
    if form == "offset":
        return at.astimezone(timezone(timedelta(hours=2))).isoformat()
    if form == "naive":
        return at.strftime("%Y-%m-%d %H:%M:%S")
    return at.strftime("%Y-%m-%d")


@st.composite
def clauses(draw: st.DrawFn, depth: int = 2) -> str:
    """One well-typed invariant in the contract's own words."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(_comparison(min(depth, 2)))
    left, right = draw(clauses(depth - 1)), draw(clauses(depth - 1))
    shape = draw(st.sampled_from(["and", "or", "not", "bracket_and", "bracket_or", "b"]))
    if shape == "not":
        return f"not ({left})"
    if shape == "b":
        return f"b = {draw(st.sampled_from(['true', 'false']))} or {left}"
    if shape.startswith("bracket_"):
        return f"({left}) {shape.removeprefix('bracket_')} {right}"
    return f"{left} {shape} {right}"


# ---------------------------------------------------------------- rows

_INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, 1, -1, 2**63 - 1, -(2**63)]))
_INT32 = st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from([0, 1, -1, 2**31 - 1, -(2**31)]))
_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 0.1, 1e308, 5e-324]),
)


def _decimals(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    limit = 10**precision - 1
    edges = st.sampled_from([0, 1, -1, limit, -limit])
    return st.one_of(st.integers(-limit, limit), edges).map(lambda n: Decimal(n).scaleb(-scale))


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy, strategy, strategy)


_ROW = st.fixed_dictionaries(
    {
        "i": _maybe(_INT64),
        "j": _maybe(_INT32),
        "d2": _maybe(_decimals(10, 2)),
        "d6": _maybe(_decimals(15, 6)),
        "f": _maybe(_FLOATS),
        "s": _maybe(st.text(alphabet=st.sampled_from([*"abzAZ09 _-'éÉß日\"", "\n", "\r", "\u0661"]), max_size=6)),
        "q": _maybe(st.sampled_from(["good", "suspect", "bad"])),
        "b": _maybe(st.booleans()),
        "t2": _maybe(st.integers(-7200, 7200).map(lambda s: START + timedelta(seconds=s))),
    }
)


def rows(max_size: int = 12, min_size: int = 1) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(_ROW, min_size=min_size, max_size=max_size)


def table(batch: list[dict[str, Any]]) -> pa.Table:
    """The rows as an Arrow table with the contract's types; ``ts`` one second apart (the key)."""
    data: dict[str, pa.Array] = {
        "series_id": pa.array(["x"] * len(batch), pa.string()),
        "ts": pa.array([START + timedelta(seconds=n) for n in range(len(batch))], pa.timestamp("us", tz="UTC")),
    }
    for name, (_, arrow) in COLUMNS.items():
        data[name] = pa.array([row[name] for row in batch], arrow)
    return pa.table(data)


def reference_row(row: dict[str, Any], number: int) -> dict[str, Any]:
    return {**row, "series_id": "x", "ts": START + timedelta(seconds=number)}
