"""The engine's SQL, generated for ClickHouse (chdb, in-process).

As for Spark and PostgreSQL (engines/spark_sql.py, engines/postgres_sql.py): every
check is written once, in DuckDB SQL; each statement is parsed by sqlglot and
generated in the ClickHouse dialect, and the DuckDB functions sqlglot does not map
(or maps to something that differs) are rewritten here to exact equivalents:
instants as ``DateTime64(6, 'UTC')`` (sqlglot's ``DateTime`` keeps whole seconds),
the same microsecond arithmetic and bucket origin, integer division that truncates,
DuckDB's discrete quantile (the value at ``floor((n - 1) * q)`` of the sorted
values), a full regex match anchored as RE2's, a cast that yields NULL instead of
an error. The session's settings (engines/chdb.py) give SQL's NULL semantics:
outer joins fill NULL, aggregates of no row are NULL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sqlglot
import sqlglot.expressions as exp

from tscontract.sql.semantics import one_to_one_case

# DuckDB's time_bucket origin for buckets of days, hours, minutes: Monday 2000-01-03 00:00 UTC
TIME_BUCKET_ORIGIN_US = 946_857_600_000_000
INSTANT = "DateTime64(6, 'UTC')"
_T = exp.DataType.Type
# DuckDB types as ClickHouse names them (wrapped in Nullable: every value may be NULL, as in DuckDB)
_TYPES = {
    _T.TIMESTAMPTZ: INSTANT,
    _T.TIMESTAMP: "DateTime64(6)",
    _T.TIMESTAMPNTZ: "DateTime64(6)",
    _T.INT128: "Int128",
    _T.UINT128: "UInt128",
    _T.DATE: "Date32",
}


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _micros(node: exp.Expression) -> exp.Expression:
    return _fn("toUnixTimestamp64Micro", _fn("toDateTime64", node, exp.Literal.number(6), exp.Literal.string("UTC")))


def _instant(micros: exp.Expression) -> exp.Expression:
    return _fn("fromUnixTimestamp64Micro", _fn("toInt64", micros), exp.Literal.string("UTC"))


def _type_name(to: exp.DataType) -> str:
    """A DuckDB type as ClickHouse names it, not Nullable."""
    name = _TYPES.get(to.this) or to.sql(dialect="clickhouse")
    match = re.fullmatch(r"Nullable\((.*)\)", name)
    return match[1] if match else name


def _type(to: exp.DataType) -> exp.DataType | None:
    """A DuckDB type ClickHouse names otherwise, as ``Nullable(...)``; None where sqlglot's name serves."""
    if to.this not in _TYPES or to.args.get("nullable"):
        return None
    return exp.DataType.build(f"Nullable({_TYPES[to.this]})", dialect="clickhouse")


def _try_cast(node: exp.TryCast, columns: Mapping[str, str]) -> exp.Expression:
    """DuckDB's TRY_CAST: NULL where the value does not fit (``accurateCastOrNull``: no wrap, no error).

    Into DECIMAL(p, s) as DuckDB casts: rounded to s places (half away from zero), NULL beyond p - s
    integer digits (ClickHouse's own cast truncates and does not check the precision): the value as a
    wide decimal first, whatever it was (text, float, decimal), then rounded there.
    """
    to = node.to
    if to.this is _T.DECIMAL:
        params = to.expressions
        precision = int(params[0].name) if params else 18
        scale = int(params[1].name) if len(params) > 1 else 3
        physical = (
            re.fullmatch(r"DECIMAL\((\d+),(\d+)\)", columns.get(node.this.name, ""))
            if isinstance(node.this, exp.Column)
            else None
        )
        if physical and int(physical[2]) <= scale and int(physical[1]) - int(physical[2]) <= precision - scale:
            # a decimal column that fits as it is (the declared type, as a rule): a plain cast, no wide arithmetic
            return exp.Cast(
                this=node.this, to=exp.DataType.build(f"Nullable(Decimal({precision}, {scale}))", dialect="clickhouse")
            )
        wide = _fn("accurateCastOrNull", node.this, exp.Literal.string("Decimal(76, 38)"))
        value = _fn("round", wide, exp.Literal.number(scale))
        fits = exp.LT(this=_fn("abs", value.copy()), expression=exp.Literal.number(10 ** (precision - scale)))
        typed = _fn("accurateCastOrNull", value.copy(), exp.Literal.string(f"Decimal({precision}, {scale})"))
        return exp.If(this=fits, true=typed)
    return _fn("accurateCastOrNull", node.this, exp.Literal.string(_type_name(to)))


