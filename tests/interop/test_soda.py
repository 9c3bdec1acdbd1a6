"""The Soda export, proven with a real soda-core scan (SodaCL, soda-core v3 in the tool venv).

Each fixture CSV is loaded into DuckDB typed as the contract says, and the exported checks file is
scanned with ``NOW`` pinned as ``validate(now=...)`` pins it: on good.csv every check passes; on
bad.csv the failing checks are exactly those of the clauses tscontract's own engine fails on that
file, compared per exported check id (a check's ``identity`` names its check ids).
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import EXAMPLES, ROOT
from tests.interop._tools import freshness_contract, freshness_data
from tscontract import load_catalog, load_contract, validate
from tscontract.errors import InputError
from tscontract.interop.exports import export
from tscontract.interop.exports.dbt import column_type
from tscontract.interop.exports.soda import soda_duration
from tscontract.plan.checks import build_plan

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)
SODA_PYTHON = ROOT / ".venvs" / "soda" / "bin" / "python"
PARITY: dict[str, dict[str, object]] = {}

# Runs in the soda venv: every scan in one process, each on its own in-memory DuckDB.
_RUNNER = r"""
import json, sys
from pathlib import Path
import duckdb
from soda.scan import Scan

jobs, out_path = json.load(sys.stdin)
results = {}
for job in jobs:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(job["load"])
    scan = Scan()
    scan.set_scan_definition_name(job["name"])
    scan.set_data_source_name("proof")
    scan.add_duckdb_connection(con, "proof")
    scan.add_variables({"NOW": job["now"]})
    scan.add_sodacl_yaml_str(job["checks"])
    scan.execute()
    checks = [{"identity": c.get("source_identity"), "name": c["name"], "outcome": c["outcome"]}
              for c in scan.get_scan_results()["checks"]]
    results[job["name"]] = {"checks": checks, "errors": scan.get_error_logs_text()}
