"""A row clause as SQL that means what :mod:`tscontract.contract.semantics` says it means.

Engines differ where a clause's text alone leaves it open: DuckDB multiplies two DECIMAL(12,4)
into a DECIMAL(18,8) and stops on overflow, PostgreSQL divides integers as integers, NaN sorts
above every number in DuckDB, PostgreSQL and Spark. :func:`lowered` writes each of those
decisions into the tree, so the SQL every engine (and every SQL export) runs is explicit:

* exact ``+ - *`` operands are cast to a DECIMAL wide enough for the result (18 or 38 digits);
* ``/`` divides DOUBLEs; an exact operand beside a float is cast to DOUBLE (float32 too);
* a comparison, ``between`` or ``in`` with a float operand is false where one is NaN;
* ``least`` / ``greatest`` are null where an argument is null, else (over floats) NaN where one is NaN;
* exact operands of one comparison, ``in``, ``coalesce``, ``least`` or ``greatest`` that differ in
  type are cast to one DECIMAL that holds them all (ClickHouse finds no common type for an integer
  and a decimal, or two decimal scales, and stops); float ``coalesce`` arguments to DOUBLE.
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlglot.expressions as exp

from tscontract.contract.semantics import FLOAT, ExprType, static_type
from tscontract.contract.types import DataType

_SMALL_DIGITS = 18  # a DECIMAL of up to 18 digits is a 64-bit integer in DuckDB: the cheap path
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between, exp.In)
_OPERANDS = ("this", "expression", "low", "high")


def lowered(predicate: exp.Expression, types: Mapping[str, DataType]) -> exp.Expression:
    """A copy of ``predicate`` with the reference semantics made explicit (see the module's rules)."""
    return _lower(predicate.copy(), types)


def _lower(node: exp.Expression, types: Mapping[str, DataType]) -> exp.Expression:
    """``node`` lowered bottom-up; types are read from each subtree before it is rewritten."""
    result = static_type(node, types) if _typed(node) else None
    operands = {n: (c, static_type(c, types)) for n in _OPERANDS if isinstance(c := node.args.get(n), exp.Expression)}
    listed = [(c, static_type(c, types)) for c in node.expressions] if isinstance(node, _LISTS) else []
    for name, (child, _) in operands.items():
        node.set(name, _lower(child, types))
    if listed:
        node.set("expressions", [_lower(c, types) for c, _ in listed])
    lowered_operands = {n: (node.args[n], kind) for n, (_, kind) in operands.items()}
    if isinstance(node, exp.Add | exp.Sub | exp.Mul) and result is not None:
        _arithmetic(node, result, lowered_operands, types)
    elif isinstance(node, exp.Neg | exp.Abs) and result is not None and result.kind == "exact":
        _arithmetic(node, result, lowered_operands, types)  # -(-2^63) and abs(-2^63) need a 20th digit
    elif isinstance(node, exp.Div):
        for name in lowered_operands:
            node.set(name, _as_double(node.args[name]))
    elif isinstance(node, _COMPARISONS):
        return _compared(
            node, lowered_operands, [(e, k) for e, (_, k) in zip(node.expressions, listed, strict=True)], types
        )
    elif isinstance(node, exp.Least | exp.Greatest) and result is not None:
        _one_type(node, result, [kind for _, kind in [*operands.values(), *listed]])
        return _null_propagated(node, nan=result == FLOAT)
    elif isinstance(node, exp.Coalesce) and result is not None:
        _one_type(node, result, [kind for _, kind in [*operands.values(), *listed]])
    return node


_LISTS = (exp.In, exp.Coalesce, exp.Least, exp.Greatest)


def _typed(node: exp.Expression) -> bool:
    return isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Neg | exp.Abs | exp.Least | exp.Greatest | exp.Coalesce)


def _common_decimal(kinds: list[ExprType]) -> exp.DataType | None:
    """One DECIMAL every exact kind of ``kinds`` fits, where they differ; None where they agree or none fits."""
    if not kinds or any(k.kind != "exact" for k in kinds) or len(set(kinds)) == 1:
        return None
    scale = max(k.scale for k in kinds)
    digits = max(k.precision - k.scale for k in kinds) + scale
    return exp.DataType.build(f"DECIMAL({digits}, {scale})") if digits <= 38 else None


def _one_type(node: exp.Expression, result: ExprType, kinds: list[ExprType]) -> None:
    """The arguments of ``coalesce`` / ``least`` / ``greatest`` cast to the one type of ``result``."""
    if result == FLOAT:
        to: exp.DataType | None = exp.DataType.build("DOUBLE")
    else:
        to = _common_decimal(kinds)
    if to is None:
        return
    args = [exp.cast(_unparen(a), to.copy()) for a in [node.this, *node.expressions]]
    node.set("this", args[0])
    node.set("expressions", args[1:])


