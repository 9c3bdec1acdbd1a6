"""Peer: the full contract checked by hand with DuckDB (``sql-full``).

What an engineer writes without any tool to check everything the full-contract tscontract
peer checks on the bench data (examples/ohlcv_1m/contract.yaml with the generated catalog
bench/data/ohlcv_1m_catalog.yaml), in four steps:

1. **schema**: ``DESCRIBE`` of the file against the contract's columns and types (exact set
   of columns; ``DECIMAL(18,8)``, ``DECIMAL(24,4)``, a UTC ``TIMESTAMP WITH TIME ZONE``);
2. **compared row checks**: the hand-written query of ``handwritten_sql.py``, unchanged
   (invariants, nulls, ``adjusted``, duplicated keys);
3. **sessions**: the catalog read with PyYAML (symbol -> calendar), and a sessions table
   for each calendar the catalog names, over the days the file and the stated coverage
   touch (one row per session and UTC day it touches), from exchange-calendars; the
   sessions of each calendar and year are kept in ``bench/data/sessions/`` once built, as
   a pipeline keeps its sessions table (and tscontract its cache), so a warm run imports
   neither exchange-calendars nor pandas;
4. **time checks**, one statement over ``symbol, bar_start``: millisecond precision, every
   symbol in the catalog, bars outside every session (distinct ``(symbol, bar_start)``), and
   the cadence: within a session, a bar whose gap to the previous bar of its symbol and
   session is neither 0 (a duplicate or revision) nor 60 s; and the coverage, as the
   contract states it (``60s within session``), over the period the file covers (its first
   bar to its last minute, the truth file, as the tscontract peer passes ``coverage``): per
   symbol present and per session of its calendar the period touches, cut at the period's
   ends, a session without a bar (``whole session``), a first bar 60 s or more after the
   session opens, a last bar more than 60 s before it closes.

The cadence count is the sum of those four kinds, as tscontract's ``time.cadence`` counts
them; the kinds are returned apart under ``unmapped``. The results of 1, 3 and 4 are returned
under ``full`` with the keys of ``common.FULL_CHECKS``, which the runner compares with the
tscontract peer's.

Phases: ``schema``, ``row checks`` (step 2), ``sessions`` (catalog and calendar), ``time``.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import warnings
from pathlib import Path
from typing import Any

import duckdb

from peers.handwritten_sql import QUERY as ROW_CHECKS
from peers.tscontract_peer import CATALOG_NAME, covered

# The contract's fields as DuckDB reads them from Parquet: written down by hand from the YAML.
EXPECTED_TYPES = {
    "symbol": "VARCHAR",
    "bar_start": "TIMESTAMP WITH TIME ZONE",  # a UTC instant (precision: ms is a row check below)
    **{column: "DECIMAL(18,8)" for column in ("open", "high", "low", "close")},
    "volume": "DECIMAL(24,4)",
    "trade_count": "BIGINT",
    "adjusted": "BOOLEAN",
    "source_id": "VARCHAR",
    "ingest_run_id": "VARCHAR",
    "transform_version": "VARCHAR",
    "revision": "BIGINT",
}
# beside the data: the hand-written pipeline's sessions table, per calendar and year
SESSIONS_DIR = "sessions"
CADENCE_US = 60_000_000  # "60s within session; no bars outside session"


def available() -> tuple[bool, str]:
    """Whether PyYAML and exchange-calendars are installed (imported only when used)."""
    import importlib.util

    missing = [name for name in ("yaml", "exchange_calendars") if importlib.util.find_spec(name) is None]
    return (False, f"sql-full needs {', '.join(missing)}") if missing else (True, "")


def schema_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Columns missing, extra or not of the contract's type (DESCRIBE of the file)."""
    found = {row[0]: row[1] for row in con.execute("DESCRIBE src").fetchall()}
    problems = [f"missing {c}" for c in EXPECTED_TYPES if c not in found]
    problems += [f"extra {c}" for c in found if c not in EXPECTED_TYPES]
    problems += [
        f"{c} is {found[c]}, not {t}" for c, t in EXPECTED_TYPES.items() if c in found and found[c] != t
    ]
    return problems


