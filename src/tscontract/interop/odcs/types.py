"""An ODCS property's type as a tscontract type: physicalType (tscontract or SQL), else logicalType.

:func:`field_type` returns a :class:`Read`: the type, and what the document leaves open that a
contract must state. Nothing is read as a nearby type: a timestamp without time zone needs the zone
its values are written in (``--timezone``), a decimal without precision and scale the server's
default or ``--decimal P,S``, a time of day, a type the database defines (a domain) or an unknown
type ``--type PHYSICAL=TYPE``; a nested property (object, array, struct, json) is not a scalar
field and is left out only by ``--drop`` (:func:`nested`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.types import parse_type
from tscontract.typemap.odcs import NAIVE_NAMES, SQL_READS, ZONED_NAMES, time_unit

_TSCONTRACT = re.compile(
    r"^(string|bool|int(8|16|32|64)|float(32|64)|date|bytes|timestamp_(s|ms|us|ns)_utc"
    r"|(decimal|numeric)\(\s*\d+\s*,\s*\d+\s*\)|enum\[.*\])$"
)
_SQL_TYPES = SQL_READS
_ZONED = ZONED_NAMES
_NAIVE = NAIVE_NAMES
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


def nested(prop: dict[str, Any], choices: Choices) -> str | None:
    """What a property that is not scalar leaves open (a nested value, or a type the document defines)."""
    physical = prop.get("physicalType")
    if _stated_type(prop, choices) is not None or not is_nested(prop):
        return None
    if not prop.get("properties") and "items" not in prop and isinstance(physical, str) and physical.strip():
        base = _base(physical)
        if (
            base not in _NESTED
            and not base.startswith(("array<", "struct<", "map<"))
            and _sql_type(physical, choices, None) is None
        ):  # a type of the database's own (a domain: AdventureWorks' Name, Flag)
            return (
                f"physicalType {physical!r} (logicalType {prop.get('logicalType')}) is not a type tscontract knows: "
                f"give --type {physical}=TYPE or --drop {{columns}}"
            )
    return "nested values (object, array, struct, json): a contract row holds scalars; give --drop {columns}"


def _stated_type(prop: dict[str, Any], choices: Choices) -> Read | None:
    """The type ``--type`` gives the property's physicalType (its logicalType when it has none)."""
    physical = prop.get("physicalType")
    written = physical if isinstance(physical, str) and physical.strip() else prop.get("logicalType")
    if not isinstance(written, str):
        return None
    for name, tsc in choices.types.items():
        if _base(name) == _base(written):
            what = "physicalType" if written is physical else "logicalType"
            return Read(parse_type(tsc).text, note=f"{what} {written!r} read as {tsc} (--type)")
    return None


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


@dataclass(frozen=True)
class Choices:
    """What the user states where a document leaves it open (``import odcs`` options)."""

    timezone: str | None = None  # --timezone: the zone timestamps without one are written in
    decimal: tuple[int, int] | None = None  # --decimal P,S: decimals written without precision and scale
    drop: frozenset[str] = frozenset()  # --drop: properties the contract does not carry (the mapping drops them)
    types: dict[str, str] = field(default_factory=dict)  # --type PHYSICAL=TYPE: types the document defines
    allow_loss: bool = False  # --allow-loss: import although elements have no exact place (each listed)


def make_choices(
    timezone: str | None = None,
    decimal: str | None = None,
    drop: list[str] | None = None,
    types: list[str] | None = None,
    allow_loss: bool = False,
) -> Choices:
    """:class:`Choices` from the command line's texts, or a one-line :class:`InputError`."""
    from tscontract.contract.zones import zone_name
    from tscontract.errors import InputError

    if timezone is not None:
        try:
            zone_name(timezone)
        except ValueError as exc:
            raise InputError(f"--timezone {exc}") from None
    digits = None
    if decimal is not None:
        found = re.fullmatch(r"\s*(\d+)\s*,\s*(\d+)\s*", decimal)
        if found is None or not 1 <= int(found.group(1)) <= 38 or int(found.group(2)) > int(found.group(1)):
            raise InputError(f"--decimal {decimal!r}: give precision and scale, P,S with 1 <= P <= 38 and S <= P")
        digits = (int(found.group(1)), int(found.group(2)))
    stated: dict[str, str] = {}
    for text in types or []:
        physical, _, tsc = text.partition("=")
        try:
            parse_type(tsc.strip())
        except ClauseSyntaxError as exc:
            raise InputError(f"--type {text!r}: give PHYSICAL=TYPE with a tscontract type ({exc})") from None
        if not physical.strip():
            raise InputError(f"--type {text!r}: give PHYSICAL=TYPE")
        stated[physical.strip()] = tsc.strip()
    dropped = frozenset(c.strip() for text in drop or [] for c in text.split(",") if c.strip())
    return Choices(timezone, digits, dropped, stated, allow_loss)


