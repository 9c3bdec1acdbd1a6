"""JSON Schema (draft 2020-12): one record of the contract as a JSON object.

JSON has one number type, so decimals travel as strings, and the schema checks
their digits with a pattern: at most ``p - s`` integer digits and ``s`` places
(trailing zeros beyond the scale are not precision, as in ``tscontract
validate``). A consumer that wants JSON numbers cannot have the scale checked by
a schema: ``tscontract validate`` reads JSON numbers by their literal digits.
Instants are RFC 3339 strings: ``format: date-time``, a pattern that requires
the UTC offset (``Z`` or ``+00:00``) and one that allows no finer fraction than
the declared precision. (``tscontract validate`` also reads epoch integers from
JSON lines; the schema states the interchange form, RFC 3339 text.)

The schema is closed (``additionalProperties: false``); ``required`` lists the
non-nullable fields; enum members are ``enum``; a fixed value is ``const``.
Row clauses (invariants, constraints) are translated where JSON Schema can
state them exactly — comparisons of one field with literals, combined with
``and``/``or``/``not``/``is null``, with SQL's rule that a null operand does not
break a clause — and listed as not exported otherwise (two fields compared,
arithmetic, catalog lookups).

Every subschema that states a clause carries ``"$comment": "tscontract check
<id>"`` and the clause text, as written, in ``description``; the property
schema itself states ``field.<name>.type``. A validation error is traced back
to its check through the nearest ``$comment`` on its schema path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

import sqlglot.expressions as exp

from tscontract.contract.clauses import CATALOG_TABLE
from tscontract.contract.model import Contract, FieldSpec
from tscontract.contract.regex import ecma_pattern
from tscontract.contract.types import DataType
from tscontract.errors import InputError
from tscontract.interop.exports import Artifact, ExportResult
from tscontract.interop.exports._records import RECORD_UNSUPPORTED, batch_reason, field_doc_parts, tolerance_reason
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import PatternParams
from tscontract.typemap.jsonschema import int_bounds, json_type
from tscontract.typemap.table import FRACTION_DIGITS

# what the schema states of each kind of check, and why it states none of the others
HANDLERS = frozenset(
    {
        CheckKind.TYPE,
        CheckKind.NOT_NULL,
        CheckKind.UNKNOWN_COLUMNS,
        CheckKind.UTC_INSTANT,
        CheckKind.TIME_PRECISION,
        CheckKind.SERIES_PATTERN,
        CheckKind.FIXED_VALUE,
        CheckKind.INVARIANT,
        CheckKind.CONSTRAINT,
    }
)
UNSUPPORTED: dict[CheckKind, str] = {
    **RECORD_UNSUPPORTED,
    CheckKind.REQUIRED_COLUMNS: "a record may omit a nullable field (absent is null); required lists the others",
}

DRAFT = "https://json-schema.org/draft/2020-12/schema"
TAG = "tscontract check "
_OPTIONS = ("id",)
_OFFSET = "([Zz]|[+-][0-9]{2}:[0-9]{2})"
INSTANT = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)"
    rf"(\.[0-9]+)?{_OFFSET}?$"
)
UTC_OFFSET = "([Zz]|[+-]00:00)$"
_ZERO = r"^[+-]?0+(\.0+)?$"
_NEGATIVE = r"^-(?!0+(\.0+)?$)"
_POSITIVE = r"^\+?(?!0+(\.0+)?$)[0-9]"
_FLIP: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.GT: exp.LT,
    exp.LT: exp.GT,
    exp.GTE: exp.LTE,
    exp.LTE: exp.GTE,
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
}
_NUMBER_KEYWORDS: dict[type[exp.Expression], str] = {
    exp.GTE: "minimum",
    exp.GT: "exclusiveMinimum",
    exp.LTE: "maximum",
    exp.LT: "exclusiveMaximum",
}


class _Inexpressible(Exception):
    """A clause JSON Schema cannot state exactly; the message is the reason."""


def decimal_pattern(precision: int, scale: int) -> str:
    """A decimal's text with at most ``precision - scale`` integer digits and ``scale`` places."""
    integer_digits = precision - scale
    integer = f"0*[0-9]{{1,{integer_digits}}}" if integer_digits else "0+"
    fraction = rf"(\.[0-9]{{1,{scale}}}0*)?" if scale else r"(\.0+)?"
    return f"^[+-]?{integer}{fraction}$"


def fraction_pattern(unit: str) -> str:
    """An RFC 3339 instant with no finer fraction than ``unit`` (trailing zeros are not precision)."""
    digits = FRACTION_DIGITS[unit]
    fraction = rf"(\.[0-9]{{1,{digits}}}0*)?" if digits else r"(\.0+)?"
    return rf"^[^.]*{fraction}{_OFFSET}?$"