Operands = dict[str, tuple[exp.Expression, ExprType]]


def _arithmetic(node: exp.Expression, result: ExprType, operands: Operands, types: Mapping[str, DataType]) -> None:
    for name, (operand, kind) in operands.items():
        if result == FLOAT:  # every operand, float64 too: an engine whose float arithmetic raises can tell it
            node.set(name, _as_double(operand))
        elif kind.kind == "exact":
            digits = _SMALL_DIGITS if result.precision < _SMALL_DIGITS else 38
            node.set(name, exp.cast(_unparen(operand), exp.DataType.build(f"DECIMAL({digits}, {kind.scale})")))


def _unparen(node: exp.Expression) -> exp.Expression:
    return node.this if isinstance(node, exp.Paren) else node


def _is_literal(node: exp.Expression) -> bool:
    node = _unparen(node)
    return isinstance(node.this if isinstance(node, exp.Cast) else node, exp.Literal)


def _is_float32(node: exp.Expression, types: Mapping[str, DataType]) -> bool:
    node = _unparen(node)
    return isinstance(node, exp.Column) and node.name in types and types[node.name].bits == 32


def _as_double(node: exp.Expression) -> exp.Expression:
    return exp.cast(_unparen(node), exp.DataType.build("DOUBLE"))


def _compared(
    node: exp.Expression,
    operands: Operands,
    listed: list[tuple[exp.Expression, ExprType]],
    types: Mapping[str, DataType],
) -> exp.Expression:
    """A comparison over floats as binary comparisons each false on NaN (``between`` and ``in`` spelled out)."""
    kinds = [k for _, k in [*operands.values(), *listed]]
    if FLOAT not in kinds:
        common = _common_decimal(kinds)
        if common is not None:
            for name in operands:
                node.set(name, exp.cast(_unparen(node.args[name]), common.copy()))
            if listed:
                node.set("expressions", [exp.cast(_unparen(e), common.copy()) for e in node.expressions])
        return node
    parts = {n: (_float_side(node.args[n], k, types), k) for n, (_, k) in operands.items()}
    if isinstance(node, exp.Between):
        value, low, high = parts["this"], parts["low"], parts["high"]
        both = exp.and_(_float_binary(exp.LTE, low, value), _float_binary(exp.LTE, value, high))
        return exp.Paren(this=both)
    if isinstance(node, exp.In):
        sides = [(_float_side(e, k, types), k) for e, k in listed]
        return exp.Paren(this=exp.or_(*[_float_binary(exp.EQ, parts["this"], side) for side in sides]))
    return _float_binary(type(node), parts["this"], parts["expression"])


Side = tuple[exp.Expression, ExprType]


def _float_side(operand: exp.Expression, kind: ExprType, types: Mapping[str, DataType]) -> exp.Expression:
    return _as_double(operand) if kind != FLOAT or _is_float32(operand, types) else operand


def _float_binary(compare: type[exp.Expression], left: Side, right: Side) -> exp.Expression:
    """``left <op> right`` in DOUBLE: null where a side is null, else false where a side is NaN.

    Each float side ``x`` adds ``(NOT ISNAN(x) OR other IS NULL)``: the comparison itself is
    already null where a side is null, and that guard keeps it so.
    """
    node = compare(this=left[0].copy(), expression=right[0].copy())
    guards = []
    for (value, kind), (other, _) in ((left, right), (right, left)):
        if kind != FLOAT or _is_literal(value):
            continue
        guard: exp.Expr = exp.not_(exp.IsNan(this=value.copy()))
        if not _is_literal(other):
            guard = exp.or_(guard, exp.Is(this=other.copy(), expression=exp.Null()))
        guards.append(exp.Paren(this=guard))
    return exp.Paren(this=exp.and_(node, *guards)) if guards else node


def _null_propagated(node: exp.Expression, *, nan: bool) -> exp.Expression:
    """``least`` / ``greatest`` null where an argument is null (DuckDB, PostgreSQL and Spark skip nulls),
    else NaN where a float argument is NaN (they sort NaN above every number)."""
    args = [node.this, *node.expressions]
    any_null = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in args])
    ifs = [exp.If(this=any_null, true=exp.Null())]
    if nan:
        any_nan = exp.or_(*[exp.IsNan(this=a.copy()) for a in args])
        ifs.append(exp.If(this=any_nan, true=exp.cast(exp.Literal.string("NaN"), exp.DataType.build("DOUBLE"))))
    return exp.Case(ifs=ifs, default=node)


