"""The engine's SQL, generated for PostgreSQL.

As for Spark (engines/spark_sql.py): every check is written once, in DuckDB SQL;
each statement is parsed by sqlglot and generated in the PostgreSQL dialect, and
the DuckDB functions sqlglot does not map (or maps to something that differs)
are rewritten here to exact equivalents: the same microsecond arithmetic, the
same bucket origin, the same discrete quantile, a cast that yields NULL instead
of an error. Written for PostgreSQL 14 and later (``date_bin``, exact
``EXTRACT(EPOCH ...)``, ``hash_record_extended``); subqueries get the alias
PostgreSQL before 16 requires.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

import sqlglot
import sqlglot.expressions as exp

from tscontract.contract.regex import NOT_NEWLINE, leading_flags, python_pattern
from tscontract.sql.semantics import ieee_division, lowered_division, lowered_float_arithmetic, one_to_one_case

# DuckDB's time_bucket origin for buckets of days, hours, minutes: Monday 2000-01-03 00:00 UTC
TIME_BUCKET_ORIGIN = "2000-01-03 00:00:00+00"
# TRY_CAST to these goes through a temporary function that returns NULL where the cast fails
TRY_FUNCTIONS = {
    "numeric": "NUMERIC",
    "bigint": "BIGINT",
    "double": "DOUBLE PRECISION",
    "timestamptz": "TIMESTAMPTZ",
    "date": "DATE",
    "boolean": "BOOLEAN",
}
_TRY_OF_TYPE = {
    exp.DataType.Type.DECIMAL: "numeric",
    exp.DataType.Type.BIGINT: "bigint",
    exp.DataType.Type.INT: "bigint",
    exp.DataType.Type.SMALLINT: "bigint",
    exp.DataType.Type.TINYINT: "bigint",
    exp.DataType.Type.INT128: "numeric",
    exp.DataType.Type.DOUBLE: "double",
    exp.DataType.Type.FLOAT: "double",
    exp.DataType.Type.TIMESTAMPTZ: "timestamptz",
    exp.DataType.Type.DATE: "date",
    exp.DataType.Type.BOOLEAN: "boolean",
}
_NUMERIC_TYPES = {
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.INT128,
    exp.DataType.Type.DOUBLE,
    exp.DataType.Type.FLOAT,
}


def try_functions_sql() -> list[str]:
    """``pg_temp.tsc_try_<name>(text)``: the cast of a text, NULL where PostgreSQL refuses it; and the IEEE
    float arithmetic of :data:`_FLOAT_FUNCTIONS`."""
    return [
        f"CREATE OR REPLACE FUNCTION pg_temp.tsc_try_{name}(v TEXT) RETURNS {sql} LANGUAGE plpgsql IMMUTABLE AS "
        f"$$BEGIN RETURN CAST(v AS {sql}); EXCEPTION WHEN OTHERS THEN RETURN NULL; END$$"
        for name, sql in TRY_FUNCTIONS.items()
    ] + [
        f"CREATE OR REPLACE FUNCTION pg_temp.tsc_f_{name}(a float8, b float8) RETURNS float8 LANGUAGE plpgsql "
        f"IMMUTABLE AS $$BEGIN RETURN a {op} b; EXCEPTION WHEN numeric_value_out_of_range THEN RETURN {ieee}; END$$"
        for name, (op, ieee) in _FLOAT_FUNCTIONS.items()
    ]


# PostgreSQL raises "value out of range" where IEEE 754 rounds to ±Inf (overflow) or ±0 (underflow); each
# function returns what IEEE gives instead. Only finite, non-zero operands raise, so ln() is defined.
_OVERFLOW_OR_ZERO = "CASE WHEN ln(abs(a)) {op} ln(abs(b)) > 0 THEN sign(a) * sign(b) * 'Infinity'::float8 ELSE 0 END"
_FLOAT_FUNCTIONS = {
    "add": ("+", "sign(a) * 'Infinity'::float8"),  # only a sum of two like-signed finite numbers overflows
    "sub": ("-", "sign(a) * 'Infinity'::float8"),
    "mul": ("*", _OVERFLOW_OR_ZERO.format(op="+")),
    "div": ("/", _OVERFLOW_OR_ZERO.format(op="-")),
}
_FLOAT_NAMES = {exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div"}


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _micros(node: exp.Expression) -> exp.Expression:
    seconds = exp.Extract(this=exp.var("EPOCH"), expression=node)
    return exp.Cast(
        this=exp.Mul(this=seconds, expression=exp.Literal.number(1_000_000)), to=exp.DataType.build("BIGINT")
    )


def _interval_us(amount: exp.Expression) -> exp.Expression:
    one = exp.Interval(this=exp.Literal.string("1 microsecond"))
    return exp.Mul(this=exp.paren(amount), expression=one)


_NUMBER_COLUMNS = ("SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")


def _numeric(node: exp.Expression, columns: Mapping[str, str]) -> bool:
    """``node`` is a number for sure: a numeric source column, arithmetic, a numeric cast or literal."""
    if isinstance(node, exp.Paren):
        return _numeric(node.this, columns)
    if isinstance(node, exp.Column):
        return columns.get(node.name, "").startswith(_NUMBER_COLUMNS)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.IntDiv | exp.Mod):
        return True
    if isinstance(node, exp.Cast):
        return node.to.this in _NUMERIC_TYPES
    return isinstance(node, exp.Literal) and node.is_number


def _float_text(value: exp.Expression) -> exp.Expression:
    """A float as DuckDB writes it: a whole number with ``.0`` (PostgreSQL writes ``230``)."""
    whole = exp.and_(
        exp.EQ(this=value.copy(), expression=_fn("TRUNC", value.copy())),
        exp.LT(this=_fn("ABS", value.copy()), expression=exp.Literal.number("1e15")),
    )
    digits = exp.Cast(this=exp.Cast(this=value.copy(), to=exp.DataType.build("NUMERIC")), to=exp.DataType.build("TEXT"))
    written = exp.DPipe(this=digits, expression=exp.Literal.string(".0"))
    text = exp.Cast(this=value, to=exp.DataType.build("TEXT"))
    text.meta["written"] = True  # not to be rewritten again
    return exp.Case(ifs=[exp.If(this=whole, true=written)], default=text)


def _try_cast(node: exp.TryCast, columns: Mapping[str, str]) -> exp.Expression:
    """DuckDB's TRY_CAST: NULL where the cast fails (PostgreSQL's CAST raises)."""
    to = node.to
    value = node.this
    if to.this is exp.DataType.Type.DECIMAL and _numeric(value, columns):
        # a number into DECIMAL(p, s): NULL where it does not fit p - s integer digits once rounded to s places
        params = to.expressions
        precision = int(params[0].name) if params else 18
        scale = int(params[1].name) if len(params) > 1 else 3
        rounded = _fn("ROUND", exp.Cast(this=value.copy(), to=exp.DataType.build("NUMERIC")), exp.Literal.number(scale))
        fits = exp.LT(this=_fn("ABS", rounded), expression=exp.Literal.number(f"1e{precision - scale}"))
        return exp.Case(ifs=[exp.If(this=fits, true=exp.Cast(this=value, to=to))])
    if to.this in (exp.DataType.Type.BIGINT, exp.DataType.Type.INT128) and _numeric(value, columns):
        low, high = (-(2**63), 2**63 - 1) if to.this is exp.DataType.Type.BIGINT else (-(2**127), 2**127 - 1)
        fits = exp.Between(this=value.copy(), low=exp.Literal.number(low), high=exp.Literal.number(high))
        return exp.Case(ifs=[exp.If(this=fits, true=exp.Cast(this=value, to=to))])
    name = _TRY_OF_TYPE.get(to.this)
    if name is None:
        raise NotImplementedError(f"no PostgreSQL TRY_CAST to {to.sql('duckdb')}")
    text = exp.Cast(this=value, to=exp.DataType.build("TEXT"))
    tried = exp.Anonymous(this=f"pg_temp.tsc_try_{name}", expressions=[text])
    return exp.Cast(this=tried, to=to) if name in ("numeric", "bigint", "double") else tried


_TIME_FIELDS = {"Y": "YYYY", "m": "MM", "d": "DD", "H": "HH24", "M": "MI", "S": "SS", "f": "US"}


def postgres_time_format(strftime: str) -> str:
    """A strftime format as a PostgreSQL ``to_char`` pattern; text outside fields is quoted."""
    out = []
    for part in re.split(r"(%.)", strftime):
        if part.startswith("%") and len(part) == 2:
            if part[1] not in _TIME_FIELDS:
                raise ValueError(f"no PostgreSQL pattern for {part}")
            out.append(_TIME_FIELDS[part[1]])
        elif part:
            out.append('"' + part.replace('"', '\\"') + '"')
    return "".join(out)


_ORDERINGS = (exp.LT, exp.LTE, exp.GT, exp.GTE)
_TIME_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")


def _clause_semantics(node: exp.Expression) -> exp.Expression:
    """What a lowered row clause (sql/semantics.py) means, in PostgreSQL's terms.

    PostgreSQL has no ISNAN (NaN equals NaN there), raises on a zero divisor, maps case and orders text
    by the database's locale: text beside a text literal is ordered by code point (``COLLATE "C"`` over
    UTF-8), case is mapped one character to one.
    """
    if isinstance(node, exp.IsNan):
        return exp.paren(exp.EQ(this=node.this, expression=exp.cast(exp.Literal.string("NaN"), "DOUBLE")))
    if lowered_division(node) and not node.meta.get("ieee"):
        return ieee_division(node)  # type: ignore[arg-type]
    if lowered_float_arithmetic(node):  # overflow and underflow as IEEE, not an error
        return _fn(f"pg_temp.tsc_f_{_FLOAT_NAMES[type(node)]}", node.this, node.expression)
    if isinstance(node, exp.Lower | exp.Upper) and not node.meta.get("one_to_one"):
        return one_to_one_case(node)  # the locale's upper('ß') is 'ß' or 'SS'
    if isinstance(node, _ORDERINGS):
        for side in ("this", "expression"):
            value = node.args[side]
            if isinstance(value, exp.Literal) and value.is_string and not _TIME_TEXT.match(value.this):
                node.set(side, exp.Collate(this=value, expression=exp.Identifier(this="C", quoted=True)))
                return node
    return node


class _Rewriter:
    def __init__(self, columns: Mapping[str, str]) -> None:
        self.columns = columns
        self.aliases = itertools.count(1)

    def __call__(self, node: exp.Expression) -> exp.Expression:
        new = self.replacement(node)
        # sqlglot does not descend into a replacement: rewrite what it holds too
        return node if new is node else new.transform(self, copy=False)

    def replacement(self, node: exp.Expression) -> exp.Expression:
        clause = _clause_semantics(node)
        if clause is not node:
            return clause
        if isinstance(node, exp.TryCast):
            return _try_cast(node, self.columns)
        if (
            isinstance(node, exp.Cast)
            and node.to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)
            and not node.meta.get("written")
            and isinstance(node.this, exp.Column)
            and self.columns.get(node.this.name) in ("FLOAT", "DOUBLE")
        ):
            return _float_text(node.this)
        if isinstance(node, exp.RegexpFullMatch):
            # the whole text matches: anchored at both ends, the whole pattern grouped (^a|b$ is a or b)
            pattern = node.expression
            if isinstance(pattern, exp.Literal):
                pattern = exp.Literal.string(postgres_pattern(pattern.this))
            else:
                pattern = exp.DPipe(
                    this=exp.DPipe(this=exp.Literal.string("^(?:"), expression=pattern),
                    expression=exp.Literal.string(")$"),
                )
            return exp.RegexpLike(this=node.this, expression=pattern)
        if isinstance(node, exp.RegexpExtract):
            # DuckDB: the group's text, '' where nothing matches
            group = node.args.get("group") or exp.Literal.number(0)
            matched = exp.paren(_fn("REGEXP_MATCH", node.this, node.expression))
            match = exp.Bracket(this=matched, expressions=[group], offset=1)  # 1-based, as written
            if group.name == "0":
                raise NotImplementedError("regexp_extract of the whole match")
            return _fn("COALESCE", match, exp.Literal.string(""))
        if isinstance(node, exp.DataType) and node.this in (exp.DataType.Type.INT128, exp.DataType.Type.UINT128):
            return exp.DataType.build("NUMERIC(39, 0)")
        if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
            # DuckDB's any_value skips nulls; the run takes it where values agree: min, on every version
            return exp.Min(this=node.this.this)
        if isinstance(node, exp.Anonymous):
            name = node.name.lower()
            args = node.expressions
            if name == "make_timestamptz" and len(args) == 1:
                epoch = exp.Cast(
                    this=exp.Literal.string("1970-01-01 00:00:00+00"), to=exp.DataType.build("TIMESTAMPTZ")
                )
                return exp.Add(this=epoch, expression=_interval_us(args[0]))
            if name == "epoch_us":
                return _micros(args[0])
            if name == "to_microseconds":
                return _interval_us(args[0])
            if name == "hash":  # 64 bits over the tuple, as DuckDB's hash of several values
                return _fn("HASH_RECORD_EXTENDED", exp.Anonymous(this="ROW", expressions=args), exp.Literal.number(0))
        if isinstance(node, exp.DateBin) and node.args.get("zone") is None and not node.args.get("origin"):
            origin = exp.Cast(this=exp.Literal.string(TIME_BUCKET_ORIGIN), to=exp.DataType.build("TIMESTAMPTZ"))
            return _fn("DATE_BIN", node.this, node.expression, origin)
        if isinstance(node, exp.Explode) and isinstance(node.this, exp.GenerateSeries):
            return node.this  # DuckDB's list, unnested: PostgreSQL's set
        if isinstance(node, exp.TimeToStr) and isinstance(node.args.get("format"), exp.Literal):
            pattern = postgres_time_format(node.args["format"].this)
            return _fn("TO_CHAR", node.this, exp.Literal.string(pattern))
        if isinstance(node, exp.IntDiv):
            return _fn("DIV", node.this, node.expression)
        if isinstance(node, exp.Subquery) and not node.alias and isinstance(node.parent, exp.From | exp.Join):
            node.set("alias", exp.TableAlias(this=exp.to_identifier(f"__q{next(self.aliases)}")))
            return node
        if isinstance(node, exp.Select) and isinstance(node.args.get("group"), exp.Group):
            group = node.args["group"]
            if group.args.get("all"):
                # GROUP BY ALL: every selected expression that is no aggregate, by position
                positions = [
                    exp.Literal.number(i + 1)
                    for i, e in enumerate(node.expressions)
                    if not e.find(exp.AggFunc) and not isinstance(e, exp.Star)
                ]
                node.set("group", exp.Group(expressions=positions))
        return node


def to_postgres(sql: str | exp.Expr, columns: Mapping[str, str] | None = None) -> str:
    """DuckDB SQL (text, or a tree already parsed from it) generated as PostgreSQL SQL.

    ``columns``: the source's columns and their (DuckDB) types: a TRY_CAST of a number to a
    decimal is a range check, not a text parse; a float is written as DuckDB writes it.
    """
    tree = sqlglot.parse_one(sql, read="duckdb") if isinstance(sql, str) else sql.copy()
    return tree.transform(_Rewriter(columns or {}), copy=False).sql(dialect="postgres")


def postgres_pattern(pattern: str) -> str:
    """A contract's pattern as a PostgreSQL ARE matching the whole text as RE2 does.

    ``\\d \\w \\s`` are rewritten as the ASCII classes RE2 reads (PostgreSQL's ``\\w`` takes ``é``); leading
    flags go before the anchors, where PostgreSQL reads embedded options (anywhere else they are an error).
    PostgreSQL's ``.`` takes ``\\n``: it is written ``[^\\n]`` unless ``(?s)``; ``(?m)`` is PostgreSQL's
    ``(?w)`` (``^ $`` at line breaks, ``.`` unchanged: its own ``m`` changes ``.`` and ``[^...]`` too), so the
    whole-text anchors are ``\\A \\Z``.
    """
    letters, body = leading_flags(pattern)
    body = python_pattern(body, dot="." if "s" in letters else NOT_NEWLINE)
    letters = letters.replace("s", "").replace("m", "w")
    options = f"(?{letters})" if letters else ""
    return f"{options}\\A(?:{body})\\Z"
