"""A dbt properties file (``models:`` or ``sources:`` YAML) as draft contracts: one per model/table.

- types: ``data_type`` as a SQL type (``numeric(18,6)`` → ``decimal(18,6)``, ``timestamptz`` → an
  instant, ``timestamp`` read as one and listed); no ``data_type``: ``string``, listed.
- nullability: a ``not_null`` test or constraint → ``nullable: false``; else not stated.
- key: ``primary_key`` constraints (column or model level), else ``unique_combination_of_columns``
  (dbt_utils); ``--key`` overrides (a ``unique`` column alone is not a time-series key).
- tests with a clause: ``unique`` → ``unique: true``; ``accepted_values`` → ``in (...)``;
  ``accepted_range`` and dbt_expectations ``expect_column_values_to_be_between`` → comparisons;
  ``expect_column_values_to_match_regex`` → ``matches``; ``expression_is_true`` and ``check``
  constraints → an invariant when the clause language reads the SQL (else listed); ``severity: warn``
  → a warning clause. Everything else (``relationships``, ``where:`` filters, tags, other packages'
  tests) is listed.
- a file this package exported gives back the contract's types (``meta.tscontract_type``), units,
  nullability, key, fixed values and invariants.
"""

from __future__ import annotations

import re
from typing import Any

from tscontract.contract.source import load_yaml
from tscontract.errors import InputError, TscontractError
from tscontract.interop.imports.base import (
    SchemaDraft,
    contract_name,
    finish,
    not_exported,
    quoted_literal,
    sql_clause,
    sql_type,
)
from tscontract.interop.imports.result import Imported
from tscontract.interop.odcs.read import _Clause

_MODEL_TAKEN: tuple[str, ...]  # extended below
_MODEL_TAKEN = ("name", "description", "columns", "tests", "data_tests", "constraints", "config", "meta")
_MODEL_TAKEN += ("freshness", "loaded_at_field")  # a source table's (or its source's) freshness
_COLUMN_TAKEN = ("name", "description", "data_type", "tests", "data_tests", "constraints", "meta", "quote")
_TEST_TAKEN: tuple[str, ...]  # extended below
_TEST_TAKEN = ("name", "description", "arguments", "config", "values", "min_value", "max_value", "inclusive")
_TEST_TAKEN += ("strictly", "regex", "expression", "combination_of_columns", "column_name")
_CHECK_INDEX = re.compile(r"^invariants\[(\d+)\]$")


def import_dbt(
    text: str,
    origin: str,
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
) -> list[Imported]:
    try:
        tree, _ = load_yaml(text, origin)
    except TscontractError as exc:
        raise InputError(f"not a dbt properties file: {exc.one_line()}") from None
    if not isinstance(tree, dict):
        raise InputError("not a dbt properties file: the document is not a mapping")
    objects: list[tuple[str, dict[str, Any]]] = []
    for model in _list(tree.get("models")):
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            objects.append((f"models[{model['name']}]", model))
    for source in _list(tree.get("sources")):
        for table in _list(source.get("tables")) if isinstance(source, dict) else []:
            if isinstance(table, dict) and isinstance(table.get("name"), str):
                inherited = {k: v for k, v in source.items() if k not in ("name", "tables")}
                objects.append((f"sources[{source.get('name')}].tables[{table['name']}]", {**inherited, **table}))
    if not objects:
        raise InputError("not a dbt properties file: no models or source tables with a name")
    if object_name is not None:
        objects = [(p, o) for p, o in objects if o["name"] == object_name]
        if not objects:
            raise InputError(f"no model or source table {object_name!r} in the file")
    results = []
    for path, model in objects:
        try:
            results.append(_model(path, model, origin, key, time_column, not_exported(text.splitlines())))
        except InputError as exc:
            if len(objects) > 1:
                raise InputError(f"{path}: {exc}") from None
            raise
    return results


def _list(value: Any) -> list[Any]:
    """A list as written; a single item (a YAML slip) as a list of one, so it is read or listed, not lost."""
    return value if isinstance(value, list) else [] if value in (None, "", {}) else [value]