def lowered_float_arithmetic(node: exp.Expression) -> bool:
    """``node`` is ``+ - * /`` in DOUBLE as :func:`lowered` writes it: both operands cast to DOUBLE."""
    return isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div) and all(
        isinstance(side, exp.Cast) and side.to.this is exp.DataType.Type.DOUBLE for side in (node.this, node.expression)
    )


def lowered_division(node: exp.Expression) -> bool:
    """``node`` is a ``/`` as :func:`lowered` writes it: both operands cast to DOUBLE."""
    return isinstance(node, exp.Div) and all(
        isinstance(side, exp.Cast) and side.to.this is exp.DataType.Type.DOUBLE for side in (node.this, node.expression)
    )


def ieee_division(node: exp.Div) -> exp.Expression:
    """``a / b`` in DOUBLE with IEEE 754's zero divisor (``x / 0`` is ±Inf, ``0 / 0`` and ``NaN / 0`` NaN), for an
    engine whose ``/`` raises (PostgreSQL, Spark's ANSI mode) or yields NULL (Spark) there. The sign of a zero
    divisor is read from its text (``-0`` or ``-0.0``): a comparison cannot tell ``-0.0`` from ``0.0``."""
    a, b = node.this, node.expression

    def double(text: str) -> exp.Expression:
        return exp.cast(exp.Literal.string(text), exp.DataType.build("DOUBLE"))

    negative_zero = exp.Like(this=exp.cast(b.copy(), exp.DataType.build("TEXT")), expression=exp.Literal.string("-%"))
    undefined = exp.or_(
        exp.EQ(this=a.copy(), expression=exp.Literal.number(0)), exp.EQ(this=a.copy(), expression=double("NaN"))
    )
    above = exp.paren(exp.GT(this=a.copy(), expression=exp.Literal.number(0)))
    positive = exp.EQ(this=above, expression=exp.paren(exp.not_(negative_zero)))
    signed = exp.Case(
        ifs=[exp.If(this=undefined, true=double("NaN")), exp.If(this=positive, true=double("Infinity"))],
        default=double("-Infinity"),
    )
    by_zero = exp.and_(
        exp.EQ(this=b.copy(), expression=exp.Literal.number(0)), exp.Is(this=a.copy(), expression=exp.not_(exp.Null()))
    )
    divided = exp.Div(this=a, expression=b)
    divided.meta["ieee"] = True
    return exp.Case(ifs=[exp.If(this=by_zero, true=signed)], default=divided)


def written_out_division(node: exp.Expression) -> exp.Expression | None:
    """``node`` with IEEE's zero divisor written out (:func:`ieee_division`) where it is a ``/`` as :func:`lowered`
    writes it and not written out yet; None elsewhere. For SQL whose engine's ``x / 0`` is not IEEE's: NULL
    (Spark, DuckDB before 1.1) or an error (PostgreSQL)."""
    if isinstance(node, exp.Div) and lowered_division(node) and not node.meta.get("ieee"):
        return ieee_division(node)
    return None


def _case_expanding(upper: bool) -> str:
    """The characters (Basic Multilingual Plane) whose reference case partner is more than one character."""
    return "".join(c for c in map(chr, range(0x10000)) if len(c.upper() if upper else c.lower()) > 1)


_PRIVATE_USE = 0xE000  # no case partner: held there while the engine maps the rest


def one_to_one_case(
    node: exp.Lower | exp.Upper, translate_name: str = "TRANSLATE", case_name: str | None = None
) -> exp.Expression:
    """``lower`` / ``upper`` as the reference maps case, for an engine with full case mapping (Spark's
    ``upper('ß')`` is ``SS``): the characters whose partner is longer are held as private-use characters
    while the engine maps the rest, then put back (``ß`` as ``ẞ``), so each keeps one character.
    ``translate_name`` / ``case_name``: the engine's functions (ClickHouse: ``translateUTF8``, ``upperUTF8``)."""
    upper = isinstance(node, exp.Upper)
    held = _case_expanding(upper)
    placeholders = "".join(chr(_PRIVATE_USE + n) for n in range(len(held)))
    restored = held.replace("ß", "\u1e9e") if upper else held

    def translate(value: exp.Expression, source: str, target: str) -> exp.Expression:
        return exp.Anonymous(
            this=translate_name, expressions=[value, exp.Literal.string(source), exp.Literal.string(target)]
        )

    inner = translate(node.this, held, placeholders)
    mapped = type(node)(this=inner) if case_name is None else exp.Anonymous(this=case_name, expressions=[inner])
    mapped.meta["one_to_one"] = True
    return translate(mapped, placeholders, restored)
