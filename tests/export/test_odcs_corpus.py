"""Real ODCS v3 documents (tests/export/odcs_corpus/, see its NOTICE): all 119, every ODCS v3 document of
bitol-io/open-data-contract-standard docs/examples (18) and every v3 fixture of datacontract/datacontract-cli
tests (101). Each schema object either imports — the contract loads and lints, its mapping loads, each
loss is listed in one line, each descriptive element (tags, links, servers, team ...) is in a note as
written — or is refused with a one-line reason; never a traceback. A refusal that names the option to
give (``--key``, ``--time-column``) is followed, as a user would.

The counts, pinned by :func:`test_corpus_counts` so a regression fails:

- 8 documents have no schema object (roles, servers, SLA, stakeholder examples; lint fixtures) and are
  refused in one line; the other 111 hold 270 schema objects.
- 188 objects import: 10 as written, 178 with the ``--key``/``--time-column`` their refusal names
  (a primary key without the time column, no primary key, several instants).
- 82 are refused with the reason: 76 have no timestamp property (not a time series), 6 no properties.
- 1 of the 188 contracts loses nothing (1 document imports whole with nothing lost): 1,483
  descriptive elements are kept in notes, and 747 elements are listed as lost, mostly what tscontract
  reads otherwise than the document says (``LOST_BY_KIND``): 248 naive ``timestamp`` columns read as
  UTC instants, 137 nested properties, 130 nullable columns made key or time columns by the options
  given, 103 decimals without precision read as float64, 28 SQL and 16 dqx rules with no exact clause.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tscontract import parse_contract
from tscontract.contract.lint import lint
from tscontract.errors import InputError
from tscontract.export.odcs_import import Imported, import_document, import_tree, load_document, object_names
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
# the one-line refusals that name the option to give, and what a user gives then
_HINTS = (
    (re.compile(r"give --key \(e\.g\. --key ([^)]*)\)"), lambda m: (m.group(1).split(","), None)),
    (re.compile(r"no primary key: give --key COLUMNS \(the key must include the time column (\w+)"),
     lambda m: ([m.group(1)], None)),
    (re.compile(r"give --time-column C \(candidates: (\w+)"), lambda m: (None, m.group(1))),
)  # fmt: skip
REFUSALS = {  # the refusals no option lifts, by their reason (the words before any list of names)
    "no time column: a tscontract contract describes a time series and the object has no timestamp property": 76,
    "the schema object has no properties: a contract declares at least one field": 6,
}
LOST_BY_KIND = {  # losses by the start of their reason
    "'timestamp' has no time zone": 248,
    "nested property": 137,
    "a key or time column is never null in tscontract": 130,
    "a decimal without precision and scale": 103,
    "SQL check": 28,
    "dqx rule": 16,
}


@functools.cache
def outcomes(document: str) -> tuple[tuple[str, int, Imported | str], ...] | str:
    """Each object's contract (with the number of hints followed) or one-line refusal; the document's refusal."""
    try:
        tree = load_document((CORPUS / document).read_text(encoding="utf-8"))
    except InputError as exc:
        return str(exc)
    found: list[tuple[str, int, Imported | str]] = []
    for name in object_names(tree):
        key: list[str] | None = None
        time: str | None = None
        for hints in range(4):
            try:
                (result,) = import_tree(tree, name, key, time)
            except InputError as exc:
                message = str(exc).removeprefix(f"schema object {name!r}: ")
                hint = next((h(m) for pattern, h in _HINTS if (m := pattern.search(message))), None)
                if hint is None or hints == 3:
                    found.append((name, hints, message))
                    break
                key, time = hint[0] or key, hint[1] or time
            else:
                found.append((name, hints, result))
                break
    return tuple(found)


def reason(refusal: str) -> str:
    return refusal.split(" (")[0].split("; give")[0]


def checked(imported: Imported, tmp_path: Path) -> None:
    """The contract loads and lints (only TS140: ODCS has no provenance); the mapping loads; every loss
    is complete; every descriptive element kept is a line of a note."""
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
    notes = [contract.note or "", *(spec.note or "" for spec in contract.fields.values())]
    lines = {line.split(": ", 1)[0] for note in notes for line in note.splitlines()}
    assert set(imported.kept) <= lines, set(imported.kept) - lines
    assert not set(imported.kept) & {loss.path for loss in imported.losses}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_object_imports_or_is_refused_in_one_line(document, tmp_path):
    found = outcomes(document.name)
    if isinstance(found, str):
        assert "\n" not in found and found == "the ODCS document has no schema objects to import"
        return
    for _, _, result in found:
        if isinstance(result, str):
            assert "\n" not in result and reason(result) in REFUSALS, result
        else:
            checked(result, tmp_path)
    if document.name in OPTIONS:
        (result,) = import_document(document.read_text(encoding="utf-8"), *OPTIONS[document.name])
        checked(result, tmp_path)


def test_corpus_counts():
    every = {d.name: outcomes(d.name) for d in DOCUMENTS}
    objects = [o for found in every.values() if not isinstance(found, str) for o in found]
    contracts = [(hints, r) for _, hints, r in objects if not isinstance(r, str)]
    whole = [
        d for d, found in every.items() if not isinstance(found, str) and all(
            not isinstance(r, str) and not r.losses for _, _, r in found
        )
    ]  # fmt: skip
    losses = [loss.reason for _, r in contracts for loss in r.losses]
    assert (len(every), sum(isinstance(f, str) for f in every.values()), len(objects)) == (119, 8, 270)
    assert Counter(min(h, 1) for h, _ in contracts) == {0: 10, 1: 178}
    assert Counter(reason(r) for _, _, r in objects if isinstance(r, str)) == REFUSALS
    assert (sum(not r.losses for _, r in contracts), len(whole)) == (1, 1)
    assert (sum(len(r.kept) for _, r in contracts), len(losses)) == (1483, 747)
    for start, count in LOST_BY_KIND.items():
        assert sum(reason.startswith(start) for reason in losses) == count, start


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
    # descriptive elements are kept as written in the notes, not lost
    assert {"team.members", "servers", "price"} <= set(result.kept) and "servers" not in losses
    assert "servers: [{" in (contract.note or "")


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
    assert "servers" in entry["kept"] and "servers" not in {x["path"] for x in entry["lost"]}
    linted = run_cli("lint", out, "--format", "json")
    assert {f["code"] for f in json.loads(linted.stdout)["findings"] if f["severity"] == "error"} == {"TS140"}
    allowed = run_cli("import", "odcs", doc, "--key", "shipment_id,delivery_date", "-o", out, "--allow-loss")
    assert allowed.returncode == 0 and "lost: valid_odcs_data_contract: schema[shipments2].quality[0]" in allowed.stdout
    several = run_cli("import", "odcs", CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml", "-o", tmp_path / "aw")
    # several objects into a directory: the refused ones listed, the others written, exit 1
    assert several.returncode == 1 and "refused: department: the primary key" in several.stdout, several.stderr
    one = run_cli(
        "import",
        "odcs",
        CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml",
        "--object",
        "employeepayhistory",
        "--allow-loss",
    )
    assert one.returncode == 0 and "contract: employeepayhistory\n" in one.stdout


def test_a_directory_gets_every_object_that_imports_and_the_refusals_listed(tmp_path):
    document = CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml"
    names = object_names(load_document(document.read_text(encoding="utf-8")))
    done = run_cli("import", "odcs", document, "-o", tmp_path / "aw", "--format", "json")
    assert done.returncode == 1, done.stderr  # objects refused: not everything was carried
    found = json.loads(done.stdout)
    written = sorted(p.stem for p in (tmp_path / "aw").glob("*.yaml") if not p.name.endswith(".mapping.yaml"))
    imported = sorted(c["contract"] for c in found["contracts"])
    assert written == imported and len(imported) >= 5
    refused = {r["object"]: r["reason"] for r in found["refused"]}
    assert len(refused) + len(imported) == len(names)
    assert all("give --key" in why or "no " in why for why in refused.values()), refused
    for path in (tmp_path / "aw").glob("*.yaml"):
        if not path.name.endswith(".mapping.yaml"):
            parse_contract(path.read_text(encoding="utf-8"), path.name)
    # a single object named, or every object refused: still the one-line refusal, exit 2
    alone = run_cli("import", "odcs", document, "--object", "department", "-o", tmp_path / "d")
    assert alone.returncode == 2 and alone.stderr.count("\n") == 1 and "give --key" in alone.stderr
