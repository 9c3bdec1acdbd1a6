"""The ODCS round trip, judged by datacontract-cli (its own venv): every schema object of the corpus
(tests/interop/odcs_corpus/: the standard's own examples, bitol-io/open-data-contract-standard docs/examples,
and datacontract-cli's fixtures; see its NOTICE) that imports with nothing lost — after stating what its
refusal names, as a user would (test_odcs_corpus.outcomes) — is exported again by ``export odcs`` and compared
with the original document reduced to that object: ``datacontract breaking ORIGINAL EXPORTED`` reports no
breaking change (level error, the consumer's view) and ``datacontract lint EXPORTED`` passes. Both run in one
process of the datacontract venv (DataContract.breaking and .lint are what the commands run), which checks
the ODCS JSON Schema against its metaschema once instead of four times per object (_RUNNER)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.interop.test_odcs_corpus import CORPUS, DOCUMENTS, outcomes
from tests.interop.test_odcs_datacontract import run_tests
from tscontract import parse_contract
from tscontract.interop.exports import export

_RUNNER = r"""
import json, sys
import jsonschema
from datacontract.data_contract import DataContract

pairs, out_path = json.load(sys.stdin)

# Every lint and both sides of every breaking check the ODCS JSON Schema itself against its metaschema
# first (Validator.check_schema): the same schema every time, and 90% of the run. Checked once per schema
# here; each document is still validated against it in full (iter_errors) as the commands do.
def checked_once(cls):
    check, seen = cls.check_schema, set()
    def check_schema(schema, *args, **kwargs):
        key = json.dumps(schema, sort_keys=True)
        if key not in seen:
            check(schema, *args, **kwargs)  # an invalid schema raises, and is checked again next time
            seen.add(key)
    cls.check_schema = staticmethod(check_schema)

for name in ("Draft4Validator", "Draft6Validator", "Draft7Validator", "Draft201909Validator", "Draft202012Validator"):
    checked_once(getattr(jsonschema, name))

def failing(run):
    return [f"{c.name}: {c.reason}" for c in run.checks
            if str(getattr(c.result, "value", c.result)) not in ("passed", "info", "warning")]

results = {}
for name, original, exported in pairs:
    entry = {"lint": failing(DataContract(data_contract_file=exported).lint()),
             "lint_original": failing(DataContract(data_contract_file=original).lint())}
    try:
        found = DataContract(data_contract_file=original).breaking(DataContract(data_contract_file=exported))
        entry["breaking"] = [f"{e.path}: {e.message}" for e in found.entries
                             if str(getattr(e.level, "value", e.level)) == "error"]
    except Exception as exc:  # an original that does not validate cannot be compared
        entry["breaking"] = [f"not compared: {type(exc).__name__}"]
    results[name] = entry
open(out_path, "w").write(json.dumps(results))
"""
# originals that do not pass datacontract lint themselves (so breaking cannot read them): the exported
# document carries the same fault, as written
INVALID_ORIGINALS = {"dccli--snowflake-import-datacontract--my_data_contract"}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("odcs-roundtrip")
    yaml = YAML()  # round-trip, quotes kept: "23:59:59" stays text for a YAML 1.1 reader
    yaml.preserve_quotes = True
    pairs = []
    for document in DOCUMENTS:
        found = outcomes(document.name)
        if isinstance(found, str):
            continue
        tree = yaml.load((CORPUS / document.name).read_text(encoding="utf-8"))
        for name, _, imported in found:
            if isinstance(imported, str):
                continue
            stem = f"{document.name.removesuffix('.odcs.yaml')}--{imported.contract}"
            (artifact,) = export("odcs", parse_contract(imported.text)).artifacts
            exported = tmp / f"{stem}.exported.yaml"
            exported.write_text(artifact.content, encoding="utf-8")
            original = tmp / f"{stem}.original.yaml"
            reduced = {
                **tree,
                "schema": [o for o in tree["schema"] if str(o.get("name") or o.get("physicalName")) == name],
            }
            with original.open("w", encoding="utf-8") as stream:
                yaml.dump(reduced, stream)
            pairs.append([stem, str(original), str(exported)])
    return judge(pairs, tmp)


def judge(pairs: list[list[str]], tmp: Path) -> dict[str, dict[str, Any]]:
    """(name, original, exported) -> breaking changes, the export's and the original's lint failures."""
    results: dict[str, dict[str, Any]] = run_tests(pairs, tmp, _RUNNER, timeout=3600)
    return results


def test_every_object_that_imports_is_compared(judged):
    assert len(judged) == 169  # the objects test_odcs_corpus imports with nothing lost
    assert any(name.startswith("bitol--") for name in judged)  # the standard's own examples among them


def test_no_round_trip_breaks_a_consumer(judged):
    breaking = {name: r["breaking"] for name, r in judged.items() if r["breaking"] and name not in INVALID_ORIGINALS}
    assert breaking == {}
    for name in INVALID_ORIGINALS:
        assert judged[name]["lint_original"], name  # the original itself does not lint


def test_every_export_lints_as_its_original(judged):
    worse = {name: r["lint"] for name, r in judged.items() if set(r["lint"]) - set(r["lint_original"])}
    assert worse == {}
    assert sum(not r["lint"] for r in judged.values()) == len(judged) - len(INVALID_ORIGINALS)


def test_the_judge_sees_a_broken_round_trip(tmp_path):
    """What the proof would catch: an export that renames the object and drops a property breaks a consumer."""
    text = (CORPUS / "dccli--postgres-odcs.odcs.yaml").read_text(encoding="utf-8")
    found = outcomes("dccli--postgres-odcs.odcs.yaml")
    assert not isinstance(found, str)
    (_, _, imported), *_ = found
    assert not isinstance(imported, str)
    (artifact,) = export("odcs", parse_contract(imported.text)).artifacts
    yaml = YAML(typ="safe", pure=True)
    tree = yaml.load(artifact.content)
    tree["schema"][0]["properties"].pop()
    broken = tmp_path / "broken.yaml"
    with broken.open("w", encoding="utf-8") as stream:
        yaml.dump(tree, stream)
    original = tmp_path / "original.yaml"
    original.write_text(text, encoding="utf-8")
    (result,) = judge([["postgres", str(original), str(broken)]], tmp_path).values()
    assert any("Removed property" in b for b in result["breaking"]), result
