"""ODCS quality rules as tscontract clauses: thresholds, row counts, regular expressions, SQL rules.

Each function reads one part of a rule and returns what the contract writes, or raises
:class:`Refused` with the reason the rule has no exact tscontract form (the import lists it).

- failing-row thresholds (``nullValues``, ``missingValues``, ``invalidValues``, ``duplicateValues``):
  none allowed (``mustBe: 0``, ``mustBeLessThan: 1``), or with ``unit: percent`` a share at most
  ``mustBeLessOrEqualTo``/``mustBeBetween [0, x]`` → ``max_failing: "x%"``. A share strictly below
  (``mustBeLessThan``) and a tolerated count of rows have no exact form.
- ``rowCount`` bounds → ``row_count: {min, max}`` (whole rows: ``> 1000`` is ``min: 1001``).
- a ``pattern`` is found anywhere in the value (ODCS and JSON Schema search); ``matches`` matches
  the whole value, so an unanchored side gets ``(?s:.*)``. Refused where DuckDB and Spark disagree.
- ``sql`` rules: ``{object}``, ``${object}``, ``{model}`` and the object's table name (or name)
  read the batch; ``{field}``/``{column}`` is the property; physical column names become field
  names. The query must bind in DuckDB over the contract's typed columns and return one value.
- dqx ``custom`` rules on one column (:func:`dqx_check`); Soda/GX row counts (:func:`engine_row_count`).
"""

from __future__ import annotations

import re
from decimal import Decimal
from re import _constants as sre_constants
from re import _parser as sre_parse
from typing import Any

import sqlglot
import sqlglot.expressions as exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError, UnsupportedError

from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.regex import check_regex
from tscontract.contract.sql_checks import OBJECT, OBJECT_TABLE, bound_to, sql_check_query
from tscontract.contract.types import DataType
from tscontract.shown import shown_value

GREATER_EQUAL = ("mustBeGreaterOrEqualTo", "mustBeGreaterThanOrEqualTo")
LESS_EQUAL = ("mustBeLessOrEqualTo", "mustBeLessThanOrEqualTo")
THRESHOLDS = (
    "mustBe",
    "mustNotBe",
    "mustBeLessThan",
    *LESS_EQUAL,
    "mustBeGreaterThan",
    *GREATER_EQUAL,
    "mustBeBetween",
    "mustNotBeBetween",
)
_ERROR = ("error", "critical", "high", "blocker", "fatal")
_WARNING = ("warning", "warn")
_OBJECT_PLACEHOLDERS = ("${object}", "${model}", "{model}", "${table}", "{table}")
_FIELD_PLACEHOLDERS = ("${field}", "{field}", "${column}", "{column}", "${property}", "{property}")


# the SQL dialect of a server type (ODCS servers[].type) whose queries are not DuckDB's; files (local, s3,
# gcs, azure ...) are read by DuckDB, as tscontract and datacontract-cli read them
SERVER_DIALECTS = {
    "athena": "athena",
    "bigquery": "bigquery",
    "clickhouse": "clickhouse",
    "databricks": "databricks",
    "hive": "hive",
    "impala": "hive",
    "mysql": "mysql",
    "oracle": "oracle",
    "postgres": "postgres",  # postgresql too (odcs_types.server_types names it postgres)
    "presto": "presto",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "spark": "spark",
    "sqlserver": "tsql",
    "teradata": "teradata",
    "trino": "trino",
}


def server_dialect(servers: Any) -> str | None:
    """The one SQL dialect (sqlglot's name) the document's servers query in, if not DuckDB's."""
    from tscontract.interop.odcs.types import server_types

    dialects = {SERVER_DIALECTS.get(t) for t in server_types(servers)}
    return next(iter(dialects)) if len(dialects) == 1 else None


class Refused(ValueError):
    """The rule (or this part of it) has no exact tscontract form; the message is the reason."""