Path(out_path).write_text(json.dumps(results))
"""


def run_soda(jobs: list[dict], tmp: Path) -> dict:
    """Run each job's scan in the soda tool venv; results per job name."""
    assert SODA_PYTHON.exists(), f"{SODA_PYTHON} missing: build the tool venvs with tools/venvs.sh"
    home = tmp / "home"
    (home / ".soda").mkdir(parents=True)
    # soda-core reads ~/.soda/config.yml; no usage statistics leave this machine
    (home / ".soda" / "config.yml").write_text("send_anonymous_usage_stats: false\n")
    out = tmp / "soda-results.json"
    proc = subprocess.run(
        [str(SODA_PYTHON), "-c", _RUNNER],
        input=json.dumps([jobs, str(out)]),
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        cwd=home,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    return json.loads(out.read_text())


def load_sql(contract, table: str, csv: Path, casts=None, extra: str = "") -> str:
    """The fixture as a DuckDB table typed as the contract says (``casts`` overrides a column's type)."""
    types = {name: column_type(spec.type) for name, spec in contract.fields.items()}
    types.update(casts or {})
    columns = ", ".join(f"CAST({name} AS {typ}) AS {name}" for name, typ in types.items())
    return f"CREATE TABLE {table} AS SELECT {columns}{extra} FROM read_csv('{csv}', all_varchar = true)"


def checks_yaml(result) -> str:
    (artifact,) = result.artifacts
    return artifact.content


@pytest.fixture(scope="module")
def proof(tmp_path_factory):
    """Every scan of the proof, run once: the exports, the scan results, the engine's reports."""
    tmp = tmp_path_factory.mktemp("soda")
    datasets = {
        "ohlcv": (OHLCV / "contract.yaml", OHLCV),
        "sensor": (SENSOR / "contract.yaml", SENSOR),
        "fresh": (freshness_contract(tmp), freshness_data(tmp)),
    }
    now = NOW.isoformat()
    jobs, exports, plans, engine = [], {}, {}, {}
    for name, (contract_path, data) in datasets.items():
        contract, catalog = load_contract(contract_path), load_catalog(data / "catalog.yaml")
        exports[name] = result = export("soda", contract, catalog)
        plans[name] = build_plan(contract, catalog)
        for label in ("good", "bad"):
            csv, run = data / "data" / f"{label}.csv", f"{name}-{label}"
            table = contract.contract
            jobs.append(
                {"name": run, "load": load_sql(contract, table, csv), "checks": checks_yaml(result), "now": now}
            )
            engine[run] = validate(contract_path, csv, catalog=data / "catalog.yaml", now=NOW)
    ohlcv, good = load_contract(OHLCV / "contract.yaml"), OHLCV / "data" / "good.csv"
    checks = checks_yaml(exports["ohlcv"])
    jobs += [
        {
            "name": "double",
            "load": load_sql(ohlcv, "ohlcv_1m", good, {"close": "double"}),
            "checks": checks,
            "now": now,
        },
        {
            "name": "extra",
            "load": load_sql(ohlcv, "ohlcv_1m", good, extra=", 1 AS vendor_flags"),
            "checks": checks,
            "now": now,
        },
    ]
    return {"exports": exports, "plans": plans, "soda": run_soda(jobs, tmp), "engine": engine}


def check_ids(result, plan, check: dict) -> list[str]:
    """The check ids a Soda check enforces: from its identity, else (failed rows) from its clause."""
    if check["identity"]:  # ohlcv_1m/schema.columns,field.symbol.type#part
        return check["identity"].split("/", 1)[1].split("#")[0].split(",")
    named = [c.id for c in plan.checks if c.id in result.exported and c.clause == check["name"]]
    assert len(named) == 1, (check["name"], named)
    return named


def verdicts(result, plan, scan: dict) -> dict[str, str]:
    """Per exported check id: failed when a Soda check enforcing it failed."""
    assert scan["errors"] is None, scan["errors"]
    by_id: dict[str, list[str]] = {}
    for check in scan["checks"]:
        for check_id in check_ids(result, plan, check):
            by_id.setdefault(check_id, []).append(check["outcome"])
    assert set(by_id) == set(result.exported), "a Soda check for a clause the export does not claim, or none"
    return {k: "failed" if "fail" in outcomes else "passed" for k, outcomes in by_id.items()}


@pytest.mark.parametrize("dataset", ["ohlcv", "sensor", "fresh"])
def test_soda_scan_fails_exactly_the_clauses_the_engine_fails(proof, dataset):
    result = proof["exports"][dataset]
    failed = {}
    for label in ("good", "bad"):
        soda = verdicts(result, proof["plans"][dataset], proof["soda"][f"{dataset}-{label}"])
        report = proof["engine"][f"{dataset}-{label}"]
        engine = {check_id: report.check(check_id).status for check_id in result.exported}
        assert set(engine.values()) <= {"passed", "failed"}, engine
        assert soda == engine, (dataset, label, {k: (soda[k], engine[k]) for k in soda if soda[k] != engine[k]})
        failed[label] = {k for k, v in soda.items() if v == "failed"}
        for check_id, verdict in soda.items():
            entry = PARITY.setdefault(check_id, {"good": "passed", "bad": "passed", "agrees": True})
            if verdict == "failed":
                entry[label] = "failed"
    assert not failed["good"] and failed["bad"]
    if dataset == "fresh":
        outcomes = {c["identity"] or c["name"]: c["outcome"] for c in proof["soda"]["fresh-bad"]["checks"]}
        # the table's newest bar (MSFT 21:30) is fresh; AAPL's newest is not
        assert outcomes["ohlcv_1m/freshness#table"] == "pass"
        assert outcomes["max_age: 370m"] == "fail"


def test_schema_check_fails_on_a_column_type_and_an_unknown_column(proof):
    double = {c["identity"]: c["outcome"] for c in proof["soda"]["double"]["checks"]}
    schema = next(i for i in double if "schema.columns" in i)
    assert double[schema] == "fail" and double["ohlcv_1m/schema.strict"] == "pass"
    extra = {c["identity"]: c["outcome"] for c in proof["soda"]["extra"]["checks"]}
    assert extra[schema] == "pass" and extra["ohlcv_1m/schema.strict"] == "fail"


def test_checks_file_states_each_clause_verbatim():
    contract, catalog = load_contract(SENSOR / "contract.yaml"), load_catalog(SENSOR / "catalog.yaml")
    result = export("soda", contract, catalog)
    (artifact,) = result.artifacts
    assert artifact.path == "plant_sensor_reading.soda.yml"
    checks = YAML(typ="safe").load(artifact.content)["checks for plant_sensor_reading"]
    entries = [next(iter(c.items())) for c in checks]
    by_identity = {body.get("identity") or body["name"]: (definition, body) for definition, body in entries}
    definition, body = by_identity["value is null only when quality = bad"]
    assert definition == "failed rows" and body["name"] == "value is null only when quality = bad"
    assert body["fail condition"] == "NOT coalesce((NOT value IS NULL OR COALESCE((quality = 'bad'), FALSE)), true)"
    assert by_identity["plant_sensor_reading/field.quality.type"] == (
        "invalid_count(quality) = 0",
        {"name": "enum[good, suspect, bad]", "identity": "plant_sensor_reading/field.quality.type"}
        | {"valid values": ["good", "suspect", "bad"]},
    )
    assert "missing_count(calibration_id) = 0" in [d for d, _ in entries]
    assert "duplicate_count(series_id, event_ts, revision) = 0" in [d for d, _ in entries]
    schema = entries[0][1]
    assert entries[0][0] == "schema" and schema["fail"]["when required column missing"] == list(contract.fields)
    assert schema["fail"]["when wrong column type"]["event_ts"] == "timestamp with time zone"
    assert schema["fail"]["when wrong column type"]["value"] == "decimal(12,4)"
    assert "fail query" in by_identity["per series from catalog; tolerance +/-10% of interval"][1]
    for skipped in result.not_exported:
        assert f"#   {skipped.check_id} [{skipped.clause}]: " in artifact.content
    assert {n.check_id for n in result.not_exported} == {
        "source.rows",  # how the input was read, before there is a table
        "field.event_ts.type",
        "field.value.type",
        "field.revision.type",
        "time.timezone",
    }


def test_range_clauses_become_min_and_max(tmp_path):
    result = export("soda", load_contract(OHLCV / "contract.yaml"), load_catalog(OHLCV / "catalog.yaml"))
    checks = YAML(typ="safe").load(result.artifacts[0].content)["checks for ohlcv_1m"]
    volume = [c for c in checks if "min(volume) >= 0" in c]
    assert volume == [{"min(volume) >= 0": {"name": "volume >= 0", "identity": "ohlcv_1m/invariants[2]"}}]
    skipped = {n.check_id for n in result.not_exported}
    assert {"time.cadence", "time.session"} <= skipped  # they need exchange sessions
    fresh = export("soda", load_contract(freshness_contract(tmp_path)), load_catalog(OHLCV / "catalog.yaml"))
    text = fresh.artifacts[0].content
    assert "freshness(bar_start) < 6h10m:" in text and "${NOW}" in text


def test_durations_and_options():
    assert soda_duration(Decimal(900)) == "15m"
    assert soda_duration(Decimal(90061)) == "1d1h1m1s"
    assert soda_duration(Decimal("0.5")) is None
    contract = load_contract(SENSOR / "contract.yaml")
    skipped = {n.check_id for n in export("soda", contract).not_exported}
    assert {"invariants[1]", "invariants[2]", "field.unit.constraint", "time.cadence"} <= skipped
    assert "checks for readings:" in export("soda", contract, table="readings").artifacts[0].content
    with pytest.raises(InputError, match="unknown soda export option"):
        export("soda", contract, tabel="x")


def test_zz_write_parity():
    """Record the per-clause verdicts for tools/parity_matrix.py (out/parity/soda.json)."""
    assert PARITY, "the agreement tests did not run"
    out = ROOT / "out" / "parity"
    out.mkdir(parents=True, exist_ok=True)
    (out / "soda.json").write_text(json.dumps(PARITY, indent=2, sort_keys=True) + "\n")
