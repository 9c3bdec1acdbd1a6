"""The pandera export: the generated schema, run by pandera, judges the examples as tscontract does.

The proof runs the real pandera in ``.venvs/pandera`` (tools/venvs.sh): each example file is
loaded as a typed frame, validated with ``schema.validate(df, lazy=True)``, and pandera's
failure cases, mapped back to check ids, must agree with ``tscontract.validate`` on the
same file for every exported check — verdict and failing rows.
"""

from __future__ import annotations

import math
import operator
import re
from datetime import date, datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal, localcontext

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
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
from tscontract.interop.exports import export, pandera_runtime
from tscontract.interop.exports import pandera as pandera_export
from tscontract.plan.checks import build_plan

# the example files, and good.csv with an unknown column (schema.strict)
EXAMPLES = {OHLCV: ("good", "bad", "bad_lots", "extra_column"), SENSOR: ("good", "bad", "bad_kpa", "extra_column")}
WINDOW_CHECKS = {"time.cadence", "time.session", "completeness", "freshness"}

# Inside .venvs/pandera: import each generated module, validate each file, map failure cases
# to check ids (named Checks carry the id; BUILTIN_CHECKS says what pandera's own checks stand for).
SCRIPT = """
import importlib.util


def main(args):
    import pandas as pd
    import pandera
    import pandera.pandas as pa
    from _tools import load_typed_csv

    polars = args.get("backend") == "polars"
    if polars:
        import pandera.polars as pa
        import polars as pl
    out = {"version": pandera.__version__, "contracts": {}}
    for job in args["jobs"]:
        spec = importlib.util.spec_from_file_location(job["module_name"], job["module"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        schema = module.polars_schema if polars else module.schema
        assert isinstance(schema, pa.DataFrameSchema), type(schema)
        shape = {"strict": schema.strict, "coerce": schema.coerce, "unique": schema.unique,
                 "not_exported": [entry[0] for entry in module.NOT_EXPORTED],
                 "clauses": module.CLAUSES}
        files = {}
        for label, path in job["files"].items():
            frame = load_typed_csv(path, job["types"])
            if polars:  # the typed frame as polars types it (decimals, UTC instants, strings)
                frame = pl.from_pandas(frame)
            try:
                schema.validate(frame, lazy=True)
                cases = []
            except pa.errors.SchemaErrors as errors:
                found = errors.failure_cases
                cases = found.to_dicts() if polars else found.to_dict("records")
            files[label] = by_check(schema, module.BUILTIN_CHECKS, cases, pd)
        out["contracts"][job["contract"]] = {"shape": shape, "files": files}
    return out


def by_check(schema, builtin, cases, pd):
    failed, dtype_columns = {}, {}

    def add(check_id, index):
        entry = failed.setdefault(check_id, {"rows": set(), "column_level": False})
        if index is None:
            entry["column_level"] = True
        else:
            entry["rows"].add(index + 1)

    for case in cases:
        index = None if pd.isna(case["index"]) else int(case["index"])
        number, column, check = case["check_number"], case["column"], case["check"]
        if number is not None and not pd.isna(number):
            owner = schema.columns[column] if case["schema_context"] == "Column" else schema
            add(owner.checks[int(number)].name, index)
        elif check == "not_nullable":
            add(builtin["not_nullable"][column], index)
        elif check.startswith("dtype("):
            ids = builtin["dtype"][column]
            if len(ids) == 1:
                add(ids[0], index)
            else:  # a column-level failure standing for several checks; the named checks give rows
                dtype_columns[column] = ids
        elif check in builtin:
            add(builtin[check], index)
        else:
            raise AssertionError(f"unmapped pandera failure case: {case}")
    failed = {k: {"rows": sorted(v["rows"]), "column_level": v["column_level"]} for k, v in failed.items()}
    return {"failed": failed, "dtype_columns": dtype_columns}
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


def test_every_check_is_exported_or_listed_with_its_reason():
    for dataset in EXAMPLES:
        contract, plan = _plan(dataset)
        result = pandera_export.export(plan)
        skipped = {n.check_id: n.reason for n in result.not_exported}
        assert sorted(result.exported + list(skipped)) == sorted(c.id for c in plan.checks)
        assert set(skipped) == (WINDOW_CHECKS | {"source.rows"}) & {c.id for c in plan.checks}
        (artifact,) = result.artifacts
        assert artifact.path == f"{contract.contract}_pandera.py"
        text = artifact.content
        for line in result.header_lines():
            assert f"# {line}\n" in text
        for check in plan.checks:  # every clause verbatim, as the Check's error or in the header
            assert repr(check.clause) in text or f"[{check.clause}]" in text, check.id
        assert "strict=True" in text and "coerce=False" in text and "coerce=True" not in text
        compile(text, artifact.path, "exec")


def test_sensor_schema_embeds_the_catalog_and_translates_the_implication():
    _, plan = _plan(SENSOR)
    text = pandera_export.export(plan).artifacts[0].content
    assert "'T-204.bearing_temp': Decimal('-40')" in text and "'F-310.inlet_flow': 'm**3/h'" in text
    assert "def _clause_invariants_0(df: pd.DataFrame) -> pd.Series:" in text
    assert "r.holds((~r.is_null(r['value'])) | r.coalesce((r['quality'] == 'bad'), False))" in text
    # no pandera dtype pins a backing: named checks judge the logical type on numpy or Arrow columns
    assert "pa.Check(_is_instant, name='field.event_ts.type', error='timestamp_ms_utc')" in text
    assert "pa.Check(_logical('string'), name='field.quality.type', error='enum[good, suspect, bad]')" in text
    assert "'event_ts': pa.Column(None, nullable=False" in text and "pa.Column(pd.DatetimeTZDtype" not in text
    assert "pa.Check(_decimal_fits(12, 4), name='field.value.type', error='decimal(12,4)')" in text


def test_without_a_catalog_the_catalog_clauses_are_listed_not_dropped():
    contract = load_contract(SENSOR / "contract.yaml")
    result = export("pandera", contract)  # through the framework, no catalog
    skipped = {n.check_id: n.reason for n in result.not_exported}
    for check_id in (
        "invariants[1]",
        "invariants[2]",
        "field.unit.constraint",
        "catalog.series",
        "catalog.calibration",
    ):
        assert "needs the series catalog" in skipped[check_id], check_id
    assert "invariants[0]" in result.exported
    assert "CATALOG: dict[str, dict[str, object]] = {}" in result.artifacts[0].content
    with pytest.raises(TypeError, match="unknown pandera export option"):
        pandera_export.export(build_plan(contract), style="fancy")


def test_each_instant_column_is_judged_at_its_own_unit(tmp_path):
    path = write(
        tmp_path,
        "contract: units\nversion: 1.0.0\nkey: [t]\ntime: {column: t, precision: ms}\nfields:\n"
        "  t: {type: timestamp_ms_utc}\n  seen: {type: timestamp_us_utc}\n  n: {type: int32, nullable: true}\n",
    )
    text = pandera_export.export(build_plan(load_contract(path))).artifacts[0].content
    assert "pa.Check(_within_precision('ms'), name='time.precision', error='precision: ms')" in text
    assert "pa.Check(_within_precision('us'), name='time.precision', error='precision: ms')" in text
    assert "'seen': pa.Column(None, nullable=True" in text
    assert "pa.Check(_logical('int', 32), name='field.n.type', error='int32')" in text
    compile(text, "units_pandera.py", "exec")


# ---------------------------------------------------------------- the generated module's runtime


def _runtime():
    """The generated module's helpers, run with pandas alone (pandera is not in this environment)."""
    namespace = {
        "math": math,
        "timezone": timezone,
        "localcontext": localcontext,
        "operator": operator,
        "re": re,
        "date": date,
        "datetime": datetime,
        "timedelta": timedelta,
        "Decimal": Decimal,
        "ROUND_HALF_UP": ROUND_HALF_UP,
        "np": np,
        "pd": pd,
        "CATALOG": {},
    }
    exec(pandera_runtime.RUNTIME, namespace)
    return namespace


