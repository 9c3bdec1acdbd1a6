"""An ODCS property's type as a tscontract type: physicalType (tscontract or SQL), else logicalType.

:func:`field_type` returns the type text and, when the type says less or other than the document,
the reason (a loss). Types tscontract has no home for are read as the nearest one and listed:
a naive timestamp as a UTC instant, a time of day as text, a decimal without precision as float64.
Nested properties (``object``/``array``, ``struct``, ``json``) are not scalar: ``None``.
"""

from __future__ import annotations

import re
from typing import Any

from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.types import parse_type

_TSCONTRACT = re.compile(
    r"^(string|bool|int(8|16|32|64)|float(32|64)|date|bytes|timestamp_(s|ms|us|ns)_utc"
    r"|(decimal|numeric)\(\s*\d+\s*,\s*\d+\s*\)|enum\[.*\])$"
)
_SQL = {
    "string": (
        "varchar",
        "char",
        "character",
        "character varying",
        "nvarchar",
        "nchar",
        "text",
        "string",
        "uuid",
        "clob",
        "varchar2",
        "nvarchar2",
        "citext",
        "str",
        "bpchar",
        "longtext",
        "mediumtext",
        "tinytext",
    ),
    "bool": ("boolean", "bool", "bit", "logical"),
    "int8": ("tinyint", "byte", "int1"),
    "int16": ("smallint", "int2", "short", "smallserial"),
    "int32": ("integer", "int", "int4", "serial", "mediumint"),
    "int64": ("bigint", "int8", "long", "bigserial", "int64", "integer64"),
    "float32": ("real", "float4", "float32"),
    "float64": ("double", "double precision", "float8", "float", "float64", "binary_double"),
    "date": ("date",),
    "bytes": ("bytes", "binary", "varbinary", "bytea", "blob", "longblob", "image"),
}
_SQL_TYPES = {name: tsc for tsc, names in _SQL.items() for name in names}
_ZONED = (
    "timestamptz",
    "timestamp with time zone",
    "timestamp_tz",
    "timestamp_ltz",
    "timestampltz",
    "datetimeoffset",
    "timestamp with local time zone",
    "datetime2 with time zone",
)
_NAIVE = (
    "timestamp",
    "timestamp without time zone",
    "timestamp_ntz",
    "timestampntz",
    "datetime",
    "datetime2",
    "smalldatetime",
)
_NESTED = (
    "object",
    "array",
    "struct",
    "map",
    "record",
    "json",
    "jsonb",
    "variant",
    "list",
    "row",
    "super",
    "geography",
    "geometry",
)


def is_nested(prop: dict[str, Any]) -> bool:
    physical = _base(prop.get("physicalType"))
    return (
        str(prop.get("logicalType", "")).lower() in ("object", "array")
        or bool(prop.get("properties"))
        or "items" in prop
        or physical in _NESTED
        or physical.startswith(("array<", "struct<", "map<"))
    )


def _base(physical: Any) -> str:
    return re.sub(r"\s+", " ", str(physical or "").strip().lower())


def _sql_type(physical: str) -> tuple[str, str | None, int | None] | None:
    """(tscontract type, reason it says less, max length) for a SQL type, or None when unknown."""
    # a length in brackets (``varchar[50]``, as AdventureWorks documents write it) as in parentheses
    text = re.sub(r"\[(\s*\d+\s*(?:,\s*\d+\s*)?)\]$", r"(\1)", _base(physical))
    args = re.search(r"\(([^)]*)\)", text)
    parts = [a.strip() for a in args.group(1).split(",")] if args else []
    first = parts[0] if parts else None
    second = parts[1] if len(parts) > 1 else None
    name = _base(re.sub(r"\([^)]*\)", " ", text))
    if first is not None and not (first.isdigit() or first == "max"):
        return None
    if name in ("decimal", "numeric", "number", "dec", "bignumeric", "money"):
        if (
            first
            and first.isdigit()
            and 1 <= int(first) <= 38
            and (second or "0").isdigit()
            and int(second or 0) <= int(first)
        ):
            return f"decimal({first},{second or 0})", None, None
        return "float64", f"a decimal without precision and scale ({physical!r}) is read as float64", None
    if name in _ZONED or name.startswith("timestamp with time zone"):
        return f"timestamp_{_time_unit(first)}_utc", None, None
    if name in _NAIVE:
        return (
            f"timestamp_{_time_unit(first)}_utc",
            f"{physical!r} has no time zone: read as a UTC instant (values without an offset fail time.timezone)",
            None,
        )
    if name in ("time", "time without time zone", "time with time zone", "timetz"):
        return "string", f"a time of day ({physical!r}) has no tscontract type: read as string", None
    if name in _SQL_TYPES:
        tsc = _SQL_TYPES[name]
        length = int(first) if tsc == "string" and first and first != "max" and name not in ("uuid",) else None
        if name in ("char", "character", "nchar", "bpchar") and length is not None:
            return tsc, f"fixed-width {physical!r} is read as string (no padding rule)", None
        return tsc, None, length
    return None


def _time_unit(digits: str | None) -> str:
    if digits is None or not digits.isdigit():
        return "us"
    n = int(digits)
    return next(unit for limit, unit in ((0, "s"), (3, "ms"), (6, "us"), (9, "ns")) if n <= limit)


def field_type(prop: dict[str, Any]) -> tuple[str, str | None, int | None]:
    """(type text, reason when the type is read as something near, varchar length) of a scalar property."""
    physical = prop.get("physicalType")
    if isinstance(physical, str) and _TSCONTRACT.match(physical.strip()):
        try:
            return parse_type(physical).text, None, None
        except ClauseSyntaxError:
            pass
    if isinstance(physical, str) and physical.strip():
        found = _sql_type(physical)
        if found is not None:
            return found
    logical = str(prop.get("logicalType") or "string").lower()
    options = prop.get("logicalTypeOptions") if isinstance(prop.get("logicalTypeOptions"), dict) else {}
    fmt = str(options.get("format", ""))
    unknown = f"physicalType {physical!r} is not a type tscontract knows; " if physical else ""
    if logical == "integer":
        tsc = {"i8": "int8", "i16": "int16", "i32": "int32"}.get(fmt, "int64")
    elif logical == "number":
        tsc = "float32" if fmt == "f32" else "float64"
    elif logical == "boolean":
        tsc = "bool"
    elif logical == "timestamp":
        naive = options.get("timezone") is False
        reason = "logicalType timestamp with timezone: false is read as a UTC instant" if naive else None
        return "timestamp_us_utc", _join(unknown, reason), None
    elif logical == "time":
        return "string", _join(unknown, "a time of day has no tscontract type: read as string"), None
    elif logical == "date":
        tsc = "timestamp_ms_utc" if "HH" in fmt else "date"
    else:
        tsc = "string"
    return tsc, _join(unknown, f"read from logicalType {logical!r} as {tsc}" if unknown else None), None


def _join(unknown: str, reason: str | None) -> str | None:
    if not unknown:
        return reason
    return unknown + (reason or "read from its logicalType")
