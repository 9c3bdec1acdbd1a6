"""Per column: the typed value, and the SQL that says when a value breaks its declared type.

For text sources the value is parsed from its exact text (a decimal's digits,
an RFC 3339 instant's offset and fraction). For typed sources the physical
type must fit the declared one; a float where a decimal is declared, a naive
TIMESTAMP, a string where a number is declared are failures, never coerced.
All SQL here is DuckDB's and runs inside the one fused scan.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from tscontract.contract.types import DataType
from tscontract.typemap.physical import DUCKDB_INT_BITS
from tscontract.typemap.sql import sql_type
from tscontract.typemap.table import FRACTION_DIGITS

EPOCH_PLAUSIBLE = ("1990-01-01", "2100-01-01")  # epochs outside: a changed unit (s read as ms lands in 1970)
_EPOCH_TO_US = {"s": "* 1000000", "ms": "* 1000", "us": "", "ns": "// 1000"}
_JSON_NUMBER = "('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')"
_RFC3339 = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$"
_UTC_SUFFIX = r"([Zz]|[+-]00:00)$"
_DECIMAL_TEXT = r"^[+-]?\d+(\.\d+)?$"
REASON_PREFIX = "__mr_"  # a converted batch's column: why the mapping could not convert a field's value
# DuckDB's names of the instant types (a timestamp with a zone, any unit: Arrow/Parquet ``timestamp[unit, tz=...]``,
# pandas' ``datetime64[ns, UTC]``); every other TIMESTAMP type is a wall-clock time with no zone
_INSTANT_TYPES = ("TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ", "TIMESTAMPTZ_NS", "TIMESTAMP_NS WITH TIME ZONE")


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def instant_json(value: datetime) -> str:
    """An instant as reports show it: RFC 3339 UTC with ``Z``, the fraction only when it is not zero,
    in 3 digits (``.250Z``) or, below a millisecond, 6 (``.000123Z``). :func:`instant_text` in SQL."""
    utc = value.astimezone(UTC)
    micros = utc.microsecond
    fraction = "" if not micros else f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


def is_instant_type(physical: str) -> bool:
    """Whether a physical (DuckDB) type holds instants: a timestamp with a zone, in any unit.

    The zone is how the writer displayed the instant (``Europe/Berlin``, ``+05:30``): the value is
    an instant all the same, compared and shown as UTC. A TIMESTAMP without one is naive."""
    return physical.upper() in _INSTANT_TYPES


def is_nanosecond_type(physical: str) -> bool:
    """Whether a physical (DuckDB) timestamp type counts nanoseconds (``TIMESTAMP_NS``, ``TIMESTAMPTZ_NS``)."""
    return physical.upper().startswith(("TIMESTAMP_NS", "TIMESTAMPTZ_NS"))


def instant_from_nanoseconds(value: str) -> str:
    """SQL: a nanosecond instant as the engine's microsecond TIMESTAMPTZ, cut (not rounded) to the
    microsecond as a text instant is."""
    ns = f"epoch_ns({value})"
    return f"make_timestamptz(({ns} - ({ns} % 1000 + 1000) % 1000) // 1000)"


def instant_text_ns(value: str) -> str:
    """SQL: the nanosecond instant ``value`` as :func:`instant_text` writes it, with 9 fraction
    digits where it has digits below the microsecond."""
    ns = f"epoch_ns({value})"
    fraction = f"(({ns} % 1000000000 + 1000000000) % 1000000000)"
    seconds = f"make_timestamptz(({ns} - {fraction}) // 1000)"
    return (
        f"(strftime({seconds}, '%Y-%m-%dT%H:%M:%S') || CASE WHEN {fraction} = 0 THEN '' "
        f"WHEN {fraction} % 1000000 = 0 THEN '.' || lpad(CAST({fraction} // 1000000 AS VARCHAR), 3, '0') "
        f"WHEN {fraction} % 1000 = 0 THEN '.' || lpad(CAST({fraction} // 1000 AS VARCHAR), 6, '0') "
        f"ELSE '.' || lpad(CAST({fraction} AS VARCHAR), 9, '0') END || 'Z')"
    )


def instant_text_of(value: str, physical: str) -> str:
    """SQL: ``value``, of the instant type ``physical`` (:func:`is_instant_type`), as RFC 3339 UTC text."""
    return instant_text_ns(value) if is_nanosecond_type(physical) else instant_text(value)


def instant_text(value: str) -> str:
    """SQL: the instant ``value`` as :func:`instant_json` writes it, on every engine."""
    fraction = f"((epoch_us({value}) % 1000000 + 1000000) % 1000000)"
    return (
        f"(strftime({value}, '%Y-%m-%dT%H:%M:%S') || CASE WHEN {fraction} = 0 THEN '' "
        f"WHEN {fraction} % 1000 = 0 THEN '.' || lpad(CAST({fraction} // 1000 AS VARCHAR), 3, '0') "
        f"ELSE '.' || lpad(CAST({fraction} AS VARCHAR), 6, '0') END || 'Z')"
    )


def json_field(value: str, dtype: DataType) -> str:
    """SQL: a column's value as it goes into a JSON record (instants as :func:`instant_text`)."""
    return instant_text(value) if dtype.kind == "timestamp" else value


