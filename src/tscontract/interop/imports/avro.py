"""An Avro schema (``.avsc``) as a draft contract: one record's fields, types and nullability.

- the record: ``--object NAME`` (name or full name of any record in the schema), else the top-level
  record; a Debezium change-event envelope (``before``/``after`` of one row record, ``op``) gives its
  row record, the envelope's own fields listed.
- types: ``boolean``/``int``/``long``/``float``/``double``/``bytes``/``string``; ``decimal`` (bytes or
  fixed, also Kafka Connect's ``org.apache.kafka.connect.data.Decimal``) as ``decimal(p,s)``;
  ``timestamp-millis/-micros/-nanos`` (and Connect's ``Timestamp``) as UTC instants; ``date``;
  enums as ``enum[...]``. Naive timestamps (``local-timestamp-*``, Debezium ``MicroTimestamp``) are
  read as UTC instants and listed; a time of day is read as an integer and listed.
- ``["null", T]`` → ``nullable: true``; a union of several types, records, arrays, maps → listed, and
  the mapping drops the column. ``doc`` → description, ``aliases`` → field aliases, a non-null
  ``default`` → ``default``.
- the key is not part of Avro: ``--key`` (and ``--time-column`` when there are several instants);
  a schema this package exported carries it in the record's ``doc`` and comes back whole.
"""

from __future__ import annotations

import json
from typing import Any

from tscontract.contract.json_text import load_json
from tscontract.errors import InputError
from tscontract.interop.imports.base import (
    SchemaDraft,
    contract_name,
    finish,
    is_own,
    restore_field_doc,
    restore_record_lines,
)
from tscontract.interop.imports.result import Imported
from tscontract.typemap.avro import LOGICAL_UNIT, PRIMITIVE_READS

_PRIMITIVE = PRIMITIVE_READS
_INSTANT = LOGICAL_UNIT
_NAIVE = {"local-timestamp-millis": "ms", "local-timestamp-micros": "us", "local-timestamp-nanos": "ns"}
_CONNECT = {  # Kafka Connect / Debezium semantic types: (tscontract type, reason when read as near)
    "org.apache.kafka.connect.data.Timestamp": ("timestamp_ms_utc", None),
    "org.apache.kafka.connect.data.Date": ("date", None),
    "io.debezium.time.Date": ("date", None),
    "io.debezium.time.ZonedTimestamp": ("timestamp_us_utc", None),
    "io.debezium.time.Timestamp": ("timestamp_ms_utc", "Debezium Timestamp has no time zone: read as a UTC instant"),
    "io.debezium.time.MicroTimestamp": (
        "timestamp_us_utc",
        "Debezium MicroTimestamp has no time zone: read as a UTC instant",
    ),
    "io.debezium.time.NanoTimestamp": (
        "timestamp_ns_utc",
        "Debezium NanoTimestamp has no time zone: read as a UTC instant",
    ),
}
_FIELD_KEYS = ("name", "type", "doc", "default", "aliases")
_TYPE_KEYS: tuple[str, ...]  # extended below
_TYPE_KEYS = ("type", "logicalType", "precision", "scale", "connect.name", "connect.version", "connect.parameters")
_TYPE_KEYS += ("connect.default",)  # Kafka Connect restating the field's default (compared in _field)


def import_avro(
    text: str,
    origin: str,
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
) -> list[Imported]:
    try:
        schema = load_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not an Avro schema: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # nested past the bound
        raise InputError(f"not an Avro schema tscontract reads: {exc}") from None
    records = _records(schema, None, {})
    if not records:
        raise InputError("not an Avro schema: no record type in it")
    if object_name is not None:
        found = [r for r in records.values() if object_name in (r["name"], _full(r, None))]
        if not found:
            names = ", ".join(sorted({r["name"] for r in records.values()}))
            raise InputError(f"no record {object_name!r} in the schema; it has: {names}")
        record, envelope = found[0], None
    else:
        top = schema if isinstance(schema, dict) else next(iter(records.values()))
        record, envelope = _debezium_row(top, records) or (top, None)
    name = record["name"]
    if envelope is not None:  # Debezium names every row record Value; the topic's namespace says which table
        name = str(record.get("namespace") or envelope.get("namespace") or name)
    draft = SchemaDraft("Avro schema", f"{origin} record {_full(record, None)}", contract_name(name), record["name"])
    if envelope is not None:
        for f in envelope.get("fields", []):
            if f.get("name") != "after":
                draft.lose(
                    f"{envelope['name']}.{f.get('name')}",
                    f.get("type"),
                    "Debezium envelope field: change metadata, not a column of the row (the row record is imported)",
                )
    _record(draft, record, records)
    return [finish(draft, key, time_column)]


