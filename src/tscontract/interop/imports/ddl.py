"""SQL DDL (``CREATE TABLE``) as draft contracts, one per table, read by sqlglot.

- dialects tried in turn: PostgreSQL, MySQL, Snowflake, BigQuery, T-SQL, then sqlglot's generic SQL.
- types: the column's SQL type (``NUMERIC(18,6)`` → ``decimal(18,6)``, ``TIMESTAMPTZ(3)`` →
  ``timestamp_ms_utc``, ``VARCHAR(64)`` → ``string`` with ``length() <= 64``); a timestamp without a
  time zone is read as a UTC instant and listed; JSON, arrays, other types are listed and dropped.
- ``NOT NULL`` → ``nullable: false``; ``PRIMARY KEY`` (column or table) → the key; ``UNIQUE`` →
  ``unique: true``; a literal ``DEFAULT`` → ``default``; ``CHECK`` → a constraint or invariant when
  the clause language reads it (else listed); ``COMMENT ON TABLE/COLUMN`` → descriptions.
- foreign keys, indexes, other statements, function defaults, identity/generated columns: listed.
"""

from __future__ import annotations

from typing import Any

from tscontract.errors import InputError
from tscontract.interop.imports.base import SchemaDraft, contract_name, finish, sql_clause, sql_type
from tscontract.interop.imports.result import Imported
from tscontract.interop.odcs.read import number_text
from tscontract.typemap.odcs import UNSIGNED_READS

_DIALECTS = ("postgres", "mysql", "snowflake", "bigquery", "tsql", None)
_UNSIGNED = UNSIGNED_READS


def _statements(text: str) -> tuple[list[Any], str]:
    """The statements as read by the dialect that reads the most of them: fewest statements left
    unparsed (sqlglot's ``Command``), then most tables, then the order of ``_DIALECTS``."""
    import logging

    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    first_error = ""
    best: tuple[tuple[int, int, int], list[Any], str] | None = None
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # "falling back to parsing as a Command": judged below, not printed
    try:
        for rank, dialect in enumerate(_DIALECTS):
            try:
                statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
            except (ParseError, TokenError) as exc:
                first_error = first_error or str(exc).splitlines()[0]
                continue
            unread = sum(isinstance(s, exp.Command) for s in statements)
            tables = sum(isinstance(s, exp.Create) and isinstance(s.this, exp.Schema) for s in statements)
            score = (unread, -tables, rank)
            if best is None or score < best[0]:
                best = (score, statements, dialect or "generic")
    finally:
        logger.setLevel(level)
    if best is None:
        raise InputError(f"not SQL DDL sqlglot can read: {first_error}")
    return best[1], best[2]


def import_ddl(
    text: str,
    origin: str,
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
) -> list[Imported]:
    from sqlglot import exp

    statements, dialect = _statements(text)
    tables = [s for s in statements if isinstance(s, exp.Create) and isinstance(s.this, exp.Schema)]
    if not tables:
        raise InputError("no CREATE TABLE statement with columns in the file")
    names = [t.this.this.name for t in tables]
    if object_name is not None:
        if object_name not in names:
            raise InputError(f"no table {object_name!r} in the file; it has: {', '.join(names)}")
        tables = [tables[names.index(object_name)]]
    results = []
    for table in tables:
        try:
            results.append(_table(table, statements, origin, dialect, key, time_column))
        except InputError as exc:
            if len(tables) > 1:
                raise InputError(f"table {table.this.this.name!r}: {exc}") from None
            raise
    return results


def _table(
    create: Any, statements: list[Any], origin: str, dialect: str, key: list[str] | None, time_column: str | None
) -> Imported:
    from sqlglot import exp

    table = create.this.this
    name = table.name
    path = ".".join(part.name for part in table.parts)
    draft = SchemaDraft("SQL DDL", f"{origin} table {path} ({dialect})", contract_name(name), name)
    columns: dict[str, str] = {}  # the column as written -> field
    pk: list[str] = []
    for element in create.this.expressions:
        if isinstance(element, exp.ColumnDef):
            columns[element.name] = _column(draft, path, element, dialect, pk)
    for element in create.this.expressions:
        if isinstance(element, exp.ColumnDef):
            continue
        parts = element.expressions if isinstance(element, exp.Constraint) else [element]
        label = f"{path}.constraint {element.name}" if isinstance(element, exp.Constraint) else path
        for part in parts:
            written = part.sql(dialect=dialect if dialect != "generic" else None)
            if isinstance(part, exp.PrimaryKey):
                pk += [columns.get(c.name, c.name) for c in part.expressions]
            elif isinstance(part, exp.CheckColumnConstraint):
                _check(draft, label, part.this, written)
            elif isinstance(part, exp.UniqueColumnConstraint) and isinstance(part.this, exp.Schema):
                cols = [columns.get(c.name, c.name) for c in part.this.expressions]
                if len(cols) == 1:
                    draft.fields[cols[0]]["unique"] = True
                else:
                    draft.lose(label, written, "unique over several columns (not the key): no tscontract clause")
            else:
                draft.lose(label, written, "a table constraint with no tscontract clause (foreign key, index...)")
    draft.key = pk
    properties = create.args.get("properties")
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.SchemaCommentProperty) and isinstance(prop.this, exp.Literal):
            draft.top["description"] = prop.this.this
        else:
            written = prop.sql(dialect=dialect if dialect != "generic" else None)
            draft.lose(f"{path}.properties", written, "a table property (storage, partitioning...): no place")
    for statement in statements:
        if statement is create:
            continue
        target = _target(statement)
        if target is None:
            if isinstance(statement, exp.Create) and isinstance(statement.this, exp.Schema):
                continue  # another table: its own contract
            reason = "a statement sqlglot could not read" if isinstance(statement, exp.Command) else "a statement"
            draft.lose(origin, statement.sql(comments=False), f"{reason} about no column of this table")
        elif target[0] == name:
            _about(draft, statement, target[1], columns, path, dialect)
    return finish(draft, key, time_column)


