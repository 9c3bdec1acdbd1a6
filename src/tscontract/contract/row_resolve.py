"""Row clauses resolved against the contract's columns: unknown columns refused, bare enum members read.

Apart from :mod:`.clauses` (the clauses' types), as :mod:`.row_parser` is: resolving walks the clause's
sqlglot tree, which only reading a contract's text needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE, RowClause
from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.semantics import static_type
from tscontract.contract.types import DataType


def resolve_columns(clause: RowClause, types: Mapping[str, DataType]) -> RowClause:
    """Check every column exists; read bare enum members (``quality = bad``) as literals.

    A bare word that is not a column is an enum member only where it is compared
    with an enum column that lists it; anywhere else it is an unknown column.
    """
    predicate = clause.predicate.copy()
    for column in list(predicate.find_all(exp.Column)):
        if column.table == CATALOG_TABLE or column.name in types:
            continue
        member = _enum_member_for(column, types)
        if member is None:
            offset = column.meta.get("offset") or 0
            raise ClauseSyntaxError(
                f"unknown column {column.name!r}; the contract's columns are: {', '.join(types)}", offset
            )
        column.replace(exp.Literal.string(member))
    for literal_parent in predicate.find_all(exp.EQ, exp.NEQ, exp.In):
        _check_enum_literals(literal_parent, types)
    for match in predicate.find_all(exp.RegexpFullMatch):
        subject = match.this
        if isinstance(subject, exp.Column) and subject.name in types:
            dtype = types[subject.name]
            if dtype.kind not in ("string", "enum"):
                offset = subject.meta.get("offset") or 0
                raise ClauseSyntaxError(f"'matches' reads text; {subject.name!r} is {dtype.text}", offset)
    if clause.catalog is not None and clause.catalog.key not in types:
        raise ClauseSyntaxError(f"catalog key column {clause.catalog.key!r} is not a column")
    _numbers_in_range(predicate)
    static_type(predicate, types)  # kinds that cannot be compared, arithmetic past 38 digits: refused here
    columns = tuple(dict.fromkeys(c.name for c in predicate.find_all(exp.Column) if c.table != CATALOG_TABLE))
    return replace(clause, predicate=predicate, columns=columns)


MAX_EXPONENT = 308  # a number in a clause is at most about 1e308 in size and 1e-308 in resolution, as a double


def _numbers_in_range(predicate: exp.Expr) -> None:
    """Refuse a number no engine holds (``1e999999999``): Decimal arithmetic on it overflows."""
    for literal in predicate.find_all(exp.Literal):
        if literal.is_string:
            continue
        try:
            number = Decimal(literal.this)
        except ArithmeticError:
            continue  # not a number sqlglot reads as one: the grammar said what it is
        if number.is_finite() and number and abs(number.adjusted()) > MAX_EXPONENT:
            offset = literal.meta.get("offset") or 0
            raise ClauseSyntaxError(f"number {literal.this[:40]!r} is out of range (at most 1e{MAX_EXPONENT})", offset)


def _compared_enum(node: exp.Expr, types: Mapping[str, DataType]) -> DataType | None:
    if isinstance(node, exp.Column) and node.name in types and types[node.name].kind == "enum":
        return types[node.name]
    return None


def _enum_member_for(column: exp.Column, types: Mapping[str, DataType]) -> str | None:
    parent = column.parent
    if isinstance(parent, exp.EQ | exp.NEQ):
        other = parent.expression if parent.this is column else parent.this
    elif isinstance(parent, exp.In) and column is not parent.this:
        other = parent.this
    else:
        return None
    enum = _compared_enum(other, types)
    return column.name if enum is not None and column.name in enum.members else None


def _check_enum_literals(node: exp.Expr, types: Mapping[str, DataType]) -> None:
    if isinstance(node, exp.In):
        enum = _compared_enum(node.this, types)
        literals = [e for e in node.expressions if isinstance(e, exp.Literal)]
    else:
        enum = _compared_enum(node.this, types) or _compared_enum(node.expression, types)
        literals = [e for e in (node.this, node.expression) if isinstance(e, exp.Literal)]
    if enum is None:
        return
    for literal in literals:
        if literal.is_string and literal.this not in enum.members:
            raise ClauseSyntaxError(f"{literal.this!r} is not a member of {enum.text}")
