"""Contract (+ catalog, + history bounds) -> CheckPlan."""

from tscontract.plan.checks import Check, CheckPlan, build_plan

__all__ = ["Check", "CheckPlan", "build_plan"]
