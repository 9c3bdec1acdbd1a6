"""What a row clause means: the reference every engine and export is checked against.

A row clause is read as a tree (:mod:`tscontract.contract.clauses`); this module says, in plain
Python, what that tree yields for one row. It is the specification ("Clause semantics" in
docs/language.md states each rule in words); the engines' SQL (:mod:`tscontract.sql.semantics`) and the
exports follow it, and the differential tests (``tests/contract/test_semantics_differential.py``)
check them against it on generated clauses and rows.

The rules:

* **Values.** A row holds ``None`` (SQL NULL), ``bool``, ``int`` (integer columns), ``Decimal``
  (decimal columns and every number written in a clause), ``float`` (float columns, with NaN and
  ±Inf), ``str`` (strings and enums), ``datetime`` (instants, UTC) or ``date``.
* **Exact arithmetic.** ``+ - *`` and unary minus on integers, decimals and written numbers are
  exact: nothing wraps, rounds or overflows. :func:`static_type` bounds the digits a clause can
  reach; a clause whose arithmetic could need more than 38 digits (what every engine's DECIMAL
  holds) is refused at load, never run to an overflow.
* **Floating point.** Where one operand is a float, the other is converted to the nearest
  binary64 value and the operation is IEEE 754 binary64 (``inf - inf`` is NaN). ``/`` always
  divides in binary64: ``x / 0`` is +Inf or -Inf, ``0 / 0`` is NaN.
* **NaN is not a number.** A comparison (``= <> < <= > >=``, ``between``, ``in``) with a NaN
  operand is false, so ``vwap >= 0`` fails a NaN row, and so does ``vwap < 0``. ``least`` and
  ``greatest`` with a NaN argument are NaN. NaN is not null: ``x is null`` is false for NaN.
* **Null.** Any operator with a null operand is null (unknown); ``and``/``or``/``not`` follow
  three-valued (Kleene) logic; ``coalesce`` is its first non-null argument; ``least`` and
  ``greatest`` are null when any argument is null. A row fails a clause only when the clause is **false**;
  an unknown clause does not fail (nullability is a clause of its own).
* **Comparisons** are exact between integers and decimals, by code point between strings, by
  instant between timestamps, ``false < true`` between booleans. ``a <= b <= c`` is
  ``a <= b and b <= c``; ``x between a and b`` is ``a <= x and x <= b``; ``x in (v, w)`` is
  ``x = v or x = w``.
* **Time literals.** A quoted text compared with an instant is the instant it names (text
  without an offset is UTC; a bare date is its UTC midnight); compared with a date, the date.
  Any other text beside a time is refused at load.
* **Text.** ``matches`` is a full match of the (portable) pattern; ``length`` counts code points;
  ``lower``/``upper`` map each character to its one-character case partner (``ß`` upper is
  ``ẞ``, not ``SS``), characters without one stay as they are.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, localcontext
from typing import Any, Literal

import sqlglot.expressions as exp

from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.regex import python_pattern
from tscontract.contract.types import DataType

Value = None | bool | int | Decimal | float | str | datetime | date
Truth = bool | None

MAX_DIGITS = 38  # the widest DECIMAL every engine holds

# ---------------------------------------------------------------- static types


@dataclass(frozen=True)
class ExprType:
    """What an expression yields; an ``exact`` number carries its scale and the largest magnitude it reaches."""

    kind: Literal["exact", "float", "text", "bool", "instant", "date", "any"]
    scale: int = 0
    limit: Decimal = Decimal(0)

    @property
    def numeric(self) -> bool:
        return self.kind in ("exact", "float")

    @property
    def precision(self) -> int:
        """The digits an exact value of this type needs (``limit`` written at ``scale``), at least ``scale``:
        ``0.01`` is a DECIMAL(2, 2), never the DECIMAL(1, 2) no engine has."""
        digits = len(str(int(self.limit.scaleb(self.scale).to_integral_value(rounding="ROUND_CEILING"))))
        return max(digits, self.scale, 1)


FLOAT = ExprType("float")
TEXT = ExprType("text")
BOOL = ExprType("bool")
ANY = ExprType("any")  # a catalog attribute: its type comes with the catalog


def column_type(dtype: DataType) -> ExprType:
    kind = dtype.kind
    if kind == "int":
        return ExprType("exact", 0, Decimal(2) ** ((dtype.bits or 64) - 1))
    if kind == "decimal":
        precision, scale = dtype.precision or MAX_DIGITS, dtype.scale or 0
        return ExprType("exact", scale, Decimal(10) ** (precision - scale) - Decimal(1).scaleb(-scale))
    if kind == "float":
        return FLOAT
    if kind in ("string", "enum"):
        return TEXT
    if kind == "bool":
        return BOOL
    if kind == "timestamp":
        return ExprType("instant")
    if kind == "date":
        return ExprType("date")
    return ANY


def literal_type(text: str) -> ExprType:
    number = Decimal(text)
    return ExprType("exact", max(0, -int(number.as_tuple().exponent)), abs(number))


def _exact(scale: int, limit: Decimal, node: exp.Expr) -> ExprType:
    found = ExprType("exact", scale, limit)
    if found.precision > MAX_DIGITS:
        raise ClauseSyntaxError(
            f"the arithmetic {node.sql('duckdb')!r} can reach {found.precision} digits; a DECIMAL holds "
            f"{MAX_DIGITS}: compare a narrower expression (for example divide first: '/' is a floating-point "
            "division)",
            _offset(node),
        )
    return found


def _offset(node: exp.Expr) -> int:
    for column in node.find_all(exp.Column):
        if column.meta.get("offset") is not None:
            return int(column.meta["offset"])
    return 0


def _arithmetic_type(node: exp.Expr, left: ExprType, right: ExprType) -> ExprType:
    if not (left.numeric or left.kind == "any") or not (right.numeric or right.kind == "any"):
        raise ClauseSyntaxError(f"arithmetic needs numbers: {node.sql('duckdb')!r}", _offset(node))
    if isinstance(node, exp.Div) or FLOAT in (left, right):
        return FLOAT
    if ANY in (left, right):
        return ANY
    if isinstance(node, exp.Mul):
        return _exact(left.scale + right.scale, left.limit * right.limit, node)
    return _exact(max(left.scale, right.scale), left.limit + right.limit, node)


def _comparable(node: exp.Expr, types: list[ExprType], parts: list[exp.Expr] | None = None) -> None:
    """Refuse a comparison of different kinds; a text literal that reads as a time compares with times."""
    kinds = {t.kind for t in types if t.kind != "any"}
    if (
        parts is not None
        and kinds & {"instant", "date"}
        and all(
            t.kind != "text" or (isinstance(p, exp.Literal) and _time_literal(p.this) is not None)
            for p, t in zip(parts, types, strict=True)
        )
    ):
        kinds -= {"text"}
    if len(kinds) > 1 and not kinds <= {"exact", "float"}:
        raise ClauseSyntaxError(f"cannot compare {' with '.join(sorted(kinds))}: {node.sql('duckdb')!r}", _offset(node))
    bare = [p.this if isinstance(p, exp.Neg) else p for p in parts or []]
    written = [isinstance(p, exp.Literal) for p in bare] if bare else [False] * len(types)
    exact = [t for t, literal in zip(types, written, strict=True) if t.kind == "exact" and not literal]
    if kinds == {"exact"} and len({t.scale for t in exact}) > 1:
        # compared at their common scale: i * i beside a decimal(10,2) needs 40 digits, which no engine holds
        _exact(max(t.scale for t in exact), max(t.limit for t in exact), node)


def _common(node: exp.Expr, types: list[ExprType]) -> ExprType:
    _comparable(node, types)
    known = [t for t in types if t.kind != "any"]
    if not known:
        return ANY
    if FLOAT in known:
        return FLOAT
    if known[0].kind != "exact":
        return known[0]
    return _exact(max(t.scale for t in known), max(t.limit for t in known), node)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)


def static_type(node: exp.Expr, types: Mapping[str, DataType]) -> ExprType:
    """The type ``node`` yields over columns of ``types``; a clause that mixes kinds is refused here."""
    if isinstance(node, exp.Paren):
        return static_type(node.this, types)
    if isinstance(node, exp.Column):
        return column_type(types[node.name]) if node.name in types and not node.table else ANY
    if isinstance(node, exp.Literal):
        return TEXT if node.is_string else literal_type(node.this)
    if isinstance(node, exp.Boolean | exp.Null):
        return BOOL if isinstance(node, exp.Boolean) else ANY
    if isinstance(node, exp.Neg):
        return static_type(node.this, types)
    if isinstance(node, _ARITHMETIC):
        return _arithmetic_type(node, static_type(node.this, types), static_type(node.expression, types))
    if isinstance(node, (*_COMPARISONS, exp.Between, exp.In)):
        parts = _compared_parts(node)
        _comparable(node, [static_type(p, types) for p in parts], parts)
        return BOOL
    return _function_type(node, types)


def _compared_parts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    if isinstance(node, exp.In):
        return [node.this, *node.expressions]
    return [node.this, node.expression]


def _time_literal(text: str) -> datetime | date | None:
    """``text`` as the instant (naive text is UTC) or date it names, or None."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return None
    if len(text) == len("2026-01-01"):
        return found.date()
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def _as_time(text: str, other: date) -> date | None:
    """A time literal read as the kind of ``other``: a date beside an instant is its UTC midnight."""
    found = _time_literal(text)
    if isinstance(other, datetime) and found is not None and not isinstance(found, datetime):
        return datetime(found.year, found.month, found.day, tzinfo=UTC)
    return found


