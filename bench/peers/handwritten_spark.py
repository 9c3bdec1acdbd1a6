"""Peer: the seed contract's checks written by hand in PySpark (``spark-hand``, issue #29).

What a competent engineer writes on Spark for the checks the full-contract tscontract peer runs
on the bench data, with the catalog read with PyYAML and the sessions from exchange-calendars
(the hand-written DuckDB peer's tables, ``handwritten_full_sql.py``):

* the input read once and cached (both passes read it);
* **one aggregate pass**: rows grouped by key (rows per key, and per key the rows failing each row
  check), then summed: the invariants, nulls, ``adjusted``, millisecond precision, uncatalogued
  symbols and the rows of duplicated keys, in one job;
* **one window pass**: bars located in their session (a broadcast equi-join on calendar and UTC day),
  the gap to the previous bar of the symbol and session (one window), bars outside every session, and
  the coverage's edges (per symbol present and per session the period touches, cut at its ends:
  a session without a bar, a first bar 60 s or more after the open, a last bar more than 60 s
  before the close), summed in the same action.

Counts are keyed as ``common.CHECKS`` and ``common.FULL_CHECKS``; the runner (bench/spark.py)
compares them with the ground truth and with tscontract's on Spark, in the same run.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from peers.common import (
    ADJUSTED_CHECK,
    NOT_NULL_COLUMNS,
    UNIQUE_KEY,
    check_not_null,
    check_unique,
)
from peers.handwritten_full_sql import CADENCE_US, SESSIONS_DIR, load_catalog, session_rows
from peers.tscontract_peer import CATALOG_NAME, covered

# each invariant as a Spark SQL predicate (a NULL operand does not fail it)
INVARIANT_SQL = {
    "low <= open <= high": "low <= open AND open <= high",
    "low <= close <= high": "low <= close AND close <= high",
    "volume >= 0": "volume >= 0",
    "trade_count is null or trade_count >= 0": "trade_count IS NULL OR trade_count >= 0",
}
EXPECTED_TYPES = {
    "symbol": "string",
    "bar_start": "timestamp",
    **{column: "decimal(18,8)" for column in ("open", "high", "low", "close")},
    "volume": "decimal(24,4)",
    "trade_count": "bigint",
    "adjusted": "boolean",
    "source_id": "string",
    "ingest_run_id": "string",
    "transform_version": "string",
    "revision": "bigint",
}


def _row_failures() -> dict[str, str]:
    """Check key -> the SQL condition that marks a row failing it."""
    found = {name: f"NOT coalesce(({sql}), TRUE)" for name, sql in INVARIANT_SQL.items()}
    found.update({check_not_null(c): f"{c} IS NULL" for c in NOT_NULL_COLUMNS})
    found[ADJUSTED_CHECK] = "adjusted <> false"
    found["time.precision"] = "unix_micros(bar_start) % 1000 <> 0"
    found["catalog.series"] = "symbol IS NOT NULL AND calendar IS NULL"
    return found


def aggregate_pass(bars: Any) -> dict[str, int]:
    """Every row check and the duplicated keys' rows: grouped by key, then summed (one job)."""
    failures = _row_failures()
    keys = ", ".join(UNIQUE_KEY)
    per_key = ", ".join(f"count_if({sql}) AS `{name}`" for name, sql in failures.items())
    totals = ", ".join(f"sum(`{name}`) AS `{name}`" for name in failures)
    bars.createOrReplaceTempView("bars")
    spark = bars.sparkSession
    row = spark.sql(
        f"SELECT {totals}, sum(CASE WHEN n > 1 THEN n ELSE 0 END) AS dup "
        f"FROM (SELECT {keys}, count(*) AS n, {per_key} FROM bars GROUP BY {keys})"
    ).collect()[0]
    found = {name: int(row[name] or 0) for name in failures}
    found[check_unique(UNIQUE_KEY)] = int(row["dup"] or 0)
    return found


