"""``tscontract init``: a draft contract and catalog inferred from a sample, each clause with its evidence.

Everything is measured in DuckDB over the sample, one aggregate pass per question (every column's
statistics in one), never a loop over rows:

- **types**: a file's physical types where it has them (Parquet, Arrow); for text (CSV, JSON lines)
  the literal digits: integers, decimals with precision and scale from the widest integer part and
  the longest fraction (plus two integer digits of headroom), booleans, UTC instants with their
  precision from the fraction written (``.000Z``: ms). A timestamp without an offset is refused
  (exit 2): a zone is never guessed.
- **nullability**: nullable when the sample holds a null.
- **time column**: ``--time-column``, else the one UTC-instant column (several: refused, named).
- **series column**: ``--series-column``, else the text column with the fewest distinct values
  that, with the time column, identifies a row.
- **key**: series and time, plus ``revision`` where one exists and the pair repeats; verified unique.
- **cadence**: the median interval per series; one interval for all series in the contract, else
  per series in the catalog; a tolerance when intervals spread (the largest deviation seen). When
  gaps split the bars, exchange sessions: the candidate calendars' regular sessions are joined to
  the bars; a calendar holding every bar, every session of the span whole, gives ``<interval> within
  session; no bars outside session`` and ``time.calendar`` (per series in the catalog when venues
  differ); else ``irregular`` with the closest calendar in the note.
- **units** from name suffixes (``_degc``, ``_kpa``, ``_bar``, ``_m3_h``...), checked by pint.
- **bounds** per series in the catalog: hard bounds from the sample's minimum and maximum, widened
  by its range; plausibility bounds (a warning) from the 1st and 99th percentiles, widened by half
  their spread.
- **sets**: a text column with at most 12 distinct values, each seen five times on average, is
  ``enum[...]`` (values that are names) or ``in (...)``.

The draft is a starting point for a person: each inferred clause carries a ``note`` saying what
it was inferred from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tscontract.contract.units import UnitError, check_unit
from tscontract.engines.duckdb import connect
from tscontract.engines.inputs.sources import SOURCE_VIEW, open_source
from tscontract.engines.inputs.tables import sampled
from tscontract.engines.sandbox import lock
from tscontract.errors import InputError
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


@dataclass
class Draft:
    """The inferred contract and catalog as plain data, ready to write as YAML."""

    name: str
    columns: list[Column]
    time_column: str
    series_column: str | None
    key: list[str]
    precision: str
    cadence: str | None
    cadence_note: str
    calendar: str | None = None  # time.calendar: the exchange calendar whose sessions hold every bar
    calendar_note: str = ""
    catalog: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (clause, what it was inferred from[, severity])
    invariants: list[tuple[str, ...]] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)

    def contract_yaml(self) -> str:
        lines = [
            "# Drafted by tscontract init from a sample; every inferred clause says what it was inferred from.",
            f"contract: {self.name}",
            "version: 0.1.0",
            "owner: TODO@example",
            f"key: [{', '.join(self.key)}]",
            "time:",
            f"  column: {self.time_column}",
            f"  precision: {self.precision}",
            "  timezone: UTC instant",
        ]
        if self.cadence is not None:
            lines.append(f"  cadence: {self.cadence}   # {self.cadence_note}")
        if self.calendar is not None:
            lines.append(f"  calendar: {self.calendar}   # {self.calendar_note}")
        lines.append("fields:")
        for column in self.columns:
            parts = [f"type: {column.type}", f"nullable: {'true' if column.nullable else 'false'}"]
            if column.unit is not None:
                unit = column.unit if re.fullmatch(r"[A-Za-z]+", column.unit) else f'"{column.unit}"'
                parts.append(f"unit: {unit}")
            if column.constraint is not None:
                parts.append(f"constraint: {_quoted(column.constraint)}")
            parts.append(f"note: {_quoted(column.note)}")
            lines.append(f"  {column.name}: {{{', '.join(parts)}}}")
        if self.provenance:
            lines.append(f"provenance_required: [{', '.join(self.provenance)}]")
        if self.invariants:
            lines.append("invariants:")
            for clause, note, *severity in self.invariants:
                level = f", severity: {severity[0]}" if severity else ""
                lines.append(f"  - {{clause: {_quoted(clause)}{level}, note: {_quoted(note)}}}")
        return "\n".join(lines) + "\n"

    def catalog_yaml(self) -> str | None:
        if not self.catalog:
            return None
        lines = ["# Drafted by tscontract init from a sample.", f"catalog: {self.name}", "series:"]
        for series, entry in sorted(self.catalog.items()):
            lines.append(f"  {_quoted(series)}:")
            for key, value in entry.items():
                if key == "calibrations":
                    lines.append("    calibrations:")
                    for cal_id, start, end in value:
                        lines.append(f"      - id: {_quoted(cal_id)}")
                        lines.append(f'        valid_from: "{start}"')
                        if end is not None:
                            lines.append(f'        valid_to: "{end}"')
                elif isinstance(value, list):
                    lines.append(f"    {key}: [{', '.join(str(v) for v in value)}]")
                else:
                    lines.append(f"    {key}: {value}")
        return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


SAMPLE_TABLE_ROWS = 100_000  # rows of an iceberg:// or delta:// table a draft is inferred from (its first)


def infer(
    data: list[str | Path],
    *,
    name: str,
    time_column: str | None = None,
    series_column: str | None = None,
) -> Draft:
    """A draft contract (and catalog) for the sample ``data``."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", name):
        raise InputError(f"contract name {name!r} must start with a letter and use letters, digits, '_', '.', '-'")
    con = connect()
    try:
        source = open_source(con, sampled([str(p) for p in data], SAMPLE_TABLE_ROWS))
        lock(con, source.paths)  # the sample's own column names end up in SQL: nothing else readable
        counted = con.execute(f"SELECT count(*) FROM {SOURCE_VIEW}").fetchone()
        rows = counted[0] if counted is not None else 0  # count(*) gives one row
        if not rows:
            raise InputError("the sample holds no rows: nothing to infer from")
        stats = _profile(con, source.columns, source.text)
        columns = [_column(n, t, source.text, rows, stats[n]) for n, t in source.columns.items()]
        draft = _draft(con, name, columns, rows, time_column, series_column)
    finally:
        con.close()
    return draft


