"""The series catalog: per series its unit, bounds, cadence, zone, venue and calibrations.

Written as YAML (a mapping keyed by series id) or as CSV (one row per series
and calibration). Both load into the same :class:`Catalog` and fail with file,
line and column.

Reading YAML with positions (ruamel's round-trip composer, in Python) takes about 0.5 s
for a catalog of 500 series, so a catalog file (and a YAML text of more than :data:`CACHED_CHARS`
characters) that loaded without error is kept in the tscontract cache
(:func:`~tscontract.contract.cache.read_once`), keyed by its name and text, this code, and the
libraries it is read with: the next process reads it back in milliseconds, without importing
ruamel.yaml. A catalog with an error is never cached; it is read again and fails as before.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PlainValidator, field_validator, model_validator

from tscontract.contract.cache import read_once
from tscontract.contract.durations import Duration
from tscontract.contract.located import LocatedErrors, load_located, validate_located
from tscontract.contract.model import Contract, DurationText, _Section, unit_as_text
from tscontract.contract.positions import NodeInfo, PositionIndex
from tscontract.contract.units import UnitError, check_unit
from tscontract.contract.weekly import Calendars, WeeklyCalendar
from tscontract.contract.zones import iana_zone
from tscontract.errors import CatalogError, InputError, Location, display_path

CSV_COLUMNS = (
    "series_id",
    "unit",
    "dimension",
    "hard_min",
    "hard_max",
    "plausibility_min",
    "plausibility_max",
    "cadence",
    "device_zone",
    "venue",
    "calendar",
    "session",
    "quote_currency",
    "calibration_id",
    "calibration_valid_from",
    "calibration_valid_to",
    "note",
)
_CALIBRATION_COLUMNS = {
    "calibration_id": "id",
    "calibration_valid_from": "valid_from",
    "calibration_valid_to": "valid_to",
}
_BOUND_COLUMNS = {
    "hard_min": ("hard_bounds", 0),
    "hard_max": ("hard_bounds", 1),
    "plausibility_min": ("plausibility_bounds", 0),
    "plausibility_max": ("plausibility_bounds", 1),
}


def parse_instant(value: object) -> datetime:
    """An RFC 3339 instant with an offset, as UTC; naive times are refused."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{value!r} is not an RFC 3339 timestamp") from None
    else:
        raise ValueError(f"expected an RFC 3339 timestamp, got {value!r}")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ValueError(f"{value!r} has no UTC offset; write it as an instant, e.g. with 'Z'")
    return parsed.astimezone(UTC)


def instant_option(value: object, option: str) -> datetime | None:
    """``value`` (None, an aware datetime or RFC 3339 text: ``--now``, ``--from``, ``validate(now=...)``) as
    a UTC instant; anything else one InputError naming ``option``."""
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise InputError(f"{option}: {exc}") from None


Instant = Annotated[datetime, PlainValidator(parse_instant)]


def _bounds(value: object) -> tuple[Decimal, Decimal]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | Decimal) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError(f"bounds are [low, high] numbers, got {value!r}")
    low, high = (Decimal(v) for v in value)
    if low > high:
        raise ValueError(f"bounds low {low} is above high {high}")
    return low, high


Bounds = Annotated[tuple[Decimal, Decimal], PlainValidator(_bounds)]


class Calibration(_Section):
    """A calibration record and the interval ``[valid_from, valid_to)`` it is in force."""

    id: str
    valid_from: Instant
    valid_to: Instant | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _interval(self) -> Calibration:
        if self.valid_to is not None and self.valid_to <= self.valid_from:
            raise ValueError(f"calibration {self.id}: valid_to is not after valid_from")
        return self

    def in_force(self, at: datetime) -> bool:
        return self.valid_from <= at and (self.valid_to is None or at < self.valid_to)


