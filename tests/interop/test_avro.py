"""The Avro export, proven with fastavro: the schema parses, the good fixtures round-trip exactly,
records that break an exported clause cannot be written, and declared aliases resolve renames."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from decimal import Decimal

import fastavro
import pytest

from tests.conftest import EXAMPLES
from tscontract import load_contract, parse_contract
from tscontract.interop.exports import export
from tscontract.interop.exports._records import python_record, read_csv_rows
from tscontract.plan.checks import build_plan

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"


def avro_export(dataset):
    contract = load_contract(dataset / "contract.yaml")
    result = export("avro", contract)
    (artifact,) = result.artifacts
    return contract, result, json.loads(artifact.content)


def write(schema, records):
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), records)
    buffer.seek(0)
    return list(fastavro.reader(buffer))


def field(schema, name):
    return next(f for f in schema["fields"] if f["name"] == name)


def test_ohlcv_schema_types():
    _, result, schema = avro_export(OHLCV)
    assert result.artifacts[0].path == "ohlcv_1m.avsc"
    fastavro.parse_schema(schema)
    assert field(schema, "open")["type"] == {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 8}
    assert field(schema, "volume")["type"]["precision"] == 24 and field(schema, "volume")["type"]["scale"] == 4
    assert field(schema, "bar_start")["type"] == {"type": "long", "logicalType": "timestamp-millis"}
    assert field(schema, "trade_count")["type"] == ["null", "long"] and field(schema, "trade_count")["default"] is None
    assert field(schema, "revision")["type"] == "long"  # implied provenance column, never null
    assert "unit: quote_currency" in field(schema, "open")["doc"]
    assert "value: false" in field(schema, "adjusted")["doc"]
    assert "this series is never adjusted; adjusted series are separate" in field(schema, "adjusted")["doc"]
    # every clause the schema cannot state is in the record doc, verbatim, with the reason
    assert "invariants[0] [low <= open <= high]:" in schema["doc"]
    assert "time: column: bar_start; precision: ms; timezone: UTC instant; session boundaries" in schema["doc"]


def test_sensor_schema_types():
    _, _, schema = avro_export(SENSOR)
    fastavro.parse_schema(schema)
    assert field(schema, "quality")["type"] == [
        "null",
        {"type": "enum", "name": "Quality", "symbols": ["good", "suspect", "bad"]},
    ]
    assert field(schema, "value")["type"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 4}
    assert "unit: per series from catalog; dimension: per series" in field(schema, "value")["doc"]
    assert "constraint: equals catalog unit for series_id" in field(schema, "unit")["doc"]
    assert field(schema, "calibration_id")["type"] == "string"  # nullable: false


@pytest.mark.parametrize("dataset", [OHLCV, SENSOR], ids=["ohlcv", "sensor"])
def test_good_fixture_round_trips_exactly(dataset):
    contract, _, schema = avro_export(dataset)
    records = [python_record(contract, row) for row in read_csv_rows(dataset / "data" / "good.csv")]
    back = write(schema, records)
    assert len(back) == len(records) > 60
    for original, read in zip(records, back, strict=True):
        assert read.keys() == original.keys()
        for name, value in original.items():
            assert read[name] == value, name
            if isinstance(value, Decimal):
                assert isinstance(read[name], Decimal)  # never through float
                assert -read[name].as_tuple().exponent == contract.fields[name].type.scale
            if isinstance(value, datetime):
                assert read[name].tzinfo is not None and read[name].utcoffset().total_seconds() == 0


def test_exact_decimals_survive():
    # 1234567890.12345678 as a double is 1234567890.1234567165374756; as Avro decimal it is exact
    contract, _, schema = avro_export(OHLCV)
    row = read_csv_rows(OHLCV / "data" / "good.csv")[0]
    record = python_record(contract, {**row, "open": "1234567890.12345678", "volume": "99999999999999999999.9999"})
    (back,) = write(schema, [record])
    assert back["open"] == Decimal("1234567890.12345678")
    assert str(back["volume"]) == "99999999999999999999.9999"
    assert back["bar_start"] == datetime(2026, 11, 30, 14, 30, tzinfo=UTC)


def test_records_breaking_exported_clauses_fail_to_write():
    sensor, _, sensor_schema = avro_export(SENSOR)
    good = python_record(sensor, read_csv_rows(SENSOR / "data" / "good.csv")[0])
    write(sensor_schema, [good])
    with pytest.raises(ValueError):  # bad.csv #3: quality=unknown, outside enum[good, suspect, bad]
        write(sensor_schema, [{**good, "quality": "unknown"}])
    missing = {k: v for k, v in good.items() if k != "calibration_id"}
    with pytest.raises(ValueError, match="calibration_id"):  # nullable: false, and missing
        write(sensor_schema, [missing])
    with pytest.raises(TypeError, match="source_id"):  # provenance_required: source_id
        write(sensor_schema, [{**good, "source_id": None}])

    ohlcv, _, ohlcv_schema = avro_export(OHLCV)
    rows = {r["bar_start"] + r["symbol"]: r for r in read_csv_rows(OHLCV / "data" / "bad.csv")}
    nine_places = python_record(ohlcv, rows["2026-11-30T14:37:00.000ZAAPL"])  # bad.csv #6, open 229.780000001
    assert nine_places["open"] == Decimal("229.780000001")
    with pytest.raises(ValueError, match=r"[Ss]cale"):
        write(ohlcv_schema, [nine_places])
    null_close = python_record(ohlcv, rows["2026-11-30T14:32:00.000ZMSFT"])  # bad.csv #8, close empty
    assert null_close["close"] is None
    with pytest.raises((ValueError, TypeError)):
        write(ohlcv_schema, [null_close])


def test_aliases_resolve_a_rename():
    text = (OHLCV / "contract.yaml").read_text()
    old = parse_contract(text)
    renamed = parse_contract(
        text.replace(
            "  volume:   {type: decimal(24,4),", "  volume_base_units: {aliases: [volume], type: decimal(24,4),"
        )
        .replace("volume >= 0", "volume_base_units >= 0")
        .replace("version: 3.1.0", "version: 3.2.0")
    )
    old_schema = json.loads(export("avro", old).artifacts[0].content)
    new_schema = json.loads(export("avro", renamed).artifacts[0].content)
    assert field(new_schema, "volume_base_units")["aliases"] == ["volume"]
    record = python_record(old, read_csv_rows(OHLCV / "data" / "good.csv")[0])
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(old_schema), [record])
    buffer.seek(0)
    (read,) = fastavro.reader(buffer, reader_schema=fastavro.parse_schema(new_schema))
    assert read["volume_base_units"] == Decimal("10932.0000") and "volume" not in read


def test_not_exported():
    _, ohlcv, _ = avro_export(OHLCV)
    assert [n.check_id for n in ohlcv.not_exported] == [
        "source.rows",
        "field.adjusted.value",
        "key.unique",
        "invariants[0]",
        "invariants[1]",
        "invariants[2]",
        "invariants[3]",
        "time.cadence",
        "time.session",
    ]
    assert {"field.open.type", "field.close.nullable", "provenance.source_id", "time.timezone"} <= set(ohlcv.exported)
    _, sensor, _ = avro_export(SENSOR)
    assert {n.check_id for n in sensor.not_exported} == {
        "source.rows",
        "field.unit.constraint",
        "key.unique",
        "invariants[0]",
        "invariants[1]",
        "invariants[2]",
        "catalog.series",
        "catalog.calibration",
        "time.cadence",
    }
    assert "field.quality.type" in sensor.exported
    # every check of the plan is accounted for exactly once
    for dataset, result in ((OHLCV, ohlcv), (SENSOR, sensor)):
        accounted = result.exported + [n.check_id for n in result.not_exported]
        assert sorted(accounted) == sorted(c.id for c in build_plan(load_contract(dataset / "contract.yaml")).checks)
