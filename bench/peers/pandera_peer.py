"""Peer: pandera (pandas backend), written the way the seed text writes a pandera schema.

``DataFrameSchema(strict=True)`` validated with ``lazy=True``: one ``Column`` per field
with its exact dtype (decimal with precision and scale, tz-aware UTC millisecond
timestamps), ``nullable=False`` on the fields the contract makes non-null, ``unique`` on
the natural key, and each invariant as a dataframe-level ``Check`` that returns an
element-wise boolean Series, named by the clause text. Failure counts are read from
``SchemaErrors.failure_cases`` (distinct row index per check).

Where pandera cannot say the clause exactly:

* A dataframe-level check sees the whole row, so the contract's NULL rule ("a NULL
  operand does not violate a clause") is written by hand: a row fails only where a
  comparison is known to be false (``_known_false``). pandera's ``ignore_na`` applies to
  column checks, not to a multi-column predicate.
* ``adjusted: {value: false}`` is ``Check.eq(False)``; nulls are ignored (the field is
  nullable), as pandera does for column checks by default.
* Decimal precision and scale: exact as a dtype with ``--pandas-dtypes arrow``
  (``decimal128(18, 8)``); with ``numpy`` pandera's ``Decimal(18, 8)`` checks every
  Python ``Decimal`` object.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pyarrow as pyarrow_types

from peers.common import (
    ADJUSTED_CHECK,
    NOT_NULL_COLUMNS,
    UNIQUE_KEY,
    check_not_null,
    check_unique,
)
from peers.pandas_io import read

UNIQUE_CHECK = "multiple_fields_uniqueness"
NOT_NULL_CHECK = "not_nullable"


def _dtypes(pandas_dtypes: str) -> dict[str, Any]:
    """The contract's field types as pandas dtypes, for one way of reading the file."""
    if pandas_dtypes == "arrow":

        def arrow(type_: pyarrow_types.DataType) -> pd.ArrowDtype:
            return pd.ArrowDtype(type_)

        string, int64 = arrow(pyarrow_types.string()), arrow(pyarrow_types.int64())
        return {
            "symbol": string,
            "bar_start": arrow(pyarrow_types.timestamp("ms", tz="UTC")),
            "price": arrow(pyarrow_types.decimal128(18, 8)),
            "volume": arrow(pyarrow_types.decimal128(24, 4)),
            "int64": int64,
            "bool": arrow(pyarrow_types.bool_()),
            "string": string,
        }
    from pandera.engines import pandas_engine

    return {
        "symbol": pd.StringDtype(),
        "bar_start": pd.DatetimeTZDtype("ms", "UTC"),
        "price": pandas_engine.Decimal(18, 8),
        "volume": pandas_engine.Decimal(24, 4),
        "int64": pd.Int64Dtype(),
        "bool": pd.BooleanDtype(),
        "string": pd.StringDtype(),
    }


def _known_false(condition: pd.Series, *operands: pd.Series) -> np.ndarray:
    """Rows where ``condition`` is false and none of its operands is null (SQL: NOT pred)."""
    known = np.ones(len(condition), dtype=bool)
    for operand in operands:
        known &= operand.notna().to_numpy(dtype=bool)
    return known & ~condition.fillna(True).to_numpy(dtype=bool)


def _passes(df: pd.DataFrame, failed: np.ndarray) -> pd.Series:
    return pd.Series(~failed, index=df.index)


def _chained(df: pd.DataFrame, low: str, mid: str, high: str) -> pd.Series:
    lo, mi, hi = df[low], df[mid], df[high]
    return _passes(df, _known_false(lo <= mi, lo, mi) | _known_false(mi <= hi, mi, hi))


INVARIANT_CHECKS = {
    "low <= open <= high": lambda df: _chained(df, "low", "open", "high"),
    "low <= close <= high": lambda df: _chained(df, "low", "close", "high"),
    "volume >= 0": lambda df: _passes(df, _known_false(df["volume"] >= 0, df["volume"])),
    # "is null or" makes a null trade_count pass; only a known negative fails.
    "trade_count is null or trade_count >= 0": lambda df: _passes(
        df, _known_false(df["trade_count"] >= 0, df["trade_count"])
    ),
}


