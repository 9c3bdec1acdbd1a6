"""Every export that carries row clauses means what the reference says (issue #25), or refuses the clause by name.

Clauses and rows are generated (``tests/contract/clause_strategies.py``); for each clause the
rows an export's translation fails must be the rows :func:`tscontract.contract.semantics.holds`
fails. The fast profile runs in the default test command; ``TSCONTRACT_CLAUSE_PROFILE=deep``
runs many more cases.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given

from tests.contract.clause_batches import (
    DEEP,
    TYPES,
    Batch,
    Verdict,
    assert_agrees,
    batches,
    expected_failures,
    generated_batches,
    profile,
)
from tests.contract.clause_strategies import COLUMNS, START, contract_text, reference_row, table
from tests.interop._tools import run_in_venv
from tests.interop.test_dbt import _RUNNER, DBT_PYTHON
from tscontract import parse_contract
from tscontract.contract.row_parser import parse_invariant
from tscontract.contract.row_resolve import resolve_columns
from tscontract.interop.exports import export, pandera_runtime
from tscontract.interop.exports import pandera as pandera_export
from tscontract.interop.exports.cel import CelUnsupported, compile_predicate
from tscontract.interop.exports.dbt import column_type, holds_sql, range_bounds
from tscontract.interop.exports.jsonschema import TAG
from tscontract.plan.checks import build_plan

_IMPORTS = """
import math
import operator
import re
from datetime import date, datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal, localcontext

