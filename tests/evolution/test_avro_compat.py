"""Avro reader/writer resolution: each case proven by fastavro and cross-checked with the ``avro`` package."""

from __future__ import annotations

import copy
import io
import json
from decimal import Decimal

import fastavro
import pytest

from tscontract.evolution import check
from tscontract.evolution.avro_compat import check_read

DEC_18_4 = {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 4}


def record(*fields: dict, name: str = "Bar", namespace: str = "ts", **extra) -> dict:
    return {"type": "record", "name": name, "namespace": namespace, "fields": list(fields), **extra}


def one(field_type, name: str = "v", **extra) -> dict:
    return record({"name": name, "type": field_type, **extra})


def enum(*symbols: str, **extra) -> dict:
    return {"type": "enum", "name": "Side", "symbols": list(symbols), **extra}


QUOTE = {"type": "record", "name": "Quote", "fields": [{"name": "bid", "type": "double"}]}
QUOTE_ASK = {
    "type": "record",
    "name": "Quote",
    "fields": [{"name": "bid", "type": "double"}, {"name": "ask", "type": "double"}],
}
LINKED = record({"name": "value", "type": "long"}, {"name": "next", "type": ["null", "ts.Bar"], "default": None})
LINKED_WIDE = record({"name": "value", "type": "double"}, {"name": "next", "type": ["null", "Bar"], "default": None})

