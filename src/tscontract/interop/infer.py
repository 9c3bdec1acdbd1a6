"""``tscontract init``: a draft contract, catalog and mapping inferred from a sample, each clause with its evidence.

Everything is measured in DuckDB over the sample, one aggregate pass per question (every column's
statistics in one), never a loop over rows:

- **types**: a file's physical types where it has them (Parquet, Arrow); for text (CSV, JSON lines)
  the literal digits: integers, decimals with precision and scale from the widest integer part and
  the longest fraction (plus two integer digits of headroom), booleans, instants with their
  precision from the fraction written (``.000Z``: ms). Times with an offset (``+01:00``) are
  converted to UTC instants; times without one need ``timezone`` (``--timezone``: the zone they are
  written in; a zone is never guessed) and are converted by its rules (infer_time.py). Either way the
  draft's mapping states the conversion, so the draft validates what the sample becomes.
- **nullability**: nullable when the sample holds a null.
- **time column**: ``--time-column``, else the one time column (several: refused, named).
- **series column**: ``--series-column``, else the text column with the fewest distinct values
  that, with the time column, identifies nearly every row.
- **key**: series and time, plus ``revision`` where one exists and the pair repeats; a key the
  sample still repeats is reported (rows and values) and left for ``key.unique`` to fail.
- **cadence**: the dominant interval per series, its holes reported as gaps (infer_time.py); exchange
  sessions when the holes are most of the span (infer_sessions.py); else ``irregular``.
- **units** from name suffixes (``_degc``, ``_kpa``, ``_bar``, ``_m3_h``...), checked by pint, with
  their dimension word (``kWh``: energy).
- **bounds** per series in the catalog, from the 1st and 99th percentiles (a glitch moves them
  little): hard bounds that range widened by itself, not below zero when the 1st percentile is not;
  plausibility bounds (a warning) widened by half of it.
- **sets**: a text column with at most 12 distinct values, each seen five times on average, is
  ``enum[...]`` (values that are names) or ``in (...)``.
- **a sample that needs converting** gets the mapping, the standard provenance (``source_id`` from
  the mapping, the rest stated by ingest), ``revision_policy`` and freshness; with an IANA zone and a
  series column, the zone per series in the catalog and completeness per local day.

The draft is a starting point for a person: each inferred clause carries a ``note`` saying what
it was inferred from.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from tscontract.contract.model import STANDARD_PROVENANCE
from tscontract.contract.units import UnitError, check_unit
from tscontract.contract.zones import offset_minutes
from tscontract.engines.duckdb import connect
from tscontract.engines.inputs.sources import SOURCE_VIEW, open_source
from tscontract.engines.inputs.tables import sampled
from tscontract.engines.sandbox import lock
from tscontract.errors import InputError
from tscontract.interop.draft import Column, Draft, MappingDraft, typed_time
from tscontract.interop.infer_time import (
    FILE_SERIES,
    cadence,
    duplicates,
    file_series,
    number_rows,
    series_candidate,
    to_instants,
)
from tscontract.sql.columns import ident, is_instant_type, is_nanosecond_type
from tscontract.typemap.sql import duckdb_reads

# a column-name suffix and the unit it names (pint's spelling)
UNIT_SUFFIXES: dict[str, str] = {
    "degc": "degC",
    "degf": "degF",
    "kelvin": "kelvin",
    "kpa": "kPa",
    "mpa": "MPa",
    "hpa": "hPa",
    "pa": "Pa",
    "bar": "bar",
    "mbar": "mbar",
    "psi": "psi",
    "m3_h": "m**3/h",
    "l_min": "l/min",
    "kg": "kg",
    "mm": "mm",
    "m": "m",
    "km": "km",
    "kw": "kW",
    "kwh": "kWh",
    "w": "W",
    "v": "V",
    "hz": "Hz",
    "rpm": "rpm",
    "percent": "percent",
    "pct": "percent",
    "ppm": "ppm",
    "ppb": "ppb",
    "mg_m3": "mg/m**3",
    "ug_m3": "ug/m**3",
    "g_m3": "g/m**3",
}
_INT = r"[+-]?[0-9]+"
_DEC = r"[+-]?[0-9]+(\.[0-9]+)?"
_FLOAT = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
_INSTANT = r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})"
_NAIVE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?"
PROVENANCE = ("source_id", "ingest_run_id", "transform_version", "revision", "calibration_id")
_PRECISION = {0: "s", 1: "ms", 2: "ms", 3: "ms", 4: "us", 5: "us", 6: "us"}


SAMPLE_TABLE_ROWS = 100_000  # rows of an iceberg:// or delta:// table a draft is inferred from (its first)


def infer(
    data: list[str | Path],
    *,
    name: str,
    time_column: str | None = None,
    series_column: str | None = None,
    timezone: str | None = None,
) -> Draft:
    """A draft contract (and catalog, and mapping) for the sample ``data``; ``timezone``: the zone its
    times without an offset are written in."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", name):
        raise InputError(f"contract name {name!r} must start with a letter and use letters, digits, '_', '.', '-'")
    zone = _zone(timezone)
    con = connect()
    try:
        source = open_source(con, sampled([str(p) for p in data], SAMPLE_TABLE_ROWS))
        lock(con, source.paths)  # the sample's own column names end up in SQL: nothing else readable
        counted = con.execute(f"SELECT count(*) FROM {SOURCE_VIEW}").fetchone()
        rows = counted[0] if counted is not None else 0  # count(*) gives one row
        if not rows:
            raise InputError("the sample holds no rows: nothing to infer from")
        stats = _profile(con, source.columns, source.text)
        columns = [_column(n, t, source.text, rows, stats[n], zone) for n, t in source.columns.items()]
        number_rows(con, source.has_row_number)
        draft = _draft(con, name, columns, rows, (time_column, series_column), zone, [str(p) for p in data])
    finally:
        con.close()
    return draft


