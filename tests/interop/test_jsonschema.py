"""The JSON Schema export, proven with jsonschema's Draft202012Validator (with format checking) against
tscontract's own engine: for every clause the schema claims, the rows it rejects are exactly the rows
the engine fails for that check — on the example fixtures and on edge-case files built here."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tests.conftest import EXAMPLES, ROOT
from tscontract import load_catalog, load_contract, validate
from tscontract.interop.exports import export
from tscontract.interop.exports._records import json_record, read_csv_rows
from tscontract.interop.exports.jsonschema import TAG
from tscontract.plan.checks import build_plan

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)
PARITY: dict[str, dict[str, object]] = {}


def schema_for(dataset):
    return schema_of(load_contract(dataset / "contract.yaml"))


def schema_of(contract):
    result = export("jsonschema", contract)
    (artifact,) = result.artifacts
    return contract, result, json.loads(artifact.content)


def validator(schema):
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def nullability_check(contract, name):
    return next(c.id for c in build_plan(contract).checks if c.kind == "not_null" and c.columns == (name,))


def checks_of(error, schema, contract):
    """The contract checks one validation error belongs to: the nearest ``$comment`` tag on its schema path."""
    if error.validator == "required":
        return {nullability_check(contract, n) for n in error.validator_value if n not in error.instance}
    if error.validator == "additionalProperties":
        return {"schema.strict"}
    node, tag = schema, None
    for step in list(error.absolute_schema_path)[:-1]:
        node = node[step]
        if isinstance(node, dict) and str(node.get("$comment", "")).startswith(TAG):
            tag = node["$comment"].removeprefix(TAG)
    assert tag is not None, f"untagged error {error.message} at {list(error.absolute_schema_path)}"
    if tag.endswith(".type") and error.instance is None:  # a null where the type has no null
        return {nullability_check(contract, tag.split(".")[1])}
    return {tag}


def schema_verdicts(contract_path, csv_path):
    """{check id: {row numbers the schema rejects for it}} (rows numbered from 1, as the engine does)."""
    contract, _, schema = schema_of(load_contract(contract_path))
    check = validator(schema)
    rejected: dict[str, set[int]] = {}
    for number, row in enumerate(read_csv_rows(csv_path), start=1):
        for error in check.iter_errors(json_record(contract, row)):
            for check_id in checks_of(error, schema, contract):
                rejected.setdefault(check_id, set()).add(number)
    return rejected


def engine_verdicts(contract_path, csv_path):
    catalog = contract_path.parent / "catalog.yaml"
    catalog = load_catalog(catalog) if catalog.exists() else None
    report = validate(contract_path, csv_path, catalog=catalog, now=NOW, examples=1000)
    plan = build_plan(load_contract(contract_path))
    failing = {}
    for check in report.checks:
        rows = {example["row"] for example in check.examples if "row" in example}
        if check.id in {c.id for c in plan.of_scope("row")}:
            assert len(rows) == check.failed_rows, check.id  # every failing row is listed
        failing[check.id] = rows
    return failing


def assert_agrees(dataset, csv_path, label):
    """The schema and the engine fail the same rows for every clause the schema claims; returns the schema's."""
    contract_path = dataset / "contract.yaml"
    _, result, _ = schema_of(load_contract(contract_path))
    schema_rows = schema_verdicts(contract_path, csv_path)
    engine_rows = engine_verdicts(contract_path, csv_path)
    assert set(schema_rows) <= set(result.exported), "the schema rejected rows for a clause it does not claim"
    for check_id in result.exported:
        assert schema_rows.get(check_id, set()) == engine_rows[check_id], (label, check_id)
        verdict = PARITY.setdefault(check_id, {"good": "passed", "bad": "passed", "agrees": True})
        if schema_rows.get(check_id):
            verdict["good" if label == "good" else "bad"] = "failed"
    return schema_rows


