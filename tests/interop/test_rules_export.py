"""Issue 14's rules in the exports, run by the real tools on the trade-print fixture.

regex (``matches``), ``unique`` on a non-key column, ``row_count`` and SQL checks: what each
target states, and -- for GX and Soda, in their own venvs -- that the tool fails the same rules
on the same rows as ``tscontract validate``. JSON Schema's pattern is checked with jsonschema.
"""

from __future__ import annotations

import json

from tests.engines.test_rules import GOOD_ROWS, TRADES, bad_rows, trades_contract, trades_csv
from tests.interop._tools import compare, disagreements, run_in_venv
from tests.interop.test_gx import SCRIPT as GX_SCRIPT
from tests.interop.test_soda import check_ids, checks_yaml, load_sql, run_soda
from tscontract import load_contract, validate
from tscontract.interop.exports import export
from tscontract.plan.checks import build_plan

NEW_RULES = ("field.symbol.constraint", "field.trade_id.unique", "batch.row_count", "invariants[1]", "series.pattern")
# the series' naming scheme too: every symbol is a ticker (rows 2 and 7 of the bad file are not)
SERIES = TRADES.replace(
    "key: [symbol, trade_time, seq]\n",
    "key: [symbol, trade_time, seq]\nseries: {column: symbol, pattern: '[A-Z]{1,5}([.][A-Z])?'}\n",
)


def _files(tmp_path):
    return {
        "good": trades_csv(tmp_path, GOOD_ROWS, "good.csv"),
        "bad": trades_csv(tmp_path, bad_rows(), "bad.csv"),
        "empty": trades_csv(tmp_path, [], "empty.csv"),
    }


def test_what_each_target_states(tmp_path):
    contract = load_contract(trades_contract(tmp_path))
    gx = export("gx", contract)
    suite = json.loads(gx.artifacts[0].content)
    kinds = {(e["meta"]["check_id"], e["type"]): e["kwargs"] for e in suite["expectations"]}
    assert kinds[("field.symbol.constraint", "expect_column_values_to_match_regex")]["regex"] == (
        "\\A(?:^[A-Z]{1,5}([.][A-Z])?$)\\Z"  # GX searches with Python's re: its $ also takes a final '\\n'
    )
    assert ("field.trade_id.unique", "expect_column_values_to_be_unique") in kinds
    assert kinds[("batch.row_count", "expect_table_row_count_to_be_between")] == {"min_value": 1, "max_value": 100}
    assert [kwargs["mostly"] for (check_id, _), kwargs in kinds.items() if check_id == "invariants[1]"] == [0.95]
    assert "sql_checks.no_free_trades" in {n.check_id for n in gx.not_exported}

    soda = checks_yaml(export("soda", contract))
    assert "duplicate_count(trade_id) = 0" in soda
    assert "row_count between 1 and 100" in soda
    assert "no_free_trades = 0:" in soda and "FROM equity_trades WHERE price <= 0" in soda
    assert "symbols_seen:" in soda and "warn: when not between 1 and 3" in soda

    dbt = export("dbt", contract)
    text = next(a.content for a in dbt.artifacts if a.path.endswith(".yml"))
    assert "- unique:" in text and "REGEXP_FULL_MATCH(symbol" in text
    skipped = {n.check_id: n.reason for n in dbt.not_exported}
    assert "max_failing" in skipped["invariants[1]"] and "batch.row_count" in skipped

    pandera = export("pandera", contract).artifacts[0].content
    assert "pa.Check(_unique_values, name='field.trade_id.unique'" in pandera
    assert "r.matches(r['symbol'], '^[A-Z]{1,5}([.][A-Z])?$')" in pandera

    schema = json.loads(export("jsonschema", contract).artifacts[0].content)
    symbol = json.dumps(schema["properties"]["symbol"])
    assert r'"pattern": "^(?:^[A-Z]{1,5}([.][A-Z])?$)(?![\\s\\S])"' in symbol  # the end of the text, as ECMA's $


def test_json_schema_pattern_rejects_the_rows_the_engine_rejects(tmp_path):
    from jsonschema import Draft202012Validator

    contract_path = trades_contract(tmp_path)
    schema = json.loads(export("jsonschema", load_contract(contract_path)).artifacts[0].content)
    validator = Draft202012Validator(schema["properties"]["symbol"] | {"$defs": schema["$defs"]})
    symbols = [row.split(",")[0] for row in bad_rows()]
    rejected = [i for i, s in enumerate(symbols, 1) if not validator.is_valid(s)]
    report = validate(contract_path, trades_csv(tmp_path, bad_rows()))
    assert rejected == [e["row"] for e in report.check("field.symbol.constraint").examples] == [2, 7]