def _quantile_disc(node: exp.PercentileDisc) -> exp.Expression:
    """DuckDB's quantile_disc(x, q): the non-null values sorted, the one at floor((n - 1) * q) from 0."""
    values = _fn("arraySort", _fn("groupArray", node.this))
    count = exp.Count(this=node.this.copy())
    index = _fn(
        "toUInt64",
        _fn(
            "floor",
            exp.Mul(this=exp.paren(exp.Sub(this=count, expression=exp.Literal.number(1))), expression=node.expression),
        ),
    )
    picked = _fn("arrayElement", values, exp.Add(this=index, expression=exp.Literal.number(1)))
    # no value: NULL, as DuckDB's (arrayElement past the end is the type's default)
    return exp.If(this=exp.GT(this=exp.Count(this=node.this.copy()), expression=exp.Literal.number(0)), true=picked)


def _series(node: exp.GenerateSeries) -> exp.Expression:
    """DuckDB's generate_series (both ends in) as an array: of integers, or of instants a step of microseconds apart."""
    start, end, step = node.args["start"], node.args["end"], node.args.get("step")
    if step is None:
        last = exp.Add(this=_fn("toInt64", end), expression=exp.Literal.number(1))
        return _fn("range", _fn("toInt64", start), last)
    if isinstance(step, exp.Anonymous) and step.name.lower() == "to_microseconds":
        step = step.expressions[0]
    else:
        raise NotImplementedError(f"no ClickHouse series of step {step.sql('duckdb')}")
    last = exp.Add(this=_micros(end), expression=exp.Literal.number(1))
    micros = _fn("range", _micros(start), last, _fn("toInt64", step))
    x = exp.to_identifier("__x")
    return _fn("arrayMap", exp.Lambda(this=_instant(exp.column(x)), expressions=[x]), micros)


def _column_text(node: exp.Cast, columns: Mapping[str, str]) -> exp.Expression | None:
    """A source column as DuckDB writes it as text, where ClickHouse writes it otherwise: a decimal with
    all its scale's digits (ClickHouse drops trailing zeros), a whole float with ``.0``."""
    if not isinstance(node.this, exp.Column) or node.to.this not in (_T.VARCHAR, _T.TEXT):
        return None
    physical = columns.get(node.this.name, "")
    if physical == "TIMESTAMP":  # DuckDB: the fraction without trailing zeros, none when zero
        return _naive_text(node.this)
    decimal = re.fullmatch(r"DECIMAL\((\d+),(\d+)\)", physical)
    if decimal:
        return _fn("toDecimalString", node.this, exp.Literal.number(int(decimal[2])))
    if physical not in ("FLOAT", "DOUBLE"):
        return None
    value = node.this
    whole = exp.and_(
        exp.EQ(this=value.copy(), expression=_fn("trunc", value.copy())),
        exp.LT(this=_fn("abs", value.copy()), expression=exp.Literal.number("1e15")),
    )
    written = _fn("concat", _fn("toString", _fn("toInt64", value.copy())), exp.Literal.string(".0"))
    return exp.If(this=whole, true=written, false=_fn("toString", value.copy()))


def _text_values(node: exp.Values) -> exp.Expression | None:
    """``VALUES`` of text and NULLs (relations.small_table's rows) as ClickHouse's ``values()`` table
    function: sqlglot writes a UNION ALL of one SELECT per row, which ClickHouse takes seconds to plan."""
    alias = node.args.get("alias")
    rows = node.expressions
    if alias is None or not alias.columns or not rows:
        return None
    cells = [cell for row in rows for cell in (row.expressions if isinstance(row, exp.Tuple) else [row])]
    if not all(isinstance(c, exp.Null) or (isinstance(c, exp.Literal) and c.is_string) for c in cells):
        return None
    structure = ", ".join(f"{c.name} Nullable(String)" for c in alias.columns)
    function = _fn("values", exp.Literal.string(structure), *rows)
    return exp.Table(this=function, alias=alias.copy())