ENUM_MAX = 12  # a text column with at most this many distinct values, each repeated, is read as a set


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
                f"max(length(regexp_extract({v}, '^[+-]?0*([0-9]+)', 1)))",
                f"max(length(regexp_extract({v}, '\\.([0-9]+)$', 1)))",
                f"max(length(regexp_extract({v}, ':[0-9]{{2}}\\.([0-9]+)', 1)))",
                f"count(DISTINCT {v})",
                f"CASE WHEN count(DISTINCT {v}) <= {ENUM_MAX} THEN list_sort(list(DISTINCT {v})) END",
            ]
        elif is_instant_type(kind) and is_nanosecond_type(kind):
            parts += [f"bool_and(epoch_ns({c}) % {10**k} = 0)" for k in (9, 6, 3)]
        elif is_instant_type(kind):
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


def _column(name: str, physical: str, text: bool, rows: int, stats: tuple[Any, ...]) -> Column:
    nulls = int(stats[0])
    nullable = bool(nulls)
    seen = f"{rows - nulls} values, {nulls} null" if nulls else f"{rows} values, none null"
    if _is_text(physical, text):
        column = _text_column(name, nullable, seen, stats[1:])
        column.values = rows - nulls
        return column
    upper = physical.upper()
    if upper.startswith("DECIMAL"):
        dtype = "decimal" + upper[len("DECIMAL") :].replace(" ", "")
    elif is_instant_type(physical):  # a zone in the file (UTC, Europe/Berlin, +05:30): an instant all the same
        whole_s, whole_ms, whole_us = stats[1:4]
        dtype = f"timestamp_{'s' if whole_s else 'ms' if whole_ms else 'us' if whole_us else 'ns'}_utc"
    elif upper.startswith("TIMESTAMP"):
        raise InputError(
            f"column {name!r} holds timestamps without a UTC offset ({physical}): tscontract does not guess a "
            "zone; convert them to UTC instants first (a mapping with zone:)"
        )
    else:
        found = duckdb_reads(upper)
        if found is None:
            raise InputError(f"column {name!r}: no contract type for the file's type {physical}")
        dtype = found
    return Column(name, dtype, nullable, f"file type {physical}; {seen}", _unit(name))


