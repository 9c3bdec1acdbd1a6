"""tscontract's own exports re-imported: the fields, types, nullability, key, time column and
invariants come back, for Avro, Protobuf, JSON Schema and dbt, from both example contracts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tscontract import parse_contract
from tscontract.contract.loader import load_contract
from tscontract.interop.exports import export
from tscontract.interop.imports import import_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "examples" / "ohlcv_1m" / "contract.yaml", ROOT / "examples" / "plant_sensor" / "contract.yaml"]
ARTIFACT = {"avro": ".avsc", "protobuf": ".proto", "jsonschema": ".schema.json", "dbt": ".yml"}


def _exported(fmt: str, path: Path) -> tuple[str, str]:
    result = export(fmt, load_contract(path))
    (artifact,) = [a for a in result.artifacts if a.path.endswith(ARTIFACT[fmt])]
    return artifact.content, Path(artifact.path).name


@pytest.mark.parametrize("fmt", sorted(ARTIFACT))
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_an_export_comes_back(fmt, path):
    original = load_contract(path)
    text, name = _exported(fmt, path)
    (imported,) = import_file(fmt, text, name, None, None, None)
    assert imported.losses == [], [loss.line() for loss in imported.losses]
    again = parse_contract(imported.text)
    assert (again.contract, again.version) == (original.contract, original.version)
    assert again.key == original.key
    assert again.time.column == original.time.column and again.time.precision == original.time.precision
    assert list(again.fields)[: len(original.fields)] == list(original.fields)
    for field_name, spec in original.fields.items():
        assert again.fields[field_name].type.text == spec.type.text, field_name
        assert again.is_nullable(field_name) == original.is_nullable(field_name), field_name
        assert again.fields[field_name].unit == spec.unit, field_name
    assert [c.text for c in again.invariants] == [c.text for c in original.invariants]
    assert sorted(again.provenance_required) == sorted(original.provenance_required)
    if fmt in ("avro", "protobuf"):  # the record doc carries the time rules and the revision policy whole
        assert again.time.cadence is not None and again.time.cadence.text == original.time.cadence.text
        assert original.revision_policy is not None and again.revision_policy is not None
        # the export's doc line leaves out the policy's free-text note
        assert again.revision_policy == original.revision_policy.model_copy(update={"note": None})


def test_the_cli_round_trip_and_its_json(tmp_path):
    avsc = tmp_path / "ohlcv.avsc"
    avsc.write_text(_exported("avro", EXAMPLES[0])[0])
    back = tmp_path / "back.yaml"
    done = run_cli("import", "avro", avsc, "-o", back, "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["lost"] == 0 and report["contracts"][0]["contract_file"].endswith("back.yaml")
    linted = run_cli("lint", back)
    assert linted.returncode == 0, linted.stdout
    data, catalog = ROOT / "examples" / "ohlcv_1m" / "data", ROOT / "examples" / "ohlcv_1m" / "catalog.yaml"
    checked = run_cli("validate", back, data / "good.csv", "-c", catalog)
    assert checked.returncode == 0, checked.stdout[-2000:]
    failed = run_cli("validate", back, data / "bad.csv", "-c", catalog)
    assert failed.returncode == 1
