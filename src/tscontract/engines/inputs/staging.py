"""Stage an input on a DuckDB connection: read it, number its rows, filter, convert.

One code path for ``ingest`` and for ``validate`` / ``profile`` with ``--mapping``:

``__tsc_raw``
    the input as read, rows numbered from 1 in the order given (``__row``); with a mapping
    filter, only the rows it keeps (the others are counted, never silently lost);
``__tsc_input``
    the same rows without the caller's control columns (the gate's ``revision_reason``);
``__tsc_batch``
    the rows converted by the mapping (all text; ``__mr_<field>`` columns give why a value
    could not be converted), or ``__tsc_input`` as it is without a mapping.

:func:`source_of` registers ``__tsc_batch`` as the engine's source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from tscontract.contract.catalog import Catalog
from tscontract.contract.model import Contract
from tscontract.engines.inputs.mapping import FILES_TABLE, Mapping, apply_mapping, filter_sql
from tscontract.engines.inputs.sources import MALFORMED, RECORD, SOURCE_VIEW, Source, file_kind, open_source, paths_of
from tscontract.engines.relations import small_table
from tscontract.engines.sandbox import lock
from tscontract.errors import InputError, display_path
from tscontract.shown import engine_message
from tscontract.sql.columns import REASON_PREFIX, ident, sql_string

RAW_TABLE = "__tsc_raw"
INPUT_TABLE = "__tsc_input"
BATCH_TABLE = "__tsc_batch"


@dataclass
class StagedSource(Source):
    """A staged batch as the engine's source; ``conversion_reasons``: fields with a ``__mr_`` column."""

    conversion_reasons: tuple[str, ...] = ()


@dataclass
class Conversion:
    """What a mapping did to the input: recorded in the report and in the run."""

    mapping: str
    transform_version: str
    rows_read: int
    dropped: list[dict[str, Any]] = field(default_factory=list)  # {id, clause, rows}: rows a rule dropped

    @property
    def rows_dropped(self) -> int:
        return sum(int(d["rows"]) for d in self.dropped)

    def to_json(self) -> dict[str, Any]:
        return {
            "mapping": self.mapping,
            "transform_version": self.transform_version,
            "rows_read": self.rows_read,
            "dropped": self.dropped,
        }


@dataclass(frozen=True)
class Provenance:
    """What the gate states on every row: its run id, the source it was told (``--source-id``)."""

    run_id: str
    source_id: str | None = None


VALIDATE_RUN = "validate"  # ingest_run_id of a batch validated with a mapping: no run of the gate


@dataclass
class Staged:
    raw_columns: list[str]  # the input's own columns
    text: bool
    json_types: bool
    description: list[str]
    conversion: Conversion | None
    reasons: tuple[str, ...] = ()


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    return [str(r[0]) for r in con.execute(f"DESCRIBE {relation}").fetchall()]


def _number(con: duckdb.DuckDBPyConnection, source: Source, table: str, offset: int = 0) -> None:
    """``table``: the registered source with ``__row`` (the source's own numbering where it has one)."""
    rest = ", ".join(ident(c) for c in _columns(con, SOURCE_VIEW) if c != "__row")
    row = "__row" if source.has_row_number else "row_number() OVER ()"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {row} + {offset} AS __row, {rest} FROM {SOURCE_VIEW}")


def _file_values(mapping: Mapping, path: Path) -> list[str]:
    values = []
    for name, rule in mapping.columns.items():
        if rule.file_name is None:
            continue
        match = re.search(rule.file_name, path.name)
        if match is None:
            raise InputError(
                f"mapping {mapping.mapping}: file name {path.name!r} does not match "
                f"{name}'s file_name '{rule.file_name}'"
            )
        values.append(next(iter(match.groupdict().values())) or "")
    return values


def _read_files(con: duckdb.DuckDBPyConnection, data: Any, mapping: Mapping) -> Source:
    """``__tsc_raw`` read file by file, so each row knows its file: ``__tsc_files`` gives row ranges."""
    items = [data] if isinstance(data, str | Path) else data
    if not isinstance(items, list | tuple) or not all(isinstance(i, str | Path) for i in items):
        raise InputError(f"mapping {mapping.mapping}: file_name columns need data files")
    paths = paths_of(items)
    file_kind(paths)  # one format
    fields = [name for name, rule in mapping.columns.items() if rule.file_name]
    offset, files, parts, source = 0, [], [], None
    for i, path in enumerate(paths):
        source = open_source(con, [path], csv=mapping.csv)
        _number(con, source, f"{RAW_TABLE}_{i}", offset)
        rows = _count(con, f"{RAW_TABLE}_{i}")
        files.append((offset + 1, offset + rows, *_file_values(mapping, path)))
        parts.append(f"SELECT * FROM {RAW_TABLE}_{i}")
        offset += rows
    assert source is not None
    small_table(
        con, FILES_TABLE, [("__first", "BIGINT"), ("__last", "BIGINT"), *((f, "VARCHAR") for f in fields)], files
    )
    con.execute(f"CREATE OR REPLACE TEMP TABLE {RAW_TABLE} AS {' UNION ALL BY NAME '.join(parts)}")
    for i in range(len(paths)):
        con.execute(f"DROP TABLE {RAW_TABLE}_{i}")
    return Source(
        {c: "" for c in _columns(con, RAW_TABLE) if c != "__row"},
        text=source.text,
        json_types=source.json_types,
        has_row_number=True,
        description=[display_path(p) for p in paths],
    )


