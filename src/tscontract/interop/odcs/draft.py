"""A draft contract as an importer builds it (the result is interop/imports/result.py): the clauses it writes,
and the helpers every importer shares (names, time and key, clause placement, mapping, a load-and-retry check)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tscontract.contract.model import IDENTIFIER, SEMVER
from tscontract.errors import InputError, SourceError
from tscontract.interop.imports.result import Loss
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.yaml_out import dump

_TEXT_SHOWN = 200
_MAX_RETRIES = 50
_LOSSES_NAMED = 3  # the losses a refusal names in its one line


def shown(value: Any) -> str:
    """An element as one line of text, at most 200 characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_SHOWN else text[: _TEXT_SHOWN - 3] + "..."


def identifier(name: str) -> str:
    """``Transaction Date`` → ``transaction_date``; an identifier stays as written."""
    if IDENTIFIER.match(name):
        return name
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    out = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_") or "column"
    return f"_{out}" if out[0].isdigit() else out


def refusal(losses: list[Loss]) -> str:
    """One line for an object with elements that have no exact place: the first few, the option."""
    shown = "; ".join(f"{loss.path}: {loss.reason}" for loss in losses[:_LOSSES_NAMED])
    more = f"; and {len(losses) - _LOSSES_NAMED} more" if len(losses) > _LOSSES_NAMED else ""
    return (
        f"{len(losses)} element{'s' if len(losses) > 1 else ''} with no exact place in a tscontract contract "
        f"({shown}{more}); give --allow-loss to import without {'them' if len(losses) > 1 else 'it'} (each listed)"
    )


def verified(build: Any, losses: list[Loss]) -> str:
    """Contract YAML that loads: a generated clause the loader refuses becomes a loss, then retry."""
    from tscontract.contract.loader import parse_contract

    for _ in range(_MAX_RETRIES):
        text, generated = build()
        try:
            parse_contract(text, "<imported>")
            return str(text)
        except SourceError as exc:
            refused: dict[int, tuple[_Clause, SourceError]] = {}
            for error in exc.all_errors():
                if not isinstance(error, SourceError):  # only a SourceError names the section it is in
                    continue
                origin = _origin(error, generated)
                if origin is not None and id(origin) not in refused:
                    refused[id(origin)] = (origin, error)
            if not refused:
                raise InputError(f"the imported contract does not load: {exc.one_line()}") from None
            for origin, error in refused.values():
                origin.dropped = True
                losses.append(
                    Loss(origin.path, origin.written, f"tscontract refuses {origin.clause!r}: {error.message}")
                )
    raise InputError("the imported contract does not load")  # pragma: no cover - bounded retries


def _origin(error: SourceError, generated: dict[str, _Clause]) -> _Clause | None:
    """The generated clause an error is in: its section, or the longest generated section above it."""
    section = error.section or ""
    above = [k for k in generated if section == k or section.startswith((f"{k}.", f"{k}["))]
    return generated[max(above, key=len)] if above else None


def _plain(value: Any) -> Any:
    """A YAML value as JSON data: numbers as numbers, dates and times as their ISO text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and "." not in str(value) else float(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _lines(value: Any) -> Any:
    """A text of several lines as a YAML block (``|``), one line as it is."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    return LiteralScalarString(value) if isinstance(value, str) and "\n" in value else value


def semver(value: Any, losses: list[Loss]) -> str:
    text = str(value) if value is not None else ""
    if SEMVER.match(text):
        return text
    losses.append(Loss("version", shown(value), "not semantic versioning (MAJOR.MINOR.PATCH): written as 0.0.0"))
    return "0.0.0"


def own_type(value: Any) -> str | None:
    """A tscontract type kept in a property's customProperties (``type: enum[good, bad]``), if it parses."""
    from tscontract.contract.grammar import ClauseSyntaxError
    from tscontract.contract.types import parse_type

    if not isinstance(value, str):
        return None
    try:
        return parse_type(value).text
    except ClauseSyntaxError:
        return None


def in_clause(column: str, values: Any) -> str:
    """``f in ('a', 'b')`` for a list of values (nulls apart: a null passes every clause)."""
    if not isinstance(values, list) or not any(v is not None for v in values):
        raise odcs_rules.Refused(f"no values to be in: {shown(values)}")
    literals = [number_text(v) or "'" + str(v).replace("'", "''") + "'" for v in values if v is not None]
    return f"{column} in ({', '.join(literals)})"


def number_text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    return format(Decimal(value), "f")


def contract_name(written: str) -> str:
    """A contract name (a letter first, then letters, digits, ``_.-``) for a name as a document writes it."""
    name = written if re.match(r"^[A-Za-z][A-Za-z0-9_.-]*$", written) else identifier(written)
    return name if name[:1].isalpha() else f"c{name}"


