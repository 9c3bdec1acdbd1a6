"""What ``tscontract init`` drafts, as plain data, and its YAML: the contract, the catalog and the mapping.

The inference (infer.py, infer_time.py, infer_sessions.py) fills a :class:`Draft`; nothing here reads data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tscontract.sql.columns import ident


@dataclass
class Column:
    name: str
    type: str
    nullable: bool
    note: str
    unit: str | None = None
    members: list[str] | None = None  # a text column's distinct values, when few
    values: int = 0  # non-null values
    constraint: str | None = None
    dimension: str | None = None
    written: str | None = None  # a time column written as "local" wall-clock times or with "offset"s


@dataclass
class Gap:
    """Points missing between two consecutive points of a series."""

    series: str
    after: str
    before: str
    missing: int


@dataclass
class Duplicate:
    """A key the sample holds more than once: its values, the rows (1-based, in file order) and their values."""

    key: dict[str, str]
    rows: list[int]
    values: list[dict[str, str]]

    def line(self) -> str:
        key = ", ".join(f"{k}={v}" for k, v in self.key.items())
        rows = ", ".join(str(r) for r in self.rows)
        values = "; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for row in self.values)
        return f"{key}: rows {rows}" + (f" ({values})" if values else "")


@dataclass
class MappingDraft:
    """The mapping that turns the sample into the contract's shape: time rules and stated provenance."""

    rules: dict[str, str] = field(default_factory=dict)  # field -> the rule's YAML flow mapping
    notes: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """The inferred contract, catalog and mapping as plain data, ready to write as YAML."""

    name: str
    columns: list[Column]
    time_column: str
    series_column: str | None
    key: list[str]
    precision: str
    cadence: str | None
    cadence_note: str
    calendar: str | None = None  # time.calendar: the exchange calendar whose sessions hold every point
    calendar_note: str = ""
    catalog: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (clause, what it was inferred from[, severity])
    invariants: list[tuple[str, ...]] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)
    zone: str | None = None  # the wall clock of the sample (--timezone), recorded per series in the catalog
    mapping: MappingDraft | None = None
    gaps: list[Gap] = field(default_factory=list)
    gap_count: int = 0
    duplicates: list[Duplicate] = field(default_factory=list)
    duplicate_keys: int = 0
    unresolved: list[str] = field(default_factory=list)  # local times no instant could be had for
    file_series: str | None = None  # the file_name rule naming the series, when the file's name does
    sections: list[str] = field(default_factory=list)  # further top-level lines (completeness, freshness...)

    def contract_yaml(self) -> str:
        lines = [
            "# Drafted by tscontract init from a sample; every inferred clause says what it was inferred from.",
            f"contract: {self.name}",
            "version: 0.1.0",
            "owner: TODO@example",
            f"key: [{', '.join(self.key)}]" + self._key_comment(),
            "time:",
            f"  column: {self.time_column}",
            f"  precision: {self.precision}",
            "  timezone: UTC instant" + ("; device zone recorded in catalog" if self._zone_in_catalog() else ""),
        ]
        if self.cadence is not None:
            lines.append(f"  cadence: {self.cadence}   # {self.cadence_note}")
        if self.calendar is not None:
            lines.append(f"  calendar: {self.calendar}   # {self.calendar_note}")
        lines.append("fields:")
        lines += [_field_line(column) for column in self.columns]
        if self.provenance:
            lines.append(f"provenance_required: [{', '.join(self.provenance)}]")
        lines += self.sections
        if self.invariants:
            lines.append("invariants:")
            for clause, note, *severity in self.invariants:
                level = f", severity: {severity[0]}" if severity else ""
                lines.append(f"  - {{clause: {quoted(clause)}{level}, note: {quoted(note)}}}")
        return "\n".join(lines) + "\n"

    def _zone_in_catalog(self) -> bool:
        return any("device_zone" in entry for entry in self.catalog.values())

    def _key_comment(self) -> str:
        if not self.duplicate_keys:
            return ""
        return (
            f"   # {self.duplicate_keys} key(s) repeat in the sample (key.unique fails them): a resent copy? "
            "say duplicates: {keep: last, by: COLUMN}, or add a revision column"
        )

    def catalog_yaml(self) -> str | None:
        if not self.catalog:
            return None
        lines = ["# Drafted by tscontract init from a sample.", f"catalog: {self.name}", "series:"]
        for series, entry in sorted(self.catalog.items()):
            lines.append(f"  {quoted(series)}:")
            for key, value in entry.items():
                if key == "calibrations":
                    lines.append("    calibrations:")
                    for cal_id, start, end in value:
                        lines.append(f"      - id: {quoted(cal_id)}")
                        lines.append(f'        valid_from: "{start}"')
                        if end is not None:
                            lines.append(f'        valid_to: "{end}"')
                elif isinstance(value, list):
                    lines.append(f"    {key}: [{', '.join(str(v) for v in value)}]")
                else:
                    lines.append(f"    {key}: {value}")
        return "\n".join(lines) + "\n"

    def mapping_yaml(self) -> str | None:
        if self.mapping is None:
            return None
        lines = [
            "# Drafted by tscontract init: how the sample's rows become the contract's. validate, profile and",
            "# ingest take it with --mapping.",
            *(f"# {note}" for note in self.mapping.notes),
            f"mapping: {self.name}",
            "transform_version: 0.1.0",
            "columns:",
        ]
        lines += [f"  {name}: {rule}" for name, rule in self.mapping.rules.items()]
        return "\n".join(lines) + "\n"


def _field_line(column: Column) -> str:
    parts = [f"type: {column.type}", f"nullable: {'true' if column.nullable else 'false'}"]
    if column.unit is not None:
        unit = column.unit if re.fullmatch(r"[A-Za-z]+", column.unit) else f'"{column.unit}"'
        parts.append(f"unit: {unit}")
    if column.dimension is not None:
        parts.append(f"dimension: {column.dimension}")
    if column.constraint is not None:
        parts.append(f"constraint: {quoted(column.constraint)}")
    parts.append(f"note: {quoted(column.note)}")
    return f"  {column.name}: {{{', '.join(parts)}}}"


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def typed_time(draft: Draft) -> str:
    """The time column as instants: text (CSV) is cast, a file's instants stay as they are."""
    return f"CAST({ident(draft.time_column)} AS TIMESTAMPTZ)"


def series_sql(draft: Draft) -> str:
    """The series column as SQL, or one constant series."""
    return ident(draft.series_column) if draft.series_column else "'*'"


def duration(ms: int) -> str:
    if ms % 1000:
        return f"{ms}ms"
    seconds = ms // 1000
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    if seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"
