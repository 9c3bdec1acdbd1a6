"""The embedded engine: a CheckPlan executed on DuckDB (the passes are engines/run/).

The connection's set-up lives in engines/connection.py, the validation run in engines/run/, the
profile in engines/profile.py; their names stay importable from here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from tscontract.engines.base import Coverage, Progress
from tscontract.engines.connection import MEMORY_LIMIT_ENV, connect, memory_limit, out_of_memory
from tscontract.engines.inputs.sources import reading_errors
from tscontract.engines.profile import measurement_fields, profile
from tscontract.engines.run import ValidationRun
from tscontract.plan.checks import CheckPlan
from tscontract.plan.result import ValidationReport

__all__ = [
    "MEMORY_LIMIT_ENV",
    "Coverage",
    "DuckDBEngine",
    "ValidationRun",
    "connect",
    "measurement_fields",
    "memory_limit",
    "out_of_memory",
    "profile",
    "validate_mapped",
]


def validate_mapped(
    plan: CheckPlan,
    data: Any,
    mapping: Any,
    *,
    now: datetime | None = None,
    examples: int = 5,
    progress: Progress | None = None,
    coverage: Coverage | None = None,
) -> ValidationReport:
    """Raw ``data`` converted by ``mapping`` exactly as the ingest gate converts it, then validated."""
    from tscontract.engines.inputs.staging import stage_source

    con = connect()
    try:
        source, conversion = stage_source(con, data, plan.contract, plan.catalog, mapping)
        with reading_errors(data):
            report = ValidationRun(plan, source, now, examples, progress, con=con, coverage=coverage).run()
    finally:
        con.close()
    report.conversion = conversion.to_json()
    return report


class DuckDBEngine:
    """Executes a :class:`CheckPlan` on an embedded DuckDB connection."""

    name = "duckdb"

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
        try:
            with reading_errors(data):  # a corrupt Parquet page met by a check: an input error
                return ValidationRun(plan, data, now, examples, progress, coverage=coverage).run()
        except duckdb.OutOfMemoryException as exc:
            raise out_of_memory(exc) from None