def _zone(timezone: str | None) -> str | None:
    if timezone is None:
        return None
    from tscontract.contract.zones import zone_name

    try:
        return zone_name(timezone)
    except ValueError as exc:
        raise InputError(f"--timezone {timezone}: {exc}") from None


ENUM_MAX = 12  # a text column with at most this many distinct values, each repeated, is read as a set


def _is_timestamp(physical: str) -> bool:
    return physical.upper().startswith("TIMESTAMP")


def _is_text(physical: str, text: bool) -> bool:
    return text or physical == "VARCHAR"


def _profile(con: Any, physical: dict[str, str], text: bool) -> dict[str, tuple[Any, ...]]:
    """Every column's statistics in one aggregate pass over the sample: nulls, then for text the
    literal shapes, digits and distinct values, for instants whether they are whole seconds/ms."""
    exprs: dict[str, list[str]] = {}
    for name, kind in physical.items():
        c = ident(name)
        parts = [f"count(*) - count({c})"]
        if _is_text(kind, text):
            v = f"CAST({c} AS VARCHAR)"
            ok = f"{v} IS NULL OR regexp_full_match({v}, '{{}}')"
            parts += [
                f"bool_and({ok.format(_INT)})",
                f"bool_and({ok.format(_DEC)})",
                f"bool_and({ok.format(_FLOAT)})",
                f"bool_and({v} IS NULL OR lower({v}) IN ('true', 'false'))",
                f"bool_and({ok.format(_INSTANT)})",
                f"bool_and({ok.format(_NAIVE)})",
                f"bool_and({v} IS NULL OR right({v}, 1) IN ('Z', 'z'))",
                f"max(length(regexp_extract({v}, '^[+-]?0*([0-9]+)', 1)))",
                f"max(length(regexp_extract({v}, '\\.([0-9]+)$', 1)))",
                f"max(length(regexp_extract({v}, ':[0-9]{{2}}\\.([0-9]+)', 1)))",
                f"count(DISTINCT {v})",
                f"CASE WHEN count(DISTINCT {v}) <= {ENUM_MAX} THEN list_sort(list(DISTINCT {v})) END",
            ]
        elif _is_timestamp(kind) and is_nanosecond_type(kind):
            parts += [f"bool_and(epoch_ns({c}) % {10**k} = 0)" for k in (9, 6, 3)]
        elif _is_timestamp(kind):
            parts += [f"bool_and(epoch_us({c}) % 1000000 = 0)", f"bool_and(epoch_us({c}) % 1000 = 0)", "TRUE"]
        exprs[name] = parts
    flat = [e for parts in exprs.values() for e in parts]
    row = con.execute(f"SELECT {', '.join(flat)} FROM {SOURCE_VIEW}").fetchone()
    out: dict[str, tuple[Any, ...]] = {}
    at = 0
    for name, parts in exprs.items():
        out[name] = tuple(row[at : at + len(parts)])
        at += len(parts)
    return out