def load_catalog(path: Path) -> dict[str, str]:
    """symbol -> exchange calendar (the catalog's ``calendar``, else its ``venue``)."""
    import yaml

    with path.open() as handle:
        catalog = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    series = catalog.get("series") or {}
    return {str(s): str(e.get("calendar") or e.get("venue")) for s, e in series.items()}


def year_sessions(name: str, year: int, cache: Path) -> list[tuple[str, str]]:
    """(open, close) as UTC ISO text of every session of calendar ``name`` in ``year``.

    Kept as a small JSON file per calendar and year under ``cache``, built from
    exchange-calendars when missing: the sessions table a pipeline keeps (tscontract keeps
    its own in its cache), so exchange-calendars and pandas are imported only to build it.
    """
    path = cache / f"{name}-{year}.json"
    if path.is_file():
        return [tuple(pair) for pair in json.loads(path.read_text())]
    import exchange_calendars as xcals

    with warnings.catch_warnings():  # exchange-calendars' use of pandas APIs pandas deprecates
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        schedule = xcals.get_calendar(name, start=f"{year}-01-01", end=f"{year}-12-31").schedule
    found = [(o.isoformat(), c.isoformat()) for o, c in zip(schedule["open"], schedule["close"], strict=True)]
    cache.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(found))
    partial.replace(path)
    return found


def session_rows(calendars: set[str], first: dt.date, last: dt.date, cache: Path) -> dict[str, list[Any]]:
    """Columns calendar, open, close: the sessions of ``first..last`` of each calendar."""
    columns: dict[str, list[Any]] = {"calendar": [], "open": [], "close": []}
    for name in sorted(calendars):
        for year in range(first.year, last.year + 1):
            for opens, closes in year_sessions(name, year, cache):
                if first.isoformat() <= opens[:10] <= last.isoformat():
                    columns["calendar"].append(name)
                    columns["open"].append(opens)
                    columns["close"].append(closes)
    return columns