def test_decimal_check_counts_digits_as_tscontract_does():
    fits = _runtime()["_decimal_fits"](18, 8)
    values = {
        "229.78": True,
        "229.7800000000": True,  # trailing zeros are not places (pandera's Decimal dtype counts them)
        "-9999999999.99999999": True,  # nor is the sign a digit
        "0.00000001": True,  # str() of this Decimal is 1E-8
        "0": True,
        "229.780000001": False,
        "12345678901": False,
    }
    column = pd.Series([Decimal(v) for v in values] + [None, "text", 1.5, 7], dtype=object)
    assert fits(column).tolist() == [*values.values(), True, False, False, True]
    assert not fits(pd.Series([1.5, None])).iloc[0]  # floats are not decimals
    arrow = pd.Series(pd.array([Decimal("1.5"), None], dtype=pd.ArrowDtype(pa.decimal128(18, 8))))
    assert fits(arrow).all()
    wider = pd.Series(pd.array([Decimal("1.5"), Decimal("1.123456789")], dtype=pd.ArrowDtype(pa.decimal128(20, 10))))
    assert fits(wider).tolist() == [True, False]  # a wider type is judged value by value


def test_instant_checks_on_typed_and_mixed_columns():
    runtime = _runtime()
    utc, precision, instant = runtime["_utc_instant"](), runtime["_within_precision"]("ms"), runtime["_is_instant"]
    typed = pd.Series(pd.to_datetime(["2026-11-30T14:30:00.123Z", None], utc=True)).dt.as_unit("ms")
    assert utc(typed).all() and precision(typed).all() and instant(typed).all()
    assert not utc(typed.dt.tz_localize(None)).iloc[0]  # a naive column is not UTC
    mixed = pd.Series(
        [
            pd.Timestamp("2026-11-30T14:30:00Z"),
            pd.Timestamp("2026-11-30T14:45:00"),  # naive
            pd.Timestamp("2026-11-30T14:45:00.000123Z"),  # sub-millisecond
            pd.Timestamp("2026-11-30T15:45:00+01:00"),  # an instant, not written at UTC
            "yesterday",
            None,
        ],
        dtype=object,
    )
    assert utc(mixed).tolist() == [True, False, True, False, True, True]
    assert precision(mixed).tolist() == [True, True, False, True, True, True]
    assert instant(mixed).tolist() == [True, True, True, True, False, True]


