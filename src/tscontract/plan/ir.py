"""The IR every engine executes: a :class:`Check` per contract clause, gathered in a :class:`CheckPlan`.

The plan knows the contract and the catalog, nothing about engines or input formats. Row checks
carry a sqlglot predicate where the contract supplies one (invariants, constraints); checks whose SQL
depends on how the data arrived (type, UTC rule, precision) carry parameters the engine compiles
against the input's physical schema. ``plan/builders.py`` makes the checks of each contract section;
``plan/checks.py`` (``build_plan``) puts them in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import sqlglot.expressions as exp

from tscontract.contract.catalog import Catalog
from tscontract.contract.model import Contract
from tscontract.plan.kinds import CheckKind

Scope = Literal["schema", "row", "window", "batch"]
Severity = Literal["error", "warning"]
SECTIONS = (
    "schema",
    "fields",
    "time",
    "key",
    "invariants",
    "catalog",
    "provenance",
    "completeness",
    "freshness",
    "plausibility",
    "batch",
    "sql_checks",
)


@dataclass(frozen=True)
class Check:
    """One executable clause. ``clause`` is the contract's text exactly as written."""

    id: str
    kind: CheckKind
    section: str
    clause: str
    source: str
    scope: Scope
    columns: tuple[str, ...] = ()
    severity: Severity = "error"
    predicate: exp.Expression | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", CheckKind(self.kind))  # a kind CheckKind does not name raises


@dataclass(frozen=True)
class CheckPlan:
    """Every check of a contract (and catalog and history bounds) in a stable order."""

    contract: Contract
    catalog: Catalog | None
    checks: tuple[Check, ...]
    bounds: Any = None

    def of_scope(self, scope: Scope) -> list[Check]:
        return [c for c in self.checks if c.scope == scope]

    def by_id(self, check_id: str) -> Check:
        return next(c for c in self.checks if c.id == check_id)

    @property
    def uses_catalog(self) -> bool:
        return any(c.params.get("needs_catalog") for c in self.checks)