TIME_CHECKS = f"""
WITH bars AS (
  SELECT b.symbol, b.bar_start AS t, c.calendar, c.symbol IS NULL AS uncatalogued,
         epoch_us(b.bar_start) % 1000 <> 0 AS sub_ms
  FROM read_parquet($path) b LEFT JOIN catalog c ON c.symbol = b.symbol
), located AS (  -- valid bars, with the session (if any) that holds them
  SELECT p.symbol, p.t, p.calendar, x.open
  FROM bars p LEFT JOIN sessions x
    ON x.calendar = p.calendar AND x.day = CAST(p.t AT TIME ZONE 'UTC' AS DATE)
   AND p.t >= x.open AND p.t < x.close
  WHERE p.t IS NOT NULL AND p.symbol IS NOT NULL AND NOT p.sub_ms
), gaps AS (
  SELECT epoch_us(t) - epoch_us(lag(t) OVER (PARTITION BY symbol, open ORDER BY t)) AS gap_us
  FROM located WHERE open IS NOT NULL
), per_session AS (
  SELECT symbol, open, min(t) AS first_bar, max(t) AS last_bar
  FROM located WHERE open IS NOT NULL GROUP BY ALL
), units AS (  -- per symbol present, the sessions of its calendar the covered period touches, cut at its ends
  SELECT s.symbol, x.open, greatest(x.open, $start) AS u_start, least(x.close, $end) AS u_end
  FROM (SELECT DISTINCT symbol, calendar FROM located) s
  JOIN (SELECT DISTINCT calendar, open, close FROM sessions) x ON x.calendar = s.calendar
  WHERE x.close > $start AND x.open < $end
), edges AS (
  SELECT count(*) FILTER (WHERE p.first_bar IS NULL) AS whole,
         count(*) FILTER (WHERE epoch_us(p.first_bar) - epoch_us(u.u_start) >= {CADENCE_US}) AS late_start,
         count(*) FILTER (WHERE epoch_us(u.u_end) - epoch_us(p.last_bar) > {CADENCE_US}) AS early_end
  FROM units u LEFT JOIN per_session p ON p.symbol = u.symbol AND p.open = u.open
)
SELECT
  (SELECT count(*) FILTER (WHERE sub_ms) FROM bars) AS precision,
  (SELECT count(*) FILTER (WHERE uncatalogued AND symbol IS NOT NULL) FROM bars) AS catalog,
  (SELECT count(DISTINCT (symbol, t)) FROM located WHERE open IS NULL) AS outside,
  (SELECT count(*) FROM gaps WHERE gap_us > 0 AND gap_us <> {CADENCE_US}) AS interior,
  edges.*
FROM edges
"""


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    phases: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name] = now - clock
        clock = now

    con = duckdb.connect()
    quoted = parquet_path.replace("'", "''")
    con.execute(f"CREATE VIEW src AS SELECT * FROM read_parquet('{quoted}')")
    problems = schema_problems(con)
    lap("schema")

    cursor = con.execute(ROW_CHECKS, {"path": parquet_path})
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    assert row is not None
    counts = {name: int(value) for name, value in zip(names, row, strict=True)}
    lap("row checks")

    catalog = load_catalog(Path(parquet_path).resolve().parent / CATALOG_NAME)
    con.execute(
        "CREATE TABLE catalog AS SELECT unnest($symbols) AS symbol, unnest($calendars) AS calendar",
        {"symbols": list(catalog), "calendars": list(catalog.values())},
    )
    start, end = covered(parquet_path)
    low, high = con.execute("SELECT min(bar_start), max(bar_start) FROM src").fetchone() or (None, None)
    first = min(d for d in (start, low) if d is not None).astimezone(dt.UTC).date() - dt.timedelta(days=1)
    last = max(d for d in (end, high) if d is not None).astimezone(dt.UTC).date() + dt.timedelta(days=1)
    cache = Path(parquet_path).resolve().parent / SESSIONS_DIR
    rows = session_rows(set(catalog.values()), first, last, cache)
    # one row per session and UTC day it touches: bars find their session by an equi-join on the day
    con.execute(
        "CREATE TABLE sessions AS SELECT calendar, open, close, unnest(generate_series("
        "CAST(open AT TIME ZONE 'UTC' AS DATE), "
        "CAST((close - INTERVAL 1 MICROSECOND) AT TIME ZONE 'UTC' AS DATE), "
        "INTERVAL 1 DAY))::DATE AS day FROM (SELECT unnest($calendar) AS calendar, "
        "unnest($open)::TIMESTAMPTZ AS open, unnest($close)::TIMESTAMPTZ AS close)",
        rows,
    )
    lap("sessions")

    cursor = con.execute(TIME_CHECKS, {"path": parquet_path, "start": start, "end": end})
    names = [d[0] for d in cursor.description]
    found = dict(zip(names, cursor.fetchone() or (), strict=True))
    con.close()
    lap("time")

    cadence = {
        "interior gaps": int(found["interior"]),
        "whole session": int(found["whole"]),
        "session start": int(found["late_start"]),
        "session end": int(found["early_end"]),
    }
    full = {
        "schema": int(bool(problems)),
        "time.precision": int(found["precision"]),
        "catalog.series": int(found["catalog"]),
        "time.session": int(found["outside"]),
        "time.cadence": sum(cadence.values()),
    }
    unmapped = {f"time.cadence ({kind})": n for kind, n in cadence.items()}
    unmapped.update({f"schema ({p})": 1 for p in problems})
    return {"counts": counts, "full": full, "phases": phases, "unmapped": unmapped}
