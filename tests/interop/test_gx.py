"""The Great Expectations export: the suite, run by GX 1.x, judges the examples as tscontract does.

The proof runs the real GX in ``.venvs/gx`` (tools/venvs.sh): the suite JSON is loaded with
``gx.ExpectationSuite(**json)``, each example file is loaded as a typed frame and validated
as a whole-dataframe batch (result format COMPLETE), and the unexpected rows of the
expectations sharing a check id must agree with ``tscontract.validate`` on the same file
for every exported check.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import write
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tests.interop._tools import (
    add_column,
    compare,
    disagreements,
    parity_matrix,
    pinned_version,
    run_in_venv,
    write_parity,
)
from tscontract import load_catalog, load_contract, validate
from tscontract.interop.exports import export
from tscontract.interop.exports import gx as gx_export
from tscontract.plan.checks import build_plan

# the example files, and good.csv with an unknown column (schema.strict)
EXAMPLES = {OHLCV: ("good", "bad", "bad_lots", "extra_column"), SENSOR: ("good", "bad", "bad_kpa", "extra_column")}

# Inside .venvs/gx: load each suite from its JSON, validate each file as a pandas batch and
# union the unexpected rows of the expectations that share a check id.
SCRIPT = """
import json


def main(args):
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from _tools import load_typed_csv

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    source = context.data_sources.add_pandas(name="examples")
    out = {"version": gx.__version__, "contracts": {}}
    for job in args["jobs"]:
        with open(job["suite"], encoding="utf-8") as handle:
            suite = gx.ExpectationSuite(**json.load(handle))
        batches = source.add_dataframe_asset(name=job["contract"]).add_batch_definition_whole_dataframe("all")
        metas = [e.meta for e in suite.expectations]
        files = {}
        for label, path in job["files"].items():
            frame = load_typed_csv(path, job["types"])
            validation = batches.get_batch(batch_parameters={"dataframe": frame}).validate(
                suite, result_format="COMPLETE"
            )
            failed = {}
            for result in validation.results:
                raised = [info for info in (result.exception_info or {}).values() if isinstance(info, dict)]
                raised.append(result.exception_info or {})
                for info in raised:
                    if info.get("raised_exception"):
                        raise AssertionError(f"{result.expectation_config.type}: {info.get('exception_message')}")
                if result.success:
                    continue
                check_id = result.expectation_config.meta["check_id"]
                entry = failed.setdefault(check_id, {"rows": set(), "column_level": False})
                indices = result.result.get("unexpected_index_list")
                if indices is None:
                    entry["column_level"] = True
                else:
                    entry["rows"].update(int(i) + 1 for i in indices)
            files[label] = {
                check_id: {"rows": sorted(entry["rows"]), "column_level": entry["column_level"]}
                for check_id, entry in failed.items()
            }
        out["contracts"][job["contract"]] = {"files": files, "metas": metas, "count": len(suite.expectations)}
    return out