def _function_type(node: exp.Expr, types: Mapping[str, DataType]) -> ExprType:
    if isinstance(node, exp.Abs):
        return static_type(node.this, types)
    if isinstance(node, exp.Coalesce | exp.Least | exp.Greatest):
        return _common(node, [static_type(a, types) for a in [node.this, *node.expressions]])
    if isinstance(node, exp.Length):
        static_type(node.this, types)
        return ExprType("exact", 0, Decimal(2) ** 63)
    if isinstance(node, exp.Lower | exp.Upper):
        static_type(node.this, types)
        return TEXT
    if isinstance(node, exp.Round):
        inner = static_type(node.this, types)
        digits = node.args.get("decimals")
        scale = int(digits.this) if isinstance(digits, exp.Literal) else inner.scale
        return ExprType("exact", max(0, min(scale, inner.scale)), inner.limit + 1) if inner.kind == "exact" else inner
    for child in node.iter_expressions():
        static_type(child, types)
    return BOOL


# ---------------------------------------------------------------- the reference evaluator


def holds(predicate: exp.Expr, row: Mapping[str, Value]) -> Truth:
    """True, False or None (unknown) for ``row``; the row violates the clause only when False.

    ``row`` maps column names to values; a catalog attribute is ``"catalog.<name>"``.
    """
    with localcontext() as context:
        context.prec = 200  # exact: 38 digits times 38 digits and some, never rounded
        value = evaluate(predicate, row)
    return None if value is None else bool(value)


