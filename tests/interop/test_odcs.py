"""The ODCS export, proven three ways: the document has the shape of ODCS v3.1.0 (a structural schema
with the standard's own field names), its sql quality checks run in DuckDB and find the fixture rows the
engine finds, and import_odcs gives back the contract, section for section. datacontract-cli's lint and
test of the same documents: test_odcs_datacontract.py."""

from __future__ import annotations

import io
import json

import duckdb
import pytest
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

from tests.conftest import EXAMPLES
from tscontract import load_catalog, load_contract, parse_contract
from tscontract.contract.serialize import contract_to_json
from tscontract.interop.exports import export
from tscontract.interop.odcs.export import import_odcs
from tscontract.plan.checks import build_plan
from tscontract.sql.columns import sql_type

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"

# The part of the ODCS v3.1.0 JSON schema (bitol-io/open-data-contract-standard,
# schema/odcs-json-schema-v3.1.0.json) that this export uses, with the standard's field names:
# unknown keys are refused where the standard refuses them (top level, schema objects, properties).
_CUSTOM = {
    "type": "array",
    "items": {"type": "object", "properties": {"property": {"type": "string"}, "value": {}}, "required": ["property"]},
}
_QUALITY = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "type": {"enum": ["text", "library", "sql", "custom"]},
            "metric": {"enum": ["nullValues", "missingValues", "invalidValues", "duplicateValues", "rowCount"]},
            "arguments": {"type": "object"},
            "unit": {"type": "string"},
            "dimension": {
                "enum": [
                    "accuracy",
                    "completeness",
                    "conformity",
                    "consistency",
                    "coverage",
                    "timeliness",
                    "uniqueness",
                ]
            },
            "severity": {"type": "string"},
            "query": {"type": "string"},
            "mustBe": {},
            "mustBeLessOrEqualTo": {"type": "number"},
            "mustBeGreaterOrEqualTo": {"type": "number"},
            "mustBeLessThan": {"type": "number"},
            "mustBeGreaterThan": {"type": "number"},
            "mustBeBetween": {"type": "array", "minItems": 2, "maxItems": 2},
            "engine": {"type": "string"},
            "implementation": {"type": ["string", "object"]},
        },
        "allOf": [
            {"if": {"properties": {"type": {"const": "sql"}}}, "then": {"required": ["query"]}},
            {"if": {"properties": {"type": {"const": "custom"}}}, "then": {"required": ["engine", "implementation"]}},
        ],
    },
}


def _words(text: str) -> list[str]:
    return text.split()


_PROPERTY_KEYS = _words(
    "name physicalName physicalType description businessName authoritativeDefinitions tags customProperties "
    "primaryKey primaryKeyPosition logicalType logicalTypeOptions required unique partitioned partitionKeyPosition "
    "classification encryptedName transformSourceObjects transformLogic transformDescription examples "
    "criticalDataElement quality"
)
ODCS_V3 = {
    "type": "object",
    "required": ["version", "apiVersion", "kind", "id", "status"],
    "additionalProperties": False,
    "properties": {
        "version": {"type": "string"},
        "kind": {"const": "DataContract"},
        "apiVersion": {"const": "v3.1.0"},
        "id": {"type": "string"},
        "name": {"type": "string"},
        "tenant": {"type": "string"},
        "tags": {"type": "array"},
        "status": {"type": "string"},
        "servers": {"type": "array"},
        "dataProduct": {"type": "string"},
        "description": {
            "type": "object",
            "properties": {
                "usage": {"type": "string"},
                "purpose": {"type": "string"},
                "limitations": {"type": "string"},
            },
        },
        "domain": {"type": "string"},
        "schema": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    **{
                        k: {}
                        for k in _words("name physicalType description businessName authoritativeDefinitions tags")
                    },
                    "logicalType": {"const": "object"},
                    "physicalName": {"type": "string"},
                    "dataGranularityDescription": {"type": "string"},
                    "customProperties": _CUSTOM,
                    "quality": _QUALITY,
                    "properties": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "propertyNames": {"enum": _PROPERTY_KEYS},
                            "properties": {
                                "logicalType": {
                                    "enum": [
                                        "string",
                                        "date",
                                        "timestamp",
                                        "time",
                                        "number",
                                        "integer",
                                        "object",
                                        "array",
                                        "boolean",
                                    ]
                                },
                                "logicalTypeOptions": {"type": "object"},
                                "physicalType": {"type": "string"},
                                "required": {"type": "boolean"},
                                "primaryKey": {"type": "boolean"},
                                "primaryKeyPosition": {"type": "integer"},
                                "customProperties": _CUSTOM,
                                "quality": _QUALITY,
                            },
                        },
                    },
                },
            },
        },
        "support": {"type": "array"},
        "price": {"type": "object"},
        "team": {  # v3.1: an object with members (the v3.0 list is deprecated)
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "members": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"username": {}, "role": {}},
                    },
                },
            },
        },
        "roles": {"type": "array"},
        "slaDefaultElement": {"type": "string"},
        "slaProperties": {"type": "array", "items": {"type": "object", "required": ["property", "value"]}},
        "authoritativeDefinitions": {"type": "array"},
        "customProperties": _CUSTOM,
        "contractCreatedTs": {"type": "string"},
    },
}

