"""The dbt export, proven with the real dbt (dbt-duckdb, in the tool venv tools/venvs.sh builds).

A tiny dbt project per fixture: a source reading the fixture CSV as text, a model that casts it to
the contract's columns, the exported model YAML and generic tests. ``dbt build`` runs offline
(no ``dbt deps``): on good.csv everything passes; on bad.csv the failing tests are exactly those of
the clauses tscontract's own engine fails on that file, compared per exported check id; a model
whose column type differs from the contract fails the build.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import EXAMPLES, ROOT
from tests.interop._tools import freshness_contract, freshness_data
from tscontract import load_catalog, load_contract, validate
from tscontract.errors import InputError
from tscontract.interop.exports import export
from tscontract.interop.exports.dbt import MACROS_PATH, column_type

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)
DBT_PYTHON = ROOT / ".venvs" / "dbt" / "bin" / "python"

# Runs in the dbt venv: one `dbt build` per project, in-process (dbtRunner) to pay start-up once.
_RUNNER = r"""
import json, sys
from pathlib import Path
from dbt.cli.main import dbtRunner

jobs, out_path = json.load(sys.stdin)
runner = dbtRunner()
results = {}
for job in jobs:
    d = Path(job["dir"])
    res = runner.invoke(["build", "--no-partial-parse", "--no-use-colors", "--project-dir", str(d),
                         "--profiles-dir", str(d), "--target-path", str(d / "target"),
                         "--log-path", str(d / "logs"), *job["args"]])
    nodes = []
    if (d / "target" / "run_results.json").exists():
        manifest = json.loads((d / "target" / "manifest.json").read_text())["nodes"]
        for r in json.loads((d / "target" / "run_results.json").read_text())["results"]:
            node = manifest.get(r["unique_id"], {})
            nodes.append({"id": r["unique_id"], "type": node.get("resource_type"), "status": r["status"],
                          "message": r.get("message"), "meta": node.get("config", {}).get("meta", {})})
    results[job["name"]] = {"success": res.success, "exception": repr(res.exception), "nodes": nodes}
