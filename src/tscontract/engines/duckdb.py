"""The embedded engine: a CheckPlan executed on DuckDB (the passes are engines/run/).

The connection's set-up lives in engines/connection.py (its names stay importable from here), the
validation run in engines/run/, the profile in engines/profile.py (imported where a profile is made).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import duckdb

from tscontract.engines.base import Coverage, Progress, SharedRun
from tscontract.engines.connection import MEMORY_LIMIT_ENV, connect, memory_limit, out_of_memory
from tscontract.engines.inputs.sources import Source, open_source, reading_errors
from tscontract.engines.run import HANDLERS, ValidationRun
from tscontract.errors import InputError
from tscontract.plan.checks import CheckPlan
from tscontract.plan.result import ValidationReport

__all__ = [
    "MEMORY_LIMIT_ENV",
    "Coverage",
    "DuckDBEngine",
    "ValidationRun",
    "connect",
    "memory_limit",
    "out_of_memory",
]


class DuckDBEngine(SharedRun):
    """Executes a :class:`CheckPlan` on an embedded DuckDB connection.

    ``mapping`` (a :class:`tscontract.engines.inputs.mapping.Mapping`): the data is raw (a vendor's file),
    converted exactly as ``ingest --mapping`` converts it, and the report says what the conversion did.
    """

    name = "duckdb"
    HANDLERS = HANDLERS  # the validation run judges every kind (engines/run/)
    OPTIONS = ("mapping",)

    def __init__(self, mapping: Any = None) -> None:
        self.mapping = mapping
        self.conversion: Any = None

    def connect(self, data: Any, progress: Progress) -> duckdb.DuckDBPyConnection:
        return connect()

    def open(self, con: duckdb.DuckDBPyConnection, data: Any, plan: CheckPlan) -> Source:
        if self.mapping is None:
            return open_source(con, data)
        from tscontract.engines.inputs.staging import stage_source

        source, self.conversion = stage_source(con, data, plan.contract, plan.catalog, self.mapping)
        return source

    def execute(self, con: Any, plan: CheckPlan, source: Source, **run: Any) -> ValidationReport:
        now, examples, progress, coverage = run["now"], run["examples"], run["progress"], run["coverage"]
        report = ValidationRun(plan, source, now, examples, progress, con=con, coverage=coverage).run()
        if self.conversion is not None:
            report.conversion = self.conversion.to_json()
        return report

    def reading(self, data: Any) -> AbstractContextManager[object]:
        return reading_errors(data)  # a corrupt Parquet page met by a check: an input error

    def refused(self, exc: Exception, data: Any) -> InputError | None:
        return out_of_memory(exc) if isinstance(exc, duckdb.OutOfMemoryException) else None
