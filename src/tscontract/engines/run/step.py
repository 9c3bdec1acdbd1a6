"""``fields.<name>.step``: how far a point may jump from its neighbours in its own series.

The rule is stated on :class:`tscontract.contract.model.Step`, its SQL in :mod:`tscontract.sql.step`.
Every failing row goes to ``__tsc_step_<i>`` (the ingest gate rejects those rows); the first ones
are the examples.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tscontract.engines.base import TYPED_VIEW, Run
from tscontract.plan.checks import Check
from tscontract.plan.params import StepParams
from tscontract.sql.columns import json_value
from tscontract.sql.step import StepSql

NUMBERED = "__tsc_typed_numbered"


def step_table(run: Run, check: Check) -> str:
    return f"__tsc_step_{[c.id for c in run.plan.checks].index(check.id)}"


class StepCheck:
    """One step check on the validation run: the failing rows in a table, the first ones as examples."""

    def __init__(self, run: Run, check: Check) -> None:
        self.run = run
        self.check = check
        self.step = check.params_of(StepParams).step
        self.field: str = check.params_of(StepParams).field
        self.series: tuple[str, ...] = check.params_of(StepParams).series
        self.time = run.contract.time.column

    def execute(self) -> None:
        run, check = self.run, self.check
        if run.missing(check):
            run.result(check, "error", message=f"column(s) {', '.join(run.missing(check))} missing")
            return
        run.progress(f"steps of {self.field}")
        if not run.source.has_row_number:  # failing rows are named: number the input as the examples do
            run.create_typed_view(NUMBERED, numbered=True)
        revision = check.params_of(StepParams).revision
        if revision is not None and not (revision in run.columns and run.columns[revision].present):
            check = replace(check, params=replace(check.params_of(StepParams), revision=None))
        table = step_table(run, check)
        run.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {StepSql(check, self.time, self.typed()).failing()}")
        total = int(run.fetch(f"SELECT count(*) FROM {table}")[0][0])
        if not total:
            run.result(check, "passed")
            return
        rows = run.fetch(f"SELECT * FROM {table} ORDER BY __row LIMIT {run.limit}")
        examples = [self.example(r) for r in rows]
        rule = f"more than {self.step.max_abs}" if self.step.max_abs is not None else "too far from its neighbours"
        run.judged(check, total, examples, f"{total} point(s) of {self.field} jump {rule}")

    def example(self, r: tuple[Any, ...]) -> dict[str, Any]:
        names = [*self.series, self.time, self.field]
        example: dict[str, Any] = {"row": int(r[0])}
        example.update({n: json_value(v) for n, v in zip(names, r[1 : 1 + len(names)], strict=True)})
        extra = ("previous", "previous_row") if self.step.max_abs is not None else ("median", "mad", "neighbours")
        example.update({n: json_value(v) for n, v in zip(extra, r[1 + len(names) :], strict=True)})
        return example

    def typed(self) -> str:
        return TYPED_VIEW if self.run.source.has_row_number else NUMBERED
