"""Real ODCS v3 documents (tests/interop/odcs_corpus/, see its NOTICE): all 119, every ODCS v3 document of
bitol-io/open-data-contract-standard docs/examples (18) and every v3 fixture of datacontract/datacontract-cli
tests (101). Each schema object either imports with nothing lost — the contract loads and lints, its
mapping loads, each descriptive element (tags, links, servers, team ...) is carried as written in its odcs
section — or is
refused with a one-line reason; never a traceback. A refusal that names what to state (``--key``,
``--time-column``, ``--timezone``, ``--decimal``, ``--type``, ``--drop``) is followed, as a user would;
``--allow-loss`` is not, unless a test says so.

The counts, pinned by :func:`test_corpus_counts` so a regression fails:

- 8 documents have no schema object (roles, servers, SLA, stakeholder examples; lint fixtures) and are
  refused in one line; the other 111 hold 270 schema objects.
- 169 objects import with nothing lost, each after stating what its document leaves open (131 in one
  round, 38 in two): the zone of timestamps without one, decimals' precision, AdventureWorks' domain
  types, nested columns dropped, the key or time column.
- 101 are refused: 76 have no timestamp property (not a time series), 6 no properties, 19 hold
  elements with no exact place (rules tscontract cannot run: dialect-only SQL such as ``TIMESTAMP AS
  OF``, queries naming columns the object lacks, dqx ``foreign_key`` ...).
- Every one of the 94 single-object documents imports whole (27) or is refused in one line (67).
- With ``--allow-loss`` the 19 import too, listing 42 elements (``LOST_BY_KIND``).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tscontract import parse_contract
from tscontract.contract.lint import lint
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.errors import InputError
from tscontract.interop.odcs.read import Imported, import_document, import_tree, load_document, object_names
from tscontract.interop.odcs.types import Choices

CORPUS = Path(__file__).parent / "odcs_corpus"
DOCUMENTS = sorted(CORPUS.glob("*.odcs.yaml"))
# the one-line refusals that name the option to give, and what a user gives then: (option, value)
_HINTS = (
    (re.compile(r"give --key \(e\.g\. --key ([^)]*)\)"), lambda m: ("key", m.group(1).split(","))),
    (re.compile(r"no primary key: give --key COLUMNS \(the key must include the time column (\w+)"),
     lambda m: ("key", [m.group(1)])),
    (re.compile(r"give --time-column C \(candidates: (\w+)"), lambda m: ("time", m.group(1))),
    (re.compile(r"give --timezone ZONE"), lambda m: ("timezone", "UTC")),
    (re.compile(r"give --decimal P,S"), lambda m: ("decimal", (19, 4))),
    (re.compile(r"give --type (.+?)=(?:string|TYPE) or --drop ([^;]+)"), lambda m: ("type", (m.group(1), m.group(2)))),
    (re.compile(r"(?<!or )give --drop ([^;]+)"), lambda m: ("drop", m.group(1))),
)  # fmt: skip
# the types AdventureWorks defines (its DDL's domains: Name varchar(50), Flag boolean ...), as a user states
# them; a time of day is read as text; other types the document names and does not define are dropped
DEFINED_TYPES = {
    "Name": "string", "Flag": "bool", "NameStyle": "bool", "Phone": "string", "AccountNumber": "string",
    "OrderNumber": "string", "time": "string", "TIME": "string",
}  # fmt: skip
REFUSALS = {  # the refusals no option but --allow-loss lifts, by their reason (the words before any list)
    "no time column: a tscontract contract describes a time series and the object has no timestamp property": 76,
    "the schema object has no properties: a contract declares at least one field": 6,
    "N elements with no exact place in a tscontract contract": 19,
}
LOST_BY_KIND = {  # with --allow-loss: the elements listed, by the start of their reason
    "SQL check": 25,
    "dqx rule": 7,
    "severity": 7,
    "quality rule of type None": 3,
}


@functools.cache
def outcomes(document: str, allow_loss: bool = False) -> tuple[tuple[str, int, Imported | str], ...] | str:
    """Each object's contract (with the number of rounds of hints followed) or one-line refusal; the
    document's refusal."""
    try:
        tree = load_document((CORPUS / document).read_text(encoding="utf-8"))
    except InputError as exc:
        return str(exc)
    found: list[tuple[str, int, Imported | str]] = []
    for name in object_names(tree):
        given: dict[str, Any] = {
            "key": None,
            "time": None,
            "timezone": None,
            "decimal": None,
            "drop": set(),
            "types": {},
            "allow_loss": allow_loss,
        }
        for hints in range(6):
            try:
                (result,) = import_tree(tree, name, given["key"], given["time"], choices=choices_of(given))
            except InputError as exc:
                message = str(exc).removeprefix(f"schema object {name!r}: ")
                followed = follow(message, given)
                if not followed or hints == 5:
                    found.append((name, hints, message))
                    break
            else:
                found.append((name, hints, result))
                break
    return tuple(found)