@dataclass(frozen=True)
class Read:
    """How a scalar property is read: the tscontract type, and what the document leaves open."""

    type: str
    length: int | None = None  # varchar(n): an invariant length(x) <= n
    note: str | None = None  # how the document's type is read, kept in the field's note
    naive: bool = False  # a timestamp without time zone: its zone must be stated (--timezone)
    open: str | None = None  # what the user must state, ending in the option that states it
    # what an import that lists rather than asks (DDL, dbt: starting points) reads it as, and the loss it lists
    instead: tuple[str, str] | None = None


# the precision and scale a server gives a decimal written without them (its documentation); PostgreSQL's
# numeric and Oracle's NUMBER have none (any precision), BigQuery's BIGNUMERIC more than 38 digits
DECIMAL_DEFAULTS = {
    "snowflake": {"number": (38, 0), "decimal": (38, 0), "numeric": (38, 0)},
    "bigquery": {"numeric": (38, 9), "decimal": (38, 9)},
    "databricks": {"decimal": (10, 0), "dec": (10, 0), "numeric": (10, 0)},
    "spark": {"decimal": (10, 0), "dec": (10, 0), "numeric": (10, 0)},
    "hive": {"decimal": (10, 0)},
    "sqlserver": {"decimal": (18, 0), "numeric": (18, 0), "dec": (18, 0), "money": (19, 4), "smallmoney": (10, 4)},
    "mysql": {"decimal": (10, 0), "numeric": (10, 0), "dec": (10, 0)},
    "redshift": {"decimal": (18, 0), "numeric": (18, 0)},
    "duckdb": {"decimal": (18, 3), "numeric": (18, 3), "dec": (18, 3)},
}
_DECIMALS = ("decimal", "numeric", "number", "dec", "bignumeric", "money", "smallmoney")
# types with an exact tscontract reading that differs from their family's (Oracle's, XML)
_EXACT = {
    "xml": "string",
    "nclob": "string",
    "rowid": "string",
    "urowid": "string",
    "raw": "bytes",
    "long raw": "bytes",
    "binary_float": "float32",
}


def server_types(servers: Any) -> set[str]:
    """The server types (ODCS ``servers[].type``) of a document; a ``custom`` server's own
    (``customProperties`` ``customType``: ``mssql``, ``dataframe`` ...) stands for it."""
    found = set()
    for server in servers if isinstance(servers, list) else []:
        if not isinstance(server, dict) or not server.get("type"):
            continue
        kind = str(server["type"]).lower()
        if kind == "custom":
            own = [
                p.get("value")
                for p in server.get("customProperties") or []
                if isinstance(p, dict) and p.get("property") == "customType"
            ]
            kind = str(own[0]).lower() if own and own[0] else kind
        found.add({"postgresql": "postgres", "mssql": "sqlserver", "dataframe": "spark"}.get(kind, kind))
    return found


def server_type(servers: Any) -> str | None:
    """The one server type of a document (:func:`server_types`), if its servers agree."""
    types = server_types(servers)
    return next(iter(types)) if len(types) == 1 else None


