"""The ODCS export, proven with the real datacontract-cli (its own venv, tools/requirements/datacontract.txt).

``datacontract lint`` accepts the export of both seed contracts. ``datacontract test`` runs the
export (with a ``servers`` entry added, as a user adds theirs; the examples' exported with their
catalog, inlined) on the bundled examples' good and bad files (and the kPa incident) as CSV and as
Parquet (a ``local`` server, read by DuckDB) and as a PostgreSQL table, and on
the trade-print fixture of issue 14's rules (regex, unique, row count, share thresholds, SQL
checks). Every check datacontract-cli runs is traced to the tscontract check it comes from (the
quality rule's ``id``, or the property it belongs to), and the verdicts agree check by check:
good files pass in both, bad files fail in both on the same rules. What datacontract-cli does
not run is asserted too (types in files, the clauses only tscontract runs).

Parquet and PostgreSQL hold typed values: a bad row whose value has no place in the column type
(a naive instant, a sub-millisecond one, a fifth decimal where four are declared) is left out of
those two, and both tools judge the rows that are there.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
from ruamel.yaml import YAML

from tests.conftest import EXAMPLES, OHLCV_CONTRACT, ROOT, SENSOR_CONTRACT
from tests.engines.test_rules import GOOD_ROWS, bad_rows, trades_contract, trades_csv
from tscontract import load_catalog, load_contract, validate
from tscontract.interop.exports import export
from tscontract.interop.odcs.export import quality_id
from tscontract.plan.checks import build_plan

VENV = ROOT / ".venvs" / "datacontract"
NOW = datetime(2026, 11, 30, 21, 5, tzinfo=UTC)
# the checks the property stating them settles in a typed file or table, not on its rows
_BY_TYPE = ("type", "utc_instant", "time_precision")
_TEXT = ("string", "enum")  # a text column holds any text: an enum's stray member stays in the typed copies

# Runs in the datacontract venv: every `datacontract test` of the proof in one process
# (DataContract.test() is what the command runs), each result's checks as JSON.
_RUNNER = r"""
import json, sys
from datacontract.data_contract import DataContract

jobs, out_path = json.load(sys.stdin)
results = {}
for job in jobs:
    run = DataContract(data_contract_file=job["contract"], server=job["server"]).test()
    results[job["name"]] = {
        "result": str(run.result.value if hasattr(run.result, "value") else run.result),
        "checks": [
            {
                "type": c.type,
                "field": c.field,
                "qualityId": c.qualityId,
                "name": c.name,
                "result": str(c.result.value if hasattr(c.result, "value") else c.result),
                "reason": c.reason,
            }
            for c in run.checks
        ],
        "errors": [l.message for l in run.logs if str(getattr(l.level, "value", l.level)).upper() == "ERROR"],
    }