def _full(record: dict[str, Any], namespace: str | None) -> str:
    name = str(record.get("name"))
    ns = record.get("namespace", namespace)
    return name if "." in name or not ns else f"{ns}.{name}"


def _records(node: Any, namespace: str | None, found: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every named record in the schema, by full name (in order of definition)."""
    if isinstance(node, list):
        for item in node:
            _records(item, namespace, found)
    elif isinstance(node, dict):
        kind = node.get("type")
        if kind == "record" and isinstance(node.get("name"), str) and isinstance(node.get("fields"), list):
            found.setdefault(_full(node, namespace), node)
            ns = node.get("namespace", namespace)
            for f in node["fields"]:
                if isinstance(f, dict):
                    _records(f.get("type"), ns, found)
        elif kind in ("array", "map"):
            _records(node.get("items", node.get("values")), namespace, found)
        elif isinstance(kind, dict | list):
            _records(kind, namespace, found)
    return found


def _resolve(node: Any, records: dict[str, dict[str, Any]]) -> Any:
    if isinstance(node, str) and node not in _PRIMITIVE and node != "null":
        for full, record in records.items():
            if node in (full, record["name"]):
                return record
    return node


def _debezium_row(
    top: dict[str, Any], records: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    fields = {f.get("name"): f for f in top.get("fields", []) if isinstance(f, dict)}
    if not {"before", "after", "op"} <= set(fields):
        return None
    after = fields["after"].get("type")
    branches = [_resolve(b, records) for b in (after if isinstance(after, list) else [after])]
    rows = [b for b in branches if isinstance(b, dict) and b.get("type") == "record"]
    return (rows[0], top) if len(rows) == 1 else None


def _record(draft: SchemaDraft, record: dict[str, Any], records: dict[str, dict[str, Any]]) -> None:
    doc = record.get("doc")
    own = is_own(doc)
    if own:
        rest = restore_record_lines(draft, str(doc).splitlines(), record["name"])
        if rest:
            draft.top["description"] = "\n".join(rest)
    elif isinstance(doc, str) and doc.strip():
        draft.top["description"] = doc
    for k, v in record.items():
        if k == "connect.name" and str(v).rsplit(".", 1)[-1] == record["name"]:
            continue  # Kafka Connect restating the record's name
        if k not in ("type", "name", "namespace", "doc", "fields"):
            draft.lose(f"{record['name']}.{k}", v, "no place in a tscontract contract")
    for f in record.get("fields", []):
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            draft.lose(f"{record['name']}.fields", f, "a field without a name")
            continue
        _field(draft, record["name"], f, records, own)


def _field(draft: SchemaDraft, owner: str, f: dict[str, Any], records: dict[str, dict[str, Any]], own: bool) -> None:
    name, path = f["name"], f"{owner}.{f['name']}"
    written = f.get("type")
    nullable = False
    if isinstance(written, list):
        branches = [b for b in written if b != "null"]
        nullable = len(branches) < len(written)
        if len(branches) != 1:
            draft.lose(path, written, "a union of several types has no tscontract type; the mapping drops the column")
            draft.drop.append(name)
            return
        written = branches[0]
    if isinstance(written, dict) and written.get("connect.default", f.get("default")) != f.get("default"):
        draft.lose(f"{path}.connect.default", written["connect.default"], "a Kafka Connect default unlike the field's")
    dtype, reason = _type(draft, path, _resolve(written, records))
    if dtype is None:
        draft.lose(path, written, f"{reason}; the mapping drops the column")
        draft.drop.append(name)
        return
    if reason:
        draft.lose(f"{path}.type", written, reason)
    entry: dict[str, Any] = {"type": dtype, "nullable": nullable}
    doc = f.get("doc")
    if own and isinstance(doc, str):  # the contract's own words, type and nullability included
        entry = {"type": dtype, **restore_field_doc(doc)}
    elif isinstance(doc, str) and doc.strip():
        entry["description"] = doc
    default = f.get("default")
    if default is not None and not own:
        entry["default"] = default
    if isinstance(f.get("aliases"), list) and f["aliases"]:
        entry["aliases"] = [str(a) for a in f["aliases"]]
    for k, v in f.items():
        if k not in _FIELD_KEYS and not (k == "connect.default" and v == default):
            draft.lose(f"{path}.{k}", v, "no place in a tscontract contract")
    draft.add_field(name, entry)


def _type(draft: SchemaDraft, path: str, node: Any) -> tuple[str | None, str | None]:
    """(tscontract type, reason it says less) of one Avro type; (None, reason) when it has none."""
    if isinstance(node, str):
        if node in _PRIMITIVE:
            return _PRIMITIVE[node], None
        return None, f"unknown Avro type {node!r}"
    if not isinstance(node, dict):
        return None, "a nested union has no tscontract type"
    kind, logical = node.get("type"), node.get("logicalType")
    connect = node.get("connect.name")
    if kind in ("record", "array", "map"):
        return None, f"a nested {kind}: tscontract fields are scalar"
    if kind == "enum":
        symbols = node.get("symbols") or []
        for k, v in node.items():
            if k not in ("type", "name", "namespace", "symbols", "doc", "aliases"):
                draft.lose(f"{path}.{k}", v, "no place in a tscontract contract")
        return (f"enum[{', '.join(symbols)}]", None) if symbols else (None, "an enum without symbols")
    raw_params = node.get("connect.parameters")
    params = raw_params if isinstance(raw_params, dict) else {}
    if connect == "io.debezium.data.Enum" and isinstance(params.get("allowed"), str):
        return f"enum[{', '.join(params['allowed'].split(','))}]", None
    for k, v in node.items():
        if k not in _TYPE_KEYS and not (kind == "fixed" and k in ("name", "namespace", "size")):
            draft.lose(f"{path}.{k}", v, "no place in a tscontract contract")
    for k, v in params.items():
        if k not in ("scale", "connect.decimal.precision"):
            draft.lose(f"{path}.connect.parameters.{k}", v, "a Kafka Connect parameter with no tscontract clause")
    if logical == "decimal" or connect == "org.apache.kafka.connect.data.Decimal":
        precision: Any = node.get("precision", params.get("connect.decimal.precision"))
        scale: Any = node.get("scale", params.get("scale", 0))
        if str(precision).isdigit() and str(scale).isdigit() and 1 <= int(precision) <= 38:
            return f"decimal({int(precision)},{int(scale)})", None
        return "float64", f"a decimal with precision {precision!r} (tscontract: 1..38) is read as float64"
    if logical in _INSTANT:
        return f"timestamp_{_INSTANT[logical]}_utc", None
    if logical in _NAIVE:
        return f"timestamp_{_NAIVE[logical]}_utc", f"{logical} has no time zone: read as a UTC instant"
    if connect in _CONNECT:
        return _CONNECT[connect]
    if logical == "date":
        return "date", None
    if logical in ("time-millis", "time-micros"):
        base = _PRIMITIVE.get(str(kind), "int64")
        return base, f"a time of day ({logical}) has no tscontract type: read as {base}"
    if logical == "uuid":
        return "string", None
    if kind == "fixed":
        return "bytes", f"fixed size {node.get('size')}: no length rule written"
    if isinstance(kind, str) and kind in _PRIMITIVE:
        if logical is not None:
            return _PRIMITIVE[kind], f"logicalType {logical!r} is unknown: read as {_PRIMITIVE[kind]}"
        return _PRIMITIVE[kind], None
    return None, f"unknown Avro type {shown_type(node)}"


def shown_type(node: Any) -> str:
    return json.dumps(node)[:80]
