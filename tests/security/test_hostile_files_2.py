"""Hostile data files, continued: long fields, long lines (issue 26, item 4).

Big inputs are generated in ``tmp_path`` at test time, each kept to a few seconds.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import run_cli
from tests.security.test_hostile_files import _contract, _one_line_refusal

_GOOD = b"a,2026-11-30T14:3%d:00Z,1.5\n"


def _csv_with(tmp_path: Path, name: str, line: bytes) -> Path:
    """A CSV whose line 7 is ``line``, between five good rows and one more."""
    data = tmp_path / name
    with data.open("wb") as handle:
        handle.write(b"sensor,ts,value\n" + b"".join(_GOOD % i for i in range(5)) + line + b"\n" + _GOOD % 9)
    return data


def test_a_17_mb_run_of_digits_is_a_value_judged_and_shown_cut(tmp_path):
    """The incident: validating such a file ran for more than 50 minutes (DuckDB's reader sniffs the
    values' types even where the columns are given, quadratic in a run of digits). Now it is a value."""
    digits = 17 << 20
    data = _csv_with(tmp_path, "digits.csv", b"a," + b"9" * digits + b",2")
    done = run_cli("validate", "--format", "json", _contract(tmp_path, "ms"), data)
    report, example = _the_one_type_failure(done)
    assert example["row"] == 6
    assert example["ts"] == "9" * 200 + f"…({digits} chars)"
    assert report["rows"] == 7


def test_a_field_over_16_mib_is_data_and_a_line_over_64_mib_is_refused_naming_it(tmp_path):
    field = _csv_with(tmp_path, "field.csv", b"b" * (20 << 20) + b",2026-11-30T14:40:00Z,2")
    done = run_cli("validate", "--format", "json", _contract(tmp_path, "ms"), field)
    assert done.returncode == 0, done.stderr[-500:]
    assert json.loads(done.stdout)["rows"] == 7
    line = _csv_with(tmp_path, "line.csv", b"b" * (65 << 20) + b",2026-11-30T14:40:00Z,2")
    done = run_cli("validate", _contract(tmp_path, "ms"), line)
    _one_line_refusal(done, "line.csv: line 7 is 68,157,463 bytes long; lines of at most 64 MiB are read")


def test_a_nul_byte_is_refused_naming_its_line(tmp_path):
    """DuckDB's line reader takes NUL for "no delimiter": a line of NULs read as a blank line (no row,
    silently) and the file was then refused with the sniffer's text."""
    contract = _contract(tmp_path, "ms")
    for name, line in [("nul_line.csv", b"\x00\x00\x00"), ("nul_value.csv", b"a,2026-11-30T14:4\x000:00Z,2")]:
        done = run_cli("validate", contract, _csv_with(tmp_path, name, line))
        _one_line_refusal(done, f"{name}: line 7 holds a NUL byte (\\x00), which no CSV text holds")
        assert "sniff" not in done.stderr


def test_a_20_mb_json_string_is_a_value_judged_and_shown_cut(tmp_path):
    """The incident: one 20 MB string exceeded the memory limit. Now it is read and judged."""
    size = 20 << 20
    good = '{"sensor":"a","ts":"2026-11-30T14:3%d:00Z","value":1.5}'
    data = tmp_path / "long.jsonl"
    data.write_text("\n".join([good % 1, '{"sensor":"a","ts":"' + "x" * size + '","value":2}', good % 2]) + "\n")
    done = run_cli("validate", "--format", "json", _contract(tmp_path, "ms"), data)
    _, example = _the_one_type_failure(done)
    assert (example["row"], example["ts"]) == (2, "x" * 200 + f"…({size} chars)")


def test_a_line_that_is_no_json_is_refused_naming_its_line_in_the_file(tmp_path):
    """DuckDB names the line after it, counting no blank line: the line is counted again."""
    good = '{"sensor":"a","ts":"2026-11-30T14:3%d:00Z","value":1.5}\n'
    data = tmp_path / "broken.jsonl"
    data.write_text(good % 1 + "\n  \n" + good % 2 + '{"sensor": "a", "ts": 1\n' + good % 3)
    done = run_cli("validate", _contract(tmp_path, "ms"), data)
    _one_line_refusal(done, "broken.jsonl: line 5 is not valid JSON: unexpected end of data")
    assert "Malformed JSON" not in done.stderr


def _the_one_type_failure(done: subprocess.CompletedProcess[str]) -> tuple[dict, dict]:
    """The single example of the only failing check, field.ts.type, of a validate run (exit 1)."""
    assert done.returncode == 1, done.stderr[-500:]
    report = json.loads(done.stdout)
    failed = {c["id"]: c for c in report["checks"] if c["status"] != "passed"}
    assert set(failed) == {"field.ts.type"}, list(failed)
    (example,) = failed["field.ts.type"]["examples"]
    return report, example