def _apply_filter(con: duckdb.DuckDBPyConnection, mapping: Mapping) -> int:
    """Keep the rows the mapping's filter keeps; how many it dropped. A malformed row is kept: it
    fails ``source.rows``, whatever its fields would say."""
    found = _columns(con, RAW_TABLE)
    columns = [c for c in found if c not in ("__row", MALFORMED, RECORD) and not c.startswith("__jt_")]
    condition = filter_sql(mapping, columns)
    if MALFORMED in found:
        condition = f"(r.{MALFORMED} IS NOT NULL OR {condition})"
    before = _count(con, RAW_TABLE)
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {RAW_TABLE} AS SELECT * FROM {RAW_TABLE} r WHERE {condition}")
    except duckdb.Error as exc:
        first = engine_message(exc)
        raise InputError(f"mapping {mapping.mapping}: filter {mapping.filter!r} cannot run: {first}") from None
    return before - _count(con, RAW_TABLE)


def stage(
    con: duckdb.DuckDBPyConnection,
    data: Any,
    contract: Contract,
    catalog: Catalog | None,
    mapping: Mapping | None,
    *,
    control: tuple[str, ...] = (),
    provenance: Provenance = Provenance(VALIDATE_RUN),
) -> Staged:
    """Read ``data`` into ``__tsc_raw``, set ``control`` columns aside, convert into ``__tsc_batch``
    and state the provenance the gate knows (:func:`fill_provenance`)."""
    if mapping is not None and mapping.needs_file_names:
        source = _read_files(con, data, mapping)
    else:
        source = open_source(con, data, csv=mapping.csv if mapping is not None else None)
        _number(con, source, RAW_TABLE)
    lock(con)  # the input is in __tsc_raw: nothing else to read before the mapping's filter runs
    raw_columns = [c for c in _columns(con, RAW_TABLE) if c != "__row"]
    conversion = None
    if mapping is not None:
        conversion = Conversion(mapping.mapping, mapping.transform_version, _count(con, RAW_TABLE))
        if mapping.filter is not None:
            rows = _apply_filter(con, mapping)
            conversion.dropped.append({"id": "mapping.filter", "clause": mapping.filter, "rows": rows})
    set_aside = set(control) | {f"__jt_{c}" for c in control}
    keep = ", ".join(ident(c) for c in ["__row", *[c for c in raw_columns if c not in set_aside]])
    con.execute(f"CREATE OR REPLACE TEMP TABLE {INPUT_TABLE} AS SELECT {keep} FROM {RAW_TABLE}")
    text, json_types = source.text, source.json_types
    reasons: tuple[str, ...] = ()
    if mapping is not None:
        reasons = tuple(apply_mapping(con, INPUT_TABLE, BATCH_TABLE, mapping, contract, catalog))
        text, json_types = True, False
    else:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {BATCH_TABLE} AS SELECT * FROM {INPUT_TABLE}")
    if mapping is not None and mapping.outside_session == "drop":
        assert conversion is not None
        rows = drop_outside_session(con, contract, catalog)
        conversion.dropped.append({"id": "mapping.outside_session", "clause": "outside_session: drop", "rows": rows})
    fill_provenance(con, contract, mapping, provenance, text=text, json_types=json_types)
    return Staged(raw_columns, text, json_types, source.description, conversion, reasons)