def _text_column(name: str, nullable: bool, seen: str, stats: tuple[Any, ...]) -> Column:
    is_int, is_dec, is_float, is_bool, is_instant, is_naive, int_digits, scale, fraction, _, members = stats
    unit = _unit(name)
    if is_bool:
        return Column(name, "bool", nullable, f"every value true/false; {seen}")
    if is_instant:
        precision = _PRECISION.get(int(fraction or 0), "ns")
        return Column(
            name,
            f"timestamp_{precision}_utc",
            nullable,
            f"UTC instants, {fraction or 0} fraction digits written; {seen}",
        )
    if is_naive:
        raise InputError(
            f"column {name!r} holds timestamps without a UTC offset or Z: tscontract does not guess a zone; "
            "convert them to UTC instants first (a mapping with zone:)"
        )
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
    con: Any, name: str, columns: list[Column], rows: int, time_column: str | None, series_column: str | None
) -> Draft:
    by_name = {c.name: c for c in columns}
    instants = [c.name for c in columns if c.type.startswith("timestamp")]
    if time_column is None:
        if len(instants) != 1:
            found = ", ".join(instants) or "none"
            raise InputError(f"say which column is the time column (--time-column); UTC-instant columns: {found}")
        time_column = instants[0]
    if time_column not in by_name or not by_name[time_column].type.startswith("timestamp"):
        raise InputError(f"--time-column {time_column}: not a UTC-instant column of the sample ({', '.join(instants)})")
    t = ident(time_column)
    texts = [c.name for c in columns if c.type == "string" and c.name != time_column]
    revision = ["revision"] if "revision" in by_name and by_name["revision"].type.startswith("int") else []
    if series_column is None:
        series_column = _series_candidate(con, texts, [t, *map(ident, revision)], rows)
    elif series_column not in texts:
        raise InputError(f"--series-column {series_column}: not a text column of the sample ({', '.join(texts)})")
    key = [k for k in (series_column, time_column) if k is not None]
    if not _unique(con, key):
        if revision and _unique(con, [*key, *revision]):
            key += revision
        else:
            raise InputError(f"({', '.join(key)}) repeats in the sample and no revision column tells the copies apart")
    for k in key:
        by_name[k].nullable = False
    precision = by_name[time_column].type.split("_")[1]
    draft = Draft(name, columns, time_column, series_column, key, precision, None, "")
    draft.provenance = [c for c in PROVENANCE if c in by_name]
    _sets(draft)
    _cadence(con, draft)
    _bounds(con, draft)
    if "calibration_id" in by_name and series_column is not None:
        _calibrations(con, draft)
    return draft


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
    t, s, k = _typed_time(draft), ident(draft.series_column or ""), ident("calibration_id")
    rows = con.execute(
        f"SELECT s, k, strftime(f, '%Y-%m-%dT%H:%M:%S.%gZ'), strftime(lead(f) OVER (PARTITION BY s ORDER BY f), "
        f"'%Y-%m-%dT%H:%M:%S.%gZ') FROM (SELECT {s} AS s, {k} AS k, min({t}) AS f FROM {SOURCE_VIEW} "
        f"WHERE {k} IS NOT NULL GROUP BY 1, 2) ORDER BY s, f"
    ).fetchall()
    for series_id, cal_id, start, end in rows:
        draft.catalog.setdefault(str(series_id), {}).setdefault("calibrations", []).append((str(cal_id), start, end))


def _series_candidate(con: Any, texts: list[str], rest: list[str], rows: int) -> str | None:
    """The text column with the fewest distinct values that, with the time (and revision), identifies a row
    (every candidate measured in one pass)."""
    if not texts:
        return None
    exprs = [f"count(DISTINCT {ident(n)}), count(DISTINCT ({ident(n)}, {', '.join(rest)})) = count(*)" for n in texts]
    row = con.execute(f"SELECT {', '.join(exprs)} FROM {SOURCE_VIEW}").fetchone()
    best: tuple[int, str] | None = None
    for i, name in enumerate(texts):
        distinct, unique = row[2 * i], row[2 * i + 1]
        if unique and distinct < rows and (best is None or distinct < best[0]):
            best = (int(distinct), name)
    return best[1] if best else None


def _unique(con: Any, key: list[str]) -> bool:
    cols = ", ".join(ident(k) for k in key)
    return bool(con.execute(f"SELECT count(DISTINCT ({cols})) = count(*) FROM {SOURCE_VIEW}").fetchone()[0])