def _naive_text(value: exp.Expression) -> exp.Expression:
    fraction = _fn("positiveModulo", _micros(value.copy()), exp.Literal.number(1_000_000))
    digits = _fn(
        "trimRight",
        _fn("leftPad", _fn("toString", fraction.copy()), exp.Literal.number(6), exp.Literal.string("0")),
        exp.Literal.string("0"),
    )
    written = _fn("formatDateTime", value, exp.Literal.string("%Y-%m-%d %H:%i:%S"), exp.Literal.string("UTC"))
    tail = exp.If(
        this=exp.EQ(this=fraction, expression=exp.Literal.number(0)),
        true=exp.Literal.string(""),
        false=_fn("concat", exp.Literal.string("."), digits),
    )
    return _fn("concat", written, tail)


class _Rewriter:
    def __init__(self, columns: Mapping[str, str]) -> None:
        self.columns = columns

    def __call__(self, node: exp.Expression) -> exp.Expression:
        new = _replacement(node, self.columns)
        # sqlglot does not descend into a replacement: rewrite what it holds too
        return node if new is node else new.transform(self, copy=False)


def _replacement(node: exp.Expression, columns: Mapping[str, str]) -> exp.Expression:
    if isinstance(node, exp.Lower | exp.Upper) and not node.meta.get("one_to_one"):
        # ClickHouse's upper/lower map ASCII only, upperUTF8('ß') is 'SS': one character to one, as the reference
        name = "upperUTF8" if isinstance(node, exp.Upper) else "lowerUTF8"
        return one_to_one_case(node, "translateUTF8", name)
    if isinstance(node, exp.Cast) and (text := _column_text(node, columns)) is not None:
        return text
    if isinstance(node, exp.TryCast):
        return _try_cast(node, columns)
    if isinstance(node, exp.DataType) and not isinstance(node.parent, exp.DataType):
        return _type(node) or node
    if isinstance(node, exp.RegexpFullMatch):
        # RE2's full match: anchored at both ends (RE2's $ is the end of the text), the whole pattern grouped;
        # ClickHouse sets RE2's dot_nl ('.' takes '\n'), so (?-s) first: '.' is every character but '\n'
        pattern = node.expression
        if isinstance(pattern, exp.Literal):
            pattern = exp.Literal.string(f"(?-s)^(?:{pattern.this})$")
        else:
            pattern = _fn("concat", exp.Literal.string("(?-s)^(?:"), pattern, exp.Literal.string(")$"))
        return _fn("match", node.this, pattern)
    if isinstance(node, exp.RegexpLike):
        return _fn("match", node.this, node.expression)
    if isinstance(node, exp.RegexpExtract):
        # DuckDB: the group's text, '' where nothing matches (as ClickHouse's regexpExtract)
        group = node.args.get("group") or exp.Literal.number(0)
        return _fn("regexpExtract", node.this, node.expression, group)
    if isinstance(node, exp.PercentileDisc) and node.expression is not None:
        return _quantile_disc(node)
    if isinstance(node, exp.Values) and (table := _text_values(node)) is not None:
        return table
    if isinstance(node, exp.AtTimeZone):
        # a wall-clock time read in UTC: the session's zone is UTC, so the same instant, now zoned
        if node.args["zone"].name != "UTC":
            raise NotImplementedError(f"no ClickHouse AT TIME ZONE {node.args['zone'].sql()}")
        return _fn("toTimeZone", _fn("toDateTime64", node.this, exp.Literal.number(6)), exp.Literal.string("UTC"))
    if isinstance(node, exp.Explode) and isinstance(node.this, exp.GenerateSeries):
        return _fn("arrayJoin", _series(node.this))
    if isinstance(node, exp.Div) and not node.meta.get("float"):
        # DuckDB divides as doubles, decimals too (ClickHouse keeps a decimal)
        div = exp.Div(this=_fn("toFloat64", node.this), expression=_fn("toFloat64", node.expression))
        div.meta["float"] = True
        return div
    if isinstance(node, exp.Select):
        # ClickHouse names an unaliased ``t.x`` "t.x" in a created table: DuckDB's name is x
        for projection in node.expressions:
            if isinstance(projection, exp.Column) and projection.table and not isinstance(projection.this, exp.Star):
                projection.replace(exp.alias_(projection.copy(), exp.to_identifier(projection.name, quoted=True)))
        return node
    if isinstance(node, exp.Lag | exp.Lead) and not node.meta.get("nullable"):
        # before a partition's first row (after its last) NULL, as in DuckDB: ClickHouse gives a
        # non-Nullable argument's default (0, 1970-01-01)
        node.set("this", _fn("toNullable", node.this))
        node.meta["nullable"] = True
        return node
    if isinstance(node, exp.IntDiv):
        return _fn("intDiv", node.this, node.expression)
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        args = node.expressions
        if name == "make_timestamptz" and len(args) == 1:
            return _instant(args[0])
        if name == "epoch_us":
            return _micros(args[0])
        if name == "epoch_ns":
            nine = _fn("toDateTime64", args[0], exp.Literal.number(9), exp.Literal.string("UTC"))
            return _fn("toUnixTimestamp64Nano", nine)
        if name == "to_microseconds":
            return _fn("toIntervalMicrosecond", args[0])
        if name == "hash":  # 64 bits over the tuple, NULL parts included
            return _fn("cityHash64", exp.Tuple(expressions=args))
    if isinstance(node, exp.DateBin) and node.args.get("zone") is None and not node.args.get("origin"):
        width = node.this
        if isinstance(width, exp.Anonymous) and width.name.lower() == "to_microseconds":
            width = width.expressions[0]
        t = _micros(node.expression)
        offset = _fn(
            "positiveModulo", exp.Sub(this=t, expression=exp.Literal.number(TIME_BUCKET_ORIGIN_US)), width.copy()
        )
        return _instant(exp.Sub(this=t.copy(), expression=offset))
    if isinstance(node, exp.TimeToStr) and isinstance(node.args.get("format"), exp.Literal):
        pattern = clickhouse_time_format(node.args["format"].this)
        return _fn("formatDateTime", node.this, exp.Literal.string(pattern), exp.Literal.string("UTC"))
    return node


