"""ODCS documents written elsewhere: every schema object imports or is refused in one line, and
whatever has no place in tscontract is listed with its path, its text and the reason."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from tscontract import parse_contract
from tscontract.errors import InputError
from tscontract.interop.odcs.export import import_odcs
from tscontract.interop.odcs.read import identifier, import_document
from tscontract.interop.odcs.types import Choices, field_type

UTC = Choices(timezone="UTC")  # FOREIGN's txn_ts is a timestamp without time zone: its values are UTC

FOREIGN = """\
apiVersion: v3.0.2
kind: DataContract
id: 53581432-6c55-4ba2-a65f-72344a91553a
name: payments
version: 1.1.0
status: active
description:
  purpose: Views built on top of the seller tables.
team:
  - username: daustin
    role: Owner
schema:
  - name: tbl
    physicalName: tbl_1
    physicalType: table
    properties:
      - name: txn_ts
        logicalType: date
        logicalTypeOptions: {format: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"}
        physicalType: timestamp
        required: true
        primaryKey: true
        primaryKeyPosition: 2
      - name: Receiver Id
        physicalName: rcvr_id
        primaryKey: true
        primaryKeyPosition: 1
        logicalType: string
        physicalType: varchar(18)
        required: true
      - name: amount
        logicalType: number
        physicalType: numeric(12,2)
        required: false
        description: Amount in the receiver's currency
        logicalTypeOptions: {minimum: 0, maximum: 1000000, exclusiveMaximum: true}
        quality:
          - rule: nullCheck
            type: library
            mustBe: 0
      - name: attempts
        logicalType: integer
        logicalTypeOptions: {format: i32, minimum: 1}
        required: true
      - name: currency
        logicalType: string
        quality:
          - metric: invalidValues
            arguments: {validValues: [EUR, USD, null]}
            mustBe: 0
          - metric: invalidValues
            arguments: {pattern: "^[A-Z]{3}$"}
            mustBe: 0
    quality:
      - type: sql
        name: row_count
        query: SELECT COUNT(*) FROM tbl_1
        mustBeGreaterThan: 1000
"""


def test_import_of_a_document_written_elsewhere():
    # a timestamp without time zone: the zone its values are written in is asked for, never assumed
    with pytest.raises(InputError, match=r"^timestamps without time zone \(txn_ts\): give --timezone ZONE"):
        import_document(FOREIGN)
    (imported,) = import_document(FOREIGN, choices=UTC)
    assert imported.losses == []
    # descriptive elements are carried as written in the contract's odcs section, not listed as lost
    assert imported.kept == ["status", "schema[tbl].physicalName"]
    contract = parse_contract(imported.text)
    assert contract.odcs is not None
    assert contract.odcs["document"]["status"] == "active" and contract.odcs["object"]["physicalName"] == "tbl_1"
    assert contract.contract == "payments" and contract.owner == "daustin"
    assert contract.key == ("receiver_id", "txn_ts") and contract.time.column == "txn_ts"
    assert contract.fields["txn_ts"].type.text == "timestamp_us_utc"
    assert "physicalType: no time zone: values are local times in UTC (--timezone)" in (
        contract.fields["txn_ts"].note or ""
    )
    assert contract.fields["amount"].type.scale == 2 and contract.fields["amount"].nullable is False
    assert contract.fields["attempts"].type.text == "int32" and contract.fields["attempts"].nullable is False
    assert contract.fields["attempts"].constraint == ">= 1"
    assert contract.fields["receiver_id"].nullable is None  # a key column: never null without saying so
    assert contract.fields["amount"].description == "Amount in the receiver's currency"
    # two rules on currency: both invariants (a field has one constraint)
    assert [c.text for c in contract.invariants] == [
        "length(receiver_id) <= 18",
        "amount >= 0",
        "amount < 1000000",
        "currency in ('EUR', 'USD')",
        "currency matches '^[A-Z]{3}$'",
    ]
    # the sql rule reads the table by its physicalName: {object}
    (rows,) = contract.sql_checks
    assert (rows.sql, rows.must_be_greater_than) == ("SELECT COUNT(*) FROM {object}", 1000)
    assert rows.name == "row_count"
    # the data names the key column rcvr_id: the mapping reads it from there
    assert imported.mapping is not None and "receiver_id:\n    from: rcvr_id\n" in imported.mapping
    # and reads txn_ts as local times in the zone given, made instants
    assert "txn_ts:\n    from: txn_ts\n    zone: UTC\n" in imported.mapping


def test_key_and_time_options_and_refusals():
    no_key = FOREIGN.replace("primaryKey: true", "primaryKey: false")
    with pytest.raises(InputError, match=r"no primary key: give --key COLUMNS .*candidates: txn_ts, receiver_id"):
        import_document(no_key, choices=UTC)
    (imported,) = import_document(no_key, key=["Receiver Id", "txn_ts"], choices=UTC)
    assert parse_contract(imported.text).key == ("receiver_id", "txn_ts")
    no_time = FOREIGN.replace("physicalType: timestamp", "physicalType: date").replace("HH:mm:ss.SSSXXX", "")
    with pytest.raises(
        InputError, match=r"no time column: .* no timestamp property .*date columns, not instants: txn_ts"
    ):
        import_document(no_time)
    with pytest.raises(InputError, match=r"'amount' is numeric\(12,2\), not an instant; instants: txn_ts"):
        import_document(FOREIGN, time_column="amount", choices=UTC)
    with pytest.raises(InputError, match="--key 'nope' is not a property"):
        import_document(FOREIGN, key=["nope"], choices=UTC)


def test_refusals_are_one_line():
    with pytest.raises(InputError, match="DataContract"):
        import_document("kind: Something\napiVersion: v3.0.2\n")
    with pytest.raises(InputError, match="v3"):
        import_document("kind: DataContract\napiVersion: v2.2.2\n")
    two = FOREIGN + "  - name: other\n    properties: [{name: x, logicalType: string}]\n"
    with pytest.raises(InputError, match=r"2 schema objects \(tbl, other\): name one"):
        import_odcs(two)
    with pytest.raises(InputError, match="schema object 'other': no time column"):
        import_document(two, choices=UTC)
    assert [i.object for i in import_document(two, object_name="tbl", choices=UTC)] == ["tbl"]
    with pytest.raises(InputError, match="no schema object 'x' in the document; it has: tbl, other"):
        import_document(two, object_name="x")


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Transaction Date", "transaction_date"),
        ("shipment_id", "shipment_id"),
        ("1st value", "_1st_value"),
        ("Größe (kg)", "groe_kg"),
        ("customerId", "customerId"),
    ],
)
def test_display_names_become_identifiers(written, expected):
    assert identifier(written) == expected


@pytest.mark.parametrize(
    ("physical", "expected"),
    [
        ("varchar[50]", ("string", 50)),  # AdventureWorks writes the length in brackets
        ("numeric[12, 2]", ("decimal(12,2)", None)),
        ("TIMESTAMPLTZ", ("timestamp_us_utc", None)),  # Snowflake's spelling
        ("xml", ("string", None)),  # XML is text
        ("BINARY_FLOAT", ("float32", None)),  # Oracle's
        ("varchar[max]", None),  # not a length: an unknown type, asked for (--type) or dropped
    ],
)
def test_sql_type_spellings(physical, expected):
    found = field_type({"physicalType": physical, "logicalType": "string"}, Choices())
    if expected is None:
        assert found.open == f"physicalType {physical!r} is not a type tscontract knows: " + (
            f"give --type {physical}=TYPE or --drop {{columns}}"
        )
    else:
        assert (found.type, found.length, found.open) == (*expected, None)


@pytest.mark.parametrize(
    ("physical", "server", "choices", "expected"),
    [
        ("NUMBER", "snowflake", Choices(), ("decimal(38,0)", None)),  # each server's documented default
        ("NUMERIC", "bigquery", Choices(), ("decimal(38,9)", None)),
        ("decimal", "databricks", Choices(), ("decimal(10,0)", None)),
        ("decimal", "sqlserver", Choices(), ("decimal(18,0)", None)),
        ("money", "sqlserver", Choices(), ("decimal(19,4)", None)),
        ("decimal", "duckdb", Choices(), ("decimal(18,3)", None)),
        ("numeric", "postgres", Choices(decimal=(19, 4)), ("decimal(19,4)", None)),  # --decimal
        # PostgreSQL's numeric and Oracle's NUMBER hold any precision: stated, never read as a float
        ("numeric", "postgres", Choices(), ("", "'numeric' without precision and scale: give --decimal P,S")),
        ("NUMBER", "oracle", Choices(), ("", "'NUMBER' without precision and scale: give --decimal P,S")),
        ("BIGNUMERIC", "bigquery", Choices(), ("", "'BIGNUMERIC' without precision and scale: give --decimal")),
        ("timestamp", None, Choices(), ("timestamp_us_utc", None)),  # naive: the zone is asked for apart
        ("time", None, Choices(), ("", "a time of day ('time') has no tscontract type: give --type time=string")),
        ("Name", None, Choices(types={"Name": "string"}), ("string", None)),  # --type: a domain the DDL defines
    ],
)
def test_types_a_document_leaves_open(physical, server, choices, expected):
    found = field_type({"physicalType": physical}, choices, server)
    assert found.type == expected[0]
    assert (found.open or "").startswith(expected[1]) if expected[1] else found.open is None
    assert found.naive == (physical == "timestamp")


def test_required_false_on_a_primary_key_says_nothing_but_on_a_chosen_key_is_noted():
    nullable_key = FOREIGN.replace(
        "        primaryKeyPosition: 1\n", "        primaryKeyPosition: 1\n        required: false\n"
    )
    nullable_key = nullable_key.replace("        physicalType: varchar(18)\n        required: true\n", "")
    (imported,) = import_document(nullable_key, choices=UTC)
    assert imported.losses == []
    no_pk = nullable_key.replace("primaryKey: true", "primaryKey: false")
    (chosen,) = import_document(no_pk, key=["Receiver Id", "txn_ts"], choices=UTC)
    # the key the user chose is never null: said in the field's note, nothing lost
    assert chosen.losses == []
    note = parse_contract(chosen.text).fields["receiver_id"].note or ""
    assert "schema[tbl].properties[Receiver Id].required: false in the document; as a key column it is never null" in (
        note.splitlines()
    )


METERS = """\
apiVersion: v3.1.0
kind: DataContract
id: meters
version: 1.0.0
servers:
  - {server: prod, type: postgres, host: db, port: 5432, database: energy, schema: public}
schema:
  - name: readings
    properties:
      - {name: meter_id, physicalType: varchar(8), primaryKey: true, primaryKeyPosition: 1, required: true}
      - {name: read_at, physicalType: timestamp, primaryKey: true, primaryKeyPosition: 2, required: true}
      - {name: kwh, physicalType: numeric, required: true}
      - {name: tags, physicalType: jsonb}
"""


def test_what_a_document_leaves_open_is_stated_then_validated(tmp_path):
    """A PostgreSQL table with a naive timestamp, an unconstrained numeric and a jsonb column: refused in one
    line naming each option; imported with them, nothing lost, and the data (local Berlin times across the
    spring DST change) validates through the mapping written beside the contract."""
    document = tmp_path / "meters.odcs.yaml"
    document.write_text(METERS)
    refused = run_cli("import", "odcs", document)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    for said in ("give --decimal P,S", "(read_at): give --timezone ZONE", "give --drop tags"):
        assert said in refused.stderr, refused.stderr
    out = tmp_path / "meters.yaml"
    stated = ("--timezone", "Europe/Berlin", "--decimal", "12,3", "--drop", "tags")
    done = run_cli("import", "odcs", document, *stated, "-o", out)
    assert done.returncode == 0 and "lost:" not in done.stdout, done.stdout + done.stderr
    contract = parse_contract(out.read_text(encoding="utf-8"))
    assert contract.fields["kwh"].type.text == "decimal(12,3)" and "tags" not in contract.fields
    mapping = tmp_path / "meters.mapping.yaml"
    header = "meter_id,read_at,kwh,tags\n"
    # 01:30 CET and 03:30 CEST on 2026-03-29 are one hour apart: both exist
    good = tmp_path / "good.csv"
    good.write_text(header + 'M1,2026-03-29 01:30:00,1.250,"{}"\nM1,2026-03-29 03:30:00,2.000,"{}"\n')
    ok = run_cli("validate", out, good, "--mapping", mapping)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # 02:30 does not exist in Berlin that night: the row fails, it is not read as UTC
    bad = tmp_path / "bad.csv"
    bad.write_text(header + 'M1,2026-03-29 02:30:00,1.250,"{}"\n')
    failed = run_cli("validate", out, bad, "--mapping", mapping)
    assert failed.returncode == 1 and "does not exist" in failed.stdout, failed.stdout + failed.stderr


def test_a_custom_server_is_read_by_its_custom_type():
    from tscontract.interop.odcs.rules import server_dialect

    custom = [{"server": "p", "type": "custom", "customProperties": [{"property": "customType", "value": "mssql"}]}]
    assert server_dialect(custom) == "tsql"
    custom[0]["customProperties"][0]["value"] = "dataframe"
    assert server_dialect(custom) == "spark"
    # the decimal defaults follow it too: SQL Server's decimal is decimal(18,0)
    custom[0]["customProperties"][0]["value"] = "mssql"
    from tscontract.interop.odcs.types import server_type

    assert field_type({"physicalType": "decimal"}, Choices(), server_type(custom)).type == "decimal(18,0)"
    assert server_dialect([{"type": "custom"}]) is None


def test_a_dropped_property_is_carried_without_the_checks_no_clause_makes(tmp_path):
    """--drop leaves a column out: its description comes back in the export, its quality rules do not (the
    contract checks none of them, and a carried quality is refused at load: tests/security)."""
    query = "SELECT count(*) FROM readings WHERE tags IS NULL"
    rule = f'quality: [{{type: sql, query: "{query}", mustBe: 0}}]'
    document = tmp_path / "meters.odcs.yaml"
    tags = "{name: tags, physicalType: jsonb"
    document.write_text(METERS.replace(tags + "}", f"{tags}, {rule}}}"))
    out = tmp_path / "meters.yaml"
    stated = ("--timezone", "Europe/Berlin", "--decimal", "12,3", "--drop", "tags")
    done = run_cli("import", "odcs", document, *stated, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "left out (--drop)" in out.read_text(encoding="utf-8") and query not in out.read_text(encoding="utf-8")
    exported = run_cli("export", "odcs", out, "--out", tmp_path / "odcs")
    assert exported.returncode == 0, exported.stderr
    written = next((tmp_path / "odcs").glob("*.odcs.yaml")).read_text(encoding="utf-8")
    assert "name: tags" in written and "jsonb" in written and query not in written