RICH = """\
contract: grid_frequency
version: 1.4.0
owner: grid-ops@example
source: PMU network, substation feeds
description: Grid frequency per PMU
note: engineering units after calibration
series: {column: pmu_id, scheme: site.pmu, pattern: "^[A-Z]{3}\\\\.[0-9]{2}$"}
key: [pmu_id, ts, revision]
time:
  column: ts
  precision: us
  timezone: UTC instant
  cadence: 1s; tolerance +/-5ms
  ingest_column: ingested_at
  note: PMU clocks are GPS disciplined
fields:
  pmu_id: {type: string, nullable: false, description: PMU identifier}
  ts: {type: timestamp_us_utc, nullable: false}
  ingested_at: {type: timestamp_ms_utc}
  frequency_hz: {type: decimal(8,5), unit: Hz, dimension: frequency, aliases: [freq, f_hz],
                 constraint: between 45 and 65}
  energy_lots: {type: decimal(24,4), unit: lots, dimension: base_asset_quantity, nullable: true,
                deprecated: {since: 1.3.0, removal_after: 2027-01-01, replacement: frequency_hz}}
  samples: {type: int32, nullable: false, default: 1, constraint: ">= 1"}
  status: {type: enum[ok, degraded], nullable: false, default: ok}
  weight: {type: float32, nullable: true, note: "not money"}
  site: {type: string, value: NORTH}
  revision: {type: int64, nullable: false}
units:
  lots: {definition: 100 * base_units_per_venue_contract, description: venue lots}
invariants:
  - frequency_hz is null or status = ok
  - samples <= 1000
revision_policy:
  allowed: true
  window: 5 trading days
  reasons: [recalibration]
  who: [grid-ops]
  notification: grid corrections topic
completeness:
  window: 1h
  expected_count: per cadence
  min_ratio: 0.95
  allowed_gaps: [outside_session]
freshness: {max_age: 15m, column: ingested_at}
evolution: {compatibility: BACKWARD_TRANSITIVE, deprecation_notice: 2 weeks}
provenance_required: [source_id, revision]
"""


def odcs_of(contract):
    result = export("odcs", contract)
    (artifact,) = result.artifacts
    return result, YAML(typ="safe").load(io.StringIO(artifact.content))


def properties_of(document):
    return {p["name"]: p for p in document["schema"][0]["properties"]}


def custom(element):
    return {c["property"]: c["value"] for c in element.get("customProperties", [])}


@pytest.mark.parametrize("source", [OHLCV / "contract.yaml", SENSOR / "contract.yaml", "rich"], ids=str)
def test_document_has_the_odcs_v3_shape(source):
    contract = parse_contract(RICH) if source == "rich" else load_contract(source)
    result, document = odcs_of(contract)
    assert result.artifacts[0].path == f"{contract.contract}.odcs.yaml"
    Draft202012Validator(ODCS_V3).validate(json.loads(json.dumps(document, default=str)))
    assert document["apiVersion"] == "v3.1.0" and document["kind"] == "DataContract"
    assert (document["name"], document["version"], document["status"]) == (
        contract.contract,
        contract.version,
        "active",
    )
    text = result.artifacts[0].content
    for n in result.not_exported:  # the header comment lists what ODCS tools will not check
        assert f"#   {n.check_id} [{n.clause}]: {n.reason}\n" in text


