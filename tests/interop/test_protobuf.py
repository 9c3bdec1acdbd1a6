"""The Protobuf export, proven with grpcio-tools' protoc and the protobuf runtime: the .proto compiles,
good fixture rows round-trip exactly, an unset measurement is absent (not 0), and field numbers stay
stable across contract versions through the lock file (removed fields become reserved)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from datetime import UTC
from decimal import Decimal
from pathlib import Path

import grpc_tools
import pytest

from tests.conftest import EXAMPLES
from tscontract import load_contract, parse_contract
from tscontract.errors import InputError
from tscontract.interop.exports import export
from tscontract.interop.exports._records import python_record, read_csv_rows
from tscontract.plan.checks import build_plan

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"
WELL_KNOWN = Path(grpc_tools.__file__).parent / "_proto"


def protoc(directory: Path, filename: str) -> None:
    """Compile ``directory/filename`` with the real protoc; python_out into the same directory."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{directory}",
            f"-I{WELL_KNOWN}",
            f"--python_out={directory}",
            filename,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr


def write_artifacts(result, directory: Path) -> str:
    result.write(directory)
    (proto,) = [a for a in result.artifacts if a.path.endswith(".proto")]
    return proto.path


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Both example contracts compiled and imported: {dataset: (contract, result, module)}."""
    directory = tmp_path_factory.mktemp("proto")
    modules = {}
    sys.path.insert(0, str(directory))
    try:
        for dataset in (OHLCV, SENSOR):
            contract = load_contract(dataset / "contract.yaml")
            result = export("protobuf", contract)
            filename = write_artifacts(result, directory)
            protoc(directory, filename)
            module = importlib.import_module(filename.removesuffix(".proto") + "_pb2")
            modules[dataset] = (contract, result, module)
    finally:
        sys.path.remove(str(directory))
    return modules


def to_message(message_class, contract, row):
    """A fixture row as a message: decimals as their exact text, instants as Timestamps."""
    message = message_class()
    typed = python_record(contract, row)
    for name, value in typed.items():
        if value is None:
            continue  # absent: never set, so HasField is False
        kind = contract.fields[name].type.kind
        if kind == "timestamp":
            getattr(message, name).FromDatetime(value)
        elif kind == "decimal":
            setattr(message, name, row[name])
        elif kind == "enum":
            setattr(
                message,
                name,
                message_class.DESCRIPTOR.fields_by_name[name]
                .enum_type.values_by_name[f"{name.upper()}_{value.upper()}"]
                .number,
            )
        else:
            setattr(message, name, value)
    return message


@pytest.mark.parametrize("dataset", [OHLCV, SENSOR], ids=["ohlcv", "sensor"])
def test_good_rows_round_trip_exactly(compiled, dataset):
    contract, _, module = compiled[dataset]
    message_class = getattr(module, "Ohlcv1m" if dataset == OHLCV else "PlantSensorReading")
    rows = read_csv_rows(dataset / "data" / "good.csv")
    for row in rows:
        wire = to_message(message_class, contract, row).SerializeToString()
        back = message_class.FromString(wire)
        typed = python_record(contract, row)
        for name, value in typed.items():
            kind = contract.fields[name].type.kind
            if value is None:
                assert not back.HasField(name), name
            elif kind == "timestamp":
                assert back.HasField(name) and getattr(back, name).ToDatetime(tzinfo=UTC) == value
            elif kind == "decimal":
                assert Decimal(getattr(back, name)) == value and getattr(back, name) == row[name]
            elif kind == "enum":
                enum = message_class.DESCRIPTOR.fields_by_name[name].enum_type
                assert enum.values_by_number[getattr(back, name)].name == f"{name.upper()}_{value.upper()}"
            else:
                assert back.HasField(name) and getattr(back, name) == value, name


def test_unset_measurement_is_absent_not_zero(compiled):
    contract, _, module = compiled[OHLCV]
    rows = read_csv_rows(OHLCV / "data" / "good.csv")
    row = next(r for r in rows if r["symbol"] == "MSFT" and r["bar_start"] == "2026-11-30T14:47:00.000Z")
    assert row["trade_count"] is None  # the fixture's nullable trade_count
    back = module.Ohlcv1m.FromString(to_message(module.Ohlcv1m, contract, row).SerializeToString())
    assert not back.HasField("trade_count") and back.trade_count == 0  # reads 0, but is known absent
    zero = module.Ohlcv1m.FromString(module.Ohlcv1m(trade_count=0).SerializeToString())
    assert zero.HasField("trade_count")  # a counted zero is on the wire

    sensor, _, sensor_module = compiled[SENSOR]
    rows = read_csv_rows(SENSOR / "data" / "good.csv")
    row = next(r for r in rows if r["value"] is None)  # F-310 12:10, quality=bad
    reading = sensor_module.PlantSensorReading.FromString(
        to_message(sensor_module.PlantSensorReading, sensor, row).SerializeToString()
    )
    assert not reading.HasField("value") and reading.quality == sensor_module.PlantSensorReading.QUALITY_BAD
    measured_zero = sensor_module.PlantSensorReading(value="0.0000")
    assert sensor_module.PlantSensorReading.FromString(measured_zero.SerializeToString()).HasField("value")


def test_proto_text(compiled):
    _, result, module = compiled[OHLCV]
    proto = result.artifacts[0].content
    assert 'syntax = "proto3";' in proto and 'import "google/protobuf/timestamp.proto";' in proto
    assert "  google.protobuf.Timestamp bar_start = 2;" in proto
    assert "  optional string open = 3;" in proto  # decimal as exact text
    assert "  optional int64 trade_count = 8;" in proto
    assert "// invariants[0]: low <= open <= high" in proto
    assert "  // unit: quote_currency" in proto
    fields = module.Ohlcv1m.DESCRIPTOR.fields_by_name
    assert all(f.has_presence for f in fields.values())  # absent differs from zero for every field
    _, sensor, sensor_module = compiled[SENSOR]
    assert "    QUALITY_UNSPECIFIED = 0;" in sensor.artifacts[0].content
    enum = sensor_module.PlantSensorReading.DESCRIPTOR.enum_types_by_name["Quality"]
    assert [v.name for v in enum.values] == ["QUALITY_UNSPECIFIED", "QUALITY_GOOD", "QUALITY_SUSPECT", "QUALITY_BAD"]


def test_removed_field_becomes_reserved_and_numbers_stay(tmp_path):
    text = (OHLCV / "contract.yaml").read_text()
    v1 = export("protobuf", parse_contract(text))
    lock1 = json.loads(v1.artifacts[1].content)
    assert v1.artifacts[1].path == "ohlcv_1m.proto.lock.json"
    assert lock1["fields"]["trade_count"] == 8 and lock1["fields"]["revision"] == 13

    v2_text = (
        text.replace("version: 3.1.0", "version: 4.0.0")
        .replace("  trade_count: {type: int64, nullable: true}\n", "")
        .replace("  - trade_count is null or trade_count >= 0\n", "")
    )
    assert v2_text.count("trade_count") == 0
    lock_path = tmp_path / "ohlcv_1m.proto.lock.json"
    lock_path.write_text(v1.artifacts[1].content)
    v2 = export("protobuf", parse_contract(v2_text), lock=lock_path)  # the previous lock, as a file
    proto2 = v2.artifacts[0].content
    assert "  reserved 8;" in proto2 and '  reserved "trade_count";' in proto2
    lock2 = json.loads(v2.artifacts[1].content)
    assert lock2["reserved"] == {"numbers": [8], "names": ["trade_count"]}
    assert {k: v for k, v in lock1["fields"].items() if k != "trade_count"} == lock2["fields"]
    assert "  optional bool adjusted = 9;" in proto2 and "  optional int64 revision = 13;" in proto2
    (tmp_path / "v2").mkdir()
    protoc(tmp_path / "v2", write_artifacts(v2, tmp_path / "v2"))  # reserved statements compile

    # v3 adds a field: it gets a number never used before, not the reserved 8; the lock comes as a dict
    v3_text = v2_text.replace("version: 4.0.0", "version: 4.1.0").replace(
        "  adjusted:", "  vwap:     {type: decimal(18,8), unit: quote_currency, nullable: true}\n  adjusted:"
    )
    v3 = export("protobuf", parse_contract(v3_text), lock=lock2)
    lock3 = json.loads(v3.artifacts[1].content)
    assert lock3["fields"]["vwap"] == 14 and lock3["reserved"]["numbers"] == [8]
    assert "  reserved 8;" in v3.artifacts[0].content
    # trade_count comes back: a new number, its old number stays reserved, its name is free again
    v4_text = v3_text.replace("version: 4.1.0", "version: 4.2.0").replace(
        "  adjusted:", "  trade_count: {type: int64, nullable: true}\n  adjusted:"
    )
    lock4 = json.loads(export("protobuf", parse_contract(v4_text), lock=lock3).artifacts[1].content)
    assert lock4["fields"]["trade_count"] == 15 and lock4["reserved"] == {"numbers": [8], "names": []}


def test_rename_with_alias_keeps_number_and_enum_members_reserved(tmp_path):
    text = (SENSOR / "contract.yaml").read_text()
    v1 = json.loads(export("protobuf", parse_contract(text)).artifacts[1].content)
    v2_text = (
        text.replace("version: 2.0.0", "version: 3.0.0")
        .replace(
            "  quality:    {type: enum[good, suspect, bad]}",
            "  quality_flag: {type: enum[good, bad, missing], aliases: [quality]}",
        )
        .replace("quality = bad", "quality_flag = bad")
    )
    v2 = export("protobuf", parse_contract(v2_text), lock=v1)
    lock2 = json.loads(v2.artifacts[1].content)
    assert lock2["fields"]["quality_flag"] == v1["fields"]["quality"] == 5
    assert lock2["reserved"] == {"numbers": [], "names": ["quality"]}
    assert lock2["enums"]["quality_flag"]["values"] == {"good": 1, "bad": 3, "missing": 4}
    proto = v2.artifacts[0].content
    assert "    reserved 2;" in proto and '    reserved "QUALITY_FLAG_SUSPECT";' in proto
    (tmp_path / "out").mkdir()
    protoc(tmp_path / "out", write_artifacts(v2, tmp_path / "out"))


def test_lock_of_another_contract_is_refused():
    lock = json.loads(export("protobuf", load_contract(SENSOR / "contract.yaml")).artifacts[1].content)
    with pytest.raises(InputError, match="plant_sensor_reading"):
        export("protobuf", load_contract(OHLCV / "contract.yaml"), lock=lock)


def test_not_exported():
    sensor = export("protobuf", load_contract(SENSOR / "contract.yaml"))
    skipped = {n.check_id for n in sensor.not_exported}
    assert {"field.value.type", "field.quality.type", "provenance.calibration_id", "time.precision"} <= skipped
    assert sensor.exported == [
        "field.series_id.type",
        "field.event_ts.type",
        "field.unit.type",
        "field.calibration_id.type",
        "field.source_id.type",
        "field.ingest_run_id.type",
        "field.transform_version.type",
        "field.revision.type",
        "time.timezone",
    ]
    for dataset in (OHLCV, SENSOR):
        contract = load_contract(dataset / "contract.yaml")
        result = export("protobuf", contract)
        accounted = result.exported + [n.check_id for n in result.not_exported]
        assert sorted(accounted) == sorted(c.id for c in build_plan(contract).checks)
        for n in result.not_exported:  # each listed in the file's header with its clause
            assert f"//   {n.check_id} [{n.clause}]: {n.reason}" in result.artifacts[0].content