def json_value(value: Any) -> Any:
    """A fetched SQL value as JSON-safe data: decimals as exact text, instants as :func:`instant_json`,
    NaN and infinities as text (JSON has no such number)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, datetime):
        return instant_json(value)
    return value


@dataclass
class ColumnSQL:
    """How one contract column is read and judged in the fused scan."""

    name: str
    dtype: DataType
    present: bool
    typed: str  # typed value expression over the source row
    raw: str  # what the input held, for examples
    is_null: str  # the input value is absent
    type_fail: str | None = None  # row condition: value breaks the declared type
    type_reason: str | None = None  # CASE expression naming why
    schema_problem: str | None = None  # the physical type itself is wrong
    utc_fail: str | None = None
    precision_fail: str | None = None


def _epoch_timestamp(integer: str, unit: str) -> str:
    # out-of-range epochs become NULL (TRY_CAST), which the type check reports
    return f"make_timestamptz(TRY_CAST({integer} {_EPOCH_TO_US[unit]} AS BIGINT))"


def _decimal_digits_fail(raw: str, dtype: DataType) -> tuple[str, str]:
    integer_digits = (dtype.precision or 0) - (dtype.scale or 0)
    int_part = f"length(ltrim(regexp_extract({raw}, '^[+-]?(\\d+)', 1), '0'))"
    frac_part = f"length(rtrim(regexp_extract({raw}, '\\.(\\d+)$', 1), '0'))"
    fail = (
        f"(NOT regexp_full_match({raw}, '{_DECIMAL_TEXT}') OR {int_part} > {integer_digits} "
        f"OR {frac_part} > {dtype.scale})"
    )
    reason = (
        f"CASE WHEN NOT regexp_full_match({raw}, '{_DECIMAL_TEXT}') THEN 'not a plain decimal number' "
        f"WHEN {frac_part} > {dtype.scale} THEN 'more than {dtype.scale} decimal places' "
        f"ELSE 'more than {integer_digits} integer digits' END"
    )
    return fail, reason


# A check of one declared kind, for a column read from text: sets ``col.typed`` and returns
# (the condition a value fails, the SQL of its reason)
_TextCheck = Callable[[ColumnSQL, str, DataType, str], tuple[str, str]]


def _text_column(name: str, dtype: DataType, json: bool) -> ColumnSQL:
    raw = ident(name)
    jt = ident("__jt_" + name) if json else None
    col = ColumnSQL(name, dtype, True, typed="", raw=raw, is_null=f"{raw} IS NULL")
    target = sql_type(dtype)
    kind = dtype.kind
    json_wrong = _json_wrong(jt, kind) if jt is not None else None
    check = _TEXT_CHECKS.get(kind)
    if check is not None:
        fail, reason = check(col, raw, dtype, target)
    else:
        fail, reason = "FALSE", "NULL"
        col.typed = raw
    if json_wrong is not None:
        fail = f"({json_wrong} OR {fail})"
        reason = f"CASE WHEN {json_wrong} THEN 'JSON ' || lower({jt}) || ' where {kind} is declared' ELSE {reason} END"
        if kind == "bool":
            col.typed = f"TRY_CAST({raw} AS BOOLEAN)"
    col.type_fail = f"({raw} IS NOT NULL AND {fail})"
    col.type_reason = reason
    return col


def _json_wrong(jt: str, kind: str) -> str | None:
    """When a JSON value's own type (column ``jt``) is not the one ``kind`` is written as."""
    if kind in ("int", "float", "decimal"):
        return f"{jt} NOT IN {_JSON_NUMBER}"
    if kind == "bool":
        return f"{jt} <> 'BOOLEAN'"
    if kind in ("string", "enum", "date"):
        return f"{jt} <> 'VARCHAR'"
    if kind == "timestamp":
        return f"{jt} NOT IN ('VARCHAR', 'BIGINT', 'UBIGINT')"
    return None