Path(out_path).write_text(json.dumps(results))
"""


def run_dbt(jobs: list[dict], tmp: Path) -> dict:
    """Run ``dbt build`` for each job's project in the dbt tool venv; results per job name."""
    assert DBT_PYTHON.exists(), f"{DBT_PYTHON} missing: build the tool venvs with tools/venvs.sh"
    out = tmp / "dbt-results.json"
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_VERSION_CHECK": "false"}
    proc = subprocess.run(
        [str(DBT_PYTHON), "-c", _RUNNER],
        input=json.dumps([jobs, str(out)]),
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    return json.loads(out.read_text())


def make_project(directory: Path, contract, result, csv: Path, materialized: str = "view", casts=None) -> None:
    """A dbt project: the fixture as a source read as text, a model casting it, the exported files."""
    model = next(a.path for a in result.artifacts if a.path.endswith(".yml")).split("/")[-1][:-4]
    directory.mkdir(parents=True)
    (directory / "dbt_project.yml").write_text(
        "name: tscontract_proof\nversion: '1.0'\nconfig-version: 2\nprofile: tscontract_proof\n"
        f"models:\n  tscontract_proof:\n    +materialized: {materialized}\n"
    )
    (directory / "profiles.yml").write_text(
        "tscontract_proof:\n  target: proof\n  outputs:\n    proof:\n      type: duckdb\n"
        f"      path: {directory / 'proof.duckdb'}\n      threads: 1\n      settings: {{TimeZone: UTC}}\n"
    )
    source = {
        "version": 2,
        "sources": [
            {
                "name": "fixture",
                "tables": [{"name": "raw", "config": {"external_location": f"read_csv('{csv}', all_varchar = true)"}}],
            }
        ],
    }
    (directory / "models").mkdir()
    (directory / "models" / "fixture.yml").write_text(json.dumps(source))  # JSON is YAML
    types = {name: column_type(spec.type) for name, spec in contract.fields.items()}
    types.update(casts or {})
    columns = ",\n  ".join(f"cast({name} as {typ}) as {name}" for name, typ in types.items())
    (directory / "models" / f"{model}.sql").write_text(
        f"select\n  {columns}\nfrom {{{{ source('fixture', 'raw') }}}}\n"
    )
    result.write(directory)


NOW_VARS = ["--vars", "{tscontract_now: '2026-11-30T21:05:00+00:00'}"]  # as validate(now=NOW)
PARITY: dict[str, dict[str, object]] = {}


@pytest.fixture(scope="module")
def proof(tmp_path_factory):
    """Every dbt build of the proof, run once: the exports, the dbt results, the engine's reports."""
    tmp = tmp_path_factory.mktemp("dbt")
    datasets = {
        "ohlcv": (OHLCV / "contract.yaml", OHLCV),
        "sensor": (SENSOR / "contract.yaml", SENSOR),
        "fresh": (freshness_contract(tmp), freshness_data(tmp)),
    }
    jobs, exports, engine = [], {}, {}
    for name, (contract_path, data) in datasets.items():
        contract, catalog = load_contract(contract_path), load_catalog(data / "catalog.yaml")
        exports[name] = result = export("dbt", contract, catalog)
        for label in ("good", "bad"):
            csv, run = data / "data" / f"{label}.csv", f"{name}-{label}"
            make_project(tmp / run, contract, result, csv)
            jobs.append({"name": run, "dir": str(tmp / run), "args": NOW_VARS})
            engine[run] = validate(contract_path, csv, catalog=data / "catalog.yaml", now=NOW)
    ohlcv = load_contract(OHLCV / "contract.yaml")
    make_project(tmp / "double", ohlcv, exports["ohlcv"], OHLCV / "data" / "good.csv", casts={"close": "double"})
    make_project(tmp / "table", ohlcv, exports["ohlcv"], OHLCV / "data" / "bad.csv", materialized="table")
    jobs += [{"name": run, "dir": str(tmp / run), "args": []} for run in ("double", "table")]
    return {"exports": exports, "dbt": run_dbt(jobs, tmp), "engine": engine}


def verdicts(result, run: dict) -> dict[str, str]:
    """Per exported check id: failed when a dbt node enforcing it failed (the model, for the contract)."""
    model = next(n for n in run["nodes"] if n["type"] == "model")
    by_contract = model["meta"]["tscontract"]["enforced_by_contract"]
    claimed = {n["meta"].get("tscontract_check") for n in run["nodes"] if n["type"] == "test"}
    assert claimed <= set(result.exported), "a dbt test for a clause the export does not claim"
    out = {}
    for check_id in result.exported:
        nodes = [n for n in run["nodes"] if n["meta"].get("tscontract_check") == check_id]
        if check_id in by_contract:
            nodes.append(model)
        assert nodes, f"no dbt node enforces {check_id}"
        assert all(n["status"] in ("pass", "fail", "success", "error") for n in nodes), nodes
        out[check_id] = "failed" if any(n["status"] in ("fail", "error") for n in nodes) else "passed"
    return out


@pytest.mark.parametrize("dataset", ["ohlcv", "sensor", "fresh"])
def test_dbt_build_fails_exactly_the_clauses_the_engine_fails(proof, dataset):
    result = proof["exports"][dataset]
    failed = {}
    for label in ("good", "bad"):
        run = proof["dbt"][f"{dataset}-{label}"]
        dbt = verdicts(result, run)
        report = proof["engine"][f"{dataset}-{label}"]
        engine = {check_id: report.check(check_id).status for check_id in result.exported}
        assert set(engine.values()) <= {"passed", "failed"}, engine
        assert dbt == engine, (dataset, label, {k: (dbt[k], engine[k]) for k in dbt if dbt[k] != engine[k]})
        assert run["success"] == (label == "good"), (dataset, label, run["exception"])
        failed[label] = {k for k, v in dbt.items() if v == "failed"}
        for check_id, verdict in dbt.items():
            entry = PARITY.setdefault(check_id, {"good": "passed", "bad": "passed", "agrees": True})
            if verdict == "failed":
                entry[label] = "failed"
    assert not failed["good"] and failed["bad"]
    if dataset == "fresh":
        assert "freshness" in failed["bad"]  # AAPL's newest bar is too old; MSFT's is not


def test_enforced_contract_fails_the_build_when_a_column_type_differs(proof):
    run = proof["dbt"]["double"]
    model = next(n for n in run["nodes"] if n["type"] == "model")
    assert not run["success"] and model["status"] == "error"
    assert "enforced contract" in model["message"] and "DOUBLE" in model["message"]
    assert {n["status"] for n in run["nodes"] if n["type"] == "test"} == {"skipped"}


def test_not_null_constraints_reject_the_batch_when_the_model_is_a_table(proof):
    run = proof["dbt"]["table"]
    model = next(n for n in run["nodes"] if n["type"] == "model")
    assert not run["success"] and model["status"] == "error"
    assert "NOT NULL constraint" in model["message"], model["message"]


def model_yaml(result) -> dict:
    artifact = next(a for a in result.artifacts if a.path.startswith("models/"))
    return YAML(typ="safe").load(artifact.content)["models"][0]


def declared_tests(model: dict) -> list[tuple[str, dict]]:
    entries = [*model.get("data_tests", [])]
    for column in model["columns"]:
        entries += column.get("data_tests", [])
    return [next(iter(e.items())) for e in entries]


def test_model_yaml_states_each_clause_verbatim():
    contract, catalog = load_contract(SENSOR / "contract.yaml"), load_catalog(SENSOR / "catalog.yaml")
    result = export("dbt", contract, catalog)
    assert [a.path for a in result.artifacts] == ["models/plant_sensor_reading.yml", MACROS_PATH]
    model = model_yaml(result)
    assert model["config"]["contract"] == {"enforced": True}
    columns = {c["name"]: c for c in model["columns"]}
    assert list(columns) == list(contract.fields)
    assert columns["value"]["data_type"] == "decimal(12,4)" and columns["event_ts"]["data_type"] == "timestamptz"
    assert columns["calibration_id"]["constraints"] == [{"type": "not_null"}]
    assert "constraints" not in columns["value"] and "tests" not in model
    tests = declared_tests(model)
    names = [body["name"] for _, body in tests]
    assert len(names) == len(set(names))
    by_check = {body["config"]["meta"]["tscontract_check"]: (name, body) for name, body in tests}
    name, body = by_check["invariants[0]"]
    assert name == "expression_is_true" and body["description"] == "value is null only when quality = bad"
    assert (
        body["arguments"]["expression"] == "coalesce((NOT value IS NULL OR COALESCE((quality = 'bad'), FALSE)), true)"
    )
    assert by_check["field.quality.type"][1]["arguments"]["values"] == ["good", "suspect", "bad"]
    assert by_check["key.unique"][1]["arguments"]["combination_of_columns"] == ["series_id", "event_ts", "revision"]
    assert "'bar'" in by_check["invariants[2]"][1]["arguments"]["expression"]  # the catalog, inlined
    text = result.artifacts[0].content
    for skipped in result.not_exported:
        assert f"#   {skipped.check_id} [{skipped.clause}]: " in text
    assert {n.check_id for n in result.not_exported} == {
        "source.rows",  # how the input was read, before there is a table
        "field.event_ts.type",
        "field.value.type",
        "field.revision.type",
        "time.timezone",
    }
    macros = result.artifacts[1].content
    for test in ("expression_is_true", "unique_combination_of_columns", "tscontract_cadence"):
        assert f"{{% test {test}(model" in macros
    assert "accepted_range" not in macros  # only the generic tests the YAML uses


def test_range_clauses_become_accepted_range():
    result = export("dbt", load_contract(OHLCV / "contract.yaml"), load_catalog(OHLCV / "catalog.yaml"))
    volume = next(c for c in model_yaml(result)["columns"] if c["name"] == "volume")
    name, body = next(iter(volume["data_tests"][1].items()))
    assert name == "accepted_range" and body["description"] == "volume >= 0"
    assert body["arguments"] == {"min_value": 0, "inclusive": True}
    assert body["config"]["meta"]["tscontract_check"] == "invariants[2]"


def test_dbt_utils_mode_references_the_package_and_writes_no_macros(tmp_path):
    contract = load_contract(freshness_contract(tmp_path))
    result = export("dbt", contract, load_catalog(OHLCV / "catalog.yaml"), dbt_tests="dbt_utils")
    assert [a.path for a in result.artifacts] == ["models/ohlcv_1m.yml"]
    used = {name for name, _ in declared_tests(model_yaml(result))}
    assert used == {
        "not_null",
        "accepted_values",
        "dbt_utils.expression_is_true",
        "dbt_utils.unique_combination_of_columns",
        "dbt_utils.accepted_range",
        "dbt_utils.recency",
    }
    recency = next(b for n, b in declared_tests(model_yaml(result)) if n == "dbt_utils.recency")
    assert recency["arguments"] == {
        "field": "bar_start",
        "datepart": "second",
        "interval": 22200,
        "group_by_columns": ["symbol"],
    }
    sensor = export(
        "dbt", load_contract(SENSOR / "contract.yaml"), load_catalog(SENSOR / "catalog.yaml"), dbt_tests="dbt_utils"
    )
    assert "time.cadence" in {n.check_id for n in sensor.not_exported}


def test_catalog_clauses_are_skipped_without_a_catalog():
    result = export("dbt", load_contract(SENSOR / "contract.yaml"))
    skipped = {n.check_id: n.reason for n in result.not_exported}
    for check_id in ("invariants[1]", "invariants[2]", "field.unit.constraint", "catalog.calibration", "time.cadence"):
        assert "catalog" in skipped[check_id], check_id
        assert check_id not in result.exported
    assert "invariants[0]" in result.exported


def test_options_are_checked():
    contract = load_contract(OHLCV / "contract.yaml")
    with pytest.raises(InputError, match="dbt_tests"):
        export("dbt", contract, dbt_tests="both")
    with pytest.raises(InputError, match="unknown dbt export option"):
        export("dbt", contract, modle="x")
    assert export("dbt", contract, model="fct_bars").artifacts[0].path == "models/fct_bars.yml"


def test_zz_write_parity():
    """Record the per-clause verdicts for tools/parity_matrix.py (out/parity/dbt.json)."""
    assert PARITY, "the agreement tests did not run"
    out = ROOT / "out" / "parity"
    out.mkdir(parents=True, exist_ok=True)
    (out / "dbt.json").write_text(json.dumps(PARITY, indent=2, sort_keys=True) + "\n")
