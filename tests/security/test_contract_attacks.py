"""Attacks through what a contract, catalog, mapping or bounds file says (issue 26), written by
someone who has read the code: YAML bombs, regular expressions that backtrack for ever, pint
expressions, numbers no engine holds, functions of other engines, a cross join the allow-list
lets through. Each is refused at load with file, line and column, or contained at run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import run_cli, write
from tests.security.test_contract_sql import CONTRACT, SQL_LINE
from tscontract.contract.catalog import load_catalog
from tscontract.contract.loader import parse_contract
from tscontract.engines import validate
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.errors import SourceError, TscontractError
from tscontract.plan.bounds import load_bounds

BILLION_LAUGHS = """\
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]
"""
BOMBS = {
    "billion laughs": BILLION_LAUGHS,
    "deep flow nesting": "note: " + "[" * 5000 + "]" * 5000 + "\n",
    "deep block nesting": "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n",
    "merge key": "base: &b {contract: x}\nother:\n  <<: *b\n",
    "recursive alias": "a: &a [1, *a]\n",
    "huge anchor copied": "a: &a [" + ", ".join(["x" * 50] * 2000) + "]\nb: [*a, *a, *a, *a, *a, *a]\n",
}
LOADERS = {"contract": None, "catalog": load_catalog, "mapping": load_mapping, "bounds": load_bounds}


@pytest.mark.parametrize("loader", list(LOADERS))
@pytest.mark.parametrize("bomb", list(BOMBS.values()), ids=list(BOMBS))
def test_yaml_bombs_are_refused_with_a_position_in_every_file_kind(tmp_path: Path, loader: str, bomb: str) -> None:
    path = write(tmp_path, bomb, f"evil.{loader}.yaml")
    with pytest.raises(TscontractError) as info:  # a bounds file is an input: InputError, position in its text
        if LOADERS[loader] is None:
            parse_contract(bomb, str(path))
        else:
            LOADERS[loader](path)
    shown = str(info.value)
    assert re.search(rf"evil\.{loader}\.yaml:\d+:\d+: ", shown), shown
    assert "\n" not in shown and len(shown) < 700


def test_a_yaml_bomb_is_one_line_and_exit_2_at_the_cli(tmp_path: Path) -> None:
    contract = write(tmp_path, BILLION_LAUGHS)
    result = run_cli("lint", contract)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "alias" in result.stderr and "contract.yaml:" in result.stderr and "Traceback" not in result.stderr


BASE = CONTRACT.split("sql_checks:")[0]


def _refused_at(text: str, line: int) -> SourceError:
    with pytest.raises(SourceError) as info:
        parse_contract(text, "evil.yaml")
    assert info.value.location is not None and info.value.location.line == line, info.value
    assert "\n" not in info.value.message and len(info.value.message) < 500
    return info.value


@pytest.mark.parametrize(
    "pattern", ["(a+)+$", "(a|ab)*c", "(\\\\w+\\\\s?)*!", "([A-Z]*)*x", "(?:(?:a{1,3})+)+", "((ab|a)+)c", "(.*a)+x"]
)
def test_a_matches_pattern_that_backtracks_exponentially_is_refused(pattern: str) -> None:
    error = _refused_at(BASE + f"invariants:\n  - \"sensor matches '{pattern}'\"\n", 10)
    assert "exponential" in error.message


@pytest.mark.parametrize(
    "pattern",
    [
        "^[A-Za-z]+(?:[\\\\s-][A-Za-z]+)*$",
        "([A-Z]+\\\\.)*[A-Z]+",
        "[A-Z]{1,6}(\\\\.[A-Z]+)?",
        "(\\\\d{1,3}\\\\.){3}\\\\d{1,3}",
        "(ab)+",
        "x*y*z",
    ],
)
def test_patterns_people_write_still_load(pattern: str) -> None:
    contract = parse_contract(BASE + f"invariants:\n  - \"sensor matches '{pattern}'\"\n", "c.yaml")
    assert len(contract.invariants) == 1


MAPPING = "mapping: vendor\ntransform_version: 1.0.0\ncolumns:\n  sensor: {file_name: 'PATTERN'}\n"


def test_a_mapping_file_name_pattern_that_backtracks_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, MAPPING.replace("PATTERN", "(?P<s>(a+)+)!"), "m.yaml")
    with pytest.raises(SourceError) as info:
        load_mapping(path)
    assert info.value.location is not None and info.value.location.line == 4
    assert "exponential" in info.value.message
    assert load_mapping(write(tmp_path, MAPPING.replace("PATTERN", "(?P<s>[a-z]+)_"), "ok.yaml")).columns


UNITS = [
    "1e9999999**9999",
    "2**2**2**2**2**2**2**2 * bar",
    "m*" * 20000 + "m",
    "1e999999 bar",
]


@pytest.mark.parametrize("unit", UNITS, ids=["power of a huge number", "tower", "very long", "scaled"])
def test_unit_expressions_that_would_blow_up_pint_are_refused_in_one_line(tmp_path: Path, unit: str) -> None:
    text = BASE.replace("value: {type: float64, nullable: true}", f"value: {{type: float64, unit: '{unit}'}}")
    result = run_cli("lint", write(tmp_path, text))
    assert result.returncode == 2, result.stdout[-300:]
    assert result.stderr.count("\n") == 1 and len(result.stderr) <= 600 and "contract.yaml:8:" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize(
    ("clause", "line"),
    [
        ("invariants:\n  - value < 1e999999999\n", 10),
        ("invariants:\n  - value > -1e-999999999\n", 10),
        ("invariants:\n  - value < " + "9" * 5000 + "\n", 10),
    ],
    ids=["huge exponent", "tiny exponent", "5000 digits"],
)
def test_numbers_no_engine_holds_are_refused_at_load(clause: str, line: int) -> None:
    error = _refused_at(BASE + clause, line)
    assert "internal" not in error.message


@pytest.mark.parametrize(
    "duration",
    [
        "1e999999999 s",
        "4000000001 s",
        "99999 w",
        "1e-12 s",
        "1" * 5000 + " s",
        "99999999999999999999999999999 centuries",
        "-1 s",
    ],
)
def test_durations_out_of_any_range_are_refused_at_load(duration: str) -> None:
    _refused_at(BASE.replace("cadence: irregular", f"cadence: {duration}"), 4)


# functions of the other engines that reach files, URLs, programs or the JVM: not on the allow-list
FOREIGN = [
    "reflect('java.lang.Runtime', 'getRuntime')",
    "java_method('java.lang.System', 'getProperty', 'user.home')",
    "input_file_name()",
    "current_user()",
    "file('/etc/passwd', 'RawBLOB')",
    "url('http://127.0.0.1:9/', 'CSV', 'a String')",
    "s3('http://127.0.0.1:9/b/k')",
    "executable('sh', 'TSV', 'a String')",
    "remote('127.0.0.1:9000', system.one)",
    "hdfs('hdfs://x/y', 'TSV')",
    "jdbc('jdbc:x', 'SELECT 1')",
    "mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')",
    "postgresql('127.0.0.1:5432', 'db', 't', 'u', 'p')",
    "version()",
    "pg_read_binary_file('/etc/passwd')",
    "lo_export(1, '/tmp/x')",
    "read_parquet('x.parquet')",
    "sniff_csv('x.csv')",
]


@pytest.mark.parametrize("call", FOREIGN)
def test_file_url_program_and_jvm_functions_of_every_engine_are_refused_at_load(call: str) -> None:
    sql = f"SELECT count(*) FROM {{object}} WHERE {call} IS NOT NULL".replace('"', '\\"')
    error = _refused_at(CONTRACT.replace("SQL", sql), SQL_LINE)
    assert any(w in error.message for w in ("allow-list", "may not use", "does not parse"))


def test_a_cross_join_the_allow_list_lets_through_is_stopped_at_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TSCONTRACT_SQL_TIMEOUT", "1")
    sql = "SELECT count(*) FROM " + ", ".join(f"{{object}} t{i}" for i in range(8))
    contract = parse_contract(CONTRACT.replace("SQL", sql), "c.yaml")
    rows = "".join(f"s{i},2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z,{i}\n" for i in range(200))
    data = write(tmp_path, "sensor,ts,value\n" + rows, "data.csv")
    report = validate(contract, str(data))
    [probe] = [r for r in report.checks if r.id.startswith("sql")]
    assert probe.status == "error" and "TSCONTRACT_SQL_TIMEOUT" in (probe.message or "")
    assert sum(1 for r in report.checks if r.status == "passed") > 3  # the other checks ran


@pytest.mark.parametrize("engine", ["chdb", "spark"])
def test_a_cross_join_is_stopped_at_run_on_chdb_and_spark(
    engine: str, tmp_path: Path, monkeypatch, request: pytest.FixtureRequest
) -> None:
    """ClickHouse's max_execution_time; Spark's jobs cancelled by a tag: the same bound as DuckDB's interrupt.

    On Spark the time is up before the query's job is submitted (planning takes longer than a millisecond):
    a job submitted after the first cancel is cancelled too (once it ran for ever, the suite hung in toArrow).
    """
    pytest.importorskip(engine if engine == "chdb" else "pyspark")
    if engine == "spark":
        request.getfixturevalue("spark")
    monkeypatch.setenv("TSCONTRACT_SQL_TIMEOUT", "2" if engine == "chdb" else "0.001")
    sql = "SELECT count(*) FROM " + ", ".join(f"{{object}} t{i}" for i in range(8))
    contract = parse_contract(CONTRACT.replace("SQL", sql), "c.yaml")
    rows = [(f"s{i}", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z", i) for i in range(200)]
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"sensor": [r[0] for r in rows], "ts": [r[1] for r in rows], "value": [r[2] for r in rows]})
    data = tmp_path / "data.parquet"
    pq.write_table(table.set_column(1, "ts", pa.array([r[1] for r in rows]).cast(pa.timestamp("s", "UTC"))), data)
    report = validate(contract, str(data), engine=engine)
    [probe] = [r for r in report.checks if r.id.startswith("sql")]
    assert probe.status == "error" and "TSCONTRACT_SQL_TIMEOUT" in (probe.message or ""), probe.message
    assert sum(1 for r in report.checks if r.status == "passed") > 3  # the other checks ran


def test_a_bad_sql_timeout_is_a_usage_error(tmp_path: Path) -> None:
    contract = write(tmp_path, CONTRACT.replace("SQL", "SELECT count(*) FROM {object}"))
    data = write(tmp_path, "sensor,ts,value\na,2026-01-01T00:00:00Z,1\n", "data.csv")
    import os
    import subprocess
    import sys

    env = {**os.environ, "TSCONTRACT_SQL_TIMEOUT": "soon"}
    result = subprocess.run(
        [sys.executable, "-m", "tscontract", "validate", str(contract), str(data)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "TSCONTRACT_SQL_TIMEOUT" in result.stderr, result.stderr


def test_a_table_read_from_a_store_is_validated_on_a_locked_connection() -> None:
    """check-store reads the store's latest rows into Arrow, then validates them as any batch."""
    import pyarrow as pa

    from tscontract.engines.duckdb import ValidationRun
    from tscontract.engines.sandbox import is_locked
    from tscontract.plan.checks import build_plan

    contract = parse_contract(CONTRACT.replace("SQL", "SELECT count(*) FROM {object}"), "c.yaml")
    table = pa.table({"sensor": ["a"], "ts": pa.array([0], pa.timestamp("s", "UTC")), "value": [1.0]})
    run = ValidationRun(build_plan(contract, None), table, None, 0, None)
    try:
        assert is_locked(run.con)
        with pytest.raises(Exception, match=r"(?i)disabled|locked|permission"):
            run.con.execute("SET enable_external_access = true")
    finally:
        run.con.close()


CATALOG = "catalog: c\nseries:\n  S1:\n    unit: bar\n    cadence: 10s\n    device_zone: ZONE\n"


@pytest.mark.parametrize(
    "zone", ["../../../../etc/passwd", "/etc/localtime", "~/zone", "Europe/../../../../etc/hosts", "UTC\\x00"]
)
def test_a_catalog_zone_that_reads_as_a_path_is_refused_never_opened(tmp_path: Path, zone: str) -> None:
    path = write(tmp_path, CATALOG.replace("ZONE", f'"{zone}"'), "evil.catalog.yaml")
    with pytest.raises(SourceError) as info:
        load_catalog(path)
    assert info.value.location is not None and info.value.location.line == 6
    assert "IANA" in info.value.message or "zone" in info.value.message