def test_ohlcv_document_states_the_contract():
    _, document = odcs_of(load_contract(OHLCV / "contract.yaml"))
    props = properties_of(document)
    assert props["open"]["logicalType"] == "number" and props["open"]["physicalType"] == "DECIMAL(18,8)"
    assert "logicalTypeOptions" not in props["open"]  # precision and scale: the physical type
    # an instant: timestamp in UTC, to the millisecond -- never a date, which ends at the day
    assert (props["bar_start"]["logicalType"], props["bar_start"]["physicalType"]) == (
        "timestamp",
        "TIMESTAMP(3) WITH TIME ZONE",
    )
    assert props["bar_start"]["logicalTypeOptions"] == {
        "format": "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
        "timezone": True,
        "defaultTimezone": "Etc/UTC",
    }
    assert [props[c]["physicalType"] for c in ("symbol", "trade_count", "adjusted")] == ["VARCHAR", "BIGINT", "BOOLEAN"]
    assert props["open"]["required"] is True and custom(props["open"])["unit"] == "quote_currency"
    assert props["trade_count"]["required"] is False and props["trade_count"]["logicalTypeOptions"] == {"format": "i64"}
    assert [(p["name"], p["primaryKeyPosition"]) for p in props.values() if p.get("primaryKey")] == [
        ("symbol", 1),
        ("bar_start", 2),
        ("revision", 3),
    ]
    assert custom(props["adjusted"])["value"] is False
    record = document["schema"][0]
    quality = {q["name"]: q for q in record["quality"]}
    assert (
        quality["invariants[0]"]["type"] == "sql" and quality["invariants[0]"]["description"] == "low <= open <= high"
    )
    assert quality["invariants[0]"]["query"] == "SELECT COUNT(*) FROM {object} WHERE NOT (low <= open AND open <= high)"
    assert quality["invariants[0]"]["id"] == "invariants_0"
    assert quality["time.session"]["engine"] == "tscontract"
    section = custom(record)
    assert section["time"]["cadence"] == "60s within session; no bars outside session"
    assert section["revisionPolicy"]["window"] == "5 trading days"
    assert section["provenanceRequired"] == ["source_id", "ingest_run_id", "transform_version", "revision"]
    assert section["key"] == ["symbol", "bar_start", "revision"]
    assert document["team"] == {"members": [{"username": "market-data@example", "role": "owner"}]}


def test_rich_document_carries_freshness_and_completeness():
    _, document = odcs_of(parse_contract(RICH))
    section = custom(document["schema"][0])
    assert section["freshness"] == {"max_age": "15m", "column": "ingested_at"}
    assert section["completeness"]["min_ratio"] == pytest.approx(0.95)
    assert document["slaProperties"] == [
        {"property": "latency", "value": 15, "unit": "m", "element": "grid_frequency.ingested_at"}
    ]
    assert custom(document)["evolution"] == {"compatibility": "BACKWARD_TRANSITIVE", "deprecation_notice": "2 weeks"}
    props = properties_of(document)
    assert custom(props["frequency_hz"])["aliases"] == ["freq", "f_hz"]
    assert custom(props["energy_lots"])["deprecated"]["replacement"] == "frequency_hz"


def typed_table(connection, contract, csv_path):
    """The CSV as a table named after the contract, each column cast to its declared type (NULL if it is not one)."""
    columns = ", ".join(
        f'TRY_CAST("{name}" AS {sql_type(spec.type)}) AS "{name}"' for name, spec in contract.fields.items()
    )
    connection.execute(f'DROP TABLE IF EXISTS "{contract.contract}"')
    connection.execute(
        f"CREATE TABLE \"{contract.contract}\" AS SELECT {columns} FROM read_csv('{csv_path}', all_varchar=true)"
    )


