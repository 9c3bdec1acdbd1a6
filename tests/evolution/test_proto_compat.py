"""Protobuf wire compatibility, on .proto text compiled by grpcio-tools' protoc."""

from __future__ import annotations

import pytest

from tscontract.evolution import check
from tscontract.evolution.proto_compat import compare, compile_proto

HEAD = 'syntax = "proto3";\npackage ts.bar.v1;\nimport "google/protobuf/timestamp.proto";\n'
BASE = """
message Bar {
  google.protobuf.Timestamp bar_start = 1;
  optional string symbol = 2;
  optional string close = 3;
  optional int64 volume = 4;
  optional Side side = 5;
  enum Side { SIDE_UNSPECIFIED = 0; BUY = 1; SELL = 2; }
  repeated double fills = 6;
}
"""


def proto(body: str) -> str:
    return HEAD + body


def variant(old: str, new: str) -> str:
    assert old in BASE
    return proto(BASE.replace(old, new))


OLD = proto(BASE)

# (id, new text, reason path prefix or None, warning substring or None)
CASES = [
    ("identical", OLD, None, None),
    (
        "add_field",
        variant("repeated double fills = 6;", "repeated double fills = 6; optional string venue = 7;"),
        None,
        None,
    ),
    ("remove_field_reserved", variant("optional int64 volume = 4;", 'reserved 4; reserved "volume";'), None, None),
    (
        "remove_field_not_reserved",
        variant("optional int64 volume = 4;", ""),
        None,
        "/Bar/fields/4: field volume = 4 removed but number not reserved",
    ),
    (
        "remove_field_number_only_reserved",
        variant("optional int64 volume = 4;", "reserved 4;"),
        None,
        "field volume removed but name not reserved",
    ),
    (
        "reuse_number_other_wire_type",
        variant("optional int64 volume = 4;", "optional double volume = 4;"),
        "/Bar/fields/4/type: number 4 reused: int64 volume -> double volume",
        None,
    ),
    (
        "reuse_number_other_name_and_type",
        variant("optional int64 volume = 4;", "optional string venue = 4;"),
        "/Bar/fields/4/type: number 4 reused: int64 volume -> string venue",
        None,
    ),
    (
        "varint_width_change",
        variant("optional int64 volume = 4;", "optional int32 volume = 4;"),
        None,
        "int64 -> int32: same wire type",
    ),
    (
        "varint_to_zigzag",
        variant("optional int64 volume = 4;", "optional sint64 volume = 4;"),
        "/Bar/fields/4/type",
        None,
    ),
    (
        "fixed64_to_double",
        variant("repeated double fills = 6;", "repeated fixed64 fills = 6;"),
        "/Bar/fields/6/type",
        None,
    ),
    (
        "string_to_bytes",
        variant("optional string close = 3;", "optional bytes close = 3;"),
        None,
        "string -> bytes: same wire type",
    ),
    (
        "string_to_message",
        variant("optional string close = 3;", "google.protobuf.Timestamp close = 3;"),
        "/Bar/fields/3/type: string -> message",
        None,
    ),
    (
        "field_renamed",
        variant("optional string close = 3;", "optional string close_price = 3;"),
        None,
        "field renamed close -> close_price",
    ),
    (
        "field_number_moved",
        variant("optional string close = 3;", "reserved 3; optional string close = 9;"),
        None,
        "/Bar/fields/9: field close number 3 -> 9",
    ),
    (
        "repeated_to_singular",
        variant("repeated double fills = 6;", "optional double fills = 6;"),
        "/Bar/fields/6/label: repeated -> explicit presence",
        None,
    ),
    (
        "presence_dropped",
        variant("optional string symbol = 2;", "string symbol = 2;"),
        None,
        "presence explicit presence -> implicit presence",
    ),
    (
        "message_renamed",
        proto(BASE.replace("message Bar {", "message Candle {")),
        None,
        "message renamed ts.bar.v1.Bar -> ts.bar.v1.Candle",
    ),
    (
        "enum_renamed",
        variant("optional Side side = 5;\n  enum Side {", "optional Way side = 5;\n  enum Way {").replace(
            "SIDE_UNSPECIFIED", "WAY_UNSPECIFIED"
        ),
        # a field's named type changing is a break, as in Confluent's checker (FIELD_NAMED_TYPE_CHANGED)
        "/Bar/fields/5/type: enum type ts.bar.v1.Bar.Side -> ts.bar.v1.Bar.Way",
        None,
    ),
    ("enum_value_removed", variant("SELL = 2;", "reserved 2;"), None, "enum value SELL removed"),
    (
        "enum_to_int32",
        variant("optional Side side = 5;", "optional int32 side = 5;"),
        None,
        "enum -> int32: same wire type",
    ),
    (
        "nested_message_field_type",
        variant("google.protobuf.Timestamp bar_start = 1;", "optional int64 bar_start = 1;"),
        "/Bar/fields/1/type: number 1 reused: message bar_start -> int64 bar_start",
        None,
    ),
]


