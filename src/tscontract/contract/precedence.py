"""Brackets where a clause's meaning needs them, so every generated text keeps the author's grouping.

sqlglot generates a tree as it is: ``Mul(Sub(high, low), 2)`` comes out as ``high - low * 2`` unless
the subtraction sits in a ``Paren`` node. A row clause's tree is built from the words of the
contract, so :func:`bracketed` puts a ``Paren`` around every operand whose operator binds less
tightly than its parent's (and around a right operand of equal rank: ``a - (b - c)``,
``a / (b * c)``). Every engine and export then reads one tree whose text means what it says.
"""

from __future__ import annotations

from typing import TypeVar

import sqlglot.expressions as exp

Node = TypeVar("Node", bound="exp.Expr")  # a string: older sqlglot releases have no Expr

# How tightly each operator binds, loosest first; anything not listed is an atom (a column, a
# literal, a function call, a bracket).
_RANKS: tuple[tuple[type[exp.Expression], ...], ...] = (
    (exp.Or,),
    (exp.And,),
    (exp.Not,),
    (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Is, exp.Between, exp.In, exp.RegexpFullMatch),
    (exp.Add, exp.Sub),
    (exp.Mul, exp.Div),
    (exp.Neg,),
)
_ATOM = len(_RANKS)
_COMPARISON = 3
# arithmetic whose right operand of equal rank keeps its bracket: a - (b - c), a / (b * c); kept
# for + and * too, where the grouping decides overflow and rounding
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)


def rank(node: exp.Expr) -> int:
    """How tightly ``node``'s operator binds (0 loosest); atoms bind tightest."""
    for level, kinds in enumerate(_RANKS):
        if isinstance(node, kinds):
            return level
    return _ATOM


def _operands(node: exp.Expr) -> list[tuple[str, exp.Expression, bool]]:
    """The operands an operator's rank applies to: (arg name, child, is the right operand)."""
    if isinstance(node, exp.Binary):
        return [("this", node.this, False), ("expression", node.expression, True)]
    if isinstance(node, exp.Not | exp.Neg):
        return [("this", node.this, True)]
    if isinstance(node, exp.Between):
        return [("this", node.this, False), ("low", node.args["low"], True), ("high", node.args["high"], True)]
    if isinstance(node, exp.In | exp.Is | exp.RegexpFullMatch):
        return [("this", node.this, False)]
    return []


def _needs_bracket(parent: exp.Expr, child: exp.Expression, right: bool) -> bool:
    if isinstance(child, exp.Paren) or rank(child) == _ATOM:
        return False
    if isinstance(parent, exp.Neg):  # -(a + b), -(a * b), -(-a)
        return True
    if rank(parent) == _COMPARISON:  # comparisons do not chain in SQL: (a < b) = c
        return rank(child) <= _COMPARISON
    if rank(child) < rank(parent):
        return True
    return rank(child) == rank(parent) and right and isinstance(parent, _ARITHMETIC)


def bracketed(tree: Node) -> Node:
    """``tree`` with a ``Paren`` wherever an operand's grouping would otherwise be lost (changed in place).

    A flat chain of one connector (``a AND b AND c``) stays flat: AND and OR are associative.
    """
    for node in list(tree.walk()):
        for name, child, right in _operands(node):
            if isinstance(child, exp.Expression) and _needs_bracket(node, child, right):
                node.set(name, exp.Paren(this=child))
    return tree