class SeriesEntry(_Section):
    """What the catalog records of one series."""

    unit: str | None = None
    dimension: str | None = None
    hard_bounds: Bounds | None = None
    plausibility_bounds: Bounds | None = None
    cadence: DurationText | None = None
    device_zone: str | None = None
    venue: str | None = None
    calendar: str | None = None
    session: Literal["regular", "extended"] | None = None  # which hours of the calendar: regular by default
    quote_currency: str | None = None
    calibrations: list[Calibration] = Field(default_factory=list)
    description: str | None = None
    note: str | None = None

    _unit_one = field_validator("unit", mode="before")(classmethod(lambda cls, value: unit_as_text(value)))

    _zone = field_validator("device_zone")(classmethod(lambda cls, value: iana_zone(value)))

    @field_validator("cadence")
    @classmethod
    def _fixed(cls, value: Duration | None) -> Duration | None:
        if value is not None and value.in_months:
            raise ValueError("a series cadence in the catalog is a fixed interval; calendar months go in time.cadence")
        if value is not None and not value.fixed:
            raise ValueError(f"a series cadence is a fixed interval, not {value.calendar} days")
        return value

    @field_validator("calibrations")
    @classmethod
    def _no_overlap(cls, value: list[Calibration]) -> list[Calibration]:
        ordered = sorted(value, key=lambda c: c.valid_from)
        for before, after in pairwise(ordered):
            if before.valid_to is None or before.valid_to > after.valid_from:
                raise ValueError(
                    f"calibrations {before.id} and {after.id} overlap: only one record may be in force at a time"
                )
        ids = [c.id for c in value]
        if len(set(ids)) != len(ids):
            raise ValueError("a calibration id is listed twice")
        return value

    def value_of(self, column: str) -> Any:
        """What a clause's ``catalog.<column>`` stands for (``hard_bounds_low``, ``unit``, ``calendar``)."""
        if column.endswith(("_low", "_high")):
            bounds = getattr(self, column.rsplit("_", 1)[0])
            return None if bounds is None else bounds[0 if column.endswith("_low") else 1]
        if column == "calendar":
            return self.calendar or self.venue  # the engine joins the venue's calendar by default
        return getattr(self, column)

    def calibration_at(self, at: datetime) -> Calibration | None:
        return next((c for c in self.calibrations if c.in_force(at)), None)


class Catalog(_Section):
    """Per-series facts a contract refers to (``unit: per series from catalog``)."""

    catalog: str | None = None  # the contract it serves; CSV catalogs do not say
    series: dict[str, SeriesEntry]
    calendars: Calendars = Field(default_factory=dict)  # weekly hours by name (contract/weekly.py)
    description: str | None = None
    note: str | None = None

    @field_validator("series")
    @classmethod
    def _some(cls, value: dict[str, SeriesEntry]) -> dict[str, SeriesEntry]:
        if not value:
            raise ValueError("a catalog lists at least one series")
        return value


def other_contract(catalog: Catalog, contract: str) -> str | None:
    """Why ``catalog`` is not the catalog of ``contract`` (it names another one; CSV catalogs name none)."""
    if catalog.catalog is not None and catalog.catalog != contract:
        return f"the catalog is for contract {catalog.catalog!r}, not {contract!r}"
    return None


def load_catalog(path: str | Path) -> Catalog:
    """Read a catalog from YAML (``.yaml``/``.yml``) or CSV (``.csv``); kept in the cache once read
    (contract.cache.read_once: a warm process reads neither YAML nor units)."""
    from tscontract.contract.text_files import read_text

    text = read_text(path, "catalog")
    shown = display_path(path)
    if str(path).lower().endswith(".csv"):
        return read_once("catalog-csv", shown, text, lambda: parse_catalog_csv(text, shown), Catalog)
    return read_once("catalog", shown, text, lambda: _parse_yaml(text, shown), Catalog)


CACHED_CHARS = 4096  # a smaller catalog given as text reads in a few milliseconds: not worth a cache file


def parse_catalog(text: str, path: str = "<catalog>") -> Catalog:
    """A catalog from YAML ``text``; ``path`` names it in errors. Kept in the cache past :data:`CACHED_CHARS`."""
    if len(text) <= CACHED_CHARS:
        return _parse_yaml(text, path)
    return read_once("catalog", path, text, lambda: _parse_yaml(text, path), Catalog)


def _parse_yaml(text: str, path: str) -> Catalog:
    tree, errors = load_located(text, path, CatalogError, "a catalog")
    return _validate(tree, errors)


def _validate(tree: dict[str, Any], errors: LocatedErrors) -> Catalog:
    catalog = validate_located(Catalog, tree, errors)
    for series_id, entry in catalog.series.items():
        if entry.unit is not None:
            try:
                check_unit(entry.unit)
            except UnitError as exc:
                raise errors.at(("series", series_id, "unit"), str(exc)) from None
    return catalog