# (id, reader (new), writer (old), datum written by writer, reason path or None when compatible)
CASES = [
    ("identical", one("long"), one("long"), {"v": 5}, None),
    (
        "add_field_with_default",
        record({"name": "v", "type": "long"}, {"name": "x", "type": "int", "default": 0}),
        one("long"),
        {"v": 1},
        None,
    ),
    (
        "add_nullable_field",
        record({"name": "v", "type": "long"}, {"name": "x", "type": ["null", "int"], "default": None}),
        one("long"),
        {"v": 1},
        None,
    ),
    (
        "add_field_without_default",
        record({"name": "v", "type": "long"}, {"name": "x", "type": "int"}),
        one("long"),
        {"v": 1},
        "/fields/x: reader field missing from the writer has no default",
    ),
    (
        "remove_field",
        one("long"),
        record({"name": "v", "type": "long"}, {"name": "x", "type": "int"}),
        {"v": 1, "x": 2},
        None,
    ),
    ("int_to_long", one("long"), one("int"), {"v": 7}, None),
    ("int_to_float", one("float"), one("int"), {"v": 7}, None),
    ("int_to_double", one("double"), one("int"), {"v": 7}, None),
    ("long_to_float", one("float"), one("long"), {"v": 7}, None),
    ("long_to_double", one("double"), one("long"), {"v": 7}, None),
    ("float_to_double", one("double"), one("float"), {"v": 1.5}, None),
    ("long_to_int", one("int"), one("long"), {"v": 7}, "/fields/v/type: type long -> int does not resolve"),
    ("double_to_float", one("float"), one("double"), {"v": 1.5}, "/fields/v/type: type double -> float"),
    ("string_to_bytes", one("bytes"), one("string"), {"v": "abc"}, None),
    ("bytes_to_string", one("string"), one("bytes"), {"v": b"abc"}, None),
    ("string_to_int", one("int"), one("string"), {"v": "abc"}, "/fields/v/type: type string -> int"),
    ("boolean_to_int", one("int"), one("boolean"), {"v": True}, "/fields/v/type: type boolean -> int"),
    ("enum_widened", one(enum("BUY", "SELL", "CROSS")), one(enum("BUY", "SELL")), {"v": "SELL"}, None),
    (
        "enum_narrowed",
        one(enum("BUY")),
        one(enum("BUY", "SELL")),
        {"v": "SELL"},
        "/fields/v/type: writer enum symbols ['SELL'] unknown",
    ),
    (
        "enum_narrowed_with_default",
        one(enum("BUY", "UNKNOWN", default="UNKNOWN")),
        one(enum("BUY", "SELL")),
        {"v": "SELL"},
        None,
    ),
    (
        "enum_renamed_no_alias",
        one(enum("BUY") | {"name": "Way"}),
        one(enum("BUY")),
        {"v": "BUY"},
        "/fields/v/type: enum name ts.Side -> ts.Way",
    ),
    ("union_branches_promoted", one(["null", "long"]), one(["null", "int"]), {"v": 3}, None),
    (
        "union_to_plain_with_null_branch",
        one("string"),
        one(["null", "string"]),
        {"v": "a"},
        "/fields/v/type/0: type null -> string",
    ),
    ("plain_to_union", one(["null", "int"]), one("int"), {"v": 3}, None),
    ("plain_to_union_promoted", one(["null", "string", "double"]), one("int"), {"v": 3}, None),
    (
        "plain_to_union_no_branch",
        one(["null", "string"]),
        one("int"),
        {"v": 3},
        "/fields/v/type: writer type int matches no branch",
    ),
    (
        "union_branch_dropped",
        one(["null", "int"]),
        one(["null", "int", "string"]),
        {"v": 3},
        "/fields/v/type/2: writer type string matches no branch",
    ),
    (
        "field_alias_rename",
        record({"name": "qty", "type": "long", "aliases": ["volume"]}),
        record({"name": "volume", "type": "long"}),
        {"volume": 9},
        None,
    ),
    (
        "field_rename_no_alias",
        record({"name": "qty", "type": "long"}),
        record({"name": "volume", "type": "long"}),
        {"volume": 9},
        "/fields/qty: reader field missing",
    ),
    ("record_alias_rename", one("long") | {"name": "Candle", "aliases": ["ts.Bar"]}, one("long"), {"v": 1}, None),
    (
        "record_rename_no_alias",
        one("long") | {"name": "Candle"},
        one("long"),
        {"v": 1},
        "/: record name ts.Bar -> ts.Candle",
    ),
    (
        "fixed_same",
        one({"type": "fixed", "name": "Id", "size": 4}),
        one({"type": "fixed", "name": "Id", "size": 4}),
        {"v": b"abcd"},
        None,
    ),
    (
        "fixed_size",
        one({"type": "fixed", "name": "Id", "size": 8}),
        one({"type": "fixed", "name": "Id", "size": 4}),
        {"v": b"abcd"},
        "/fields/v/type: fixed size 4 -> 8",
    ),
    ("decimal_same", one(DEC_18_4, name="volume"), one(DEC_18_4, name="volume"), {"volume": Decimal("1.2345")}, None),
    (
        "decimal_scale",
        one(DEC_18_4 | {"scale": 2}, name="volume"),
        one(DEC_18_4, name="volume"),
        {"volume": Decimal("1.2345")},
        "/fields/volume/type: decimal scale 4 -> 2",
    ),
    (
        "decimal_precision",
        one(DEC_18_4 | {"precision": 24}, name="volume"),
        one(DEC_18_4, name="volume"),
        {"volume": Decimal("1.2345")},
        "/fields/volume/type: decimal precision 18 -> 24",
    ),
    (
        "decimal_dropped",
        one("bytes", name="volume"),
        one(DEC_18_4, name="volume"),
        {"volume": Decimal("1.2345")},
        "/fields/volume/type: logical type decimal -> none",
    ),
    (
        "timestamp_unit",
        one({"type": "long", "logicalType": "timestamp-micros"}),
        one({"type": "long", "logicalType": "timestamp-millis"}),
        {"v": 1_700_000_000_000},
        "/fields/v/type: logical type timestamp-millis -> timestamp-micros",
    ),
    (
        "nested_field_added_no_default",
        one(QUOTE_ASK, name="quote"),
        one(QUOTE, name="quote"),
        {"quote": {"bid": 1.0}},
        "/fields/quote/type/fields/ask: reader field missing",
    ),
    (
        "nested_field_removed",
        one(QUOTE, name="quote"),
        one(QUOTE_ASK, name="quote"),
        {"quote": {"bid": 1.0, "ask": 2.0}},
        None,
    ),
    (
        "array_items_promoted",
        one({"type": "array", "items": "long"}),
        one({"type": "array", "items": "int"}),
        {"v": [1, 2]},
        None,
    ),
    (
        "array_items_changed",
        one({"type": "array", "items": "int"}),
        one({"type": "array", "items": "string"}),
        {"v": ["a"]},
        "/fields/v/type/items: type string -> int",
    ),
    (
        "map_values_changed",
        one({"type": "map", "values": "int"}),
        one({"type": "map", "values": "double"}),
        {"v": {"a": 1.0}},
        "/fields/v/type/values: type double -> int",
    ),
    (
        "array_to_map",
        one({"type": "map", "values": "int"}),
        one({"type": "array", "items": "int"}),
        {"v": [1]},
        "/fields/v/type: type array -> map",
    ),
    ("null_to_null", one("null"), one("null"), {"v": None}, None),
    ("null_to_int", one("int"), one("null"), {"v": None}, "/fields/v/type: type null -> int"),
    ("recursive_promoted", LINKED_WIDE, LINKED, {"value": 1, "next": {"value": 2, "next": None}}, None),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("case_id", "reader", "writer", "datum", "reason"), CASES, ids=IDS)
def test_verdict_and_reason_path(case_id, reader, writer, datum, reason):
    issues = [i for i in check_read(json.dumps(reader), json.dumps(writer)) if not i.warning]
    if reason is None:
        assert issues == [], case_id
    else:
        assert any(str(i).startswith(reason) for i in issues), [str(i) for i in issues]


def _round_trip(reader: dict, writer: dict, datum):
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(writer), datum)
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, fastavro.parse_schema(writer), fastavro.parse_schema(reader))


