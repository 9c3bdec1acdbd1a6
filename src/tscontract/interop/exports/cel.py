"""CEL: a row clause as a Common Expression Language condition over one record, ``message``.

The clause's predicate (the sqlglot tree every engine runs) is compiled to a CEL expression
that is true exactly when the SQL ``CHECK`` passes: SQL's three-valued logic is kept, so a
comparison with a null operand is *unknown* and an unknown clause passes, as it does in
``tscontract validate``. Every boolean node is compiled to two CEL conditions, "surely true"
and "surely false", and the rule is ``!(surely false)``; a null is never compared (celpy raises
on ``5 != null``), it is tested with ``has(message.f) && type(message.f) != null_type`` first
(``has`` as well: a producer may leave a nullable field out and let the Avro default fill it).

Values are typed as confluent-kafka's CEL executor hands them over: Avro decimals arrive as
Python ``Decimal`` and are compared and computed with the ``decimal()`` / ``decimals.*``
extension (exact); ``long``/``int`` are CEL ints; instants are CEL timestamps (a string
literal compared with one becomes ``timestamp("...")``, read as the reference reads it: no
offset is UTC, a bare date its UTC midnight); dates are days since 1970-01-01. All arithmetic
goes through ``decimals.*`` (CEL's int64 arithmetic overflows into an evaluation error where
the contract's is exact). The clause means what :mod:`tscontract.contract.semantics` says, or
it is refused: ``/`` (the contract divides in binary64, ``decimals.div`` in decimals), float
operands (NaN and ±Inf: ``decimal()`` cannot read them, CEL's ``!=`` is true beside NaN),
catalog lookups, ``lower``/``upper``, ``least``/``greatest`` over nullable operands and
arithmetic on instants raise :class:`CelUnsupported` with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime

import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.types import DataType
from tscontract.typemap.cel import cel_kind

_RESERVED = {
    *("as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop"),
    *("package", "namespace", "return", "var", "void", "in", "null", "true", "false"),
}
_NUMERIC = ("int", "decimal", "double", "number")
# a comparison's operator, the same in CEL and in Python (the pandera export writes it too)
COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "==",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_DECIMAL_OP: dict[type[exp.Expression], str] = {exp.EQ: "eq", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}
_ARITH = {exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div"}
_FLOAT_REASON = (
    "a float may be NaN or ±Inf, which CEL's decimal() cannot read, and CEL doubles compare NaN unequal "
    "where the contract's comparison with NaN is false"
)
_ORDERED = ("int", "decimal", "double", "number", "string", "timestamp", "date")


class CelUnsupported(Exception):
    """A clause CEL cannot state exactly; the message is the reason."""


# ---------------------------------------------------------------- CEL boolean terms


@dataclass(frozen=True)
class _Term:
    """A CEL boolean expression: ``op`` is ``atom``, ``and``, ``or``, ``not`` or ``if`` (``a ? b : c``)."""

    op: str
    text: str = ""
    parts: tuple[_Term, ...] = ()
    opposite: str = ""  # the atom's negation, where it has a plain one (``a < b`` for ``a >= b``)

    def render(self, parent: str = "top") -> str:
        if self.op == "atom":
            return self.text
        if self.op == "if":
            guard, then, otherwise = (p.render("if") for p in self.parts)
            return f"({guard} ? {then} : {otherwise})"
        if self.op == "not":
            inner = self.parts[0]
            shown = inner.render("not")
            return f"!{shown}" if inner.op == "atom" and _simple(shown) else f"!({inner.render()})"
        joined = (" && " if self.op == "and" else " || ").join(p.render(self.op) for p in self.parts)
        return f"({joined})" if parent not in ("top", self.op) else joined


def _simple(text: str) -> bool:
    """No operator outside parentheses or quotes: safe to negate with a bare ``!``."""
    depth, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif depth == 0 and char in " ?":
            return False
    return True


TRUE, FALSE = _Term("atom", "true"), _Term("atom", "false")


def _atom(text: str, opposite: str = "") -> _Term:
    return _Term("atom", text, opposite=opposite)


_NEGATED_OP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _relation(left: str, op: str, right: str) -> _Term:
    """``left op right`` over a total order (ints, text, instants): its negation flips the operator."""
    return _atom(f"{left} {op} {right}", f"{left} {_NEGATED_OP[op]} {right}")


def _and(*terms: _Term) -> _Term:
    parts: list[_Term] = []
    for term in terms:
        for part in term.parts if term.op == "and" else (term,):
            if part == FALSE:
                return FALSE
            if part != TRUE and part not in parts:
                parts.append(part)
    parts = _unguarded(parts, "and")
    return parts[0] if len(parts) == 1 else TRUE if not parts else _Term("and", parts=tuple(parts))


def _or(*terms: _Term) -> _Term:
    parts: list[_Term] = []
    for term in terms:
        for part in term.parts if term.op == "or" else (term,):
            if part == TRUE:
                return TRUE
            if part != FALSE and part not in parts:
                parts.append(part)
    parts = _unguarded(parts, "or")
    return parts[0] if len(parts) == 1 else FALSE if not parts else _Term("or", parts=tuple(parts))


def _unguarded(parts: list[_Term], op: str) -> list[_Term]:
    """``!g || (g ? x : y)`` is ``!g || x`` (and ``g && (g ? x : y)`` is ``g && x``) where ``x`` calls no
    function: a native comparison with null is an error value, which ``||``/``&&`` absorb."""
    result = []
    for part in parts:
        if part.op == "if" and "(" not in part.parts[1].render():
            guard = part.parts[0] if op == "and" else _not(part.parts[0])
            needed = guard.parts if guard.op == op else (guard,)
            if all(n in parts for n in needed):
                part = part.parts[1]
        result.append(part)
    return result


def _not(term: _Term) -> _Term:
    if term in (TRUE, FALSE):
        return FALSE if term == TRUE else TRUE
    if term.op == "not":
        return term.parts[0]
    if term.op == "atom" and term.opposite:
        return _atom(term.opposite, term.text)
    if term.op == "if":
        guard, then, otherwise = term.parts
        return _if(guard, _not(then), _not(otherwise))
    if term.op in ("and", "or"):  # De Morgan, so a rule reads as guards and comparisons
        return (_or if term.op == "and" else _and)(*(_not(p) for p in term.parts))
    return _Term("not", parts=(term,))


def _if(guard: _Term, then: _Term, otherwise: _Term) -> _Term:
    """``guard ? then : otherwise``: celpy evaluates both sides of ``&&`` and ``||``, and an error an
    extension function raises (``decimal(null)``) escapes them, so a test of values that may be null
    is reached only through a conditional."""
    if guard in (TRUE, FALSE):
        return then if guard == TRUE else otherwise
    if otherwise in (TRUE, FALSE) and "(" not in then.render():  # no function: && and || absorb its error
        return _and(guard, then) if otherwise == FALSE else _or(_not(guard), then)
    return _Term("if", parts=(guard, then, otherwise))


@dataclass(frozen=True)
class _Bool:
    """A clause under SQL's three-valued logic: when it is surely true, when surely false."""

    true: _Term
    false: _Term

    @classmethod
    def definite(cls, term: _Term) -> _Bool:
        return cls(term, _not(term))


