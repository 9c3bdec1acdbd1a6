"""Peer: one hand-written DuckDB query over the Parquet file.

What a careful engineer would write without any tool: a single scan that counts, per
check, the rows that fail it. Invariants use ``count(*) FILTER (WHERE NOT pred)``, so a
NULL operand makes the predicate NULL and the row is not counted, as in the contract
language. Duplicate keys need a second aggregation (rows per key), done in a CTE of the
same statement over the same scan.
"""

from __future__ import annotations

import time
from typing import Any

import duckdb

from peers.common import ADJUSTED_CHECK, NOT_NULL_COLUMNS, UNIQUE_KEY, check_not_null, check_unique

KEY = ", ".join(UNIQUE_KEY)
_NULL_COUNTS = ",\n    ".join(
    f'count(*) FILTER (WHERE {column} IS NULL) AS "{check_not_null(column)}"' for column in NOT_NULL_COLUMNS
)

QUERY = f"""
WITH src AS (
  SELECT * FROM read_parquet($path)
), keys AS (
  SELECT count(*) AS rows_per_key FROM src GROUP BY {KEY} HAVING count(*) > 1
), row_checks AS (
  SELECT
    count(*) FILTER (WHERE NOT (low <= open AND open <= high)) AS "low <= open <= high",
    count(*) FILTER (WHERE NOT (low <= close AND close <= high)) AS "low <= close <= high",
    count(*) FILTER (WHERE NOT (volume >= 0)) AS "volume >= 0",
    count(*) FILTER (WHERE NOT (trade_count IS NULL OR trade_count >= 0))
      AS "trade_count is null or trade_count >= 0",
    {_NULL_COUNTS},
    count(*) FILTER (WHERE adjusted <> false) AS "{ADJUSTED_CHECK}"
  FROM src
)
SELECT row_checks.*,
       (SELECT coalesce(sum(rows_per_key), 0) FROM keys) AS "{check_unique(UNIQUE_KEY)}"
FROM row_checks
"""


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    """Run the query; return ``{"counts": {check: failed_rows}, "phases": {...}}``."""
    started = time.perf_counter()
    con = duckdb.connect()
    cursor = con.execute(QUERY, {"path": parquet_path})
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    con.close()
    assert row is not None
    counts = {name: int(value) for name, value in zip(names, row, strict=True)}
    return {"counts": counts, "phases": {"query": time.perf_counter() - started}}
