"""Row clauses (invariants and per-field constraints) read from their words into sqlglot predicates.

The lark transformer lives here, apart from :mod:`.clauses` (the clauses' types), so that a contract read
back from the cache imports no parser: only reading a clause's text needs lark.
"""

from __future__ import annotations

import sqlglot.expressions as exp
from lark import Token, Transformer, Tree, v_args
from lark.exceptions import VisitError

from tscontract.contract.clauses import (
    BOUND_ATTRIBUTES,
    CATALOG_TABLE,
    EQUALITY_ATTRIBUTES,
    CatalogRef,
    RowClause,
    RowClauseKind,
    Share,
    parse_share,
)
from tscontract.contract.grammar import ClauseSyntaxError, parse, unquote
from tscontract.contract.precedence import bracketed
from tscontract.contract.regex import check_regex

FUNCTIONS = {
    "abs": exp.Abs,
    "round": exp.Round,
    "coalesce": exp.Coalesce,
    "length": exp.Length,
    "lower": exp.Lower,
    "upper": exp.Upper,
    "least": exp.Least,
    "greatest": exp.Greatest,
}
_COMPARISONS: dict[str, type[exp.Binary]] = {
    "<=": exp.LTE,
    "<": exp.LT,
    ">=": exp.GTE,
    ">": exp.GT,
    "=": exp.EQ,
    "==": exp.EQ,
    "!=": exp.NEQ,
    "<>": exp.NEQ,
}
_ARITHMETIC: dict[str, type[exp.Binary]] = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul, "/": exp.Div}


def _catalog_column(attribute: str) -> exp.Column:
    return exp.column(attribute, table=CATALOG_TABLE, quoted=False)


