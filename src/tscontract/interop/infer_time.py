"""``tscontract init``: the sample's time: written times to instants, repeated keys, the cadence and its gaps.

- **written times**: local wall-clock times (``--timezone ZONE``) and times with offsets (``+01:00``) are
  converted to UTC instants in SQL before anything else is measured, by the same rules the drafted
  mapping states (``engines/inputs/local_time.py``: a time repeated when clocks go back, written twice
  in order, is the earlier instant at its first row and the later at its second; a time that does not
  exist fails). The converted sample replaces the source view: every later question sees instants.
- **duplicates**: a key held by several rows is reported with its rows (1-based, file order) and
  their values, the first few only; the key stays and ``key.unique`` fails them.
- **cadence**: the dominant interval per series (the most frequent one, with intervals within 10% of
  it as jitter). A regular series with a few holes keeps its interval, the holes reported as gaps;
  when holes are most of the span, exchange sessions are tried (infer_sessions.py), else ``irregular``.
"""

from __future__ import annotations

from typing import Any

from tscontract.engines.inputs.local_time import resolve_local
from tscontract.engines.inputs.sources import SOURCE_VIEW
from tscontract.interop.draft import Column, Draft, Duplicate, Gap, duration, series_sql, typed_time
from tscontract.interop.infer_sessions import sessions_fit
from tscontract.shown import cut, visible
from tscontract.sql.columns import ident, sql_string

SAMPLE_TABLE = "__tsc_init_sample"
ROW = "__tsc_init_row"
SHOWN = 5  # duplicates and gaps listed at most
_UTC_TEXT = {"s": "%Y-%m-%dT%H:%M:%SZ", "ms": "%Y-%m-%dT%H:%M:%S.%gZ", "us": "%Y-%m-%dT%H:%M:%S.%fZ"}
GAPS_AT_MOST = 0.05  # holes up to this share of a series' points: a regular series with gaps


def number_rows(con: Any, has_row_number: bool) -> None:
    """The sample as a table with its rows numbered from 1 in file order; the source view reads it."""
    row = "__row" if has_row_number else "row_number() OVER ()"
    rest = "* EXCLUDE (__row)" if has_row_number else "*"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {SAMPLE_TABLE} AS SELECT {row} AS {ROW}, {rest} FROM {SOURCE_VIEW}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM {SAMPLE_TABLE}")


def to_instants(con: Any, columns: list[Column], zone: str | None, series: str | None) -> list[str]:
    """Convert the columns written as local times (in ``zone``) or with offsets to UTC instant text, in
    place; the local times no instant could be had for (a few, as written)."""
    written = [c for c in columns if c.written is not None]
    if not written:
        return []
    by = f"CAST({ident(series)} AS VARCHAR), " if series else ""
    ranks, replaced, reasons = [], [], []
    for i, column in enumerate(written):
        c = ident(column.name)
        fmt = _UTC_TEXT.get(column.type.split("_")[1], _UTC_TEXT["us"])
        if column.written == "offset":
            instant = f"CAST({c} AS TIMESTAMPTZ)"
        else:
            local = f"TRY_CAST({c} AS TIMESTAMP)"
            ranks.append(
                f"row_number() OVER (PARTITION BY {by}{local} ORDER BY {ROW}) AS __r{i}, "
                f"count(*) OVER (PARTITION BY {by}{local}) AS __n{i}"
            )
            resolved = resolve_local(local, zone or "UTC", ambiguous="file_order", occurrence=(f"__r{i}", f"__n{i}"))
            instant = resolved.instant
            reasons.append(f"CASE WHEN {c} IS NOT NULL AND ({instant}) IS NULL THEN {c} END")
        replaced.append(f"strftime(timezone('UTC', {instant}), '{fmt}') AS {c}")
    ranked = f"SELECT *{''.join(', ' + r for r in ranks)} FROM {SAMPLE_TABLE}"
    drop = ", ".join([f"__r{i}, __n{i}" for i, c in enumerate(written) if c.written == "local"])
    exclude = f" EXCLUDE ({drop})" if drop else ""
    failed = f", coalesce({', '.join(reasons)}) AS __tsc_unresolved" if reasons else ", NULL AS __tsc_unresolved"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE __tsc_init_converted AS SELECT *{exclude} REPLACE ({', '.join(replaced)})"
        f"{failed} FROM ({ranked})"
    )
    view = "SELECT * EXCLUDE (__tsc_unresolved) FROM __tsc_init_converted"
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS {view}")
    rows = con.execute(
        f"SELECT __tsc_unresolved FROM __tsc_init_converted WHERE __tsc_unresolved IS NOT NULL ORDER BY {ROW} "
        f"LIMIT {SHOWN}"
    ).fetchall()
    return [_shown(r[0]) for r in rows]