def drop_outside_session(con: duckdb.DuckDBPyConnection, contract: Contract, catalog: Catalog | None) -> int:
    """Drop the converted rows whose instant stands outside the series' session (regular or extended
    hours, per the catalog); how many. A row whose instant or series did not convert is kept: it fails
    its own check."""
    from tscontract.contract.catalog import declared_calendars
    from tscontract.engines import calendars  # exchange sessions: only when a mapping drops by them

    cadence = contract.time.cadence
    if cadence is not None and cadence.per_session:
        raise InputError("outside_session: drop is for intraday points; a '1 session' cadence stamps one per session")
    series = contract.series_column
    if series is None or series not in _columns(con, BATCH_TABLE):
        raise InputError("outside_session: drop needs the contract's series column in the converted batch")
    default = contract.time.calendar or (contract.time.timezone.session_calendar if contract.time.timezone else None)
    entries = catalog.series.items() if catalog is not None else ()
    placed = [(sid, e.value_of("calendar") or default, e.session or "regular") for sid, e in entries]
    if not any(cal for _, cal, _ in placed) and default is None:
        raise InputError("outside_session: drop needs each series' exchange calendar (catalog calendar or venue)")
    instant = f"TRY_CAST(b.{ident(contract.time.column)} AS TIMESTAMPTZ)"
    span = con.execute(f"SELECT min({instant}), max({instant}) FROM {BATCH_TABLE} b").fetchall()[0]
    if span[0] is None:
        return 0
    names = {cal for _, cal, _ in placed if cal} | ({default} if default else set())
    kinds = {kind for _, _, kind in placed} | {"regular"}
    found = calendars.sessions(names, span[0], span[1], kinds, declared_calendars(contract, catalog))
    small_table(con, "__tsc_drop_sessions", calendars.COLUMNS, found)
    small_table(con, "__tsc_drop_series", [("s", "VARCHAR"), ("cal", "VARCHAR"), ("kind", "VARCHAR")], placed)
    calendar = f"coalesce(c.cal, {sql_string(default) if default else 'NULL'})"
    outside = (
        f"{instant} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM __tsc_drop_sessions x WHERE x.calendar = {calendar} "
        f"AND x.kind = coalesce(c.kind, 'regular') AND {instant} >= x.open AND {instant} < x.close)"
    )
    before = _count(con, BATCH_TABLE)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {BATCH_TABLE} AS SELECT b.* FROM {BATCH_TABLE} b LEFT JOIN __tsc_drop_series c "
        f"ON c.s = CAST(b.{ident(series)} AS VARCHAR) WHERE NOT ({outside})"
    )
    return before - _count(con, BATCH_TABLE)


def fill_provenance(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    mapping: Mapping | None,
    provenance: Provenance,
    *,
    text: bool,
    json_types: bool,
) -> None:
    """The gate states what it knows: the run's id, the source it was told, the transform."""
    fields = contract.fields
    have = set(_columns(con, BATCH_TABLE))
    fills: dict[str, tuple[str, str]] = {}  # column -> (SQL value, JSON type)
    if "ingest_run_id" in fields:
        fills["ingest_run_id"] = (sql_string(provenance.run_id), "VARCHAR")
    if "source_id" in fields and provenance.source_id is not None:
        fills["source_id"] = (sql_string(provenance.source_id), "VARCHAR")
    if "transform_version" in fields and (mapping is not None or "transform_version" not in have):
        version = mapping.transform_version if mapping else "identity"
        fills["transform_version"] = (sql_string(version), "VARCHAR")
    if "revision" in fields and "revision" not in have:
        fills["revision"] = ("'0'" if text else "0::BIGINT", "BIGINT")
    if not fills:
        return
    replace = [f"{value} AS {ident(name)}" for name, (value, _) in fills.items() if name in have]
    add = [f"{value} AS {ident(name)}" for name, (value, _) in fills.items() if name not in have]
    if json_types:
        for name, (_, jtype) in fills.items():
            target = replace if f"__jt_{name}" in have else add
            target.append(f"{sql_string(jtype)} AS {ident('__jt_' + name)}")
    star = f"* REPLACE ({', '.join(replace)})" if replace else "*"
    extra = f", {', '.join(add)}" if add else ""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {BATCH_TABLE} AS SELECT {star}{extra} FROM {BATCH_TABLE}")


def source_of(con: duckdb.DuckDBPyConnection, staged: Staged) -> StagedSource:
    """``__tsc_batch`` as the engine's source view."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM {BATCH_TABLE}")
    columns = {
        str(r[0]): str(r[1])
        for r in con.execute(f"DESCRIBE {SOURCE_VIEW}").fetchall()
        if r[0] != "__row" and not str(r[0]).startswith(("__jt_", REASON_PREFIX))
    }
    return StagedSource(
        columns,
        text=staged.text,
        json_types=staged.json_types,
        has_row_number=True,
        description=staged.description,
        conversion_reasons=staged.reasons,
    )


def stage_source(
    con: duckdb.DuckDBPyConnection, data: Any, contract: Contract, catalog: Catalog | None, mapping: Mapping
) -> tuple[StagedSource, Conversion]:
    """``data`` converted by ``mapping``, registered as the engine's source (validate, profile, HTML)."""
    staged = stage(con, data, contract, catalog, mapping)
    assert staged.conversion is not None
    return source_of(con, staged), staged.conversion
