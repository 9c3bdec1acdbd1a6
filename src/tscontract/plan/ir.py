"""The IR every engine executes: a :class:`Check` per contract clause, gathered in a :class:`CheckPlan`.

The plan knows the contract and the catalog, nothing about engines or input formats. Row checks
carry a sqlglot predicate where the contract supplies one (invariants, constraints); checks whose SQL
depends on how the data arrived (type, UTC rule, precision) carry parameters the engine compiles
against the input's physical schema. ``plan/builders.py`` makes the checks of each contract section;
``plan/checks.py`` (``build_plan``) puts them in order.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from tscontract.contract.catalog import Catalog
from tscontract.contract.model import Contract
from tscontract.contract.trees import TreeField
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import PARAMS, Params

if TYPE_CHECKING:
    import sqlglot.expressions as exp

P = TypeVar("P", bound=Params)

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


def _required(cls: type[Params]) -> bool:
    return any(f.default is MISSING and f.default_factory is MISSING for f in fields(cls))


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
    # built when read (contract/trees.py): an engine that keeps each clause's SQL reads only its key
    predicate: TreeField[exp.Expression | None] = TreeField(optional=True)  # noqa: RUF009 (a descriptor: one per class)
    params: Params = field(default_factory=Params)

    def __post_init__(self) -> None:
        kind = CheckKind(self.kind)  # a kind CheckKind does not name raises
        object.__setattr__(self, "kind", kind)
        expected = PARAMS[kind]
        if type(self.params) is Params and expected is not Params and not _required(expected):
            object.__setattr__(self, "params", expected())  # a kind whose parameters all have defaults
        if type(self.params) is not expected:
            raise TypeError(f"a {kind} check takes {expected.__name__}, not {type(self.params).__name__}")

    def params_of(self, cls: type[P]) -> P:
        """The parameters as the class its kind takes (``check.params_of(StepParams).series``)."""
        if not isinstance(self.params, cls):
            raise TypeError(f"check {self.id} ({self.kind}) has {type(self.params).__name__}, not {cls.__name__}")
        return self.params


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
        return any(c.params.needs_catalog for c in self.checks)
