"""Sentinel values: a reading the source writes for "no measurement", kept as a flag, never as a value.

A mapping's column rule may say::

    glucose_mg_dl:
      from: Glucose Value (mg/dL)
      sentinels:
        flag: glucose_flag                       # a contract field: enum[...], flag_of: glucose_mg_dl
        values: {below_range: [40], above_range: [400], no_reading: [nil, null]}

A row whose source cell is a sentinel gets the value NULL and the flag the member it is listed
under; any other row gets its value converted as usual and no flag. The row count never changes.

Matching is exact and typed, never coerced:

- ``null`` matches a missing cell (an empty CSV field, a null in Parquet);
- a text (``nil``, ``'40'``) matches a text cell written exactly so (case and spaces count); a text
  sentinel on a number, time or boolean column is refused (the cell can never be that text);
- a number (``40``, ``40.5``) matches a number column's value equal to it in the column's type (40
  matches 40.0 in a DOUBLE). In a text source (CSV) a cell is text: a number sentinel matches the cell
  written as the number is written in the mapping (``40`` matches ``40``). A cell that reads as the
  number but is written otherwise (``40.0``, ``040``, ``+40``) is neither converted nor let through: it
  fails the field's type check with the reason, so a sentinel never passes as a measurement.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import field_validator

from tscontract.contract.model import Contract, _Section
from tscontract.sql.columns import sql_string

if TYPE_CHECKING:
    from collections.abc import Callable

    from tscontract.errors import TscontractError

Sentinel = str | int | Decimal | None
_TEXT_TYPES = ("VARCHAR", "JSON")
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")
_NUMBER_TYPES = (*_INTEGER_TYPES, *("U" + name for name in _INTEGER_TYPES), "FLOAT", "DOUBLE", "DECIMAL")


def _sentinels(value: dict[str, list[Any]]) -> dict[str, list[Any]]:
    seen: dict[tuple[str, str], str] = {}
    for member, items in value.items():
        if not isinstance(items, list) or not items:
            raise ValueError(f"{member}: give a list of the source values that mean it, e.g. [40]")
        for item in items:
            if isinstance(item, bool) or not isinstance(item, str | int | Decimal | None):
                raise ValueError(f"{member}: a sentinel is a text, a number or null, got {item!r}")
            key = (_kind(item), str(item))
            if key in seen:
                raise ValueError(f"sentinel {item!r} is listed under {seen[key]} and {member}")
            seen[key] = member
    return value


def _kind(item: Sentinel) -> str:
    return "null" if item is None else "text" if isinstance(item, str) else "number"


class Sentinels(_Section):
    """``sentinels: {flag: F, values: {member: [source values]}}`` on a column rule."""

    flag: str
    values: dict[str, list[Any]]  # each item a Sentinel: checked here, with a message that says so
    note: str | None = None

    _check_values = field_validator("values")(classmethod(lambda cls, value: _sentinels(value)))

    @property
    def listed(self) -> list[tuple[Sentinel, str]]:
        """Every sentinel with the flag member it sets, in the mapping's order."""
        return [(item, member) for member, items in self.values.items() for item in items]


def check_against_contract(
    field: str, sentinels: Sentinels, contract: Contract, error: Callable[[tuple[str, ...], str], TscontractError]
) -> None:
    """The flag is a declared enum field that says ``flag_of: <field>`` and lists every member used."""
    flag = contract.fields.get(sentinels.flag)
    if flag is None:
        raise error(("flag",), f"flag column {sentinels.flag!r} is not a field of {contract.contract}: declare it")
    if flag.type.kind != "enum":
        raise error(
            ("flag",), f"flag column {sentinels.flag!r} is {flag.type.text}; the contract must list its values (enum)"
        )
    if flag.flag_of != field:
        raise error(
            ("flag",),
            f"flag column {sentinels.flag!r} must say flag_of: {field} in the contract (it says {flag.flag_of})",
        )
    for member in sentinels.values:
        if member not in flag.type.members:
            raise error(
                ("values", member),
                f"{member!r} is not a value of {sentinels.flag} ({flag.type.text})",
            )


def _is(physical: str, kinds: tuple[str, ...]) -> bool:
    return physical.upper().split("(")[0] in kinds  # DECIMAL(18,3) is a DECIMAL; INTEGER[] is a list


def check_source_type(
    sentinels: Sentinels, column: str, physical: str, error: Callable[[tuple[str, ...], str], TscontractError]
) -> None:
    """A sentinel the source column's values can never be is refused, not silently unmatched."""
    text, number = _is(physical, _TEXT_TYPES), _is(physical, _NUMBER_TYPES)
    for item, member in sentinels.listed:
        kind = _kind(item)
        if kind == "text" and not text:
            raise error(
                ("values", member),
                f"sentinel {item!r} is text but source column {column!r} is {physical}: "
                f"a {physical} cell is never text (write a number, unquoted, or null)",
            )
        if kind == "number" and not (text or number):
            raise error(("values", member), f"sentinel {item} is a number but source column {column!r} is {physical}")


def _literal(item: Sentinel, text: bool) -> str:
    return sql_string(str(item)) if text or isinstance(item, str) else str(item)


def _is_sentinel(raw: str, item: Sentinel, text: bool) -> str:
    """The condition that the raw cell is the sentinel ``item`` (null matches a missing cell)."""
    return f"{raw} IS NULL" if item is None else f"{raw} = {_literal(item, text)}"


def matched_sql(sentinels: Sentinels, raw: str, physical: str) -> str:
    """True where the raw cell is a sentinel."""
    text = _is(physical, _TEXT_TYPES)
    return f"coalesce({' OR '.join(_is_sentinel(raw, item, text) for item, _ in sentinels.listed)}, FALSE)"


def flag_sql(sentinels: Sentinels, raw: str, physical: str) -> str:
    """The flag member a sentinel sets; NULL for a reading."""
    text = _is(physical, _TEXT_TYPES)
    whens = [f"WHEN {_is_sentinel(raw, item, text)} THEN {sql_string(member)}" for item, member in sentinels.listed]
    return f"CASE {' '.join(whens)} END"


def near_miss_sql(sentinels: Sentinels, raw: str, physical: str) -> str | None:
    """On a text column: why a cell that reads as a number sentinel but is written otherwise fails."""
    numbers = [item for item, _ in sentinels.listed if isinstance(item, int | Decimal)]
    if not numbers or not _is(physical, _TEXT_TYPES):
        return None
    read = f"TRY_CAST({raw} AS DECIMAL(38,18))"
    whens = [
        f"WHEN {read} = {item} THEN '''' || {raw} || ''' equals the sentinel {item} but is not written as it: "
        f"list ''' || {raw} || ''' among the sentinels or correct the file'"
        for item in numbers
    ]
    return f"CASE {' '.join(whens)} END"
