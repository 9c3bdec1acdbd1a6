"""Compatibility modes composed over a history (olds newest first)."""

from __future__ import annotations

import json

import pytest

from tscontract.evolution import CompatResult, Mode, check


def avro(*fields: dict) -> str:
    return json.dumps({"type": "record", "name": "Bar", "namespace": "ts", "fields": list(fields)})


ID = {"name": "id", "type": "long"}
# BACKWARD history: v3 reads v2 data (x present) but not v1 data (x missing, no default).
B1 = avro(ID)
B2 = avro(ID, {"name": "x", "type": "long", "default": 0})
B3 = avro(ID, {"name": "x", "type": "long"})
# FORWARD history: v2 reads v3 data (y has a default there) but v1 cannot (y has none).
F1 = avro(ID, {"name": "y", "type": "long"})
F2 = avro(ID, {"name": "y", "type": "long", "default": 0})
F3 = avro(ID)

MISSING_X = "olds[1] (new reads old): /fields/x: reader field missing from the writer has no default"
MISSING_Y = "olds[1] (old reads new): /fields/y: reader field missing from the writer has no default"


@pytest.mark.parametrize(
    ("mode", "new", "olds", "reasons"),
    [
        (Mode.BACKWARD, B3, [B2, B1], []),
        (Mode.BACKWARD_TRANSITIVE, B3, [B2, B1], [MISSING_X]),
        (Mode.FORWARD, F3, [F2, F1], []),
        (Mode.FORWARD_TRANSITIVE, F3, [F2, F1], [MISSING_Y]),
        # Backward history under FORWARD: the old readers ignore x, so forward holds even transitively.
        (Mode.FORWARD_TRANSITIVE, B3, [B2, B1], []),
        (Mode.BACKWARD_TRANSITIVE, F3, [F2, F1], []),
        (Mode.FULL, B3, [B2, B1], []),
        (Mode.FULL_TRANSITIVE, B3, [B2, B1], [MISSING_X]),
        (Mode.FULL_TRANSITIVE, F3, [F2, F1], [MISSING_Y]),
        (Mode.NONE, B3, [B2, B1], []),
        (Mode.NONE, "not even json", ["{"], []),
    ],
)
def test_mode_composition(mode, new, olds, reasons):
    result = check(mode, new, olds, "avro")
    assert result.reasons == reasons
    assert result.compatible is (not reasons)


def test_latest_only_modes_ignore_older_versions():
    # v2 is incompatible with v1 in every direction, but only v2 is the latest.
    bad_old = avro({"name": "id", "type": "string"})
    assert check("FULL", B2, [B2, bad_old], "avro").compatible
    result = check("FULL_TRANSITIVE", B2, [B2, bad_old], "avro")
    assert result.reasons == [
        "olds[1] (new reads old): /fields/id/type: type string -> long does not resolve",
        "olds[1] (old reads new): /fields/id/type: type long -> string does not resolve",
    ]


def test_full_is_backward_and_forward():
    new = avro(ID, {"name": "x", "type": "long"})
    backward, forward = check("BACKWARD", new, [B1], "avro"), check("FORWARD", new, [B1], "avro")
    full = check("FULL", new, [B1], "avro")
    assert not backward.compatible and forward.compatible
    assert full.reasons == backward.reasons + forward.reasons


def test_mode_names_and_empty_history():
    assert check("backward_transitive", B3, [], "avro") == CompatResult(True, [], [])
    with pytest.raises(ValueError):
        check("SIDEWAYS", B3, [B1], "avro")
    with pytest.raises(ValueError, match="unknown schema format"):
        check("FULL", B3, [B1], "thrift")


def test_warnings_do_not_break_compatibility():
    renamed = json.dumps({"type": "record", "name": "Bar", "namespace": "other", "fields": [ID]})
    result = check("FULL", renamed, [B1], "avro")
    assert result.compatible
    assert result.warnings == [
        "olds[0] (new reads old): /: namespace of Bar changed: ts.Bar -> other.Bar",
        "olds[0] (old reads new): /: namespace of Bar changed: other.Bar -> ts.Bar",
    ]


PROTO = 'syntax = "proto3";\nmessage Bar {\n%s\n}\n'


def test_protobuf_history_transitive():
    v1 = PROTO % "optional int64 volume = 1;"
    v2 = PROTO % "optional string symbol = 2;"  # removes volume without reserving 1: a warning
    v3 = PROTO % "optional string symbol = 2;\n  optional string venue = 1;"  # reuses 1: fine against v2, not v1
    assert check("FULL", v3, [v2, v1], "protobuf").compatible
    result = check("FULL_TRANSITIVE", v3, [v2, v1], "protobuf")
    assert not result.compatible
    reused = "/Bar/fields/1/type: number 1 reused: int64 volume -> string venue (wire-incompatible)"
    assert result.reasons == [f"olds[1] (new reads old): {reused}", f"olds[1] (old reads new): {reused}"]


