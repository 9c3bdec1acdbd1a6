"""Confluent data contract: the Schema Registry registration payload, ``<contract>.confluent.json``.

``POST /subjects/<subject>/versions`` takes it as written: ``schemaType: AVRO``, ``schema`` (the
contract's Avro schema, as ``export avro`` writes it), ``metadata`` and ``ruleSet``.

- ``metadata.properties``: ``owner``, ``tscontract.contract``, ``tscontract.version``,
  ``major_version`` (for consumers pinned with ``use.latest.with.metadata``), and per field
  ``unit.<field>`` / ``dimension.<field>``.
- ``ruleSet.domainRules``: one CEL ``CONDITION`` per row clause (invariants, constraints, fixed
  values, integer widths and enum members Avro does not state), named after the check id as a
  Confluent rule name (``field.adjusted.value`` -> ``field_adjusted_value``, ``invariants[0]`` ->
  ``invariants_0``; unique, at most 64 characters: see ``rule_names``), with the clause verbatim
  as ``doc`` and the check id in ``params``; mode ``WRITE`` (option
  ``rule_mode``: ``WRITEREAD`` checks on read too), ``onFailure: ERROR``. The CEL keeps SQL's
  rule that a null operand does not break a clause (see :mod:`tscontract.interop.exports.cel`).
- ``ruleSet.migrationRules`` (option ``previous``, the contract before a major change; the CLI's
  ``--from OLD``): CEL ``TRANSFORM`` rules, ``UPGRADE`` (an old record as the new schema) and
  ``DOWNGRADE`` (a new record as the old one), where every field of the other side has a
  mechanical source: the same field, a rename ``tscontract diff`` classifies, or a field removed
  and one added in another unit of the same dimension (``pressure_kpa = pressure_bar * 100``,
  exact decimals). CEL, not JSONata: confluent-kafka's JSONata executor (jsonata-python) refuses
  ``Decimal`` and ``datetime`` values, which every Avro record of a contract carries.

Clauses a record cannot carry (batch, catalog, clock), warnings and tolerated shares are listed
as not exported, in ``not_exported`` and the schema's ``doc``.
"""

from __future__ import annotations

import json
from typing import Any

import sqlglot.expressions as exp

from tscontract.contract.confluent_rules import rule_names
from tscontract.contract.model import Contract
from tscontract.contract.types import DataType
from tscontract.contract.units import UnitError, affine
from tscontract.errors import InputError
from tscontract.interop.exports import Artifact, ExportResult, avro
from tscontract.interop.exports._records import RECORD_UNSUPPORTED, batch_reason, record_doc_lines, tolerance_reason
from tscontract.interop.exports.cel import CelUnsupported, compile_predicate, field_ref, present
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import TypeParams

# what the schema and its CEL rules state of each kind of check, and why they state none of the others
HANDLERS = avro.HANDLERS | {CheckKind.FIXED_VALUE, CheckKind.INVARIANT, CheckKind.CONSTRAINT, CheckKind.SERIES_PATTERN}
UNSUPPORTED: dict[CheckKind, str] = dict(RECORD_UNSUPPORTED)

_OPTIONS = ("namespace", "rule_mode", "previous")
_RULE_MODES = ("WRITE", "WRITEREAD")
_ROW_KINDS = ("invariant", "constraint", "fixed_value", "series_pattern")