def severity(value: Any) -> tuple[str, str | None]:
    """(tscontract severity, the reason when it is not the one written)."""
    if value is None:
        return "error", None
    text = str(value).strip().lower()
    if text in _ERROR:
        return "error", None
    if text in _WARNING:
        return "warning", None
    return "warning", f"severity {value!r} is read as warning (tscontract has error and warning)"


def number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal | float):
        return None
    return Decimal(str(value))


def thresholds(rule: dict[str, Any]) -> list[str]:
    return [k for k in THRESHOLDS if k in rule]


def failing_rows(rule: dict[str, Any]) -> str | None:
    """How many failing rows a count metric tolerates: None (none), or a share ``"5%"``."""
    stated = thresholds(rule)
    if not stated:
        return None  # v3.0 nullCheck / uniqueCheck: none allowed
    if len(stated) != 1:
        raise Refused(f"several thresholds ({', '.join(stated)})")
    (key,) = stated
    value = rule[key]
    percent = str(rule.get("unit", "rows")).lower() in ("percent", "%", "percentage")
    if key == "mustBeBetween" and isinstance(value, list) and len(value) == 2 and number(value[0]) == 0:
        key, value = LESS_EQUAL[0], value[1]
    limit = number(value)
    if limit is None:
        raise Refused(f"{key}: {value!r} is not a number")
    if (
        (key == "mustBe" and limit == 0)
        or (key in LESS_EQUAL and limit == 0)
        or (key == "mustBeLessThan" and 0 < limit <= 1 and not percent)
    ):
        return None
    if (key == "mustBeLessThan" and limit <= 0) or (key in LESS_EQUAL and limit < 0):
        raise Refused(f"{key}: {value} failing rows can never hold")
    if not percent:
        raise Refused(
            f"a tolerated count of failing rows ({key}: {value}): max_failing is a share of rows (unit: percent)"
        )
    if key in LESS_EQUAL and 0 < limit <= 100:
        return f"{format(limit.normalize(), 'f')}%"
    if key == "mustBeLessThan":
        raise Refused(f"a share strictly below {value}%: max_failing tolerates the share itself (at most)")
    raise Refused(f"{key} on a share of failing rows: only an upper bound has a tscontract form (max_failing)")


def row_count(rule: dict[str, Any]) -> dict[str, int]:
    """``rowCount`` thresholds as ``{min, max}`` of whole rows."""
    stated = thresholds(rule)
    if len(stated) != 1:
        raise Refused("a row count states one threshold" if not stated else f"several thresholds ({', '.join(stated)})")
    (key,) = stated
    value = rule[key]
    if str(rule.get("unit", "rows")).lower() not in ("rows", "row"):
        raise Refused(f"a row count in {rule.get('unit')!r}: row_count counts rows")
    if key == "mustBeBetween":
        if not (isinstance(value, list) and len(value) == 2 and all(number(v) is not None for v in value)):
            raise Refused(f"mustBeBetween {value!r} is not [low, high]")
        low, high = (number(v) for v in value)
        assert low is not None and high is not None
        return {"min": _ceil(low), "max": _floor(high)}
    limit = number(value)
    if limit is None:
        raise Refused(f"{key}: {value!r} is not a number")
    if key == "mustBe":
        if limit != limit.to_integral_value():
            raise Refused(f"a row count of {value} rows can never hold")
        return {"min": int(limit), "max": int(limit)}
    if key == "mustBeGreaterThan":
        return {"min": _floor(limit) + 1}
    if key in GREATER_EQUAL:
        return {"min": _ceil(limit)}
    if key == "mustBeLessThan":
        return {"max": _ceil(limit) - 1}
    if key in LESS_EQUAL:
        return {"max": _floor(limit)}
    raise Refused(f"{key} on a row count: row_count states a range (min, max)")


def _ceil(value: Decimal) -> int:
    return int(value.to_integral_value(rounding="ROUND_CEILING"))


def _floor(value: Decimal) -> int:
    return int(value.to_integral_value(rounding="ROUND_FLOOR"))


