"""The GX export run by Great Expectations on generated clauses fails the rows the reference fails (#25).

Each generated case (clauses and rows, as in the other differential tests) is exported as an expectation
suite and validated in Great Expectations 1.x (the tool venv) over a pandas frame of the rows with the
contract's types (decimals as ``Decimal``, instants as UTC timestamps, nullable integers and booleans).
For each exported clause the rows GX reports unexpected must be the rows the reference fails; a clause
GX cannot state exactly (float columns, arithmetic) is listed as not exported, with its reason.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.contract.clause_batches import DEEP, expected_failures, generated_batches
from tests.contract.clause_strategies import COLUMNS, EXACT, _literal, contract_text, reference_row
from tests.interop._tools import run_in_venv
from tscontract import parse_contract
from tscontract.interop.exports import gx as gx_export
from tscontract.plan.checks import build_plan

SCRIPT = """
import json
from decimal import Decimal


def frame(rows, kinds):
    import pandas as pd

    columns = {}
    for name, kind in kinds.items():
        values = [row.get(name) for row in rows]
        if kind == "decimal":
            columns[name] = pd.Series([None if v is None else Decimal(v) for v in values], dtype=object)
        elif kind == "int":
            columns[name] = pd.Series(values, dtype="Int64")
        elif kind == "bool":
            columns[name] = pd.Series(values, dtype="boolean")
        elif kind == "timestamp":
            columns[name] = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601")
        elif kind == "float":
            columns[name] = pd.Series([float("nan") if v == "NaN" else v for v in values], dtype=object)
        else:
            columns[name] = pd.Series(values, dtype=object)
    return pd.DataFrame(columns)


def main(args):
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    source = context.data_sources.add_pandas(name="generated")
    batches = source.add_dataframe_asset(name="generated").add_batch_definition_whole_dataframe("all")
    out = []
    for case in args["cases"]:
        suite = gx.ExpectationSuite(**case["suite"])
        data = frame(case["rows"], args["kinds"])
        validation = batches.get_batch(batch_parameters={"dataframe": data}).validate(suite, result_format="COMPLETE")
        failed = {}
        for result in validation.results:
            info = result.exception_info or {}
            if info.get("raised_exception"):
                raise AssertionError(f"{result.expectation_config.type}: {info.get('exception_message')}")
            check_id = result.expectation_config.meta["check_id"]
            entry = failed.setdefault(check_id, {"rows": [], "column_level": False})
            if result.success:
                continue
            indices = result.result.get("unexpected_index_list")
            if indices is None:
                entry["column_level"] = True
            else:
                entry["rows"] = sorted(set(entry["rows"]) | {int(i) + 1 for i in indices})
        out.append(failed)
    return out
"""


def record(values: dict, number: int) -> dict[str, Any]:
    """A row as JSON for the frame: decimals and instants as text, NaN as "NaN" (JSON has none)."""
    row: dict[str, Any] = {}
    for name, value in reference_row(values, number).items():
        if isinstance(value, Decimal):
            value = str(value)
        elif isinstance(value, float) and value != value:
            value = "NaN"
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        row[name] = value
    return row


@st.composite
def simple_clauses(draw: st.DrawFn) -> str:
    """The forms GX states: an exact column against literals, two columns compared, 'is null or'."""
    column = draw(st.sampled_from(EXACT))
    literal = draw(_literal())
    shape = draw(st.sampled_from(["compare", "between", "in", "pair", "null_or", "text"]))
    if shape == "compare":
        return f"{column} {draw(st.sampled_from(['<', '<=', '>', '>=', '=', '<>']))} {literal}"
    if shape == "between":
        return f"{column} between {literal} and {draw(_literal())}"
    if shape == "in":
        return f"{column} in ({literal}, {draw(_literal())})"
    if shape == "pair":
        return f"{column} {draw(st.sampled_from(['<', '<=', '>', '>=']))} {draw(st.sampled_from(EXACT))}"
    if shape == "null_or":
        return f"{column} is null or {column} >= {literal}"
    return f"q in ('good', 'bad') or s = {draw(st.sampled_from(['', 'x', 'é']))!r}"


# of the generated clauses GX states few (no arithmetic, no floats): at least one in SHARE
SHARE = 40


@pytest.mark.parametrize("source", ["generated", "simple"])
def test_gx_fails_the_rows_the_reference_fails(source: str) -> None:
    """Pairs per source (fast / deep, at most): before 80 / 200 suites x 4 x 12 = 3,840 / 9,600; now 2 / 4 x 3,000"""
    count = 4 if DEEP else 2
    # at least 10 clauses on 60 rows a suite: a suite's start costs GX more than its rows
    cases = generated_batches(count, least=(10, 60), clause=simple_clauses() if source == "simple" else None)
    compared = assert_gx_agrees(cases)
    # not vacuous: GX states some of the clauses; of the generated ones few (no arithmetic, no floats,
    # see SHARE), of the simple ones most
    clauses = sum(len(texts) for texts, _ in cases)
    assert compared >= clauses // (SHARE if source == "generated" else 2), (compared, clauses)


def test_gx_counter_examples() -> None:
    nulls = {name: None for name in COLUMNS}
    cases = [
        # an empty range: GX fails it whatever the rows, so it is "every value null"
        (["d6 between 4096 and 2"], [nulls, {**nulls, "d6": Decimal("3.000000")}]),
        (["i between 5 and 5"], [{**nulls, "i": 5}, {**nulls, "i": 6}]),
    ]
    assert assert_gx_agrees(cases) == 2
    assert [expected_failures(t[0], b) for t, b in cases] == [[2], [2]]


def assert_gx_agrees(cases: list[tuple[list[str], list[dict]]]) -> int:
    """Run every case's suite in GX; each exported clause's unexpected rows are the reference's; how many."""
    jobs, exported = [], []
    for texts, batch in cases:
        plan = build_plan(parse_contract(contract_text(texts)))
        result = gx_export.export(plan)
        (artifact,) = result.artifacts
        clauses = {c.id: c.clause for c in plan.checks if c.id.startswith("invariants[") and c.id in result.exported}
        exported.append(clauses)
        jobs.append({"suite": json.loads(artifact.content), "rows": [record(v, n) for n, v in enumerate(batch)]})
    fields = parse_contract(contract_text(["i is null"])).fields
    kinds = {"series_id": "string", "ts": "timestamp"} | {name: fields[name].type.kind for name in COLUMNS}
    found = run_in_venv("gx", SCRIPT, {"cases": jobs, "kinds": kinds})
    compared = 0
    for (_texts, batch), clauses, failed in zip(cases, exported, found, strict=True):
        for check_id, text in clauses.items():
            expected = expected_failures(text, batch)
            entry = failed.get(check_id, {"rows": [], "column_level": False})
            if entry["column_level"]:
                assert expected, (text, batch)
            else:
                assert entry["rows"] == expected, (text, batch)
            compared += 1
    return compared