def _tests(node: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """(index, test name without its package, arguments and config merged) of a node's tests."""
    found = []
    for i, test in enumerate([*_list(node.get("data_tests")), *_list(node.get("tests"))]):
        if isinstance(test, str):
            found.append((i, test.rsplit(".", 1)[-1], {"_package": test, "_raw": test}))
        elif isinstance(test, dict) and len(test) == 1:
            ((written, body),) = test.items()
            body = body if isinstance(body, dict) else {}
            merged = {**body, **(body.get("arguments") or {}), "_package": written, "_raw": test}
            found.append((i, str(written).rsplit(".", 1)[-1], merged))
        else:
            found.append((i, "", {"_package": str(test), "_raw": test}))
    return found


def _model(
    path: str,
    model: dict[str, Any],
    origin: str,
    key: list[str] | None,
    time_column: str | None,
    comments: list[tuple[str, str]],
) -> Imported:
    raw_meta = ((model.get("config") or {}).get("meta") or model.get("meta") or {}).get("tscontract")
    own = isinstance(raw_meta, dict)
    draft = SchemaDraft("dbt", f"{origin} {path}", contract_name(str(model["name"])), str(model["name"]))
    if isinstance(raw_meta, dict):
        draft.name = contract_name(str(raw_meta.get("contract", model["name"])))
        draft.top.update({k: str(raw_meta[k]) for k in ("version", "owner") if k in raw_meta})
    elif isinstance(model.get("description"), str):
        draft.top["description"] = model["description"]
    for k, v in model.items():
        if k not in _MODEL_TAKEN:
            draft.lose(f"{path}.{k}", v, "no place in a tscontract contract")
    if isinstance(model.get("meta"), dict) and not own:
        draft.lose(f"{path}.meta", model["meta"], "meta: no place in a tscontract contract")
    pk: list[str] = []
    unique: list[str] = []
    indexed: list[tuple[int, _Clause]] = []
    names: dict[str, str] = {}
    for column in _list(model.get("columns")):
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            draft.lose(f"{path}.columns", column, "a column without a name")
            continue
        where = f"{path}.columns[{column['name']}]"
        name = _column(draft, where, column, own, pk, unique, indexed)
        names[column["name"]] = name
    _model_constraints(draft, path, model, names, pk)
    _model_tests(draft, path, model, names, own, indexed)
    if not own:
        draft.clauses += [c for _, c in sorted(indexed, key=lambda x: x[0])]
    if pk:
        draft.key = pk
    _source_freshness(draft, path, model, names)
    for k, v in (model.get("config") or {}).items():
        if k == "unique_key" and draft.key == ([v] if isinstance(v, str) else v):
            continue  # restates the key
        if k not in ("contract", "meta") or (k == "meta" and not own):
            draft.lose(f"{path}.config.{k}", v, "model configuration: no place in a tscontract contract")
    if own:  # clauses the export could not state as tests, from its header comments
        _own_comments(draft, comments, indexed)
    return finish(draft, key, time_column)


def _model_constraints(
    draft: SchemaDraft, path: str, model: dict[str, Any], names: dict[str, str], pk: list[str]
) -> None:
    """A model's ``constraints``: a primary key (added to ``pk``), a check as a clause, the rest listed."""
    for i, constraint in enumerate(_list(model.get("constraints"))):
        where = f"{path}.constraints[{i}]"
        kind = constraint.get("type") if isinstance(constraint, dict) else None
        if kind == "primary_key" and isinstance(constraint.get("columns"), list):
            pk += [names.get(str(c), str(c)) for c in constraint["columns"]]
        elif kind == "check" and isinstance(constraint.get("expression"), str):
            _sql(draft, where, constraint["expression"], None, "error")
        else:
            draft.lose(where, constraint, f"{kind or 'a'} constraint: no tscontract clause for it")


def _model_tests(
    draft: SchemaDraft,
    path: str,
    model: dict[str, Any],
    names: dict[str, str],
    own: bool,
    indexed: list[tuple[int, _Clause]],
) -> None:
    """A model's (table-level) data tests."""
    for i, name, test in _tests(model):
        where = f"{path}.data_tests[{i}]"
        check = str(((test.get("config") or {}).get("meta") or {}).get("tscontract_check", ""))
        if name == "unique_combination_of_columns" and isinstance(test.get("combination_of_columns"), list):
            if not draft.key:
                draft.key = [names.get(str(c), str(c)) for c in test["combination_of_columns"]]
            _leftover(draft, where, test)
        elif own and (found := _CHECK_INDEX.match(check)):
            indexed.append(
                (int(found.group(1)), _Clause(where, str(test.get("description")), str(test["description"])))
            )
        elif own and check.startswith("field.") and check.endswith(".value"):
            field = check.split(".")[1]
            value = str(test.get("description", "")).removeprefix("value: ")
            if field in draft.fields:
                draft.fields[field]["value"] = {"true": True, "false": False}.get(value, value)
        elif own and check == "time.precision":
            draft.time["precision"] = str(test.get("description", "")).removeprefix("precision: ")
        elif own and check:
            continue  # the export's rendering of a clause the contract states another way (time precision...)
        elif name == "expression_is_true" and isinstance(test.get("expression"), str):
            _sql(draft, where, test["expression"], None, _severity(test))
            _leftover(draft, where, test)
        elif name == "recency" and (age := _recency(test)) is not None and _severity(test) == "error":
            field_name = names.get(str(test.get("field")))
            draft.top["freshness"] = {"max_age": age, **({"column": field_name} if field_name else {})}
            _leftover(draft, where, {k: v for k, v in test.items() if k not in ("datepart", "interval", "field")})
        else:
            draft.lose(where, test.get("_raw"), f"dbt test {test.get('_package')!r}: no tscontract clause for it")


def _own_comments(draft: SchemaDraft, comments: list[tuple[str, str]], indexed: list[tuple[int, _Clause]]) -> None:
    """The clauses a tscontract export could not state as tests, read back from its header comments."""
    for check_id, clause in comments:
        found_index = _CHECK_INDEX.match(check_id)
        parts = check_id.split(".")
        if found_index:
            indexed.append((int(found_index.group(1)), _Clause(f"# {check_id}", clause, clause)))
        elif len(parts) == 3 and parts[0] == "field" and parts[2] == "constraint" and parts[1] in draft.fields:
            draft.fields[parts[1]]["constraint"] = clause
    draft.clauses += [c for _, c in sorted(indexed, key=lambda x: x[0])]
    rules = {check_id.removeprefix("time."): clause for check_id, clause in comments}
    draft.time.update({k: rules[k] for k in ("timezone", "cadence") if k in rules})
    instants = [n for n, f in draft.fields.items() if str(f["type"]).startswith("timestamp")]
    if len(instants) == 1 and draft.time:
        rules = {k: draft.time[k] for k in ("precision", "timezone", "cadence") if k in draft.time}
        draft.time = {"column": instants[0], **rules}


_DATEPART = {"second": "s", "minute": "m", "hour": "h", "day": "d", "week": "w"}


def _recency(test: dict[str, Any]) -> str | None:
    """dbt_utils.recency (datepart, interval) as a freshness max_age."""
    unit = _DATEPART.get(str(test.get("datepart", "")).lower())
    interval = test.get("interval")
    if unit and isinstance(interval, int) and not isinstance(interval, bool) and interval > 0:
        return f"{interval}{unit}"
    return None


def _source_freshness(draft: SchemaDraft, path: str, model: dict[str, Any], names: dict[str, str]) -> None:
    """A source's ``freshness`` (``error_after``, else ``warn_after``: count and period) on
    ``loaded_at_field`` as ``freshness: {max_age, column}``; a ``filter`` or a column not in the table is listed."""
    fresh = model.get("freshness")
    if fresh is None:
        if "loaded_at_field" in model:
            draft.lose(f"{path}.loaded_at_field", model["loaded_at_field"], "no freshness rule uses it")
        return
    rule = fresh.get("error_after") or fresh.get("warn_after") if isinstance(fresh, dict) else None
    unit = _DATEPART.get(str(rule.get("period", "")).lower()) if isinstance(rule, dict) else None
    count = rule.get("count") if isinstance(rule, dict) else None
    column = names.get(str(model.get("loaded_at_field")))
    if unit is None or not isinstance(count, int) or isinstance(count, bool) or count <= 0 or column is None:
        draft.lose(f"{path}.freshness", fresh, "a freshness rule without a count, period and loaded_at_field column")
        return
    draft.top["freshness"] = {"max_age": f"{count}{unit}", "column": column}
    for k, v in fresh.items():
        if k == "warn_after" and "error_after" in fresh:
            draft.lose(f"{path}.freshness.warn_after", v, "a second, warning age: tscontract keeps the error one")
        elif k not in ("error_after", "warn_after"):
            draft.lose(f"{path}.freshness.{k}", v, "no place in a tscontract freshness rule")


def _severity(test: dict[str, Any]) -> str:
    return "warning" if str((test.get("config") or {}).get("severity", "error")).lower() == "warn" else "error"


def _leftover(draft: SchemaDraft, where: str, test: dict[str, Any]) -> None:
    config = test.get("config") or {}
    for k, v in config.items():
        if k not in ("severity", "meta"):
            draft.lose(f"{where}.config.{k}", v, "a test setting tscontract does not apply (the whole batch is judged)")
    for k, v in test.items():
        if k not in _TEST_TAKEN and not k.startswith("_"):
            draft.lose(f"{where}.{k}", v, "a test argument with no tscontract equivalent")


def _sql(draft: SchemaDraft, where: str, expression: str, column: str | None, severity: str) -> None:
    text = sql_clause(f"{column} {expression}" if column else expression)
    if text is None:
        draft.lose(where, expression, "SQL the clause language cannot state")
    else:
        draft.clause(where, expression, text, severity=severity)


def _column(
    draft: SchemaDraft,
    where: str,
    column: dict[str, Any],
    own: bool,
    pk: list[str],
    unique: list[str],
    indexed: list[tuple[int, _Clause]],
) -> str:
    raw_meta = column.get("meta")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    entry = _column_type(draft, where, column, meta, own)
    if meta and not own:
        draft.lose(f"{where}.meta", meta, "meta: no place in a tscontract contract")
    if isinstance(column.get("description"), str):
        entry["description"] = column["description"]
    for k, v in column.items():
        if k not in _COLUMN_TAKEN:
            draft.lose(f"{where}.{k}", v, "no place in a tscontract contract")
    name = draft.add_field(column["name"], entry)
    for i, constraint in enumerate(_list(column.get("constraints"))):
        kind = constraint.get("type") if isinstance(constraint, dict) else None
        at = f"{where}.constraints[{i}]"
        if kind == "not_null":
            entry["nullable"] = False
        elif kind == "primary_key":
            pk.append(name)
            entry["nullable"] = False
        elif kind == "unique":
            entry["unique"] = True
        elif kind == "check" and isinstance(constraint.get("expression"), str):
            _sql(draft, at, constraint["expression"], None, "error")
        else:
            draft.lose(at, constraint, f"{kind or 'a'} constraint: no tscontract clause for it")
    for i, test_name, test in _tests(column):
        at = f"{where}.data_tests[{i}]"
        check = str(((test.get("config") or {}).get("meta") or {}).get("tscontract_check", ""))
        if own and (found := _CHECK_INDEX.match(check)):
            described = str(test.get("description"))
            indexed.append((int(found.group(1)), _Clause(at, described, described)))
            continue
        if own and check.startswith("provenance."):
            draft.provenance.append(name)
            continue
        if own and check and not check.endswith(".nullable"):
            continue  # the export's test for a clause the contract states another way (its type...)
        if _column_test(draft, at, column, name, entry, unique, test_name, test):
            _leftover(draft, at, test)
    return name


def _column_type(
    draft: SchemaDraft, where: str, column: dict[str, Any], meta: dict[str, Any], own: bool
) -> dict[str, Any]:
    """A column's field entry as far as its type: the contract's own (``meta``), else its ``data_type``."""
    written_type = column.get("data_type")
    entry: dict[str, Any] = {}
    if own and isinstance(meta.get("tscontract_type"), str):
        entry["type"] = meta["tscontract_type"]
        entry.update({k: meta[k] for k in ("unit", "dimension") if isinstance(meta.get(k), str)})
    elif isinstance(written_type, str):
        found = sql_type(written_type)
        if found is None:
            draft.lose(f"{where}.data_type", written_type, "a SQL type tscontract does not know: read as string")
            entry["type"] = "string"
        else:
            entry["type"], reason, length = found
            if reason:
                draft.lose(f"{where}.data_type", written_type, reason)
            if length is not None:
                draft.clause(f"{where}.data_type", written_type, f"length({column['name']}) <= {length}")
    else:
        draft.lose(f"{where}.data_type", "", "no data_type: read as string")
        entry["type"] = "string"
    return entry


def _column_test(
    draft: SchemaDraft,
    at: str,
    column: dict[str, Any],
    name: str,
    entry: dict[str, Any],
    unique: list[str],
    test_name: str,
    test: dict[str, Any],
) -> bool:
    """One column test as a clause (or the field's nullable/unique); False when it has none (then listed)."""
    severity = _severity(test)
    if test_name == "not_null" and severity == "error":
        entry["nullable"] = False
    elif test_name == "unique" and severity == "error":
        entry["unique"] = True
        unique.append(name)
    elif test_name == "accepted_values" and isinstance(test.get("values"), list):
        literals = [str(v) if isinstance(v, int | float) else quoted_literal(str(v)) for v in test["values"]]
        draft.clause(at, test["values"], f"{name} in ({', '.join(literals)})", name, severity)
    elif test_name in ("accepted_range", "expect_column_values_to_be_between"):
        strict = bool(test.get("strictly")) or test.get("inclusive") is False
        before = len(draft.clauses)
        draft.bounds(at, name, test.get("min_value"), test.get("max_value"), strict, strict)
        for c in draft.clauses[before:]:
            c.severity = severity
    elif test_name == "expect_column_values_to_match_regex" and "regex" in test:
        draft.pattern(at, name, test["regex"], severity)
    elif test_name == "expression_is_true" and isinstance(test.get("expression"), str):
        _sql(draft, at, test["expression"], column["name"], severity)
    else:
        draft.lose(at, test.get("_raw"), f"dbt test {test.get('_package')!r}: no tscontract clause for it")
        return False
    return True