def test_jsonschema_history_transitive():
    def schema(side_enum: list[str], required: list[str]) -> str:
        return json.dumps(
            {
                "type": "object",
                "additionalProperties": False,
                "required": required,
                "properties": {"side": {"enum": side_enum}, "id": {"type": "integer"}},
            }
        )

    v1 = schema(["BUY", "SELL", "CROSS"], ["id"])
    v2 = schema(["BUY", "SELL"], ["id"])
    v3 = schema(["BUY", "SELL"], ["id"])
    assert check("BACKWARD", v3, [v2, v1], "jsonschema").compatible
    result = check("BACKWARD_TRANSITIVE", v3, [v2, v1], "jsonschema")
    assert result.reasons == [
        "olds[1] (new reads old): /properties/side/enum: enum narrowed: ['CROSS'] no longer allowed"
    ]
    assert check("FORWARD_TRANSITIVE", v3, [v2, v1], "jsonschema").compatible


def test_cli_compat_exit_codes(tmp_path):
    from tests.conftest import EXAMPLES, run_cli

    v1 = tmp_path / "v1.avsc"
    v1.write_text(run_cli("export", "avro", EXAMPLES / "ohlcv_1m" / "contract.yaml").stdout)
    v2 = tmp_path / "v2.avsc"
    v2.write_text(v1.read_text().replace('"scale": 4', '"scale": 2'))
    bad = run_cli("compat", "avro", v2, v1, "--mode", "BACKWARD", "--format", "json")
    assert bad.returncode == 1
    assert "decimal scale 4 -> 2" in " ".join(__import__("json").loads(bad.stdout)["reasons"])
    assert run_cli("compat", "avro", v1, v1).returncode == 0
    assert run_cli("compat", "avro", v1, v1, "--mode", "SIDEWAYS").returncode == 2


def test_cli_compat_names_the_file_that_does_not_parse(tmp_path):
    from tests.conftest import run_cli

    good = tmp_path / "good.avsc"
    good.write_text('{"type": "record", "name": "Bar", "fields": []}')
    truncated = tmp_path / "truncated.avsc"
    truncated.write_text('{"type": "record", "name": "Bar", "fields": [')
    result = run_cli("compat", "avro", good, truncated)
    assert result.returncode == 2
    assert f"{truncated}: not a valid avro schema: not JSON" in result.stderr
    assert "Traceback" not in result.stderr
    proto = tmp_path / "new.proto"
    proto.write_text('syntax = "proto3";\nmessage {{{\n')
    old = tmp_path / "old.proto"
    old.write_text('syntax = "proto3";\nmessage M { string a = 1; }\n')
    result = run_cli("compat", "protobuf", proto, old)
    assert result.returncode == 2
    assert f"{proto}: not a valid protobuf schema: schema.proto:2:9: Expected message name." in result.stderr
    unknown = run_cli("compat", "xml", good, good)
    assert unknown.returncode == 2 and "unknown schema format 'xml'" in unknown.stderr


def test_cli_compat_reads_protobuf_imports_from_proto_path(tmp_path):
    from tests.conftest import run_cli

    shared = tmp_path / "protos" / "acme"
    shared.mkdir(parents=True)
    (shared / "money.proto").write_text(
        'syntax = "proto3";\npackage acme;\nmessage Money {\n  int64 units = 1;\n  string currency = 2;\n}\n'
    )
    head = 'syntax = "proto3";\npackage acme.md;\nimport "acme/money.proto";\n'
    old = tmp_path / "trade_v1.proto"
    old.write_text(head + "message Trade {\n  string symbol = 1;\n  acme.Money price = 2;\n}\n")
    added = tmp_path / "trade_v2.proto"
    added.write_text(head + "message Trade {\n  string symbol = 1;\n  acme.Money price = 2;\n  string venue = 3;\n}\n")
    retyped = tmp_path / "trade_v3.proto"
    retyped.write_text(head + "message Trade {\n  string symbol = 1;\n  string price = 2;\n}\n")
    missing = run_cli("compat", "protobuf", added, old)
    assert missing.returncode == 2 and "acme/money.proto" in missing.stderr
    assert run_cli("compat", "protobuf", added, old, "-I", tmp_path / "protos").returncode == 0
    broken = run_cli("compat", "protobuf", retyped, old, "--proto-path", tmp_path / "protos")
    assert broken.returncode == 1 and "/Trade/fields/2/type: message -> string" in broken.stdout