@dataclass(frozen=True)
class _Value:
    """A CEL value: its text, kind, whether it already is a ``Decimal``, and when it is not null."""

    cel: str
    kind: str
    present: _Term = TRUE
    is_decimal: bool = False


# ---------------------------------------------------------------- the compiler


def field_ref(name: str) -> str:
    """``message.low``; a CEL reserved word is indexed instead (``message["in"]``)."""
    return f"message[{json.dumps(name)}]" if name in _RESERVED else f"message.{name}"


def _presence(name: str) -> _Term:
    held = f"{json.dumps(name)} in message" if name in _RESERVED else f"has(message.{name})"
    return _and(_atom(held), _relation(f"type({field_ref(name)})", "!=", "null_type"))


def present(name: str) -> str:
    """The CEL condition that a nullable field holds a value (it may be absent or null)."""
    return _presence(name).render()


def compile_predicate(predicate: exp.Expression, types: Mapping[str, DataType], nullable: frozenset[str]) -> str:
    """The CEL condition of a row clause: true unless the SQL predicate is false."""
    result = _Compiler(types, nullable).boolean(predicate)
    return _not(result.false).render()


class _Compiler:
    def __init__(self, types: Mapping[str, DataType], nullable: frozenset[str]) -> None:
        self.types = types
        self.nullable = nullable

    # ------------------------------------------------------------ predicates
    def boolean(self, node: exp.Expression) -> _Bool:
        if isinstance(node, exp.Paren):
            return self.boolean(node.this)
        if isinstance(node, exp.And | exp.Or):
            left, right = self.boolean(node.this), self.boolean(node.expression)
            if isinstance(node, exp.And):
                return _Bool(_and(left.true, right.true), _or(left.false, right.false))
            return _Bool(_or(left.true, right.true), _and(left.false, right.false))
        if isinstance(node, exp.Not):
            inner = self.boolean(node.this)
            return _Bool(inner.false, inner.true)
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise CelUnsupported(f"'IS {node.expression.sql()}' has no CEL form")
            return _Bool.definite(_not(self.value(node.this).present))
        if isinstance(node, exp.Boolean):
            return _Bool.definite(TRUE if node.this else FALSE)
        if isinstance(node, tuple(COMPARISONS)):
            return self.comparison(type(node), self.value(node.this), self.value(node.expression))
        if isinstance(node, exp.Between):
            subject = self.value(node.this)
            low = self.comparison(exp.GTE, subject, self.value(node.args["low"]))
            high = self.comparison(exp.LTE, subject, self.value(node.args["high"]))
            return _Bool(_and(low.true, high.true), _or(low.false, high.false))
        if isinstance(node, exp.In):
            return self.membership(self.value(node.this), [self.value(e) for e in node.expressions])
        if isinstance(node, exp.RegexpFullMatch):
            subject = self.value(node.this)
            pattern = node.expression
            if subject.kind != "string" or not isinstance(pattern, exp.Literal) or not pattern.is_string:
                raise CelUnsupported("'matches' takes a text field and a pattern")
            test = _atom(f"{subject.cel}.matches({json.dumps('^(?:' + pattern.this + ')$')})")
            return self.guarded(subject.present, test)
        if isinstance(node, exp.Coalesce) and len(node.expressions) == 1:  # null_only_when: coalesce(cond, false)
            first, second = self.boolean(node.this), self.boolean(node.expressions[0])
            if second.true in (TRUE, FALSE):  # coalesce(p, false): only a true p is true
                return _Bool.definite(first.true) if second.true == FALSE else _Bool.definite(_not(first.false))
            unknown = _and(_not(first.true), _not(first.false))
            return _Bool(_or(first.true, _and(unknown, second.true)), _or(first.false, _and(unknown, second.false)))
        raise CelUnsupported(f"{node.sql(dialect='duckdb')!r} has no CEL form tscontract writes")

    def guarded(self, present: _Term, test: _Term) -> _Bool:
        """A test of values that are present: unknown (neither true nor false) when one is null."""
        return _Bool(_if(present, test, FALSE), _if(present, _not(test), FALSE))

    def comparison(self, op: type[exp.Expression], left: _Value, right: _Value) -> _Bool:
        return self.guarded(_and(left.present, right.present), self.compare(op, left, right))

    def compare(self, op: type[exp.Expression], left: _Value, right: _Value) -> _Term:
        if left.kind in _NUMERIC and right.kind in _NUMERIC:
            if left.kind == right.kind == "int":
                return _relation(left.cel, COMPARISONS[op], right.cel)
            a, b = _decimal(left), _decimal(right)
            if op is exp.NEQ:
                return _not(_atom(f"decimals.eq({a}, {b})"))
            return _atom(f"decimals.{_DECIMAL_OP[op]}({a}, {b})")
        left, right = _coerced(left, right), _coerced(right, left)
        if left.kind != right.kind:
            raise CelUnsupported(f"compares {left.kind} with {right.kind}")
        if op not in (exp.EQ, exp.NEQ) and left.kind not in _ORDERED:
            raise CelUnsupported(f"{left.kind} values have no order in CEL")
        return _relation(left.cel, COMPARISONS[op], right.cel)

    def membership(self, subject: _Value, members: list[_Value]) -> _Bool:
        literal = all(m.present == TRUE for m in members)
        if literal and subject.kind in ("string", "int", "bool") and all(m.kind == subject.kind for m in members):
            listed = ", ".join(m.cel for m in members)
            return self.guarded(subject.present, _atom(f"{subject.cel} in [{listed}]"))
        result = _Bool(FALSE, TRUE)  # SQL: x IN (a, b) is x = a OR x = b
        for member in members:
            part = self.comparison(exp.EQ, subject, member)
            result = _Bool(_or(result.true, part.true), _and(result.false, part.false))
        return result

    # ------------------------------------------------------------ values
    def value(self, node: exp.Expression) -> _Value:
        if isinstance(node, exp.Paren):
            return self.value(node.this)
        if isinstance(node, exp.Column):
            if node.table == CATALOG_TABLE:
                raise CelUnsupported("looks up the series catalog, which a record does not carry")
            dtype = self.types.get(node.name)
            if dtype is None:
                raise CelUnsupported(f"{node.name!r} is not a field of the record")
            kind = cel_kind(dtype)
            guard = _presence(node.name) if node.name in self.nullable else TRUE
            return _Value(field_ref(node.name), kind, guard)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return _Value(json.dumps(node.this, ensure_ascii=False), "string")
            text = node.this
            return _Value(text, "int" if re.fullmatch(r"-?[0-9]+", text) else "number")
        if isinstance(node, exp.Boolean):
            return _Value("true" if node.this else "false", "bool")
        if isinstance(node, exp.Neg):
            inner = self.numeric(node.this)
            if inner.kind == "int" and inner.present == TRUE and re.fullmatch(r"[0-9]+", inner.cel):
                return _Value(f"-{inner.cel}", "int")
            if inner.kind == "number":  # a literal: -(-(0.5)) is 0.5
                return _Value(inner.cel[1:] if inner.cel.startswith("-") else f"-{inner.cel}", "number")
            return _Value(f"decimals.neg({_decimal(inner)})", "decimal", inner.present, True)
        for arith, decimal_op in _ARITH.items():
            if isinstance(node, arith):
                left, right = self.numeric(node.this), self.numeric(node.expression)
                guard = _and(left.present, right.present)
                # no int64 arithmetic: it overflows (an evaluation error) where the contract's is exact
                if arith is exp.Div:  # the reference divides in binary64 (x / 0 is ±inf, 0 / 0 NaN)
                    raise CelUnsupported(
                        "'/' divides in binary64 (x / 0 is ±inf, 0 / 0 is NaN); CEL's decimals.div divides decimals "
                        "at 38 digits and fails on a zero"
                    )
                return _Value(f"decimals.{decimal_op}({_decimal(left)}, {_decimal(right)})", "decimal", guard, True)
        return self.function(node)

    def numeric(self, node: exp.Expression) -> _Value:
        value = self.value(node)
        if value.kind not in _NUMERIC:
            raise CelUnsupported(f"arithmetic on {value.kind} values has no exact CEL form")
        return value

    def function(self, node: exp.Expression) -> _Value:
        if isinstance(node, exp.Abs):
            inner = self.numeric(node.this)
            return _Value(f"decimals.abs({_decimal(inner)})", "decimal", inner.present, True)
        if isinstance(node, exp.Round):
            inner = self.numeric(node.this)
            places = node.args.get("decimals")
            digits = "0" if places is None else self.value(places)
            if not isinstance(digits, str) and (digits.kind != "int" or digits.present != TRUE):
                raise CelUnsupported("round() to a number of places that is not a constant")
            shown = digits if isinstance(digits, str) else digits.cel
            return _Value(f"decimals.round({_decimal(inner)}, {shown})", "decimal", inner.present, True)
        if isinstance(node, exp.Length):
            inner = self.value(node.this)
            if inner.kind != "string":
                raise CelUnsupported("length() of a value that is not text")
            return _Value(f"size({inner.cel})", "int", inner.present)
        if isinstance(node, exp.Coalesce):
            values = [self.value(v) for v in (node.this, *node.expressions)]
            if len({v.kind for v in values}) != 1 and not all(v.kind in _NUMERIC for v in values):
                raise CelUnsupported("coalesce() of values of different kinds")
            numeric = len({v.kind for v in values}) > 1
            result = values[-1]
            cel = _decimal(result) if numeric else result.cel
            for value in reversed(values[:-1]):
                shown = _decimal(value) if numeric else value.cel
                cel = shown if value.present == TRUE else f"({value.present.render()}) ? {shown} : {cel}"
            kind = "decimal" if numeric else values[0].kind
            return _Value(f"({cel})", kind, _or(*(v.present for v in values)), numeric)
        if isinstance(node, exp.Least | exp.Greatest):
            values = [self.numeric(v) for v in (node.this, *node.expressions)]
            if any(v.present != TRUE for v in values):
                raise CelUnsupported("least()/greatest() are null where an operand is null; CEL has no such function")
            name = "least" if isinstance(node, exp.Least) else "greatest"
            return _Value(f"decimals.{name}({', '.join(_decimal(v) for v in values)})", "decimal", TRUE, True)
        if isinstance(node, exp.Lower | exp.Upper):
            raise CelUnsupported("lower()/upper(): confluent-kafka's CEL executor has no lowerAscii/upperAscii")
        raise CelUnsupported(f"{node.sql(dialect='duckdb')!r} has no CEL form tscontract writes")


