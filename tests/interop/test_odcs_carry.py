"""What an ODCS document states becomes a clause, is carried in the contract's ``odcs`` section and written
back by ``export odcs``, or is listed as lost (issue #31): logicalTypeOptions (``multipleOf``, ``format``),
FLOAT by the server's dialect, text instants, the document's own elements (id, status, names, physical names,
servers, SLA, roles, support, custom properties, links), and DQX's rule catalogue."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tscontract import parse_contract
from tscontract.engines import validate
from tscontract.errors import InputError
from tscontract.interop.exports import export
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.read import Imported, import_document
from tscontract.interop.odcs.types import Choices

LOSSY = Choices(allow_loss=True)
_YAML = YAML(typ="safe")


def document(properties: str, servers: str = "", top: str = "") -> str:
    return f"""\
apiVersion: v3.1.0
kind: DataContract
id: 0b8d3a4c-0000-4000-8000-000000000031
name: readings
version: 1.2.0
status: draft
{top}{servers}schema:
  - name: readings
    physicalName: raw_readings
    physicalType: table
    properties:
      - name: ts
        logicalType: timestamp
        physicalType: timestamptz
        primaryKey: true
        required: true
{properties}"""


def one(text: str, choices: Choices = LOSSY) -> Imported:
    (result,) = import_document(text, choices=choices)
    return result


def lost(result: Imported) -> dict[str, str]:
    return {loss.path: loss.reason for loss in result.losses}


def exported(result: Imported) -> dict[str, Any]:
    (artifact,) = export("odcs", parse_contract(result.text)).artifacts
    tree: dict[str, Any] = _YAML.load(artifact.content)
    return tree


# ---------------------------------------------------------------- item 1: nothing dropped silently


def test_multiple_of_on_an_integer_is_a_clause_that_judges_rows(tmp_path):
    result = one(
        document("""\
      - name: qty
        logicalType: integer
        physicalType: bigint
        logicalTypeOptions: {multipleOf: 5}
""")
    )
    assert result.losses == []
    contract = parse_contract(result.text)
    assert [c.text for c in contract.invariants] == ["round(qty / 5) * 5 = qty"]
    path = tmp_path / "c.yaml"
    path.write_text(result.text)
    csv = tmp_path / "b.csv"
    csv.write_text("ts,qty\n2026-01-01T00:00:00Z,10\n2026-01-01T00:01:00Z,-15\n2026-01-01T00:02:00Z,7\n")
    checks = validate(path, csv).to_json()["checks"]
    failing = [c for c in checks if c["status"] == "failed"]
    assert [c["failed_rows"] for c in failing] == [1]  # 7 only: 10 and -15 are multiples of 5


@pytest.mark.parametrize(
    ("logical", "physical", "step", "reason"),
    [
        ("number", "double", "0.01", "multipleOf 0.01 on float64"),
        ("integer", "bigint", "2.5", "multipleOf 2.5 on int64"),
    ],
)
def test_multiple_of_without_an_exact_clause_is_listed(logical, physical, step, reason):
    text = document(f"""\
      - name: v
        logicalType: {logical}
        physicalType: {physical}
        logicalTypeOptions: {{multipleOf: {step}}}
""")
    result = one(text)
    assert lost(result)["schema[readings].properties[v].logicalTypeOptions.multipleOf"].startswith(reason)
    with pytest.raises(InputError, match="multipleOf"):  # without --allow-loss: refused, naming it
        one(text, Choices())


def test_multiple_of_a_decimal_s_last_digit_is_its_type():
    result = one(
        document("""\
      - name: price
        logicalType: number
        physicalType: decimal(12,2)
        logicalTypeOptions: {multipleOf: 0.01}
""")
    )
    assert result.losses == [] and parse_contract(result.text).invariants == []


def test_formats_become_patterns_types_or_losses():
    result = one(
        document("""\
      - {name: ref, logicalType: string, logicalTypeOptions: {format: uuid}}
      - {name: ip, logicalType: string, logicalTypeOptions: {format: ipv4}}
      - {name: day, logicalType: string, logicalTypeOptions: {format: yyyy-MM-dd}}
      - {name: email, logicalType: string, logicalTypeOptions: {format: email}}
      - {name: seen_at, logicalType: string, logicalTypeOptions: {format: date-time}}
      - {name: born, logicalType: string, logicalTypeOptions: {format: date}}
      - {name: blob, physicalType: bytea, logicalType: string, logicalTypeOptions: {format: binary}}
