"""What a newcomer sees: help placeholders, refused option values, output paths that cannot be written."""

from __future__ import annotations

import re

import pytest

from tests.conftest import run_cli, write
from tests.engines.conftest import OHLCV, SENSOR
from tscontract.cli import _command

COMMANDS = [
    ["version"],
    ["show"],
    ["lint"],
    ["validate"],
    ["profile"],
    ["init"],
    ["export"],
    ["import"],
    ["diff"],
    ["history"],
    ["replay"],
    ["compat"],
    ["ingest"],
    ["corrections"],
    ["check-store"],
    ["registry", "serve"],
]


def one_line_error(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return lines[0]


def test_every_command_is_covered():
    command = _command()
    names = {(n,) for n in command.commands} - {("registry",)}
    names |= {("registry", n) for n in command.commands["registry"].commands}
    assert names == {tuple(c) for c in COMMANDS}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_shows_placeholders_not_python_types(command):
    result = run_cli(*command, "--help")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    # typer's annotation labels: <str>, <path>, <list[str]>, <bool>, <int range>, and {argument} in usage
    assert not re.search(r"<(str|path|bool|int|float|list\[[a-z]+\]|int range|float range)>", text), text
    assert not re.search(r"\{[a-z_]+\}", text), text
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert usage.split("Usage: ", 1)[1].startswith("tscontract " + " ".join(command))


def test_placeholders_name_what_is_expected():
    text = run_cli("validate", "--help").stdout
    usage = next(line for line in text.splitlines() if "Usage:" in line).strip()
    assert usage == "Usage: tscontract validate [OPTIONS] CONTRACT DATA..."
    assert re.search(r"--now\s+INSTANT", text) and re.search(r"--format\s+-f\s+text\|json\|junit\|github", text)
    assert re.search(r"--catalog\s+-c\s+FILE", text) and re.search(r"--examples\s+INTEGER", text)
    ingest = run_cli("ingest", "--help").stdout
    assert re.search(r"--lock-timeout\s+SECONDS", ingest) and re.search(r"--store\s+STORE", ingest)
    assert re.search(r"--backfill\s+Historical", ingest)  # a flag has no placeholder


def test_a_bad_choice_lists_the_valid_values_on_one_line():
    line = one_line_error(run_cli("validate", OHLCV / "contract.yaml", "x.csv", "--format", "xml"))
    assert line.startswith("error: Invalid value for '--format' / '-f': 'xml' is not one of: text, json, junit")
    assert "Value error" not in line
    number = one_line_error(run_cli("ingest", "c.yaml", "d.csv", "--store", "w.duckdb", "--lock-timeout", "soon"))
    assert "'--lock-timeout': SECONDS should be a valid number" in number


def test_compat_lists_the_modes(tmp_path):
    schema = write(tmp_path, '{"type": "record", "name": "r", "fields": []}', "r.avsc")
    line = one_line_error(run_cli("compat", "avro", schema, schema, "--mode", "sideways"))
    assert line == (
        "error: --mode 'sideways' is not one of: BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, "
        "FULL, FULL_TRANSITIVE, NONE"
    )
    assert run_cli("compat", "avro", schema, schema, "--mode", "backward").returncode == 0


def test_output_paths_that_cannot_be_written(tmp_path):
    missing = tmp_path / "missing" / "bounds.yaml"
    profile = run_cli("profile", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "--out", missing)
    assert one_line_error(profile) == f"error: --out {missing}: directory {missing.parent} does not exist"
    into_dir = run_cli("profile", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "-o", tmp_path)
    assert one_line_error(into_dir) == f"error: --out {tmp_path}: is a directory; give a file name"
    afile = write(tmp_path, "x", "afile")
    html = run_cli("validate", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "--html", afile / "r.html")
    assert one_line_error(html) == f"error: --html {afile / 'r.html'}: directory {afile} is not a directory"
    export = run_cli("export", "avro", SENSOR / "contract.yaml", "-o", afile / "out")
    assert one_line_error(export) == f"error: {afile / 'out'}: Not a directory"
    imported = run_cli("import", "odcs", afile, "-o", missing)
    assert one_line_error(imported).startswith(f"error: --out {missing}: directory")
    assert not missing.parent.exists()


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_square_brackets_in_option_help_survive_rich_markup(command):
    # rich reads '[p01, p99]' as a markup tag and drops it unless escaped ('\\[p01, p99]')
    click = _command()
    for name in command:
        click = click.commands[name]
    words = {m for p in click.params for m in re.findall(r"\[[a-z][^\]\s]*", (getattr(p, "help", "") or "").lower())}
    if not words:
        return
    text = " ".join(run_cli(*command, "--help").stdout.lower().split())
    assert all(w in text for w in words), (words, text)
    if command == ["profile"]:
        assert "widen [p01, p99] by" in text