def _column(name: str, physical: str, text: bool, rows: int, stats: tuple[Any, ...], zone: str | None) -> Column:
    nulls = int(stats[0])
    nullable = bool(nulls)
    seen = f"{rows - nulls} values, {nulls} null" if nulls else f"{rows} values, none null"
    if _is_text(physical, text):
        column = _text_column(name, nullable, seen, stats[1:], zone)
        column.values = rows - nulls
        return column
    upper = physical.upper()
    if upper.startswith("DECIMAL"):
        dtype = "decimal" + upper[len("DECIMAL") :].replace(" ", "")
    elif _is_timestamp(physical):  # a zone in the file (UTC, Europe/Berlin, +05:30): an instant all the same
        whole_s, whole_ms, whole_us = stats[1:4]
        dtype = f"timestamp_{'s' if whole_s else 'ms' if whole_ms else 'us' if whole_us else 'ns'}_utc"
        if not is_instant_type(physical) and zone is None:
            raise InputError(
                f"column {name!r} holds timestamps without a UTC offset ({physical}): tscontract does not guess a "
                "zone; give --timezone ZONE, the zone they are written in (e.g. --timezone Europe/Berlin)"
            )
        if not is_instant_type(physical):
            column = Column(
                name,
                dtype,
                nullable,
                f"file type {physical}, local wall-clock times in {zone} (the mapping converts them); {seen}",
            )
            column.written = "local"
            return column
    else:
        found = duckdb_reads(upper)
        if found is None:
            raise InputError(f"column {name!r}: no contract type for the file's type {physical}")
        dtype = found
    return Column(name, dtype, nullable, f"file type {physical}; {seen}", _unit(name))


def _text_column(name: str, nullable: bool, seen: str, stats: tuple[Any, ...], zone: str | None) -> Column:
    is_int, is_dec, is_float, is_bool, is_instant, is_naive, is_utc, int_digits, scale, fraction, _, members = stats
    unit = _unit(name)
    if is_bool:
        return Column(name, "bool", nullable, f"every value true/false; {seen}")
    if is_instant or is_naive:
        precision = _PRECISION.get(int(fraction or 0), "ns")
        column = Column(name, f"timestamp_{precision}_utc", nullable, "")
        written = f"{fraction or 0} fraction digits written; {seen}"
        if is_instant and is_utc:
            column.note = f"UTC instants, {written}"
        elif is_instant:
            column.written, column.note = "offset", f"times with UTC offsets (the mapping converts them), {written}"
        elif zone is None:
            raise InputError(
                f"column {name!r} holds timestamps without a UTC offset or Z: tscontract does not guess a zone; "
                "give --timezone ZONE, the zone they are written in (e.g. --timezone Europe/Berlin)"
            )
        else:
            column.written = "local"
            column.note = f"local wall-clock times in {zone} (the mapping converts them), {written}"
        return column
    if is_int:
        return Column(name, "int64", nullable, f"every value an integer literal; {seen}", unit)
    if is_dec:
        digits, places = int(int_digits or 1), int(scale or 0)
        total = min(38, digits + places + 2)
        note = f"decimal literals: at most {digits} integer and {places} fraction digits (+2 of headroom); {seen}"
        return Column(name, f"decimal({total},{places})", nullable, note, unit)
    if is_float:
        return Column(name, "float64", nullable, f"numbers with exponents; {seen}", unit)
    column = Column(name, "string", nullable, f"text; {seen}")
    column.members = [str(m) for m in members] if members is not None else None
    return column