def matches_clause(column: str, pattern: Any) -> str:
    """``column matches '...'`` matching wherever the ODCS pattern would be found in the value."""
    if not isinstance(pattern, str) or not pattern:
        raise Refused(f"pattern {pattern!r} is not a regular expression")
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise Refused(f"not a valid regular expression: {exc.msg}") from None
    branches = any(op == sre_constants.BRANCH for op, _ in parsed)
    start = not branches and pattern.startswith("^")
    escapes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))  # backslashes before a final $
    end = not branches and pattern.endswith("$") and escapes % 2 == 0
    body = f"(?:{pattern})" if branches else pattern
    whole = ("" if start else "(?s:.*)") + body + ("" if end else "(?s:.*)")
    try:
        check_regex(whole)
    except ClauseSyntaxError as exc:
        raise Refused(f"tscontract refuses the regular expression {pattern!r}: {exc.message}") from None
    if "'" not in whole:
        return f"{column} matches '{whole}'"
    if '"' not in whole:
        return f'{column} matches "{whole}"'
    raise Refused("a pattern holding both quote characters cannot be written in a clause")


def sql_check(
    rule: dict[str, Any],
    tables: set[str],
    columns: dict[str, str],
    field: str | None,
    types: dict[str, DataType],
    dialect: str | None = None,
) -> dict[str, Any]:
    """A ``sql`` rule as a ``sql_checks`` entry's ``sql`` and expectation (name, severity added by the caller).

    ``tables``: lower-cased names the batch goes by (object name, physicalName); ``columns``: lower-cased
    data column → field name; ``field``: the property the rule is on; ``dialect``: the SQL dialect the
    query is written in (:func:`server_dialect`), translated to DuckDB's by sqlglot — the entry's
    ``note`` then gives the query as written.
    """
    written, sql = duckdb_form(rule, tables, columns, field, dialect)
    try:
        parsed = sql_check_query(sql)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    value = parsed.expressions[0]
    # bound first: a function DuckDB does not have is named as such, not taken for a value per row
    rows = _bind(parsed, types)
    aggregated = any(value.find_all(exp.AggFunc)) or rows == 1  # an aggregate gives one row of no rows
    if parsed.args.get("group") or not (aggregated or parsed.args.get("limit")):
        raise Refused("the query returns a value per row (or group), not one value: aggregate it (count, max ...)")
    entry: dict[str, Any] = {"sql": sql}
    entry.update(_expectation(rule, parsed))
    if dialect is not None:
        entry["note"] = f"the ODCS query, in {dialect} SQL: {' '.join(written.split())}"
    return entry


def duckdb_form(
    rule: dict[str, Any], tables: set[str], columns: dict[str, str], field: str | None, dialect: str | None
) -> tuple[str, str]:
    """The rule's query as written, and as the contract's ``sql_checks`` entry states it (:func:`sql_check`):
    as written when it already reads {object} by the contract's names, else rewritten and in DuckDB's SQL."""
    written, text = _placeholders_filled(rule, field)
    tree = _one_select(text, dialect)
    changed = _read_object(tree, tables, columns) or text != written or dialect is not None
    try:  # a query sqlglot cannot translate exactly (a sampling method DuckDB lacks ...) is refused
        level = ErrorLevel.RAISE if dialect else ErrorLevel.WARN
        sql = tree.sql(dialect="duckdb", unsupported_level=level).replace(OBJECT_TABLE, OBJECT)
    except UnsupportedError as exc:
        raise Refused(f"no exact DuckDB form of the {dialect} query: {str(exc).splitlines()[0]}") from None
    return written, sql if changed else written


def _placeholders_filled(rule: dict[str, Any], field: str | None) -> tuple[str, str]:
    """The rule's query as written (no trailing ``;``), and with {object} and the property's placeholders filled."""
    query = rule.get("query")
    if not isinstance(query, str) or not query.strip():
        raise Refused("a sql rule without a query")
    written = text = query.strip().rstrip(";").strip()
    for placeholder in _OBJECT_PLACEHOLDERS:
        text = text.replace(placeholder, OBJECT)
    for placeholder in _FIELD_PLACEHOLDERS:
        if placeholder in text:
            if field is None:
                raise Refused(f"{placeholder} in a rule that is not on a property")
            text = text.replace(placeholder, field)
    return written, text


