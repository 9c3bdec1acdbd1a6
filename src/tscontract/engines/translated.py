"""A connection that takes the validation run's DuckDB statements and runs them on another engine.

The validation run (engines/duckdb.py) talks to a DuckDB connection. Spark and PostgreSQL
stand in for it through a subclass of :class:`TranslatedConnection`: each statement is
parsed as DuckDB SQL by sqlglot; ``SET`` is DuckDB's own business and is skipped, ``CREATE
[TEMP] TABLE/VIEW name AS query`` becomes the engine's temporary table or view, anything
else is a query whose rows come back.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlglot
import sqlglot.expressions as exp

if TYPE_CHECKING:
    from tscontract.engines.inputs.sources import Source
    from tscontract.plan.checks import CheckPlan
    from tscontract.plan.result import ValidationReport


class Rows:
    """What ``execute`` returns: the rows, read by ``fetchall()`` as from a DuckDB cursor."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class TranslatedConnection:
    """The subset of a DuckDB connection the validation run uses; subclasses run it elsewhere."""

    engine_name = "translated"

    def create(self, kind: str, name: str, query: exp.Expression) -> None:
        """``CREATE TEMP {kind} name AS query`` (``kind`` is TABLE or VIEW), replacing one of that name."""
        raise NotImplementedError

    def query(self, tree: exp.Expr) -> list[tuple[Any, ...]]:
        """The rows of a query (DuckDB's syntax tree)."""
        raise NotImplementedError

    def untrusted(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of a contract's own query (a SQL check); a subclass may confine it further."""
        return self.execute(sql).fetchall()

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Rows:
        if params:
            raise NotImplementedError(f"the {self.engine_name} connection takes no bound parameters; inline literals")
        tree = sqlglot.parse_one(sql, read="duckdb")
        if isinstance(tree, exp.Set):
            return Rows([])
        if isinstance(tree, exp.Create):
            query = tree.expression
            if query is None:
                raise NotImplementedError(
                    f"the {self.engine_name} connection creates tables from queries only: {sql[:60]}"
                )
            self.create("VIEW" if tree.kind == "VIEW" else "TABLE", tree.this.name, query)
            return Rows([])
        return Rows(self.query(tree))

    def validate(
        self,
        plan: CheckPlan,
        source: Source,
        *,
        engine: str,
        now: datetime | None,
        examples: int,
        progress: Any,
        coverage: Any,
    ) -> ValidationReport:
        """The validation run of engines/duckdb.py, its statements issued to this connection."""
        from tscontract.engines.run import ValidationRun

        run = ValidationRun(plan, source, now, examples, progress, con=self, engine=engine, coverage=coverage)
        return run.run()