import duckdb
import numpy as np
import pandas as pd
"""


def pandas_runtime() -> dict[str, Any]:
    """The generated pandera module's runtime with the module's own imports (pandera itself is not needed)."""
    namespace: dict[str, Any] = {"CATALOG": {}}
    exec(_IMPORTS + pandera_runtime.RUNTIME, namespace)
    return namespace


RUNTIME = pandas_runtime()
# the kinds of clause the CEL export refuses, by the reason it gives
CEL_REFUSALS = (
    "'/' divides in binary64",
    "a float may be NaN or ±Inf",
    "has no CEL form",
    "compares ",
    "values have no order in CEL",
    "arithmetic on ",
    "length() of a value that is not text",
    "coalesce() of values of different kinds",
    "least()/greatest() are null where an operand is null",
    "lower()/upper(): confluent-kafka's CEL executor has no",
)


def predicate(text: str):
    return resolve_columns(parse_invariant(text), TYPES).predicate


def frame(batch: list[dict], backing: str) -> pd.DataFrame:
    """The batch as a typed pandas frame: Arrow-backed, or object columns of Python values."""
    arrow = table(batch)
    if backing == "arrow":
        return arrow.to_pandas(types_mapper=pd.ArrowDtype)
    return pd.DataFrame({name: pd.Series(arrow.column(name).to_pylist(), dtype=object) for name in arrow.column_names})


def pandera_verdicts(texts: list[str], batch: list[dict], backing: str = "arrow") -> dict[str, list[int]]:
    """Per clause, the rows its pandera translation fails, judged by the runtime over one frame of the batch."""
    rows = RUNTIME["_Rows"](frame(batch, backing))
    found = {}
    for text in texts:
        holds = eval(f"r.holds({pandera_export.translate(predicate(text))})", {**RUNTIME, "r": rows})
        found[text] = [int(n) + 1 for n in np.flatnonzero(~holds.to_numpy(dtype=bool))]
    return found


def pandera_failures(text: str, batch: list[dict], backing: str = "arrow") -> list[int]:
    return pandera_verdicts([text], batch, backing)[text]


@profile(fast=3, deep=24)
@given(batches())
def test_pandera_fails_the_rows_the_reference_fails(batch: Batch) -> None:
    """Each batch on both backings (an example drew one before). Pairs (fast / deep, at most): before
    150 / 1,500 x 3 x 12 = 5,400 / 54,000; now 3 / 24 x 25 x 120, twice."""
    texts, rows = batch
    for backing in ("arrow", "object"):
        assert_agrees(texts, rows, pandera_verdicts(texts, rows, backing))


def row(**values: Any) -> dict:
    return {name: None for name in COLUMNS} | values


NAN = float("nan")


@pytest.mark.parametrize(
    ("text", "batch", "failing"),
    [
        # \d \w \s are ASCII classes; (?i) folds case beyond ASCII (re.ASCII made it ASCII-only too)
        ("s matches '\\d+'", [row(s="\u0661\u0662"), row(s="12")], [1]),
        ("s matches '(?i)é'", [row(s="É"), row(s="e")], [2]),
        # the runtime read NaN as equal to NaN and above every number
        ("f >= 0", [row(f=NAN), row(f=1.0), row()], [1]),
        ("f < 0", [row(f=NAN), row(f=-1.0)], [1]),
        ("f = f", [row(f=NAN), row(f=1.0)], [1]),
        ("f <> 1", [row(f=NAN), row(f=1.0)], [1, 2]),
        # a null beside a NaN is unknown, not false
        ("f < i", [row(f=NAN), row(f=NAN, i=1)], [2]),
        # least / greatest: NaN where an argument is NaN, whatever its place
        ("least(i, f) < 5", [row(i=1, f=NAN), row(i=1, f=9.0)], [1]),
        ("greatest(f, i) > 0", [row(i=1, f=NAN)], [1]),
        # x / -0.0 is -inf, NaN / 0 is NaN
        ("i / f < 0", [row(i=1, f=-0.0), row(i=1, f=0.0)], [2]),
        ("f / i = f / i", [row(i=0, f=NAN)], [1]),
        # a float beside a decimal compares in binary64
        ("f = d2", [row(f=0.1, d2=Decimal("0.10"))], []),
        # time literals are instants; without an offset UTC, a bare date its UTC midnight
        ("t2 >= '2026-03-29'", [row(t2=START), row(t2=START - timedelta(hours=1))], [2]),
        ("t2 < '2026-03-29T01:00:00+02:00'", [row(t2=START), row(t2=START - timedelta(hours=2))], [1]),
        # exact products past 28 digits are not rounded
        ("d6 * d6 * 1 > d6 * d6", [row(d6=Decimal("999999999.999999"))], [1]),
        # a literal on the left of arithmetic (found by the generated cases: int + _Sql raised)
        ("i < 0 + i", [row(), row(i=1)], [2]),
        ("1 - i > 0", [row(i=1)], [1]),
        # literals only: Python ran 'not (0 < 1)' as ~True (-2), true (found by the deep profile)
        ("i < i and not (0 < 1)", [row(), row(i=1)], [1, 2]),
        ("not (1 = 1) or i > 0", [row(), row(i=1), row(i=0)], [3]),
        ("not (0 between 0 and 0)", [row()], [1]),
        ("not (1 in (1, 2))", [row()], [1]),
        # one-to-one case mapping: upper of ß is ẞ, not SS
        ("length(upper(s)) = 1", [row(s="ß")], []),
        ("upper(s) = 'ẞ'", [row(s="ß")], []),
    ],
)
def test_pandera_counter_examples(text: str, batch: list[dict], failing: list[int]) -> None:
    assert expected_failures(text, batch) == failing
    for backing in ("arrow", "object"):
        assert pandera_failures(text, batch, backing) == failing, backing


# ---------------------------------------------------------------- dbt and Soda: the SQL they carry


def exported_plan(texts: list[str]):
    return build_plan(parse_contract(contract_text(texts)))


def sql_failures(texts: list[str], batch: list[dict]) -> dict[str, list[int]]:
    """Per clause, the rows failing the SQL the dbt and Soda exports carry (``NOT <holds>``), run in DuckDB."""
    plan = exported_plan(texts)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    data = table(batch)  # noqa: F841 - read by DuckDB by name
    con.execute("CREATE TABLE t AS SELECT row_number() OVER () AS n, * FROM data")
    found = {}
    for check in plan.checks:
        if check.kind == "invariant":
            holds = holds_sql(plan, check)
            found[check.clause] = [
                r[0] for r in con.execute(f"SELECT n FROM t WHERE NOT {holds} ORDER BY n").fetchall()
            ]
    return found


@profile(fast=6, deep=40)
@given(batches())
def test_dbt_and_soda_sql_fails_the_rows_the_reference_fails(batch: Batch) -> None:
    """Pairs (fast / deep, at most): before 150 / 1,500 x 4 x 12 = 7,200 / 72,000; now 6 / 40 x 25 x 120."""
    texts, rows = batch
    assert_agrees(texts, rows, sql_failures(texts, rows))


@pytest.mark.parametrize("text", ["f >= 0", "f between 0 and 1", "0 <= f <= 1"])
def test_a_float_bound_is_not_a_range_test(text: str) -> None:
    """accepted_range and Soda's min/max pass a NaN the clause fails: a float bound stays a row test."""
    plan = exported_plan([text])
    check = next(c for c in plan.checks if c.kind == "invariant")
    assert range_bounds(plan, check) is None
    assert range_bounds(
        exported_plan(["d2 >= 0"]), next(c for c in exported_plan(["d2 >= 0"]).checks if c.kind == "invariant")
    )
    assert sql_failures([text], [row(f=NAN), row(f=0.5)])[text] == [1]


