"""The parameters of each check kind, typed: ``PARAMS`` names the one class a kind's ``Check.params`` is.

A check carries what its engine or export needs beyond its predicate and columns: the declared type
of a ``type`` check, the cadence of a ``cadence`` check, the query of a ``sql_check``. Each kind has
one frozen class here, so a builder cannot pass a parameter the kind does not take (``TypeError``),
nor forget one it needs, and a reader gets typed fields rather than strings into a mapping
(``check.params_of(StepParams).series``). Three parameters are asked of every check whatever its kind
(a clause reading the catalog, the share of rows it tolerates failing): ``Params`` answers them for
the kinds that never have them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tscontract.contract.clauses import Cadence, CatalogRef, Share, TimezoneRule
from tscontract.contract.model import Completeness, Duplicates, Freshness, SqlCheck, Step
from tscontract.contract.types import DataType, TimeUnit
from tscontract.plan.kinds import CheckKind

if TYPE_CHECKING:
    import sqlglot.expressions as exp


@dataclass(frozen=True)
class Params:
    """A kind without parameters; the base answers the questions asked of every check."""

    @property
    def needs_catalog(self) -> bool:
        """The check reads the series catalog (it cannot be judged without one)."""
        return False

    @property
    def catalog(self) -> CatalogRef | None:
        """The catalog attribute a row clause compares with (``{catalog.max}``)."""
        return None

    @property
    def max_failing(self) -> Share | None:
        """The share of rows the check tolerates failing (``max_failing: "0.1%"``)."""
        return None


@dataclass(frozen=True)
class TypeParams(Params):
    dtype: DataType  # the declared type, compiled against the input's physical type


@dataclass(frozen=True)
class PrecisionParams(Params):
    unit: TimeUnit  # no finer fraction of a second than this


@dataclass(frozen=True)
class ClauseParams(Params):
    """A written row clause (an invariant or a field's constraint)."""

    catalog_ref: CatalogRef | None = None
    tolerated: Share | None = None

    @property
    def needs_catalog(self) -> bool:
        return self.catalog_ref is not None

    @property
    def catalog(self) -> CatalogRef | None:
        return self.catalog_ref

    @property
    def max_failing(self) -> Share | None:
        return self.tolerated


@dataclass(frozen=True)
class UniqueParams(Params):
    tolerated: Share | None = None

    @property
    def max_failing(self) -> Share | None:
        return self.tolerated


@dataclass(frozen=True)
class KeyParams(Params):
    duplicates: Duplicates | None = None  # the policy that keeps one of a key's duplicates, if any


@dataclass(frozen=True)
class PatternParams(Params):
    pattern: str  # the series id's naming scheme, a full-match regular expression


@dataclass(frozen=True)
class CatalogParams(Params):
    """A check of the rows against the catalog (series listed, calibration in force)."""

    @property
    def needs_catalog(self) -> bool:
        return True


@dataclass(frozen=True)
class CadencedParams(Params):
    """A check of the points' spacing: the cadence, or the sessions it runs in."""

    cadence: Cadence


@dataclass(frozen=True)
class CadenceParams(CadencedParams):
    @property
    def needs_catalog(self) -> bool:
        return self.cadence.source == "catalog"


@dataclass(frozen=True)
class SessionParams(CadencedParams):
    timezone: TimezoneRule | None


@dataclass(frozen=True)
class CompletenessParams(Params):
    completeness: Completeness


@dataclass(frozen=True)
class FreshnessParams(Params):
    freshness: Freshness
    all_series: bool  # the catalog's series that never arrived count as stale


@dataclass(frozen=True)
class SqlCheckParams(Params):
    query: exp.Select  # the rule's query, parsed and allow-listed
    rule: SqlCheck


@dataclass(frozen=True)
class StepParams(Params):
    field: str
    series: tuple[str, ...]
    step: Step
    revision: str | None


@dataclass(frozen=True)
class BoundsParams(Params):
    field: str  # the field whose history-derived bounds apply


PARAMS: dict[CheckKind, type[Params]] = {
    CheckKind.WELL_FORMED: Params,
    CheckKind.REQUIRED_COLUMNS: Params,
    CheckKind.UNKNOWN_COLUMNS: Params,
    CheckKind.TYPE: TypeParams,
    CheckKind.NOT_NULL: Params,
    CheckKind.FIXED_VALUE: Params,
    CheckKind.UTC_INSTANT: Params,
    CheckKind.TIME_PRECISION: PrecisionParams,
    CheckKind.INVARIANT: ClauseParams,
    CheckKind.CONSTRAINT: ClauseParams,
    CheckKind.SERIES_PATTERN: PatternParams,
    CheckKind.CATALOG_SERIES: CatalogParams,
    CheckKind.CALIBRATION_IN_FORCE: CatalogParams,
    CheckKind.PLAUSIBILITY: BoundsParams,
    CheckKind.UNIQUE_KEY: KeyParams,
    CheckKind.UNIQUE: UniqueParams,
    CheckKind.CADENCE: CadenceParams,
    CheckKind.SESSION: SessionParams,
    CheckKind.STEP: StepParams,
    CheckKind.COMPLETENESS: CompletenessParams,
    CheckKind.FRESHNESS: FreshnessParams,
    CheckKind.ROW_COUNT: Params,
    CheckKind.SCALE_SHIFT: BoundsParams,
    CheckKind.SQL_CHECK: SqlCheckParams,
}
