"""Output bounded and escaped: a hostile value in a failing example, through every report format.

A 256 KB value is cut to 200 characters with its length stated; rich markup, emoji codes, ANSI
escapes, CR, NUL and bidi overrides in a value are shown as written, never rendered; GitHub
annotations and JUnit XML parse back to the value as shown; engine error text is one bounded line.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.conftest import run_cli, write
from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.report.github import render_github
from tscontract.report.junit import render_junit
from tscontract.shown import MESSAGE_CHARS, VALUE_CHARS, cut, engine_message, shown_message, visible

BIG = 256 * 1024
MARKER = f"…({BIG} chars)"
HOSTILE = "AB:x:CD:smile: [bold red]loud[/] \x1b[31mred\x1b[0m\rX\x0b\x00\u202eevil\x7f"
HOSTILE_SHOWN = "AB:x:CD:smile: [bold red]loud[/] \\x1b[31mred\\x1b[0m\\rX\\x0b\\x00\\u202eevil\\x7f"

CONTRACT = """\
contract: bounded
version: 1.0.0
owner: me@example
key: [name, t]
time:
  column: t
  precision: s
  timezone: UTC instant
fields:
  name: {type: string, nullable: false}
  t: {type: timestamp_s_utc, nullable: false}
  v: {type: int64, nullable: false}
invariants:
  - v >= 0
