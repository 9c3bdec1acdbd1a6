"""Schemas written elsewhere as draft contracts: a Debezium Avro envelope, a proto3 file with
google.protobuf.Timestamp, a JSON Schema from an edge gateway, a dbt schema.yml with package tests and
a pg_dump DDL. Each maps what it can, lists every element it cannot with path and reason, and the
draft validates real rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tscontract import parse_contract
from tscontract.errors import InputError
from tscontract.interop.imports import import_file
from tscontract.interop.odcs.read import Imported

FIXTURES = Path(__file__).parent / "import_fixtures"
PROTO = str(FIXTURES / "market_quote.proto")


def _import(fmt: str, name: str, **options: object) -> Imported:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    (imported,) = import_file(
        fmt,
        text,
        name,
        options.get("object_name"),  # type: ignore[arg-type]
        options.get("key"),  # type: ignore[arg-type]
        options.get("time_column"),  # type: ignore[arg-type]
    )
    return imported


def _lost(imported: Imported) -> dict[str, str]:
    return {loss.path: loss.reason for loss in imported.losses}


def test_debezium_envelope_gives_its_row_record():
    imported = _import("avro", "debezium_trades_envelope.avsc", key=["symbol", "executed_at", "trade_id"])
    contract = parse_contract(imported.text)
    assert contract.contract == "pgprod.market.trades"
    types = {n: f.type.text for n, f in contract.fields.items()}
    assert types == {
        "trade_id": "int64",
        "symbol": "string",
        "executed_at": "timestamp_us_utc",  # io.debezium.time.ZonedTimestamp: text with an offset
        "price": "decimal(18,6)",  # Kafka Connect Decimal on bytes
        "qty": "int64",
        "side": "enum[B, S]",  # io.debezium.data.Enum with its allowed values
        "booked_at": "timestamp_us_utc",
        "venue_ref": "string",
    }
    assert contract.fields["qty"].nullable is True and contract.fields["price"].nullable is False
    assert contract.fields["trade_id"].default == 0
    lost = _lost(imported)
    assert {"Envelope.before", "Envelope.source", "Envelope.op", "Envelope.ts_ms", "Envelope.transaction"} <= set(lost)
    assert "MicroTimestamp has no time zone" in lost["Value.booked_at.type"]
    assert "#   Envelope.op: Debezium envelope field" in imported.text
    with pytest.raises(
        InputError, match=r"no time column: give --time-column C \(candidates: executed_at, booked_at\)"
    ):
        _import("avro", "debezium_trades_envelope.avsc")
    with pytest.raises(InputError, match=r"no primary key: give --key COLUMNS .*candidates: executed_at, trade_id"):
        _import("avro", "debezium_trades_envelope.avsc", time_column="executed_at")
    with pytest.raises(InputError, match=r"--time-column 'price' is decimal\(18,6\), not an instant"):
        _import("avro", "debezium_trades_envelope.avsc", key=["symbol"], time_column="price")
    with pytest.raises(InputError, match=r"no time column: .* has no timestamp field"):
        _import("avro", "debezium_trades_envelope.avsc", object_name="Source", key=["connector"])


def test_debezium_draft_validates_rows(tmp_path):
    imported = _import("avro", "debezium_trades_envelope.avsc", key=["symbol", "executed_at", "trade_id"])
    contract = tmp_path / "trades.yaml"
    contract.write_text(imported.text)
    header = "trade_id,symbol,executed_at,price,qty,side,booked_at,venue_ref\n"
    good = tmp_path / "good.csv"
    good.write_text(
        header + "9001,AAPL,2026-03-09T13:30:00.000123Z,229.780000,100,B,2026-03-09T13:30:00.000500Z,\n"
        "9002,AAPL,2026-03-09T13:30:00.250000Z,229.790000,,S,,XNAS\n"
    )
    assert run_cli("validate", contract, good).returncode == 0
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "9003,AAPL,2026-03-09T13:30:01Z,229.7812345,5,X,,\n")
    failed = run_cli("validate", contract, bad, "--format", "json")
    assert failed.returncode == 1
    checks = {c["id"]: c["status"] for c in json.loads(failed.stdout)["checks"]}
    assert checks["field.side.type"] == "failed" and checks["field.price.type"] == "failed"


def test_proto3_message_with_timestamp_and_presence():
    protoc = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{FIXTURES}", *_proto_includes(), "-o/dev/null", PROTO],
        capture_output=True,
        text=True,
        check=False,
    )
    assert protoc.returncode == 0, protoc.stderr  # the fixture is a valid .proto
    with pytest.raises(InputError, match=r"the file has 2 messages \(Quote, QuoteBatch\): give --object NAME"):
        _import("protobuf", "market_quote.proto", key=["symbol", "event_time"])
    imported = _import("protobuf", "market_quote.proto", object_name="Quote", key=["symbol", "event_time"])
    contract = parse_contract(imported.text)
    fields = contract.fields
    assert contract.time.column == "event_time" and fields["event_time"].type.text == "timestamp_ns_utc"
    assert fields["side"].type.text == "enum[SIDE_UNSPECIFIED, SIDE_BID, SIDE_ASK, SIDE_CROSS]"
    assert fields["size"].type.text == "decimal(20,0)" and fields["size"].constraint == ">= 0"  # uint64
    # proto3 presence: implicit scalars read as zero when absent, optional/wrappers/oneof can be absent
    assert fields["price"].nullable is False and fields["sequence"].nullable is True
    assert fields["implied_vol"].type.text == "float64" and fields["implied_vol"].nullable is True
    assert fields["mic"].nullable is True and fields["venue_id"].type.text == "int32"
    assert fields["symbol"].description == 'Venue symbol, e.g. "AAPL" or "BRK.B".'
    assert contract.description.startswith("A top-of-book quote as published by the venue gateway.")
    lost = _lost(imported)
    assert "repeated field" in lost["Quote.condition_codes"] and "a map" in lost["Quote.attributes"]
    assert "at most one of these is set" in lost["Quote.oneof venue_ref"]
    assert {"file.option", "file.service", "Quote.reserved"} <= set(lost)
    assert {loss.text for loss in imported.losses if loss.path == "Quote.side.enum Side"} == {
        "SIDE_CROSS = 3 [ deprecated = true ]",
        "reserved 4",
    }
    assert imported.mapping is not None and "drop:\n  - condition_codes\n  - attributes\n" in imported.mapping


def _proto_includes() -> list[str]:
    import grpc_tools

    return [f"-I{Path(grpc_tools.__file__).parent / '_proto'}"]


def test_json_schema_from_a_gateway():
    imported = _import("jsonschema", "sensor_reading.schema.json", key=["device_id", "ts"])
    contract = parse_contract(imported.text)
    fields = contract.fields
    assert contract.contract == "SensorReading" and contract.time.column == "ts"
    assert fields["ts"].type.text == "timestamp_us_utc" and "microseconds assumed" in (fields["ts"].note or "")
    assert fields["device_id"].constraint == "matches '^PLT[0-9]{2}-[A-Z]{2}-[0-9]{4}$'"
    assert fields["reading"].nullable is True and fields["reading"].constraint == "between -50 and 1200"
    assert fields["status"].type.text == "enum[OK, SUSPECT, FAULT]" and fields["status"].nullable is False
    assert fields["firmware"].nullable is True  # not required
    assert fields["seq"].constraint == ">= 0" and fields["seq"].nullable is True  # anyOf with null
    assert fields["site"].constraint == "in ('HAM-01', 'ROT-02')"  # $ref followed; not names: in (...)
    # a JSON Schema pattern is searched for: the open end is written out for matches (whole value)
    assert fields["firmware"].constraint == "matches '^[0-9]+\\.[0-9]+(?s:.*)'"
    assert [c.text for c in contract.invariants] == ["length(firmware) <= 16"]
    assert fields["battery_pct"].constraint == "between 0 and 100"
    lost = _lost(imported)
    assert set(lost) == {
        "schema.additionalProperties",
        "schema.properties.firmware.examples",
        "schema.properties.tags",
    }


def test_dbt_schema_with_package_tests():
    imported = _import("dbt", "fx_rates_schema.yml")
    contract = parse_contract(imported.text)
    fields = contract.fields
    assert contract.key == ("pair", "rate_hour") and contract.time.column == "rate_hour"
    assert fields["mid_rate"].type.text == "decimal(18,6)" and fields["mid_rate"].constraint == "> 0"
    assert fields["rate_hour"].type.text == "timestamp_us_utc" and fields["pair"].nullable is False
    assert contract.freshness is not None and contract.freshness.max_age.text == "3h"  # dbt_utils.recency
    invariants = {c.text: c.severity for c in contract.invariants}
    assert invariants == {
        "length(pair) <= 7": "error",
        "pair in ('EUR/USD', 'GBP/USD', 'USD/JPY', 'USD/CHF')": "error",
        "pair matches '^[A-Z]{3}/[A-Z]{3}$'": "error",
        "spread_bps between 0 and 500": "warning",  # severity: warn
        "spread_bps < 100 OR pair = 'USD/JPY'": "error",
    }
    lost = _lost(imported)
    assert "relationships" in lost["models[fct_fx_rates_hourly].columns[source_system].data_tests[0]"]
    assert "no time zone" in lost["models[fct_fx_rates_hourly].columns[loaded_at].data_type"]
    assert "models[fct_fx_rates_hourly].config.materialized" in lost
    assert not [p for p in lost if "unique_key" in p]  # restates the key


def test_postgres_ddl_and_its_rows(tmp_path):
    imported = _import("ddl", "pg_sensor_readings.sql")
    contract = parse_contract(imported.text)
    fields = contract.fields
    assert contract.key == ("series_id", "reading_ts", "revision")
    assert fields["reading_ts"].type.text == "timestamp_ms_utc"  # timestamptz(3)
    assert fields["value"].type.text == "decimal(18,6)" and fields["value"].description.startswith("Calibrated")
    assert fields["value"].constraint == "BETWEEN -1000 AND 100000"
    assert fields["quality"].constraint == "IN ('good', 'suspect', 'bad')"
    assert fields["revision"].default == 0 and fields["revision"].type.text == "int32"
    assert "quality <> 'bad' OR value IS NULL" in [c.text for c in contract.invariants]
    assert contract.description == "Calibrated readings, one row per series, instant and revision."
    lost = _lost(imported)
    assert "jsonb" in imported.text and "the mapping drops the column" in lost["telemetry.sensor_readings.payload"]
    assert "foreign key" in lost["telemetry.sensor_readings.constraint series_fk"]
    out = tmp_path / "readings.yaml"
    done = run_cli("import", "ddl", FIXTURES / "pg_sensor_readings.sql", "-o", out)
    assert done.returncode == 1 and "lost: sensor_readings: telemetry.sensor_readings.payload" in done.stdout
    mapping = tmp_path / "readings.mapping.yaml"
    assert "unit_code:\n    from: Unit Code\n" in mapping.read_text()
    header = "series_id,reading_ts,revision,value,quality,Unit Code,ingested_at,payload\n"
    rows = (
        'PLT01-TT-0042,2026-03-08T06:59:59.500Z,0,412.250000,good,degC,{at},"{{""fw"":""4.2""}}"\n'
        "PLT01-TT-0042,2026-03-08T07:00:00.500Z,0,,bad,degC,{at},\n"
        "PLT01-TT-0042,2026-03-08T07:00:00.500Z,1,411.900000,good,degC,{at},\n"
    )
    good = tmp_path / "good.csv"
    good.write_text(header + rows.format(at="2026-03-08T07:00:05Z"))
    assert run_cli("validate", out, good, "--mapping", mapping).returncode == 0
    naive = tmp_path / "naive.csv"  # what the listed loss warned of: a timestamp without a zone
    naive.write_text(header + rows.format(at="2026-03-08 07:00:05"))
    failed = run_cli("validate", out, naive, "--mapping", mapping, "--format", "json")
    assert failed.returncode == 1
    assert {c["id"] for c in json.loads(failed.stdout)["checks"] if c["status"] == "failed"} == {"time.timezone"}


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        ("avro", "{not json", "not an Avro schema: invalid JSON at line 1"),
        ("avro", '{"type": "enum", "name": "x", "symbols": ["a"]}', "no record type"),
        ("protobuf", 'syntax = "proto3";\nmessage A { string x = 1 ', "not a .proto file: it ends inside a definition"),
        ("protobuf", 'syntax = "proto3";\nenum E { A = 0; }\n', "defines no message"),
        ("jsonschema", '{"type": "object"}', "not a record schema: schema has no properties"),
        ("dbt", "version: 2\nmodels: []\n", "no models or source tables"),
        ("dbt", "models: [\n", "not a dbt properties file"),
        ("ddl", "SELECT 1;", "no CREATE TABLE statement"),
        ("ddl", "CREATE TABLE t (a int", "not SQL DDL sqlglot can read"),
    ],
)
def test_bad_input_is_refused_in_one_line(fmt, text, message):
    with pytest.raises(InputError, match=message) as refused:
        import_file(fmt, text, "input", None, None, None)
    assert "\n" not in str(refused.value)


def test_cli_refusals_exit_2(tmp_path):
    bad = tmp_path / "bad.avsc"
    bad.write_text("{not json")
    done = run_cli("import", "avro", bad)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "invalid JSON" in done.stderr
    unknown = run_cli("import", "xsd", bad)
    assert unknown.returncode == 2 and "available: odcs, avro, protobuf, jsonschema, dbt, ddl" in unknown.stderr
    allowed = run_cli(
        "import", "jsonschema", FIXTURES / "sensor_reading.schema.json", "--key", "device_id,ts", "--allow-loss"
    )
    assert allowed.returncode == 0 and "lost: SensorReading: schema.properties.tags" in allowed.stderr
    listed = run_cli(
        "import",
        "protobuf",
        FIXTURES / "market_quote.proto",
        "--object",
        "Quote",
        "--key",
        "symbol,event_time",
        "--format",
        "json",
    )
    report = json.loads(listed.stdout)
    assert listed.returncode == 1 and report["lost"] == len(report["contracts"][0]["lost"]) > 5
    assert any(entry["path"] == "Quote.attributes" for entry in report["contracts"][0]["lost"])


def test_slips_are_listed_and_several_tables_need_a_choice(tmp_path):
    slips = "models:\n  - name: m\n    columns: [a, {name: t, data_type: timestamptz, tests: [not_null, [1]]}]\n"
    slips += "    data_tests: 7\n"
    (imported,) = import_file("dbt", slips, "slips.yml", None, ["t"], None)
    lost = _lost(imported)
    assert lost["models[m].columns"] == "a column without a name"
    assert "no tscontract clause" in lost["models[m].data_tests[0]"]
    assert "no tscontract clause" in lost["models[m].columns[t].data_tests[1]"]
    ddl = tmp_path / "two.sql"
    ddl.write_text(
        "CREATE TABLE a (t timestamptz PRIMARY KEY, x int CHECK (x > (SELECT 1)));\n"
        "CREATE TABLE b (t timestamptz PRIMARY KEY, y text UNIQUE);\n"
    )
    both = run_cli("import", "ddl", ddl)
    assert both.returncode == 2 and "2 schema objects (a, b): give --object NAME or -o DIR" in both.stderr
    (a,) = import_file("ddl", ddl.read_text(), "two.sql", "a", None, None)
    assert _lost(a) == {"a.x": "a CHECK the clause language cannot state"}
    out = tmp_path / "contracts"
    out.mkdir()
    written = run_cli("import", "ddl", ddl, "-o", out, "--allow-loss")
    assert written.returncode == 0 and sorted(p.name for p in out.iterdir()) == ["a.yaml", "b.yaml"]
    assert parse_contract((out / "b.yaml").read_text()).fields["y"].unique is True


def test_mysql_and_snowflake_ddl_are_read_in_their_dialects():
    mysql = _import("ddl", "mysql_fx_ticks.sql")
    assert "(mysql)" in mysql.text.splitlines()[0]  # backticks, ENGINE=: only MySQL reads it all
    contract = parse_contract(mysql.text)
    assert contract.key == ("pair", "ts") and contract.fields["ts"].type.text == "timestamp_us_utc"
    assert contract.fields["id"].type.text == "decimal(20,0)" and contract.fields["id"].constraint == ">= 0"
    assert contract.fields["pair"].description == "ISO pair" and contract.description == "Raw FX ticks"
    assert [c.text for c in contract.invariants] == ["ask >= bid"]
    lost = [(loss.path, loss.text) for loss in mysql.losses]
    assert ("fx_ticks.properties", "ENGINE=InnoDB") in lost and (
        "fx_ticks.id.AutoIncrementColumnConstraint",
        "AUTO_INCREMENT",
    ) in lost
    assert any(text.startswith("PARTITION BY RANGE") for _, text in lost)
    snowflake = parse_contract(_import("ddl", "snowflake_meter_readings.sql").text)
    assert snowflake.key == ("METER_ID", "READ_AT") and snowflake.fields["READ_AT"].type.text == "timestamp_ms_utc"
    assert snowflake.fields["KWH"].type.text == "decimal(12,3)" and snowflake.description == "AMI interval reads"


def test_dbt_source_freshness_and_source_settings():
    imported = _import("dbt", "dbt_sources.yml", time_column="scanned_at")
    contract = parse_contract(imported.text)
    assert contract.key == ("tag", "scanned_at") and contract.fields["value"].type.text == "float64"
    # the source's freshness (error_after on loaded_at_field) is the table's
    assert contract.freshness is not None and contract.freshness.max_age.text == "6h"
    assert contract.freshness.column == "_fivetran_synced"
    lost = _lost(imported)
    table = "sources[scada].tables[tag_values]"
    assert {f"{table}.database", f"{table}.schema", f"{table}.loader", f"{table}.identifier"} <= set(lost)
    assert "warning age" in lost[f"{table}.freshness.warn_after"]
    assert f"{table}.columns[value].tags" in lost
