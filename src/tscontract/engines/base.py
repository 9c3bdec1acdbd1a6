"""The engine abstraction: what a validation run offers its check families, and what an engine is.

- :class:`Run`: ``engines/run/``'s ``ValidationRun`` is the one implementation; the families type
  their run against it, so they need not import the run that imports them.
- :class:`Engine`: what ``validate()`` asks of an engine; ``engines/__init__.py`` maps each name to
  ``"module:Class"`` and imports it on first use.
- :class:`SharedRun`: the run all four engines share (connect, open the data, run the plan, close,
  translate the engine's refusals); each engine module states only its hooks and options. The
  translated engines (PostgreSQL, chdb, Spark) run the same ``ValidationRun`` on their own connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path
from time import perf_counter
from typing import Any, ClassVar, Protocol

from tscontract.contract.model import Contract
from tscontract.engines.inputs.sources import Source
from tscontract.errors import InputError
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.result import Status, ValidationReport
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
    time_span: tuple[datetime | None, datetime | None] | None  # the batch's first and last instants, if read

    def result(
        self,
        check: Check,
        status: Status,
        failed: int = 0,
        examples: list[dict[str, Any]] | None = None,
        message: str | None = None,
    ) -> None: ...

    def judged(self, check: Check, failed: int, examples: list[dict[str, Any]], message: str | None = None) -> None: ...

    def missing(self, check: Check) -> list[str]: ...

    def fetch(self, sql: str) -> list[tuple[Any, ...]]: ...

    @property
    def catalog_joined(self) -> bool: ...

    @property
    def statements_dear(self) -> bool: ...  # every statement costs the engine a job or more (Spark)

    def create_typed_view(self, view: str = ..., numbered: bool = False) -> None: ...

    def with_totals(self, totals: list[str], rows: str, order: str) -> tuple[list[int], list[tuple[Any, ...]]]: ...


class Engine(Protocol):
    """What ``validate()`` asks of an engine: a name, its options, the kinds it refuses, and a run."""

    name: ClassVar[str]
    OPTIONS: ClassVar[tuple[str, ...]]  # the keyword options its constructor takes
    HANDLERS: ClassVar[Mapping[CheckKind, str]]  # kind -> the pass of the run that judges it
    UNSUPPORTED: ClassVar[Mapping[CheckKind, str]]  # kinds it gives no verdict for, with the reason

    def run(
        self,
        plan: CheckPlan,
        data: Any,
        *,
        now: datetime | None = None,
        examples: int = 5,
        progress: Progress | None = None,
        coverage: Coverage | None = None,
    ) -> ValidationReport: ...


class SharedRun:
    """The run every engine shares: connect, open the data on the connection, run the plan, close.

    An engine states its differences in the hooks: how it connects, how it opens the data, what it
    does around reading (DuckDB turns a corrupt file met by a check into an input error), and which
    of its own exceptions mean the data or the server refused (one line, exit 2; anything else is a
    bug and propagates).
    """

    name: ClassVar[str]
    OPTIONS: ClassVar[tuple[str, ...]] = ()
    HANDLERS: ClassVar[Mapping[CheckKind, str]] = {}
    UNSUPPORTED: ClassVar[Mapping[CheckKind, str]] = {}

    def connect(self, data: Any, progress: Progress) -> Any:
        raise NotImplementedError

    def open(self, con: Any, data: Any, plan: CheckPlan) -> Source:
        raise NotImplementedError

    def execute(self, con: Any, plan: CheckPlan, source: Source, **run: Any) -> ValidationReport:
        """The validation run on ``con``: a translated connection runs the DuckDB run itself."""
        report: ValidationReport = con.validate(plan, source, engine=self.name, **run)
        return report

    def reading(self, data: Any) -> AbstractContextManager[object]:
        return nullcontext()

    def refused(self, exc: Exception, data: Any) -> InputError | None:
        """``exc`` as the one-line input error it means, or None when it is not the data's fault."""
        return None

    def run(
        self,
        plan: CheckPlan,
        data: Any,
        *,
        now: datetime | None = None,
        examples: int = 5,
        progress: Progress | None = None,
        coverage: Coverage | None = None,
    ) -> ValidationReport:
        started = perf_counter()
        said = progress or (lambda _msg: None)
        con = self.connect(data, said)
        try:
            with self.reading(data):
                source = self.open(con, data, plan)
                report = self.execute(
                    con, plan, source, now=now, examples=examples, progress=progress, coverage=coverage
                )
        except Exception as exc:
            error = self.refused(exc, data)
            if error is None:
                raise
            raise error from None
        finally:
            con.close()
        report.elapsed_s = perf_counter() - started
        return report


def shown_data(data: Any) -> str:
    """The data as an error names it: a path or URL, or the paths of a list."""
    return ", ".join(str(d) for d in ([data] if isinstance(data, str | Path) else data))