def _typed_time(draft: Draft) -> str:
    """The time column as instants: text (CSV) is cast, a file's instants stay as they are."""
    return f"CAST({ident(draft.time_column)} AS TIMESTAMPTZ)"


def _cadence(con: Any, draft: Draft) -> None:
    """Median interval per series (distinct instants); one for all, else per series in the catalog."""
    series = ident(draft.series_column) if draft.series_column else "'*'"
    t = _typed_time(draft)
    rows = con.execute(
        f"SELECT s, median(d), max(abs(d - m)), count(*) FILTER (WHERE abs(d - m) > m / 10) FROM (SELECT s, d, "
        "median(d) OVER (PARTITION BY s) AS m "
        f"FROM (SELECT s, epoch_ms(u) - epoch_ms(lag(u) OVER (PARTITION BY s ORDER BY u)) AS d FROM "
        f"(SELECT DISTINCT {series} AS s, {t} AS u FROM {SOURCE_VIEW} WHERE {t} IS NOT NULL)) WHERE d IS NOT NULL) "
        "GROUP BY s ORDER BY s"
    ).fetchall()
    if not rows:
        draft.cadence_note = "one point per series: no interval to measure"
        return
    medians = {str(s): int(m) for s, m, _, _ in rows}
    spread = max(int(x) for _, _, x, _ in rows)
    gaps = sum(int(g) for _, _, _, g in rows)
    if gaps:  # intervals far from the median: sessions, outages or an irregular series
        if len(set(medians.values())) == 1 and _sessions(con, draft, next(iter(medians.values()))):
            return
        draft.cadence = "irregular"
        draft.cadence_note = (
            f"median interval {', '.join(sorted({_duration(m) for m in medians.values()}))}, but {gaps} interval(s) "
            "differ from it by more than 10% (sessions? write e.g. '60s within session' with a calendar)"
            + (f"; {draft.calendar_note}" if draft.calendar_note else "")
        )
        draft.calendar_note = ""
        return
    tolerance = f"; tolerance +/-{_duration(spread)}" if spread else ""
    if len(set(medians.values())) == 1:
        interval = next(iter(medians.values()))
        if interval <= 0:
            return
        draft.cadence = f"{_duration(interval)}{tolerance}"
        draft.cadence_note = f"median interval of every series; largest deviation {spread} ms"
        return
    draft.cadence = f"per series from catalog{tolerance}"
    draft.cadence_note = f"median interval per series differs ({len(set(medians.values()))} intervals)"
    for series_id, interval in medians.items():
        draft.catalog.setdefault(series_id, {})["cadence"] = _duration(interval)


# calendars tried when bars stop and start again: the venues most market data comes from (regular sessions)
SESSION_CANDIDATES = (
    "XNYS",
    "XNAS",
    "XTSE",
    "XLON",
    "XETR",
    "XPAR",
    "XSWX",
    "XTKS",
    "XHKG",
    "XASX",
    "XSHG",
    "XBOM",
)
_SESSIONS_TABLE = "__tsc_init_sessions"


# one calendar's fit to one series (or their totals): bars, bars inside its regular sessions, sessions of the
# sample's span, sessions whole and regular
_SessionFit = tuple[int, int, int, int]


def _sessions(con: Any, draft: Draft, interval: int) -> bool:
    """Whether exchange sessions explain the gaps: a calendar whose regular sessions hold every bar of
    every series, each session of the sample's span whole (first bar less than one interval after the
    open, the last at most one interval before the close) and regular inside. Sets the cadence and
    the calendar (or per series calendars in the catalog) with the evidence; else leaves a note."""
    from tscontract.engines import calendars
    from tscontract.engines.relations import small_table
    from tscontract.errors import InputError as CalendarMissing

    if interval <= 0 or interval >= 86_400_000:
        return False
    t = _typed_time(draft)
    span = con.execute(f"SELECT min({t}), max({t}) FROM {SOURCE_VIEW}").fetchone()
    try:
        rows = calendars.sessions(SESSION_CANDIDATES, span[0], span[1])
    except CalendarMissing as exc:
        draft.calendar_note = f"exchange sessions not tested: {exc}"
        return False
    small_table(con, _SESSIONS_TABLE, calendars.COLUMNS, rows)
    by_series, tolerance = _session_fits(con, draft, interval, t)
    if not by_series:
        return False
    choice = _choose_calendars(draft, by_series)
    if choice is None:
        return False
    chosen, common = choice
    spread = max(tolerance[(s, c)] for s, c in chosen.items())
    rule = f"{_duration(interval)} within session; no bars outside session"
    draft.cadence = rule + (f"; tolerance +/-{_duration(spread)}" if spread else "")
    draft.cadence_note = f"median interval {_duration(interval)} inside sessions; the gaps are between sessions" + (
        "" if common else " (each series' calendar in the catalog)"
    )
    return True