"""


def _data_file(dataset, label, tmp_path):
    if label == "extra_column":
        target = tmp_path / f"{dataset.name}_extra_column.csv"
        return add_column(dataset / "data" / "good.csv", target, "vendor_flags", "x")
    return dataset / "data" / f"{label}.csv"


def _plan(dataset, with_catalog=True):
    contract = load_contract(dataset / "contract.yaml")
    catalog = load_catalog(dataset / "catalog.yaml") if with_catalog else None
    return contract, build_plan(contract, catalog)


def _suite(result):
    (artifact,) = result.artifacts
    return json.loads(artifact.content)


def test_suite_has_the_to_json_dict_shape_and_every_clause_verbatim():
    for dataset in EXAMPLES:
        contract, plan = _plan(dataset)
        result = gx_export.export(plan)
        assert result.artifacts[0].path == f"{contract.contract}.gx.json"
        suite = _suite(result)
        assert set(suite) == {"name", "id", "expectations", "meta", "notes"}
        assert suite["name"] == f"{contract.contract}_v{contract.version.split('.')[0]}"
        assert suite["notes"] == result.header_lines()
        skipped = {n.check_id for n in result.not_exported}
        assert sorted(result.exported + sorted(skipped)) == sorted(c.id for c in plan.checks)
        for expectation in suite["expectations"]:
            assert set(expectation) == {"type", "kwargs", "meta"}
            check = plan.by_id(expectation["meta"]["check_id"])
            assert expectation["meta"] == {"clause": check.clause, "check_id": check.id}
        assert {e["meta"]["check_id"] for e in suite["expectations"]} == set(result.exported)


def test_how_the_ohlcv_clauses_map():
    _, plan = _plan(OHLCV)
    suite = _suite(gx_export.export(plan))
    by_check = {}
    for e in suite["expectations"]:
        by_check.setdefault(e["meta"]["check_id"], []).append((e["type"], e["kwargs"]))
    pair = "expect_column_pair_values_a_to_be_greater_than_b"
    either = "either_value_is_missing"
    assert by_check["invariants[0]"] == [  # a chain is two pairs sharing the clause
        (pair, {"column_A": "open", "column_B": "low", "or_equal": True, "ignore_row_if": either}),
        (pair, {"column_A": "high", "column_B": "open", "or_equal": True, "ignore_row_if": either}),
    ]
    between = "expect_column_values_to_be_between"
    assert by_check["invariants[2]"] == [(between, {"column": "volume", "min_value": 0, "strict_min": False})]
    assert by_check["invariants[3]"] == [(between, {"column": "trade_count", "min_value": 0, "strict_min": False})]
    assert by_check["field.adjusted.value"] == [
        ("expect_column_values_to_be_in_set", {"column": "adjusted", "value_set": [False]})
    ]
    assert by_check["key.unique"] == [
        ("expect_compound_columns_to_be_unique", {"column_list": ["symbol", "bar_start", "revision"]})
    ]
    assert by_check["schema.strict"][0][1]["exact_match"] is True
    assert by_check["schema.columns"][0][1]["exact_match"] is False
    ((_, utc),) = by_check["time.timezone"]
    assert re.search(utc["regex"], "2026-11-30 14:30:00+00:00") and re.search(utc["regex"], "2026-11-30T14:30:00.000Z")
    assert not re.search(utc["regex"], "2026-11-30 14:45:00")  # naive
    assert not re.search(utc["regex"], "2026-11-30T14:45:00+01:00")
    assert re.search(utc["regex"], "not a time")  # the type's business, as in tscontract
    ((_, precision),) = by_check["time.precision"]
    for text, fits in [("14:45:00.000123+00:00", False), ("14:45:00.123000+00:00", True), ("14:45:00+00:00", True)]:
        assert bool(re.search(precision["regex"], "2026-11-30 " + text)) is fits, text


def test_sensor_catalog_clauses_become_one_expectation_per_series():
    _, plan = _plan(SENSOR)
    suite = _suite(gx_export.export(plan))
    bounds = [e["kwargs"] for e in suite["expectations"] if e["meta"]["check_id"] == "invariants[1]"]
    assert [(b["row_condition"]["parameter"], b["min_value"], b["max_value"]) for b in bounds] == [
        ("P-101.discharge_pressure", 0, 60),
        ("T-204.bearing_temp", -40, 150),
        ("F-310.inlet_flow", 0, 500),
    ]
    (null_rule,) = [e["kwargs"] for e in suite["expectations"] if e["meta"]["check_id"] == "invariants[0]"]
    assert null_rule == {
        "column": "value",
        "row_condition": {
            "type": "or",
            "conditions": [
                {"type": "comparison", "column": {"name": "quality"}, "operator": "!=", "parameter": "bad"},
                {"type": "nullity", "column": {"name": "quality"}, "is_null": True},
            ],
        },
    }
    assert "catalog.calibration" in {n.check_id for n in gx_export.export(plan).not_exported}


def test_clauses_outside_the_stable_forms_are_listed_with_a_reason(tmp_path):
    path = write(
        tmp_path,
        "contract: forms\nversion: 1.0.0\nkey: [t]\ntime: {column: t, precision: ms}\nfields:\n"
        "  t: {type: timestamp_ms_utc}\n  a: {type: decimal(9,2)}\n  b: {type: decimal(9,2)}\n"
        "  q: {type: enum[good, bad]}\n  seen: {type: timestamp_us_utc}\n"
        "invariants:\n  - a + b > 2\n  - a != b\n  - a >= 0.1\n  - a >= 0.5\n  - q in (good, bad)\n"
        "  - a is null or a <= b\n  - a is null only when q in (bad)\n  - a = b\n",
    )
    result = gx_export.export(build_plan(load_contract(path)))
    skipped = {n.check_id: n.reason for n in result.not_exported}
    assert "a + b is an expression" in skipped["invariants[0]"]
    assert "no stable expectation" in skipped["invariants[1]"]
    assert "not exact as a JSON double" in skipped["invariants[2]"]
    assert "column equality" in skipped["invariants[7]"]
    assert {"invariants[3]", "invariants[4]", "invariants[5]", "invariants[6]"} <= set(result.exported)
    suite = _suite(result)
    precision = {
        e["kwargs"]["column"]: e["kwargs"]["regex"]
        for e in suite["expectations"]
        if e["meta"]["check_id"] == "time.precision"
    }
    assert precision == {"t": gx_export.precision_regex("ms"), "seen": gx_export.precision_regex("us")}
    (implication,) = [e for e in suite["expectations"] if e["meta"]["check_id"] == "invariants[6]"]
    assert implication["kwargs"]["row_condition"]["conditions"][0] == {
        "type": "comparison",
        "column": {"name": "q"},
        "operator": "NOT_IN",
        "parameter": ["bad"],
    }


def test_without_a_catalog_the_catalog_clauses_are_listed_not_dropped():
    result = export("gx", load_contract(SENSOR / "contract.yaml"))
    skipped = {n.check_id: n.reason for n in result.not_exported}
    for check_id in (
        "invariants[1]",
        "invariants[2]",
        "field.unit.constraint",
        "catalog.series",
        "catalog.calibration",
    ):
        assert "needs the series catalog" in skipped[check_id], check_id
    with pytest.raises(TypeError, match="unknown gx export option"):
        gx_export.export(build_plan(load_contract(SENSOR / "contract.yaml")), style="fancy")


def test_gx_agrees_with_tscontract_on_the_example_files(tmp_path):
    jobs, plans = [], {}
    for dataset, labels in EXAMPLES.items():
        contract, plan = _plan(dataset)
        result = gx_export.export(plan)
        (suite_path,) = result.write(tmp_path)
        plans[contract.contract] = (dataset, labels, result, plan)
        jobs.append(
            {
                "contract": contract.contract,
                "suite": str(suite_path),
                "types": {name: spec.type.to_json() for name, spec in contract.fields.items()},
                "files": {label: str(_data_file(dataset, label, tmp_path)) for label in labels},
            }
        )
    tool = run_in_venv("gx", SCRIPT, {"jobs": jobs})

    matrix, problems = {}, []
    for name, (dataset, labels, result, plan) in plans.items():
        ran = tool["contracts"][name]
        assert ran["count"] == len(_suite(result)["expectations"])  # GX loaded every expectation
        assert all(meta["clause"] == plan.by_id(meta["check_id"]).clause for meta in ran["metas"])
        per_file = {}
        for label in labels:
            report = validate(
                dataset / "contract.yaml",
                _data_file(dataset, label, tmp_path),
                catalog=dataset / "catalog.yaml",
                now=NOW,
                examples=1000,
            )
            per_file[label] = compare(report, ran["files"][label], result.exported)
        problems += [f"{name} {p}" for p in disagreements(per_file)]
        matrix[name] = parity_matrix(per_file)
        caught = {i for i, v in per_file["bad"].items() if v["tool"] == "failed"}
        assert len(caught) >= 9, caught  # not vacuous: most exported clauses fire on bad.csv
        assert per_file["bad"]["invariants[0]"]["tool_rows"] == per_file["bad"]["invariants[0]"]["rows"] != []
    write_parity("gx", matrix)
    assert not problems, "\n".join(problems)
    assert tool["version"] == pinned_version("gx", "great_expectations")