WINDOW_PASS = f"""
WITH located AS (
  SELECT b.symbol, b.bar_start AS t, b.calendar, x.open
  FROM bars b LEFT JOIN sessions x
    ON x.calendar = b.calendar AND x.day = to_date(b.bar_start)
   AND b.bar_start >= x.open AND b.bar_start < x.close
  WHERE b.bar_start IS NOT NULL AND b.symbol IS NOT NULL AND unix_micros(b.bar_start) % 1000 = 0
), gapped AS (
  SELECT symbol, t, calendar, open,
         unix_micros(t) - unix_micros(lag(t) OVER (PARTITION BY symbol, open ORDER BY t)) AS gap_us
  FROM located
), per_session AS (
  SELECT symbol, calendar, open, min(t) AS first_bar, max(t) AS last_bar,
         count_if(open IS NOT NULL AND gap_us > 0 AND gap_us <> {CADENCE_US}) AS interior,
         CASE WHEN open IS NULL THEN count(DISTINCT t) ELSE 0 END AS outside
  FROM gapped GROUP BY symbol, calendar, open
), units AS (
  SELECT s.symbol, x.open, greatest(x.open, TIMESTAMP '{{start}}') AS u_start,
         least(x.close, TIMESTAMP '{{end}}') AS u_end
  FROM (SELECT DISTINCT symbol, calendar FROM per_session WHERE open IS NOT NULL) s
  JOIN (SELECT DISTINCT calendar, open, close FROM sessions) x ON x.calendar = s.calendar
  WHERE x.close > TIMESTAMP '{{start}}' AND x.open < TIMESTAMP '{{end}}'
), edges AS (
  SELECT count_if(p.first_bar IS NULL) AS whole,
         count_if(unix_micros(p.first_bar) - unix_micros(u.u_start) >= {CADENCE_US}) AS late_start,
         count_if(unix_micros(u.u_end) - unix_micros(p.last_bar) > {CADENCE_US}) AS early_end
  FROM units u LEFT JOIN per_session p ON p.symbol = u.symbol AND p.open = u.open
)
SELECT s.*, edges.* FROM (SELECT sum(interior) AS interior, sum(outside) AS outside FROM per_session) s
CROSS JOIN edges
"""


def _sessions(spark: Any, calendars: set[str], first: dt.date, last: dt.date, cache: Path) -> None:
    """``sessions(calendar, open, close, day)``: one row per session and UTC day it touches."""
    rows = session_rows(calendars, first, last, cache)
    local = list(zip(rows["calendar"], rows["open"], rows["close"], strict=True))
    frame = spark.createDataFrame(local, "calendar STRING, open STRING, close STRING")
    frame.createOrReplaceTempView("session_rows")
    spark.sql(
        "SELECT calendar, CAST(open AS TIMESTAMP) AS open, CAST(close AS TIMESTAMP) AS close "
        "FROM session_rows"
    ).createOrReplaceTempView("session_bounds")
    spark.sql(
        "SELECT calendar, open, close, "
        "explode(sequence(to_date(open), to_date(close - INTERVAL 1 MICROSECOND))) AS day FROM session_bounds"
    ).createOrReplaceTempView("sessions")


def run(parquet_path: str, spark: Any = None, **_: Any) -> dict[str, Any]:
    """Both passes on ``spark`` (a session in UTC); counts keyed as the runner compares them."""
    from pyspark.sql import functions as F

    problems = []
    catalog = load_catalog(Path(parquet_path).resolve().parent / CATALOG_NAME)
    symbols = spark.createDataFrame(list(catalog.items()), "symbol STRING, calendar STRING")
    raw = spark.read.parquet(parquet_path)
    found_types = {f.name: f.dataType.simpleString() for f in raw.schema.fields}
    problems = [c for c, t in EXPECTED_TYPES.items() if found_types.get(c) != t] + [
        c for c in found_types if c not in EXPECTED_TYPES
    ]
    bars = raw.join(F.broadcast(symbols), "symbol", "left").cache()  # read once: both passes use it
    counts = aggregate_pass(bars)
    start, end = covered(parquet_path)
    first, last = start.date() - dt.timedelta(days=1), end.date() + dt.timedelta(days=1)
    _sessions(spark, set(catalog.values()), first, last, Path(parquet_path).resolve().parent / SESSIONS_DIR)
    text = {"start": start.strftime("%Y-%m-%d %H:%M:%S"), "end": end.strftime("%Y-%m-%d %H:%M:%S.%f")}
    found = spark.sql(WINDOW_PASS.format(**text)).collect()[0].asDict()
    bars.unpersist()
    cadence = {k: int(found[k] or 0) for k in ("interior", "whole", "late_start", "early_end")}
    full = {
        "schema": int(bool(problems)),
        "time.precision": counts.pop("time.precision"),
        "catalog.series": counts.pop("catalog.series"),
        "time.session": int(found["outside"] or 0),
        "time.cadence": sum(cadence.values()),
    }
    return {
        "counts": counts,
        "full": full,
        "unmapped": {f"time.cadence ({k})": n for k, n in cadence.items()},
    }
