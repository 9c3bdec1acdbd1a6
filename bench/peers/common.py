"""The checks every peer reports, by one common key each (standard library only).

Each peer returns ``{check_key: failed_rows}`` for exactly these keys. Peers run under
different interpreters (the project venv, bench/.venv-pandera, bench/.venv-gx), so this
module imports nothing outside the standard library.

Semantics, as in the contract language (docs/language.md "Row clauses"):

* an invariant fails on a row when it evaluates to false; a NULL operand does not
  violate it (nullability is its own check), as ``count(*) FILTER (WHERE NOT pred)``;
* ``not_null:<column>`` counts the nulls of a column that may not be null: the fields
  declared ``nullable: false``, the key and time columns and the provenance columns;
* ``value:adjusted`` counts rows whose ``adjusted`` is not the fixed ``value: false``
  (a null ``adjusted`` is not counted: the field is nullable);
* ``unique:<key>`` counts every row that belongs to a key value held by more than one row
  (a key written twice counts 2).
"""

from __future__ import annotations

CONTRACT_PATH = "examples/ohlcv_1m/contract.yaml"  # relative to the repository root

INVARIANTS = (
    "low <= open <= high",
    "low <= close <= high",
    "volume >= 0",
    "trade_count is null or trade_count >= 0",
)
# Operands of each invariant: it is only evaluated on rows where none of them is null.
INVARIANT_COLUMNS = {
    "low <= open <= high": ("low", "open", "high"),
    "low <= close <= high": ("low", "close", "high"),
    "volume >= 0": ("volume",),
    "trade_count is null or trade_count >= 0": ("trade_count",),
}
UNIQUE_KEY = ("symbol", "bar_start", "revision")
# Non-nullable: declared nullable: false, or key / time / provenance column.
NOT_NULL_COLUMNS = (
    "symbol",
    "bar_start",
    "open",
    "high",
    "low",
    "close",
    "volume",
    "source_id",
    "ingest_run_id",
    "transform_version",
    "revision",
)
ALL_COLUMNS = (
    "symbol",
    "bar_start",
    "open",
    "high",
    "low",
    "close",
    "volume",
    "trade_count",
    "adjusted",
    "source_id",
    "ingest_run_id",
    "transform_version",
    "revision",
)
ADJUSTED_CHECK = "value:adjusted"


def check_not_null(column: str) -> str:
    return f"not_null:{column}"


def check_unique(columns: tuple[str, ...] = UNIQUE_KEY) -> str:
    return "unique:" + ",".join(columns)


CHECKS: tuple[str, ...] = (
    *INVARIANTS,
    *(check_not_null(c) for c in NOT_NULL_COLUMNS),
    ADJUSTED_CHECK,
    check_unique(UNIQUE_KEY),
)

# Checks of the whole contract that only the full-contract peers report (tscontract and the
# hand-written sql-full), compared between those two: their failing-row counts, except
# ``schema`` (0 when the columns and their types are as declared, else 1).
FULL_CHECKS: tuple[str, ...] = ("schema", "time.precision", "catalog.series", "time.session", "time.cadence")