def _unit(name: str) -> str | None:
    lowered = name.lower()
    for suffix in sorted(UNIT_SUFFIXES, key=len, reverse=True):
        if lowered.endswith("_" + suffix):
            unit = UNIT_SUFFIXES[suffix]
            try:
                check_unit(unit)
            except UnitError:
                return None
            return unit
    return None


def _draft(
    con: Any,
    name: str,
    columns: list[Column],
    rows: int,
    named: tuple[str | None, str | None],
    zone: str | None,
    data: list[str],
) -> Draft:
    time_column, series_column = named
    by_name = {c.name: c for c in columns}
    instants = [c.name for c in columns if c.type.startswith("timestamp")]
    if time_column is None:
        if len(instants) != 1:
            found = ", ".join(instants) or "none"
            raise InputError(f"say which column is the time column (--time-column); time columns: {found}")
        time_column = instants[0]
    if time_column not in by_name or not by_name[time_column].type.startswith("timestamp"):
        raise InputError(f"--time-column {time_column}: not a time column of the sample ({', '.join(instants)})")
    texts = [c.name for c in columns if c.type == "string" and c.name not in (time_column, *PROVENANCE)]
    revision = ["revision"] if "revision" in by_name and by_name["revision"].type.startswith("int") else []
    if series_column is None:
        series_column = series_candidate(con, texts, ident(time_column), revision, rows)
    elif series_column not in texts:
        raise InputError(f"--series-column {series_column}: not a text column of the sample ({', '.join(texts)})")
    from_file = None
    if series_column is None and zone is not None and offset_minutes(zone) is None:
        from_file = file_series(con, columns, data)
        series_column = FILE_SERIES if from_file else None
        by_name = {c.name: c for c in columns}
    unresolved = to_instants(con, columns, zone, series_column)
    key = [k for k in (series_column, time_column) if k is not None]
    if revision and not _unique(con, key) and _unique(con, [*key, *revision]):
        key += revision
    for k in key:
        by_name[k].nullable = False
    precision = by_name[time_column].type.split("_")[1]
    draft = Draft(name, columns, time_column, series_column, key, precision, None, "", zone=zone)
    draft.unresolved = unresolved
    draft.file_series = from_file
    duplicates(con, draft, key)
    draft.provenance = [c for c in PROVENANCE if c in by_name]
    _sets(draft)
    cadence(con, draft)
    _bounds(con, draft)
    if "calibration_id" in by_name and series_column is not None:
        _calibrations(con, draft)
    for column in columns:
        column.dimension = _dimension(column.unit)
    if zone is not None or any(c.written for c in columns):
        _pipeline(con, draft)
    return draft


def _unique(con: Any, key: list[str]) -> bool:
    cols = ", ".join(ident(k) for k in key)
    return bool(con.execute(f"SELECT count(DISTINCT ({cols})) = count(*) FROM {SOURCE_VIEW}").fetchone()[0])


# dimension words a contract names, tried in this order for a unit from a name suffix
DIMENSIONS = (
    "temperature",
    "pressure",
    "energy",
    "power",
    "length",
    "mass",
    "volumetric_flow",
    "voltage",
    "frequency",
    "dimensionless",
)


def _dimension(unit: str | None) -> str | None:
    """The dimension word of ``unit`` (``kWh``: energy), when one of :data:`DIMENSIONS` is its."""
    if unit is None:
        return None
    from tscontract.contract.units import unit_in_dimension

    for word in DIMENSIONS:
        try:
            if unit_in_dimension(unit, word):
                return word
        except UnitError:
            continue
    return None