# ---------------------------------------------------------------- CEL (confluent-kafka's CEL executor)


def cel_batch(texts: list[str], batch: list[dict]) -> dict[str, Verdict]:
    """Per clause, the rows its exported CEL rule rejects in cel-python with confluent-kafka's functions, or
    the refusal (each record made a CEL message once, for every rule)."""
    import celpy
    from confluent_kafka.schema_registry.rules.cel.cel_executor import msg_to_cel
    from confluent_kafka.schema_registry.rules.cel.cel_field_presence import InterpretedRunner
    from confluent_kafka.schema_registry.rules.cel.extra_func import EXTRA_FUNCS

    env = celpy.Environment(runner_class=InterpretedRunner)
    messages = [  # a producer leaves nulls out
        msg_to_cel({k: v for k, v in reference_row(values, n).items() if v is not None})
        for n, values in enumerate(batch)
    ]
    found: dict[str, Verdict] = {}
    for text in texts:
        try:
            expr = compile_predicate(predicate(text), TYPES, frozenset(TYPES))
        except CelUnsupported as exc:
            found[text] = str(exc)
            continue
        program = env.program(env.compile(expr), functions=EXTRA_FUNCS)
        results = [program.evaluate({"message": message}) for message in messages]
        found[text] = [
            n + 1 for n, result in enumerate(results) if not isinstance(result, celpy.celtypes.BoolType) or not result
        ]
    return found


def cel_verdicts(text: str, batch: list[dict]) -> Verdict:
    return cel_batch([text], batch)[text]


def refused_by_cel(reason: str) -> bool:
    return any(known in reason for known in CEL_REFUSALS)


# cel-python interprets each rule on each record (milliseconds a pair): batches of fewer rows
@profile(fast=3, deep=10)
@given(batches(max_rows=30))
def test_cel_rejects_the_rows_the_reference_fails_or_refuses_by_name(batch: Batch) -> None:
    """Pairs (fast / deep, at most): before 40 / 200 x 3 x 12 = 1,440 / 7,200; now 3 / 10 x 25 x 30."""
    texts, rows = batch
    assert_agrees(texts, rows, cel_batch(texts, rows), refusal=refused_by_cel)


@pytest.mark.parametrize(
    ("text", "batch", "failing"),
    [
        # int64 arithmetic overflowed (an evaluation error, the record rejected): now exact decimals
        ("i < i + i", [row(i=2**62), row(i=1), row(i=-(2**63))], [3]),
        ("-i > 0", [row(i=-(2**63)), row(i=1)], [2]),
        # a time literal without an offset is UTC, as the reference reads it (was refused)
        ("t2 < '2026-03-29 00:30:00'", [row(t2=START), row(t2=START - timedelta(seconds=1))], [1]),
        # -(-(0.0)) was written '--0.0', which decimal() cannot read
        ("0 < -(-(0.0))", [row()], [1]),
    ],
)
def test_cel_counter_examples(text: str, batch: list[dict], failing: list[int]) -> None:
    assert expected_failures(text, batch) == failing
    assert cel_verdicts(text, batch) == failing


@pytest.mark.parametrize("text", ["i / 2 > 0", "i < f", "f >= 0"])
def test_cel_refuses_division_and_floats_by_name(text: str) -> None:
    found = cel_verdicts(text, [row()])
    assert isinstance(found, str) and refused_by_cel(found), found


# ---------------------------------------------------------------- Great Expectations


@pytest.mark.parametrize("text", ["f >= 0", "f between 0 and 1", "f in (1, 2)", "d2 <= f"])
def test_gx_refuses_a_float_clause_by_name(text: str) -> None:
    """GX's column expectations skip NaN as missing; the contract fails a NaN row: not exported, with the reason."""
    result = export("gx", parse_contract(contract_text([text])))
    reasons = {n.clause: n.reason for n in result.not_exported}
    assert "may hold NaN" in reasons[text]


def test_gx_still_exports_an_exact_bound() -> None:
    result = export("gx", parse_contract(contract_text(["d2 >= 0"])))
    assert "invariants[0]" in result.exported


# ---------------------------------------------------------------- dbt itself (dbt-duckdb in its tool venv)