open(out_path, "w").write(json.dumps(results))
"""


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update({"HOME": str(home), "TZ": "UTC", "DATACONTRACT_POSTGRES_USERNAME": "tsc"})
    env["DATACONTRACT_POSTGRES_PASSWORD"] = "trust"  # the test cluster trusts loopback; the CLI wants one
    return env


def datacontract(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    command = VENV / "bin" / "datacontract"
    assert command.exists(), f"{command} missing: build the tool venvs with tools/venvs.sh"
    return subprocess.run(
        [str(command), *args], capture_output=True, text=True, env=_environment(home), timeout=300, check=False
    )


def run_tests(jobs: list[Any], tmp: Path, runner: str = _RUNNER, timeout: int = 600) -> dict:
    """Run ``runner`` (stdin: the jobs and the output path) in the datacontract venv; its JSON output."""
    python = VENV / "bin" / "python"
    assert python.exists(), f"{python} missing: build the tool venvs with tools/venvs.sh"
    out = tmp / "datacontract-results.json"
    proc = subprocess.run(
        [str(python), "-c", runner],
        input=json.dumps([jobs, str(out)]),
        capture_output=True,
        text=True,
        env=_environment(tmp),
        cwd=tmp,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def load_yaml(text: str) -> dict:
    return YAML(typ="safe").load(io.StringIO(text))


def odcs_document(contract, catalog=None) -> dict:
    (artifact,) = export("odcs", contract, catalog).artifacts
    return load_yaml(artifact.content)


def with_server(document: dict, server: dict, path: Path) -> Path:
    path.write_text(json.dumps({**document, "servers": [server]}), encoding="utf-8")  # JSON is YAML
    return path


# ---------------------------------------------------------------- tracing a check to tscontract's


def tracer(plan):
    """datacontract-cli check -> the id of the tscontract check it runs (None: not from the contract)."""
    by_quality = {quality_id(c.id): c.id for c in plan.checks}
    not_null = {c.columns[0]: c.id for c in plan.checks if c.kind == "not_null"}
    required = next(c.id for c in plan.checks if c.kind == "required_columns")

    def trace(check: dict) -> str | None:
        field = check["field"]
        kind = check["type"]
        if check["qualityId"]:
            return by_quality.get(check["qualityId"])
        if kind == "field_is_present":
            return required
        if kind == "field_required":
            return not_null.get(field)
        if kind == "primary_key_unique":
            return "key.unique"
        if kind in ("field_type", "field_physical_type"):
            return f"field.{field}.type"
        if kind == "field_unique":
            return f"field.{field}.unique"
        if kind == "field_regex":
            return f"field.{field}.constraint"
        return None

    return trace


_SENSOR_FILES = (("good", "good"), ("bad", "bad"), ("kpa", "bad_kpa"))  # kpa: the kPa incident
_WORST = {"passed": 0, "warning": 1, "failed": 2}


def verdicts(result: dict, trace) -> tuple[dict[str, str], list[dict]]:
    """Per tscontract check id: the worst result of the checks datacontract-cli ran for it.

    ``failed``, ``warning`` (a rule of severity warning that fails) or ``passed``. Checks it
    reports without running them (a warning with a reason: types in files) are returned apart.
    """
    ran: dict[str, str] = {}
    not_run = []
    for check in result["checks"]:
        check_id = trace(check)
        assert check_id is not None, f"a datacontract-cli check traced to no tscontract check: {check}"
        if check["result"] == "warning" and "not supported" in (check["reason"] or ""):
            not_run.append({**check, "id": check_id})
            continue
        assert check["result"] in _WORST, check
        if _WORST[check["result"]] >= _WORST[ran.get(check_id, "passed")]:
            ran[check_id] = check["result"]
    return ran, not_run


def expected(report, check_id: str) -> str:
    """tscontract's verdict in datacontract-cli's words: a failed warning is a warning."""
    check = report.check(check_id)
    if check.status == "failed":
        return "warning" if check.severity == "warning" else "failed"
    return check.status


def disagreements(report, ran: dict[str, str]) -> list[str]:
    return [
        f"{check_id}: tscontract {expected(report, check_id)}, datacontract-cli {verdict}"
        for check_id, verdict in sorted(ran.items())
        if expected(report, check_id) != verdict
    ]


# ---------------------------------------------------------------- the files


def typed_rows(plan, csv: Path, report, target: Path) -> Path:
    """``csv`` without the rows whose value has no place in a typed column (per tscontract's report)."""
    typed = {
        c.id for c in plan.checks if c.kind in _BY_TYPE and plan.contract.fields[c.columns[0]].type.kind not in _TEXT
    }
    untyped = {
        e["row"]
        for c in report.checks
        if c.id in typed and c.status == "failed"
        for e in c.examples
        if e.get("row") is not None
    }
    lines = csv.read_text(encoding="utf-8").splitlines()
    target.write_text("\n".join([lines[0]] + [line for i, line in enumerate(lines[1:], 1) if i not in untyped]) + "\n")
    return target


def duckdb_type(physical: str) -> str:
    """DuckDB's spelling of an exported type: its TIMESTAMPTZ takes no precision (microseconds)."""
    return re.sub(r"^TIMESTAMP\(\d\) WITH TIME ZONE$", "TIMESTAMPTZ", physical)


def to_parquet(document: dict, csv: Path, target: Path) -> Path:
    columns = ", ".join(
        f'CAST("{p["name"]}" AS {duckdb_type(p["physicalType"])}) AS "{p["name"]}"'
        for p in document["schema"][0]["properties"]
    )
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"COPY (SELECT {columns} FROM read_csv('{csv}', all_varchar = true)) TO '{target}' (FORMAT parquet)")
    return target