"""


def shown(stdout: str, fmt: str) -> str:
    """The output as read: JSON decoded (it writes ``…`` as ``\\u2026``)."""
    return json.dumps(json.loads(stdout), ensure_ascii=False) if fmt == "json" else stdout


def batch(tmp_path: Path, name: str) -> Path:
    """One row failing ``v >= 0`` whose key column holds ``name`` (JSON lines hold any character)."""
    path = tmp_path / "batch.jsonl"
    rows = [{"name": name, "t": "2026-01-01T00:00:00Z", "v": -1}, {"name": "B", "t": "2026-01-01T00:01:00Z", "v": 1}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def big(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path, CONTRACT), batch(tmp_path, "A" * BIG)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path, CONTRACT), batch(tmp_path, HOSTILE)


# ---------------------------------------------------------------------------- the one cut
def test_cut_states_the_length_and_keeps_short_text():
    assert cut("abc") == "abc" and cut("a" * VALUE_CHARS) == "a" * VALUE_CHARS
    assert cut("a" * (VALUE_CHARS + 1)) == "a" * VALUE_CHARS + f"…({VALUE_CHARS + 1} chars)"


def test_engine_message_is_its_first_line_bounded():
    secret = "root:x:0:0:root:/root:/bin/bash" * 1000
    exc = RuntimeError(f"\nConversion Error: Could not convert string '{secret}' to INT32\nLINE 1: SELECT ...")
    shown = engine_message(exc)
    assert shown.startswith("Conversion Error: Could not convert string 'root:x:0:0")
    assert len(shown) < VALUE_CHARS + 30 and shown.endswith(" chars)") and "LINE 1" not in shown
    assert engine_message(RuntimeError("")) == "RuntimeError"


def test_the_report_model_holds_no_unbounded_value_or_message():
    result = CheckResult(
        "c", "row", "invariants", "v >= 0", "invariants[0]", "error", "failed", 1,
        [{"row": 1, "name": "A" * BIG, "nested": ["B" * BIG]}], "M" * BIG,
    )  # fmt: skip
    assert result.examples[0]["name"] == "A" * VALUE_CHARS + MARKER
    assert result.examples[0]["nested"] == ["B" * VALUE_CHARS + MARKER]
    assert result.message == "M" * MESSAGE_CHARS + MARKER and result.examples[0]["row"] == 1


# ---------------------------------------------------------------------------- every format, 256 KB
@pytest.mark.parametrize("fmt", ["text", "json", "junit", "github"])
def test_a_256_kb_value_is_cut_in_every_format(big, fmt):
    contract, data = big
    done = run_cli("validate", contract, data, "--format", fmt)
    assert done.returncode == 1, done.stderr
    assert len(done.stdout) < 20_000, len(done.stdout)
    out = shown(done.stdout, fmt)
    assert "A" * VALUE_CHARS + MARKER in out and "A" * (VALUE_CHARS + 1) not in out


def test_a_256_kb_value_is_cut_in_the_html_report_and_quiet_text(big, tmp_path):
    contract, data = big
    page = tmp_path / "report.html"
    done = run_cli("validate", contract, data, "--html", page, "--quiet")
    assert done.returncode == 1, done.stderr
    assert len(done.stdout) < 5_000 and "A" * VALUE_CHARS + MARKER in done.stdout
    text = page.read_text(encoding="utf-8")
    assert len(text) < 100_000 and "A" * VALUE_CHARS + MARKER in text and "A" * (VALUE_CHARS + 1) not in text


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_ingest_output_cuts_a_256_kb_value(big, tmp_path, fmt):
    contract, data = big
    done = run_cli("ingest", contract, data, "--store", tmp_path / "store.duckdb", "--format", fmt)
    assert done.returncode == 1, done.stderr
    assert len(done.stdout) < 20_000 and "A" * VALUE_CHARS + MARKER in shown(done.stdout, fmt)
    assert "1 quarantined" in done.stdout if fmt == "text" else json.loads(done.stdout)["quarantined"] == 1


# ---------------------------------------------------------------------------- escaped for each format
def test_text_shows_markup_emoji_codes_and_controls_as_written(hostile):
    contract, data = hostile
    for extra in ((), ("--quiet",)):
        done = run_cli("validate", contract, data, *extra)
        assert done.returncode == 1, done.stderr
        assert f"name={HOSTILE_SHOWN}" in done.stdout
        assert "\x1b" not in done.stdout and "\r" not in done.stdout and "\x00" not in done.stdout
        assert "❌" not in done.stdout and "😄" not in done.stdout and "\u202e" not in done.stdout


def test_json_keeps_the_value_exactly(hostile):
    contract, data = hostile
    done = run_cli("validate", contract, data, "--format", "json")
    check = next(c for c in json.loads(done.stdout)["checks"] if c["id"] == "invariants[0]")
    assert check["examples"][0]["name"] == HOSTILE


def test_junit_parses_back_with_the_value_shown(hostile):
    contract, data = hostile
    done = run_cli("validate", contract, data, "--format", "junit")
    root = ET.fromstring(done.stdout)  # NUL and \x0b would make it unparseable
    failure = next(c for c in root.iter("testcase") if c.get("name") == "invariants[0]").find("failure")
    assert failure is not None and f"name={HOSTILE_SHOWN}" in (failure.text or "")


def _annotation_message(line: str) -> str:
    """The message of a workflow command as the runner reads it (its escapes undone)."""
    message = line.split("::", 2)[2]
    return message.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def test_github_annotation_is_one_line_and_reads_back(hostile):
    contract, data = hostile
    done = run_cli("validate", contract, data, "--format", "github")
    lines = done.stdout.splitlines()
    annotation = next(line for line in lines if line.startswith("::error ") and "title=invariants[0]" in line)
    assert len(lines) == 2 and "\x1b" not in done.stdout and "\r" not in done.stdout
    assert f"name={HOSTILE_SHOWN}" in _annotation_message(annotation).splitlines()[1]


def _report(value: str, check_id: str = "c") -> ValidationReport:
    check = CheckResult(check_id, "row", "invariants", "v >= 0", "invariants[0]", "error", "failed", 1, [{"x": value}])
    return ValidationReport("bounded", "1.0.0", 1, "duckdb", 0.0, ["data.csv"], [check])


def test_github_properties_escape_colon_comma_percent_and_line_breaks():
    out = render_github(_report("50% done,\nnext::x", "a:b,c%d\r\ne"), "dir/x,y:z.yaml", lambda _: 3)
    head, message = out.splitlines()[0].split("::", 2)[1:]
    assert head == "error file=dir/x%2Cy%3Az.yaml,line=3,title=a%3Ab%2Cc%25d\\r\\ne"
    assert _annotation_message(out.splitlines()[0]).splitlines()[1] == "x=50% done,\\nnext::x"
    assert message.count("%0A") == 1  # the one break between the failure line and its example


def test_junit_escapes_xml_and_characters_xml_cannot_hold():
    value = '<a href="x">&amp;</a>\x00\x0b\x1f\ud800\ufffe'
    root = ET.fromstring(render_junit(_report(value, "id<&>\x00"), "c.yaml", lambda _: None))
    case = next(root.iter("testcase"))
    assert case.get("name") == "id<&>\\x00"
    assert (case.find("failure").text or "") == 'x=<a href="x">&amp;</a>\\x00\\x0b\\x1f\\ud800\\ufffe'  # type: ignore[union-attr]


def test_html_escapes_markup_and_shows_controls(hostile, tmp_path):
    contract, data = hostile
    page = tmp_path / "report.html"
    assert run_cli("validate", contract, data, "--html", page).returncode == 1
    text = page.read_text(encoding="utf-8")
    assert html.escape(HOSTILE_SHOWN) in text and "\x1b" not in text and "\x00" not in text
    assert not re.search(r"<bold|<script", text)


# ---------------------------------------------------------------------------- engine error text
def test_a_failing_sql_check_error_is_one_bounded_line(tmp_path):
    """An engine error that quotes a value (here a 256 KB string it cannot convert): first line, cut."""
    contract = write(
        tmp_path,
        CONTRACT + "sql_checks:\n  - name: as_int\n    sql: SELECT CAST(max(name) AS INTEGER) FROM {object}\n"
        "    must_be_greater_than: 0\n",
    )
    done = run_cli("validate", contract, batch(tmp_path, "Z" * BIG), "--format", "json")
    check = next(c for c in json.loads(done.stdout)["checks"] if c["kind"] == "sql_check")
    assert check["status"] == "error" and check["message"].startswith("the query failed: Conversion Error")
    assert len(check["message"]) <= MESSAGE_CHARS + 20 and "chars)" in check["message"]
    text = run_cli("validate", contract, batch(tmp_path, "Z" * BIG))
    assert len(text.stdout) < 20_000 and "the query failed: Conversion Error" in text.stdout


def test_error_lines_are_bounded_and_visible(tmp_path):
    """An input error quoting the file (a 256 KB column name given twice): one line, cut, no raw control."""
    column = "\x1b[2J" + "C" * BIG
    data = tmp_path / "bad.csv"
    data.write_text(f"name,t,v,{column},{column}\nA,2026-01-01T00:00:00Z,1,,\n", encoding="utf-8")
    done = run_cli("validate", write(tmp_path, CONTRACT), data, "--format", "json")
    assert done.returncode == 2 and "appears twice" in done.stderr
    assert len(done.stderr) < MESSAGE_CHARS + 100 and "\x1b" not in done.stderr and "\\x1b[2J" in done.stderr
    message = json.loads(done.stdout)["error"]["message"]
    assert len(message) < MESSAGE_CHARS and f"…({BIG + 4} chars)' appears twice" in message


def test_visible_names_controls_and_leaves_text():
    assert visible("a\tb\nc\r\x1b\x9b\u2028é😄") == "a\\tb\\nc\\r\\x1b\\x9b\\u2028é😄"
    assert shown_message("\x1b" + "m" * BIG) == "\\x1b" + "m" * (MESSAGE_CHARS - 1) + f"…({BIG + 1} chars)"


def test_the_console_renders_no_emoji_code_even_where_markup_is_off(capsys):
    """``corrections``, ``ingest``'s summary and the other listings print with markup off: emoji codes too."""
    from tscontract.report.console import make_console

    make_console().print("AB:x:CD:smile: 12 [bold]x[/]", markup=False, soft_wrap=True)
    assert capsys.readouterr().out == "AB:x:CD:smile: 12 [bold]x[/]\n"