# one dbt project per batch: 1 (fast) or 2 (deep) x 8 clauses x 100-120 rows. A clause is a dbt test node
# (about a second each), a row costs next to nothing: few clauses, many rows
DBT_BATCHES = 2 if DEEP else 1


def dbt_project(directory: Path, texts: list[str], batch: list[dict]) -> Any:
    """A dbt project over the batch (Parquet) with the exported model YAML and macros; the export result."""
    contract = parse_contract(contract_text(texts))
    result = export("dbt", contract)
    model = next(a.path for a in result.artifacts if a.path.endswith(".yml")).split("/")[-1][:-4]
    (directory / "models").mkdir(parents=True)
    pq.write_table(table(batch), directory / "rows.parquet")
    (directory / "dbt_project.yml").write_text(
        "name: tscontract_proof\nversion: '1.0'\nconfig-version: 2\nprofile: tscontract_proof\n"
        "models:\n  tscontract_proof:\n    +materialized: view\n"
    )
    (directory / "profiles.yml").write_text(
        "tscontract_proof:\n  target: proof\n  outputs:\n    proof:\n      type: duckdb\n"
        f"      path: {directory / 'proof.duckdb'}\n      threads: 1\n      settings: {{TimeZone: UTC}}\n"
    )
    columns = ",\n  ".join(f"cast({n} as {column_type(f.type)}) as {n}" for n, f in contract.fields.items())
    (directory / "models" / f"{model}.sql").write_text(
        f"select\n  {columns}\nfrom read_parquet('{directory / 'rows.parquet'}')\n"
    )
    result.write(directory)
    return result


_DBT_RUNNER = _RUNNER.replace(
    '"message": r.get("message"),', '"message": r.get("message"), "failures": r.get("failures"),'
)