def _session_fits(
    con: Any, draft: Draft, interval: int, t: str
) -> tuple[dict[str, dict[str, _SessionFit]], dict[tuple[str, str], int]]:
    """Per series, each candidate calendar's fit; and per (series, calendar) the largest deviation from
    ``interval`` inside a session."""
    series = ident(draft.series_column) if draft.series_column else "'*'"
    fits = con.execute(
        f"""
        WITH bars AS (SELECT DISTINCT {series} AS s, {t} AS u FROM {SOURCE_VIEW} WHERE {t} IS NOT NULL),
        span AS (SELECT s, min(u) AS lo, max(u) AS hi, count(*) AS n FROM bars GROUP BY s),
        hit AS (
            SELECT b.s, c.calendar, c.open, c.close, b.u,
                epoch_ms(b.u) - epoch_ms(lag(b.u) OVER (PARTITION BY b.s, c.calendar, c.open ORDER BY b.u)) AS d
            FROM bars b JOIN {_SESSIONS_TABLE} c ON b.u >= c.open AND b.u < c.close),
        per_session AS (
            SELECT s, calendar, open, count(*) AS k,
                bool_and(d IS NULL OR abs(d - {interval}) <= {interval} / 10) AS regular,
                coalesce(max(abs(d - {interval})), 0) AS deviation,
                epoch_ms(min(u)) - epoch_ms(open) < {interval} AND epoch_ms(close) - epoch_ms(max(u)) <= {interval}
                    AS whole
            FROM hit GROUP BY s, calendar, open, close),
        expected AS (
            SELECT sp.s, sp.n, c.calendar, c.open FROM span sp
            JOIN {_SESSIONS_TABLE} c ON c.close > sp.lo AND c.open <= sp.hi)
        SELECT e.s, e.calendar, any_value(e.n), coalesce(sum(p.k), 0), count(*),
            count(*) FILTER (WHERE p.whole AND p.regular), coalesce(max(p.deviation), 0)
        FROM expected e LEFT JOIN per_session p USING (s, calendar, open)
        GROUP BY e.s, e.calendar
        """
    ).fetchall()
    by_series: dict[str, dict[str, _SessionFit]] = {}
    tolerance: dict[tuple[str, str], int] = {}
    for s, calendar, n, inside, sessions, whole, deviation in fits:
        by_series.setdefault(str(s), {})[calendar] = (int(n), int(inside), int(sessions), int(whole))
        tolerance[(str(s), calendar)] = int(deviation)
    return by_series, tolerance


def _fits_whole(fit: _SessionFit) -> bool:
    return fit[1] == fit[0] and fit[3] == fit[2]


def _session_rank(fit: _SessionFit, name: str) -> tuple[float, float, int]:
    return (-fit[1] / fit[0], -fit[3] / fit[2], SESSION_CANDIDATES.index(name))


def _choose_calendars(draft: Draft, by_series: dict[str, dict[str, _SessionFit]]) -> tuple[dict[str, str], bool] | None:
    """One calendar for every series when one fits them all (True), else each series its own (False), set on
    the draft with the evidence; None (and a note) when a series fits none."""

    def total(c: str) -> _SessionFit:
        n, inside, sessions, whole = (sum(f[c][i] for f in by_series.values() if c in f) for i in range(4))
        return n, inside, sessions, whole

    totals = {c: total(c) for c in SESSION_CANDIDATES}
    common = [c for c in SESSION_CANDIDATES if all(c in f and _fits_whole(f[c]) for f in by_series.values())]
    if common:
        calendar = common[0]
        draft.calendar = calendar
        draft.calendar_note = _session_evidence(calendar, totals, common[1:], _session_rank, len(by_series))
        return dict.fromkeys(by_series, calendar), True
    chosen: dict[str, str] = {}
    for s, found in sorted(by_series.items()):
        best = min(found, key=lambda c: _session_rank(found[c], c))
        if not _fits_whole(found[best]):
            who = "" if s == "*" else f"{s}: "
            evidence = _session_evidence(best, found, [], _session_rank, 1)
            draft.calendar_note = f"{who}closest exchange calendar {evidence}"
            return None
        chosen[s] = best
        draft.catalog.setdefault(s, {})["calendar"] = best
    return chosen, False


