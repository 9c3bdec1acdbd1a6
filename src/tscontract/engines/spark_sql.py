"""The engine's SQL, generated for Spark.

Every check is written once, in the DuckDB SQL the embedded engine runs. For
Spark each statement is parsed by sqlglot and generated in the Spark dialect;
the handful of DuckDB functions sqlglot does not map are rewritten here to
Spark's exact equivalents (same instant, same microsecond arithmetic, same
bucket origin), so both engines compute the same counts from the same text.
"""

from __future__ import annotations

import re

import sqlglot
import sqlglot.expressions as exp

from tscontract.contract.regex import python_pattern
from tscontract.sql.semantics import ieee_division, lowered_division, one_to_one_case

# DuckDB's time_bucket origin for buckets of days, hours, minutes: Monday 2000-01-03 00:00 UTC
TIME_BUCKET_ORIGIN_US = 946_857_600_000_000


def _micros(node: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="UNIX_MICROS", expressions=[node])


def _timestamp(micros: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="TIMESTAMP_MICROS", expressions=[micros])


def _interval_us(amount: exp.Expression) -> exp.Expression:
    """``amount`` microseconds as a Spark day-time interval."""
    one = exp.Interval(this=exp.Literal.string("1"), unit=exp.var("MICROSECOND"))
    return exp.Mul(this=exp.paren(amount), expression=one)


def _rewrite(node: exp.Expression) -> exp.Expression:
    new = _replacement(node)
    # sqlglot does not descend into a replacement: rewrite what it holds too
    return node if new is node else new.transform(_rewrite, copy=False)


def _replacement(node: exp.Expression) -> exp.Expression:
    # a row clause as the reference means it (sql/semantics.py): Spark's x / 0 is NULL, its upper('ß') is 'SS'
    if lowered_division(node) and not node.meta.get("ieee"):
        return ieee_division(node)  # type: ignore[arg-type]
    if isinstance(node, exp.Lower | exp.Upper) and not node.meta.get("one_to_one"):
        return one_to_one_case(node)
    if isinstance(node, exp.RegexpFullMatch):
        # RE2's full match as a Java search: anchored at both ends, \z (Java's $ also matches before a final
        # line break), the whole pattern grouped (^a|b$ is a or b), (?u) so (?i) folds case as RE2 does,
        # (?d) so '\n' is the only line break ('.' takes '\r', U+0085 and U+2028, as in RE2); the classes as
        # RE2 reads them (Java 17's \b is Unicode where its \w is ASCII; its \s also takes \x0b)
        pattern = node.expression
        if isinstance(pattern, exp.Literal):
            pattern = exp.Literal.string(f"(?ud)^(?:{python_pattern(pattern.this)})\\z")
        return exp.RegexpLike(this=node.this, expression=pattern)
    if isinstance(node, exp.DataType) and node.this in (exp.DataType.Type.INT128, exp.DataType.Type.UINT128):
        return exp.DataType.build("DECIMAL(38, 0)")
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        args = node.expressions
        if name == "make_timestamptz" and len(args) == 1:
            return _timestamp(args[0])
        if name == "epoch_us":
            return _micros(args[0])
        if name == "to_microseconds":
            return _interval_us(args[0])
        if name == "hash":  # Spark's HASH is 32-bit murmur3: too many collisions to pre-group keys by
            return exp.Anonymous(this="XXHASH64", expressions=args)
    if isinstance(node, exp.DateBin) and node.args.get("zone") is None and not node.args.get("origin"):
        width = node.this
        if isinstance(width, exp.Anonymous) and width.name.lower() == "to_microseconds":
            width = width.expressions[0]
        t = _micros(node.expression)
        offset = exp.Anonymous(
            this="PMOD",
            expressions=[exp.Sub(this=t, expression=exp.Literal.number(TIME_BUCKET_ORIGIN_US)), width.copy()],
        )
        return _timestamp(exp.Sub(this=t.copy(), expression=offset))
    if isinstance(node, exp.TimeToStr) and isinstance(node.args.get("format"), exp.Literal):
        pattern = spark_time_format(node.args["format"].this)
        return exp.Anonymous(this="DATE_FORMAT", expressions=[node.this, exp.Literal.string(pattern)])
    if isinstance(node, exp.PercentileDisc) and node.expression is not None:
        # DuckDB's quantile_disc(x, q) is Spark's percentile_disc(q) WITHIN GROUP (ORDER BY x): same row picked
        # (sqlglot's own Spark output for this is PERCENTILE_APPROX, an approximation: not the same row)
        function = exp.Anonymous(this="PERCENTILE_DISC", expressions=[node.expression])
        return exp.WithinGroup(this=function, expression=exp.Order(expressions=[exp.Ordered(this=node.this)]))
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
        inner = node.this.expressions
        if len(inner) == 1 and isinstance(inner[0], exp.Tuple):
            return exp.Count(this=exp.Distinct(expressions=inner[0].expressions))
    return node


_TIME_FIELDS = {"Y": "yyyy", "m": "MM", "d": "dd", "H": "HH", "M": "mm", "S": "ss", "f": "SSSSSS"}


def spark_time_format(strftime: str) -> str:
    """A strftime format as a Spark datetime pattern; letters outside fields are quoted literals."""
    out = []
    for part in re.split(r"(%.)", strftime):
        if part.startswith("%") and len(part) == 2:
            if part[1] not in _TIME_FIELDS:
                raise ValueError(f"no Spark pattern for {part}")
            out.append(_TIME_FIELDS[part[1]])
        else:
            out.append(re.sub(r"([A-Za-z']+)", lambda m: "'" + m[1].replace("'", "''") + "'", part))
    return "".join(out)


def to_spark(sql: str | exp.Expr) -> str:
    """DuckDB SQL (text, or a tree already parsed from it) generated as Spark SQL."""
    tree = sqlglot.parse_one(sql, read="duckdb") if isinstance(sql, str) else sql.copy()
    return tree.transform(_rewrite, copy=False).sql(dialect="spark")
