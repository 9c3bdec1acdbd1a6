"""Peer: Great Expectations 1.x (class-based API) on a pandas DataFrame.

An ephemeral context, a pandas data source with a dataframe asset and a whole-dataframe
batch definition, one ``ExpectationSuite`` and a ``ValidationDefinition`` run on the
DataFrame read from the Parquet file. Every expectation carries
``meta={"check": <common key>}``; its ``unexpected_count`` is the failure count.

How the contract maps, and where GX cannot say a clause exactly:

* ``low <= open <= high`` has no single expectation: GX compares column pairs, not
  chains. It is two ``ExpectColumnPairValuesAToBeGreaterThanB(or_equal=True)``
  (open >= low, high >= open). Their failing rows are combined as the union of the two
  ``unexpected_index_list`` (result format COMPLETE), so a row breaking both halves
  counts once. ``ignore_row_if="either_value_is_missing"`` is required for the contract's
  NULL rule: the default, ``both_values_are_missing``, reports a null ``close`` against
  every pair that contains it.
* ``volume >= 0`` is ``ExpectColumnValuesToBeBetween(min_value=0)``;
  ``trade_count is null or trade_count >= 0`` is the same on ``trade_count``: column map
  expectations skip nulls, which is exactly the "is null or" part.
* Nullability is ``ExpectColumnValuesToNotBeNull`` per column; the key is
  ``ExpectCompoundColumnsToBeUnique``, whose unexpected rows are all rows of a duplicated
  key (``duplicated(keep=False)``); ``adjusted: {value: false}`` is
  ``ExpectColumnValuesToBeInSet([False])`` (nulls skipped).
* ``ExpectTableColumnsToMatchSet(exact_match=True)`` stands for pandera's ``strict=True``.
* Not expressible on a pandas batch: decimal precision and scale (``decimal(18,8)``) and
  the UTC rule on a typed timestamp column. ``ExpectColumnValuesToBeOfType`` compares only
  the dtype's scalar class (``Decimal``, ``Timestamp``), and the seed's
  ``ExpectColumnValuesToMatchRegex(regex=r"\\+00:00$")`` works only on timestamps held as
  text. Neither is in this suite, so GX checks less than the other peers here.
"""

from __future__ import annotations

import os
import time
from typing import Any

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

import great_expectations as gx
import great_expectations.expectations as gxe
from great_expectations.data_context.types.base import ProgressBarsConfig

from peers.common import (
    ADJUSTED_CHECK,
    ALL_COLUMNS,
    NOT_NULL_COLUMNS,
    UNIQUE_KEY,
    check_not_null,
    check_unique,
)
from peers.pandas_io import read

STRICT_CHECK = "gx:columns_match_set"


def _pair(check: str, column_a: str, column_b: str) -> gxe.Expectation:
    """``column_a >= column_b``, one half of a chained invariant."""
    return gxe.ExpectColumnPairValuesAToBeGreaterThanB(
        column_A=column_a,
        column_B=column_b,
        or_equal=True,
        ignore_row_if="either_value_is_missing",
        meta={"check": check},
    )


def expectations() -> list[gxe.Expectation]:
    result: list[gxe.Expectation] = [
        _pair("low <= open <= high", "open", "low"),
        _pair("low <= open <= high", "high", "open"),
        _pair("low <= close <= high", "close", "low"),
        _pair("low <= close <= high", "high", "close"),
        gxe.ExpectColumnValuesToBeBetween(column="volume", min_value=0, meta={"check": "volume >= 0"}),
        gxe.ExpectColumnValuesToBeBetween(
            column="trade_count", min_value=0, meta={"check": "trade_count is null or trade_count >= 0"}
        ),
    ]
    result += [
        gxe.ExpectColumnValuesToNotBeNull(column=column, meta={"check": check_not_null(column)})
        for column in NOT_NULL_COLUMNS
    ]
    result += [
        gxe.ExpectColumnValuesToBeInSet(column="adjusted", value_set=[False], meta={"check": ADJUSTED_CHECK}),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=list(UNIQUE_KEY), meta={"check": check_unique()}),
        gxe.ExpectTableColumnsToMatchSet(
            column_set=list(ALL_COLUMNS), exact_match=True, meta={"check": STRICT_CHECK}
        ),
    ]
    return result


def build(context: Any) -> gx.ValidationDefinition:
    data_source = context.data_sources.add_pandas(name="bench")
    asset = data_source.add_dataframe_asset(name="ohlcv_1m")
    batch_definition = asset.add_batch_definition_whole_dataframe("whole dataframe")
    suite = context.suites.add(gx.ExpectationSuite(name="ohlcv_1m_v3"))
    for expectation in expectations():
        suite.add_expectation(expectation)
    return context.validation_definitions.add(
        gx.ValidationDefinition(name="ohlcv_1m_v3", data=batch_definition, suite=suite)
    )


def failure_counts(results: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """Map expectation results to the common keys; union the halves of chained invariants."""
    rows: dict[str, set[Any]] = {}
    counts: dict[str, int] = {}
    other: dict[str, Any] = {}
    for result in results.results:
        config = result.expectation_config
        check = (config.meta or {}).get("check")
        if result.exception_info and result.exception_info.get("raised_exception"):
            other[f"{config.type} raised"] = result.exception_info.get("exception_message")
            continue
        if check == STRICT_CHECK:
            if not result.success:
                other[STRICT_CHECK] = result.result.get("details")
            continue
        unexpected = int(result.result.get("unexpected_count") or 0)
        if check in ("low <= open <= high", "low <= close <= high"):
            indices = result.result.get("unexpected_index_list") or []
            if len(indices) != unexpected:
                other[f"{check}: index list incomplete"] = [len(indices), unexpected]
            rows.setdefault(check, set()).update(indices)
        else:
            counts[check] = unexpected
    for check, index in rows.items():
        counts[check] = len(index)
    return counts, other


def run(parquet_path: str, pandas_dtypes: str = "arrow", **_: Any) -> dict[str, Any]:
    phases: dict[str, float] = {}
    started = time.perf_counter()
    df = read(parquet_path, pandas_dtypes)
    phases["read"] = time.perf_counter() - started

    started = time.perf_counter()
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    validation = build(context)
    phases["setup"] = time.perf_counter() - started

    started = time.perf_counter()
    # COMPLETE: the unexpected index lists are needed to union the halves of a chain.
    results = validation.run(batch_parameters={"dataframe": df}, result_format="COMPLETE")
    phases["validate"] = time.perf_counter() - started

    counts, other = failure_counts(results)
    return {"counts": counts, "phases": phases, "unmapped": other}