def _is_nan(value: Value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _as_float(value: Value) -> float:
    assert isinstance(value, int | Decimal | float) and not isinstance(value, bool)
    return float(value)


def _arith(function: Callable[[Any, Any], Any]) -> Callable[[Value, Value], Value]:
    """``function`` is operator.add, sub or mul, which typeshed types on Any: of two numbers of one kind
    it gives that kind (a column the contract does not type may hold anything, and Python decides)."""

    def apply(left: Value, right: Value) -> Value:
        if left is None or right is None:
            return None
        if isinstance(left, float) or isinstance(right, float):
            return float(function(_as_float(left), _as_float(right)))
        result: Value = function(left, right)
        return result

    return apply


def _divide(left: Value, right: Value) -> Value:
    if left is None or right is None:
        return None
    a, b = _as_float(left), _as_float(right)
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _compare(function: Callable[[Any, Any], bool]) -> Callable[[Value, Value], Truth]:
    """``function`` is operator.eq, lt and friends: typeshed types their operands as protocols that
    Value (None among them, where a text is no time) does not meet; Python decides as before."""

    def apply(left: Value, right: Value) -> Truth:
        if left is None or right is None:
            return None
        if _is_nan(left) or _is_nan(right):
            return False
        if isinstance(left, date) and isinstance(right, str):
            right = _as_time(right, left)
        elif isinstance(right, date) and isinstance(left, str):
            left = _as_time(left, right)
        if isinstance(left, float) != isinstance(right, float) and not isinstance(left, str | bool):
            return function(_as_float(left), _as_float(right))
        return function(left, right)

    return apply


_COMPARE: dict[type[exp.Expr], Callable[[Value, Value], Truth]] = {
    exp.EQ: _compare(operator.eq),
    exp.NEQ: _compare(operator.ne),
    exp.LT: _compare(operator.lt),
    exp.LTE: _compare(operator.le),
    exp.GT: _compare(operator.gt),
    exp.GTE: _compare(operator.ge),
}
_BINARY: dict[type[exp.Expr], Callable[[Value, Value], Value]] = {
    exp.Add: _arith(operator.add),
    exp.Sub: _arith(operator.sub),
    exp.Mul: _arith(operator.mul),
    exp.Div: _divide,
    **_COMPARE,
}


def _and(left: Truth, right: Truth) -> Truth:
    if left is False or right is False:
        return False
    return None if left is None or right is None else True


def _or(left: Truth, right: Truth) -> Truth:
    if left is True or right is True:
        return True
    return None if left is None or right is None else False


def _extreme(values: list[Value], pick: Callable[..., Value]) -> Value:
    if any(v is None for v in values):
        return None
    known = values
    if any(_is_nan(v) for v in known):
        return math.nan
    if any(isinstance(v, float) for v in known):
        return pick(_as_float(v) for v in known)
    return pick(known)


def evaluate(node: exp.Expr, row: Mapping[str, Value]) -> Value:
    """The value of expression ``node`` for ``row`` (see the module's rules)."""
    kind = type(node)
    if kind in _BINARY:
        return _BINARY[kind](evaluate(node.this, row), evaluate(node.expression, row))
    if isinstance(node, exp.Paren):
        return evaluate(node.this, row)
    if isinstance(node, exp.Column):
        return row[f"{node.table}.{node.name}" if node.table else node.name]
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else Decimal(node.this)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.And | exp.Or):
        join = _and if isinstance(node, exp.And) else _or
        return join(_truth(evaluate(node.this, row)), _truth(evaluate(node.expression, row)))
    if isinstance(node, exp.Not):
        inner = _truth(evaluate(node.this, row))
        return None if inner is None else not inner
    return _special(node, row)