def build_schema(pandas_dtypes: str = "arrow") -> pa.DataFrameSchema:
    t = _dtypes(pandas_dtypes)
    not_null = set(NOT_NULL_COLUMNS)

    def column(dtype: Any, name: str, **kwargs: Any) -> pa.Column:
        return pa.Column(dtype, nullable=name not in not_null, **kwargs)

    columns = {
        "symbol": column(t["symbol"], "symbol"),
        "bar_start": column(t["bar_start"], "bar_start"),
        "open": column(t["price"], "open"),
        "high": column(t["price"], "high"),
        "low": column(t["price"], "low"),
        "close": column(t["price"], "close"),
        "volume": column(t["volume"], "volume"),
        "trade_count": column(t["int64"], "trade_count"),
        "adjusted": column(t["bool"], "adjusted", checks=pa.Check.eq(False)),
        "source_id": column(t["string"], "source_id"),
        "ingest_run_id": column(t["string"], "ingest_run_id"),
        "transform_version": column(t["string"], "transform_version"),
        "revision": column(t["int64"], "revision"),
    }
    return pa.DataFrameSchema(
        columns=columns,
        checks=[pa.Check(fn, name=clause, error=clause) for clause, fn in INVARIANT_CHECKS.items()],
        unique=list(UNIQUE_KEY),
        strict=True,  # unknown columns fail
        name="ohlcv_1m",
    )


def failure_counts(failure_cases: pd.DataFrame | None) -> tuple[dict[str, int], dict[str, int]]:
    """Map pandera's failure cases to the common check keys; return (counts, unmapped)."""
    counts: dict[str, int] = {}
    for clause in INVARIANT_CHECKS:
        counts[clause] = 0
    for column_name in NOT_NULL_COLUMNS:
        counts[check_not_null(column_name)] = 0
    counts[ADJUSTED_CHECK] = 0
    counts[check_unique(UNIQUE_KEY)] = 0
    unmapped: dict[str, int] = {}
    if failure_cases is None or failure_cases.empty:
        return counts, unmapped
    grouped = failure_cases.groupby(["check", "column"], dropna=False)["index"].nunique()
    per_check = failure_cases.groupby("check")["index"].nunique()
    seen: set[tuple[str, str]] = set()
    for (check, column_name), rows in grouped.items():
        check, column_name = str(check), str(column_name)
        if check == NOT_NULL_CHECK and check_not_null(column_name) in counts:
            counts[check_not_null(column_name)] = int(rows)
        elif check.startswith("equal_to") and column_name == "adjusted":
            counts[ADJUSTED_CHECK] = int(rows)
        elif check in INVARIANT_CHECKS or check == UNIQUE_CHECK:
            seen.add((check, ""))  # dataframe-level: one failure case per column; count rows once
        else:
            unmapped[f"{check} [{column_name}]"] = int(rows)
    for check, _ in seen:
        key = check_unique(UNIQUE_KEY) if check == UNIQUE_CHECK else check
        counts[key] = int(per_check[check])
    return counts, unmapped


def run(parquet_path: str, pandas_dtypes: str = "arrow", **_: Any) -> dict[str, Any]:
    phases: dict[str, float] = {}
    started = time.perf_counter()
    df = read(parquet_path, pandas_dtypes)
    phases["read"] = time.perf_counter() - started

    started = time.perf_counter()
    schema = build_schema(pandas_dtypes)
    try:
        schema.validate(df, lazy=True)  # collect every failure, not just the first
        failure_cases = None
    except pa.errors.SchemaErrors as errors:
        failure_cases = errors.failure_cases
    phases["validate"] = time.perf_counter() - started

    counts, unmapped = failure_counts(failure_cases)
    return {"counts": counts, "phases": phases, "unmapped": unmapped}
