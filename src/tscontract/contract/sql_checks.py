"""SQL checks: a contract's own query over the batch, ``{object}`` standing for the batch's typed rows.

The query is read (sqlglot, DuckDB's dialect) when the contract loads: one SELECT of one value,
reading only ``{object}`` and its own CTEs, built only from what contract/sql_allow.py allows.
Each engine runs it on its typed view (Spark: the same SQL generated for Spark).
"""

from __future__ import annotations

import sqlglot.expressions as exp

from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.sql_allow import QUERY, parse_contract_sql

OBJECT = "{object}"
OBJECT_TABLE = "__tsc_object"


def sql_check_query(sql: str) -> exp.Select:
    """The parsed query with ``{object}`` as the table :data:`OBJECT_TABLE`.

    ``ClauseSyntaxError`` (a ``ValueError`` whose offset points into ``sql``) if refused."""
    if OBJECT not in sql:
        raise ValueError("a SQL check reads the batch as {object}: SELECT count(*) FROM {object} WHERE ...")
    text = sql.replace(OBJECT, OBJECT_TABLE)
    try:
        query = parse_contract_sql(text, "a SQL check", kind=QUERY, relations=frozenset({OBJECT_TABLE}))
    except ClauseSyntaxError as exc:
        # offsets into ``text`` back to ``sql``: each {object} is shorter than its table name
        shift = (len(OBJECT_TABLE) - len(OBJECT)) * text.count(OBJECT_TABLE, 0, exc.offset)
        raise ClauseSyntaxError(exc.message, max(0, exc.offset - shift)) from None
    assert isinstance(query, exp.Select)
    if len(query.expressions) != 1 or isinstance(query.expressions[0], exp.Star):
        raise ValueError("a SQL check selects exactly one value (SELECT count(*) FROM {object} WHERE ...)")
    return query


def bound_to(query: exp.Select, view: str) -> str:
    """The query reading ``view`` for ``{object}``, as DuckDB SQL."""
    tree = query.copy()
    for table in tree.find_all(exp.Table):
        if table.name == OBJECT_TABLE:
            table.set("this", exp.to_identifier(view))
    return tree.sql(dialect="duckdb")
