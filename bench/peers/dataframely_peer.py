"""Peer: dataframely (polars), a ``dy.Schema`` with column types, nullability, a primary key and rules.

One ``dy.Schema`` for the contract: each field with its polars type (``dy.Decimal(18, 8)``,
``dy.Datetime(time_zone="UTC", time_unit="ms")``, ...), ``nullable`` as the contract says
(dataframely's columns are non-nullable unless told), the natural key as ``primary_key``,
``adjusted: {value: false}`` as a column ``check``, and each invariant as a ``@dy.rule()``.
``Schema.filter`` on ``pl.scan_parquet(path)`` evaluates every rule in one polars query and
returns the valid rows and a ``FailureInfo`` whose ``counts()`` are the failing rows per rule.

Where dataframely cannot say a clause exactly:

* **Types.** A column of another dtype, or a missing column, makes ``filter`` raise (with
  ``cast=False``): the types are checked exactly, decimal precision and scale and the UTC
  millisecond timestamp included, but as a schema error, not per row. Columns the schema
  does not name are dropped silently: there is no ``strict``.
* **NULL operands.** A rule whose expression is null passes (``fill_null(True)``), as the
  contract's NULL rule says; polars' ``&`` is three-valued like SQL's.
* **Key.** ``primary_key`` fails every row of a duplicated key (``is_unique`` on the key
  struct), as the common check counts; it also makes the key columns non-nullable.
"""

from __future__ import annotations

import time
from typing import Any

import dataframely as dy
import polars as pl

from peers.common import (
    ADJUSTED_CHECK,
    INVARIANTS,
    NOT_NULL_COLUMNS,
    UNIQUE_KEY,
    check_not_null,
    check_unique,
)


def _price() -> dy.Decimal:
    return dy.Decimal(18, 8, nullable=False)


class Ohlcv1m(dy.Schema):
    symbol = dy.String(primary_key=True)
    bar_start = dy.Datetime(primary_key=True, time_zone="UTC", time_unit="ms")
    open = _price()
    high = _price()
    low = _price()
    close = _price()
    volume = dy.Decimal(24, 4, nullable=False)
    trade_count = dy.Int64(nullable=True)
    adjusted = dy.Bool(nullable=True, check={"value_false": lambda column: ~column})
    source_id = dy.String(nullable=False)
    ingest_run_id = dy.String(nullable=False)
    transform_version = dy.String(nullable=False)
    revision = dy.Int64(primary_key=True)

    @dy.rule()
    def low_open_high(cls) -> pl.Expr:
        return (pl.col("low") <= pl.col("open")) & (pl.col("open") <= pl.col("high"))

    @dy.rule()
    def low_close_high(cls) -> pl.Expr:
        return (pl.col("low") <= pl.col("close")) & (pl.col("close") <= pl.col("high"))

    @dy.rule()
    def volume_non_negative(cls) -> pl.Expr:
        return pl.col("volume") >= 0

    @dy.rule()
    def trade_count_null_or_non_negative(cls) -> pl.Expr:
        return pl.col("trade_count").is_null() | (pl.col("trade_count") >= 0)


# dataframely's rule names -> the common check keys
RULES = dict(
    zip(
        ("low_open_high", "low_close_high", "volume_non_negative", "trade_count_null_or_non_negative"),
        INVARIANTS,
        strict=True,
    )
)
RULES.update({f"{column}|nullability": check_not_null(column) for column in NOT_NULL_COLUMNS})
RULES["adjusted|check__value_false"] = ADJUSTED_CHECK
RULES["primary_key"] = check_unique(UNIQUE_KEY)


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    phases: dict[str, float] = {}
    started = time.perf_counter()
    _valid, failure = Ohlcv1m.filter(pl.scan_parquet(parquet_path)).collect_all()
    phases["filter"] = time.perf_counter() - started

    started = time.perf_counter()
    found = failure.counts()
    counts = dict.fromkeys(RULES.values(), 0)
    unmapped: dict[str, int] = {}
    for rule, rows in found.items():
        if rule in RULES:
            counts[RULES[rule]] = int(rows)
        else:
            unmapped[rule] = int(rows)
    phases["counts"] = time.perf_counter() - started
    return {"counts": counts, "phases": phases, "unmapped": unmapped}