def to_postgres(url: str, document: dict, csv: Path) -> None:
    import psycopg

    schema = document["schema"][0]
    columns = ", ".join(f'"{p["name"]}" {p["physicalType"]}' for p in schema["properties"])
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f'DROP TABLE IF EXISTS "{schema["physicalName"]}"')
        con.execute(f'CREATE TABLE "{schema["physicalName"]}" ({columns})')
        with con.cursor().copy(f'COPY "{schema["physicalName"]}" FROM STDIN WITH (FORMAT csv, HEADER true)') as copy:
            copy.write(csv.read_bytes())


# ---------------------------------------------------------------- lint


@pytest.mark.parametrize("path", [OHLCV_CONTRACT, SENSOR_CONTRACT], ids=["ohlcv_1m", "plant_sensor_reading"])
def test_datacontract_lint_accepts_the_seed_exports(path, tmp_path):
    (artifact,) = export("odcs", load_contract(path)).artifacts
    path = tmp_path / artifact.path
    path.write_text(artifact.content, encoding="utf-8")
    lint = datacontract(
        "lint", str(path), "--output-format", "json", "--output", str(tmp_path / "lint.json"), home=tmp_path
    )
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]
    result = json.loads((tmp_path / "lint.json").read_text())
    assert result["result"] == "passed"
    assert [c["name"] for c in result["checks"]] == ["Data contract is valid against ODCS v3.1.0"]


def test_datacontract_lint_refuses_a_broken_export(tmp_path):
    """The lint is not a rubber stamp: an export whose quality rule lost its query is refused."""
    document = odcs_document(load_contract(OHLCV_CONTRACT))
    rule = next(q for q in document["schema"][0]["quality"] if q["type"] == "sql")
    del rule["query"]
    path = tmp_path / "broken.odcs.yaml"
    path.write_text(json.dumps(document), encoding="utf-8")
    lint = datacontract("lint", str(path), home=tmp_path)
    assert lint.returncode == 1, lint.stdout[-2000:]


# ---------------------------------------------------------------- test