def time_and_key(
    fields: dict[str, dict[str, Any]],
    key: list[str],
    time: dict[str, Any] | None,
    time_option: tuple[str, str] | None,
    no_instant: str,
    key_name: str,
) -> tuple[list[str], dict[str, Any]]:
    """The time rules (``--time-column`` as written and its field; the stated ones; the key's instant,
    else the only one) and the key, which must include the time column; else a one-line refusal naming
    the candidates (``no_instant`` when there is no instant at all)."""
    instants = [n for n, f in fields.items() if str(f["type"]).startswith("timestamp")]
    if time_option is not None:
        written, column = time_option
        if column not in instants:
            raise InputError(
                f"--time-column {written!r} is {fields[column]['type']}, not an instant"
                f"{'; instants: ' + ', '.join(instants) if instants else ''}"
            )
        time = {"column": column}
    elif time is None:
        in_key = [c for c in key if c in instants]
        chosen = in_key if len(in_key) == 1 else instants if len(instants) == 1 else []
        if not chosen:
            if not instants:
                raise InputError(no_instant)
            raise InputError(f"no time column: give --time-column C (candidates: {', '.join(instants)})")
        time = {"column": chosen[0]}
    column = time["column"]
    if not key:
        others = [n for n, f in fields.items() if n != column and not str(f["type"]).startswith(("float", "bool"))]
        raise InputError(
            f"no primary key: give --key COLUMNS (the key must include the time column {column}; "
            f"candidates: {', '.join([column, *others[:6]])})"
        )
    if column not in key:
        raise InputError(
            f"{key_name} ({', '.join(key)}) does not include the time column {column}: "
            f"give --key (e.g. --key {','.join([*key, column])}) or --time-column"
        )
    return key, time


def place_clauses(
    clauses: list[_Clause], fields: dict[str, dict[str, Any]], generated: dict[str, _Clause]
) -> list[Any]:
    """The clauses not dropped: each the ``constraint`` of its field when it is the field's only clause,
    at error severity with no options, and starts with the field; else an invariant (in the returned
    list). ``generated`` gets the section each is written at."""
    invariants: list[Any] = []
    live = [c for c in clauses if not c.dropped]
    per_column = Counter(c.column for c in live if c.column)
    for c in live:
        entry = fields.get(c.column or "")
        if (
            c.column
            and entry is not None
            and "constraint" not in entry
            and per_column[c.column] == 1
            and not c.options()
            and c.clause.startswith(f"{c.column} ")
            and _constraint(c.clause[len(c.column) + 1 :])
        ):
            entry["constraint"] = c.clause[len(c.column) + 1 :]
            generated[f"fields.{c.column}.constraint"] = c
            continue
        at = f"invariants[{len(invariants)}]"
        invariants.append({"clause": c.clause, **c.options()} if c.options() else c.clause)
        if c.written != "round-trip":
            generated[at] = c
    return invariants


def _constraint(text: str) -> bool:
    """Whether a clause without its leading field reads as a field constraint (``>= 0``, not ``is not null``)."""
    from tscontract.contract.grammar import ClauseSyntaxError, parse

    try:
        parse("field_constraint", text)
    except ClauseSyntaxError:
        return False
    return True


def header_notes(mapped: bool, losses: list[Loss]) -> str:
    """The header comment lines after the origin: a mapping beside the file, what was not carried."""
    text = "# the data's own column names are in the mapping written beside this file\n" if mapped else ""
    if losses:
        text += "# not carried over (no place in tscontract, or read as stated):\n"
        text += "".join(f"#   {loss.line()}\n" for loss in losses)
    return text


def mapping_text(
    name: str,
    version: str,
    description: str,
    columns: dict[str, str],
    drop: list[str],
    zones: dict[str, str] | None = None,
) -> str | None:
    """The mapping that reads the data's own column names into the contract's fields, if any differ,
    and local times (``zones``: field -> the zone its naive timestamps are written in) as instants."""
    zones = zones or {}
    if not columns and not drop and not zones:
        return None
    mapping: dict[str, Any] = {"mapping": name, "transform_version": version, "description": description}
    if columns or zones:
        mapping["columns"] = {
            f: {"from": columns.get(f, f), **({"zone": zones[f]} if f in zones else {})}
            for f in [*columns, *(z for z in zones if z not in columns)]
        }
    if drop:
        mapping["drop"] = list(drop)
    return dump(mapping)


@dataclass
class _Clause:
    """A clause the import writes, and the ODCS element it comes from."""

    path: str
    written: str
    clause: str
    column: str | None = None  # a field constraint (else an invariant)
    severity: str = "error"
    dropped: bool = False
    max_failing: str | None = None
    description: str | None = None
    note: str | None = None  # the rule's dimension
    # what it came from, as written, carried for export odcs: {"options": {logicalTypeOptions}} or {"rule": rule}
    source: dict[str, Any] | None = None

    def became(self) -> dict[str, Any]:
        """The carried entry: what the clause says (its text, severity, share) and what it came from."""
        said: dict[str, Any] = {"clause": self.clause}
        if self.column:
            said["field"] = self.column
        if self.severity != "error":
            said["severity"] = self.severity
        if self.max_failing:
            said["max_failing"] = self.max_failing
        return {**said, **(self.source or {})}

    def options(self) -> dict[str, Any]:
        """severity, max_failing, description, note: the keys a clause section writes beside its rule."""
        out: dict[str, Any] = {"severity": self.severity} if self.severity != "error" else {}
        for k in ("max_failing", "description", "note"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        return out
