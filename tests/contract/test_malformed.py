"""Malformed contracts: each fails with one precise line naming file:line:column and exit 2
(unreadable or inconsistent contract) or exit 1 (lint error)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import OHLCV_CONTRACT, SENSOR_CONTRACT, run_cli, write
from tscontract.cli import main

ERROR_LINE = re.compile(r"^error: (?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main([*args])
    out, err = capsys.readouterr()
    return info.value.code, out, err


def mutate(seed, old: str, new: str) -> str:
    text = seed.read_text()
    assert old in text, f"{old!r} not in seed"
    return text.replace(old, new, 1)


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(needle)


# (id, seed, old, new, message fragment, needle for the expected line or None, expected column or None)
CASES = [
    ("unbalanced decimal", SENSOR_CONTRACT, "decimal(12,4)", "decimal(12,4", "cannot parse", "value:", None),
    (
        "scale above precision",
        SENSOR_CONTRACT,
        "decimal(12,4)",
        "decimal(4,12)",
        "scale 12 exceeds precision 4",
        "value:",
        22,
    ),
    ("precision too large", OHLCV_CONTRACT, "decimal(24,4)", "decimal(60,4)", "out of range", "volume:", None),
    (
        "duplicate enum member",
        SENSOR_CONTRACT,
        "enum[good, suspect, bad]",
        "enum[good, suspect, good]",
        "listed twice",
        "quality:",
        22,
    ),
    (
        "unknown type",
        SENSOR_CONTRACT,
        "series_id:  {type: string}",
        "series_id:  {type: strng}",
        "unknown type 'strng'",
        "series_id:  {",
        22,
    ),
    (
        "naive timestamp type",
        OHLCV_CONTRACT,
        "timestamp_ms_utc",
        "timestamp_ms",
        "naive timestamp",
        "bar_start: {",
        None,
    ),
    (
        "incomplete invariant",
        OHLCV_CONTRACT,
        "low <= open <= high",
        "low <= open <=",
        "ends too early",
        "  - low <= open <=",
        19,
    ),
    (
        "unknown column in invariant",
        OHLCV_CONTRACT,
        "volume >= 0",
        "volum >= 0",
        "unknown column 'volum'",
        "volum >= 0",
        5,
    ),
    (
        "enum word not a member",
        SENSOR_CONTRACT,
        "quality = bad",
        "quality = awful",
        "unknown column 'awful'",
        "quality = awful",
        None,
    ),
    (
        "quoted enum literal not a member",
        SENSOR_CONTRACT,
        "quality = bad",
        "quality = 'awful'",
        "'awful' is not a member",
        "quality = 'awful'",
        None,
    ),
    (
        "unknown catalog attribute",
        SENSOR_CONTRACT,
        "catalog hard_bounds",
        "catalog bounds",
        "not a catalog lookup",
        "catalog bounds",
        None,
    ),
    (
        "unknown function",
        OHLCV_CONTRACT,
        "volume >= 0",
        "sqrt(volume) >= 0",
        "unknown function 'sqrt'",
        "sqrt(volume)",
        None,
    ),
    (
        "unknown top-level key",
        OHLCV_CONTRACT,
        "owner: market-data@example",
        "owner: market-data@example\ncolour: blue",
        "unknown key 'colour'",
        "colour:",
        1,
    ),
    (
        "unknown field key (typo)",
        OHLCV_CONTRACT,
        "symbol:   {type: string, nullable: false}",
        "symbol:   {type: string, nulable: false}",
        "unknown key 'nulable'",
        "nulable",
        28,
    ),
    (
        "duplicate top-level key",
        OHLCV_CONTRACT,
        "owner: market-data@example",
        "owner: market-data@example\nowner: someone-else",
        "duplicate key 'owner'",
        "owner: someone-else",
        1,
    ),
    (
        "duplicate field",
        SENSOR_CONTRACT,
        "  unit:       {type: string",
        "  quality:    {type: string}\n  unit:       {type: string",
        "duplicate key 'quality'",
        "quality:    {type: enum",
        3,
    ),
    (
        "version not semver",
        OHLCV_CONTRACT,
        "version: 3.1.0",
        "version: 3.1",
        "expected text, got a number (3.1)",
        "version:",
        10,
    ),
    (
        "version not semver text",
        OHLCV_CONTRACT,
        "version: 3.1.0",
        "version: v3.1.x",
        "not semantic versioning",
        "version:",
        10,
    ),
    (
        "unknown unit",
        SENSOR_CONTRACT,
        "unit: per series from catalog, dimension: per series",
        "unit: bananas, dimension: pressure",
        "unknown unit 'bananas'",
        "value:",
        None,
    ),
    (
        "unknown dimension",
        SENSOR_CONTRACT,
        "unit: per series from catalog, dimension: per series",
        "unit: kPa, dimension: pressiness",
        "unknown dimension 'pressiness'",
        "value:",
        None,
    ),
    (
        "key column missing",
        SENSOR_CONTRACT,
        "key: [series_id, event_ts, revision]",
        "key: [series_id, event_ts, rev]",
        "key column 'rev'",
        "key:",
        None,
    ),
    (
        "time column not a timestamp",
        SENSOR_CONTRACT,
        "column: event_ts",
        "column: series_id",
        "not a UTC timestamp",
        "column: series_id",
        None,
    ),
    (
        "precision disagrees with type",
        SENSOR_CONTRACT,
        "precision: ms",
        "precision: us",
        "disagrees",
        "precision: us",
        None,
    ),
    (
        "precision unknown",
        SENSOR_CONTRACT,
        "precision: ms",
        "precision: minutes",
        "precision must be one of",
        "precision: minutes",
        None,
    ),
    (
        "cadence not understood",
        OHLCV_CONTRACT,
        "cadence: 60s within session; no bars outside session",
        "cadence: every minute or so",
        "cannot parse cadence",
        "cadence:",
        None,
    ),
    (
        "timezone not UTC",
        SENSOR_CONTRACT,
        "timezone: UTC instant; device zone recorded in catalog",
        "timezone: local plant time",
        "cannot parse timezone rule",
        "timezone:",
        None,
    ),
    (
        "timezone note not understood",
        SENSOR_CONTRACT,
        "device zone recorded in catalog",
        "device zone is whatever",
        "cannot parse timezone rule",
        "timezone:",
        None,
    ),
    (
        "revision window not a duration",
        OHLCV_CONTRACT,
        "window: 5 trading days",
        "window: soon",
        "cannot parse duration",
        "window:",
        None,
    ),
    (
        "fixed value of wrong type",
        OHLCV_CONTRACT,
        "value: false",
        'value: "no"',
        "is not a bool",
        "adjusted:",
        None,
    ),
    (
        "nullable as a string",
        OHLCV_CONTRACT,
        "symbol:   {type: string, nullable: false}",
        'symbol:   {type: string, nullable: "no"}',
        "valid boolean",
        "symbol:",
        None,
    ),
    (
        "unit on a string field",
        SENSOR_CONTRACT,
        "unit:       {type: string,",
        "unit:       {type: string, unit: K,",
        "unit on non-numeric field",
        "unit:       {",
        None,
    ),
    (
        "missing key section",
        SENSOR_CONTRACT,
        "key: [series_id, event_ts, revision]\n",
        "",
        "missing required key 'key'",
        None,
        None,
    ),
    (
        "invariant written as a mapping without its clause",  # {clause: ..., severity: ...} is the mapping form
        OHLCV_CONTRACT,
        "  - volume >= 0",
        "  - {volume: 0}",
        "missing required key 'clause'",
        "{volume: 0}",
        None,
    ),
    (
        "revisions allowed without revision in key",
        SENSOR_CONTRACT,
        "key: [series_id, event_ts, revision]",
        "key: [series_id, event_ts]",
        "'revision' is not part of the key",
        "allowed: true",
        None,
    ),
    (
        "yaml syntax error",
        OHLCV_CONTRACT,
        "key: [symbol, bar_start, revision]",
        "key: [symbol, bar_start, revision",
        "not valid YAML",
        None,
        None,
    ),
    (
        "gap type unknown",
        OHLCV_CONTRACT,
        "provenance_required:",
        "completeness: {window: 1d, allowed_gaps: [lunch]}\nprovenance_required:",
        "unknown gap type",
        "completeness:",
        None,
    ),
]


@pytest.mark.parametrize(
    ("seed", "old", "new", "fragment", "needle", "column"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_malformed_contract_exits_2_with_positioned_error(tmp_path, capsys, seed, old, new, fragment, needle, column):
    text = mutate(seed, old, new)
    path = write(tmp_path, text)
    code, out, err = cli(capsys, "lint", str(path))
    assert code == 2, err
    lines = err.strip().splitlines()
    assert all(ERROR_LINE.match(line) for line in lines), err  # every error of the contract, one line each
    match = ERROR_LINE.match(lines[0])
    assert match, lines[0]
    assert match["file"].endswith("contract.yaml")
    assert fragment in match["rest"], lines[0]
    if needle is not None:
        assert int(match["line"]) == line_of(text, needle), lines[0]
    if column is not None:
        assert int(match["col"]) == column, lines[0]
    assert "Traceback" not in err and out == ""


def test_error_as_json_names_clause_and_position(tmp_path, capsys):
    text = mutate(OHLCV_CONTRACT, "volume >= 0", "volum >= 0")
    path = write(tmp_path, text)
    code, out, _ = cli(capsys, "lint", str(path), "--format", "json")
    import json

    error = json.loads(out)["error"]
    assert code == 2
    assert (error["line"], error["column"], error["section"]) == (
        line_of(text, "volum >= 0"),
        5,
        "invariants[2]",
    )
    assert error["clause"] == "volum >= 0"


def test_unit_of_wrong_dimension_is_a_lint_error_exit_1(tmp_path, capsys):
    text = mutate(
        SENSOR_CONTRACT,
        "unit: per series from catalog, dimension: per series",
        "unit: kPa, dimension: temperature",
    )
    code, out, _ = cli(capsys, "lint", str(write(tmp_path, text)), "--format", "json")
    import json

    report = json.loads(out)
    assert code == 1 and not report["passed"]
    finding = next(f for f in report["findings"] if f["code"] == "TS104")
    assert finding["severity"] == "error" and finding["line"] == line_of(text, "value:")
    assert "kPa is not a temperature unit" in finding["message"]


def test_real_entry_point_no_traceback_and_debug_shows_it(tmp_path):
    path = write(tmp_path, mutate(OHLCV_CONTRACT, "volume >= 0", "volum >= 0"))
    plain = run_cli("lint", path)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1
    debug = run_cli("--debug", "lint", path)
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "ContractError" in debug.stderr


def test_missing_file_and_bad_option_exit_2(capsys, tmp_path):
    code, _, err = cli(capsys, "lint", str(tmp_path / "nope.yaml"))
    assert code == 2 and err.startswith("error: contract file not found")
    code, _, err = cli(capsys, "lint", str(tmp_path / "nope.yaml"), "--format", "xml")
    assert code == 2 and "--format" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, "lint")
    assert code == 2 and "Missing argument" in err
    empty = write(tmp_path, "", "empty.yaml")
    code, _, err = cli(capsys, "lint", str(empty))
    assert code == 2 and "empty" in err
    listed = write(tmp_path, "- a\n- b\n", "list.yaml")
    code, _, err = cli(capsys, "lint", str(listed))
    assert code == 2 and "mapping of sections" in err


@pytest.mark.parametrize(
    ("seed", "old", "new", "column", "what"),
    [
        (
            OHLCV_CONTRACT,
            "  symbol:   {type: string, nullable: false}",
            "  symbol:   {type: string, nullable: true}",
            "symbol",
            "key column 'symbol'",
        ),
        (
            OHLCV_CONTRACT,
            "  bar_start: {type: timestamp_ms_utc, nullable: false}",
            "  bar_start: {type: timestamp_ms_utc, nullable: true}",
            "bar_start",
            "time column 'bar_start'",
        ),
        (  # undeclared nullability in the seed; declared in block style here
            SENSOR_CONTRACT,
            "  event_ts:   {type: timestamp_ms_utc}",
            "  event_ts:\n    type: timestamp_ms_utc\n    nullable: true",
            "event_ts",
            "time column 'event_ts'",
        ),
        (  # a provenance column is required: declaring it nullable contradicts provenance_required
            SENSOR_CONTRACT,
            'calibration_id: {type: string, nullable: false, note: "calibration record in force at event_ts"}',
            'calibration_id: {type: string, nullable: true, note: "calibration record in force at event_ts"}',
            "calibration_id",
            "provenance column 'calibration_id'",
        ),
    ],
    ids=["key column", "time column", "time column block style", "provenance column"],
)
def test_nullable_key_time_or_provenance_column_is_a_contract_error(tmp_path, capsys, seed, old, new, column, what):
    """Silent pass closed: null keys or instants used to pass validate when `nullable: true` was declared."""
    import json

    text = mutate(seed, old, new)
    path = write(tmp_path, text)
    code, out, err = cli(capsys, "lint", str(path))
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    match = ERROR_LINE.match(lines[0])
    assert match, lines[0]
    assert f"{what} is declared nullable" in match["rest"], lines[0]
    # the position is the `nullable` value as written
    value_line = next(n for n, line in enumerate(text.splitlines(), 1) if f"{column}:" in line)
    if "nullable:" not in text.splitlines()[value_line - 1]:
        value_line = next(n for n, line in enumerate(text.splitlines(), 1) if n > value_line and "nullable:" in line)
    written = text.splitlines()[value_line - 1]
    assert int(match["line"]) == value_line
    assert int(match["col"]) == written.index("nullable:") + len("nullable: ") + 1
    code, out, _ = cli(capsys, "lint", str(path), "--format", "json")
    error = json.loads(out)["error"]
    assert code == 2 and error["section"] == f"fields.{column}.nullable"


def test_declaring_key_columns_not_nullable_stays_valid(tmp_path, capsys):
    # the seeds declare `nullable: false` on keys, or leave it undeclared: both still load
    for seed in (OHLCV_CONTRACT, SENSOR_CONTRACT):
        code, _, err = cli(capsys, "show", str(seed))
        assert code == 0, err


SENSOR_VALUE = "unit: per series from catalog, dimension: per series"


@pytest.mark.parametrize(
    ("old", "new", "fragment", "at"),
    [
        (SENSOR_VALUE, "unit: m/0, dimension: length", "division by zero", "m/0"),
        (SENSOR_VALUE, "unit: 10**10**10 m, dimension: length", "number out of range", "10**"),
        (SENSOR_VALUE, "unit: (m/s, dimension: length", "'(' is not closed", "(m/s"),
        (SENSOR_VALUE, "unit: kg/m**3), dimension: length", "')' closes nothing", "), dim"),
        (SENSOR_VALUE, "unit: kg/(m**3, dimension: length", "'(' is not closed", "(m**3"),
        (SENSOR_VALUE, 'unit: m/s, dimension: "([length] / [time]"', "'(' is not closed", '"([length]'),
        (SENSOR_VALUE, 'unit: m/s, dimension: "[length] / [speediness]"', "unknown dimension 'speediness'", "[speed"),
        (SENSOR_VALUE, 'unit: m/s, dimension: "[length] ** x"', "an exponent is a whole number", 'x"'),
        ("decimal(12,4)", "decimal(１２,4)", "non-ASCII digit '１'", "１２"),
        ("decimal(12,4)", "decimal(12,４)", "non-ASCII digit '４'", "４)"),
        ("quality = bad", "quality = bad and value >= ０", "non-ASCII digit '０'", "０"),
        ("provenance_required:", "freshness: {max_age: １５m}\nprovenance_required:", "non-ASCII digit '１'", "１５m"),
        (
            "provenance_required:",
            "units:\n  counts: {definition: 10 * (count}\nprovenance_required:",
            "'(' is not closed",
            "(count",
        ),
    ],
    ids=[
        "division by zero",
        "overflow",
        "unclosed parenthesis",
        "unopened parenthesis",
        "unclosed inner parenthesis",
        "dimension unbalanced",
        "dimension unknown in expression",
        "dimension exponent",
        "full-width digits in precision",
        "full-width digit in scale",
        "full-width digit in an invariant",
        "full-width digits in a duration",
        "unit definition unbalanced",
    ],
)
def test_unit_dimension_and_type_texts_fail_with_position(tmp_path, capsys, old, new, fragment, at):
    """Each of these was an internal error (pint's or DuckDB's) instead of a contract error."""
    text = mutate(SENSOR_CONTRACT, old, new)
    path = write(tmp_path, text)
    for command in (("lint", str(path)), ("validate", str(path), str(tmp_path / "none.csv"))):
        code, out, err = cli(capsys, *command)
        assert code == 2 and out == "" and "Traceback" not in err and "internal error" not in err, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        match = ERROR_LINE.match(lines[0])
        assert match and fragment in match["rest"], lines[0]
        line = next(n for n, written in enumerate(text.splitlines(), 1) if at in written)
        assert (int(match["line"]), int(match["col"])) == (line, text.splitlines()[line - 1].index(at) + 1), lines[0]


@pytest.mark.parametrize(
    "dimension",
    ['"[length] / [time]"', '"[length]/[time]"', '"[length] * [time] ** -1"', "speed_of_nothing_unit_free"],
    ids=["documented example", "no spaces", "negative exponent", "new base dimension word"],
)
def test_dimension_expressions_load(tmp_path, capsys, dimension):
    unit = "m/s" if "[" in dimension else "per series from catalog"
    if "[" not in dimension:
        # a dimension word tscontract does not know is a new base dimension only for declared units
        text = mutate(
            SENSOR_CONTRACT,
            "provenance_required:",
            f"units:\n  nothing: {{dimension: {dimension}}}\nprovenance_required:",
        )
    else:
        text = mutate(SENSOR_CONTRACT, SENSOR_VALUE, f"unit: {unit}, dimension: {dimension}")
    code, out, err = cli(capsys, "show", str(write(tmp_path, text)))
    assert code == 0 and "value" in out, err
