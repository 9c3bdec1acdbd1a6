"""Peer: pandera's polars backend (``import pandera.polars as pa``).

The same schema as the pandas peer (``pandera_peer.py``), for polars: a
``DataFrameSchema(strict=True)`` with each field's polars dtype (``pl.Decimal(18, 8)``,
``pl.Datetime("ms", "UTC")``, ...), ``nullable=False`` where the contract says, ``unique``
on the natural key, ``adjusted`` as ``Check.eq(False)``, and each invariant as a
dataframe-level ``Check`` returning one boolean column (a polars expression), named by its
clause. The file is read with ``pl.read_parquet`` and validated with ``lazy=True``; counts
are the failure cases per check (their ``index`` is the failing row's number).

Where pandera (polars) cannot say a clause exactly:

* **Data checks need a DataFrame.** On a ``pl.LazyFrame`` pandera runs only the schema
  checks (dtypes, columns) unless the validation depth is raised, so as not to collect a
  lazy query; the peer validates the collected ``DataFrame`` (one read; pandera then works
  on it lazily and collects each check).
* **NULL operands.** A check's null output passes (``ignore_na=True``, the default), which
  is the contract's NULL rule; polars' ``&`` is three-valued like SQL's.
* **Key.** ``unique=[...]`` fails every row of a duplicated key (``is_duplicated``), as the
  common check counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandera.polars as pa
import polars as pl

from peers.common import ADJUSTED_CHECK, NOT_NULL_COLUMNS, UNIQUE_KEY, check_not_null, check_unique

UNIQUE_CHECK = "multiple_fields_uniqueness"
NOT_NULL_CHECK = "not_nullable"


def _chained(low: str, mid: str, high: str) -> pl.Expr:
    return (pl.col(low) <= pl.col(mid)) & (pl.col(mid) <= pl.col(high))


INVARIANTS: dict[str, pl.Expr] = {
    "low <= open <= high": _chained("low", "open", "high"),
    "low <= close <= high": _chained("low", "close", "high"),
    "volume >= 0": pl.col("volume") >= 0,
    "trade_count is null or trade_count >= 0": pl.col("trade_count").is_null() | (pl.col("trade_count") >= 0),
}


def _frame_check(expr: pl.Expr) -> Callable[[Any], pl.LazyFrame]:
    """A dataframe-level check: one boolean column over the whole frame."""
    return lambda data: data.lazyframe.select(expr)


def build_schema() -> pa.DataFrameSchema:
    price, string, int64 = pl.Decimal(18, 8), pl.String, pl.Int64
    types: dict[str, Any] = {
        "symbol": string,
        "bar_start": pl.Datetime("ms", "UTC"),
        "open": price,
        "high": price,
        "low": price,
        "close": price,
        "volume": pl.Decimal(24, 4),
        "trade_count": int64,
        "adjusted": pl.Boolean,
        "source_id": string,
        "ingest_run_id": string,
        "transform_version": string,
        "revision": int64,
    }
    checks = {"adjusted": [pa.Check.eq(False)]}
    columns = {
        name: pa.Column(dtype, nullable=name not in NOT_NULL_COLUMNS, checks=checks.get(name))
        for name, dtype in types.items()
    }
    return pa.DataFrameSchema(
        columns=columns,
        checks=[pa.Check(_frame_check(e), name=clause, error=clause) for clause, e in INVARIANTS.items()],
        unique=list(UNIQUE_KEY),
        strict=True,
        name="ohlcv_1m",
    )


def failure_counts(failure_cases: pl.DataFrame | None) -> tuple[dict[str, int], dict[str, int]]:
    """Failing rows per common check (distinct ``index`` per check and column); and the rest."""
    counts = dict.fromkeys(INVARIANTS, 0)
    counts.update({check_not_null(c): 0 for c in NOT_NULL_COLUMNS})
    counts[ADJUSTED_CHECK] = 0
    counts[check_unique(UNIQUE_KEY)] = 0
    unmapped: dict[str, int] = {}
    if failure_cases is None or failure_cases.is_empty():
        return counts, unmapped
    grouped = failure_cases.group_by("check", "column").agg(pl.col("index").n_unique().alias("rows"))
    for check, column, rows in grouped.iter_rows():
        if check == NOT_NULL_CHECK and check_not_null(str(column)) in counts:
            counts[check_not_null(str(column))] = int(rows)
        elif str(check).startswith("equal_to") and column == "adjusted":
            counts[ADJUSTED_CHECK] = int(rows)
        elif check in INVARIANTS:
            counts[check] = int(rows)
        elif check == UNIQUE_CHECK:
            counts[check_unique(UNIQUE_KEY)] = int(rows)
        else:
            unmapped[f"{check} [{column}]"] = int(rows)
    return counts, unmapped


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    phases: dict[str, float] = {}
    started = time.perf_counter()
    df = pl.read_parquet(parquet_path)
    phases["read"] = time.perf_counter() - started

    started = time.perf_counter()
    try:
        build_schema().validate(df, lazy=True)  # collect every failure, not just the first
        failure_cases = None
    except pa.errors.SchemaErrors as errors:
        failure_cases = errors.failure_cases
    phases["validate"] = time.perf_counter() - started

    counts, unmapped = failure_counts(failure_cases)
    return {"counts": counts, "phases": phases, "unmapped": unmapped}