def _session_evidence(
    calendar: str, fits: dict[str, tuple[int, int, int, int]], ties: list[str], rank: Any, series: int
) -> str:
    """``XNYS: 3360 of 3360 bars inside its regular sessions, 44 of 44 sessions whole; ...``."""
    n, inside, sessions, whole = fits[calendar]
    text = f"{calendar}: {inside} of {n} bars inside its regular sessions, {whole} of {sessions} sessions whole"
    text += f" ({series} series)" if series > 1 else ""
    if ties:
        text += f"; {', '.join(ties)} fit{'s' if len(ties) == 1 else ''} equally ({calendar} listed first)"
    others = sorted((c for c in fits if c != calendar and c not in ties and fits[c][0]), key=lambda c: rank(fits[c], c))
    if others:
        o = fits[others[0]]
        text += f"; next best {others[0]}: {o[1]} of {o[0]} bars inside, {o[3]} of {o[2]} sessions whole"
    return text


def _duration(ms: int) -> str:
    if ms % 1000:
        return f"{ms}ms"
    seconds = ms // 1000
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    if seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"


def _bounds(con: Any, draft: Draft) -> None:
    """Bounds per series for the measured (unit-bearing) numeric column, in one pass: hard bounds, the
    sample's range widened by that range on each side; plausibility bounds (a warning), the 1st to 99th
    percentile widened by half their spread, within the hard bounds."""
    if draft.series_column is None:
        return
    measured = [c for c in draft.columns if c.unit is not None and c.type.startswith(("decimal", "int", "float"))]
    if len(measured) != 1:  # catalog bounds are per series, for the one measured value
        return
    column = measured[0]
    c = f"CAST({ident(column.name)} AS DOUBLE)"
    rows = con.execute(
        f"SELECT {ident(draft.series_column)}, min({c}), max({c}), quantile_cont({c}, 0.01), "
        f"quantile_cont({c}, 0.99) FROM {SOURCE_VIEW} WHERE {c} IS NOT NULL GROUP BY 1"
    ).fetchall()
    for series_id, low_value, high_value, p01, p99 in rows:
        low, high = Decimal(repr(low_value)), Decimal(repr(high_value))  # the shortest text of each double
        width = (high - low) or abs(high) or Decimal(1)
        hard = (low - width, high + width)
        entry = draft.catalog.setdefault(str(series_id), {})
        entry["hard_bounds"] = [_number(hard[0]), _number(hard[1])]
        entry["plausibility_bounds"] = [_number(b) for b in _plausible(Decimal(repr(p01)), Decimal(repr(p99)), hard)]
    series = draft.series_column
    draft.invariants.append(
        (
            f"{column.name} within catalog hard_bounds for {series}",
            f"hard_bounds: each series' range of {column.name} in the sample, widened by that range",
        )
    )
    draft.invariants.append(
        (
            f"{column.name} within catalog plausibility_bounds for {series}",
            f"plausibility_bounds: each series' 1st to 99th percentile of {column.name} in the sample, widened by "
            "half their spread (rounded outward to 3 significant digits of it), within the hard bounds",
            "warning",
        )
    )


def _plausible(p01: Decimal, p99: Decimal, hard: tuple[Decimal, Decimal]) -> tuple[Decimal, Decimal]:
    """[p01, p99] widened by half its spread, rounded outward at a tenth of a percent of the spread."""
    from decimal import ROUND_CEILING, ROUND_FLOOR

    spread = (p99 - p01) or abs(p99) / 10 or Decimal(1)
    quantum = Decimal(1).scaleb(spread.adjusted() - 2)
    low = (p01 - spread / 2).quantize(quantum, rounding=ROUND_FLOOR)
    high = (p99 + spread / 2).quantize(quantum, rounding=ROUND_CEILING)
    return max(low, hard[0]), min(high, hard[1])


def _number(value: Decimal) -> str:
    return format(value.normalize(), "f")