""")
    )
    contract = parse_contract(result.text)
    assert lost(result) == {
        "schema[readings].properties[email].logicalTypeOptions.format": (
            "format 'email' on a string: no well-defined pattern states it (uuid, ipv4 and the type-changing "
            "date-time and date are read)"
        )
    }
    constraints = {n: str(f.constraint) for n, f in contract.fields.items() if f.constraint is not None}
    assert constraints["ref"].startswith("matches '^[0-9A-Fa-f]{8}-")
    assert constraints["day"] == r"matches '^[0-9]{4}\-[0-9]{2}\-[0-9]{2}$'"
    assert "ip" in constraints
    assert contract.fields["seen_at"].type.text == "timestamp_us_utc"  # how JSON-based tools write instants
    assert contract.fields["born"].type.text == "date"
    assert contract.fields["blob"].type.text == "bytes"


@pytest.mark.parametrize(
    ("server", "physical", "expected"),
    [
        ("duckdb", "FLOAT", "float32"),
        ("databricks", "FLOAT", "float32"),
        ("spark", "float", "float32"),
        ("postgresql", "FLOAT", "float64"),
        ("snowflake", "FLOAT", "float64"),
        (None, "FLOAT", "float64"),
        ("postgresql", "float(24)", "float32"),
        ("duckdb", "float(53)", "float64"),
    ],
)
def test_float_is_the_width_of_the_servers_dialect(server, physical, expected):
    servers = f"servers:\n  - {{server: s, type: {server}}}\n" if server else ""
    result = one(document(f"      - {{name: v, physicalType: '{physical}', logicalType: number}}\n", servers))
    assert parse_contract(result.text).fields["v"].type.text == expected


def test_no_instant_names_the_options_that_state_one():
    text = document("").replace("logicalType: timestamp\n        physicalType: timestamptz", "logicalType: string")
    with pytest.raises(InputError, match=r"give --time-column C with --type PHYSICAL=timestamp_us_utc"):
        one(text, Choices())
    result = one(text, Choices(types={"string": "timestamp_us_utc"}))  # as the message says
    assert parse_contract(result.text).time.column == "ts"


# ---------------------------------------------------------------- item 2: carried and written back

RICH_TOP = """\
domain: metering
tenant: acme
tags: [energy]
description: {purpose: Meter readings, usage: billing}
authoritativeDefinitions:
  - {type: businessDefinition, url: "https://example.com/defs/readings"}
customProperties:
  - {property: dataSteward, value: jane}
team:
  name: metering
  members:
    - {username: jane, role: owner}
    - {username: bob, role: engineer}
roles:
  - {role: readings_reader, access: read, firstLevelApprovers: Metering lead}
support:
  - {channel: "#metering", tool: slack, url: "https://example.com/slack/metering"}
slaDefaultElement: readings.ts
slaProperties:
  - {property: freshness, value: 2, unit: h, element: readings.ts}
  - {property: retention, value: 7, unit: y}
"""
SERVERS = """\
servers:
  - {server: prod, type: postgresql, host: db.example.com, port: 5432, database: energy, schema: public}
"""
RICH_PROPERTIES = """\
      - name: Meter Id
        physicalName: meter_id_col
        logicalType: string
        physicalType: varchar(12)
        primaryKey: true
        primaryKeyPosition: 1
        tags: [id]
        classification: internal
        quality:
          - {metric: nullValues, mustBe: 0, name: no_null_meters}
      - name: kwh
        logicalType: number
        physicalType: numeric(12,3)
        logicalTypeOptions: {minimum: 0, maximum: 100000}
        quality:
          - {metric: invalidValues, arguments: {validValues: [1, 2]}, mustBe: 0, name: kwh_codes, severity: warning}