def _sql_type(physical: str, choices: Choices, server: str | None) -> Read | None:
    """How a SQL type is read, or None when unknown."""
    # a length in brackets (``varchar[50]``, as AdventureWorks documents write it) as in parentheses
    text = re.sub(r"\[(\s*\d+\s*(?:,\s*\d+\s*)?)\]$", r"(\1)", _base(physical))
    args = re.search(r"\(([^)]*)\)", text)
    parts = [a.strip() for a in args.group(1).split(",")] if args else []
    first = parts[0] if parts else None
    second = parts[1] if len(parts) > 1 else None
    name = _base(re.sub(r"\([^)]*\)", " ", text))
    if first is not None and not (first.isdigit() or first == "max"):
        return None
    if name in _DECIMALS:
        as_float = ("float64", f"a decimal without precision and scale ({physical!r}) is read as float64")
        if first and first.isdigit() and (second or "0").isdigit() and int(second or 0) <= int(first):
            if 1 <= int(first) <= 38:
                return Read(f"decimal({first},{second or 0})")
            return Read(
                "",
                open=f"{physical!r} has more than 38 digits: give --type {physical}=TYPE or --drop {{columns}}",
                instead=as_float,
            )
        default = DECIMAL_DEFAULTS.get(server or "", {}).get(name)
        if default is not None:
            p, s = default
            return Read(
                f"decimal({p},{s})", note=f"{physical!r} without precision and scale is decimal({p},{s}) on {server}"
            )
        if choices.decimal is not None:
            p, s = choices.decimal
            return Read(
                f"decimal({p},{s})", note=f"{physical!r} without precision and scale: decimal({p},{s}) (--decimal)"
            )
        return Read(
            "",
            open=f"{physical!r} without precision and scale: give --decimal P,S, the precision and scale "
            "of their values",
            instead=as_float,
        )
    if name in _ZONED or name.startswith("timestamp with time zone"):
        return Read(f"timestamp_{time_unit(first)}_utc")
    if name in _NAIVE:
        instant = f"timestamp_{time_unit(first)}_utc"
        listed = f"{physical!r} has no time zone: read as a UTC instant (values without an offset fail time.timezone)"
        return Read(instant, naive=True, instead=(instant, listed))
    if name in ("time", "time without time zone", "time with time zone", "timetz"):
        return Read(
            "",
            open=f"a time of day ({physical!r}) has no tscontract type: "
            f"give --type {name}=string or --drop {{columns}}",
            instead=("string", f"a time of day ({physical!r}) has no tscontract type: read as string"),
        )
    if name in _EXACT:
        return Read(_EXACT[name])
    if name == "float":
        return _float(physical, first, server)
    if name in _SQL_TYPES:
        tsc = _SQL_TYPES[name]
        length = int(first) if tsc == "string" and first and first != "max" and name not in ("uuid",) else None
        if name in ("char", "character", "nchar", "bpchar") and length is not None:
            note = f"fixed-width {physical!r}: a string of at most {length} characters"
            return Read(
                tsc, length, note=note, instead=(tsc, f"fixed-width {physical!r} is read as string (no padding rule)")
            )
        return Read(tsc, length)
    return None


# servers whose FLOAT without a precision is 4 bytes (IEEE single): DuckDB (FLOAT = REAL), Spark and
# Databricks (FloatType), Hive, MySQL; elsewhere (Snowflake, BigQuery, PostgreSQL, SQL Server, Oracle) a double
FLOAT32_SERVERS = frozenset(("duckdb", "databricks", "spark", "hive", "mysql"))


def _float(physical: str, precision: str | None, server: str | None) -> Read:
    """SQL ``FLOAT``: ``FLOAT(p)`` has p binary digits (p <= 24: single precision); a bare FLOAT is
    the server's (:data:`FLOAT32_SERVERS`)."""
    if precision is not None and precision.isdigit():
        return Read("float32" if int(precision) <= 24 else "float64")
    if server in FLOAT32_SERVERS:
        return Read("float32", note=f"{physical!r} is 4 bytes on {server}: float32")
    return Read("float64")


# a text whose ``format`` makes it another type (JSON Schema's formats, as JSON-based tools write them)
_TEXT_FORMATS = {"date-time": "timestamp_us_utc", "date": "date"}


def field_type(prop: dict[str, Any], choices: Choices, server: str | None = None) -> Read:
    """How a scalar property is read (``server``: the document's one server type, for its defaults)."""
    physical = prop.get("physicalType")
    stated = _stated_type(prop, choices)
    if stated is not None:
        return stated
    if isinstance(physical, str) and _TSCONTRACT.match(physical.strip()):
        try:
            return Read(parse_type(physical).text)
        except ClauseSyntaxError:
            pass
    if isinstance(physical, str) and physical.strip():
        found = _sql_type(physical, choices, server)
        if found is not None:
            return found
        return Read(
            "",
            open=f"physicalType {physical!r} is not a type tscontract knows: "
            f"give --type {physical}=TYPE or --drop {{columns}}",
        )
    logical = str(prop.get("logicalType") or "string").lower()
    raw_options = prop.get("logicalTypeOptions")
    options = raw_options if isinstance(raw_options, dict) else {}
    fmt = str(options.get("format", ""))
    if logical == "integer":
        return Read({"i8": "int8", "i16": "int16", "i32": "int32"}.get(fmt, "int64"))
    if logical == "number":
        return Read("float32" if fmt == "f32" else "float64")
    if logical == "boolean":
        return Read("bool")
    if logical == "timestamp":
        return Read("timestamp_us_utc", naive=options.get("timezone") is False)
    if logical == "time":
        return Read("", open="a time of day has no tscontract type: give --type time=string or --drop {columns}")
    if logical == "date":
        return Read("timestamp_ms_utc" if "HH" in fmt else "date")
    if logical == "string" and fmt in _TEXT_FORMATS:
        return Read(_TEXT_FORMATS[fmt])
    return Read("string")