@pytest.mark.parametrize(("case_id", "new", "reason", "warning"), CASES, ids=[c[0] for c in CASES])
def test_verdict_reason_and_warning(case_id, new, reason, warning):
    issues = compare(new, OLD)
    errors = [str(i) for i in issues if not i.warning]
    warnings = [str(i) for i in issues if i.warning]
    if reason is None:
        assert errors == []
    else:
        assert any(e.startswith(reason) for e in errors), errors
    if warning is not None:
        assert any(warning in w for w in warnings), warnings


def test_new_field_on_number_reserved_in_old():
    old = variant("optional int64 volume = 4;", 'reserved 4; reserved "volume";')
    new = variant("optional int64 volume = 4;", "optional string venue = 4;")
    errors = [str(i) for i in compare(new, old) if not i.warning]
    assert errors == ["/Bar/fields/4: field venue reuses number 4 reserved in old"]
    renamed_back = variant("optional int64 volume = 4;", "optional int64 volume = 8;")
    assert "/Bar/fields/8: field volume reuses name reserved in old" in [str(i) for i in compare(renamed_back, old)]


def test_direction_decides_which_side_must_reserve():
    added = variant("repeated double fills = 6;", "repeated double fills = 6; optional string venue = 7;")
    assert check("FULL", added, [OLD], "protobuf").compatible
    removed = variant("optional int64 volume = 4;", "")
    result = check("FULL", removed, [OLD], "protobuf")
    # removing a field is wire-compatible (language guide); not reserving its number is a warning
    assert result.compatible
    assert "olds[0] (old reads new): /Bar/fields/4: field volume = 4 removed but number not reserved" in result.warnings
    re_added = check("FULL", OLD, [removed], "protobuf")  # the new side adds it back: nothing to reserve
    assert re_added.compatible and not any("not reserved" in w for w in re_added.warnings)


def test_protoc_refuses_invalid_text():
    with pytest.raises(ValueError, match="protoc"):
        compile_proto("syntax = 'proto3'; message {")


def test_wire_proof_reserved_removal_reads_old_bytes():
    """An old message's bytes parse under the new schema; the removed number is kept as an unknown field."""
    from google.protobuf import descriptor_pool, message_factory

    def message_class(text: str, pool_name: str):
        pool = descriptor_pool.DescriptorPool()
        for file in compile_proto(text).file:
            pool.Add(file)
        return message_factory.GetMessageClass(pool.FindMessageTypeByName("ts.bar.v1.Bar"))

    old_cls = message_class(OLD, "old")
    new_cls = message_class(variant("optional int64 volume = 4;", 'reserved 4; reserved "volume";'), "new")
    data = old_cls(symbol="BTC-USD", close="1.5", volume=7).SerializeToString()
    parsed = new_cls.FromString(data)
    assert parsed.symbol == "BTC-USD" and parsed.close == "1.5"
    assert parsed.SerializeToString() == data  # the unknown field 4 survives a round trip


def test_dropped_reservation_is_a_warning():
    old = variant("optional int64 volume = 4;", 'reserved 4; reserved "volume";')
    warnings = [str(i) for i in compare(OLD, old) if i.warning]
    assert "/Bar/reserved: reserved number(s) [4] no longer reserved" in warnings
    assert "/Bar/reserved: reserved name(s) ['volume'] no longer reserved" in warnings


def test_exported_proto_is_fully_compatible_with_itself():
    from tests.conftest import EXAMPLES
    from tscontract import load_contract
    from tscontract.interop.exports import export

    text = export("protobuf", load_contract(EXAMPLES / "ohlcv_1m" / "contract.yaml")).artifacts[0].content
    result = check("FULL_TRANSITIVE", text, [text, text], "protobuf")
    assert result.compatible and result.warnings == []