@pytest.fixture(scope="module")
def proof(tmp_path_factory, postgres_url):
    """Every `datacontract test` of the proof, run once, beside tscontract's reports of the same data."""
    tmp = tmp_path_factory.mktemp("datacontract")
    trades = tmp / "trades"
    trades.mkdir()
    datasets = {
        "ohlcv": (
            EXAMPLES / "ohlcv_1m" / "contract.yaml",
            {x: EXAMPLES / "ohlcv_1m" / "data" / f"{x}.csv" for x in ("good", "bad")},
        ),
        "sensor": (
            EXAMPLES / "plant_sensor" / "contract.yaml",
            {x: EXAMPLES / "plant_sensor" / "data" / f"{y}.csv" for x, y in _SENSOR_FILES},
        ),
        "trades": (
            trades_contract(trades),
            {"good": trades_csv(trades, GOOD_ROWS, "good.csv"), "bad": trades_csv(trades, bad_rows(), "bad.csv")},
        ),
    }
    import psycopg

    jobs, reports, plans, documents = [], {}, {}, {}
    for name, (contract_path, files) in datasets.items():
        contract = load_contract(contract_path)
        catalog = contract_path.parent / "catalog.yaml" if name != "trades" else None
        loaded = load_catalog(catalog) if catalog else None
        plans[name] = build_plan(contract, loaded)
        documents[name] = document = odcs_document(contract, loaded)  # catalog clauses inlined
        for label, csv in files.items():
            run = f"{name}-{label}"
            reports[f"{run}-csv"] = report = validate(contract_path, csv, catalog=catalog, now=NOW)
            typed = typed_rows(plans[name], csv, report, tmp / f"{run}.typed.csv")
            parquet = to_parquet(document, typed, tmp / f"{run}.parquet")
            reports[f"{run}-parquet"] = validate(contract_path, parquet, catalog=catalog, now=NOW)
            reports[f"{run}-postgres"] = validate(contract_path, typed, catalog=catalog, now=NOW)
            servers = {"csv": {"type": "local", "path": str(csv), "format": "csv"}}
            servers["parquet"] = {"type": "local", "path": str(parquet), "format": "parquet"}
            if name != "trades":  # one database per file: the table is named after the contract
                database = f"dc_{name}_{label}"
                with psycopg.connect(postgres_url, autocommit=True) as con:
                    con.execute(f"DROP DATABASE IF EXISTS {database}")
                    con.execute(f"CREATE DATABASE {database}")
                base, port = postgres_url.rsplit("/", 1)[0], postgres_url.rsplit(":", 1)[1].split("/")[0]
                to_postgres(f"{base}/{database}", document, typed)
                servers["postgres"] = {
                    "type": "postgres",
                    "host": "127.0.0.1",
                    "port": int(port),
                    "database": database,
                    "schema": "public",
                }
            for fmt, server in servers.items():
                contract_file = with_server(document, {"server": fmt, **server}, tmp / f"{run}-{fmt}.odcs.yaml")
                jobs.append({"name": f"{run}-{fmt}", "contract": str(contract_file), "server": fmt})
    return {"results": run_tests(jobs, tmp), "reports": reports, "plans": plans, "documents": documents, "tmp": tmp}


RUNS = [
    f"{name}-{label}-{fmt}"
    for name in ("ohlcv", "sensor", "trades")
    for label in ("good", "bad", "kpa")
    for fmt in ("csv", "parquet", "postgres")
    if not (name == "trades" and fmt == "postgres") and (label != "kpa" or name == "sensor")
]


@pytest.mark.parametrize("run", RUNS)
def test_datacontract_test_agrees_check_by_check(proof, run):
    name, label, fmt = run.split("-")
    result, report = proof["results"][run], proof["reports"][run]
    assert result["errors"] == [], result["errors"]
    ran, not_run = verdicts(result, tracer(proof["plans"][name]))
    assert disagreements(report, ran) == []
    # good files pass in both, bad files fail in both
    assert report.passed == (label == "good")
    assert result["result"] == max(ran.values(), key=_WORST.__getitem__) or (
        result["result"] == "warning" and not_run and "failed" not in ran.values()
    )
    # what datacontract-cli does not run: types in files (CSV: none; Parquet: reported, not run)
    types = {c.id for c in proof["plans"][name].checks if c.kind == "type"}
    if fmt == "parquet":
        assert {c["type"] for c in not_run} == {"field_type"} and {c["id"] for c in not_run} == types
    else:
        assert not_run == []
    if fmt == "postgres":  # the table's column types against each physicalType
        assert types <= set(ran)


