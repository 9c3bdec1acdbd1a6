"""The CheckPlan: one :class:`Check` per contract clause, the IR every engine executes.

The plan knows the contract and the catalog, nothing about engines or input
formats. Row checks carry a sqlglot predicate where the contract supplies one
(invariants, constraints); checks whose SQL depends on how the data arrived
(type, UTC rule, precision) carry parameters the engine compiles against the
input's physical schema.

Check ids are stable across runs and versions of tscontract:
``schema.columns``, ``schema.strict``, ``source.rows``, ``field.<name>.type``,
``field.<name>.nullable``, ``field.<name>.value``, ``field.<name>.constraint``,
``field.<name>.step``, ``provenance.<name>``, ``time.timezone``, ``time.precision``, ``time.cadence``,
``time.session``, ``key.unique``, ``series.pattern``, ``invariants[<i>]``, ``catalog.series``,
``catalog.calibration``, ``completeness``, ``freshness``,
``plausibility.<field>``, ``plausibility.<field>.scale``, ``field.<name>.unique``,
``batch.row_count``, ``sql_checks.<name>``.
"""

from __future__ import annotations

from typing import Any

from tscontract.contract.catalog import Catalog, declared_calendars, other_contract
from tscontract.contract.model import Contract
from tscontract.errors import InputError
from tscontract.plan import builders
from tscontract.plan.ir import SECTIONS, Check, CheckPlan, Scope, Severity

__all__ = ["SECTIONS", "Check", "CheckPlan", "Scope", "Severity", "build_plan"]


def build_plan(
    contract: Contract, catalog: Catalog | None = None, bounds: Any = None, *, all_series: bool = False
) -> CheckPlan:
    """Compile ``contract`` into a :class:`CheckPlan`; a catalog of another contract is refused (lint's TS160).

    ``all_series``: every series of the catalog is expected, so one that never arrived fails freshness
    (a store holds all the data; a batch may hold some series only)."""
    wrong = other_contract(catalog, contract.contract) if catalog is not None else None
    if wrong is not None:
        raise InputError(f"{contract.path or 'contract'}: {wrong} (lint: TS160); give the catalog of this contract")
    declared_calendars(contract, catalog)  # one calendar declared differently in contract and catalog: refused
    checks = builders.schema_checks(contract)
    checks += builders.field_checks(contract)
    checks += builders.time_checks(contract)
    checks += builders.key_checks(contract)
    checks += builders.catalog_checks(contract, catalog, checks)
    checks += builders.window_checks(contract, catalog, all_series)
    checks += builders.batch_checks(contract)
    if bounds is not None:
        checks += builders.bounds_checks(contract, bounds)
    return CheckPlan(contract=contract, catalog=catalog, checks=tuple(checks), bounds=bounds)