def _target(statement: Any) -> tuple[str, str | None] | None:
    """(table, column) a COMMENT or CREATE INDEX is about; None for other statements."""
    from sqlglot import exp

    if isinstance(statement, exp.Comment):
        if isinstance(statement.this, exp.Column):
            return statement.this.table, statement.this.name
        return statement.this.name, None
    if isinstance(statement, exp.Create) and isinstance(statement.this, exp.Index):
        table = statement.this.args.get("table")
        return (table.name, None) if table is not None else None
    return None


def _about(
    draft: SchemaDraft, statement: Any, column: str | None, columns: dict[str, str], path: str, dialect: str
) -> None:
    from sqlglot import exp

    written = statement.sql(dialect=dialect if dialect != "generic" else None)
    if isinstance(statement, exp.Comment) and isinstance(statement.expression, exp.Literal):
        text = statement.expression.this
        if column is None:
            draft.top["description"] = text
        elif column in columns:
            draft.fields[columns[column]]["description"] = text
        else:
            draft.lose(path, written, "a comment on a column the table does not have")
    else:
        draft.lose(path, written, "an index: no place in a tscontract contract")


def _column(draft: SchemaDraft, table: str, column: Any, dialect: str, pk: list[str]) -> str:
    from sqlglot import exp

    where = f"{table}.{column.name}"
    kind = column.args.get("kind")
    written = kind.sql(dialect="postgres").lower() if kind is not None else ""
    unsigned = _UNSIGNED.get(written.split("(")[0])
    found = (unsigned, None, None) if unsigned else sql_type(written) if written else None
    entry: dict[str, Any] = {}
    if found is None:
        draft.lose(where, written or "no type", "a type with no tscontract field type: the mapping drops the column")
        draft.drop.append(column.name)
        return column.name
    entry["type"], reason, length = found
    if reason:
        draft.lose(f"{where}.type", written, reason)
    name = draft.add_field(column.name, entry)
    if length is not None:
        draft.clause(f"{where}.type", written, f"length({name}) <= {length}")
    if unsigned:
        draft.clause(f"{where}.type", written, f"{name} >= 0", column=name)
    for constraint in column.constraints:
        part = constraint.kind
        text = constraint.sql(dialect=dialect if dialect != "generic" else None)
        if isinstance(part, exp.NotNullColumnConstraint):
            if part.args.get("allow_null"):
                entry["nullable"] = True
            else:
                entry["nullable"] = False
        elif isinstance(part, exp.PrimaryKeyColumnConstraint):
            pk.append(name)
        elif isinstance(part, exp.UniqueColumnConstraint):
            entry["unique"] = True
        elif isinstance(part, exp.CheckColumnConstraint):
            _check(draft, where, part.this, text)
        elif isinstance(part, exp.DefaultColumnConstraint) and isinstance(part.this, exp.Literal | exp.Neg):
            value = part.this
            if isinstance(value, exp.Literal) and value.is_string:
                entry["default"] = value.this
            else:
                literal = number_text(_number(value.sql()))
                if literal is None:
                    draft.lose(f"{where}.default", text, "a default that is not a literal: not kept")
                else:
                    entry["default"] = _number(value.sql())
        elif isinstance(part, exp.CommentColumnConstraint) and isinstance(part.this, exp.Literal):
            entry["description"] = part.this.this
        else:
            draft.lose(f"{where}.{type(part).__name__}", text, "no tscontract clause for it")
    return name


def _number(text: str) -> Any:
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return int(value) if value == value.to_integral_value() and "." not in text else value


def _check(draft: SchemaDraft, where: str, condition: Any, written: str) -> None:
    """A CHECK as a clause; about one column and starting with it, that field's constraint."""
    from sqlglot import exp

    clause = sql_clause(condition.sql())
    if clause is None:
        draft.lose(where, written, "a CHECK the clause language cannot state")
        return
    about = {c.name for c in condition.find_all(exp.Column)}
    subject = next(iter(about)) if len(about) == 1 else None
    one = subject if subject in draft.fields and clause.startswith(f"{subject} ") else None
    draft.clause(where, written, clause, column=one)