def test_logical_type_checks_on_every_backing():
    runtime = _runtime()
    logical, utc, precision = runtime["_logical"], runtime["_utc_instant"](), runtime["_within_precision"]("ms")
    text, int32, number, flag = logical("string"), logical("int", 32), logical("float"), logical("bool")
    for series in (
        pd.Series(["AAPL", None], dtype=object),
        pd.Series(["AAPL", None], dtype="string"),
        pd.Series(["AAPL", None], dtype="str"),
        pd.Series(["AAPL", None], dtype="string[pyarrow]"),
        pd.Series(pd.array(["AAPL", None], dtype=pd.ArrowDtype(pa.large_string()))),
    ):
        assert text(series).all(), series.dtype
    assert text(pd.Series([1, None], dtype="Int64")).tolist() == [False, True]  # numbers are not text
    assert text(pd.Series(["AAPL", 7], dtype=object)).tolist() == [True, False]
    for series in (
        pd.Series([7, None], dtype="Int32"),
        pd.Series([7, -2], dtype="int8"),
        pd.Series(pd.array([7, None], dtype=pd.ArrowDtype(pa.int16()))),
        pd.Series([7, None], dtype="int32[pyarrow]"),
    ):
        assert int32(series).all(), series.dtype
    # a wider integer type holds the declared type's values: judged by range, on any backing
    for dtype in ("int64", "Int64", "int64[pyarrow]", "uint32[pyarrow]", "uint64"):
        assert int32(pd.Series([7, 2**31], dtype=dtype)).tolist() == [True, False], dtype
    assert int32(pd.Series([7.0, None], dtype="float64")).tolist() == [False, True]
    assert int32(pd.Series([True, 7, 2**40, None], dtype=object)).tolist() == [False, True, False, True]
    assert number(pd.Series([1.5, None], dtype="double[pyarrow]")).all() and number(pd.Series([1], dtype="Int8")).all()
    assert number(pd.Series(["1.5"], dtype="string[pyarrow]")).tolist() == [False]
    assert (
        flag(pd.Series([True, None], dtype="bool[pyarrow]")).all()
        and flag(pd.Series([True, None], dtype="boolean")).all()
    )
    assert flag(pd.Series([1, 0], dtype="int8")).tolist() == [False, False]
    aware = pd.Series(
        pd.array([pd.Timestamp("2026-11-30T14:30:00.123Z"), None], dtype=pd.ArrowDtype(pa.timestamp("ms", tz="UTC")))
    )
    naive = pd.Series(pd.array([pd.Timestamp("2026-11-30T14:30:00"), None], dtype=pd.ArrowDtype(pa.timestamp("ms"))))
    micro = pd.Series(
        pd.array([pd.Timestamp("2026-11-30T14:30:00.000123Z")], dtype=pd.ArrowDtype(pa.timestamp("us", tz="UTC")))
    )
    assert utc(aware).all() and precision(aware).all() and runtime["_is_instant"](aware).all()
    assert utc(naive).tolist() == [False, True] and runtime["_is_instant"](naive).all()
    assert precision(micro).tolist() == [False]