def export(plan: CheckPlan, **options: Any) -> ExportResult:
    """``<contract>.confluent.json``. Options ``namespace``, ``rule_mode`` (WRITE), ``previous`` (a Contract)."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown confluent export option(s): {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
    mode = str(options.get("rule_mode") or "WRITE").upper()
    if mode not in _RULE_MODES:
        raise InputError(f"confluent rule mode {mode!r} is not one of {', '.join(_RULE_MODES)}")
    contract = plan.contract
    schema_result = avro.export(plan, namespace=options.get("namespace") or "tscontract")
    skipped = {n.check_id: n.reason for n in schema_result.not_exported}
    result = ExportResult("confluent", contract.contract, contract.version)
    types = {name: spec.type for name, spec in contract.fields.items()}
    nullable = frozenset(name for name in contract.fields if contract.is_nullable(name))

    rules = []
    for check in plan.checks:
        if check.id not in skipped:
            result.exported.append(check.id)
            continue
        predicate, why_not = _rule_predicate(check, skipped[check.id])
        if predicate is None:
            result.skip(check, str(why_not))
            continue
        try:
            expr = compile_predicate(predicate, types, nullable)
        except CelUnsupported as exc:
            result.skip(check, f"no CEL rule: {exc}")
            continue
        rules.append(_rule(check, expr, mode))
        result.exported.append(check.id)

    migrations: list[dict[str, Any]] = []
    previous = options.get("previous")
    if previous is not None:
        if not isinstance(previous, Contract):
            raise InputError("the confluent export's previous contract must be a loaded contract")
        migrations = migration_rules(previous, contract)
    # names a Confluent registry accepts, none used twice across the lists (it refuses either)
    names = rule_names([r["name"] for r in rules], taken=[m["name"] for m in migrations])
    for rule, name in zip(rules, names, strict=True):
        rule["name"] = name

    schema = json.loads(schema_result.artifacts[0].content)
    doc = [contract.description] if contract.description else []
    schema["doc"] = "\n".join([*doc, *record_doc_lines(contract), *result.header_lines()])
    # every member written, empty ones too, as confluent-kafka's client sends a schema back in a lookup
    rule_set: dict[str, Any] = {"migrationRules": migrations, "domainRules": rules, "encodingRules": []}
    payload = {
        "schemaType": "AVRO",
        "schema": json.dumps(schema, separators=(",", ":"), ensure_ascii=False),
        "metadata": {"properties": metadata_properties(contract), "sensitive": []},
        "ruleSet": rule_set,
    }
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    result.artifacts.append(Artifact(f"{contract.contract}.confluent.json", text))
    return result


def metadata_properties(contract: Contract) -> dict[str, str]:
    """Owner, contract name and version, major version, and each field's unit and dimension."""
    properties = {"tscontract.contract": contract.contract, "tscontract.version": contract.version}
    properties["major_version"] = contract.version.split(".")[0]
    if contract.owner:
        properties["owner"] = contract.owner
    for name, spec in contract.fields.items():
        if spec.unit is not None:
            properties[f"unit.{name}"] = spec.unit
        if spec.dimension is not None:
            properties[f"dimension.{name}"] = spec.dimension
    return properties


def _rule_predicate(check: Check, schema_reason: str) -> tuple[exp.Expression | None, str | None]:
    """The predicate a CEL rule states for ``check``, or why there is none."""
    reason = batch_reason(check)
    if reason is not None:
        return None, reason
    if check.kind == "type":
        return type_predicate(check.columns[0], check.params_of(TypeParams).dtype), schema_reason
    if check.kind not in _ROW_KINDS or check.predicate is None:
        return None, schema_reason
    if check.severity == "warning":
        return None, "a warning: a CONDITION rule that fails rejects the record (ERROR) or diverts it (DLQ)"
    if check.params.max_failing is not None:
        return None, tolerance_reason(check, "a rule judges each record on its own")
    return check.predicate, None


def type_predicate(column: str, dtype: DataType) -> exp.Expression | None:
    """What an Avro ``int`` or ``string`` does not state of an int8/int16 or an enum of other words."""
    subject = exp.column(column)
    if dtype.kind == "int" and dtype.bits and dtype.bits < 32:
        low, high = -(2 ** (dtype.bits - 1)), 2 ** (dtype.bits - 1) - 1
        return exp.Between(this=subject, low=exp.Literal.number(low), high=exp.Literal.number(high))
    if dtype.kind == "enum":
        return exp.In(this=subject, expressions=[exp.Literal.string(m) for m in dtype.members])
    return None


def _rule(check: Check, expr: str, mode: str) -> dict[str, Any]:
    return {
        "name": check.id,  # named by ``rule_names`` once every rule of the ruleSet is known
        "doc": check.clause,
        "kind": "CONDITION",
        "mode": mode,
        "type": "CEL",
        "expr": expr,
        "params": {"tscontract.check": check.id},
        "onFailure": "ERROR",
    }


# ---------------------------------------------------------------- migrations