def test_dbt_build_fails_the_rows_the_reference_fails(tmp_path: Path) -> None:
    """Generated clauses and rows through ``dbt build``: each clause's test fails exactly the reference's rows.

    Pairs (fast / deep, at most): before 3 / 12 projects x 8 x 12 = 288 / 1,152; now 1 / 2 x 8 x 120.
    """
    cases = generated_batches(DBT_BATCHES, max_clauses=8, least=(8, 100))
    assert cases
    jobs, results = [], {}
    for n, (texts, batch) in enumerate(cases):
        results[f"case{n}"] = dbt_project(tmp_path / f"case{n}", texts, batch)
        jobs.append({"name": f"case{n}", "dir": str(tmp_path / f"case{n}"), "args": []})
    out = tmp_path / "dbt-results.json"
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_VERSION_CHECK": "false"}
    proc = subprocess.run(
        [str(DBT_PYTHON), "-c", _DBT_RUNNER],
        input=json.dumps([jobs, str(out)]),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    runs = json.loads(out.read_text())
    for n, (texts, batch) in enumerate(cases):
        nodes = runs[f"case{n}"]["nodes"]
        for i, text in enumerate(texts):
            tests = [
                x for x in nodes if x["type"] == "test" and x["meta"].get("tscontract_check") == f"invariants[{i}]"
            ]
            assert len(tests) == 1 and tests[0]["status"] in ("pass", "fail"), (text, tests)
            assert tests[0]["failures"] == len(expected_failures(text, batch)), (text, batch)


def test_pandera_reads_nan_in_a_numpy_float_column_as_null() -> None:
    """numpy float64 has no null but NaN (pandas' convention): there NaN is the null; Arrow tells them apart."""
    batch = [row(f=NAN), row(f=-1.0)]
    code = pandera_export.translate(predicate("f >= 0"))
    numpy_frame = frame(batch, "arrow").astype({"f": "float64"})
    holds = eval(f"r.holds({code})", {**RUNTIME, "r": RUNTIME["_Rows"](numpy_frame)})
    assert list(holds) == [True, False]
    assert pandera_failures("f >= 0", batch, "arrow") == [1, 2]


# ---------------------------------------------------------------- pandera's polars backend (pandera in its venv)

# one module per batch: 1 (fast) or 10 (deep) x 10-12 clauses x 100-120 rows (a clause costs most, as in dbt)
POLARS_BATCHES = 10 if DEEP else 1
# Inside .venvs/pandera: each case's module validates its rows as a polars frame (read from Parquet with
# the contract's types); the rows each invariant fails, by check id.
_POLARS_SCRIPT = """
import importlib.util


def main(jobs):
    import pandera.polars as pa
    import polars as pl

    out = {}
    for job in jobs:
        spec = importlib.util.spec_from_file_location(job["name"], job["module"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        frame = pl.read_parquet(job["rows"])
        failed = {}
        try:
            module.polars_schema.validate(frame, lazy=True)
        except pa.errors.SchemaErrors as errors:
            for case in errors.failure_cases.to_dicts():
                if case["schema_context"] == "DataFrameSchema" and case["check_number"] is not None:
                    name = module.polars_schema.checks[case["check_number"]].name
                    failed.setdefault(name, []).append(case["index"] + 1)
        out[job["name"]] = {"failed": failed, "dtypes": [str(t) for t in frame.dtypes]}
    return out
"""


def test_pandera_polars_fails_the_rows_the_reference_fails(tmp_path: Path) -> None:
    """Generated clauses and rows through ``polars_schema.validate`` in pandera's polars backend.

    Pairs (fast / deep, at most): before 12 / 200 modules x 6 x 12 = 864 / 14,400; now 1 / 10 x 12 x 120.
    """
    cases = generated_batches(POLARS_BATCHES, max_clauses=12, least=(10, 100))
    jobs = []
    for n, (texts, batch) in enumerate(cases):
        (module,) = export("pandera", parse_contract(contract_text(texts))).write(tmp_path / f"case{n}")
        pq.write_table(table(batch), tmp_path / f"case{n}.parquet")
        jobs.append({"name": f"case{n}", "module": str(module), "rows": str(tmp_path / f"case{n}.parquet")})
    ran = run_in_venv("pandera", _POLARS_SCRIPT, jobs, timeout=900)
    assert "Decimal(precision=10, scale=2)" in ran["case0"]["dtypes"]  # polars' own types, not pandas'
    for n, (texts, batch) in enumerate(cases):
        failed = ran[f"case{n}"]["failed"]
        assert_agrees(texts, batch, {text: sorted(failed.get(f"invariants[{i}]", [])) for i, text in enumerate(texts)})


@pytest.mark.parametrize(
    ("text", "batch", "failing"),
    [
        # NaN is a value in polars as in the contract: it fails a comparison, a null leaves it unknown
        ("f >= 0", [row(f=NAN), row(f=1.0), row()], [1]),
        ("f is null", [row(f=NAN), row()], [1]),
        # the brackets hold: (2 - 1) / 1 is 1; a NaN divisor fails, a null one leaves it unknown
        (
            "(d2 - d6) / f < 0.5",
            [row(d2=Decimal("2.00"), d6=Decimal("1.000000"), f=f) for f in (1.0, NAN, None)],
            [1, 2],
        ),
        ("s matches '\\d+'", [row(s="\u0661\u0662"), row(s="12")], [1]),
    ],
)
def test_pandera_polars_counter_examples(tmp_path: Path, text: str, batch: list[dict], failing: list[int]) -> None:
    assert expected_failures(text, batch) == failing
    (module,) = export("pandera", parse_contract(contract_text([text]))).write(tmp_path)
    pq.write_table(table(batch), tmp_path / "rows.parquet")
    job = {"name": "case", "module": str(module), "rows": str(tmp_path / "rows.parquet")}
    ran = run_in_venv("pandera", _POLARS_SCRIPT, [job])
    assert sorted(ran["case"]["failed"].get("invariants[0]", [])) == failing


_NOT_NULL_SCRIPT = """
import importlib.util


def main(job):
    import pandera.polars as pa
    import polars as pl

    spec = importlib.util.spec_from_file_location("not_null", job["module"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.polars_schema.validate(pl.read_parquet(job["rows"]), lazy=True)
        return []
    except pa.errors.SchemaErrors as errors:
        columns = module.polars_schema.columns  # a named check's number names it; pandera's own, its check
        return [
            [columns[c["column"]].checks[c["check_number"]].name if c["check_number"] is not None else c["check"],
             c["index"] + 1]
            for c in errors.failure_cases.to_dicts()
        ]
"""


def test_pandera_polars_fails_a_null_float_not_a_nan(tmp_path: Path) -> None:
    """A non-nullable float column in polars: the null fails field.f.nullable, NaN is a value."""
    required = "f: {type: float64, nullable: false}"
    text = contract_text(["i is null or i >= 0"]).replace("f: {type: 'float64', nullable: true}", required)
    (module,) = export("pandera", parse_contract(text)).write(tmp_path)
    pq.write_table(table([row(f=NAN), row(f=None), row(f=1.0)]), tmp_path / "rows.parquet")
    found = run_in_venv("pandera", _NOT_NULL_SCRIPT, {"module": str(module), "rows": str(tmp_path / "rows.parquet")})
    assert found == [["field.f.nullable", 2]]


# ---------------------------------------------------------------- JSON Schema (the jsonschema validator)


def json_record(values: dict, number: int) -> dict | None:
    """The row as a producer sends it under the exported schema: decimals and instants as text, a null left
    out; None where JSON cannot hold the row (NaN and infinities are no JSON numbers)."""
    record: dict[str, Any] = {}
    for name, value in reference_row(values, number).items():
        if value is None:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            return None
        record[name] = str(value) if isinstance(value, Decimal) else value
        if isinstance(value, datetime):
            record[name] = value.isoformat()
    return record


def only_clause(node: Any, check_id: str) -> Any:
    """The exported schema with every invariant but ``check_id`` taken out (each is one tagged subschema)."""
    if isinstance(node, list):
        kept = [only_clause(n, check_id) for n in node]
        return [n for n in kept if n is not None]
    if not isinstance(node, dict):
        return node
    tag = str(node.get("$comment", ""))
    if tag.startswith(TAG + "invariants[") and tag != TAG + check_id:
        return None
    return {k: v for k, v in ((k, only_clause(v, check_id)) for k, v in node.items()) if v != []}


def jsonschema_batch(texts: list[str], batch: list[dict]) -> tuple[dict[str, Verdict], set[int]]:
    """Per clause, the records its schema rejects (the one export with the other clauses taken out) or why
    the clause is not exported; and the rows JSON can hold."""
    from jsonschema import Draft202012Validator

    contract = parse_contract(contract_text(texts))
    result = export("jsonschema", contract)
    [artifact] = result.artifacts
    schema = json.loads(artifact.content)
    records = {n + 1: json_record(values, n) for n, values in enumerate(batch)}
    held = {n for n, record in records.items() if record is not None}
    found: dict[str, Verdict] = {n.clause: n.reason for n in result.not_exported if n.clause in texts}
    for check in build_plan(contract).checks:
        if check.kind == "invariant" and check.clause not in found:
            validator = Draft202012Validator(
                only_clause(schema, check.id), format_checker=Draft202012Validator.FORMAT_CHECKER
            )
            found[check.clause] = [n for n in sorted(held) if not validator.is_valid(records[n])]
    return found, held


def jsonschema_verdicts(text: str, batch: list[dict]) -> tuple[list[int], list[int]] | str:
    """(the rows the exported schema rejects, the rows JSON can hold), or why the clause is not exported."""
    found, held = jsonschema_batch([text], batch)
    return found[text] if isinstance(found[text], str) else (found[text], sorted(held))


@profile(fast=4, deep=24)
@given(batches())
def test_jsonschema_rejects_the_records_the_reference_fails_or_lists_the_clause(batch: Batch) -> None:
    """A clause not exported is listed with its reason (JSON Schema cannot state arithmetic, two fields).

    Pairs (fast / deep, at most): before 150 / 1,500 x 3 x 12 = 5,400 / 54,000; now 4 / 24 x 25 x 120.
    """
    texts, rows = batch
    found, held = jsonschema_batch(texts, rows)
    assert_agrees(texts, rows, found, refusal=bool, judged=held.__contains__)


@pytest.mark.parametrize(
    ("text", "batch", "failing"),
    [
        # an integer against a number that is not one: a float bound rounded 2**53 + 0.5 down to 2**53
        ("i >= 9007199254740992.5", [row(i=2**53), row(i=2**53 + 1)], [1]),
        ("i < 9007199254740993.5", [row(i=2**53 + 1), row(i=2**53 + 2)], [2]),
        ("i > -9007199254740992.5", [row(i=-(2**53)), row(i=-(2**53) - 1)], [2]),
        (
            "i between 9007199254740991.5 and 9007199254740993.5",
            [row(i=2**53 - 1), row(i=2**53), row(i=2**53 + 2)],
            [1, 3],
        ),
        ("not i > 2.5", [row(i=2), row(i=3)], [2]),
        ("i = 9007199254740993", [row(i=2**53), row(i=2**53 + 1)], [1]),
    ],
)
def test_jsonschema_counter_examples(text: str, batch: list[dict], failing: list[int]) -> None:
    assert expected_failures(text, batch) == failing
    assert jsonschema_verdicts(text, batch) == (failing, list(range(1, len(batch) + 1)))
