"""Whether a rule carried in ``odcs.rules`` says what its check says, read as ``import odcs`` reads it.

``export odcs`` writes a carried rule back, as written, in place of the clause's own form. The ``odcs``
section may be written by hand (contract/odcs_carried.py), so a carried rule is written back only where the
import would read it as the very check it stands for: a ``nullValues`` rule for a not-null check, duplicates
for a uniqueness, ``rowCount`` with the contract's bounds, ``invalidValues`` giving the clause's own text,
a SQL rule giving the contract's SQL check (:func:`~tscontract.interop.odcs.rules.duckdb_form`), each with
the check's tolerated share. Anything else (another metric, another threshold, code a tool runs) and the
export writes the check in its own form, so the exported document states what tscontract checks.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from tscontract.contract.model import Contract
from tscontract.contract.odcs_carried import TYPED
from tscontract.contract.types import parse_type
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.draft import in_clause, number_text
from tscontract.interop.odcs.fields import (
    bound_literal,
    format_regex,
    length_clause,
    multiple_of_clause,
    stated_by_scale,
)
from tscontract.interop.odcs.types import Choices, field_type, server_type
from tscontract.interop.odcs.walk import DUPLICATE_METRICS, NULL_METRICS
from tscontract.plan.checks import Check
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import SqlCheckParams


def reads_as(rule: Any, check: Check, contract: Contract, field: Any, said: str) -> bool:
    """Whether ``rule`` (carried for ``check``, on property ``field``) reads as the check (``said``: its text)."""
    if not isinstance(rule, dict):
        return False
    if {"query", "implementation"} & set(rule):
        return "implementation" not in rule and _sql_reads_as(rule, check, contract, field)
    kind = str(rule.get("type") or ("library" if rule.get("metric") or rule.get("rule") else "")).lower()
    metric = str(rule.get("metric") or rule.get("rule") or "")
    try:
        if kind != "library":
            return False
        if metric == "rowCount":
            bounds = contract.row_count
            found = odcs_rules.row_count(rule)
            return check.kind == CheckKind.ROW_COUNT and bounds is not None and found == _bounds(bounds)
        share = check.params.max_failing
        if odcs_rules.failing_rows(rule) != (share.text if share is not None else None):
            return False
        if metric in NULL_METRICS:
            return check.kind == CheckKind.NOT_NULL
        if metric in DUPLICATE_METRICS:
            return check.kind in (CheckKind.UNIQUE, CheckKind.UNIQUE_KEY)
        return metric == "invalidValues" and _values_clause(rule, check) == said
    except odcs_rules.Refused:
        return False


def _bounds(bounds: Any) -> dict[str, int]:
    return {k: getattr(bounds, k) for k in ("min", "max") if getattr(bounds, k) is not None}


def _values_clause(rule: dict[str, Any], check: Check) -> str | None:
    """The clause an ``invalidValues`` rule on the check's column reads as (``f in (...)``, ``f matches ...``)."""
    if not check.columns:
        return None
    column = check.columns[0]
    stated = rule.get("arguments")
    arguments: dict[str, Any] = stated if isinstance(stated, dict) else {}
    valid = rule.get("validValues", arguments.get("validValues"))
    pattern = rule.get("pattern", arguments.get("pattern"))
    if valid is not None and pattern is None:
        return in_clause(column, valid)
    if pattern is not None and valid is None:
        return odcs_rules.matches_clause(column, pattern)
    return None


def _sql_reads_as(rule: dict[str, Any], check: Check, contract: Contract, field: Any) -> bool:
    """A SQL rule, translated as the import translates it, is the contract's SQL check."""
    if check.kind != CheckKind.SQL_CHECK:
        return False
    carried = contract.odcs or {}
    named = carried.get("object") or {}
    tables = {str(named[k]).lower() for k in ("name", "physicalName") if named.get(k)} | {contract.contract.lower()}
    columns = {name.lower(): name for name in contract.fields}
    for name, prop in (carried.get("properties") or {}).items():
        columns.update({str(prop[k]).lower(): name for k in ("name", "physicalName") if prop.get(k)})
    dialect = odcs_rules.server_dialect((carried.get("document") or {}).get("servers"))
    column = field if field in contract.fields else None
    try:
        _written, sql = odcs_rules.duckdb_form(rule, tables, columns, column, dialect)
    except odcs_rules.Refused:
        return False
    return sql == check.params_of(SqlCheckParams).rule.sql


_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def options_read_as(options: Any, field: Any, said: str) -> bool:
    """Whether carried ``logicalTypeOptions`` (``minimum: 0``, ``maxLength: 8``, ``pattern`` ...) on ``field``
    read as the clause ``said``, as the import reads them: otherwise the property would state another bound."""
    if not isinstance(options, dict) or not isinstance(field, str):
        return False
    try:
        return said in _option_clauses(options, field)
    except odcs_rules.Refused:
        return False


def _option_clauses(options: dict[str, Any], field: str) -> set[str]:
    """The clauses ``options`` read as (interop/odcs/fields.py writes them): one bound (v3.0's flag with its
    bound, or v3.1's exclusive bound), a length, a whole step, a pattern or a text format."""
    found: set[str] = set()
    for key, op in _BOUNDS.items():
        value = options.get(key)
        literal = None if value is None or isinstance(value, bool) else bound_literal(value)
        flag = f"exclusive{key[0].upper()}{key[1:]}"
        strict = {">=": ">", "<=": "<"}.get(op, op) if options.get(flag) is True else op
        if literal is not None:
            found.add(f"{field} {strict} {literal}")
    for key, op in (("minLength", ">="), ("maxLength", "<=")):
        n = options.get(key)
        if isinstance(n, int) and not isinstance(n, bool):
            found.add(length_clause(field, op, n))
    step = number_text(options.get("multipleOf"))
    if step is not None:
        found.add(multiple_of_clause(field, step))
    if "pattern" in options:
        found.add(odcs_rules.matches_clause(field, options["pattern"]))
    regex = format_regex(str(options["format"])) if options.get("format") else None
    if regex:
        found.add(odcs_rules.matches_clause(field, regex))
    return found


# logicalTypeOptions a property's type states (the form of its text, its zone): any other option is a check,
# carried with the clause it became (``odcs.rules``) and written back only as that clause (options_read_as)
_TYPE_STATED = ("format", "timezone", "defaultTimezone")


def type_reads_as(carried: dict[str, Any], contract: Contract, name: str) -> bool:
    """Whether a property's carried physicalType, logicalType and options read as the field's type, as the
    import reads them (a type a choice of the import decided, ``--decimal``, ``--type``, reads as open)."""
    servers = ((contract.odcs or {}).get("document") or {}).get("servers")
    read = field_type({k: carried[k] for k in TYPED if k in carried}, Choices(), server_type(servers))
    if not read.type:
        return True  # open: a choice of the import decided it
    try:
        found = replace(parse_type(read.type), text="")
    except ValueError:
        return False
    return found == replace(contract.fields[name].type, text="")  # numeric(24,4) is decimal(24,4)


def type_options(options: dict[str, Any], contract: Contract, name: str) -> dict[str, Any]:
    """The carried options the field's type states (:data:`_TYPE_STATED`, a ``multipleOf`` of its scale)."""
    kept = {k: v for k, v in options.items() if k in _TYPE_STATED}
    scale = contract.fields[name].type.scale
    step = number_text(options.get("multipleOf"))
    if step is not None and scale is not None and Decimal(step) > 0 and stated_by_scale(Decimal(step), scale):
        kept["multipleOf"] = options["multipleOf"]
    return kept