@pytest.mark.parametrize("dataset", [OHLCV, SENSOR], ids=["ohlcv", "sensor"])
def test_schema_is_draft_2020_12(dataset):
    contract, result, schema = schema_for(dataset)
    assert result.artifacts[0].path == f"{contract.contract}.schema.json"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:tscontract:{contract.contract}:{contract.version}"
    assert schema["additionalProperties"] is False
    assert schema["required"] == [n for n in contract.fields if not contract.is_nullable(n)]
    validator(schema)
    for n in result.not_exported:  # what the schema does not check is stated in it, with the clause
        assert f"  {n.check_id} [{n.clause}]: {n.reason}" in schema["$comment"]


def test_schema_states_the_contract():
    _, _, ohlcv = schema_for(OHLCV)
    props = ohlcv["properties"]
    assert props["open"]["type"] == "string" and props["open"]["pattern"] == r"^[+-]?0*[0-9]{1,10}(\.[0-9]{1,8}0*)?$"
    assert props["trade_count"]["type"] == ["integer", "null"]
    assert props["adjusted"]["allOf"][0]["then"] == {"const": False}
    assert props["adjusted"]["allOf"][0]["description"] == "value: false"
    timezone = props["bar_start"]["allOf"][0]
    assert timezone["then"]["format"] == "date-time" and timezone["description"].startswith("UTC instant")
    assert "unit: quote_currency" in props["close"]["description"]
    _, _, sensor = schema_for(SENSOR)
    assert sensor["properties"]["quality"]["enum"] == ["good", "suspect", "bad", None]
    assert sensor["allOf"][0]["description"] == "value is null only when quality = bad"


@pytest.mark.parametrize("dataset", [OHLCV, SENSOR], ids=["ohlcv", "sensor"])
def test_every_good_record_is_accepted(dataset):
    contract, _, schema = schema_for(dataset)
    check = validator(schema)
    rows = read_csv_rows(dataset / "data" / "good.csv")
    for row in rows:
        record = json_record(contract, row)
        assert not list(check.iter_errors(record)), (row, [e.message for e in check.iter_errors(record)])
    assert_agrees(dataset, dataset / "data" / "good.csv", "good")


def test_ohlcv_bad_rows_rejected_as_the_engine_rejects_them():
    rejected = assert_agrees(OHLCV, OHLCV / "data" / "bad.csv", "bad")
    assert rejected == {
        "field.open.type": {8},
        "field.close.nullable": {19},
        "field.adjusted.value": {6},
        "provenance.source_id": {20},
        "time.timezone": {16},
        "time.precision": {32},
        "invariants[2]": {4},
        "invariants[3]": {5},
    }
    assert_agrees(OHLCV, OHLCV / "data" / "bad_lots.csv", "bad")  # shares -> lots breaks no clause


def test_sensor_bad_rows_rejected_as_the_engine_rejects_them():
    rejected = assert_agrees(SENSOR, SENSOR / "data" / "bad.csv", "bad")
    assert rejected == {
        "field.value.type": {36},
        "field.quality.type": {22},
        "provenance.calibration_id": {4},
        "time.timezone": {28},
        "invariants[0]": {20},
    }
    assert_agrees(SENSOR, SENSOR / "data" / "bad_kpa.csv", "bad")  # the kPa incident needs the catalog


def write_variants(path, base, variants):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(base))
        writer.writeheader()
        for change in variants:
            writer.writerow({k: ("" if v is None else v) for k, v in {**base, **change}.items()})