def type_schema(dtype: DataType) -> dict[str, Any]:
    """The JSON Schema of a non-null value of ``dtype``."""
    kind = dtype.kind
    schema: dict[str, Any] = {"type": json_type(dtype)}
    if kind == "enum":
        schema["enum"] = list(dtype.members)
    elif kind == "decimal":
        schema["pattern"] = decimal_pattern(dtype.precision or 0, dtype.scale or 0)
    elif kind == "int":
        schema["minimum"], schema["maximum"] = int_bounds(dtype.bits or 64)
    elif kind == "timestamp":
        schema["pattern"] = INSTANT
    elif kind == "date":
        schema["format"] = "date"
        schema["pattern"] = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    elif kind == "bytes":
        schema["contentEncoding"] = "base64"
    return schema


def judged_schema(dtype: DataType) -> dict[str, Any]:
    """The values of ``dtype`` a row clause judges; anything else is null to a clause.

    As in ``tscontract validate``: a decimal with more places than its scale is
    still a number (the type check reports it), text that is no number is null;
    an enum or string column is judged by its text, member or not.
    """
    if dtype.kind == "decimal":
        integer_digits = (dtype.precision or 0) - (dtype.scale or 0)
        integer = f"0*[0-9]{{1,{integer_digits}}}" if integer_digits else "0+"
        return {"type": "string", "pattern": rf"^[+-]?{integer}(\.[0-9]+)?$"}
    if dtype.kind in ("string", "enum"):
        return {"type": "string"}
    return type_schema(dtype)


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """``<contract>.schema.json``. Option ``id`` overrides ``$id`` (default ``urn:tscontract:<contract>:<version>``)."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown jsonschema export option(s): {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
    contract = plan.contract
    result = ExportResult("jsonschema", contract.contract, contract.version)
    clauses = _Clauses(contract)
    properties = {name: _property(contract, name) for name in contract.fields}
    record_clauses: list[dict[str, Any]] = []

    for check in plan.checks:
        _export_check(check, contract, clauses, properties, record_clauses, result)
    schema = _document(contract, result, properties, record_clauses, options.get("id"))
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    result.artifacts.append(Artifact(f"{contract.contract}.schema.json", text))
    return result


def _export_check(
    check: Check,
    contract: Contract,
    clauses: _Clauses,
    properties: dict[str, dict[str, Any]],
    record_clauses: list[dict[str, Any]],
    result: ExportResult,
) -> None:
    """One check as a clause of its property's (or the record's) ``allOf``, or skipped with the reason."""
    reason = batch_reason(check)
    if reason is not None:
        result.skip(check, reason)
    elif check.kind in ("type", "not_null", "unknown_columns"):
        result.exported.append(check.id)  # the property schemas, required, additionalProperties
    elif check.kind in UNSUPPORTED:
        result.skip(check, UNSUPPORTED[check.kind])
    elif check.kind in ("utc_instant", "time_precision"):
        for name in check.columns:
            then = (
                {"format": "date-time", "pattern": UTC_OFFSET}
                if check.kind == "utc_instant"
                else {"pattern": fraction_pattern(contract.fields[name].type.time_unit or "ms")}
            )
            clause = {"if": _ref(name), "then": then}
            properties[name].setdefault("allOf", []).append(_tagged(check, clause))
        result.exported.append(check.id)
    elif check.kind == "series_pattern":  # ECMA-262 patterns search; anchored, as the engine matches
        try:
            pattern = ecma_pattern(check.params_of(PatternParams).pattern)
        except ValueError as exc:
            result.skip(check, str(exc))
            return
        clause = {"if": {"type": "string"}, "then": {"pattern": pattern}}
        properties[check.columns[0]].setdefault("allOf", []).append(_tagged(check, clause))
        result.exported.append(check.id)
    elif check.severity == "warning":
        result.skip(check, "a warning: JSON Schema has no severity, an instance breaking it would be invalid")
    elif check.params.max_failing is not None:
        result.skip(check, str(tolerance_reason(check, "a schema judges each record on its own")))
    elif check.predicate is not None:
        try:
            column, schema = clauses.translate(check.predicate)
        except _Inexpressible as exc:
            result.skip(check, str(exc))
            return
        if column is not None:
            properties[column].setdefault("allOf", []).append(_tagged(check, schema))
        else:
            record_clauses.append(_tagged(check, schema))
        result.exported.append(check.id)
    else:
        result.skip(check, UNSUPPORTED[check.kind])


def _document(
    contract: Contract,
    result: ExportResult,
    properties: dict[str, dict[str, Any]],
    record_clauses: list[dict[str, Any]],
    schema_id: Any,
) -> dict[str, Any]:
    """The schema document: the property schemas, ``required``, ``$defs`` and the record clauses."""
    description = [contract.description] if contract.description else []
    description.append(
        "One record of the contract. JSON has one number type: decimals travel as strings whose pattern "
        "enforces the declared integer digits and scale; instants are RFC 3339 strings with a UTC offset. "
        "If a target wants JSON numbers, the scale is checked by tscontract validate, not by this schema."
    )
    schema: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": schema_id or f"urn:tscontract:{contract.contract}:{contract.version}",
        "title": contract.contract,
        "description": "\n".join(description),
        "$comment": "\n".join(result.header_lines()),
        "type": "object",
        "properties": properties,
        "required": [name for name in contract.fields if not contract.is_nullable(name)],
        "additionalProperties": False,
        "$defs": {
            name: {"description": f"{name} as row clauses see it: values of this form are judged, others are null"}
            | judged_schema(spec.type)
            for name, spec in contract.fields.items()
        },
    }
    if record_clauses:
        schema["allOf"] = record_clauses
    return schema


def _ref(name: str) -> dict[str, str]:
    """A non-null value of field ``name`` that a clause judges (kept once under ``$defs``)."""
    return {"$ref": f"#/$defs/{name}"}


def _tagged(check: Check, schema: dict[str, Any] | bool) -> dict[str, Any]:
    tagged: dict[str, Any] = {"$comment": TAG + check.id, "description": check.clause}
    if schema is False:
        tagged["not"] = True
    elif schema is not True:
        assert isinstance(schema, dict)
        tagged.update(schema)
    return tagged


def _property(contract: Contract, name: str) -> dict[str, Any]:
    spec: FieldSpec = contract.fields[name]
    schema: dict[str, Any] = {
        "$comment": f"{TAG}field.{name}.type",
        "description": "; ".join(field_doc_parts(contract, name)),
    }
    typed = type_schema(spec.type)
    if contract.is_nullable(name):
        typed["type"] = [typed["type"], "null"]
        if "enum" in typed:
            typed["enum"] = [*typed["enum"], None]
    schema.update(typed)
    if spec.deprecated is not None:
        schema["deprecated"] = True
    if isinstance(spec.default, bool | int | str) and spec.type.kind in ("bool", "int", "string", "enum"):
        schema["default"] = spec.default
    return schema


# ---------------------------------------------------------------- row clauses


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    return {"allOf": [left, right]} if set(left) & set(right) else {**left, **right}


def _all(schemas: list[Any]) -> Any:
    if any(s is False for s in schemas):
        return False
    kept = [s for s in schemas if s is not True]
    return True if not kept else kept[0] if len(kept) == 1 else {"allOf": kept}


def _any(schemas: list[Any]) -> Any:
    if any(s is True for s in schemas):
        return True
    kept = [s for s in schemas if s is not False]
    return False if not kept else kept[0] if len(kept) == 1 else {"anyOf": kept}


def _negate(schema: Any) -> Any:
    """``not schema``, pushed through allOf/anyOf (De Morgan) so the result reads as a rule."""
    if isinstance(schema, bool):
        return not schema
    if set(schema) == {"not"}:
        return schema["not"]
    if set(schema) == {"allOf"}:
        return _any([_negate(s) for s in schema["allOf"]])
    if set(schema) == {"anyOf"}:
        return _all([_negate(s) for s in schema["anyOf"]])
    return {"not": schema}


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _literal(node: exp.Expression) -> Any:
    node = _unwrap(node)
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else Decimal(node.this)
    if isinstance(node, exp.Neg) and isinstance(_unwrap(node.this), exp.Literal) and not node.this.is_string:
        return -Decimal(_unwrap(node.this).this)
    raise _Inexpressible(f"compares with {node.sql()}, not a literal; JSON Schema compares a field with constants")


def _ceil(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_CEILING))


def _floor(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_FLOOR))


# an integer compared with a number that is not one: the nearest integer bound that means the same
_INT_BOUND: dict[type[exp.Expression], tuple[str, Callable[[Decimal], int]]] = {
    exp.GTE: ("minimum", _ceil),
    exp.GT: ("minimum", _ceil),
    exp.LTE: ("maximum", _floor),
    exp.LT: ("maximum", _floor),
}


def _json_number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


class _Clauses:
    """Row clauses (sqlglot predicates) as JSON Schema, with SQL's null semantics.

    A clause fails only when its predicate is FALSE: a null operand (or a value
    that is not of its type, which the engine reads as null) makes a comparison
    unknown, which passes. A clause on one field becomes ``if <valid value> then
    <rule>`` on that property; a clause on several fields becomes ``not
    <the clause is FALSE>`` on the record, built from which fields hold valid values.
    """

    def __init__(self, contract: Contract) -> None:
        self.contract = contract

    def translate(self, predicate: exp.Expression) -> tuple[str | None, Any]:
        columns = {c.name for c in predicate.find_all(exp.Column) if c.table != CATALOG_TABLE}
        if any(c.table == CATALOG_TABLE for c in predicate.find_all(exp.Column)):
            raise _Inexpressible("needs the series catalog")
        if len(columns) == 1:
            (column,) = columns
            if self._when_null(predicate) is not False:  # null passes: only a valid value is judged
                return column, {"if": _ref(column), "then": self._given_valid(predicate)}
        return None, _negate(self._false(predicate))

    # a single field, known to hold a valid non-null value: two-valued logic
    def _given_valid(self, node: exp.Expression) -> Any:
        node = _unwrap(node)
        if isinstance(node, exp.And):
            return _all([self._given_valid(node.this), self._given_valid(node.expression)])
        if isinstance(node, exp.Or):
            return _any([self._given_valid(node.this), self._given_valid(node.expression)])
        if isinstance(node, exp.Not):
            return _negate(self._given_valid(node.this))
        if isinstance(node, exp.Is):
            return False  # the value is not null
        if isinstance(node, exp.Coalesce):
            return self._given_valid(self._coalesced(node))
        return self._atom(node)[1]

    def _when_null(self, node: exp.Expression) -> bool | None:
        """The clause's SQL truth value when its one field is null (``None`` is unknown)."""
        node = _unwrap(node)
        if isinstance(node, exp.And):
            parts = [self._when_null(node.this), self._when_null(node.expression)]
            return False if False in parts else None if None in parts else True
        if isinstance(node, exp.Or):
            parts = [self._when_null(node.this), self._when_null(node.expression)]
            return True if True in parts else None if None in parts else False
        if isinstance(node, exp.Not):
            inner = self._when_null(node.this)
            return None if inner is None else not inner
        if isinstance(node, exp.Is):
            return True
        if isinstance(node, exp.Coalesce):
            inner = self._when_null(self._coalesced(node))
            return False if inner is None else inner
        self._atom(node)
        return None

    # several fields: the schema of "the clause is TRUE" / "is FALSE" (three-valued logic)
    def _valid(self, column: str) -> dict[str, Any]:
        return {"required": [column], "properties": {column: _ref(column)}}

    def _true(self, node: exp.Expression) -> Any:
        node = _unwrap(node)
        if isinstance(node, exp.And):
            return _all([self._true(node.this), self._true(node.expression)])
        if isinstance(node, exp.Or):
            return _any([self._true(node.this), self._true(node.expression)])
        if isinstance(node, exp.Not):
            return self._false(node.this)
        if isinstance(node, exp.Is):
            return _negate(self._valid(self._null_subject(node)))
        if isinstance(node, exp.Coalesce):
            return self._true(self._coalesced(node))
        column, rule = self._atom(node)
        return {"required": [column], "properties": {column: _merge(self._valid(column)["properties"][column], rule)}}

    def _false(self, node: exp.Expression) -> Any:
        node = _unwrap(node)
        if isinstance(node, exp.And):
            return _any([self._false(node.this), self._false(node.expression)])
        if isinstance(node, exp.Or):
            return _all([self._false(node.this), self._false(node.expression)])
        if isinstance(node, exp.Not):
            return self._true(node.this)
        if isinstance(node, exp.Is):
            return self._valid(self._null_subject(node))
        if isinstance(node, exp.Coalesce):
            return _negate(self._true(self._coalesced(node)))
        column, rule = self._atom(node)
        typed = self._valid(column)["properties"][column]
        return {"required": [column], "properties": {column: _merge(typed, _negate(rule))}}

    # leaves
    def _null_subject(self, node: exp.Is) -> str:
        subject = _unwrap(node.this)
        if not isinstance(subject, exp.Column) or not isinstance(node.expression, exp.Null):
            raise _Inexpressible(f"tests {node.sql()}; JSON Schema tests a field, not an expression")
        return subject.name

    @staticmethod
    def _coalesced(node: exp.Coalesce) -> exp.Expression:
        # `coalesce(p, false)` is how "only when" makes an unknown condition count as false
        rest = node.expressions
        if len(rest) == 1 and isinstance(rest[0], exp.Boolean) and rest[0].this is False:
            return node.this
        raise _Inexpressible("uses coalesce() over values; JSON Schema has no functions")

    def _atom(self, node: exp.Expression) -> tuple[str, Any]:
        """``(field, rule)`` for a comparison of one field with literals."""
        if isinstance(node, exp.Between):
            column = self._column(node.this)
            low, high = _literal(node.args["low"]), _literal(node.args["high"])
            if self._kind(column) not in ("int", "float") or not all(isinstance(v, Decimal) for v in (low, high)):
                raise self._cannot(column, "between")
            if self._kind(column) == "int":  # an integer between 1.5 and 2.5 is 2: exact bounds, no float rounding
                return column, {"minimum": _ceil(low), "maximum": _floor(high)}
            return column, {"minimum": _json_number(low), "maximum": _json_number(high)}
        if isinstance(node, exp.In):
            column = self._column(node.this)
            values = [self._value(column, _literal(v)) for v in node.expressions]
            return column, {"enum": values}
        if isinstance(node, exp.RegexpFullMatch):  # ECMA-262 patterns search: anchored, as the engines match
            try:
                return self._column(node.this), {"pattern": ecma_pattern(node.expression.this)}
            except ValueError as exc:
                raise _Inexpressible(str(exc)) from None
        op = type(node)
        if op not in _FLIP:
            raise _Inexpressible(f"uses {node.sql()}; JSON Schema compares a field with constants only")
        left, right = _unwrap(node.this), _unwrap(node.expression)
        if not isinstance(left, exp.Column):
            left, right, op = right, left, _FLIP[op]
        if not isinstance(left, exp.Column):
            raise _Inexpressible(f"compares {node.sql()}; JSON Schema compares a field with constants only")
        if isinstance(right, exp.Column):
            raise _Inexpressible("compares two fields; JSON Schema cannot compare one property with another")
        column = self._column(left)
        value = _literal(right)
        kind = self._kind(column)
        if op in (exp.EQ, exp.NEQ) and kind != "decimal":
            rule: dict[str, Any] = {"const": self._value(column, value)}
            return column, rule if op is exp.EQ else {"not": rule}
        if kind == "int" and isinstance(value, Decimal) and value != value.to_integral_value() and op in _INT_BOUND:
            # i >= 9007199254740992.5 is i >= 9007199254740993: as a float bound it would round to 2**53
            keyword, nearest = _INT_BOUND[op]
            return column, {keyword: nearest(value)}
        if kind in ("int", "float") and isinstance(value, Decimal):
            return column, {_NUMBER_KEYWORDS[op]: _json_number(value)}
        if kind == "decimal" and isinstance(value, Decimal) and value == 0:
            return column, self._sign(op)
        raise self._cannot(column, node.sql())

    @staticmethod
    def _sign(op: type[exp.Expression]) -> dict[str, Any]:
        # a decimal travels as text: its comparison with zero is a statement about its sign
        signs: dict[type[exp.Expression], dict[str, Any]] = {
            exp.GTE: {"not": {"pattern": _NEGATIVE}},
            exp.GT: {"pattern": _POSITIVE},
            exp.LTE: {"not": {"pattern": _POSITIVE}},
            exp.LT: {"pattern": _NEGATIVE},
            exp.EQ: {"pattern": _ZERO},
            exp.NEQ: {"not": {"pattern": _ZERO}},
        }
        return signs[op]

    def _column(self, node: exp.Expression) -> str:
        node = _unwrap(node)
        if not isinstance(node, exp.Column):
            raise _Inexpressible(f"uses {node.sql()}; JSON Schema has no arithmetic or functions")
        return node.name

    def _kind(self, column: str) -> str:
        return self.contract.fields[column].type.kind

    def _value(self, column: str, value: Any) -> Any:
        kind = self._kind(column)
        if kind in ("int", "float") and isinstance(value, Decimal):
            return _json_number(value)
        if kind == "bool" and isinstance(value, bool):
            return value
        if kind in ("string", "enum") and isinstance(value, str):
            return value
        raise self._cannot(column, repr(value))

    def _cannot(self, column: str, what: str) -> _Inexpressible:
        dtype = self.contract.fields[column].type
        if dtype.kind == "decimal":
            return _Inexpressible(
                f"{column} is {dtype.text}, carried as a string: JSON Schema compares it only with zero ({what})"
            )
        return _Inexpressible(f"JSON Schema cannot compare {column} ({dtype.text}) this way: {what}")