COMPATIBLE = [case for case in CASES if case[4] is None]
# Incompatible pairs fastavro itself refuses while resolving (it does not compare logical types or symbols it
# never meets): the rest are semantic errors our checker adds on purpose (decimal scale, timestamp unit).
FASTAVRO_REFUSES = {
    "add_field_without_default",
    "long_to_int",
    "double_to_float",
    "string_to_int",
    "boolean_to_int",
    "enum_narrowed",
    "enum_renamed_no_alias",
    "plain_to_union_no_branch",
    "field_rename_no_alias",
    "record_rename_no_alias",
    "fixed_size",
    "nested_field_added_no_default",
    "array_items_changed",
    "map_values_changed",
    "array_to_map",
    "null_to_int",
}


@pytest.mark.parametrize(("case_id", "reader", "writer", "datum", "reason"), COMPATIBLE, ids=[c[0] for c in COMPATIBLE])
def test_fastavro_reads_compatible_pairs(case_id, reader, writer, datum, reason):
    value = _round_trip(reader, writer, datum)
    assert isinstance(value, dict)


REFUSED = [case for case in CASES if case[0] in FASTAVRO_REFUSES]


@pytest.mark.parametrize(("case_id", "reader", "writer", "datum", "reason"), REFUSED, ids=[c[0] for c in REFUSED])
def test_fastavro_refuses_incompatible_pairs(case_id, reader, writer, datum, reason):
    with pytest.raises(Exception):  # noqa: B017 - fastavro raises SchemaResolutionError or a type error per case
        _round_trip(reader, writer, datum)


def test_fastavro_values_follow_resolution():
    assert _round_trip(one("double"), one("int"), {"v": 7}) == {"v": 7.0}
    assert _round_trip(one(enum("BUY", "X", default="X")), one(enum("BUY", "SELL")), {"v": "SELL"}) == {"v": "X"}
    alias = record({"name": "qty", "type": "long", "aliases": ["volume"]})
    assert _round_trip(alias, record({"name": "volume", "type": "long"}), {"volume": 9}) == {"qty": 9}
    added = record({"name": "v", "type": "long"}, {"name": "x", "type": ["null", "int"], "default": None})
    assert _round_trip(added, one("long"), {"v": 1}) == {"v": 1, "x": None}


# Where the avro package's checker differs from the specification on purpose: it ignores logical types.
AVRO_LIB_DIFFERS = {"decimal_scale", "decimal_precision", "decimal_dropped", "timestamp_unit"}


@pytest.mark.parametrize(("case_id", "reader", "writer", "datum", "reason"), CASES, ids=IDS)
def test_cross_check_with_avro_package(case_id, reader, writer, datum, reason):
    import avro.compatibility as compatibility  # the avro package's own checker, from the dev extras
    import avro.schema

    verdict = compatibility.ReaderWriterCompatibilityChecker().get_compatibility(
        avro.schema.parse(json.dumps(reader)), avro.schema.parse(json.dumps(writer))
    )
    library_ok = verdict.compatibility is compatibility.SchemaCompatibilityType.compatible
    ours_ok = reason is None
    if case_id in AVRO_LIB_DIFFERS:
        assert library_ok and not ours_ok
    else:
        assert library_ok == ours_ok, verdict


def test_namespace_change_is_a_warning():
    reader = one(QUOTE | {"namespace": "other"}, name="quote")
    issues = check_read(json.dumps(reader), json.dumps(one(QUOTE, name="quote")))
    assert [i.warning for i in issues] == [True]
    assert "namespace of Quote changed: ts.Quote -> other.Quote" in str(issues[0])


def test_full_compatibility_needs_defaults_both_ways():
    old = json.dumps(one("long"))
    with_default = json.dumps(record({"name": "v", "type": "long"}, {"name": "x", "type": "int", "default": 0}))
    assert check("FULL", with_default, [old], "avro").compatible
    # Removing a field without a default: new writers omit it, old readers cannot fill it in.
    dropped = json.dumps(record({"name": "w", "type": "long", "default": 0}))
    no_default_old = json.dumps(record({"name": "v", "type": "long"}, {"name": "w", "type": "long", "default": 0}))
    result = check("FULL", dropped, [no_default_old], "avro")
    assert not result.compatible
    assert result.reasons == ["olds[0] (old reads new): /fields/v: reader field missing from the writer has no default"]


def _exported_avsc() -> dict:
    from tests.conftest import EXAMPLES
    from tscontract import load_contract
    from tscontract.interop.exports import export

    return json.loads(export("avro", load_contract(EXAMPLES / "ohlcv_1m" / "contract.yaml")).artifacts[0].content)


def test_exported_schema_evolution():
    old = _exported_avsc()
    added = copy.deepcopy(old)
    added["fields"].append({"name": "vwap", "type": ["null", DEC_18_4], "default": None})
    assert check("FULL_TRANSITIVE", json.dumps(added), [json.dumps(old), json.dumps(old)], "avro").compatible
    rescaled = copy.deepcopy(old)
    volume = next(f for f in rescaled["fields"] if f["name"] == "volume")
    scale = volume["type"]["scale"]
    volume["type"]["scale"] = scale - 2
    result = check("BACKWARD", json.dumps(rescaled), [json.dumps(old)], "avro")
    assert result.reasons == [f"olds[0] (new reads old): /fields/volume/type: decimal scale {scale} -> {scale - 2}"]