# ---------------------------------------------------------------------------- contract text: show, diff, lint
def test_show_and_diff_print_contract_text_with_controls_visible_and_cut(tmp_path):
    """A shared contract's owner or note holding terminal escapes (clear the screen, recolour) is printed with the
    escapes visible; a diff line quoting a 256 KB note is one line cut to the message bound."""
    hostile = CONTRACT.replace("owner: me@example", 'owner: "me\\e[2J@example"')
    old = write(
        tmp_path, hostile.replace("v: {type: int64, nullable: false}", 'v: {type: int64, nullable: false, note: "x"}')
    )
    note = "\\e[31m" + "n" * BIG
    new = tmp_path / "new.yaml"
    new.write_text(old.read_text().replace('note: "x"', f'note: "{note}"').replace("1.0.0", "1.1.0"))
    shown_contract = run_cli("show", old)
    assert shown_contract.returncode == 0 and "\x1b" not in shown_contract.stdout
    assert "me\\x1b[2J@example" in shown_contract.stdout
    diff = run_cli("diff", old, new)
    assert diff.returncode == 0 and "\x1b" not in diff.stdout
    [line] = [row for row in diff.stdout.splitlines() if "fields.v.note" in row]
    assert len(line) <= MESSAGE_CHARS + 20 and line.endswith("chars)") and "\\x1b[31m" in line


def test_lint_draws_the_first_200_findings_errors_first_and_says_how_many_more(tmp_path):
    fields = "".join(f"  f{n:03d}: {{type: float64, unit: bar}}\n" for n in range(300))  # each: TS107, no nullable
    text = CONTRACT.replace("invariants:", fields.rstrip("\n") + "\ninvariants:")
    done = run_cli("lint", write(tmp_path, text))
    counted = json.loads(run_cli("lint", write(tmp_path, text), "--format", "json").stdout)["findings"]
    errors = [f for f in counted if f["severity"] == "error"]
    assert len(counted) > 300 and errors
    rows = [line for line in done.stdout.splitlines() if re.match(r"│ (error|warning|info) ", line)]
    assert len(rows) == 200
    assert [row for row in rows if "│ error" in row] == [row for row in rows[: len(errors)]]  # errors first
    assert f"… {len(counted) - 200} more finding(s) not drawn" in done.stdout