# ---------------------------------------------------------------- the translation's SQL semantics

CLAUSES = [
    "low <= mid <= high",
    "low + mid > high * 2",
    "abs(high - low) / mid < 0.5",
    "mid is null or mid >= 0",
    "mid is null only when flag = bad",
    "not (low > high)",
    "coalesce(low, mid) > 1",
    "least(low, mid) < 2",
    "greatest(low, mid) >= high",
    "mid between 1 and 2",
    "flag in (good, bad)",
    "flag != good",
    "round(mid, 0) = 2",
    "length(name) > 2 and lower(name) = 'ab'",
    "-low < 1 or upper(name) = 'AB'",
]
VALUES = [None, Decimal("0"), Decimal("1.50"), Decimal("2"), Decimal("-3.25"), Decimal("2.5")]


def test_translated_clauses_agree_with_duckdb_on_every_null_combination(tmp_path):
    """Each clause's pandas translation fails exactly the rows DuckDB's NOT COALESCE(pred, TRUE) does."""
    invariants = "\n".join(f"  - {c}" for c in CLAUSES)
    path = write(
        tmp_path,
        "contract: semantics\nversion: 1.0.0\nkey: [t]\ntime: {column: t, precision: ms}\nfields:\n"
        "  t: {type: timestamp_ms_utc}\n  low: {type: decimal(9,2)}\n  mid: {type: decimal(9,2)}\n"
        "  high: {type: decimal(9,2)}\n  flag: {type: enum[good, bad]}\n  name: {type: string}\n"
        f"invariants:\n{invariants}\n",
    )
    plan = build_plan(load_contract(path))
    rows = [
        (low, mid, high, flag, name)
        for low in VALUES
        for mid in VALUES[:4]
        for high in VALUES[:3]
        for flag, name in ((None, None), ("good", "Ab"), ("bad", "x"))
    ]
    frame = pd.DataFrame(
        {
            "low": pd.Series([r[0] for r in rows], dtype=object),
            "mid": pd.Series([r[1] for r in rows], dtype=object),
            "high": pd.Series([r[2] for r in rows], dtype=object),
            "flag": pd.Series([r[3] for r in rows], dtype="str"),
            "name": pd.Series([r[4] for r in rows], dtype="str"),
        }
    )
    namespace = _runtime()
    con = duckdb.connect()
    con.execute("CREATE TABLE t (low DECIMAL(9,2), mid DECIMAL(9,2), high DECIMAL(9,2), flag VARCHAR, name VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("CREATE VIEW v AS SELECT row_number() OVER () - 1 AS i, * FROM t")
    for i, clause in enumerate(CLAUSES):
        predicate = plan.by_id(f"invariants[{i}]").predicate
        failing = f"SELECT i FROM v WHERE NOT COALESCE(({predicate.sql('duckdb')}), TRUE)"
        expected = [r[0] for r in con.execute(failing).fetchall()]
        code = pandera_export.translate(predicate)
        holds = eval(f"r.holds({code})", {**namespace, "r": namespace["_Rows"](frame)})
        assert sorted(np.flatnonzero(~holds.to_numpy())) == sorted(expected), (clause, code)


# ---------------------------------------------------------------- the proof in pandera itself


# A polars Datetime column holds one zone: bad.csv's row written at +02:00 arrives as its UTC instant,
# so the UTC rule has nothing left to fail there (a naive polars column fails it: the backings test).
LOST_IN_POLARS = {"bad": {"time.timezone"}}


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_pandera_agrees_with_tscontract_on_the_example_files(tmp_path, backend):
    """``schema`` on the typed pandas frame, ``polars_schema`` on the same frame in polars."""
    jobs, plans = [], {}
    for dataset, labels in EXAMPLES.items():
        contract, plan = _plan(dataset)
        result = pandera_export.export(plan)
        (module_path,) = result.write(tmp_path)
        plans[contract.contract] = (dataset, labels, result, plan)
        jobs.append(
            {
                "contract": contract.contract,
                "module": str(module_path),
                "module_name": module_path.stem,
                "types": {name: spec.type.to_json() for name, spec in contract.fields.items()},
                "files": {label: str(_data_file(dataset, label, tmp_path)) for label in labels},
            }
        )
    tool = run_in_venv("pandera", SCRIPT, {"jobs": jobs, "backend": backend})

    matrix, problems = {}, []
    for name, (dataset, labels, result, plan) in plans.items():
        ran = tool["contracts"][name]
        assert ran["shape"]["strict"] is True and ran["shape"]["coerce"] is False
        assert ran["shape"]["not_exported"] == [n.check_id for n in result.not_exported]
        assert ran["shape"]["clauses"] == {i: plan.by_id(i).clause for i in result.exported}
        per_file = {}
        for label in labels:
            report = validate(
                dataset / "contract.yaml",
                _data_file(dataset, label, tmp_path),
                catalog=dataset / "catalog.yaml",
                now=NOW,
                examples=1000,
            )
            outcome = ran["files"][label]
            judged = [i for i in result.exported if backend == "pandas" or i not in LOST_IN_POLARS.get(label, ())]
            per_file[label] = compare(report, outcome["failed"], judged)
            for column, ids in outcome["dtype_columns"].items():  # the dtype stands for several checks
                if not any(report.check(i).status == "failed" for i in ids):
                    problems.append(f"{name} {label}: pandera failed the dtype of {column}; tscontract passed {ids}")
        problems += [f"{name} {p}" for p in disagreements(per_file)]
        matrix[name] = parity_matrix(per_file)
        caught = {i for i, v in per_file["bad"].items() if v["tool"] == "failed"}
        assert len(caught) >= 10, caught  # the proof is not vacuous: most clauses fire on bad.csv
        assert per_file["bad"]["invariants[0]"]["tool_rows"] == per_file["bad"]["invariants[0]"]["rows"] != []
    if backend == "pandas":
        write_parity("pandera", matrix)
    assert not problems, "\n".join(problems)
    assert tool["version"] == pinned_version("pandera", "pandera")


# ---------------------------------------------------------------- numpy- and Arrow-backed frames

# The same good file as differently backed pandas frames, inside .venvs/pandera: the exported
# schema must judge the logical data, not the backing. Negative variants change what the data
# says: naive instants and floats where decimals are declared.
BACKINGS_SCRIPT = (
    SCRIPT
    + """

def arrow_type(spec, pa, naive=False):
    kind = spec["kind"]
    if kind in ("string", "enum"):
        return pa.string()
    if kind == "int":
        return getattr(pa, f"int{spec.get('bits') or 64}")()
    if kind == "bool":
        return pa.bool_()
    if kind == "decimal":
        return pa.decimal128(spec["precision"], spec["scale"])
    if kind == "float":
        return pa.float32() if spec.get("bits") == 32 else pa.float64()
    if kind == "timestamp":
        return pa.timestamp(spec.get("time_unit") or "ms", tz=None if naive else "UTC")
    raise AssertionError(kind)


def backed(frame, types, how, pd, pa):
    out = {}
    for name, series in frame.items():
        spec = types.get(name) or {"kind": "string"}
        kind = spec["kind"]
        values = [None if pd.isna(v) else v for v in series.tolist()]
        if how.startswith("arrow"):
            naive = how == "arrow_naive" and kind == "timestamp"
            if naive:
                values = [None if v is None else v.tz_convert(None) for v in values]
            arrow = pa.float64() if how == "arrow_floats" and kind == "decimal" else arrow_type(spec, pa, naive)
            if arrow == pa.float64() and kind == "decimal":
                values = [None if v is None else float(v) for v in values]
            out[name] = pd.Series(pd.array(values, dtype=pd.ArrowDtype(arrow)))
        elif how == "numpy_ns_object":  # nanosecond instants, object strings, numpy int64 where no nulls
            if kind == "timestamp":
                out[name] = series.dt.as_unit("ns")
            elif kind in ("string", "enum"):
                out[name] = pd.Series(values, dtype=object)
            elif kind == "int" and None not in values:
                out[name] = pd.Series(values, dtype=f"int{spec.get('bits') or 64}")
            else:
                out[name] = series
        elif how == "string_dtype" and kind in ("string", "enum"):
            out[name] = pd.Series(values, dtype="string")
        elif how == "numpy_naive" and kind == "timestamp":
            out[name] = series.dt.tz_localize(None)
        elif how == "numpy_floats" and kind == "decimal":
            out[name] = pd.Series([None if v is None else float(v) for v in values], dtype="float64")
        else:
            out[name] = series
    return pd.DataFrame(out)


def main(args):
    import pandas as pd
    import pyarrow as pa
    import pandera.pandas as pandera_pa
    import pandera.polars as pandera_pl
    import polars as pl
    from _tools import load_typed_csv

    out = {}
    for job in args["jobs"]:
        spec = importlib.util.spec_from_file_location(job["module_name"], job["module"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        typed = load_typed_csv(job["file"], job["types"])
        for how in args["backings"]:
            polars = how.startswith("polars")  # the Arrow-backed frame in polars, the polars schema
            frame = backed(typed, job["types"], how.replace("polars", "arrow"), pd, pa)
            schema = module.polars_schema if polars else module.schema
            if polars:
                frame = pl.from_pandas(frame)
            try:
                schema.validate(frame, lazy=True)
                cases = []
            except (pandera_pa.errors.SchemaErrors, pandera_pl.errors.SchemaErrors) as errors:
                found = errors.failure_cases
                cases = found.to_dicts() if polars else found.to_dict("records")
            found = by_check(schema, module.BUILTIN_CHECKS, cases, pd)
            dtypes = sorted({str(t) for t in frame.dtypes})
            out[f"{job['contract']} {how}"] = {
                "failed": sorted({*found["failed"], *(i for ids in found["dtype_columns"].values() for i in ids)}),
                "dtypes": dtypes,
            }
    return out
"""
)
GOOD_BACKINGS = ("numpy", "numpy_ns_object", "string_dtype", "arrow", "polars")
BAD_BACKINGS = ("numpy_naive", "arrow_naive", "polars_naive", "numpy_floats", "arrow_floats", "polars_floats")


def test_the_schema_accepts_numpy_and_arrow_backed_frames_alike(tmp_path):
    jobs = []
    for dataset in EXAMPLES:
        contract, plan = _plan(dataset)
        (module_path,) = pandera_export.export(plan).write(tmp_path)
        jobs.append(
            {
                "contract": contract.contract,
                "module": str(module_path),
                "module_name": module_path.stem,
                "types": {name: spec.type.to_json() for name, spec in contract.fields.items()},
                "file": str(dataset / "data" / "good.csv"),
            }
        )
    ran = run_in_venv("pandera", BACKINGS_SCRIPT, {"jobs": jobs, "backings": [*GOOD_BACKINGS, *BAD_BACKINGS]})
    arrow = ran["ohlcv_1m arrow"]["dtypes"]
    # the frames really are Arrow-backed: UTC-aware Arrow instants, Arrow strings and integers, decimals
    for dtype in ("timestamp[ms, tz=UTC][pyarrow]", "string[pyarrow]", "int64[pyarrow]", "decimal128(18, 8)[pyarrow]"):
        assert dtype in arrow, arrow
    assert "datetime64[ns, UTC]" in ran["ohlcv_1m numpy_ns_object"]["dtypes"]
    polars = ran["ohlcv_1m polars"]["dtypes"]  # really polars: its Decimal, UTC Datetime and String
    for dtype in ("Decimal(precision=18, scale=8)", "Datetime(time_unit='ms', time_zone='UTC')", "String"):
        assert dtype in polars, polars
    decimals = {"ohlcv_1m": ["close", "high", "low", "open", "volume"], "plant_sensor_reading": ["value"]}
    for contract, fields in decimals.items():
        for how in GOOD_BACKINGS:
            assert ran[f"{contract} {how}"]["failed"] == [], (contract, how, ran[f"{contract} {how}"])
        # a naive instant fails the UTC rule, as tscontract judges a naive TIMESTAMP column
        for how in ("numpy_naive", "arrow_naive", "polars_naive"):
            assert ran[f"{contract} {how}"]["failed"] == ["time.timezone"], (contract, how)
        # a float is not a decimal(p,s), whatever backs it
        for how in ("numpy_floats", "arrow_floats", "polars_floats"):
            assert ran[f"{contract} {how}"]["failed"] == [f"field.{f}.type" for f in fields], (contract, how)