def _pipeline(con: Any, draft: Draft) -> None:
    """A sample that needs converting (local times, offsets): the mapping that converts it and states its
    provenance, the provenance fields, the zone per series in the catalog, completeness per local day
    and freshness."""
    mapping = MappingDraft()
    for column in draft.columns:
        if column.written == "local":
            mapping.rules[column.name] = (
                f"{{from: {column.name}, parse: rfc3339, zone: {draft.zone}, nonexistent: fail, ambiguous: file_order}}"
            )
            mapping.notes.append(
                f"{column.name}: wall-clock times in {draft.zone}; one that does not exist (skipped when clocks go "
                "forward) fails; one repeated when they go back must be written twice, in order (file_order)"
            )
        elif column.written == "offset":
            mapping.rules[column.name] = f"{{from: {column.name}, parse: rfc3339}}"
            mapping.notes.append(f"{column.name}: times with their UTC offset, converted to the instant they name")
    if draft.file_series is not None and draft.series_column is not None:
        mapping.rules[draft.series_column] = "{file_name: '" + draft.file_series.replace("'", "''") + "'}"
    present = {c.name for c in draft.columns}
    if "source_id" not in present:
        mapping.rules["source_id"] = f"{{value: {draft.name}}}"
        mapping.notes.append(
            "source_id: where the rows came from; ingest states ingest_run_id, transform_version (this "
            "mapping's) and revision (0 for a point's first version), validate the same"
        )
    draft.provenance = [*STANDARD_PROVENANCE, *(c for c in PROVENANCE if c in present and c not in STANDARD_PROVENANCE)]
    draft.mapping = mapping
    if "revision" not in present:
        draft.sections.append(
            'revision_policy: {allowed: false, note: "the sample restates no point; say who may, why and within '
            'what window if points can be revised"}'
        )
    _local_days(con, draft)
    if draft.cadence is not None and draft.cadence != "irregular":
        draft.sections.append(
            'freshness: {max_age: 1d, note: "a guess: how old the newest point may be when read; validate judges it '
            'at --now (default: the moment it runs)"}'
        )


def _local_days(con: Any, draft: Draft) -> None:
    """The zone per series in the catalog, completeness per local day and freshness, for a sample with a
    series column, a regular cadence and an IANA zone."""
    if draft.series_column is None or draft.zone is None or offset_minutes(draft.zone) is not None:
        return
    series = con.execute(f"SELECT DISTINCT CAST({ident(draft.series_column)} AS VARCHAR) FROM {SOURCE_VIEW}")
    for (series_id,) in series.fetchall():
        if series_id is not None:
            draft.catalog.setdefault(str(series_id), {})["device_zone"] = draft.zone
    if draft.cadence is None or draft.cadence == "irregular" or "session" in draft.cadence:
        return
    draft.sections.append(
        "completeness: {window: 1 local day, expected_count: per cadence, min_ratio: 1.0, "
        f"note: \"every point of each day in {draft.zone} (23 or 25 hours on the DST days); the sample's gaps "
        'fail it"}'
    )


_ENUM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _sets(draft: Draft) -> None:
    """A text column with a few distinct values, each seen five times on average, as that set: ``enum[...]``
    when every value is a name, else ``in (...)`` (neither for the key or provenance columns)."""
    for column in draft.columns:
        members = column.members
        if (
            column.type != "string"
            or members is None
            or len(members) < 2
            or column.values < 5 * len(members)
            or column.name in draft.key
            or column.name in PROVENANCE
        ):
            continue
        seen = f"; {len(members)} distinct values in {column.values}: read as a set (add a value when it is new)"
        if all(_ENUM_NAME.fullmatch(m) for m in members):
            column.type = f"enum[{', '.join(members)}]"
        else:
            column.constraint = "in (" + ", ".join("'" + m.replace("'", "''") + "'" for m in members) + ")"
        column.note += seen


def _calibrations(con: Any, draft: Draft) -> None:
    """Per series, each calibration id in force from its first point to the next id's first point."""
    t, s, k = typed_time(draft), ident(draft.series_column or ""), ident("calibration_id")
    rows = con.execute(
        f"SELECT s, k, strftime(f, '%Y-%m-%dT%H:%M:%S.%gZ'), strftime(lead(f) OVER (PARTITION BY s ORDER BY f), "
        f"'%Y-%m-%dT%H:%M:%S.%gZ') FROM (SELECT {s} AS s, {k} AS k, min({t}) AS f FROM {SOURCE_VIEW} "
        f"WHERE {k} IS NOT NULL GROUP BY 1, 2) ORDER BY s, f"
    ).fetchall()
    for series_id, cal_id, start, end in rows:
        draft.catalog.setdefault(str(series_id), {}).setdefault("calibrations", []).append((str(cal_id), start, end))