FILE_SERIES = "series_id"


def file_series(con: Any, draft_columns: list[Column], data: list[str]) -> str | None:
    """One file, no series column: the file's name names the series (one meter per file), a column of the
    sample here and a ``file_name`` rule of the mapping; its regular expression, or None when the file
    name cannot serve (several files, a table, a column of that name)."""
    import re
    from pathlib import Path

    if len(data) != 1 or "::" in data[0] or "://" in data[0] or any(c.name == FILE_SERIES for c in draft_columns):
        return None
    path = Path(data[0])
    if not path.stem:
        return None
    con.execute(f"ALTER TABLE {SAMPLE_TABLE} ADD COLUMN {FILE_SERIES} VARCHAR DEFAULT {sql_string(path.stem)}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM {SAMPLE_TABLE}")
    note = f"the file's name ({path.name}): one series per file, taken by the mapping's file_name rule"
    draft_columns.insert(0, Column(FILE_SERIES, "string", False, note))
    return "^(?P<series>.+)" + re.escape(path.suffix) + "$"


def series_candidate(con: Any, texts: list[str], time: str, revision: list[str], rows: int) -> str | None:
    """The text column with the fewest distinct values that, with the time (and revision), identifies nearly
    every row (a few repeats are duplicates, reported apart); one that adds nothing to the time alone
    only when it holds one value (a meter's or a station's id). Every candidate measured in one pass."""
    if not texts:
        return None
    rest = ", ".join([time, *map(ident, revision)])
    exprs = [f"count(DISTINCT ({rest}))"]
    exprs += [f"count(DISTINCT {ident(n)}), count(DISTINCT ({ident(n)}, {rest}))" for n in texts]
    row = con.execute(f"SELECT {', '.join(exprs)} FROM {SOURCE_VIEW}").fetchone()
    alone, allowed = int(row[0]), max(1, rows // 100)
    best: tuple[int, str] | None = None
    for i, name in enumerate(texts):
        distinct, pairs = int(row[1 + 2 * i]), int(row[2 + 2 * i])
        if pairs < rows - allowed or distinct >= rows or (pairs == alone and distinct != 1):
            continue
        if best is None or distinct < best[0]:
            best = (distinct, name)
    return best[1] if best else None


def duplicates(con: Any, draft: Draft, key: list[str]) -> None:
    """The keys the sample holds more than once: how many, and the first few with their rows and values."""
    cols = ", ".join(ident(k) for k in key)
    others = [c.name for c in draft.columns if c.name not in key]
    values = ", ".join(f"CAST({ident(c)} AS VARCHAR)" for c in others) or "NULL"
    found = con.execute(
        f"SELECT count(*) OVER (), {', '.join(f'CAST({ident(k)} AS VARCHAR)' for k in key)}, "
        f"list({ROW} ORDER BY {ROW})[1:{SHOWN}], list([{values}] ORDER BY {ROW})[1:{SHOWN}] "
        f"FROM {SOURCE_VIEW} GROUP BY {cols} HAVING count(*) > 1 ORDER BY min({ROW}) LIMIT {SHOWN}"
    ).fetchall()
    draft.duplicate_keys = int(found[0][0]) if found else 0
    for _, *rest in found:
        key_values, rows, row_values = rest[: len(key)], rest[len(key)], rest[len(key) + 1]
        draft.duplicates.append(
            Duplicate(
                dict(zip(key, map(_shown, key_values), strict=True)),
                [int(r) for r in rows],
                [dict(zip(others, map(_shown, v), strict=True)) for v in row_values] if others else [],
            )
        )


def _shown(value: object) -> str:
    """A value of the sample as shown: its control characters visible, cut to a bounded length."""
    return cut(visible(str(value)))


def cadence(con: Any, draft: Draft) -> None:
    """The dominant interval per series; one for all, else per series in the catalog; the gaps listed."""
    t = typed_time(draft)
    points = (
        f"SELECT s, u, epoch_ms(u) - epoch_ms(lag(u) OVER (PARTITION BY s ORDER BY u)) AS d FROM "
        f"(SELECT DISTINCT {series_sql(draft)} AS s, {t} AS u FROM {SOURCE_VIEW} WHERE {t} IS NOT NULL)"
    )
    histogram = con.execute(
        f"SELECT s, d, count(*) FROM ({points}) WHERE d IS NOT NULL GROUP BY s, d ORDER BY s, count(*) DESC, d"
    ).fetchall()
    if not histogram:
        draft.cadence_note = "one point per series: no interval to measure"
        return
    per_series: dict[str, list[tuple[int, int]]] = {}
    for s, d, n in histogram:
        per_series.setdefault(str(s), []).append((int(d), int(n)))
    fits = {s: _dominant(intervals) for s, intervals in per_series.items()}
    if any(f is None for f in fits.values()):
        _irregular(con, draft, per_series)
        return
    dominant = {s: f[0] for s, f in fits.items() if f is not None}
    spread = max(f[1] for f in fits.values() if f is not None)
    holes = sum(f[2] for f in fits.values() if f is not None)
    tolerance = f"; tolerance +/-{duration(spread)}" if spread else ""
    if holes:
        _gaps(con, draft, points, dominant)
    gaps = f"; {draft.gap_count} gap(s), {holes} point(s) missing: time.cadence reports them" if holes else ""
    if len(set(dominant.values())) == 1:
        interval = next(iter(dominant.values()))
        draft.cadence = f"{duration(interval)}{tolerance}"
        draft.cadence_note = f"the interval between most consecutive points; largest deviation {spread} ms{gaps}"
        return
    draft.cadence = f"per series from catalog{tolerance}"
    kinds = len(set(dominant.values()))
    draft.cadence_note = f"the most frequent interval differs per series ({kinds} intervals){gaps}"
    for series_id, interval in dominant.items():
        draft.catalog.setdefault(series_id, {})["cadence"] = duration(interval)


def _dominant(intervals: list[tuple[int, int]]) -> tuple[int, int, int] | None:
    """(interval, largest deviation within 10% of it, points missing in the holes) when one interval
    dominates: no interval shorter than it by more than 10%, the longer ones holes of at most
    ``GAPS_AT_MOST`` of the points; else None."""
    interval = intervals[0][0]
    if interval <= 0:
        return None
    near = [(d, n) for d, n in intervals if abs(d - interval) * 10 <= interval]
    shorter = [d for d, _ in intervals if d * 10 < interval * 9]
    longer = [(d, n) for d, n in intervals if d * 10 > interval * 11]
    missing = sum(max(1, round(d / interval) - 1) * n for d, n in longer)
    points = sum(n for _, n in intervals) + 1
    if shorter or missing > GAPS_AT_MOST * points:
        return None
    return interval, max(abs(d - interval) for d, _ in near), missing


def _gaps(con: Any, draft: Draft, points: str, dominant: dict[str, int]) -> None:
    """The holes: after which point, before which, how many points missing; the first few listed."""
    lengths = " ".join(f"WHEN {sql_string(s)} THEN {d}" for s, d in dominant.items())
    expected = f"(CASE CAST(s AS VARCHAR) {lengths} END)"
    rows = con.execute(
        f"SELECT count(*) OVER (), CAST(s AS VARCHAR), strftime(timezone('UTC', u - to_milliseconds(d)), "
        f"'%Y-%m-%dT%H:%M:%SZ'), strftime(timezone('UTC', u), '%Y-%m-%dT%H:%M:%SZ'), "
        f"greatest(1, round(d / {expected}) - 1) FROM ({points}) WHERE d * 10 > {expected} * 11 "
        f"ORDER BY u LIMIT {SHOWN}"
    ).fetchall()
    draft.gap_count = int(rows[0][0]) if rows else 0
    draft.gaps = [Gap(str(s), str(a), str(b), int(m)) for _, s, a, b, m in rows]


def _irregular(con: Any, draft: Draft, per_series: dict[str, list[tuple[int, int]]]) -> None:
    """No interval dominates: exchange sessions when one median interval is broken only between sessions,
    else ``irregular`` (with the closest calendar when one was tried)."""
    medians = {s: _median(intervals) for s, intervals in per_series.items()}
    if len(set(medians.values())) == 1 and sessions_fit(con, draft, next(iter(medians.values()))):
        return
    draft.cadence = "irregular"
    draft.cadence_note = (
        f"median interval {', '.join(sorted({duration(m) for m in medians.values()}))}, but no interval "
        "holds most of the points" + (f"; {draft.calendar_note}" if draft.calendar_note else "")
    )
    draft.calendar_note = ""


def _median(intervals: list[tuple[int, int]]) -> int:
    ordered = sorted(intervals)
    half, seen = sum(n for _, n in ordered) / 2, 0
    for d, n in ordered:
        seen += n
        if seen >= half:
            return d
    return ordered[-1][0]
