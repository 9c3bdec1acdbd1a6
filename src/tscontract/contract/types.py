"""Field types: ``string``, ``int64``, ``decimal(18,8)``, ``enum[a, b]``, ``timestamp_ms_utc``..."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tscontract.contract.grammar import ClauseSyntaxError, parse, unquote

if TYPE_CHECKING:  # lark is imported where a clause is read (grammar.parse)
    from lark import Token, Tree

TypeKind = Literal["string", "bool", "int", "float", "decimal", "timestamp", "date", "enum", "bytes"]
TimeUnit = Literal["s", "ms", "us", "ns"]

TIME_UNITS: tuple[TimeUnit, ...] = ("s", "ms", "us", "ns")
MAX_DECIMAL_PRECISION = 38

_NAMED: dict[str, tuple[TypeKind, int | None]] = {
    "string": ("string", None),
    "str": ("string", None),
    "text": ("string", None),
    "bool": ("bool", None),
    "boolean": ("bool", None),
    "int8": ("int", 8),
    "int16": ("int", 16),
    "int32": ("int", 32),
    "int64": ("int", 64),
    "int": ("int", 64),
    "integer": ("int", 64),
    "float32": ("float", 32),
    "float64": ("float", 64),
    "float": ("float", 64),
    "double": ("float", 64),
    "date": ("date", None),
    "bytes": ("bytes", None),
    "binary": ("bytes", None),
}


@dataclass(frozen=True)
class DataType:
    """A field's declared type, with the text it was written as."""

    text: str
    kind: TypeKind
    bits: int | None = None
    precision: int | None = None
    scale: int | None = None
    time_unit: TimeUnit | None = None
    members: tuple[str, ...] = ()

    @property
    def is_numeric(self) -> bool:
        return self.kind in ("int", "float", "decimal")

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"text": self.text, "kind": self.kind}
        for name in ("bits", "precision", "scale", "time_unit"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.members:
            data["members"] = list(self.members)
        return data


def _timestamp(name: str) -> DataType:
    # timestamp_ms_utc / timestamp_us_utc ...; a timestamp without _utc is refused:
    # the contract's timezone rule is a UTC instant and naive times must fail loudly.
    parts = name.split("_")
    if parts[0] != "timestamp":  # timestamptz, timestamp(3)...: SQL's names, not the contract's
        raise ClauseSyntaxError(f"unknown timestamp type {name!r}; use timestamp_<s|ms|us|ns>_utc")
    if len(parts) == 3 and parts[1] in TIME_UNITS and parts[2] == "utc":
        return DataType(text=name, kind="timestamp", time_unit=parts[1])
    if (len(parts) == 2 and parts[1] in TIME_UNITS) or name == "timestamp":
        raise ClauseSyntaxError(
            f"type {name!r} is a naive timestamp; instants must be UTC: write "
            f"timestamp_{parts[1] if len(parts) == 2 else 'ms'}_utc"
        )
    raise ClauseSyntaxError(f"unknown timestamp type {name!r}; use timestamp_<s|ms|us|ns>_utc")


def parse_type(text: str) -> DataType:
    """Parse a type expression; raise :class:`ClauseSyntaxError` when it is not one."""
    tree = parse("type_expr", text)
    written = text.strip()
    if tree.data == "decimal_type":
        precision, scale = (int(str(tok)) for tok in tree.children[1:3])
        if not 1 <= precision <= MAX_DECIMAL_PRECISION:
            raise ClauseSyntaxError(f"decimal precision {precision} out of range 1..{MAX_DECIMAL_PRECISION}")
        if scale > precision:
            raise ClauseSyntaxError(f"decimal scale {scale} exceeds precision {precision}")
        return DataType(text=written, kind="decimal", precision=precision, scale=scale)
    if tree.data == "enum_type":
        members = tuple(_member(child) for child in tree.children[1:])
        duplicates = sorted({m for m in members if members.count(m) > 1})
        if duplicates:
            raise ClauseSyntaxError(f"enum member(s) listed twice: {', '.join(duplicates)}")
        return DataType(text=written, kind="enum", members=members)
    name = str(tree.children[0])
    lowered = name.lower()
    if lowered.startswith("timestamp"):
        return _timestamp(lowered)
    if lowered in ("decimal", "numeric"):
        raise ClauseSyntaxError(f"type {name!r} needs precision and scale, e.g. decimal(18,8)")
    if lowered == "enum":
        raise ClauseSyntaxError("type 'enum' needs its members, e.g. enum[good, suspect, bad]")
    if lowered not in _NAMED:
        known = ", ".join([*sorted(_NAMED), "decimal(p,s)", "enum[...]", "timestamp_ms_utc"])
        raise ClauseSyntaxError(f"unknown type {name!r}; known types: {known}")
    kind, bits = _NAMED[lowered]
    return DataType(text=written, kind=kind, bits=bits)


def _member(node: Tree[Token] | Token) -> str:
    token = node if isinstance(node, str) else node.children[0]  # a token is a str
    text = str(token)
    return unquote(text) if text[:1] in "'\"" else text
