"""Attacks through a contract's SQL checks and a mapping's filter (issue 26): refused when the file
loads, with file, line and column, as a library error and as one line and exit 2 at the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli, write
from tscontract.contract.loader import parse_contract
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.errors import ContractError

SECRET = "TOP-SECRET-4711"
CONTRACT = """\
contract: readings
version: 1.0.0
key: [sensor, ts]
time: {column: ts, precision: s, timezone: UTC instant, cadence: irregular}
fields:
  sensor: {type: string, nullable: false}
  ts: {type: timestamp_s_utc, nullable: false}
  value: {type: float64, nullable: true}
sql_checks:
  - name: probe
    sql: "SQL"
    must_be: 0
"""
SQL_LINE, SQL_COLUMN = 11, 11  # where the quoted query starts: the text after the quote is column 11

ATTACKS = {
    "lateral read_text": "SELECT CAST(content AS INT) FROM {object}, LATERAL read_text('SECRET') LIMIT 1",
    "lateral glob": "SELECT count(*) FROM {object}, LATERAL glob('/etc/*')",
    "lateral query": "SELECT count(*) FROM {object}, LATERAL query('SELECT 1')",
    "table function": "SELECT count(*) FROM read_text('SECRET'), {object}",
    "table function in a subquery": "SELECT count(*) FROM {object} WHERE sensor IN (SELECT * FROM read_csv_auto('x.csv'))",  # noqa: E501,
    "CTE of a nested WITH used outside it": (
        "SELECT count(*) FROM (WITH creds AS (SELECT 1 AS a) SELECT a FROM {object}) t, creds"
    ),
    "CTE named like a file": 'SELECT count(*) FROM (WITH \\"c.json\\" AS (SELECT 1) SELECT 1 FROM {object}) t',
    "string as table": "SELECT count(*) FROM {object} JOIN 'SECRET' USING (sensor)",
    "URL as table": "SELECT count(*) FROM {object}, 'https://example.com/x.csv'",
    "quoted path identifier": 'SELECT count(*) FROM {object}, \\"/etc/passwd\\"',
    "qualified table": "SELECT count(*) FROM {object}, main.other",
    "VALUES": "SELECT count(*) FROM (VALUES (1)) t(a), {object}",
    "getenv": "SELECT count(*) FROM {object} WHERE getenv('HOME') IS NOT NULL",
    "current_setting": "SELECT count(*) FROM {object} WHERE current_setting('temp_directory') IS NULL",
    "pg_read_file": "SELECT count(*) FROM {object} WHERE pg_read_file('/etc/passwd') IS NULL",
    "pg_ls_dir": "SELECT count(*) FROM {object} WHERE pg_ls_dir('.') IS NULL",
    "pg_sleep": "SELECT count(pg_sleep(100)) FROM {object}",
    "lo_import": "SELECT count(lo_import('/etc/passwd')) FROM {object}",
    "dblink": "SELECT count(*) FROM {object} WHERE dblink('host=x', 'SELECT 1') IS NULL",
    "spark reflect": "SELECT count(reflect('java.lang.System', 'getenv', 'HOME')) FROM {object}",
    "spark java_method": "SELECT count(java_method('java.lang.System', 'getenv')) FROM {object}",
    "clickhouse url": "SELECT count(*) FROM {object} WHERE url('http://x', 'CSV') IS NULL",
    "clickhouse s3": "SELECT count(*) FROM {object}, s3('http://x')",
    "second statement": "SELECT count(*) FROM {object}; COPY (SELECT 1) TO 'out.csv'",
    "COPY": "COPY (SELECT * FROM {object}) TO 'out.csv'",
    "EXPORT": "EXPORT DATABASE 'dir' -- {object}",
    "ATTACH": "ATTACH 'x.db' AS x -- {object}",
    "PRAGMA": "PRAGMA version -- {object}",
    "DESCRIBE": "DESCRIBE {object}",
    "SUMMARIZE": "SUMMARIZE {object}",
    "PIVOT": "PIVOT {object} ON sensor USING count(*)",
    "SET": "SET enable_external_access = true -- {object}",
    "INSTALL": "INSTALL httpfs -- {object}",
    "dot command": ".read /etc/passwd -- {object}",
    "recursion bomb": (
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r, {object}"
    ),
    "cross-join bomb": "SELECT count(*) FROM " + ", ".join(["{object}"] * 9),
    "bracket bomb": "SELECT count(*) FROM {object} WHERE value = " + "(" * 200 + "1" + ")" * 200,
    "comment hiding a function": "SELECT count(*) FROM {object} /* harmless */ WHERE read_blob('x') IS NULL",
    "unicode-quoted CTE": 'WITH \\"crédits\\" AS (SELECT 1) SELECT count(*) FROM {object}',
    "schema-qualified function": "SELECT count(*) FROM {object} WHERE main.getenv('x') IS NULL",
    "lambda": "SELECT count(*) FROM {object} WHERE list_transform([1], x -> x) IS NULL",
}


def _contract(sql: str) -> str:
    return CONTRACT.replace("SQL", sql.replace("SECRET", SECRET))


def test_the_contract_as_written_loads() -> None:
    contract = parse_contract(_contract("SELECT count(*) FROM {object} WHERE value < 0"), "c.yaml")
    assert contract.sql_checks[0].name == "probe"


@pytest.mark.parametrize("sql", list(ATTACKS.values()), ids=list(ATTACKS))
def test_an_attack_is_refused_at_load_with_its_position(sql: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_contract(_contract(sql), "evil.yaml")
    error = info.value
    assert error.location is not None
    assert (error.location.path, error.location.line) == ("evil.yaml", SQL_LINE)
    assert error.location.column >= SQL_COLUMN - 1  # the quote, or what is refused inside the query
    assert "\n" not in error.message and len(error.message) < 300


@pytest.mark.parametrize(
    ("sql", "column"),
    [
        ("SELECT count(*) FROM {object} WHERE getenv('HOME') IS NULL", 36),
        ("SELECT count(*) FROM {object}, other", 31),
    ],
)
def test_the_column_points_at_what_is_refused(sql: str, column: int) -> None:
    with pytest.raises(ContractError) as info:
        parse_contract(_contract(sql), "evil.yaml")
    assert info.value.location.column == SQL_COLUMN + column


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM {object} WHERE value <= 0",
        "SELECT count(DISTINCT sensor) FROM {object}",
        "SELECT count(*) FROM {object} a JOIN {object} b ON a.sensor = b.sensor AND a.ts < b.ts",
        "WITH d AS (SELECT sensor, count(*) AS n FROM {object} GROUP BY 1), e AS (SELECT * FROM d) SELECT max(n) FROM e",  # noqa: E501
        "SELECT count(*) FROM {object} QUALIFY lag(value) OVER (PARTITION BY sensor ORDER BY ts) > value",
        "SELECT count(*) FILTER (WHERE value IS NULL) * 100.0 / count(*) FROM {object}",
        "SELECT quantile_cont(value, 0.95) FROM {object}",
        "SELECT count(*) FROM {object} WHERE ts > now() - INTERVAL 1 DAY AND date_trunc('day', ts) < ts",
        "SELECT count(*) FROM {object} WHERE sensor IN (SELECT sensor FROM {object} WHERE value > 1)",
    ],
)
def test_checks_people_write_still_load(sql: str) -> None:
    assert parse_contract(_contract(sql), "c.yaml").sql_checks[0].sql == sql


def test_the_cli_refuses_in_one_line_with_exit_2_and_no_file_content(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n", encoding="utf-8")
    sql = f"SELECT CAST(content AS INT) FROM {{object}}, LATERAL read_text('{secret.as_posix()}') LIMIT 1"
    contract = write(tmp_path, _contract(sql))
    data = write(tmp_path, "sensor,ts,value\na,2026-01-01T00:00:00Z,1\n", "data.csv")
    for args in (("lint", contract), ("validate", contract, data), ("validate", contract, data, "-f", "github")):
        result = run_cli(*args)
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "contract.yaml:11:" in result.stderr
        assert "Traceback" not in result.stderr
        assert SECRET not in result.stdout + result.stderr


MAPPING = """\
mapping: vendor
transform_version: 1.0.0
filter: FILTER
columns:
  sensor: {from: s}