def test_edge_values_agree_with_the_engine(tmp_path):
    base = read_csv_rows(OHLCV / "data" / "good.csv")[0]
    variants = [
        {"open": "0000000230.12345678"},  # leading zeros are not digits of precision
        {"open": "12345678901.00"},  # 11 integer digits in decimal(18,8)
        {"open": "230.123456780000"},  # trailing zeros beyond the scale are not precision
        {"open": "230.1234567891"},
        {"open": "+230.5"},
        {"open": "2.3e2"},
        {"open": "abc"},
        {"volume": "-0.0000"},  # zero with a sign is still >= 0
        {"volume": "-0.0001"},
        {"volume": "+12.5"},
        {"volume": "0"},
        {"volume": "-12x"},  # not a decimal: the type fails, the invariant does not judge it
        {"trade_count": "-1"},
        {"trade_count": "0"},
        {"trade_count": "1.5"},
        {"trade_count": "99999999999999999999"},  # beyond int64
        {"adjusted": "false"},
        {"adjusted": "TRUE"},
        {"adjusted": None},  # nullable; a null does not break value: false
        {"adjusted": "yes"},
        {"bar_start": "2026-11-30T14:30:00.000+00:00"},
        {"bar_start": "2026-11-30T14:30:00.000-00:00"},
        {"bar_start": "2026-11-30T14:30:00.000+01:00"},
        {"bar_start": "2026-11-30T14:30:00Z"},
        {"bar_start": "2026-11-30T14:30:00.000000Z"},
        {"bar_start": "2026-11-30T14:30:00.0001Z"},
        {"bar_start": "2026-11-30T14:30:00.1234+05:00"},
        {"bar_start": "2026-11-30T14:30:00"},
        {"bar_start": "not a time"},
        {"bar_start": None},
        {"symbol": None},
        {"revision": None},
        {"ingest_run_id": None},
    ]
    path = tmp_path / "ohlcv_edges.csv"
    write_variants(path, base, variants)
    rejected = assert_agrees(OHLCV, path, "bad")
    assert {"field.open.type", "invariants[2]", "invariants[3]", "field.trade_count.type"} <= set(rejected)
    assert {"field.adjusted.value", "time.timezone", "time.precision", "field.bar_start.nullable"} <= set(rejected)

    base = read_csv_rows(SENSOR / "data" / "good.csv")[0]
    variants = [
        {"value": None, "quality": "bad"},
        {"value": None, "quality": "suspect"},
        {"value": None, "quality": None},  # an unknown quality does not excuse a null value
        {"value": "12x", "quality": "good"},  # not a decimal: read as null, so the invariant fails too
        {"value": "12x", "quality": "bad"},
        {"value": "8.5", "quality": None},
        {"quality": "BAD"},
        {"calibration_id": None},
        {"series_id": None},
    ]
    path = tmp_path / "sensor_edges.csv"
    write_variants(path, base, variants)
    rejected = assert_agrees(SENSOR, path, "bad")
    assert rejected["invariants[0]"] == {2, 3, 4}


CLAUSE_FORMS = """\
contract: clause_forms
version: 1.0.0
key: [id, ts]
time: {column: ts, precision: ms, timezone: UTC instant}
fields:
  id: {type: string, nullable: false}
  ts: {type: timestamp_ms_utc, nullable: false}
  level: {type: decimal(6,2), nullable: true, constraint: "> 0"}
  reading: {type: float64, nullable: true, constraint: between -5 and 5}
  count: {type: int16, nullable: true}
  state: {type: enum[ok, warn, fail], nullable: true, constraint: "in [ok, warn]"}
  flag: {type: bool, nullable: true}
  label: {type: string, nullable: true, value: A}
invariants:
  - count is null or count >= 0
  - not (state = fail) or level is null
  - level is null only when state = fail
  - count < 100 and count != 13
  - flag = true or state in (ok, warn)
  - reading > 0 or level <= 0
  - label is not null
  - level >= reading
  - abs(reading) < 4
provenance_required: [source_id]
"""


