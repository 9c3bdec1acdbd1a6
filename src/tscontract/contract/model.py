"""The contract model: one typed home for every section of a series contract.

Sections follow the seed's "What a Series Contract Contains" table: identity,
fields, units and dimensions, time, keys and revisions, ranges and invariants,
revision policy, completeness and freshness, evolution and provenance. Every
model is frozen and forbids unknown keys: a clause tscontract does not know is
an error, never ignored. Informational text lives only under ``note`` and
``description``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, field_validator, model_validator

from tscontract.contract.calendar_time import window_origin
from tscontract.contract.clauses import (
    Cadence,
    RowClause,
    Share,
    TimezoneRule,
    parse_cadence,
    parse_share,
    parse_timezone,
)
from tscontract.contract.durations import Duration, parse_duration
from tscontract.contract.odcs_carried import carried_section
from tscontract.contract.types import TIME_UNITS, DataType, TimeUnit, parse_type
from tscontract.contract.weekly import Calendars
from tscontract.contract.zones import zone_name

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FROM_CATALOG = "per series from catalog"
PER_SERIES = "per series"
STANDARD_PROVENANCE = ("source_id", "ingest_run_id", "transform_version", "revision")
COMPATIBILITY_MODES = (
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
)
GAP_TYPES = ("outside_session", "exchange_holiday")


def _text_parser(parse: Any, what: str) -> Any:
    def validate(value: object) -> object:
        if isinstance(value, str):
            return parse(value)
        if value is not None and not isinstance(value, str | int | Decimal | bool | list | dict):
            return value  # already parsed (model_copy, programmatic construction)
        raise ValueError(f"{what} must be written as text, got {type(value).__name__}")

    return PlainValidator(validate)


def _invariant(text: str) -> RowClause:
    from tscontract.contract.row_parser import parse_invariant  # lark: only where a clause is read

    return parse_invariant(text)


def _duration_or_number(value: object) -> Duration:
    if isinstance(value, Duration):
        return value
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError(f"a duration is written with its unit, e.g. '15m' or '5 trading days'; got {value!r}")


def _not_local(value: Duration) -> Duration:
    if value.in_local_days:
        raise ValueError("local days measure completeness windows only; use hours, days or trading days")
    return value


def _fixed_or_trading(value: Duration | None) -> Duration | None:
    if value is not None and value.in_months:
        raise ValueError("a revision window is fixed time or trading days (months are not counted here yet)")
    return value and _not_local(value)


TypeExpr = Annotated[DataType, _text_parser(parse_type, "a type")]
CadenceClause = Annotated[Cadence, _text_parser(parse_cadence, "a cadence")]
TimezoneClause = Annotated[TimezoneRule, _text_parser(parse_timezone, "a timezone rule")]
DurationText = Annotated[Duration, PlainValidator(_duration_or_number)]
InvariantClause = Annotated[RowClause, _text_parser(_invariant, "an invariant")]
ShareText = Annotated[Share, PlainValidator(parse_share)]
Severity = Literal["error", "warning"]


def _str_tuple(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("expected a name or a list of names")


NameList = Annotated[tuple[str, ...], PlainValidator(_str_tuple)]


def _number(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ValueError(f"expected a number, got {value!r}")
    return Decimal(value)


Number = Annotated[Decimal, PlainValidator(_number)]


def unit_as_text(value: object) -> object:
    """``unit: 1`` (a pure number) is read by YAML as the integer 1: it is the unit written ``1``."""
    return "1" if type(value) is int and value == 1 else value


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, arbitrary_types_allowed=True, defer_build=True)


class UnitDeclaration(_Section):
    """``units: {lots: {definition: 100 * base_units_per_venue_contract}}``."""

    dimension: str | None = None
    definition: str | None = None
    description: str | None = None
    note: str | None = None


class SeriesIdentity(_Section):
    """How series are identified: the column and its naming scheme."""

    column: str
    scheme: str | None = None
    pattern: str | None = None
    description: str | None = None
    note: str | None = None

    @field_validator("pattern")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regular expression: {exc}") from None
        return value


class Deprecation(_Section):
    since: str
    removal_after: str | None = None
    replacement: str | None = None
    note: str | None = None


class Unique(_Section):
    """``unique: {severity: warning, max_failing: "1%"}``; ``unique: true`` is this at error severity."""

    severity: Severity = "error"
    max_failing: ShareText | None = None
    description: str | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _written(cls, value: object) -> object:
        if not value:
            raise ValueError("write unique: true, or unique: {severity: error|warning, max_failing: '0.1%'}")
        return value


class Step(_Section):
    """``step: {max_abs: 10}`` or ``step: {max_mad: 6, window: 11}``: how far one point may jump within its series.

    Points of a series (the key without the time column and ``revision``; only the latest revision of a
    point counts) are ordered by time; a null value is skipped (it neither fails nor breaks the chain).
    ``max_abs``: a point fails when ``|x - previous| > max_abs`` (the field's unit). ``max_mad``: a point
    fails when ``|x - m| > max_mad * max(MAD, min_mad, 1% of |m|)``, ``m`` and MAD the median and median
    absolute deviation of its up to ``window - 1`` neighbours (half before, half after, the point itself
    excluded); judged with at least ``(window - 1) / 2`` neighbours. ``max_gap``: a previous point or
    neighbour further away in time is not used.
    """

    max_abs: Number | None = None
    max_mad: Number | None = None
    window: int | None = None
    min_mad: Number | None = None
    max_gap: DurationText | None = None
    severity: Severity = "error"
    description: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _one_rule(self) -> Step:
        if (self.max_abs is None) == (self.max_mad is None):
            raise ValueError("a step states exactly one of max_abs (change from the previous point) or max_mad")
        if any(v is not None and v <= 0 for v in (self.max_abs, self.max_mad)):
            raise ValueError("max_abs and max_mad are above 0")
        if self.min_mad is not None and self.min_mad < 0:
            raise ValueError("min_mad is not negative")
        if self.max_abs is not None and (self.window is not None or self.min_mad is not None):
            raise ValueError("window and min_mad belong to max_mad; max_abs compares with the previous point")
        if self.max_mad is not None and (self.window is None or self.window < 3 or self.window % 2 == 0):
            raise ValueError("max_mad needs an odd window of at least 3 points (the point and its neighbours)")
        if self.max_gap is not None and not self.max_gap.fixed:
            raise ValueError("max_gap is a fixed duration such as '3h'")
        return self

    def as_text(self) -> str:
        parts = [
            f"{k}: {getattr(getattr(self, k), 'text', getattr(self, k))}"
            for k in ("max_abs", "max_mad", "window", "min_mad", "max_gap")
            if getattr(self, k) is not None
        ]
        return "step: {" + ", ".join(parts) + "}"

    @property
    def half_window(self) -> int:
        """The neighbours on each side of a point under ``max_mad`` (``(window - 1) / 2``); 0 under ``max_abs``."""
        return (self.window - 1) // 2 if self.window is not None else 0


class FieldSpec(_Section):
    """One column: type, nullability, unit and dimension, fixed value, constraint."""

    type: TypeExpr
    nullable: bool | None = None
    unit: str | None = None
    dimension: str | None = None
    value: Any = None
    default: Any = None
    constraint: str | None = None
    unique: bool | Unique | None = None
    step: Step | None = None
    # the value field this one says why is null (a sensor's "too low to read"): set => the value is null
    flag_of: str | None = None
    aliases: NameList = ()
    deprecated: Deprecation | None = None
    description: str | None = None
    note: str | None = None
    # set by the loader, not written in contracts
    name: str = Field(default="", exclude=True)
    implied: bool = Field(default=False, exclude=True)
    has_value: bool = Field(default=False, exclude=True)

    _unit_one = field_validator("unit", mode="before")(classmethod(lambda cls, value: unit_as_text(value)))

    @property
    def unique_rule(self) -> Unique | None:
        """``unique: true`` or its options; None when values may repeat."""
        return Unique(severity="error") if self.unique is True else self.unique or None

    @property
    def unit_from_catalog(self) -> bool:
        return self.unit == FROM_CATALOG

    @property
    def dimension_from_catalog(self) -> bool:
        return self.dimension == PER_SERIES


class TimeSpec(_Section):
    """The time column, its precision, the timezone rule and the cadence."""

    column: str
    precision: TimeUnit | None = None
    timezone: TimezoneClause | None = None
    cadence: CadenceClause | None = None
    ingest_column: str | None = None
    calendar: str | None = None
    zone: str | None = None  # the zone of calendar time (months, local days) where the catalog gives none
    description: str | None = None
    note: str | None = None

    _zone = field_validator("zone")(classmethod(lambda cls, value: value and zone_name(value)))

    @field_validator("precision", mode="before")
    @classmethod
    def _precision(cls, value: object) -> object:
        if value not in TIME_UNITS:
            raise ValueError(f"precision must be one of {', '.join(TIME_UNITS)}; got {value!r}")
        return value


class RevisionPolicy(_Section):
    """Whether points may be restated, by whom, within what window, and how consumers hear."""

    allowed: bool
    window: DurationText | None = None
    reasons: NameList = ()

    _window = field_validator("window")(classmethod(lambda cls, value: _fixed_or_trading(value)))
    who: NameList = ()
    notification: str | None = None
    description: str | None = None
    note: str | None = None


class Invariant(_Section):
    """``{clause: "volume < 1e9", severity: warning}``; a plain string is the clause at error severity.

    A failing warning is reported (validate still exits 0, the gate publishes the row).
    """

    clause: InvariantClause
    severity: Severity = "error"
    max_failing: ShareText | None = None
    description: str | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _written(cls, value: object) -> object:
        if isinstance(value, str):
            return {"clause": value}
        if not isinstance(value, dict):
            raise ValueError("an invariant is a clause as text, or {clause: ..., severity: error|warning}")
        return value

    @model_validator(mode="after")
    def _one_share(self) -> Invariant:
        if self.max_failing is not None and self.clause.max_failing is not None:
            raise ValueError("max_failing is written twice: in the clause ('; at most ... of rows') and as max_failing")
        return self


class RowCount(_Section):
    """``row_count: {min: 1, max: 1000000}``: how many rows one batch has (both bounds inclusive)."""

    min: int | None = None
    max: int | None = None
    severity: Severity = "error"
    description: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _bounds(self) -> RowCount:
        if self.min is None and self.max is None:
            raise ValueError("row_count states min, max or both")
        if any(v is not None and v < 0 for v in (self.min, self.max)):
            raise ValueError("row counts are not negative")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"row_count min {self.min} is above max {self.max}")
        return self

    def as_text(self) -> str:
        parts = [f"{k}: {v}" for k, v in (("min", self.min), ("max", self.max)) if v is not None]
        return "row_count: " + ", ".join(parts)


class SqlCheck(_Section):
    """``{name, sql: "SELECT count(*) FROM {object} WHERE ...", must_be: 0}``: a query over the batch."""

    name: str
    sql: str
    must_be: Number | None = None
    must_be_less_than: Number | None = None
    must_be_greater_than: Number | None = None
    must_be_between: list[Number] | None = None
    severity: Severity = "error"
    description: str | None = None
    note: str | None = None

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not IDENTIFIER.match(value):
            raise ValueError(f"SQL check name {value!r} is not an identifier (letters, digits and '_')")
        return value

    @field_validator("sql")
    @classmethod
    def _query(cls, value: str) -> str:
        from tscontract.contract.sql_checks import sql_check_query  # sqlglot: only where a contract is read

        sql_check_query(value)
        return value

    @field_validator("must_be_between")
    @classmethod
    def _range(cls, value: list[Decimal] | None) -> list[Decimal] | None:
        if value is not None and (len(value) != 2 or value[0] > value[1]):
            raise ValueError("must_be_between is [low, high], low <= high (both inclusive)")
        return value

    @model_validator(mode="after")
    def _one_expectation(self) -> SqlCheck:
        stated = [k for k in self.EXPECTATIONS if getattr(self, k) is not None]
        if len(stated) != 1:
            raise ValueError(f"a SQL check states exactly one of {', '.join(self.EXPECTATIONS)}")
        return self

    EXPECTATIONS: ClassVar[tuple[str, ...]] = (
        "must_be",
        "must_be_less_than",
        "must_be_greater_than",
        "must_be_between",
    )

    def expectation(self) -> str:
        """``must_be: 0``, ``must_be_between: [1, 5]``: what the value must be, as written."""
        key = next(k for k in self.EXPECTATIONS if getattr(self, k) is not None)
        value = getattr(self, key)
        shown = f"[{value[0]}, {value[1]}]" if isinstance(value, list) else str(value)
        return f"{key}: {shown}"

    def holds(self, value: Decimal) -> bool:
        if self.must_be is not None:
            return value == self.must_be
        if self.must_be_less_than is not None:
            return value < self.must_be_less_than
        if self.must_be_greater_than is not None:
            return value > self.must_be_greater_than
        low, high = self.must_be_between or (value, value)
        return low <= value <= high


class Duplicates(_Section):
    """Rows of one batch that share the key: ``{keep: last, by: vendor_seq}``.

    ``keep: all`` (the default, as without the section) rejects every copy. ``keep: first`` /
    ``keep: last`` keeps the copy with the lowest / highest ``by`` and rejects the others as
    superseded; copies whose ``by`` is null or tied cannot be ordered, and all of them fail.
    """

    keep: Literal["all", "first", "last"] = "all"
    by: str | None = None
    description: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Duplicates:
        if self.keep != "all" and self.by is None:
            raise ValueError(f"keep: {self.keep} needs 'by': the column that orders the copies (a vendor sequence)")
        if self.keep == "all" and self.by is not None:
            raise ValueError("'by' orders the copies to keep one of them; with keep: all every copy is rejected")
        return self

    def as_text(self) -> str:
        return "duplicates: keep all" if self.keep == "all" else f"duplicates: keep {self.keep} by {self.by}"

    @property
    def keeps_one(self) -> bool:
        return self.keep != "all"


class Completeness(_Section):
    """Expected count per window, the gap types that are allowed, where windows start.

    ``window: "4 weeks; aligned to Monday"`` is ``window: 4 weeks`` with ``aligned_to: Monday``.
    """

    window: DurationText
    expected_count: int | Literal["per cadence"] = "per cadence"
    min_ratio: Number = Decimal(1)
    allowed_gaps: list[Literal["outside_session", "exchange_holiday"]] = []
    aligned_to: str | None = None
    description: str | None = None
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _inline_alignment(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("window"), str) and ";" in data["window"]:
            window, _, option = data["window"].partition(";")
            found = re.fullmatch(r"\s*aligned\s+to\s+(\S+)\s*", option, re.IGNORECASE)
            if found is None:
                raise ValueError(f"window option {option.strip()!r}: write '; aligned to Monday' (or 2026-01-05)")
            if data.get("aligned_to") is not None:
                raise ValueError("the window's alignment is stated twice (inline and as aligned_to)")
            data = {**data, "window": window.strip(), "aligned_to": found[1]}
        return data

    @model_validator(mode="after")
    def _alignment(self) -> Completeness:
        self.origin  # noqa: B018 - refuses an alignment the window cannot take
        return self

    @property
    def origin(self) -> date | int | None:
        """Where windows start (:func:`window_origin`); None: the default alignment."""
        if self.aligned_to is None:
            return None
        window = self.window
        return window_origin(self.aligned_to, months=window.in_months, trading=window.on_trading_calendar)

    @field_validator("allowed_gaps", mode="before")
    @classmethod
    def _gaps(cls, value: object) -> object:
        if isinstance(value, list):
            unknown = [g for g in value if g not in GAP_TYPES]
            if unknown:
                raise ValueError(f"unknown gap type(s) {unknown}; known: {', '.join(GAP_TYPES)}")
        return value

    @field_validator("min_ratio")
    @classmethod
    def _ratio(cls, value: Decimal) -> Decimal:
        if not Decimal(0) < value <= Decimal(1):
            raise ValueError("min_ratio must be in (0, 1]")
        return value


class Freshness(_Section):
    """Maximum age of the newest point at the consumer boundary.

    ``clock: wall`` (the default) counts every hour; ``clock: session`` counts only time in the
    series' exchange sessions, so market data is not stale at night, on weekends and holidays.
    ``max_age: N trading days`` counts sessions that closed since the newest point's session.
    """

    max_age: DurationText
    column: str | None = None
    clock: Literal["wall", "session"] | None = None
    description: str | None = None
    note: str | None = None

    _max_age = field_validator("max_age")(classmethod(lambda cls, value: _not_local(value)))

    @model_validator(mode="after")
    def _clock(self) -> Freshness:
        if self.max_age.on_trading_calendar and self.clock == "wall":
            raise ValueError("max_age counts trading days, which pass on the session clock; drop 'clock: wall'")
        if self.max_age.in_months and self.clock == "session":
            raise ValueError("max_age in months counts calendar months (wall clock); drop 'clock: session'")
        return self

    @property
    def on_session_clock(self) -> bool:
        return self.clock == "session" or self.max_age.on_trading_calendar


class Evolution(_Section):
    """Which changes are compatible and how long deprecations are announced."""

    compatibility: Literal[
        "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE"
    ] = "FULL_TRANSITIVE"
    deprecation_notice: DurationText | None = None
    compatibility_reason: str | None = None
    description: str | None = None
    note: str | None = None


OdcsCarried = Annotated[dict[str, Any], PlainValidator(carried_section)]  # contract/odcs_carried.py


class Contract(_Section):
    """A series contract, as parsed and checked for internal consistency."""

    contract: str
    version: str
    owner: str | None = None
    source: str | None = None
    description: str | None = None
    note: str | None = None
    series: SeriesIdentity | None = None
    key: NameList
    time: TimeSpec
    fields: dict[str, FieldSpec]
    units: dict[str, UnitDeclaration] = {}
    if TYPE_CHECKING:
        # what a read contract holds: ``_clauses`` turns each Invariant into its RowClause with its severity
        invariants: list[RowClause] = []
    else:
        invariants: list[Invariant] = []  # read as RowClause, each with its severity (see ``_clauses``)
    revision_policy: RevisionPolicy | None = None
    duplicates: Duplicates | None = None
    row_count: RowCount | None = None
    sql_checks: list[SqlCheck] = []
    completeness: Completeness | None = None
    freshness: Freshness | None = None
    evolution: Evolution | None = None
    provenance_required: NameList = ()
    calendars: Calendars = {}  # sessions as local weekly hours, by name (contract/weekly.py)
    # what the ODCS document a contract was imported from states with no clause, as written (its id, status,
    # object and physical names, servers, SLA, roles, support ...): ``export odcs`` writes it back
    odcs: OdcsCarried | None = None
    # set by the loader
    path: str = Field(default="", exclude=True)
    positions: Any = Field(default=None, exclude=True)  # PositionIndex of the file
    constraints: dict[str, InvariantClause] = Field(default_factory=dict, exclude=True)

    @field_validator("invariants")
    @classmethod
    def _clauses(cls, value: list[Invariant]) -> list[RowClause]:
        # the share as max_failing, or written in the clause ('; at most 0.1% of rows'), never both
        return [
            replace(i.clause, severity=i.severity, max_failing=i.max_failing or i.clause.max_failing) for i in value
        ]

    @field_validator("sql_checks")
    @classmethod
    def _sql_names(cls, value: list[SqlCheck]) -> list[SqlCheck]:
        names = [c.name for c in value]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"SQL check name(s) given twice: {', '.join(repeated)}")
        return value

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not SEMVER.match(value):
            raise ValueError(f"version {value!r} is not semantic versioning (MAJOR.MINOR.PATCH)")
        return value

    @field_validator("contract")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.match(r"^[A-Za-z][A-Za-z0-9_.-]*$", value):
            raise ValueError(f"contract name {value!r} must start with a letter and use letters, digits, '_', '.', '-'")
        return value

    @field_validator("fields")
    @classmethod
    def _field_names(cls, value: dict[str, FieldSpec]) -> dict[str, FieldSpec]:
        if not value:
            raise ValueError("a contract declares at least one field")
        return value

    # ------------------------------------------------------------ derived views

    @property
    def columns(self) -> dict[str, FieldSpec]:
        """Declared fields plus provenance columns implied by ``provenance_required``."""
        return self.fields  # the loader adds implied provenance fields to ``fields``

    @property
    def declared_fields(self) -> dict[str, FieldSpec]:
        return {n: f for n, f in self.fields.items() if not f.implied}

    @property
    def series_column(self) -> str | None:
        """The column that identifies a series (``symbol``, ``series_id``)."""
        if self.series is not None:
            return self.series.column
        rest = [c for c in self.key if c not in (self.time.column, "revision")]
        return rest[0] if len(rest) == 1 else None

    @property
    def revision_column(self) -> str | None:
        return "revision" if "revision" in self.fields else None

    def is_nullable(self, name: str) -> bool:
        """Declared nullability; undeclared means nullable except key and time columns."""
        spec = self.fields[name]
        if spec.nullable is not None:
            return spec.nullable
        return not (name in self.key or name == self.time.column or spec.implied)

    @property
    def unit_declarations(self) -> tuple[Any, ...]:
        from tscontract.contract.units import UnitDefinition

        return tuple(UnitDefinition(name, decl.dimension, decl.definition) for name, decl in self.units.items())