def _chain(connector: type[exp.Connector], left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """``left AND right`` (or OR): a chain of one connector stays flat (``a AND b AND c``, generated and
    read back without recursion), any other connector operand is bracketed."""
    if isinstance(left, exp.Connector) and not isinstance(left, connector):
        left = exp.paren(left, copy=False)
    if isinstance(right, exp.Connector):
        right = exp.paren(right, copy=False)
    return connector(this=left, expression=right)


def _operand(item: exp.Expr | Token) -> exp.Expression:
    """A compared operand: lark passes a rule's built children and its tokens (the operators) alike."""
    assert isinstance(item, exp.Expression)
    return item


@v_args(inline=True)
class _RowTransformer(Transformer[Token, "exp.Expr"]):  # a string: older sqlglot releases have no Expr
    """Builds sqlglot predicates; ``subject`` is the implied column of a field constraint."""

    def __init__(self, subject: exp.Expr | None = None) -> None:
        super().__init__()
        self._subject = subject
        self.kind: RowClauseKind = "expression"
        self.catalog: CatalogRef | None = None
        self.max_failing: Share | None = None

    def _the_subject(self) -> exp.Expr:
        assert self._subject is not None
        return self._subject.copy()

    # operands
    def column(self, name: Token) -> exp.Expr:
        lowered = str(name).lower()
        if lowered in ("true", "false"):
            return exp.Boolean(this=lowered == "true")
        if lowered == "null":
            raise ClauseSyntaxError("compare with null using 'is null' / 'is not null'", name.start_pos or 0)
        column = exp.column(str(name))
        column.meta["offset"] = name.start_pos
        return column

    def number(self, token: Token) -> exp.Expr:
        return exp.Literal.number(str(token))

    def neg_number(self, token: Token) -> exp.Expr:
        return exp.Literal.number("-" + str(token))

    def string(self, token: Token) -> exp.Expr:
        return exp.Literal.string(unquote(str(token)))

    def neg(self, operand: exp.Expr) -> exp.Expr:
        return exp.Neg(this=operand)

    def binop(self, left: exp.Expr, op: Token, right: exp.Expr) -> exp.Expr:
        return _ARITHMETIC[str(op)](this=left, expression=right)

    def func(self, name: Token, *args: exp.Expr) -> exp.Expr:
        builder = FUNCTIONS.get(str(name).lower())
        if builder is None:
            raise ClauseSyntaxError(
                f"unknown function {str(name)!r}; known: {', '.join(sorted(FUNCTIONS))}",
                name.start_pos or 0,
            )
        if builder in (exp.Coalesce, exp.Least, exp.Greatest):
            return builder(this=args[0], expressions=list(args[1:]))
        if builder is exp.Round and len(args) == 2:
            return exp.Round(this=args[0], decimals=args[1])
        if len(args) != 1:
            raise ClauseSyntaxError(f"{name}() takes one argument", name.start_pos or 0)
        return builder(this=args[0])

    # predicates
    def comparison(self, *items: exp.Expr | Token) -> exp.Expr:
        operands = [_operand(item) for item in items[0::2]]
        ops = items[1::2]
        parts = [
            _COMPARISONS[str(op)](this=left.copy(), expression=right.copy())
            for left, op, right in zip(operands, ops, operands[1:], strict=False)
        ]
        self.kind = "comparison" if self.kind == "expression" else self.kind
        return exp.and_(*parts) if len(parts) > 1 else parts[0]

    def compare_to(self, op: Token, operand: exp.Expr) -> exp.Expr:
        return self.comparison(self._the_subject(), op, operand)

    def is_null(self, operand: exp.Expr) -> exp.Expr:
        self.kind = "null_rule"
        return exp.Is(this=operand, expression=exp.Null())

    def is_not_null(self, operand: exp.Expr) -> exp.Expr:
        self.kind = "null_rule"
        return exp.not_(exp.Is(this=operand, expression=exp.Null()))

    def null_only_when(self, operand: exp.Expr, condition: exp.Expr) -> exp.Expr:
        self.kind = "null_only_when"
        # null implies the condition, and an unknown condition does not excuse a null
        excused = exp.Coalesce(this=exp.paren(condition, copy=False), expressions=[exp.false()])
        return exp.or_(exp.not_(exp.Is(this=operand, expression=exp.Null())), excused)

    def catalog_ref(self, attribute: Token, key: Token) -> CatalogRef:
        return CatalogRef(attribute=str(attribute), key=str(key))

    def _take_catalog(self, ref: CatalogRef, allowed: tuple[str, ...], verb: str) -> None:
        if ref.attribute not in allowed:
            raise ClauseSyntaxError(
                f"'{verb} catalog {ref.attribute}' is not a catalog lookup tscontract knows; "
                f"'{verb}' takes one of: {', '.join(allowed)}"
            )
        if self.catalog is not None:
            raise ClauseSyntaxError("one clause may reference the catalog once")
        self.catalog = ref

    def within_catalog(self, *args: object) -> exp.Expr:
        operand, ref = (self._the_subject(), args[0]) if len(args) == 1 else args
        assert isinstance(ref, CatalogRef) and isinstance(operand, exp.Expression)
        self._take_catalog(ref, BOUND_ATTRIBUTES, "within")
        self.kind = "catalog_bound"
        return exp.Between(
            this=operand,
            low=_catalog_column(f"{ref.attribute}_low"),
            high=_catalog_column(f"{ref.attribute}_high"),
        )

    def equals_catalog(self, *args: object) -> exp.Expr:
        operand, ref = (self._the_subject(), args[0]) if len(args) == 1 else args
        assert isinstance(ref, CatalogRef) and isinstance(operand, exp.Expression)
        self._take_catalog(ref, EQUALITY_ATTRIBUTES, "equals")
        self.kind = "catalog_equals"
        return exp.EQ(this=operand, expression=_catalog_column(ref.attribute))

    def between(self, *args: exp.Expr) -> exp.Expr:
        operand, low, high = (self._the_subject(), *args) if len(args) == 2 else args
        self.kind = "comparison" if self.kind == "expression" else self.kind
        return exp.Between(this=operand, low=low, high=high)

    def in_list(self, *args: exp.Expr) -> exp.Expr:
        operand, values = (self._the_subject(), args) if self._subject is not None else (args[0], args[1:])
        self.kind = "membership"
        return exp.In(this=operand, expressions=list(values))

    def matches(self, *args: object) -> exp.Expr:
        """``symbol matches '^[A-Z.]{1,6}$'``: the whole value matches (``regexp_full_match``)."""
        operand, token = (self._the_subject(), args[0]) if len(args) == 1 else args
        assert isinstance(token, Token) and isinstance(operand, exp.Expression)
        pattern = unquote(str(token))
        try:
            check_regex(pattern)
        except ClauseSyntaxError as exc:
            raise ClauseSyntaxError(exc.message, (token.start_pos or 0) + 1 + exc.offset) from None
        self.kind = "pattern" if self.kind == "expression" else self.kind
        return exp.RegexpFullMatch(this=operand, expression=exp.Literal.string(pattern))

    def or_(self, left: exp.Expr, right: exp.Expr) -> exp.Expr:
        self.kind = "expression" if self.kind not in ("null_rule", "comparison") else self.kind
        return _chain(exp.Or, left, right)

    def and_(self, left: exp.Expr, right: exp.Expr) -> exp.Expr:
        return _chain(exp.And, left, right)

    def not_(self, operand: exp.Expr) -> exp.Expr:
        return exp.not_(operand)

    def invariant(self, predicate: exp.Expr, tolerated: Share | None = None) -> exp.Expr:
        self.max_failing = tolerated
        return predicate

    def field_constraint(self, predicate: exp.Expr, tolerated: Share | None = None) -> exp.Expr:
        self.max_failing = tolerated
        return predicate

    def tolerated(self, share: Token) -> Share:
        """``; at most 0.1% of rows``: the inline form of ``max_failing: "0.1%"``."""
        try:
            return parse_share(str(share))
        except ValueError as exc:
            raise ClauseSyntaxError(str(exc), share.start_pos or 0) from None


def _finish(tree: Tree[Token], text: str, transformer: _RowTransformer, subject: str | None) -> RowClause:
    try:
        predicate = transformer.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ClauseSyntaxError):
            raise exc.orig_exc from None
        raise
    if isinstance(predicate, Tree):  # the start rule itself when it has one child
        predicate = predicate.children[0]
    predicate = bracketed(predicate)
    # sqlglot types Condition on Expr, yet builds every node as an Expression (what RowClause holds)
    if not (isinstance(predicate, exp.Condition) and isinstance(predicate, exp.Expression)) or isinstance(
        predicate, exp.Column | exp.Literal
    ):
        raise ClauseSyntaxError("an invariant must be a condition (a comparison, 'is null', ...)")
    columns = tuple(dict.fromkeys(c.name for c in predicate.find_all(exp.Column) if c.table != CATALOG_TABLE))
    if subject is None:
        first = next(iter(columns), None)
        subject = first
    return RowClause(
        text=text.strip(),
        kind=transformer.kind,
        predicate=predicate,
        subject=subject,
        catalog=transformer.catalog,
        columns=columns,
        max_failing=transformer.max_failing,
    )


def parse_invariant(text: str) -> RowClause:
    """``low <= open <= high`` and friends; columns are resolved later by :func:`resolve_columns`."""
    return _finish(parse("invariant", text), text, _RowTransformer(), None)


def parse_field_constraint(field_name: str, text: str) -> RowClause:
    """``equals catalog unit for series_id`` on field ``unit``."""
    subject = exp.column(field_name)
    return _finish(parse("field_constraint", text), text, _RowTransformer(subject), field_name)