@pytest.mark.parametrize("dataset", [OHLCV, SENSOR], ids=["ohlcv", "sensor"])
def test_sql_quality_runs_and_finds_the_bad_rows(dataset):
    contract = load_contract(dataset / "contract.yaml")
    result, document = odcs_of(contract)
    checks = [q for q in document["schema"][0]["quality"] if q["type"] == "sql"]
    checks += [q for p in properties_of(document).values() for q in p.get("quality", []) if q["type"] == "sql"]
    clauses = {c for c in result.exported if c.startswith("invariants") or c.endswith((".value", ".constraint"))}
    assert {q["name"] for q in checks} == clauses
    connection = duckdb.connect()
    typed_table(connection, contract, dataset / "data" / "good.csv")
    table = f'"{contract.contract}"'
    for quality in checks:
        query = quality["query"].replace("{object}", table)
        assert connection.execute(query).fetchone()[0] == quality["mustBe"], quality["name"]
    typed_table(connection, contract, dataset / "data" / "bad.csv")
    found = {
        q["name"]
        for q in checks
        if connection.execute(q["query"].replace("{object}", table)).fetchone()[0] != q["mustBe"]
    }
    expected = {
        OHLCV: {
            "invariants[0]",
            "invariants[1]",
            "invariants[2]",
            "invariants[3]",
            "field.adjusted.value",
        },
        SENSOR: {"invariants[0]"},
    }[dataset]
    assert found == expected


def comparable(contract):
    data = contract_to_json(contract)
    data.pop("file")
    return data


# An enum is VARCHAR with an invalidValues rule to ODCS tools; its tscontract type is the property's
# customProperties `type`, which the import reads (and takes the `field.<name>.type` rule as derived from it).
@pytest.mark.parametrize(
    "source",
    [
        OHLCV / "contract.yaml",
        SENSOR / "contract.yaml",
        "rich",
    ],
    ids=str,
)
def test_import_gives_the_contract_back(source):
    original = parse_contract(RICH) if source == "rich" else load_contract(source)
    odcs_text = export("odcs", original).artifacts[0].content
    contract_text = import_odcs(odcs_text)
    back = parse_contract(contract_text, "imported.yaml")
    assert comparable(back) == comparable(original)
    # every modeled section, one by one, as the loader reads it
    for name, spec in original.fields.items():
        got = back.fields[name]
        assert (got.type, got.nullable, got.unit, got.dimension) == (
            spec.type,
            spec.nullable,
            spec.unit,
            spec.dimension,
        )
        assert (got.has_value, got.value, got.default, got.constraint) == (
            spec.has_value,
            spec.value,
            spec.default,
            spec.constraint,
        )
        assert (got.aliases, got.deprecated, got.implied) == (spec.aliases, spec.deprecated, spec.implied)
    assert back.key == original.key and back.time == original.time
    assert [c.text for c in back.invariants] == [c.text for c in original.invariants]
    assert back.revision_policy == original.revision_policy
    assert back.provenance_required == original.provenance_required
    assert (back.completeness, back.freshness, back.evolution) == (
        original.completeness,
        original.freshness,
        original.evolution,
    )
    assert back.units == original.units and back.series == original.series
    assert export("odcs", back).artifacts[0].content == odcs_text  # and exporting it again is the same document


def test_not_exported():
    ohlcv = export("odcs", load_contract(OHLCV / "contract.yaml"))
    assert [n.check_id for n in ohlcv.not_exported] == ["schema.strict", "source.rows", "time.cadence", "time.session"]
    sensor = export("odcs", load_contract(SENSOR / "contract.yaml"))
    assert [n.check_id for n in sensor.not_exported] == [
        "schema.strict",
        "source.rows",
        "field.unit.constraint",
        "invariants[1]",
        "invariants[2]",
        "catalog.series",
        "catalog.calibration",
        "time.cadence",
    ]
    for dataset, result in ((OHLCV, ohlcv), (SENSOR, sensor)):
        accounted = result.exported + [n.check_id for n in result.not_exported]
        assert sorted(accounted) == sorted(c.id for c in build_plan(load_contract(dataset / "contract.yaml")).checks)


def test_catalog_clauses_are_sql_with_the_catalog_inlined():
    """Exported with its catalog, a catalog clause is a sql rule over VALUES (ODCS tools run it); the import
    still gives the clause back as written."""
    contract = load_contract(OHLCV / "contract.yaml")
    result = export("odcs", contract, load_catalog(OHLCV / "catalog.yaml"))
    assert [n.check_id for n in result.not_exported] == ["schema.strict", "source.rows", "time.cadence", "time.session"]
    document = YAML(typ="safe").load(io.StringIO(result.artifacts[0].content))
    series = {q["name"]: q for q in document["schema"][0]["quality"]}["catalog.series"]
    assert series["type"] == "sql" and series["query"].startswith("SELECT COUNT(*) FROM {object} WHERE NOT (")
    assert "'AAPL'" in series["query"]
    back = parse_contract(import_odcs(result.artifacts[0].content), "imported.yaml")
    assert comparable(back) == comparable(contract)
    sensor = export("odcs", load_contract(SENSOR / "contract.yaml"), load_catalog(SENSOR / "catalog.yaml"))
    assert [n.check_id for n in sensor.not_exported] == ["schema.strict", "source.rows", "time.cadence"]