def _text_decimal(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    col.typed = f"TRY_CAST({raw} AS {target})"
    return _decimal_digits_fail(raw, dtype)


def _text_int(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    bits = dtype.bits or 64
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    fail = f"(NOT regexp_full_match({raw}, '^[+-]?\\d+$') OR TRY_CAST({raw} AS HUGEINT) NOT BETWEEN {low} AND {high})"
    reason = f"CASE WHEN NOT regexp_full_match({raw}, '^[+-]?\\d+$') THEN 'not an integer' ELSE 'outside int{bits}' END"
    col.typed = f"TRY_CAST({raw} AS {target})"
    return fail, reason


def _text_float(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    # a number written past the type's range reads as infinity: refused, not rounded to it ('inf' is infinity)
    overflow = (
        f"(abs(TRY_CAST({raw} AS {target})) = CAST('Infinity' AS DOUBLE) "
        f"AND NOT regexp_full_match(lower(trim({raw})), '[+-]?(inf|infinity)'))"
    )
    fail = f"(TRY_CAST({raw} AS DOUBLE) IS NULL OR {overflow})"
    reason = f"CASE WHEN {overflow} THEN 'outside the float{dtype.bits or 64} range' ELSE 'not a number' END"
    col.typed = f"TRY_CAST({raw} AS {target})"
    return fail, reason


def _text_bool(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    col.typed = f"CASE lower({raw}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END"
    return f"lower({raw}) NOT IN ('true', 'false')", "'not true or false'"


def _text_enum(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    members = ", ".join(sql_string(m) for m in dtype.members)
    col.typed = raw
    return f"{raw} NOT IN ({members})", f"'not one of {', '.join(dtype.members)}'"


def _text_timestamp(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    unit = dtype.time_unit or "ms"
    epoch = f"regexp_full_match({raw}, '^-?\\d+$')"
    typed = (
        f"CASE WHEN {epoch} THEN {_epoch_timestamp(f'TRY_CAST({raw} AS HUGEINT)', unit)} "
        f"ELSE TRY_CAST({raw} AS TIMESTAMPTZ) END"
    )
    low, high = EPOCH_PLAUSIBLE
    implausible = f"({epoch} AND {typed} NOT BETWEEN TIMESTAMPTZ '{low}' AND TIMESTAMPTZ '{high}')"
    fail = f"((NOT {epoch} AND NOT regexp_full_match({raw}, '{_RFC3339}')) OR {typed} IS NULL OR {implausible})"
    reason = (
        f"CASE WHEN {implausible} THEN 'epoch {unit} outside {low}..{high}: wrong epoch unit?' "
        "ELSE 'not an RFC 3339 timestamp or epoch integer' END"
    )
    col.typed = typed
    col.utc_fail = (
        f"(NOT {epoch} AND regexp_full_match({raw}, '{_RFC3339}') AND NOT regexp_matches({raw}, '{_UTC_SUFFIX}'))"
    )
    digits = FRACTION_DIGITS[unit]
    col.precision_fail = f"(NOT {epoch} AND length(rtrim(regexp_extract({raw}, '\\.(\\d+)', 1), '0')) > {digits})"
    # examples show a UTC instant read without loss in the one report form; anything else as written
    lossless = (
        f"NOT {epoch} AND regexp_full_match({raw}, '{_RFC3339}') AND regexp_matches({raw}, '{_UTC_SUFFIX}') "
        f"AND length(regexp_extract({raw}, '\\.(\\d+)', 1)) <= 6 AND {typed} IS NOT NULL"
    )
    col.raw = f"CASE WHEN {lossless} THEN {instant_text(typed)} ELSE {raw} END"
    return fail, reason


def _text_date(col: ColumnSQL, raw: str, dtype: DataType, target: str) -> tuple[str, str]:
    col.typed = f"TRY_CAST({raw} AS DATE)"
    fail = f"TRY_CAST({raw} AS DATE) IS NULL OR NOT regexp_full_match({raw}, '^\\d{{4}}-\\d{{2}}-\\d{{2}}$')"
    return fail, "'not an ISO date'"


_TEXT_CHECKS: dict[str, _TextCheck] = {
    "decimal": _text_decimal,
    "int": _text_int,
    "float": _text_float,
    "bool": _text_bool,
    "enum": _text_enum,
    "timestamp": _text_timestamp,
    "date": _text_date,
}


def _decimal_type(physical: str) -> tuple[int, int] | None:
    match = re.match(r"^DECIMAL\((\d+),\s*(\d+)\)$", physical)
    return (int(match[1]), int(match[2])) if match else None


@dataclass
class _Fit:
    """How a typed column's physical type fits its declared one: a schema problem (every value fails with it),
    or the condition a value fails and the SQL of its reason."""

    problem: str | None = None
    row_fail: str | None = None
    reason: str | None = None


# A check of one declared kind, for a column of a typed source: may set ``col.typed`` and ``col.raw``
_TypedCheck = Callable[[ColumnSQL, str, DataType, str], _Fit]


def _typed_column(name: str, dtype: DataType, physical: str) -> ColumnSQL:
    raw = ident(name)
    col = ColumnSQL(name, dtype, True, typed=raw, raw=f"CAST({raw} AS VARCHAR)", is_null=f"{raw} IS NULL")
    target = sql_type(dtype)
    if dtype.kind == "timestamp" and physical == "VARCHAR":
        text = _text_column(name, dtype, json=False)
        text.raw = raw
        return text
    check = _TYPED_CHECKS.get(dtype.kind)
    fit = check(col, raw, dtype, physical) if check is not None else _Fit()
    row_fail, reason = fit.row_fail, fit.reason
    if fit.problem is not None:
        col.schema_problem = fit.problem
        row_fail, reason = "TRUE", sql_string(fit.problem)
        if col.typed == raw:
            col.typed = f"TRY_CAST({raw} AS {target})"
    if row_fail is not None:
        col.type_fail = f"({raw} IS NOT NULL AND ({row_fail}))"
        col.type_reason = reason
    return col


def _typed_string(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    return _Fit(None if physical == "VARCHAR" else f"column is {physical}, not text")


def _typed_enum(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    if not (physical == "VARCHAR" or physical.startswith("ENUM")):
        return _Fit(f"column is {physical}, not text")
    members = ", ".join(sql_string(m) for m in dtype.members)
    col.typed = f"CAST({raw} AS VARCHAR)"
    return _Fit(None, f"CAST({raw} AS VARCHAR) NOT IN ({members})", f"'not one of {', '.join(dtype.members)}'")


def _typed_bool(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    return _Fit(None if physical == "BOOLEAN" else f"column is {physical}, not BOOLEAN")


def _typed_int(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    bits = dtype.bits or 64
    have = DUCKDB_INT_BITS.get(physical)
    if have is None:
        return _Fit(f"column is {physical}, not an integer type")
    if have > bits:
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        return _Fit(None, f"{raw} NOT BETWEEN {low} AND {high}", f"'outside int{bits}'")
    return _Fit()


def _typed_float(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    base = physical.split("(")[0]
    if physical not in ("FLOAT", "DOUBLE") and base not in DUCKDB_INT_BITS and base != "DECIMAL":
        return _Fit(f"column is {physical}, not a number")
    return _Fit()


def _typed_decimal(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    col.typed = f"TRY_CAST({raw} AS {sql_type(dtype)})"
    found = _decimal_type(physical)
    integer_digits = (dtype.precision or 0) - (dtype.scale or 0)
    if physical in ("FLOAT", "DOUBLE"):
        return _Fit(f"column is {physical} where {dtype.text} is declared: floats are not decimals")
    if found is None and physical not in DUCKDB_INT_BITS:
        return _Fit(f"column is {physical} where {dtype.text} is declared")
    p, s = found if found else (39, 0)
    reasons: list[tuple[str, str]] = []
    if s > (dtype.scale or 0):
        reasons.append((f"{raw} <> round({raw}, {dtype.scale})", f"more than {dtype.scale} decimal places"))
    if p - s > integer_digits:
        reasons.append((f"abs({raw}) >= 1e{integer_digits}", f"more than {integer_digits} integer digits"))
    if not reasons:
        return _Fit()
    row_fail = " OR ".join(f"({c})" for c, _ in reasons)
    return _Fit(None, row_fail, "CASE " + " ".join(f"WHEN {c} THEN {sql_string(r)}" for c, r in reasons) + " END")


def _typed_timestamp(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    unit = dtype.time_unit or "ms"
    digits = FRACTION_DIGITS[unit]
    nanos = is_nanosecond_type(physical)
    fit = _Fit()
    if is_instant_type(physical) and nanos:
        col.typed = instant_from_nanoseconds(raw)
        col.raw = instant_text_ns(raw)
    elif is_instant_type(physical):
        col.typed = raw
        col.raw = instant_text(raw)  # the instant as reports show it, on every engine
    elif physical.startswith("TIMESTAMP"):
        col.typed = f"CAST({raw} AS TIMESTAMP) AT TIME ZONE 'UTC'"
        col.utc_fail = f"{raw} IS NOT NULL"
    elif physical.split("(")[0] in DUCKDB_INT_BITS:
        col.typed = _epoch_timestamp(f"CAST({raw} AS HUGEINT)", unit)
        low, high = EPOCH_PLAUSIBLE
        fit.row_fail = f"{col.typed} NOT BETWEEN TIMESTAMPTZ '{low}' AND TIMESTAMPTZ '{high}'"
        fit.reason = f"'epoch {unit} outside {low}..{high}: wrong epoch unit?'"
    else:
        fit.problem = f"column is {physical}, not a UTC timestamp"
        col.typed = f"TRY_CAST({raw} AS TIMESTAMPTZ)"
    if nanos and digits < 9:  # the digits below the microsecond, before the engine's instant drops them
        col.precision_fail = f"epoch_ns({raw}) % {10 ** (9 - digits)} <> 0"
    elif digits < 6 and fit.problem is None:
        col.precision_fail = f"epoch_us({col.typed}) % {10 ** (6 - digits)} <> 0"
    return fit


def _typed_date(col: ColumnSQL, raw: str, dtype: DataType, physical: str) -> _Fit:
    return _Fit(None if physical == "DATE" else f"column is {physical}, not DATE")


_TYPED_CHECKS: dict[str, _TypedCheck] = {
    "string": _typed_string,
    "enum": _typed_enum,
    "bool": _typed_bool,
    "int": _typed_int,
    "float": _typed_float,
    "decimal": _typed_decimal,
    "timestamp": _typed_timestamp,
    "date": _typed_date,
}


def with_conversion_reason(col: ColumnSQL) -> ColumnSQL:
    """``col`` of a converted batch whose ``__mr_<name>`` column says why a value did not convert.

    Such a value keeps its text as written and fails the type check with that reason (a
    date in the wrong format, a local time a DST change skipped); the other time checks
    leave it to the type check.
    """
    failed = f"({ident(REASON_PREFIX + col.name)} IS NOT NULL)"
    col.typed = f"CASE WHEN {failed} THEN NULL ELSE {col.typed} END"
    col.type_fail = f"({failed} OR {col.type_fail or 'FALSE'})"
    col.type_reason = f"coalesce({ident(REASON_PREFIX + col.name)}, {col.type_reason or 'NULL'})"
    if col.utc_fail:
        col.utc_fail = f"(NOT {failed} AND {col.utc_fail})"
    if col.precision_fail:
        col.precision_fail = f"(NOT {failed} AND {col.precision_fail})"
    return col


def missing_column(name: str, dtype: DataType) -> ColumnSQL:
    return ColumnSQL(name, dtype, False, typed=f"CAST(NULL AS {sql_type(dtype)})", raw="NULL", is_null="TRUE")


def column_sql(name: str, dtype: DataType, physical: str | None, *, text: bool, json: bool) -> ColumnSQL:
    """The typed value and failure conditions of contract column ``name``."""
    if physical is None:
        return missing_column(name, dtype)
    if text:
        return _text_column(name, dtype, json)
    return _typed_column(name, dtype, physical)