def _one_select(text: str, dialect: str | None) -> exp.Select:
    """``text`` parsed in ``dialect`` (DuckDB's by default): one SELECT statement, else refused."""
    try:
        statements = sqlglot.parse(text.replace(OBJECT, OBJECT_TABLE), read=dialect or "duckdb")
    except (ParseError, TokenError) as exc:
        raise Refused(
            f"the SQL does not parse{f' as {dialect}' if dialect else ''}: {str(exc).splitlines()[0]}"
        ) from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        raise Refused("a SQL check is one SELECT statement returning one number")
    return statements[0]


def _read_object(tree: exp.Select, tables: set[str], columns: dict[str, str]) -> bool:
    """Rewrite ``tree`` in place to read {object} by the contract's field names; whether that changed it.
    A table that is neither {object}, one of ``tables`` nor a CTE is refused."""
    changed = False
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if table.name in ctes:
            continue
        if table.name == OBJECT_TABLE:  # {object} quoted or in a qualified name (`${project}.${dataset}.${model}`)
            changed = changed or bool(table.args.get("db") or table.args.get("catalog") or table.this.quoted)
            table.set("this", exp.to_identifier(OBJECT_TABLE))
            table.set("db", None)
            table.set("catalog", None)
            continue
        if table.name.lower() not in tables:
            raise Refused(f"reads table {table.sql()!r}, which is not this object ({', '.join(sorted(tables))})")
        table.set("this", exp.to_identifier(OBJECT_TABLE))
        table.set("db", None)
        table.set("catalog", None)
        changed = True
    for column in tree.find_all(exp.Column):
        renamed = columns.get(column.name.lower())
        if renamed is not None and column.name != renamed:
            column.set("this", exp.to_identifier(renamed))
            changed = True
        if column.table and column.table.lower() in tables:
            column.set("table", exp.to_identifier(OBJECT_TABLE))
            changed = True
    return changed


def _expectation(rule: dict[str, Any], query: exp.Select) -> dict[str, Any]:
    stated = thresholds(rule)
    if len(stated) != 1:
        raise Refused("a sql rule states one threshold" if not stated else f"several thresholds ({', '.join(stated)})")
    (key,) = stated
    value = rule[key]
    if key == "mustBeBetween":
        bounds = [number(v) for v in value] if isinstance(value, list) and len(value) == 2 else []
        if len(bounds) != 2 or None in bounds:
            raise Refused(f"mustBeBetween {value!r} is not [low, high]")
        return {"must_be_between": bounds}
    limit = number(value)
    if limit is None:
        raise Refused(f"{key}: {value!r} is not a number")
    simple = {"mustBe": "must_be", "mustBeLessThan": "must_be_less_than", "mustBeGreaterThan": "must_be_greater_than"}
    if key in simple:
        return {simple[key]: limit}
    whole = isinstance(query.expressions[0].unalias(), exp.Count)
    if key in GREATER_EQUAL and whole:  # a count is whole: >= n is > ceil(n) - 1
        return {"must_be_greater_than": Decimal(_ceil(limit) - 1)}
    if key in LESS_EQUAL and whole:
        return {"must_be_less_than": Decimal(_floor(limit) + 1)}
    if key in (*GREATER_EQUAL, *LESS_EQUAL):
        raise Refused(f"{key} on a value that need not be whole: sql_checks state must_be, <, > or between")
    raise Refused(f"{key}: sql_checks state must_be, must_be_less_than, must_be_greater_than, must_be_between")


