"""Batch checks: the batch's row count, a contract's SQL checks, and the typical magnitude against history."""

from __future__ import annotations

from decimal import Decimal

from tscontract.engines.base import TYPED_VIEW
from tscontract.engines.run.state import RunState
from tscontract.errors import InputError
from tscontract.plan.checks import Check
from tscontract.plan.params import BoundsParams, SqlCheckParams
from tscontract.shown import engine_message
from tscontract.sql.columns import ident, json_value
from tscontract.typemap.sql import sql_type


class BatchChecks(RunState):
    """Checks of the whole batch, after the row and window passes have counted its rows."""

    def row_count_check(self, check: Check) -> None:
        bounds = self.contract.row_count
        assert bounds is not None
        low = bounds.min if bounds.min is not None else 0
        if low <= self.rows and (bounds.max is None or self.rows <= bounds.max):
            self.result(check, "passed")
            return
        limit = f"at least {bounds.min}" if self.rows < low else f"at most {bounds.max}"
        self.result(check, "failed", 0, [{"rows": self.rows}], f"the batch has {self.rows} rows; {limit} expected")

    def sql_check(self, check: Check) -> None:
        """The contract's query over the typed view; its one value must meet the check's expectation."""
        from tscontract.contract.sql_checks import bound_to  # sqlglot: only for a contract's SQL checks

        rule = check.params_of(SqlCheckParams).rule
        self.progress(f"SQL check {rule.name}")
        try:
            found = self.untrusted(bound_to(check.params_of(SqlCheckParams).query, TYPED_VIEW))
        except InputError:
            raise
        except Exception as exc:  # the engine refused the query (unknown column, type): the check cannot run
            first = engine_message(exc)
            self.result(check, "error", message=f"the query failed: {first}")
            return
        if len(found) != 1 or len(found[0]) != 1:
            self.result(check, "error", message=f"the query returned {len(found)} row(s); it must return one value")
            return
        value = found[0][0]
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            self.result(check, "error", message=f"the query returned {value!r}, not a number")
            return
        number = Decimal(str(value))
        if rule.holds(number):
            self.result(check, "passed", examples=[{"value": json_value(value)}])
            return
        message = f"the query returned {json_value(value)}; {rule.expectation()}"
        self.result(check, "failed", 0, [{"value": json_value(value)}], message)

    def scale_check(self, check: Check) -> None:
        """Typical magnitude per series against history: a unit switch moves it by orders of magnitude.

        The typical magnitude is the discrete median of ``abs(value)``, as in ``profile``: a value the
        series really took, in the field's own type.
        """
        name = check.params_of(BoundsParams).field
        if not self.columns[name].present or not self.series or not self.columns[self.series].present:
            self.result(check, "error", message="field or series column missing")
            return
        factor = self.plan.bounds.scale_factor
        series = ident(self.series)
        rows = self.fetch(
            f"SELECT {series}, now_mabs, hist_mabs, now_mabs / hist_mabs AS ratio, n FROM ("
            f"SELECT {series}, CAST(quantile_disc(abs({ident(name)}), 0.5) AS {sql_type(self.columns[name].dtype)}) "
            f"AS now_mabs, any_value({ident(f'__b_{name}_mabs')}) "
            f"AS hist_mabs, count(*) AS n FROM {TYPED_VIEW} GROUP BY 1) WHERE hist_mabs > 0 AND now_mabs IS NOT NULL "
            f"AND (now_mabs > hist_mabs * {factor} OR now_mabs * {factor} < hist_mabs) ORDER BY 1"
        )
        if not rows:
            self.result(check, "passed")
            return
        examples = [
            {
                self.series: r[0],
                "median_abs": json_value(r[1]),
                "history_median_abs": json_value(r[2]),
                "ratio": float(r[3]),
            }
            for r in rows[: self.limit]
        ]
        self.result(
            check,
            "failed",
            int(sum(r[4] for r in rows)),
            examples,
            f"typical {name} moved by more than {factor}x against history in {len(rows)} series: "
            "a unit or scale change?",
        )