def test_every_clause_form_agrees_with_the_engine(tmp_path):
    """Row clauses of every form the translation handles, on every combination of edge values."""
    (tmp_path / "contract.yaml").write_text(CLAUSE_FORMS)
    _, result, _ = schema_of(load_contract(tmp_path / "contract.yaml"))
    assert {"invariants[7]", "invariants[8]"} == {n.check_id for n in result.not_exported if "invariants" in n.check_id}
    assert "compares two fields" in result.not_exported[-2].reason
    levels = [None, "0.00", "-0.00", "1.50", "-2.25", "1234.5", "12345.00", "1.234", "x"]
    readings = [None, "0", "4.5", "-7", "abc"]
    counts = [None, "0", "-1", "13", "100", "99", "40000", "1.5"]
    states = [None, "ok", "warn", "fail", "FAIL"]
    flags = [None, "true", "false", "maybe"]
    labels = [None, "A", "B"]
    rows = []
    for i in range(len(levels) * len(readings) * 4):
        rows.append(
            {
                "id": f"r{i}",
                "ts": f"2026-11-30T12:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                "level": levels[i % len(levels)],
                "reading": readings[i // len(levels) % len(readings)],
                "count": counts[i % len(counts)],
                "state": states[i // 3 % len(states)],
                "flag": flags[i // 7 % len(flags)],
                "label": labels[i // 11 % len(labels)],
                "source_id": "s" if i % 17 else None,
            }
        )
    path = tmp_path / "rows.csv"
    write_variants(path, rows[0], [{}, *rows[1:]])
    rejected = assert_agrees(tmp_path, path, "bad")
    for check_id in result.exported:  # every claimed clause is exercised by failing and passing rows
        if check_id.startswith(("invariants", "field.level", "field.reading", "field.count", "field.state")):
            assert 0 < len(rejected.get(check_id, ())) < len(rows), check_id


def test_unknown_field_is_rejected_as_schema_strict():
    contract, _, schema = schema_for(SENSOR)
    record = json_record(contract, read_csv_rows(SENSOR / "data" / "good.csv")[0])
    errors = list(validator(schema).iter_errors({**record, "value_kpa": "850.0"}))
    assert [checks_of(e, schema, contract) for e in errors] == [{"schema.strict"}]
    missing = {k: v for k, v in record.items() if k != "calibration_id"}
    errors = list(validator(schema).iter_errors(missing))
    assert [checks_of(e, schema, contract) for e in errors] == [{"provenance.calibration_id"}]


def test_not_exported():
    _, ohlcv, _ = schema_for(OHLCV)
    assert [n.check_id for n in ohlcv.not_exported] == [
        "schema.columns",
        "source.rows",
        "key.unique",
        "invariants[0]",
        "invariants[1]",
        "time.cadence",
        "time.session",
    ]
    assert "compares two fields" in ohlcv.not_exported[3].reason
    _, sensor, _ = schema_for(SENSOR)
    assert [n.check_id for n in sensor.not_exported] == [
        "schema.columns",
        "source.rows",
        "field.unit.constraint",
        "key.unique",
        "invariants[1]",
        "invariants[2]",
        "catalog.series",
        "catalog.calibration",
        "time.cadence",
    ]
    for dataset, result in ((OHLCV, ohlcv), (SENSOR, sensor)):
        accounted = result.exported + [n.check_id for n in result.not_exported]
        assert sorted(accounted) == sorted(c.id for c in build_plan(load_contract(dataset / "contract.yaml")).checks)


def test_zz_write_parity():
    """Record the per-clause verdicts for tools/parity_matrix.py (out/parity/jsonschema.json)."""
    assert PARITY, "the agreement tests did not run"
    out = ROOT / "out" / "parity"
    out.mkdir(parents=True, exist_ok=True)
    (out / "jsonschema.json").write_text(json.dumps(PARITY, indent=2, sort_keys=True) + "\n")


def test_series_pattern_agrees_with_the_engine(tmp_path):
    """``series.pattern``: the whole id matches, in the engine (regexp_full_match) and the schema."""
    text = (OHLCV / "contract.yaml").read_text()
    series = "series: {column: symbol, scheme: ticker, pattern: '[A-Z]{1,5}([.][A-Z])?'}\nkey:"
    (tmp_path / "contract.yaml").write_text(text.replace("key:", series, 1))
    (tmp_path / "catalog.yaml").write_text((OHLCV / "catalog.yaml").read_text())
    lines = (OHLCV / "data" / "good.csv").read_text().splitlines()[:9]
    symbols = ["AAPL", "aapl", "AAPL ", "BRK.B", "BRK.", "TOOLONG", "MSFT", "X1"]
    rows = [lines[0]] + [symbol + line[line.index(",") :] for symbol, line in zip(symbols, lines[1:], strict=True)]
    path = tmp_path / "rows.csv"
    path.write_text("\n".join(rows) + "\n")
    rejected = assert_agrees(tmp_path, path, "bad")
    assert rejected["series.pattern"] == {2, 3, 5, 6, 8}