def _bind(query: exp.Select, types: dict[str, DataType]) -> int:
    """Run the query in DuckDB over an empty table of the contract's typed columns: it binds, one column;
    the number of rows it gives there."""
    import duckdb

    from tscontract.engines.sandbox import lock
    from tscontract.typemap.sql import sql_type

    con = duckdb.connect()
    try:
        columns = ", ".join(f'"{name}" {sql_type(dtype)}' for name, dtype in types.items())
        con.execute(f"CREATE TABLE {OBJECT_TABLE} ({columns})")
        lock(con)  # the imported document's query runs next: nothing outside this empty table
        result = con.execute(bound_to(query, OBJECT_TABLE))
        width = len(result.description or [])
        rows = len(result.fetchall())
    except duckdb.Error as exc:
        raise Refused(f"DuckDB refuses the query over the contract's columns: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    if width != 1:
        raise Refused("a SQL check returns one value")
    return rows


_AGGREGATE = {
    "is_aggr_not_greater_than": "<=",
    "is_aggr_not_less_than": ">=",
    "is_aggr_equal": "=",
    "is_aggr_not_equal": "<>",
}
# times against the clock (DQX's is_not_in_future; not_in_future as datacontract-cli's fixture writes it)
_TIMES = {"not_in_future", "is_not_in_future", "is_not_in_near_future", "is_older_than_n_days"}
# the functions a clause states when on every row of one column (dqx_clause); the others become SQL checks
DQX_CLAUSES = (
    "is_not_null", "is_unique", "is_in_list", "is_in_range", "regex_match", "is_valid_date", "is_valid_timestamp",
    "is_not_empty", "is_not_null_and_not_empty", "is_not_null_and_is_in_list", "is_not_in_range",
    "is_not_less_than", "is_not_greater_than", "is_equal_to", "is_not_equal_to", "is_valid_ipv4_address",
)  # fmt: skip
DQX_FUNCTIONS = (*DQX_CLAUSES, "sql_expression", *_AGGREGATE, *_TIMES)
# DQX rules with no exact tscontract form, and why (listed, naming the rule)
DQX_LOST = {
    "is_data_fresh_per_time_window": "rows per tumbling window of the clock: tscontract's completeness counts "
    "expected points per series and cadence, not rows per window",
    "is_data_fresh": "the newest value within max_age_minutes of a base timestamp column or expression: "
    "tscontract's freshness compares with the clock",
    "foreign_key": "another table's values: no tscontract clause",
    "compare_datasets": "another table: no tscontract clause",
    "has_valid_schema": "a Spark schema: the contract's fields state it, not a rule",
    "sql_query": "a query over the whole table with its own merge columns: no exact tscontract form",
}


def dqx_literal(value: Any, function: str) -> str:
    """A DQX limit or value as a clause literal: a number, or a quoted SQL string (``"'A'"``); DQX reads any
    other string as a Spark SQL expression (a column name, ``current_date()``), which no literal states."""
    if (n := number(value)) is not None and not isinstance(value, bool):
        return format(n, "f")
    if isinstance(value, str) and re.fullmatch(r"'(?:[^']|'')*'", value.strip()):
        return value.strip()
    raise Refused(f"{function} limit {shown_value(value)!r}: DQX reads a string as a Spark SQL expression")


def dqx_clause(function: str, arguments: dict[str, Any], column: str, text: bool) -> str | None:
    """The clause a one-column DQX check states (``text``: the column is a string); None when the type
    states it (``is_not_empty`` on a non-text column). DQX's own semantics: a null passes every check but
    the ``is_not_null...`` ones; ``is_in_list`` values are literals; limits are numbers or quoted strings."""
    trim = arguments.get("trim_strings") is True
    filled = f"{column} matches '(?s).*[^ ].*'" if trim else f"{column} <> ''"  # Spark's trim: spaces only
    if function == "is_not_empty":
        return filled if text else None
    if function == "is_not_null_and_not_empty":
        return f"{column} is not null and {filled}" if text else f"{column} is not null"
    if function in ("is_in_list", "is_not_null_and_is_in_list"):
        allowed = arguments.get("allowed")
        listed = in_list(column, allowed, arguments.get("case_sensitive", True) is False)
        return f"{column} is not null and {listed}" if function == "is_not_null_and_is_in_list" else listed
    if function == "is_valid_ipv4_address":
        return matches_clause(column, IPV4)
    if function in ("is_not_in_range", "is_in_range"):
        low, high = (dqx_literal(arguments.get(k), function) for k in ("min_limit", "max_limit"))
        inside = f"{column} >= {low} and {column} <= {high}"
        return f"({column} < {low} or {column} > {high})" if function == "is_not_in_range" else inside
    compare = {"is_not_less_than": ">=", "is_not_greater_than": "<=", "is_equal_to": "=", "is_not_equal_to": "<>"}
    key = "value" if function in ("is_equal_to", "is_not_equal_to") else "limit"
    return f"{column} {compare[function]} {dqx_literal(arguments.get(key), function)}"


IPV4 = r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$"


def in_list(column: str, allowed: Any, lower: bool) -> str:
    """``f in ('a', 'b')`` (DQX's ``case_sensitive: false``: ``lower(f) in ('a', 'b')``, the values lowered)."""
    if not isinstance(allowed, list) or not any(v is not None for v in allowed):
        raise Refused(f"no values to be in: {shown_value(allowed)}")
    if lower and not all(isinstance(v, str) for v in allowed if v is not None):
        raise Refused("case_sensitive: false on values that are not text")
    literals = [_sql_literal(str(v).lower() if lower else v) for v in allowed if v is not None]
    return f"{'lower(' + column + ')' if lower else column} in ({', '.join(literals)})"


def dqx_check(rule: dict[str, Any]) -> tuple[str, dict[str, Any], Any, str | None]:
    """A ``custom`` rule of engine dqx (Databricks Labs): (function, arguments, criticality, filter), or refused.

    The functions read here mean on every row what a tscontract clause means: ``is_not_null``,
    ``is_unique`` (nulls apart), ``is_in_list`` (a null passes), ``is_in_range`` (both ends inclusive),
    ``regex_match`` (Spark ``rlike``: found anywhere, like an ODCS pattern). A ``filter`` (Spark SQL)
    limits a rule to some rows: it becomes a SQL check counting the rows it selects that fail
    (:func:`dqx_failing_sql`).
    """
    implementation = rule.get("implementation")
    check = implementation.get("check") if isinstance(implementation, dict) else None
    if not isinstance(check, dict):
        raise Refused("a dqx rule without a check")
    assert isinstance(implementation, dict)
    function = str(check.get("function"))
    given = check.get("arguments")
    arguments: dict[str, Any] = given if isinstance(given, dict) else {}
    if function in DQX_LOST:
        raise Refused(f"dqx {function}: {DQX_LOST[function]}")
    if function not in DQX_FUNCTIONS:
        raise Refused(f"dqx function {function!r}: no tscontract clause for it")
    if arguments.get("negate"):
        raise Refused("a negated regex_match")
    if isinstance(check.get("for_each_column"), list):  # the same check on each column
        if function == "is_unique":
            raise Refused("is_unique for each of several columns")
        arguments = {**arguments, "columns": check["for_each_column"]}
    where = implementation.get("filter")
    return function, arguments, implementation.get("criticality"), str(where) if where else None


def _seconds(text: str) -> int:
    found = re.fullmatch(r"\s*(\d+)\s*([smhd])\s*", text.lower())
    if found is None:
        raise Refused(f"offset {text!r} is not a duration (30s, 15m, 1h, 1d)")
    return int(found.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[found.group(2)]


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if (n := number(value)) is not None:
        return format(n, "f")
    return "'" + str(value).replace("'", "''") + "'"


def dqx_failing_sql(function: str, arguments: dict[str, Any], columns: list[str], where: str | None) -> str:
    """A dqx check as a query counting the failing rows (of those ``where`` selects): SQL check, must be 0.

    ``is_unique`` over several columns counts the values repeated (a row with a null in them is apart);
    another function over several columns (``for_each_column``) fails a row where any column fails;
    ``sql_expression`` fails a row where the expression is false.
    """
    names = [f'"{c}"' for c in columns]
    if function == "is_unique":
        present = " AND ".join(f"{n} IS NOT NULL" for n in names)
        rows = f"SELECT {', '.join(names)} FROM {OBJECT} WHERE {present}" + (f" AND ({where})" if where else "")
        return f"SELECT count(*) FROM ({rows} GROUP BY {', '.join(names)} HAVING count(*) > 1)"
    if function in _AGGREGATE:
        return _dqx_aggregate(function, arguments, names, where)
    if function == "sql_expression":
        expression = arguments.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise Refused("sql_expression without an expression")
        holds = [expression]
    else:
        holds = [_dqx_holds(function, arguments, n) for n in names]
    failing = " OR ".join(f"NOT ({h})" for h in holds)
    return f"SELECT count(*) FROM {OBJECT} WHERE " + (f"({where}) AND ({failing})" if where else failing)


def _dqx_aggregate(function: str, arguments: dict[str, Any], names: list[str], where: str | None) -> str:
    """``is_aggr_*``: the aggregate (of each ``group_by`` group) compared with ``limit``; counts the failing."""
    aggregate = str(arguments.get("aggr_type", "count")).lower()
    if aggregate not in ("count", "sum", "avg", "min", "max"):
        raise Refused(f"aggregate {aggregate!r}")
    limit = number(arguments.get("limit"))
    if limit is None:
        raise Refused(f"{function} without a numeric limit")
    groups = arguments.get("group_by") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise Refused("group_by is not a list of columns")
    (column,) = names
    by = f" GROUP BY {', '.join(f'{chr(34)}{g}{chr(34)}' for g in groups)}" if groups else ""
    inner = f"SELECT {aggregate}({column}) AS __v FROM {OBJECT}" + (f" WHERE {where}" if where else "") + by
    return f"SELECT count(*) FROM ({inner}) WHERE NOT (__v {_AGGREGATE[function]} {format(limit, 'f')})"


def _dqx_holds(function: str, arguments: dict[str, Any], column: str) -> str:
    if function in ("not_in_future", "is_not_in_future", "is_not_in_near_future"):  # offset: seconds after now
        offset = arguments.get("offset", 0)
        seconds = offset if isinstance(offset, int) and not isinstance(offset, bool) else _seconds(str(offset))
        if function == "is_not_in_near_future":  # fails strictly between now and now + offset
            return (
                f"{column} IS NULL OR NOT ({column} > current_timestamp "
                f"AND {column} < current_timestamp + INTERVAL {seconds} SECOND)"
            )
        return f"{column} IS NULL OR {column} <= current_timestamp + INTERVAL {seconds} SECOND"
    if function == "is_older_than_n_days":  # at least N days before today
        days = arguments.get("days")
        if not isinstance(days, int) or isinstance(days, bool):
            raise Refused("is_older_than_n_days without a whole number of days")
        return f"{column} IS NULL OR CAST({column} AS DATE) <= current_date - INTERVAL {days} DAY"
    if function == "is_not_null":
        return f"{column} IS NOT NULL"
    if function == "is_in_list":
        allowed = arguments.get("allowed")
        if not isinstance(allowed, list) or not allowed:
            raise Refused("is_in_list without allowed values")
        return f"{column} IS NULL OR {column} IN ({', '.join(_sql_literal(v) for v in allowed)})"
    if function == "is_in_range":
        low, high = (arguments.get(k) for k in ("min_limit", "max_limit"))
        range_clause(column, low, high)  # numbers, at least one limit
        limits = [f"{column} >= {_sql_literal(low)}" if low is not None else ""]
        limits.append(f"{column} <= {_sql_literal(high)}" if high is not None else "")
        return f"{column} IS NULL OR ({' AND '.join(x for x in limits if x)})"
    return f"{column} IS NULL OR regexp_matches({column}, {_sql_literal(arguments.get('regex'))})"


def range_clause(column: str, low: Any, high: Any) -> str:
    """``is_in_range``: both limits inclusive, either may be missing; numbers only."""
    bounds = [(v, number(v)) for v in (low, high)]
    if any(v is not None and n is None for v, n in bounds):
        raise Refused(f"limits {low!r}, {high!r} are not numbers")
    (_, lo), (_, hi) = bounds
    if lo is not None and hi is not None:
        return f"{column} between {format(lo, 'f')} and {format(hi, 'f')}"
    if lo is None and hi is None:
        raise Refused("is_in_range without limits")
    return f"{column} >= {format(lo, 'f')}" if lo is not None else f"{column} <= {format(hi, 'f')}"


_SODA_ROW_COUNT = re.compile(r"^row_count\s*(?:(>=|<=|>|<|=)\s*(\d+)|between\s+(\d+)\s+and\s+(\d+))$")


def _soda_tree(implementation: str | dict[str, Any]) -> Any:
    if isinstance(implementation, dict):
        return implementation
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="safe").load(implementation)
    except YAMLError:
        raise Refused("a Soda check that is not YAML") from None


def _soda_check(implementation: str | dict[str, Any]) -> str:
    """The one SodaCL check an implementation holds (``checks for T: [row_count > 10]``); else refused.

    A check in Soda's contract form (``type: duplicate_percent``, ``columns: [...]``) is named and refused:
    only row-count bounds have a tscontract clause.
    """
    tree = _soda_tree(implementation)
    if isinstance(tree, dict) and isinstance(tree.get("type"), str):
        raise Refused(f"Soda check type {shown_value(tree['type'])!r}: only row_count bounds have a tscontract clause")
    lists = list(tree.values()) if isinstance(tree, dict) else []
    checks = [c for v in lists if isinstance(v, list) for c in v]
    if len(checks) != 1 or len(lists) != 1:
        raise Refused("not one Soda row_count check")
    written = next(iter(checks[0])) if isinstance(checks[0], dict) and checks[0] else checks[0]
    if not isinstance(written, str):
        raise Refused("not one Soda row_count check")
    return written


def engine_row_count(rule: dict[str, Any]) -> dict[str, int]:
    """A Soda or GX ``custom`` rule that bounds the row count, as ``{min, max}``; else refused.

    Soda: one check ``row_count > 10`` (``>=``, ``<``, ``<=``, ``=``, ``between a and b``, inclusive);
    GX: ``expect_table_row_count_to_be_between`` (``min_value``/``max_value``, inclusive) or
    ``expect_table_row_count_to_equal``.
    """
    engine = str(rule.get("engine", "")).lower()
    implementation = rule.get("implementation")
    if engine == "soda" and isinstance(implementation, (str, dict)):
        written = _soda_check(implementation)
        found = _SODA_ROW_COUNT.match(written.strip())
        if found is None:
            raise Refused(f"Soda check {shown_value(written)!r}: only row_count bounds have a tscontract clause")
        op, value, low, high = found.groups()
        if op is None:
            return row_count({"mustBeBetween": [int(low), int(high)]})
        key = {
            ">": "mustBeGreaterThan",
            ">=": "mustBeGreaterOrEqualTo",
            "<": "mustBeLessThan",
            "<=": "mustBeLessOrEqualTo",
            "=": "mustBe",
        }[op]
        return row_count({key: int(value)})
    if engine in ("greatexpectations", "great_expectations", "gx") and isinstance(implementation, dict):
        kind = implementation.get("type")
        given = implementation.get("kwargs")
        kwargs: dict[str, Any] = given if isinstance(given, dict) else {}
        if kind == "expect_table_row_count_to_equal" and number(kwargs.get("value")) is not None:
            return row_count({"mustBe": kwargs["value"]})
        if kind == "expect_table_row_count_to_be_between":
            low, high = number(kwargs.get("min_value")), number(kwargs.get("max_value"))
            if low is None and high is None:
                raise Refused("expect_table_row_count_to_be_between without bounds")
            bounds = {"min": _ceil(low)} if low is not None else {}
            return bounds | ({"max": _floor(high)} if high is not None else {})
        raise Refused(f"GX expectation {kind!r}: only row-count expectations are read")
    raise Refused(f"custom rule for engine {rule.get('engine')!r}: tscontract does not run it")
