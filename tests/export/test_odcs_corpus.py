"""Real ODCS v3 documents (tests/export/odcs_corpus/, see its NOTICE): every schema object either
imports — the contract loads, lints, its mapping loads, its losses are listed — or is refused with a
one-line reason; never a traceback. Some refusals are then imported with --key / --time-column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tscontract import parse_contract
from tscontract.contract.lint import lint
from tscontract.errors import InputError
from tscontract.export.odcs_import import Imported, import_document, load_document, object_names
from tscontract.gate.mapping import load_mapping

CORPUS = Path(__file__).parent / "odcs_corpus"
DOCUMENTS = sorted(CORPUS.glob("*.odcs.yaml"))
# documents whose objects are refused alone, imported with the options a user would give
OPTIONS = {
    "dccli--lint-valid-3.1.0.odcs.yaml": (None, ["shipment_id", "delivery_date"], None),
    "dccli--dqx-datacontract.odcs.yaml": (None, ["interaction_id", "interaction_timestamp"], None),
    "dccli--great-expectations-odcs.odcs.yaml": (None, ["order_id", "processed_timestamp"], None),
    "dccli--postgres-odcs_case_sensitive.odcs.yaml": (None, ["Field_one", "Field_three"], None),
    "dccli--sodacl-datacontract.odcs.yaml": ("orders", ["order_id", "order_timestamp"], "order_timestamp"),
    "dccli--oracle-datacontract-oracle-odcs.odcs.yaml": (None, ["CTC_ID", "FIELD_TIMESTAMP_TZ"], "FIELD_TIMESTAMP_TZ"),
    "dccli--athena-iceberg-iceberg_example.odcs.yaml": (None, ["product", "ts"], None),
    "bitol--data-types-all-data-types.odcs.yaml": (None, ["account_id", "txn_timestamp_tz"], "txn_timestamp_tz"),
    "dccli--excel-shipments-odcs.odcs.yaml": (None, ["shipment_id", "delivery_date"], None),
}


def checked(imported: Imported, tmp_path: Path) -> None:
    """The contract loads and lints (only TS140: ODCS has no provenance); the mapping loads; every loss is complete."""
    contract = parse_contract(imported.text, f"{imported.contract}.yaml")
    # ODCS has no provenance columns: lint's TS140 is the one error an import keeps
    errors = {f.code for f in lint(contract).findings if f.severity == "error"}
    assert errors <= {"TS140"}, (imported.contract, errors)
    if imported.mapping is not None:
        path = tmp_path / f"{imported.contract}.mapping.yaml"
        path.write_text(imported.mapping)
        mapping = load_mapping(path)
        assert set(mapping.columns) <= set(contract.fields)
    for loss in imported.losses:
        assert loss.path and loss.text and loss.reason and "\n" not in loss.line()


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_object_imports_or_is_refused_in_one_line(document, tmp_path):
    text = document.read_text(encoding="utf-8")
    try:
        names = object_names(load_document(text))
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    for name in names:
        try:
            (imported,) = import_document(text, object_name=name)
        except InputError as exc:
            assert "\n" not in str(exc) and ("give --" in str(exc) or "no properties" in str(exc)), str(exc)
            continue
        checked(imported, tmp_path)
    if document.name in OPTIONS:
        (imported,) = import_document(text, *OPTIONS[document.name])
        checked(imported, tmp_path)


def imported(name: str) -> Imported:
    (result,) = import_document((CORPUS / name).read_text(encoding="utf-8"), *OPTIONS.get(name, (None, None, None)))
    return result


def lost(result: Imported) -> dict[str, str]:
    return {loss.path: loss.reason for loss in result.losses}


def test_v3_1_team_object_physical_names_and_nested_properties():
    result = imported("dccli--lint-valid-3.1.0.odcs.yaml")
    contract = parse_contract(result.text)
    assert contract.owner == "fullfillment"  # v3.1 team: {name, members}, no owner member
    assert contract.fields["delivery_date"].type.text == "timestamp_us_utc"  # physicalType timestamp_tz
    assert result.mapping is not None
    assert (
        "shipment_id:\n    from: sid\n" in result.mapping and "drop:\n  - inline_object_definition\n" in result.mapping
    )
    losses = lost(result)
    assert losses["schema[shipments2].properties[address]"].startswith("nested property")
    # the query reads another table than the object (shipments2, physicalName shipments_v2)
    assert losses["schema[shipments2].quality[0]"].startswith("SQL check: reads table 'shipments'")
    # two rowCount rules (type library and the default type), both >= 1: one row_count
    assert contract.row_count is not None and (contract.row_count.min, contract.row_count.max) == (1, None)
    assert not any(".quality[1]" in p or ".quality[2]" in p for p in losses)
    assert "team.members" in losses and "servers" in losses and "price" in losses


def test_logical_type_options_become_constraints():
    result = imported("dccli--postgres-odcs_case_sensitive.odcs.yaml")
    contract = parse_contract(result.text)
    assert contract.fields["Field_two"].constraint == ">= 10"  # logicalTypeOptions minimum: 10
    # pattern '[A-Za-z]{2}-\d{3}-[A-Za-z]{2}$' is found anywhere before the end (ODCS, like JSON Schema,
    # searches): the whole-value match gets (?s:.*) in front
    assert contract.fields["Field_one"].constraint == "matches '(?s:.*)[A-Za-z]{2}-\\d{3}-[A-Za-z]{2}$'"
    assert not any("pattern" in p for p in lost(result))


def test_timezone_types_and_unique_off_the_key():
    oracle = parse_contract(imported("dccli--oracle-datacontract-oracle-odcs.odcs.yaml").text)
    assert oracle.time.column == "FIELD_TIMESTAMP_TZ" and oracle.fields["FIELD_TIMESTAMP_TZ"].type.kind == "timestamp"
    iceberg = imported("dccli--athena-iceberg-iceberg_example.odcs.yaml")
    assert parse_contract(iceberg.text).fields["color"].unique is True  # unique: true off the key
    assert "schema[athena_iceberg_table_partitioned].properties[color].unique" not in lost(iceberg)
    assert "no time zone" in lost(iceberg)["schema[athena_iceberg_table_partitioned].properties[ts].physicalType"]


def test_cli_exit_codes_and_json(tmp_path):
    doc = CORPUS / "dccli--lint-valid-3.1.0.odcs.yaml"
    refused = run_cli("import", "odcs", doc)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "does not include the time column delivery_date: give --key" in refused.stderr
    out = tmp_path / "shipments.yaml"
    lossy = run_cli("import", "odcs", doc, "--key", "shipment_id,delivery_date", "-o", out, "--format", "json")
    assert lossy.returncode == 1, lossy.stderr
    data = json.loads(lossy.stdout)
    (entry,) = data["contracts"]
    assert entry["contract_file"].endswith("shipments.yaml") and entry["mapping_file"].endswith(
        "shipments.mapping.yaml"
    )
    (sql_loss,) = [x for x in entry["lost"] if x["path"] == "schema[shipments2].quality[0]"]
    assert sql_loss["reason"].startswith("SQL check: reads table 'shipments'") and "COUNT(*)" in sql_loss["text"]
    assert data["lost"] == len(entry["lost"]) > 0
    linted = run_cli("lint", out, "--format", "json")
    assert {f["code"] for f in json.loads(linted.stdout)["findings"] if f["severity"] == "error"} == {"TS140"}
    allowed = run_cli("import", "odcs", doc, "--key", "shipment_id,delivery_date", "-o", out, "--allow-loss")
    assert allowed.returncode == 0 and "lost: valid_odcs_data_contract: schema[shipments2].quality[0]" in allowed.stdout
    several = run_cli("import", "odcs", CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml", "-o", tmp_path / "aw")
    assert several.returncode == 2 and "schema object 'department'" in several.stderr
    one = run_cli(
        "import",
        "odcs",
        CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml",
        "--object",
        "employeepayhistory",
        "--allow-loss",
    )
    assert one.returncode == 0 and "contract: employeepayhistory\n" in one.stdout
