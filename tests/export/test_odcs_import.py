"""ODCS documents written elsewhere: every schema object imports or is refused in one line, and
whatever has no place in tscontract is listed with its path, its text and the reason."""

from __future__ import annotations

import pytest

from tscontract import parse_contract
from tscontract.errors import InputError
from tscontract.export.odcs import import_odcs
from tscontract.export.odcs_import import identifier, import_document

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
    (imported,) = import_document(FOREIGN)
    lost = {loss.path: loss for loss in imported.losses}
    assert "no time zone" in lost["schema[tbl].properties[txn_ts].physicalType"].reason
    # descriptive elements are kept as written in the contract's note, not listed as lost
    assert "status" not in lost and "schema[tbl].physicalName" not in lost
    assert imported.kept == ["status", "schema[tbl].physicalName"]
    contract = parse_contract(imported.text)
    assert contract.note is not None
    assert contract.note.splitlines()[-2:] == ["status: active", "schema[tbl].physicalName: tbl_1"]
    assert contract.contract == "payments" and contract.owner == "daustin"
    assert contract.key == ("receiver_id", "txn_ts") and contract.time.column == "txn_ts"
    assert contract.fields["txn_ts"].type.text == "timestamp_us_utc"
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
    # the file says what was not carried
    assert "#   schema[tbl].properties[txn_ts].physicalType: 'timestamp' has no time zone" in imported.text
    assert not [p for p in lost if ".quality[" in p]


def test_key_and_time_options_and_refusals():
    no_key = FOREIGN.replace("primaryKey: true", "primaryKey: false")
    with pytest.raises(InputError, match=r"no primary key: give --key COLUMNS .*candidates: txn_ts, receiver_id"):
        import_document(no_key)
    (imported,) = import_document(no_key, key=["Receiver Id", "txn_ts"])
    assert parse_contract(imported.text).key == ("receiver_id", "txn_ts")
    no_time = FOREIGN.replace("physicalType: timestamp", "physicalType: date").replace("HH:mm:ss.SSSXXX", "")
    with pytest.raises(
        InputError, match=r"no time column: .* no timestamp property .*date columns, not instants: txn_ts"
    ):
        import_document(no_time)
    with pytest.raises(InputError, match=r"'amount' is numeric\(12,2\), not an instant; instants: txn_ts"):
        import_document(FOREIGN, time_column="amount")
    with pytest.raises(InputError, match="--key 'nope' is not a property"):
        import_document(FOREIGN, key=["nope"])


def test_refusals_are_one_line():
    with pytest.raises(InputError, match="DataContract"):
        import_document("kind: Something\napiVersion: v3.0.2\n")
    with pytest.raises(InputError, match="v3"):
        import_document("kind: DataContract\napiVersion: v2.2.2\n")
    two = FOREIGN + "  - name: other\n    properties: [{name: x, logicalType: string}]\n"
    with pytest.raises(InputError, match=r"2 schema objects \(tbl, other\): name one"):
        import_odcs(two)
    with pytest.raises(InputError, match="schema object 'other': no time column"):
        import_document(two)
    assert [i.object for i in import_document(two, object_name="tbl")] == ["tbl"]
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
        ("varchar[50]", ("string", None, 50)),  # AdventureWorks writes the length in brackets
        ("numeric[12, 2]", ("decimal(12,2)", None, None)),
        ("TIMESTAMPLTZ", ("timestamp_us_utc", None, None)),  # Snowflake's spelling
        ("varchar[max]", None),  # not a length: read from the logicalType, and listed
    ],
)
def test_sql_type_spellings(physical, expected):
    from tscontract.export.odcs_types import field_type

    found = field_type({"physicalType": physical, "logicalType": "string"})
    if expected is None:
        assert found[0] == "string" and "is not a type tscontract knows" in str(found[1])
    else:
        assert found == expected


def test_required_false_on_a_primary_key_says_nothing_but_on_a_chosen_key_is_listed():
    nullable_key = FOREIGN.replace(
        "        primaryKeyPosition: 1\n", "        primaryKeyPosition: 1\n        required: false\n"
    )
    nullable_key = nullable_key.replace("        physicalType: varchar(18)\n        required: true\n", "")
    (imported,) = import_document(nullable_key)
    assert not [loss for loss in imported.losses if loss.path.endswith(".required")]
    no_pk = nullable_key.replace("primaryKey: true", "primaryKey: false")
    (chosen,) = import_document(no_pk, key=["Receiver Id", "txn_ts"])
    (loss,) = [loss for loss in chosen.losses if loss.path.endswith(".required")]
    assert loss.path == "schema[tbl].properties[Receiver Id].required" and "never null" in loss.reason