def _wrap(cel: str) -> str:
    return cel if _simple(cel) else f"({cel})"


def _decimal(value: _Value) -> str:
    """The value as a CEL ``Decimal``: exact for literals (written as text) and fields alike."""
    if value.kind == "double":  # the contract compares and computes floats in binary64, NaN included
        raise CelUnsupported(_FLOAT_REASON)
    if value.is_decimal:
        return value.cel
    if value.kind in ("int", "number") and value.present == TRUE and re.fullmatch(r"-?[0-9.eE+-]+", value.cel):
        return f'decimal("{value.cel}")'
    return f"decimal({value.cel})"


def _instant_literal(text: str) -> datetime:
    """A time literal beside an instant, as the reference reads it: no offset is UTC, a bare date its UTC midnight."""
    found = datetime.fromisoformat(text)
    if len(text) == len("2026-01-01"):
        return datetime(found.year, found.month, found.day, tzinfo=UTC)
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def _coerced(value: _Value, other: _Value) -> _Value:
    """A string literal compared with an instant or a date, as that kind's CEL literal."""
    if value.kind != "string" or value.present != TRUE or other.kind not in ("timestamp", "date"):
        return value
    text = json.loads(value.cel)
    try:
        if other.kind == "date":
            return _Value(str((date.fromisoformat(text) - date(1970, 1, 1)).days), "date")
        instant = _instant_literal(text)
    except ValueError:
        raise CelUnsupported(f"{text!r} is not a {other.kind} literal") from None
    shown = instant.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return _Value(f'timestamp("{shown}")', "timestamp")