def _bounds(con: Any, draft: Draft) -> None:
    """Bounds for the measured (unit-bearing) numeric column, per series (in the catalog) or, without a
    series column, in the invariants, in one pass, from the 1st and 99th percentiles (a few glitches in
    the sample move them little): hard bounds, that range widened by itself on each side, never below
    zero when the 1st percentile is not; plausibility bounds (a warning), the range widened by half
    itself, within the hard bounds."""
    measured = [c for c in draft.columns if c.unit is not None and c.type.startswith(("decimal", "int", "float"))]
    if len(measured) != 1:  # bounds are for the one measured value
        return
    column = measured[0]
    c = f"CAST({ident(column.name)} AS DOUBLE)"
    series = ident(draft.series_column) if draft.series_column else "NULL"
    rows = con.execute(
        f"SELECT {series}, quantile_cont({c}, 0.01), quantile_cont({c}, 0.99), "
        f"count(*) FILTER (WHERE {c} < 0) FROM {SOURCE_VIEW} WHERE {c} IS NOT NULL GROUP BY 1"
    ).fetchall()
    negatives, literal = 0, []
    for series_id, low_value, high_value, below in rows:
        p01, p99 = Decimal(repr(low_value)), Decimal(repr(high_value))  # the shortest text of each double
        width = (p99 - p01) or abs(p99) or Decimal(1)
        low, high = _outward(p01 - width, p99 + width, width)
        hard = (max(low, Decimal(0)) if p01 >= 0 else low, high)
        negatives += int(below) if p01 >= 0 else 0
        literal = [[_number(b) for b in hard], [_number(b) for b in _plausible(p01, p99, hard)]]
        if draft.series_column is not None:
            entry = draft.catalog.setdefault(str(series_id), {})
            entry["hard_bounds"], entry["plausibility_bounds"] = literal
    if not rows:
        return
    sign = f"; {negatives} negative value(s) below a non-negative 1st percentile fail it" if negatives else ""
    name, each = column.name, "each series' " if draft.series_column else "the "
    hard_clause, plausible_clause = (
        (
            f"{name} within catalog hard_bounds for {draft.series_column}",
            f"{name} within catalog plausibility_bounds for {draft.series_column}",
        )
        if draft.series_column
        else (
            f"{name} between {literal[0][0]} and {literal[0][1]}",
            f"{name} between {literal[1][0]} and {literal[1][1]}",
        )
    )
    percentiles = f"{each}1st to 99th percentile of {name} in the sample"
    draft.invariants.append(
        (hard_clause, f"hard bounds: {percentiles}, widened by that range, not below zero when the 1st is not{sign}")
    )
    draft.invariants.append(
        (
            plausible_clause,
            f"plausibility bounds: {percentiles}, widened by half their spread (rounded outward to 3 significant "
            "digits of it), within the hard bounds",
            "warning",
        )
    )


def _plausible(p01: Decimal, p99: Decimal, hard: tuple[Decimal, Decimal]) -> tuple[Decimal, Decimal]:
    """[p01, p99] widened by half its spread, rounded outward, within ``hard``."""
    spread = (p99 - p01) or abs(p99) / 10 or Decimal(1)
    low, high = _outward(p01 - spread / 2, p99 + spread / 2, spread)
    return max(low, hard[0]), min(high, hard[1])


def _outward(low: Decimal, high: Decimal, spread: Decimal) -> tuple[Decimal, Decimal]:
    """``low`` down and ``high`` up to a tenth of a percent of ``spread`` (3 significant digits of it)."""
    from decimal import ROUND_CEILING, ROUND_FLOOR

    quantum = Decimal(1).scaleb(spread.adjusted() - 2)
    return low.quantize(quantum, rounding=ROUND_FLOOR), high.quantize(quantum, rounding=ROUND_CEILING)


def _number(value: Decimal) -> str:
    return format(value.normalize(), "f")
