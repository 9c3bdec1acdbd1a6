"""What a validation run offers the check families that run on it (time checks, step checks).

``engines/duckdb.py``'s ``ValidationRun`` is the one implementation; the families type their run
against :class:`Run`, so they need not import the engine that imports them (``duckdb`` ⇄
``duckdb_time`` and ``duckdb`` ⇄ ``step`` were import cycles, hidden behind ``TYPE_CHECKING``).
The translated engines (PostgreSQL, chdb, Spark) run the same ``ValidationRun`` on their own
connection.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from tscontract.contract.model import Contract
from tscontract.engines.inputs.sources import Source
from tscontract.plan.checks import Check, CheckPlan
from tscontract.sql.columns import ColumnSQL

TYPED_VIEW = "__tsc_typed"  # the batch as the contract types it: the view every check reads
Progress = Callable[[str], None]
Coverage = tuple[datetime | None, datetime | None]  # --from/--to: the period a batch covers at least


class Run(Protocol):
    """One validation run on one connection: its plan, typed columns, clock, and where results go."""

    plan: CheckPlan
    contract: Contract
    coverage: Coverage | None
    now: datetime
    limit: int  # examples kept per check
    progress: Progress
    con: Any  # a DuckDB connection or a translated engine's (engines/translated.py)
    source: Source
    columns: dict[str, ColumnSQL]
    series: str | None
    typed_view: str

    def result(
        self,
        check: Check,
        status: str,
        failed: int = 0,
        examples: list[dict[str, Any]] | None = None,
        message: str | None = None,
    ) -> None: ...

    def judged(self, check: Check, failed: int, examples: list[dict[str, Any]], message: str | None = None) -> None: ...

    def missing(self, check: Check) -> list[str]: ...

    def fetch(self, sql: str) -> list[tuple[Any, ...]]: ...

    @property
    def catalog_joined(self) -> bool: ...

    def create_typed_view(self, view: str = ..., numbered: bool = False) -> None: ...

    def with_totals(self, totals: list[str], rows: str, order: str) -> tuple[list[int], list[tuple[Any, ...]]]: ...