def follow(message: str, given: dict[str, Any]) -> bool:
    """Give what the refusal asks for, as a user would; False when it asks for nothing new."""
    before = repr(given)
    for pattern, hint in _HINTS:
        for match in pattern.finditer(message):
            option, value = hint(match)
            if option == "type":
                physical, columns = value
                if physical in DEFINED_TYPES:
                    given["types"][physical] = DEFINED_TYPES[physical]
                else:
                    given["drop"] |= set(columns.split(","))
            elif option == "drop":
                given["drop"] |= set(value.split(","))
            else:
                given[option] = value
    return repr(given) != before


def choices_of(given: dict[str, Any]) -> Choices:
    return Choices(
        given["timezone"], given["decimal"], frozenset(given["drop"]), dict(given["types"]), given["allow_loss"]
    )


def reason(refusal: str) -> str:
    return re.sub(r"^\d+ elements? ", "N elements ", refusal.split(" (")[0].split("; give")[0])


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
    assert all(carried(contract.odcs or {}, path) for path in imported.kept), imported.kept
    assert not set(imported.kept) & {loss.path for loss in imported.losses}


def carried(section: dict[str, Any], path: str) -> bool:
    """Whether a kept element is carried in the contract's odcs section (its key, at its level)."""
    found = re.match(r"^schema\[[^]]*\](?:\.properties\[[^]]*\])?\.(\w+)", path)
    if found is None:
        return path.split(".")[0].split("[")[0] in section["document"]
    if ".properties[" in path:
        return any(found.group(1) in entry for entry in section.get("properties", {}).values())
    return found.group(1) in section["object"]


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
            assert result.losses == []  # imported: nothing lost
            checked(result, tmp_path)
    lossy = outcomes(document.name, allow_loss=True)
    assert not isinstance(lossy, str)
    for _, _, result in lossy:  # with --allow-loss: every loss listed with its path, text and reason
        if not isinstance(result, str):
            checked(result, tmp_path)


def test_corpus_counts():
    every = {d.name: outcomes(d.name) for d in DOCUMENTS}
    objects = [o for found in every.values() if not isinstance(found, str) for o in found]
    contracts = [(hints, r) for _, hints, r in objects if not isinstance(r, str)]
    assert (len(every), sum(isinstance(f, str) for f in every.values()), len(objects)) == (119, 8, 270)
    assert Counter(hints for hints, _ in contracts) == {1: 131, 2: 38}
    assert all(not r.losses for _, r in contracts)
    assert Counter(reason(r) for _, _, r in objects if isinstance(r, str)) == REFUSALS
    assert sum(len(r.kept) for _, r in contracts) == 1440
    # the target: every single-object document imports with nothing lost, or is refused in one line
    single = [found[0][2] for found in every.values() if not isinstance(found, str) and len(found) == 1]
    assert all((isinstance(r, str) and "\n" not in r) or not r.losses for r in single)
    assert (len(single), sum(not isinstance(r, str) for r in single)) == (94, 27)
    # --allow-loss: the objects refused for rules tscontract cannot run import, each loss listed
    lossy = [r for d in DOCUMENTS for found in [outcomes(d.name, allow_loss=True)] if not isinstance(found, str)
             for _, _, r in found if not isinstance(r, str)]  # fmt: skip
    losses = [loss.reason for r in lossy for loss in r.losses]
    assert (len(lossy), len(losses), sum(len(r.kept) for r in lossy)) == (188, 42, 1569)
    assert {start: sum(reason.startswith(start) for reason in losses) for start in LOST_BY_KIND} == LOST_BY_KIND