"""


@pytest.fixture(scope="module")
def rich() -> tuple[str, Imported]:
    text = document(RICH_PROPERTIES, SERVERS, RICH_TOP)
    return text, one(text, Choices())


def test_the_documents_own_elements_are_carried_not_noted(rich):
    _, result = rich
    contract = parse_contract(result.text)
    assert result.losses == []
    carried = contract.odcs
    assert carried is not None
    assert carried["document"]["id"] == "0b8d3a4c-0000-4000-8000-000000000031"
    assert carried["document"]["status"] == "draft"
    assert carried["document"]["servers"][0]["host"] == "db.example.com"
    assert carried["object"] == {"name": "readings", "physicalName": "raw_readings", "physicalType": "table"}
    assert carried["properties"]["meter_id"]["name"] == "Meter Id"
    assert carried["properties"]["meter_id"]["physicalName"] == "meter_id_col"
    assert "roles" not in (contract.note or "") and "servers" not in (contract.note or "")


def test_export_writes_them_back_in_odcs_form(rich):
    text, result = rich
    original = _YAML.load(text)
    out = exported(result)
    for key in (
        "id", "status", "domain", "tenant", "tags", "authoritativeDefinitions", "team", "roles", "support",
        "servers", "slaDefaultElement",
    ):  # fmt: skip
        assert out[key] == original[key], key
    assert out["slaProperties"] == original["slaProperties"]  # freshness stays freshness, not latency
    assert out["description"]["usage"] == "billing"
    assert out["customProperties"][0] == {"property": "dataSteward", "value": "jane"}
    (obj,) = out["schema"]
    assert (obj["name"], obj["physicalName"]) == ("readings", "raw_readings")  # never renamed to the contract
    props = {p["name"]: p for p in obj["properties"]}
    meter = props["Meter Id"]
    assert (meter["physicalName"], meter["physicalType"], meter["tags"]) == ("meter_id_col", "varchar(12)", ["id"])
    assert meter["quality"] == [{"metric": "nullValues", "mustBe": 0, "name": "no_null_meters"}]
    assert props["kwh"]["logicalTypeOptions"] == {"minimum": 0, "maximum": 100000}
    assert props["kwh"]["quality"][0]["name"] == "kwh_codes"


def test_an_edited_clause_is_exported_in_the_contracts_own_form(rich):
    _, result = rich
    edited = result.text.replace("\n  - kwh >= 0\n", "\n  - kwh >= 1\n", 1)
    assert edited != result.text
    (artifact,) = export("odcs", parse_contract(edited)).artifacts
    props = {p["name"]: p for p in _YAML.load(artifact.content)["schema"][0]["properties"]}
    assert "minimum" not in props["kwh"].get("logicalTypeOptions", {})  # the carried bound no longer holds
    assert any(q.get("description") == "kwh >= 1" for q in _YAML.load(artifact.content)["schema"][0]["quality"])


def test_a_contract_written_here_round_trips_without_an_odcs_section(rich):
    _, result = rich
    contract = parse_contract(result.text)
    (artifact,) = export("odcs", contract).artifacts
    (again,) = import_document(artifact.content)
    assert parse_contract(again.text).odcs is not None  # carried again: the export marks odcsCarried
    plain = result.text.split("\nodcs:\n")[0] + "\n"
    (artifact,) = export("odcs", parse_contract(plain)).artifacts
    (back,) = import_document(artifact.content)
    assert parse_contract(back.text).odcs is None


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in ("ts", "on", "no"))
_TYPES = st.sampled_from(
    [
        ("integer", "bigint", {"minimum": 0}),
        ("integer", "integer", {"maximum": 10, "multipleOf": 2}),
        ("number", "double precision", {"minimum": -1.5}),
        ("number", "numeric(10,2)", {"multipleOf": 0.01}),
        ("string", "varchar(20)", {"minLength": 1}),
        ("string", "text", {"pattern": "^[A-Z]{2}$"}),
        ("string", "text", {"format": "uuid"}),
        ("boolean", "boolean", {}),
        ("date", "date", {}),
    ]
)


@st.composite
def properties(draw: Any) -> list[dict[str, Any]]:
    names = draw(st.lists(_NAMES, min_size=1, max_size=5, unique=True))
    out = []
    for name in names:
        logical, physical, options = draw(_TYPES)
        prop: dict[str, Any] = {"name": name, "logicalType": logical, "physicalType": physical}
        if draw(st.booleans()):
            prop["physicalName"] = f"{name}_col"
        if options and draw(st.booleans()):
            prop["logicalTypeOptions"] = options
        if draw(st.booleans()):
            prop["tags"] = [draw(_NAMES)]
        if draw(st.booleans()):
            prop["classification"] = draw(st.sampled_from(["public", "internal", "restricted"]))
        if draw(st.booleans()):
            prop["required"] = True
        out.append(prop)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(properties())
def test_generated_property_sets_round_trip_unchanged(props):
    tree = _YAML.load(document(""))
    tree["schema"][0]["properties"] += props
    from io import StringIO

    stream = StringIO()
    YAML(typ="safe", pure=True).dump(tree, stream)
    result = one(stream.getvalue(), Choices())
    out = {p["name"]: p for p in exported(result)["schema"][0]["properties"]}
    for prop in props:
        back = out[prop["name"]]
        for key, value in prop.items():
            assert back.get(key) == value, (prop["name"], key, back)


# ---------------------------------------------------------------- item 3: DQX's own rule catalogue


def dqx(function: str, arguments: dict[str, Any] | None = None, physical: str = "text") -> Imported:
    check: dict[str, Any] = {"function": function}
    if arguments is not None:
        check["arguments"] = {"column": "v", **arguments}
    rule = {"type": "custom", "engine": "dqx", "implementation": {"criticality": "error", "check": check}}
    import json

    return one(document(f"      - {{name: v, physicalType: '{physical}', quality: [{json.dumps(rule)}]}}\n"))


def clauses(result: Imported) -> list[str]:
    contract = parse_contract(result.text)
    found = [c.text for c in contract.invariants]
    return found + [f"v {f.constraint}" for f in contract.fields.values() if f.constraint is not None]


@pytest.mark.parametrize(
    ("function", "arguments", "physical", "clause"),
    [
        ("is_not_empty", {}, "text", "v <> ''"),
        ("is_not_null_and_not_empty", {}, "text", "v is not null and v <> ''"),
        ("is_not_null_and_not_empty", {"trim_strings": True}, "text", "v is not null and v matches '(?s).*[^ ].*'"),
        ("is_not_null_and_is_in_list", {"allowed": ["a", "it's"]}, "text", "v is not null and v in ('a', 'it''s')"),
        ("is_in_list", {"allowed": ["A", "b"], "case_sensitive": False}, "text", "lower(v) in ('a', 'b')"),
        ("is_in_list", {"allowed": ["Côte d'Ivoire"]}, "text", "v in ('Côte d''Ivoire')"),
        ("is_not_in_range", {"min_limit": 1, "max_limit": 5}, "bigint", "(v < 1 or v > 5)"),
        ("is_not_less_than", {"limit": 0}, "bigint", "v >= 0"),
        ("is_not_greater_than", {"limit": 9}, "bigint", "v <= 9"),
        ("is_equal_to", {"value": "'EUR'"}, "text", "v = 'EUR'"),
        ("is_not_equal_to", {"value": 0}, "bigint", "v <> 0"),
        ("is_in_range", {"min_limit": 0, "max_limit": 10}, "bigint", "v between 0 and 10"),
    ],
)
def test_dqx_checks_become_clauses(function, arguments, physical, clause):
    result = dqx(function, arguments, physical)
    assert result.losses == [], result.losses
    assert clause in clauses(result)


def test_dqx_checks_the_type_states_and_the_clock():
    assert clauses(dqx("is_not_empty", {}, "bigint")) == []  # a number is never empty text
    future = parse_contract(dqx("is_not_in_future", {"offset": 3600}, "timestamptz").text)
    (check,) = future.sql_checks
    assert "INTERVAL 3600 SECOND" in check.sql
    near = parse_contract(dqx("is_not_in_near_future", {"offset": 60}, "timestamptz").text)
    assert 'NOT ("v" > current_timestamp' in near.sql_checks[0].sql


@pytest.mark.parametrize(
    ("function", "arguments", "reason"),
    [
        ("is_data_fresh_per_time_window", {"window_minutes": 60, "min_records_per_window": 1}, "rows per tumbling"),
        ("is_data_fresh", {"max_age_minutes": 60}, "the newest value within"),
        ("foreign_key", {"ref_columns": ["id"], "ref_table": "t"}, "another table"),
        ("is_not_less_than", {"limit": "current_date()"}, "DQX reads a string as a Spark SQL expression"),
        ("is_valid_json", {}, "dqx function 'is_valid_json': no tscontract clause"),
    ],
)
def test_dqx_rules_without_a_clause_are_listed_naming_the_rule(function, arguments, reason):
    result = dqx(function, arguments)
    (path, why), *_ = lost(result).items()
    assert path == "schema[readings].properties[v].quality[0]"
    assert reason in why and (function in why or "limit" in why)


def test_dqx_literal_quoting_rule():
    assert odcs_rules.dqx_literal(5, "is_equal_to") == "5"
    assert odcs_rules.dqx_literal("'a''b'", "is_equal_to") == "'a''b'"
    with pytest.raises(odcs_rules.Refused, match="Spark SQL expression"):
        odcs_rules.dqx_literal("col_b", "is_equal_to")


def test_the_odcs_section_is_checked_as_a_mapping_of_its_parts(rich):
    from tscontract.errors import SourceError

    _, result = rich
    base = result.text.split("\nodcs:\n")[0] + "\n"
    for section, message in (
        ("odcs: [1]\n", "odcs: a mapping of document, object, properties and rules"),
        ("odcs: {servers: []}\n", "odcs: unknown part(s) servers; known: document, object, properties, rules"),
        ("odcs: {rules: {a: 1}}\n", "odcs.rules: a list"),
    ):
        with pytest.raises(SourceError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parse_contract(base + section)