"""


@pytest.mark.parametrize(
    "text",
    [
        'SUMMARIZE "some/file.csv"',
        "DESCRIBE 'some/file.csv'",
        "PIVOT 'x.csv' ON a USING count(*)",
        "ATTACH 'x.db'",
        "INSTALL httpfs",
        "SET enable_external_access = true",
        "PRAGMA version",
        "getenv('HOME') IS NOT NULL",
        "read_text('/etc/passwd') IS NOT NULL",
        "s IN (SELECT 1)",
        "EXISTS (SELECT * FROM 'https://example.com/x.csv')",
        "count(*) > 0",
        "row_number() OVER () > 1",
        "s IS NOT NULL; COPY (SELECT 1) TO 'out.csv'",
        "current_setting('x') IS NULL",
    ],
)
def test_a_mapping_filter_outside_the_allow_list_is_refused_with_its_position(text: str, tmp_path: Path) -> None:
    path = write(tmp_path, MAPPING.replace("FILTER", '"' + text.replace('"', '\\"') + '"'), "m.yaml")
    with pytest.raises(ContractError) as info:
        load_mapping(path)
    assert info.value.location is not None and info.value.location.line == 3


def test_a_plain_mapping_filter_loads(tmp_path: Path) -> None:
    text = "s IS NOT NULL AND lower(trim(s)) <> 'x' AND try_cast(v AS DOUBLE) BETWEEN -1 AND 1"
    path = write(tmp_path, MAPPING.replace("FILTER", f'"{text}"'), "m.yaml")
    assert load_mapping(path).filter == text
