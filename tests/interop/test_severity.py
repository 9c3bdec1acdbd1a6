"""A warning-severity invariant in every export: as a warning where the target has one, else listed.

The contract is the OHLCV example with ``{clause: volume < 1000000, severity: warning}``; the
data is the vendor's half day with one block print of 2.5M shares (tests/gate/bars.py). Soda,
pandera and Great Expectations run for real in their tool environments: each must warn on the
block print, not fail.
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

import pytest
from ruamel.yaml import YAML

from tests.conftest import write
from tests.gate.bars import AFTER_CLOSE, OHLCV, bar_at, contract_text, session_bars, write_bars
from tests.interop._tools import run_in_venv
from tests.interop.test_soda import load_sql, run_soda
from tscontract import load_catalog, load_contract, validate
from tscontract.contract.loader import parse_contract
from tscontract.interop.exports import export
from tscontract.interop.odcs.export import import_odcs

SPIKE = "{clause: volume < 1000000, severity: warning}"
CHECK = "invariants[3]"


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("severity")
    text = contract_text(with_seq=False).replace("  - volume >= 0\n", f"  - volume >= 0\n  - {SPIKE}\n", 1)
    bars = session_bars()
    block = bar_at(bars, "AAPL", "12:41")
    bars[bars.index(block)] = replace(block, volume=Decimal("2500000.0000"))
    data = write_bars(tmp / "bars_block_print.csv", bars)
    # the tool proofs read the contract's columns only: the vendor's sequence number is not one here
    data.write_text("\n".join(_without(line, 9) for line in data.read_text().splitlines()) + "\n")
    contract = write(tmp, text, "ohlcv_warn.yaml")
    return {"contract": load_contract(contract), "path": contract, "data": data, "tmp": tmp}


def _without(line: str, index: int) -> str:
    cells = line.split(",")
    return ",".join(cells[:index] + cells[index + 1 :])


def catalog():
    return load_catalog(OHLCV / "catalog.yaml")


def test_the_engine_warns(case):
    report = validate(case["path"], case["data"], catalog=OHLCV / "catalog.yaml", now=AFTER_CLOSE)
    assert report.check(CHECK).status == "failed" and report.check(CHECK).severity == "warning"
    assert report.passed and [c.id for c in report.failed] == [CHECK]


def test_odcs_carries_the_severity_and_the_import_restores_it(case):
    result = export("odcs", case["contract"], catalog())
    document = YAML(typ="safe").load(result.artifacts[0].content)
    quality = {q["name"]: q for q in document["schema"][0]["quality"]}
    assert quality[CHECK]["severity"] == "warning" and quality["invariants[2]"]["severity"] == "error"
    back = parse_contract(import_odcs(result.artifacts[0].content), "imported.yaml")
    assert [(c.text, c.severity) for c in back.invariants] == [
        (c.text, c.severity) for c in case["contract"].invariants
    ]


def test_jsonschema_lists_the_warning_as_not_exported(case):
    result = export("jsonschema", case["contract"], catalog())
    reasons = {n.check_id: n.reason for n in result.not_exported}
    assert "JSON Schema has no severity" in reasons[CHECK]
    assert "invariants[2]" in result.exported  # volume >= 0, an error, is still a minimum


def test_dbt_marks_the_test_severity_warn(case):
    result = export("dbt", case["contract"], catalog())
    tests = [
        body
        for artifact in result.artifacts
        if artifact.path.endswith(".yml")
        for body in _bodies(YAML(typ="safe").load(artifact.content))
        if body.get("config", {}).get("meta", {}).get("tscontract_check") == CHECK
    ]
    assert tests and all(t["config"]["severity"] == "warn" for t in tests)


def _bodies(node):
    if isinstance(node, dict):
        if "config" in node and "name" in node:
            yield node
        for value in node.values():
            yield from _bodies(value)
    elif isinstance(node, list):
        for value in node:
            yield from _bodies(value)


def test_soda_scan_warns(case):
    result = export("soda", case["contract"], catalog())
    checks = YAML(typ="safe").load(result.artifacts[0].content)["checks for ohlcv_1m"]
    (spike,) = [
        c["failed rows"] for c in checks if "failed rows" in c and c["failed rows"]["name"] == "volume < 1000000"
    ]
    assert spike["warn"] == "when > 0"
    job = {
        "name": "block-print",
        "load": load_sql(case["contract"], "ohlcv_1m", case["data"]),
        "checks": result.artifacts[0].content,
        "now": AFTER_CLOSE.isoformat(),
    }
    scan = run_soda([job], case["tmp"])["block-print"]
    assert scan["errors"] is None, scan["errors"]
    outcomes = {c["name"]: c["outcome"] for c in scan["checks"]}
    assert outcomes["volume < 1000000"] == "warn" and outcomes["volume >= 0"] == "pass"


PANDERA = """
import importlib.util
import warnings


def main(args):
    import pandera.pandas as pa
    from _tools import load_typed_csv

    spec = importlib.util.spec_from_file_location("ohlcv_warn", args["module"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    frame = load_typed_csv(args["data"], args["types"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module.schema.validate(frame, lazy=True)
            errors = []
        except pa.errors.SchemaErrors as exc:
            errors = sorted({str(c) for c in exc.failure_cases["check"]})
    warned = [str(w.message) for w in caught if "SchemaWarning" in type(w.message).__name__]
    return {"errors": errors, "warnings": warned}
"""


def test_pandera_warns(case):
    result = export("pandera", case["contract"], catalog())
    (module,) = result.write(case["tmp"] / "pandera")
    assert "raise_warning=True" in module.read_text()
    types = {name: spec.type.to_json() for name, spec in case["contract"].fields.items()}
    ran = run_in_venv("pandera", PANDERA, {"module": str(module), "data": str(case["data"]), "types": types})
    assert not any(CHECK in e for e in ran["errors"]), ran["errors"]
    assert any("volume < 1000000" in w for w in ran["warnings"]), ran["warnings"]


GX = """
import json


def main(args):
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from _tools import load_typed_csv

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    with open(args["suite"], encoding="utf-8") as handle:
        suite = gx.ExpectationSuite(**json.load(handle))
    batch = context.data_sources.add_pandas(name="bars").add_dataframe_asset(name="ohlcv_1m")
    frame = load_typed_csv(args["data"], args["types"])
    validation = batch.add_batch_definition_whole_dataframe("all").get_batch(
        batch_parameters={"dataframe": frame}
    ).validate(suite)
    return [
        {"check": r.expectation_config.meta["check_id"], "severity": str(r.expectation_config.severity.value),
         "success": r.success}
        for r in validation.results
        if r.expectation_config.meta["check_id"] == args["check"]
    ]
"""


def test_gx_marks_the_expectation_severity_warning(case):
    result = export("gx", case["contract"], catalog())
    (suite,) = result.write(case["tmp"] / "gx")
    expectations = [e for e in json.loads(suite.read_text())["expectations"] if e["meta"]["check_id"] == CHECK]
    assert expectations and all(e["severity"] == "warning" for e in expectations)
    types = {name: spec.type.to_json() for name, spec in case["contract"].fields.items()}
    ran = run_in_venv("gx", GX, {"suite": str(suite), "data": str(case["data"]), "types": types, "check": CHECK})
    assert ran and all(r["severity"] == "warning" for r in ran) and not all(r["success"] for r in ran)