def test_bad_files_fail_in_both_on_the_same_rules(proof):
    """The rules each bad file breaks, as both tools see them (the rows with typed values)."""
    failing = {}
    for run in RUNS:
        if "-bad-" in run or "-kpa-" in run:
            ran, _ = verdicts(proof["results"][run], tracer(proof["plans"][run.split("-")[0]]))
            failing[run] = sorted(k for k, v in ran.items() if v == "failed")
    ohlcv = [
        "field.adjusted.value",
        "field.close.nullable",
        "invariants[0]",
        "invariants[1]",
        "invariants[2]",
        "invariants[3]",
        "key.unique",
        "provenance.source_id",
    ]
    sensor = [
        "catalog.calibration",
        "catalog.series",
        "field.quality.type",
        "field.unit.constraint",
        "invariants[0]",
        "invariants[1]",
        "invariants[2]",
        "key.unique",
        "provenance.calibration_id",
    ]
    kpa = ["field.unit.constraint", "invariants[1]", "invariants[2]"]  # pressures in kPa, the catalog says bar
    trades = ["field.symbol.constraint", "field.trade_id.unique", "sql_checks.no_free_trades"]
    for fmt in ("csv", "parquet", "postgres"):
        assert failing[f"ohlcv-bad-{fmt}"] == ohlcv
        assert failing[f"sensor-bad-{fmt}"] == sensor
        assert failing[f"sensor-kpa-{fmt}"] == kpa
    for fmt in ("csv", "parquet"):
        assert failing[f"trades-bad-{fmt}"] == trades
        ran, _ = verdicts(proof["results"][f"trades-bad-{fmt}"], tracer(proof["plans"]["trades"]))
        assert sorted(k for k, v in ran.items() if v == "warning") == ["invariants[0]", "sql_checks.symbols_seen"]
    for run in ("ohlcv-bad-csv", "sensor-bad-csv"):
        failed = {c.id for c in proof["reports"][run].checks if c.status == "failed"}
        assert set(failing[run]) < failed  # tscontract also fails the rules datacontract-cli does not run


def test_the_rules_each_run_in_datacontract_cli(proof):
    """Issue 14's rules reach datacontract-cli as rules it runs: pattern, unique, rowCount, shares, SQL."""
    result = proof["results"]["trades-bad-csv"]
    by_type = {}
    for check in result["checks"]:
        by_type.setdefault(check["type"], []).append(check)
    assert [c["field"] for c in by_type["field_regex"]] == ["symbol"]
    assert [c["field"] for c in by_type["field_unique"]] == ["trade_id"]
    rules = {c["qualityId"]: c for c in result["checks"] if c["qualityId"]}
    assert rules["batch_row_count"]["type"] == "row_count" and rules["batch_row_count"]["result"] == "passed"
    # 1 row of 20 (5%) is at most the 5% invariants[1] tolerates: passes in both
    assert rules["invariants_1"]["result"] == "passed"
    assert proof["reports"]["trades-bad-csv"].check("invariants[1]").failed_rows == 1
    # a warning fails as a warning in both
    assert rules["invariants_0"]["result"] == "warning"
    assert proof["reports"]["trades-bad-csv"].check("invariants[0]").severity == "warning"
    # 5 symbols (aapl and 'MSFT ' beside AAPL, MSFT, BRK.B) where 1 to 3 are expected: a warning in both
    assert rules["sql_checks_symbols_seen"]["result"] == "warning"
    assert proof["reports"]["trades-bad-csv"].check("sql_checks.symbols_seen").status == "failed"


def test_the_datacontract_test_command_exits_as_the_run_says(proof):
    """The command line (exit code, JSON results) says what the runs above found: ohlcv's bad CSV fails."""
    tmp = proof["tmp"]
    output = tmp / "cli-ohlcv-bad.json"
    contract_file = tmp / "ohlcv-bad-csv.odcs.yaml"
    command = datacontract("test", str(contract_file), "--output-format", "json", "--output", str(output), home=tmp)
    assert command.returncode == 1, command.stdout[-3000:] + command.stderr[-3000:]
    cli = json.loads(output.read_text())
    failed = sorted(
        (c["type"], c["field"] or "", c.get("qualityId") or "") for c in cli["checks"] if c["result"] == "failed"
    )
    run = proof["results"]["ohlcv-bad-csv"]
    assert failed == sorted(
        (c["type"], c["field"] or "", c["qualityId"] or "") for c in run["checks"] if c["result"] == "failed"
    )
    assert len(failed) == 8