def test_gx_agrees_on_regex_unique_row_count_and_mostly(tmp_path):
    contract_path = trades_contract(tmp_path, SERIES)
    contract = load_contract(contract_path)
    result = export("gx", contract)
    (suite_path,) = result.write(tmp_path / "gx")
    files = _files(tmp_path)
    job = {
        "contract": contract.contract,
        "suite": str(suite_path),
        "types": {name: spec.type.to_json() for name, spec in contract.fields.items()},
        "files": {label: str(path) for label, path in files.items()},
    }
    tool = run_in_venv("gx", GX_SCRIPT, {"jobs": [job]})["contracts"][contract.contract]
    per_file = {
        label: compare(validate(contract_path, path, examples=1000), tool["files"][label], list(NEW_RULES))
        for label, path in files.items()
    }
    assert not disagreements(per_file), disagreements(per_file)
    assert per_file["bad"]["field.trade_id.unique"]["tool_rows"] == [5, 12]
    assert per_file["bad"]["field.symbol.constraint"]["tool_rows"] == [2, 7]
    assert per_file["bad"]["series.pattern"]["tool_rows"] == [2, 7]
    assert per_file["empty"]["batch.row_count"]["tool"] == "failed"
    assert per_file["bad"]["invariants[1]"]["tool"] == "passed"  # 1 of 20 rows: within mostly 0.95


def test_soda_agrees_on_unique_row_count_and_sql_checks(tmp_path):
    contract_path = trades_contract(tmp_path, SERIES)
    contract = load_contract(contract_path)
    result = export("soda", contract)
    plan = build_plan(contract)
    files = _files(tmp_path)
    jobs = [
        {"name": label, "load": load_sql(contract, contract.contract, path), "checks": checks_yaml(result), "now": ""}
        for label, path in files.items()
    ]
    scans = run_soda(jobs, tmp_path)
    for label, path in files.items():
        scan = scans[label]
        assert scan["errors"] is None, scan["errors"]
        outcomes: dict[str, set[str]] = {}
        for check in scan["checks"]:
            for check_id in check_ids(result, plan, check):  # failed rows checks: by their clause
                outcomes.setdefault(check_id, set()).add(check["outcome"])
        report = validate(contract_path, path)
        for check_id in (
            "field.trade_id.unique",
            "batch.row_count",
            "sql_checks.no_free_trades",
            "sql_checks.symbols_seen",
            "series.pattern",
        ):
            ours = report.check(check_id)
            tool = outcomes[check_id]
            expected = "pass" if ours.status == "passed" else ("warn" if ours.severity == "warning" else "fail")
            assert tool == {expected}, (label, check_id, tool, ours.status)
    assert "sql_checks.no_free_trades" in result.exported and plan.by_id("sql_checks.symbols_seen")


def test_pandera_agrees_on_regex_and_unique(tmp_path):
    from tests.interop.test_pandera import SCRIPT as PANDERA_SCRIPT

    contract_path = trades_contract(tmp_path, SERIES)
    contract = load_contract(contract_path)
    result = export("pandera", contract)
    (module_path,) = result.write(tmp_path / "pandera")
    files = _files(tmp_path)
    job = {
        "contract": contract.contract,
        "module": str(module_path),
        "module_name": module_path.stem,
        "types": {name: spec.type.to_json() for name, spec in contract.fields.items()},
        "files": {label: str(path) for label, path in files.items()},
    }
    tool = run_in_venv("pandera", PANDERA_SCRIPT, {"jobs": [job]})["contracts"][contract.contract]
    rules = ["field.symbol.constraint", "field.trade_id.unique", "series.pattern"]  # warnings: no failure cases
    assert set(rules) <= set(result.exported)
    per_file = {
        label: compare(validate(contract_path, path, examples=1000), tool["files"][label]["failed"], rules)
        for label, path in files.items()
    }
    assert not disagreements(per_file), disagreements(per_file)
    assert per_file["bad"]["field.trade_id.unique"]["tool_rows"] == [5, 12]
    assert per_file["bad"]["field.symbol.constraint"]["tool_rows"] == [2, 7]
    assert per_file["bad"]["series.pattern"]["tool_rows"] == [2, 7]


def test_dbt_build_agrees_on_regex_and_unique(tmp_path):
    from tests.interop.test_dbt import make_project, run_dbt

    contract_path = trades_contract(tmp_path, SERIES)
    contract = load_contract(contract_path)
    result = export("dbt", contract)
    files = {label: path for label, path in _files(tmp_path).items() if label != "empty"}
    for label, path in files.items():
        make_project(tmp_path / f"dbt-{label}", contract, result, path)
    runs = run_dbt([{"name": label, "dir": str(tmp_path / f"dbt-{label}"), "args": []} for label in files], tmp_path)
    expected = {"passed": {"pass", "success"}, "failed": {"fail", "error"}, "warning": {"warn"}}
    for label, path in files.items():
        report = validate(contract_path, path)
        statuses: dict[str, set[str]] = {}
        for node in runs[label]["nodes"]:
            statuses.setdefault(node["meta"].get("tscontract_check"), set()).add(node["status"])
        for check_id in ("field.symbol.constraint", "field.trade_id.unique", "invariants[0]", "series.pattern"):
            ours = report.check(check_id)
            verdict = "warning" if ours.status == "failed" and ours.severity == "warning" else ours.status
            assert statuses[check_id] <= expected[verdict], (label, check_id, statuses[check_id], verdict)
    assert runs["bad"]  # not vacuous: the bad file fails both rules
    bad = validate(contract_path, files["bad"])
    assert bad.check("field.trade_id.unique").status == bad.check("field.symbol.constraint").status == "failed"