def imported(name: str) -> Imported:
    """The document's one object (the first), imported as a user would: stating what its refusals ask for,
    then ``--allow-loss``."""
    found = outcomes(name, allow_loss=True)
    assert not isinstance(found, str) and not isinstance(found[0][2], str), found
    return found[0][2]


def lost(result: Imported) -> dict[str, str]:
    return {loss.path: loss.reason for loss in result.losses}


def document_import(name: str, key: list[str] | None = None, time: str | None = None, **choices: Any) -> Imported:
    (result,) = import_document(
        (CORPUS / name).read_text(encoding="utf-8"), None, key, time, choices=Choices(**choices)
    )
    return result


def test_v3_1_team_object_physical_names_and_nested_properties():
    name = "dccli--lint-valid-3.1.0.odcs.yaml"
    key = ["shipment_id", "delivery_date"]
    with pytest.raises(InputError, match=r"^nested values .* give --drop inline_object_definition,address$"):
        document_import(name, key)
    nested = frozenset({"inline_object_definition", "address"})
    with pytest.raises(InputError, match=r"^1 element with no exact place .*quality\[0\]: SQL check: reads table"):
        document_import(name, key, drop=nested)
    result = document_import(name, key, drop=nested, allow_loss=True)
    contract = parse_contract(result.text)
    assert contract.owner == "fullfillment"  # v3.1 team: {name, members}, no owner member
    assert contract.fields["delivery_date"].type.text == "timestamp_us_utc"  # physicalType timestamp_tz
    assert result.mapping is not None
    assert (
        "shipment_id:\n    from: sid\n" in result.mapping
        and "drop:\n  - inline_object_definition\n  - address\n" in result.mapping
    )
    losses = lost(result)
    # the nested columns, dropped as asked: said in the contract's note, carried as written, not lost
    assert "schema[shipments2].properties[address]: left out (--drop), the mapping drops column address" in (
        (contract.note or "").splitlines()
    )
    assert contract.odcs is not None
    assert [p["name"] for p in contract.odcs["object"]["properties"]] == ["inline_object_definition", "address"]
    assert list(losses) == ["schema[shipments2].quality[0]"]
    # the query reads another table than the object (shipments2, physicalName shipments_v2)
    assert losses["schema[shipments2].quality[0]"].startswith("SQL check: reads table 'shipments'")
    # two rowCount rules (type library and the default type), both >= 1: one row_count
    assert contract.row_count is not None and (contract.row_count.min, contract.row_count.max) == (1, None)
    assert not any(".quality[1]" in p or ".quality[2]" in p for p in losses)
    # descriptive elements are carried as written in the odcs section, not lost
    assert {"team.members", "servers", "price"} <= set(result.kept) and "servers" not in losses
    assert {"servers", "price", "team"} <= set(contract.odcs["document"])


def test_logical_type_options_become_constraints():
    result = imported("dccli--postgres-odcs_case_sensitive.odcs.yaml")
    contract = parse_contract(result.text)
    assert contract.fields["Field_two"].constraint == ">= 10"  # logicalTypeOptions minimum: 10
    # pattern '[A-Za-z]{2}-\d{3}-[A-Za-z]{2}$' is found anywhere before the end (ODCS, like JSON Schema,
    # searches): the whole-value match gets (?s:.*) in front
    assert contract.fields["Field_one"].constraint == "matches '(?s:.*)[A-Za-z]{2}-\\d{3}-[A-Za-z]{2}$'"
    assert not any("pattern" in p for p in lost(result))


def test_timezone_types_and_unique_off_the_key():
    oracle = document_import(
        "dccli--oracle-datacontract-oracle-odcs.odcs.yaml",
        ["CTC_ID", "FIELD_TIMESTAMP_TZ"],
        "FIELD_TIMESTAMP_TZ",
        timezone="Europe/Paris",
        decimal=(38, 10),
        drop=frozenset({"FIELD_INTERVAL_YEAR", "FIELD_INTERVAL_DAY", "FIELD_BFILE"}),
        allow_loss=True,
    )
    contract = parse_contract(oracle.text)
    assert (
        contract.time.column == "FIELD_TIMESTAMP_TZ" and contract.fields["FIELD_TIMESTAMP_TZ"].type.kind == "timestamp"
    )
    # Oracle's NUMBER holds any precision: the precision stated; TIMESTAMP is a local time in the zone stated
    assert contract.fields["AMOUNT"].type.text == "decimal(38,10)"
    assert oracle.mapping is not None and "FIELD_TIMESTAMP:\n    from: FIELD_TIMESTAMP\n    zone: Europe/Paris\n" in (
        oracle.mapping
    )
    assert contract.fields["FIELD_BINARY_FLOAT"].type.text == "float32" and "FIELD_BFILE" not in contract.fields
    iceberg = document_import("dccli--athena-iceberg-iceberg_example.odcs.yaml", ["product", "ts"], timezone="UTC")
    assert parse_contract(iceberg.text).fields["color"].unique is True  # unique: true off the key
    assert iceberg.losses == []


