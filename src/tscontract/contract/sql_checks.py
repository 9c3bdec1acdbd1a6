"""SQL checks: a contract's own query over the batch, ``{object}`` standing for the batch's typed rows.

The query is read (sqlglot, DuckDB's dialect) when the contract loads: one SELECT of one value,
reading only ``{object}`` and its own CTEs. Each engine runs it on its typed view (Spark: the
same SQL generated for Spark).
"""

from __future__ import annotations

import sqlglot
import sqlglot.expressions as exp
from sqlglot.errors import ParseError, TokenError

OBJECT = "{object}"
OBJECT_TABLE = "__tsc_object"


def sql_check_query(sql: str) -> exp.Select:
    """The parsed query with ``{object}`` as the table :data:`OBJECT_TABLE`; ``ValueError`` if refused."""
    if OBJECT not in sql:
        raise ValueError("a SQL check reads the batch as {object}: SELECT count(*) FROM {object} WHERE ...")
    text = sql.replace(OBJECT, OBJECT_TABLE)
    try:
        statements = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0]
        raise ValueError(f"the SQL does not parse: {first}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        raise ValueError("a SQL check is one SELECT statement returning one number")
    query = statements[0]
    if len(query.expressions) != 1 or isinstance(query.expressions[0], exp.Star):
        raise ValueError("a SQL check selects exactly one value (SELECT count(*) FROM {object} WHERE ...)")
    ctes = {cte.alias_or_name for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.db or table.catalog:
            raise ValueError(f"a SQL check reads only {OBJECT} (and its own WITH queries), not {table.sql()}")
        if table.name != OBJECT_TABLE and table.name not in ctes:
            raise ValueError(f"a SQL check reads only {OBJECT} (and its own WITH queries), not {table.name!r}")
    return query


def bound_to(query: exp.Select, view: str) -> str:
    """The query reading ``view`` for ``{object}``, as DuckDB SQL."""
    tree = query.copy()
    for table in tree.find_all(exp.Table):
        if table.name == OBJECT_TABLE:
            table.set("this", exp.to_identifier(view))
    return tree.sql(dialect="duckdb")