def _truth(value: Value) -> Truth:
    return None if value is None else bool(value)


def _special(node: exp.Expr, row: Mapping[str, Value]) -> Value:
    if isinstance(node, exp.Neg):
        value = evaluate(node.this, row)
        if value is None or isinstance(value, int | Decimal | float):
            return None if value is None else -value
        raise TypeError(f"bad operand type for unary -: {type(value).__name__!r}")  # as Python's own -value
    if isinstance(node, exp.Is):
        return evaluate(node.this, row) is None
    if isinstance(node, exp.Between):
        value = evaluate(node.this, row)
        low, high = evaluate(node.args["low"], row), evaluate(node.args["high"], row)
        return _and(_COMPARE[exp.LTE](low, value), _COMPARE[exp.LTE](value, high))
    if isinstance(node, exp.In):
        value = evaluate(node.this, row)
        found: Truth = False
        for option in node.expressions:
            found = _or(found, _COMPARE[exp.EQ](value, evaluate(option, row)))
        return found
    if isinstance(node, exp.RegexpFullMatch):
        text = evaluate(node.this, row)
        return None if text is None else re.fullmatch(python_pattern(node.expression.this), str(text)) is not None
    return _function(node, row)


def _function(node: exp.Expr, row: Mapping[str, Value]) -> Value:
    args = [evaluate(a, row) for a in [node.this, *node.expressions]] if node.this is not None else []
    if isinstance(node, exp.Coalesce):
        return next((a for a in args if a is not None), None)
    if isinstance(node, exp.Least | exp.Greatest):
        return _extreme(args, min if isinstance(node, exp.Least) else max)
    value = args[0]
    if value is None:
        return None
    if isinstance(node, exp.Abs):
        if isinstance(value, Decimal):
            return abs(value)
        if isinstance(value, int | float):
            return abs(value)
        raise TypeError(f"bad operand type for abs(): {type(value).__name__!r}")  # as Python's own abs()
    if isinstance(node, exp.Length):
        return len(str(value))
    if isinstance(node, exp.Lower | exp.Upper):
        return _case(str(value), upper=isinstance(node, exp.Upper))
    raise ClauseSyntaxError(f"no reference meaning for {node.sql('duckdb')!r}")


_CAPITAL_SHARP_S = "\u1e9e"


def _case(text: str, *, upper: bool) -> str:
    """``text`` with each character mapped to its one-character case partner (see the module's rules)."""
    out = []
    for char in text:
        mapped = char.upper() if upper else char.lower()
        if char == "ß" and upper:
            mapped = _CAPITAL_SHARP_S
        out.append(mapped if len(mapped) == 1 else char)
    return "".join(out)