def migration_rules(old: Contract, new: Contract) -> list[dict[str, Any]]:
    """UPGRADE and DOWNGRADE CEL transforms, when each side's fields all have a mechanical source."""
    from tscontract.evolution.diff import diff

    if old.contract != new.contract:
        raise InputError(
            f"--from is contract {old.contract!r}, not {new.contract!r}: migration rules map versions of one contract"
        )
    if old.fields.keys() == new.fields.keys() and all(
        (o.type, o.unit) == (new.fields[n].type, new.fields[n].unit) for n, o in old.fields.items()
    ):
        return []  # the same fields: Avro's own resolution reads one version as the other
    report = diff(old, new)
    renames = {c.old: c.new for c in report.changes if c.kind == "rename_field" and c.old and c.new}
    conversions = _unit_conversions(old, new, renames)
    forward: dict[str, tuple[str, str] | None] = {}  # new field -> how it is made of the old record
    for name in new.fields:
        source = next((o for o, n in renames.items() if n == name), name if name in old.fields else None)
        if source is not None:
            forward[name] = ("copy", source)
        elif name in conversions:
            forward[name] = conversions[name]
        else:
            forward[name] = None
    rules = []
    upgrade = _transform(new, old, forward, downgrade=False)
    if upgrade:
        rules.append(_migration("upgrade", "UPGRADE", upgrade, old, new))
    backward: dict[str, tuple[str, str] | None] = {}
    for name in old.fields:
        made = next(((n, how) for n, how in forward.items() if how and how[1] == name), None)
        backward[name] = ("copy", made[0]) if made and made[1][0] == "copy" else None
        if made and made[1][0] == "convert":
            backward[name] = ("invert", made[0])
    downgrade = _transform(old, new, backward, downgrade=True)
    if downgrade:
        rules.append(_migration("downgrade", "DOWNGRADE", downgrade, old, new))
    return rules


def _unit_conversions(old: Contract, new: Contract, renames: dict[str, str]) -> dict[str, tuple[str, str]]:
    """New fields that replace a removed field in another unit of the same dimension: ``convert`` from it."""
    removed = [n for n in old.fields if n not in new.fields and n not in renames]
    added = [n for n in new.fields if n not in old.fields and n not in renames.values()]
    declared = old.unit_declarations + new.unit_declarations
    found: dict[str, tuple[str, str]] = {}
    for name in added:
        target = new.fields[name]
        sources = []
        for source in removed:
            spec = old.fields[source]
            if spec.unit is None or target.unit is None or spec.type.kind not in ("decimal", "int", "float"):
                continue
            try:
                affine(spec.unit, target.unit, declared=declared)
            except UnitError:
                continue
            sources.append(source)
        if len(sources) == 1:
            found[name] = ("convert", sources[0])
    return found


def _transform(
    target: Contract, source: Contract, how: dict[str, tuple[str, str] | None], *, downgrade: bool
) -> str | None:
    """A CEL map of ``target``'s fields made from a ``source`` record; None when a field has no source."""
    declared = source.unit_declarations + target.unit_declarations
    entries = []
    for name, spec in target.fields.items():
        recipe = how.get(name)
        if recipe is None:
            if not target.is_nullable(name):
                return None
            entries.append(f'"{name}": null')
            continue
        action, origin = recipe
        if action == "copy":
            value = field_ref(origin)
            if source.is_nullable(origin) and not target.is_nullable(name):
                return None
            if source.is_nullable(origin):
                value = f"({present(origin)}) ? {value} : null"
            entries.append(f'"{name}": {value}')
            continue
        from_spec = source.fields[origin]
        factor, offset = affine(str(from_spec.unit), str(spec.unit), declared=declared)
        value = f"decimal({field_ref(origin)})"
        converted = f'decimals.mul({value}, decimal("{factor:f}"))'
        if offset:
            converted = f'decimals.add({converted}, decimal("{offset:f}"))'
        if spec.type.kind == "decimal":
            converted = f"decimals.round({converted}, {spec.type.scale or 0})"
        else:
            return None  # a float or int target would need a conversion CEL does not do exactly
        if source.is_nullable(origin):
            converted = f"({present(origin)}) ? {converted} : null"
        entries.append(f'"{name}": {converted}')
    return "{" + ", ".join(entries) + "}"


def _migration(name: str, mode: str, expr: str, old: Contract, new: Contract) -> dict[str, Any]:
    direction = f"{old.version} -> {new.version}" if mode == "UPGRADE" else f"{new.version} -> {old.version}"
    return {
        "name": name,
        "doc": f"{new.contract}: a record of {direction}, field by field (tscontract diff)",
        "kind": "TRANSFORM",
        "mode": mode,
        "type": "CEL",
        "expr": expr,
        "onFailure": "ERROR",
    }
