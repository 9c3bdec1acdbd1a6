"""Load a contract file into a checked :class:`~tscontract.contract.model.Contract`.

Three stages, each failing with file, line, column, clause path and clause text:
YAML as written (:mod:`.source`), the typed model with every clause parsed
(:mod:`.model`), and cross-references between sections (this module).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from tscontract.contract.cache import read_once
from tscontract.contract.clauses import RowClause
from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.located import LocatedErrors, load_located, validate_located
from tscontract.contract.model import (
    FROM_CATALOG,
    IDENTIFIER,
    PER_SERIES,
    Contract,
    FieldSpec,
)
from tscontract.contract.text_files import read_text
from tscontract.contract.types import DataType, parse_type
from tscontract.contract.units import UnitError, check_declarations, check_unit, dimensionality
from tscontract.errors import ContractError, display_path

_IMPLIED_TYPES = {"revision": "int64"}
_T = TypeVar("_T")


def load_contract(path: str | Path) -> Contract:
    """Read and check the contract at ``path``; kept in the cache once read (:func:`.cache.read_once`: a warm
    process reads neither YAML nor clauses, and imports neither ruamel.yaml nor lark)."""
    shown = display_path(path)
    text = read_text(path, "contract")
    return read_once("contract", shown, text, lambda: parse_contract(text, shown), Contract)


def parse_contract(text: str, path: str = "<contract>") -> Contract:
    """Parse contract ``text``; ``path`` is only used in error messages."""
    tree, errors = load_located(text, path, ContractError, "a contract")
    contract = validate_located(Contract, tree, errors)
    return _Checker(contract, tree, errors).run(path).model_copy(update={"positions": errors.index})


class _Checker:
    """Cross-section checks: every name a clause uses must exist and agree."""

    def __init__(self, contract: Contract, tree: dict[str, Any], errors: LocatedErrors) -> None:
        self.contract = contract
        self.tree = tree
        self.errors = errors

    def run(self, path: str) -> Contract:
        """The checked contract; every cross-section error found, the first carrying the others.

        Fields come first (every later check needs their types); each invariant, the constraints and
        each section are then checked on their own, so one bad clause does not hide another."""
        fields = self._fields()
        contract = self.contract.model_copy(update={"fields": fields, "path": path})
        types = {name: spec.type for name, spec in fields.items()}
        written = self.tree.get("invariants") or []
        found: list[ContractError] = []

        def checked(step: Callable[[], _T]) -> _T | None:
            try:
                return step()
            except ContractError as exc:
                found.extend(e for e in exc.all_errors() if isinstance(e, ContractError))
                return None

        def invariant(i: int, clause: RowClause) -> RowClause:
            where = ("invariants", i, "clause") if isinstance(written[i], dict) else ("invariants", i)
            return self._resolve(clause, types, where)

        invariants = [checked(partial(invariant, i, clause)) for i, clause in enumerate(contract.invariants)]
        constraints = checked(lambda: self._constraints(types))
        if not found:
            contract = contract.model_copy(update={"invariants": invariants, "constraints": constraints})
        for step in (self._keys, self._duplicates, self._time, self._units, self._flags):
            checked(partial(step, contract))
        if found:
            found.sort(key=lambda e: (e.location.line, e.location.column) if e.location else (0, 0))
            first = found[0]
            raise ContractError(first.message, first.location, first.section, first.clause, more=found[1:])
        return contract

    # fields and implied provenance columns
    def _fields(self) -> dict[str, FieldSpec]:
        fields: dict[str, FieldSpec] = {}
        for name, spec in self.contract.fields.items():
            if not IDENTIFIER.match(name):
                raise self.errors.at(
                    ("fields", name),
                    f"field name {name!r} is not an identifier (letters, digits and '_', not starting with a digit)",
                    key=True,
                    clause=False,
                )
            raw = self.tree["fields"][name]
            has_value = isinstance(raw, dict) and "value" in raw
            if has_value:
                self._fixed_value(name, spec.type, spec.value)
            if spec.default is not None:
                self._fixed_value(name, spec.type, spec.default, key="default")
            fields[name] = spec.model_copy(update={"name": name, "has_value": has_value})
        for i, name in enumerate(self.contract.provenance_required):
            if not IDENTIFIER.match(name):
                raise self.errors.at(("provenance_required", i), f"provenance column {name!r} is not an identifier")
            if name not in fields:
                implied = parse_type(_IMPLIED_TYPES.get(name, "string"))
                fields[name] = FieldSpec(type=implied, nullable=False, name=name, implied=True)
            elif name == "revision" and fields[name].type.kind != "int":
                raise self.errors.at(
                    ("fields", name, "type"),
                    "the revision column counts restatements: it must be an integer type",
                )
        return fields

    def _fixed_value(self, name: str, dtype: DataType, value: object, key: str = "value") -> None:
        ok = {
            "bool": isinstance(value, bool),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, int | Decimal) and not isinstance(value, bool),
            "decimal": isinstance(value, int | Decimal) and not isinstance(value, bool),
            "string": isinstance(value, str),
            "enum": isinstance(value, str) and value in dtype.members,
        }.get(dtype.kind, False)
        if not ok:
            raise self.errors.at(("fields", name, key), f"{key} {value!r} is not a {dtype.text}", clause=False)

    def _resolve(self, clause: RowClause, types: dict[str, DataType], path: tuple[str | int, ...]) -> RowClause:
        from tscontract.contract.row_resolve import resolve_columns  # sqlglot: only where clauses are read

        try:
            return resolve_columns(clause, types)
        except ClauseSyntaxError as exc:
            raise self.errors.at(path, exc.message, offset=exc.offset) from None

    def _constraints(self, types: dict[str, DataType]) -> dict[str, RowClause]:
        from tscontract.contract.row_parser import parse_field_constraint  # lark: only where clauses are read

        constraints = {}
        for name, spec in self.contract.fields.items():
            if spec.constraint is None:
                continue
            path = ("fields", name, "constraint")
            try:
                clause = parse_field_constraint(name, spec.constraint)
            except ClauseSyntaxError as exc:
                raise self.errors.at(path, exc.message, offset=exc.offset) from None
            constraints[name] = self._resolve(clause, types, path)
        return constraints

    def _keys(self, contract: Contract) -> None:
        if not contract.key:
            raise self.errors.at(("key",), "the natural key lists at least one column")
        for i, column in enumerate(contract.key):
            if column not in contract.fields:
                raise self.errors.at(("key", i), f"key column {column!r} is neither a field nor a provenance column")
        if len(set(contract.key)) != len(contract.key):
            raise self.errors.at(("key",), "the key lists a column twice", clause=False)
        if contract.time.column not in contract.key:
            raise self.errors.at(
                ("key",), f"the key must include the time column {contract.time.column!r}", clause=False
            )
        self._never_null(contract)
        series = contract.series
        if series is not None and series.column not in contract.fields:
            raise self.errors.at(("series", "column"), f"series column {series.column!r} is not a field")
        policy = contract.revision_policy
        if policy is not None and policy.allowed and "revision" not in contract.key:
            raise self.errors.at(
                ("revision_policy", "allowed"),
                "revisions are allowed but 'revision' is not part of the key: "
                "a restatement would collide with the point it restates",
                clause=False,
            )

    def _never_null(self, contract: Contract) -> None:
        """Key, time and provenance columns are never null: declaring one nullable is refused."""
        roles = {name: "provenance column" for name in contract.provenance_required}
        roles.update({name: "key column" for name in contract.key})
        roles[contract.time.column] = "time column"
        why = {
            "time column": "every point has an instant",
            "key column": "a key identifies a point",
            "provenance column": "provenance_required lists it",
        }
        for name, role in roles.items():
            spec = contract.fields.get(name)
            if spec is not None and spec.nullable is True and not spec.implied:
                raise self.errors.at(
                    ("fields", name, "nullable"),
                    f"{role} {name!r} is declared nullable: {why[role]}, so it is never null; "
                    "write nullable: false or leave nullable out",
                    clause=False,
                )

    def _duplicates(self, contract: Contract) -> None:
        by = contract.duplicates.by if contract.duplicates else None
        if by is None:
            return
        spec = contract.fields.get(by)
        if spec is None:
            raise self.errors.at(
                ("duplicates", "by"), f"unknown column {by!r}; the contract's columns are: {', '.join(contract.fields)}"
            )
        if by in contract.key:
            raise self.errors.at(("duplicates", "by"), f"{by!r} is part of the key: every copy of a key has the same")
        if spec.type.kind not in ("int", "decimal", "float", "timestamp", "date"):
            raise self.errors.at(
                ("duplicates", "by"),
                f"{by!r} is {spec.type.text}: copies are ordered by a number or an instant (as text '10' < '9')",
            )

    def _time(self, contract: Contract) -> None:
        time = contract.time
        column = contract.fields.get(time.column)
        if column is None:
            raise self.errors.at(("time", "column"), f"time column {time.column!r} is not a field")
        if column.type.kind != "timestamp":
            raise self.errors.at(
                ("time", "column"), f"time column {time.column!r} is {column.type.text}, not a UTC timestamp"
            )
        if time.precision is not None and time.precision != column.type.time_unit:
            raise self.errors.at(
                ("time", "precision"),
                f"precision {time.precision} disagrees with the column type {column.type.text}",
                clause=False,
            )
        for key in ("ingest_column",):
            name = getattr(time, key)
            if name is None:
                continue
            spec = contract.fields.get(name)
            if spec is None or spec.type.kind != "timestamp":
                raise self.errors.at(("time", key), f"{key} {name!r} must be a UTC timestamp field")
        if contract.freshness is not None and contract.freshness.column is not None:
            spec = contract.fields.get(contract.freshness.column)
            if spec is None or spec.type.kind != "timestamp":
                raise self.errors.at(("freshness", "column"), "freshness is measured on a UTC timestamp field")

    def _units(self, contract: Contract) -> None:
        declared = contract.unit_declarations
        for name, decl in contract.units.items():
            if decl.dimension and decl.definition:
                raise self.errors.at(
                    ("units", name),
                    "declare a unit by a new dimension or by a definition, not both",
                    key=True,
                    clause=False,
                )
        try:
            check_declarations(declared)
        except UnitError as exc:
            faulty = contract.units.get(exc.declared or "")
            if exc.declared is None or faulty is None:
                raise self.errors.at(("units",), str(exc), key=True, clause=False) from None
            key = "definition" if faulty.definition is not None else "dimension"
            raise self.errors.at(("units", exc.declared, key), str(exc), offset=exc.offset) from None
        for name, spec in contract.declared_fields.items():
            base = ("fields", name)
            if spec.unit is not None and not spec.type.is_numeric:
                raise self.errors.at((*base, "unit"), f"unit on non-numeric field {name!r} ({spec.type.text})")
            if spec.unit is not None and not spec.unit_from_catalog:
                try:
                    check_unit(spec.unit, declared)
                except UnitError as exc:
                    raise self.errors.at((*base, "unit"), str(exc), offset=exc.offset) from None
            if spec.dimension is not None and not spec.dimension_from_catalog:
                try:
                    dimensionality(spec.dimension, declared)
                except UnitError as exc:
                    raise self.errors.at((*base, "dimension"), str(exc), offset=exc.offset) from None
            if spec.dimension_from_catalog and not spec.unit_from_catalog:
                raise self.errors.at((*base, "dimension"), f"dimension '{PER_SERIES}' needs unit '{FROM_CATALOG}'")

    def _flags(self, contract: Contract) -> None:
        """``flag_of: glucose``: an enum field beside a nullable value field (a set flag means no value)."""
        for name, spec in contract.declared_fields.items():
            value = spec.flag_of
            if value is None:
                continue
            where = ("fields", name, "flag_of")
            target = contract.fields.get(value)
            if target is None or value == name:
                raise self.errors.at(where, f"flag_of names {value!r}, which is not another field of the contract")
            if spec.type.kind != "enum":
                raise self.errors.at(
                    (*where[:2], "type"),
                    f"flag {name!r} is {spec.type.text}: a flag lists its values, e.g. enum[below_range, above_range]",
                )
            if not contract.is_nullable(value):
                raise self.errors.at(where, f"{value!r} is never null, so a flag of it could never be set")
            if not contract.is_nullable(name):
                raise self.errors.at(where, f"flag {name!r} is never null: a row with a value has no flag")