def test_rules_round_trip():
    """Issue 14's rules in their ODCS forms (pattern, unique, rowCount, a share in percent, sql rules with
    {object}, severity) come back from import odcs as the clauses written, nothing listed as lost."""
    from tests.engines.test_rules import TRADES
    from tscontract.interop.odcs.read import import_document

    original = parse_contract(TRADES)
    text = export("odcs", original).artifacts[0].content
    document = YAML(typ="safe").load(io.StringIO(text))
    props = properties_of(document)
    assert props["symbol"]["logicalTypeOptions"] == {"pattern": "^[A-Z]{1,5}([.][A-Z])?$"}
    assert props["trade_id"]["unique"] is True
    rules = {q["name"]: q for q in document["schema"][0]["quality"]}
    assert rules["invariants[1]"]["unit"] == "percent" and rules["invariants[1]"]["mustBeLessOrEqualTo"] == 5
    assert rules["invariants[0]"]["query"] == (
        "SELECT COUNT(*) FROM {object} WHERE NOT (condition IS NULL OR REGEXP_FULL_MATCH(condition, '[@FTIZ]{1,4}'))"
    )
    assert rules["batch.row_count"]["mustBeBetween"] == [1, 100] and rules["batch.row_count"]["metric"] == "rowCount"
    assert rules["sql_checks.symbols_seen"]["query"] == "SELECT count(DISTINCT symbol) FROM {object}"
    assert rules["sql_checks.symbols_seen"]["severity"] == "warning"
    (imported,) = import_document(text)
    assert imported.losses == []
    assert comparable(parse_contract(imported.text, "imported.yaml")) == comparable(original)


def test_a_calendar_declared_by_its_hours_round_trips():
    """A weekly-hours calendar travels in customProperties and comes back as declared, with nothing lost."""
    from tests.engines.callcentre import CONTRACT
    from tscontract.interop.odcs.read import import_document

    original = parse_contract(
        CONTRACT.replace("holidays: [", "holidays: {country: GB, dates: [").replace("25]", "25]}")
    )
    text = export("odcs", original).artifacts[0].content
    custom = {
        p["property"]: p["value"] for p in YAML(typ="safe").load(io.StringIO(text))["schema"][0]["customProperties"]
    }
    assert custom["calendars"]["callcentre"]["holidays"] == {"dates": ["2026-10-19", "2026-12-25"], "country": "GB"}
    (imported,) = import_document(text)
    assert imported.losses == []
    back = parse_contract(imported.text, "imported.yaml")
    assert back.calendars == original.calendars and back.time.calendar == "callcentre"


YAML11_WORDS = """\
contract: switches
version: 1.0.0
key: [id, ts]
time: {column: ts, precision: ms, timezone: UTC instant}
fields:
  id: {type: string, nullable: false}
  ts: {type: timestamp_ms_utc, nullable: false}
  "on": {type: boolean, nullable: false}
  "no": {type: int32, nullable: true}
  "yes": {type: "enum[y, n, off]", nullable: true}
"""


def test_words_a_yaml_1_1_reader_takes_for_booleans_stay_strings():
    """PyYAML (and so datacontract-cli) reads bare `on`/`no`/`y` as booleans: the export quotes them."""
    import yaml  # PyYAML: a YAML 1.1 reader, as datacontract-cli's lint uses

    original = parse_contract(YAML11_WORDS, "switches.yaml")
    odcs_text = export("odcs", original).artifacts[0].content
    document = yaml.safe_load(odcs_text)
    names = [p["name"] for p in document["schema"][0]["properties"]]
    assert names == ["id", "ts", "on", "no", "yes"]
    back = parse_contract(import_odcs(odcs_text), "imported.yaml")
    assert list(back.fields) == list(original.fields)
    assert back.fields["yes"].type == original.fields["yes"].type
    assert yaml.safe_load(import_odcs(odcs_text))["fields"]["on"]["type"] == "bool"
