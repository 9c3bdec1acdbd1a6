"""The allow-list every piece of SQL taken from a contract or mapping passes before an engine sees it.

A contract may come from another team, a registry or an imported ODCS document: its SQL is
untrusted (SECURITY.md). What it may name is listed here, not what it may not: the whole parsed
tree is walked and every node must be of an allowed kind --

- relations: the batch's own (``{object}``) and the query's own ``WITH`` queries where they are
  in scope (a name declared in a nested ``WITH`` is unknown outside it: DuckDB would read it as a
  file), written as plain identifiers; no table functions, ``LATERAL``, ``VALUES``, ``UNNEST``,
  string or qualified table names, no ``WITH RECURSIVE``;
- functions: the scalar, aggregate and window functions below (sqlglot expression classes, and
  a few DuckDB names sqlglot keeps as anonymous calls); anything else, however harmless, is
  refused -- ``read_text``, ``glob``, ``query``, ``getenv``, ``current_setting``, PostgreSQL's
  ``pg_read_file``, Spark's ``reflect``, ClickHouse's ``file`` or ``url`` are simply not on it;
- statements: one ``SELECT`` (a SQL check) or one expression (a mapping filter): no ``DESCRIBE``,
  ``SUMMARIZE``, ``PIVOT``, ``PRAGMA``, ``SET``, ``ATTACH``, ``INSTALL``, ``LOAD``, ``COPY``,
  ``EXPORT``, ``CALL``, no second statement.

A refusal is a :class:`ClauseSyntaxError` whose offset points into the text as written, so the
loader reports file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import sqlglot
import sqlglot.expressions as exp
from sqlglot.errors import ParseError, TokenError

from tscontract.contract.grammar import ClauseSyntaxError

MAX_SQL_CHARS = 10_000  # contract SQL is short; longer text is refused before parsing
MAX_SQL_BRACKETS = 32  # nesting deeper is refused before parsing (sqlglot recurses per level)
MAX_RELATIONS = 8  # relation references in one query: a self-join is fine, a cross-join bomb is not
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# the query's structure: what a SELECT over the batch may be built from
_QUERY_NODES: tuple[str, ...] = (
    "Select", "From", "Join", "Where", "Group", "Having", "Qualify", "Order", "Ordered", "Limit",
    "Offset", "Distinct", "With", "CTE", "TableAlias", "Table", "Subquery", "Union", "Except",
    "Intersect", "Exists", "Any", "All", "Star", "Window", "WindowSpec", "Filter", "WithinGroup",
    "IgnoreNulls", "RespectNulls",
)  # fmt: skip
# one row's values: what a filter, and every expression of a query, may be built from
_VALUE_NODES: tuple[str, ...] = (
    "Column", "Identifier", "Literal", "Null", "Boolean", "Alias", "Paren", "Tuple", "Array",
    "Bracket", "Add", "Sub", "Mul", "Div", "IntDiv", "Mod", "Neg", "DPipe", "EQ", "NEQ",
    "NullSafeEQ", "NullSafeNEQ", "GT", "GTE", "LT", "LTE", "And", "Or", "Not", "Is", "In",
    "Between", "Like", "ILike", "Escape", "Case", "If", "Cast", "TryCast", "DataType",
    "DataTypeParam", "Interval", "Var", "Slice", "JSONPath", "JSONPathRoot", "JSONPathKey",
    "JSONPathSubscript",
)  # fmt: skip
_SCALAR_FUNCTIONS: tuple[str, ...] = (
    "Abs", "Ceil", "Floor", "Round", "Sqrt", "Cbrt", "Exp", "Ln", "Log", "Pow", "Sign", "IsNan",
    "IsInf", "Greatest", "Least", "Coalesce", "Nullif", "Length", "Lower", "Upper", "Trim",
    "Substring", "Concat", "ConcatWs", "Left", "Right", "Replace", "StrPosition", "StartsWith",
    "EndsWith", "Contains", "RegexpLike", "RegexpExtract", "RegexpReplace", "Reverse", "Initcap",
    "Extract", "DateTrunc", "TimestampTrunc", "TimeToStr", "StrToTime", "StrToDate", "TimeToUnix",
    "UnixToTime", "DateDiff", "DateAdd", "DateSub", "TimestampDiff", "TimestampAdd", "DatetimeDiff",
    "TsOrDsAdd", "TsOrDsDiff", "TsOrDsToDate", "CurrentTimestamp", "CurrentDate", "Date",
    "DayOfWeek", "DayOfWeekIso", "DayOfMonth", "DayOfYear", "WeekOfYear", "Year", "Month", "Quarter", "Day",
    "Hour", "Minute", "Second", "ArrayContains", "ArraySize", "ArrayLength", "JSONExtract",
    "JSONExtractScalar", "Levenshtein", "ToChar",
)  # fmt: skip
_AGGREGATE_FUNCTIONS: tuple[str, ...] = (
    "Count", "CountIf", "Sum", "Avg", "Min", "Max", "AnyValue", "ArgMax", "ArgMin", "Stddev",
    "StddevPop", "StddevSamp", "Variance", "VariancePop", "Median", "Quantile", "PercentileCont",
    "PercentileDisc", "ApproxDistinct", "ApproxQuantile", "LogicalAnd", "LogicalOr", "Corr",
    "CovarPop", "CovarSamp", "First", "Last", "ArrayAgg", "Mode", "Skewness", "Kurtosis",
)  # fmt: skip
_WINDOW_FUNCTIONS: tuple[str, ...] = (
    "RowNumber", "Rank", "DenseRank", "PercentRank", "CumeDist", "Ntile", "Lag", "Lead",
    "FirstValue", "LastValue", "NthValue",
)  # fmt: skip
# DuckDB functions sqlglot reads as anonymous calls, by lower-case name: pure functions of their arguments
ANONYMOUS_SCALARS = frozenset(
    {
        "abs", "ceiling", "trunc", "mod", "power", "round_even", "even", "factorial", "gcd", "lcm",
        "log10", "log2", "isfinite", "epoch_ms", "epoch_us", "epoch_ns", "make_date", "make_time",
        "make_timestamp", "make_timestamptz", "date_part", "datepart", "date_diff", "datediff",
        "date_sub", "age", "last_day", "dayname", "monthname", "microsecond", "millisecond",
        "nanosecond", "isodow", "isoyear", "yearweek", "weekday", "week", "decade", "century",
        "era", "now", "current_date", "today", "timezone_hour", "timezone_minute", "time_bucket",
        "to_timestamp", "timezone",
        "strlen", "length_grapheme", "bit_length", "octet_length", "ltrim", "rtrim", "lcase",
        "ucase", "prefix", "suffix", "position", "instr", "strip_accents", "ascii", "chr",
        "regexp_full_match", "regexp_matches", "list_contains", "list_has", "array_has",
        "list_distinct", "list_sort", "list_position", "array_length", "len", "list_count",
        "nullif", "ifnull", "isnan", "isinf", "signbit", "greatest", "least", "typeof", "hash",
        "md5", "sha256", "contains", "starts_with", "ends_with", "like_escape", "ilike_escape",
        "not_like_escape", "jaro_similarity", "hamming",
    }
)  # fmt: skip
# aggregate and window functions sqlglot reads as anonymous calls: in a query, not in a row filter
ANONYMOUS_AGGREGATES = frozenset(
    {
        "count_star", "count_if", "countif", "bool_and", "bool_or", "every", "fsum", "sumkahan",
        "kahan_sum", "product", "entropy", "arbitrary", "first_value", "last_value", "quantile",
        "quantile_cont", "quantile_disc", "mad", "approx_count_distinct", "approx_quantile",
        "reservoir_quantile", "histogram", "string_agg", "group_concat", "list", "var_samp",
        "var_pop", "stddev", "regr_slope", "regr_intercept", "regr_r2", "regr_count", "ntile",
    }
)  # fmt: skip

QUERY = "query"
CONDITION = "condition"


def _classes(names: tuple[str, ...]) -> frozenset[type[exp.Expr]]:
    """The sqlglot classes of ``names`` this sqlglot has (a release may lack one or two)."""
    return frozenset(c for n in names if isinstance(c := getattr(exp, n, None), type))


_VALUES = _classes(_VALUE_NODES) | _classes(_SCALAR_FUNCTIONS)
_ALLOWED = {
    QUERY: _VALUES | _classes(_QUERY_NODES) | _classes(_AGGREGATE_FUNCTIONS) | _classes(_WINDOW_FUNCTIONS),
    CONDITION: _VALUES,
}


def parse_contract_sql(text: str, what: str, *, kind: str, relations: frozenset[str] = frozenset()) -> exp.Expr:
    """``text`` parsed (DuckDB's dialect) and checked against the allow-list; ClauseSyntaxError if refused.

    ``kind`` is :data:`QUERY` (one SELECT reading ``relations`` and its own WITH queries) or
    :data:`CONDITION` (one expression over one row's columns). ``what`` names it in messages.
    """
    if len(text) > MAX_SQL_CHARS:
        raise ClauseSyntaxError(f"{what} is {len(text)} characters long; at most {MAX_SQL_CHARS}")
    _check_depth(text, what)
    try:
        statements = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
        if len(statements) != 1:
            one = "one SELECT statement" if kind == QUERY else "one expression"
            raise ClauseSyntaxError(f"{what} is {one}; this text holds {len(statements)} statements")
        tree = statements[0]
        tree.sql(dialect="duckdb")  # what the engines generate from it must generate
    except (ParseError, TokenError) as exc:
        raise ClauseSyntaxError(f"{what} does not parse: {str(exc).splitlines()[0][:200]}") from None
    except RecursionError:
        raise ClauseSyntaxError(f"{what} nests too deeply") from None
    if kind == QUERY and not isinstance(tree, exp.Select):
        raise ClauseSyntaxError(f"{what} is one SELECT statement; {_shown(tree)} is not", _offset(tree, text))
    _check_tree(tree, text, what, kind, relations)
    return tree


def _check_depth(text: str, what: str) -> None:
    """Brackets nested deeper than :data:`MAX_SQL_BRACKETS`, counted even inside quotes (never too few)."""
    depth = 0
    for offset, char in enumerate(text):
        depth += 1 if char in "([" else -1 if char in ")]" else 0
        if depth > MAX_SQL_BRACKETS:
            raise ClauseSyntaxError(f"{what} nests brackets more than {MAX_SQL_BRACKETS} deep", offset)


def _check_tree(tree: exp.Expr, text: str, what: str, kind: str, relations: frozenset[str]) -> None:
    allowed = _ALLOWED[kind]
    tables = 0
    for node in _walk(tree):
        if isinstance(node, exp.Anonymous):
            name = node.name.lower()
            if name not in ANONYMOUS_SCALARS and (kind == CONDITION or name not in ANONYMOUS_AGGREGATES):
                raise _refused_function(node, name, text, what)
            continue
        if type(node) not in allowed:
            if isinstance(node, exp.Func):
                raise _refused_function(node, _function_name(node), text, what)
            raise ClauseSyntaxError(f"{what} may not use {_shown(node)}", _offset(node, text))
        if isinstance(node, exp.Table):
            tables += 1
            _check_relation(node, text, what, relations)
        elif isinstance(node, exp.Column) and (node.args.get("db") or node.args.get("catalog")):
            raise ClauseSyntaxError(
                f"{what} names columns as name or table.name, not {_shown(node)}", _offset(node, text)
            )
        elif isinstance(node, exp.With) and node.args.get("recursive"):
            raise ClauseSyntaxError(f"{what} may not use WITH RECURSIVE", _offset(node, text))
        elif isinstance(node, exp.CTE) and not _PLAIN_NAME.fullmatch(node.alias_or_name):
            raise ClauseSyntaxError(f"{what}: a WITH query is named with letters, digits and '_'", _offset(node, text))
        elif isinstance(node, exp.Join | exp.From) and _joined_laterally(node):
            raise ClauseSyntaxError(f"{what} may not use LATERAL", _offset(node, text))
    if tables > MAX_RELATIONS:
        raise ClauseSyntaxError(f"{what} reads relations {tables} times; at most {MAX_RELATIONS}")


def _walk(tree: exp.Expr) -> Iterator[exp.Expr]:
    """Every node of ``tree``, without recursion (a long AND chain is deep)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.iter_expressions())


def _check_relation(table: exp.Table, text: str, what: str, relations: frozenset[str]) -> None:
    """A relation is the batch or a WITH query in scope, named by a plain identifier."""
    name = table.this
    plain = (
        isinstance(name, exp.Identifier)
        and not table.args.get("db")
        and not table.args.get("catalog")
        and _PLAIN_NAME.fullmatch(name.name) is not None
        and not any(table.args.get(k) for k in ("joins", "pivots", "laterals", "version", "when", "sample"))
    )
    if plain and (name.name in relations or name.name in _ctes_in_scope(table)):
        return
    allowed = " and ".join(sorted(r.replace("__tsc_object", "{object}") for r in relations))
    raise ClauseSyntaxError(
        f"{what} reads only {allowed} and its own WITH queries in scope, not {_shown(table)}", _offset(table, text)
    )


def _ctes_in_scope(table: exp.Table) -> set[str]:
    """Names of the WITH queries ``table`` may read: of every enclosing query, and the earlier
    ones of the WITH it stands in (a name declared in a nested WITH is not visible outside it)."""
    names: set[str] = set()
    child: exp.Expr = table
    parent = table.parent
    while parent is not None:
        if isinstance(parent, exp.With):
            ctes = parent.expressions
            index = next((i for i, c in enumerate(ctes) if c is child), len(ctes))
            names.update(c.alias_or_name for c in ctes[:index])
        elif isinstance(parent, exp.Query):
            with_ = parent.args.get("with_") or parent.args.get("with")  # the key's name differs by release
            if with_ is not None and child is not with_:
                names.update(c.alias_or_name for c in with_.expressions)
        child, parent = parent, parent.parent
    return names


def _joined_laterally(node: exp.Join | exp.From) -> bool:
    return isinstance(node.this, exp.Lateral) or bool(node.args.get("lateral"))


def _function_name(node: exp.Func) -> str:
    try:
        return node.sql_name().lower()
    except Exception:  # a class without a SQL name of its own
        return type(node).__name__.lower()


def _refused_function(node: exp.Expr, name: str, text: str, what: str) -> ClauseSyntaxError:
    return ClauseSyntaxError(
        f"{what} calls {name}(), which is not on the allow-list of SQL functions (see SECURITY.md)",
        _offset(node, text, name),
    )


def _shown(node: exp.Expr) -> str:
    """A node as SQL, on one line and short: the message never grows with the input."""
    try:
        text = node.sql(dialect="duckdb")
    except Exception:
        text = type(node).__name__
    text = " ".join(text.split())
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _offset(node: exp.Expr, text: str, word: str | None = None) -> int:
    """Where ``node`` starts in ``text`` (0 if unknown): sqlglot's token position, or ``word``'s first use."""
    for each in _walk(node):
        start = each.meta.get("start") if each.meta else None
        if isinstance(start, int):
            return start
    found = re.search(re.escape(word), text, re.IGNORECASE) if word else None
    return found.start() if found else 0