_TIME_FIELDS = {"Y": "%Y", "m": "%m", "d": "%d", "H": "%H", "M": "%i", "S": "%S", "f": "%f"}


def clickhouse_time_format(strftime: str) -> str:
    """A strftime format as a ClickHouse ``formatDateTime`` pattern (``%M`` is the minute: ``%i``)."""
    out = []
    for part in re.split(r"(%.)", strftime):
        if part.startswith("%") and len(part) == 2:
            if part[1] not in _TIME_FIELDS:
                raise ValueError(f"no ClickHouse pattern for {part}")
            out.append(_TIME_FIELDS[part[1]])
        else:
            out.append(part.replace("%", "%%"))
    return "".join(out)


def to_clickhouse(sql: str | exp.Expr, columns: Mapping[str, str] | None = None) -> str:
    """DuckDB SQL (text, or a tree already parsed from it) generated as ClickHouse SQL.

    ``columns``: the source's columns and their (DuckDB) types: a decimal or a float is written
    as text as DuckDB writes it.
    """
    tree = sqlglot.parse_one(sql, read="duckdb") if isinstance(sql, str) else sql.copy()
    if isinstance(tree, exp.Select):
        # a condition's value comes back as a boolean, as DuckDB's (ClickHouse's comparisons are UInt8)
        for projection in tree.expressions:
            value = projection.unalias()
            if isinstance(value, exp.Predicate | exp.Connector | exp.Not | exp.Boolean):
                value.replace(exp.Cast(this=value.copy(), to=exp.DataType.build("BOOLEAN")))
    return tree.transform(_Rewriter(columns or {}), copy=False).sql(dialect="clickhouse")