# what AdventureWorks leaves open, stated: its timestamps are UTC, its numerics (money) 19,4, its domains
AW_STATED = (
    "--timezone", "UTC", "--decimal", "19,4",
    *(a for t, v in DEFINED_TYPES.items() if t not in ("time", "TIME") for a in ("--type", f"{t}={v}")),
)  # fmt: skip


def test_cli_exit_codes_and_json(tmp_path):
    doc = CORPUS / "dccli--lint-valid-3.1.0.odcs.yaml"
    refused = run_cli("import", "odcs", doc)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "does not include the time column delivery_date: give --key" in refused.stderr
    out = tmp_path / "shipments.yaml"
    stated = ("--key", "shipment_id,delivery_date", "--drop", "inline_object_definition", "--drop", "address")
    rule = run_cli("import", "odcs", doc, *stated, "-o", out)
    assert rule.returncode == 2 and rule.stderr.count("\n") == 1 and "give --allow-loss" in rule.stderr
    assert not out.exists()
    lossy = run_cli("import", "odcs", doc, *stated, "-o", out, "--format", "json", "--allow-loss")
    assert lossy.returncode == 0, lossy.stderr
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
    allowed = run_cli("import", "odcs", doc, *stated, "-o", out, "--allow-loss")
    assert allowed.returncode == 0 and "lost: valid_odcs_data_contract: schema[shipments2].quality[0]" in allowed.stdout
    for bad, said in (
        (("--timezone", "Mars/Olympus"), "--timezone 'Mars/Olympus' is not an IANA time zone"),
        (("--timezone", "+25:00"), "--timezone '+25:00' is not a UTC offset (at most +/-18:00)"),
        (("--decimal", "40,2"), "--decimal '40,2': give precision and scale"),
        (("--type", "Name=varchar"), "--type 'Name=varchar': give PHYSICAL=TYPE with a tscontract type"),
    ):
        wrong = run_cli("import", "odcs", doc, *bad)
        assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and said in wrong.stderr, wrong.stderr
    several = run_cli(
        "import", "odcs", CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml", *AW_STATED, "-o", tmp_path / "aw"
    )
    # several objects into a directory: the refused ones listed, the others written, exit 1
    assert several.returncode == 1 and "refused: department: the primary key" in several.stdout, several.stderr
    one = run_cli(
        "import",
        "odcs",
        CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml",
        "--object",
        "employeepayhistory",
        "--timezone",
        "UTC",
        "--decimal",
        "19,4",
        "-o",
        tmp_path / "eph.yaml",
    )
    assert one.returncode == 0, one.stdout + one.stderr
    text = (tmp_path / "eph.yaml").read_text(encoding="utf-8")
    assert "contract: employeepayhistory\n" in text and "rate:\n    type: decimal(19,4)" in text
    # the timestamps without time zone are read as UTC local times by the mapping written beside it
    assert "    zone: UTC\n" in (tmp_path / "eph.mapping.yaml").read_text(encoding="utf-8")


def test_a_directory_gets_every_object_that_imports_and_the_refusals_listed(tmp_path):
    document = CORPUS / "dccli--odcs_v3-adventureworks.odcs.yaml"
    names = object_names(load_document(document.read_text(encoding="utf-8")))
    everything = run_cli("import", "odcs", document, "-o", tmp_path / "none")
    # every object refused: one line (the first refusal), exit 2
    assert everything.returncode == 2 and everything.stderr.count("\n") == 1, everything.stderr
    done = run_cli("import", "odcs", document, *AW_STATED, "-o", tmp_path / "aw", "--format", "json")
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