def parse_catalog_csv(text: str, path: str = "<catalog>") -> Catalog:
    """One row per series and calibration; series attributes repeat identically."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise CatalogError("the catalog CSV is empty", Location(path, 1, 1)) from None
    for col, name in enumerate(header):
        if name not in CSV_COLUMNS:
            raise CatalogError(
                f"unknown catalog column {name!r}; known: {', '.join(CSV_COLUMNS)}",
                Location(path, 1, _cell_column(text, 0, col)),
            )
    if "series_id" not in header:
        raise CatalogError("the catalog CSV needs a series_id column", Location(path, 1, 1))
    index = PositionIndex(path)
    series: dict[str, dict[str, Any]] = {}
    lines = text.splitlines()
    for row_no, row in enumerate(reader, start=1):
        if not any(cell.strip() for cell in row):
            continue
        line = row_no + 1

        def loc(col: int, line: int = line, row_no: int = row_no) -> Location:
            return Location(path, line, _cell_column(text, row_no, col, lines))

        if len(row) != len(header):
            raise CatalogError(f"row has {len(row)} cells, the header {len(header)}", loc(0))
        cells = dict(zip(header, row, strict=True))
        sid = cells["series_id"].strip()
        if not sid:
            raise CatalogError("empty series_id", loc(0))
        entry = series.setdefault(sid, {})
        index.nodes.setdefault(("series", sid), NodeInfo(loc(0), loc(0), plain=False))
        calibration: dict[str, Any] = {}
        for col, name in enumerate(header):
            value = cells[name].strip()
            if name == "series_id" or value == "":
                continue
            if name in _CALIBRATION_COLUMNS:
                calibration[_CALIBRATION_COLUMNS[name]] = value
                continue
            parsed: str | Decimal
            key, pos, parsed = name, None, value
            if name in _BOUND_COLUMNS:
                key, pos = _BOUND_COLUMNS[name]
                try:
                    parsed = Decimal(value)
                except InvalidOperation:
                    raise CatalogError(f"{name} {value!r} is not a number", loc(col)) from None
                bounds = entry.setdefault(key, [None, None])
                if bounds[pos] is not None and bounds[pos] != parsed:
                    raise CatalogError(f"{name} differs between rows of series {sid}", loc(col))
                bounds[pos] = parsed
            elif key in entry and entry[key] != parsed:
                raise CatalogError(f"{name} differs between rows of series {sid}", loc(col))
            else:
                entry[key] = parsed
            index.nodes.setdefault(("series", sid, key), NodeInfo(loc(col), loc(col)))
        if calibration:
            calibrations = entry.setdefault("calibrations", [])
            index.nodes[("series", sid, "calibrations", len(calibrations))] = NodeInfo(loc(0), None)
            calibrations.append(calibration)
    for sid, entry in series.items():
        for key in ("hard_bounds", "plausibility_bounds"):
            if key in entry and None in entry[key]:
                raise CatalogError(f"series {sid} gives only one of the {key}", index.location(("series", sid)))
    index.nodes[()] = NodeInfo(Location(path, 1, 1))
    tree = {"series": series}
    return _validate(tree, LocatedErrors(tree, index, CatalogError))


def _cell_column(text: str, row: int, col: int, lines: list[str] | None = None) -> int:
    """1-based character column of cell ``col`` on data row ``row`` (0 = header)."""
    source = (lines or text.splitlines())[row] if row < len(lines or text.splitlines()) else ""
    if '"' in source:
        return 1
    cells = source.split(",")
    return sum(len(c) + 1 for c in cells[:col]) + 1


def declared_calendars(contract: Contract, catalog: Catalog | None = None) -> dict[str, WeeklyCalendar]:
    """The weekly-hours calendars of a contract and its catalog; one name declared differently in both is
    refused, and so is a catalog series asking a declared calendar for extended hours."""
    found = dict(contract.calendars)
    for name, calendar in (catalog.calendars if catalog is not None else {}).items():
        if name in found and found[name] != calendar:
            raise InputError(
                f"calendar {name!r} is declared both in the contract and in the catalog, with other hours: "
                "declare it once"
            )
        found[name] = calendar
    time = contract.time
    default = time.calendar or (time.timezone.session_calendar if time.timezone else None)
    for series, entry in (catalog.series if catalog is not None else {}).items():
        asked: str | None = entry.value_of("calendar") or default  # the series' calendar, else its venue's
        if entry.session == "extended" and asked in found:
            raise InputError(
                f"catalog series {series}: calendar {asked!r} is declared by its hours and has no extended hours; "
                "drop 'session: extended'"
            )
    return found
