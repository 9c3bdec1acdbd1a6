"""Hostile contracts (issue 13): each is refused with positioned error lines and exit 2 within
bounded time and memory, or accepted without a traceback -- never a hang or an internal error."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import OHLCV_CONTRACT, ROOT, write
from tscontract.contract.cache import write_pickle
from tscontract.contract.grammar import MAX_BRACKETS, MAX_CLAUSE_CHARS, MAX_NESTING, ClauseSyntaxError, parse
from tscontract.contract.loader import parse_contract
from tscontract.contract.source import ALIAS_BUDGET, MAX_DEPTH
from tscontract.errors import ContractError

ERROR_LINE = re.compile(r"^error: (?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$")
GIB = 1 << 30

# "billion laughs": nine levels of nine aliases each, 1.8 KB of YAML that expands to 9**9 strings
BOMB = "contract: x\nversion: 1.0.0\n" + "l0: &l0 [" + ", ".join(['"lol"'] * 9) + "]\n"
BOMB += "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))


def with_invariant(clause: str, text: str | None = None) -> str:
    text = OHLCV_CONTRACT.read_text() if text is None else text
    assert "  - volume >= 0\n" in text
    return text.replace("  - volume >= 0\n", f"  - {clause}\n", 1)


def run_bounded(*args: str, cache: Path | None = None, seconds: float = 30) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess limited to 1 GiB of address space; its clause cache in ``cache`` (or off)."""
    env = dict(os.environ, TSCONTRACT_CACHE_DIR=str(cache) if cache else "off")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))

    return subprocess.run(
        [sys.executable, "-m", "tscontract", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=seconds,
        preexec_fn=limit,
        check=False,
    )


def one_error(done: subprocess.CompletedProcess[str]) -> re.Match[str]:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    match = ERROR_LINE.match(lines[0])
    assert match, lines[0]
    return match


# ---------------------------------------------------------------- YAML


def test_alias_bomb_is_refused_fast_in_little_memory(tmp_path):
    assert len(BOMB) < 2000
    path = write(tmp_path, BOMB)
    started = time.monotonic()
    done = run_bounded("lint", str(path), seconds=20)
    assert time.monotonic() - started < 20
    match = one_error(done)
    assert f"YAML aliases expand to more than {ALIAS_BUDGET} copied values" in match["rest"]
    assert int(match["line"]) >= 3  # where the aliases stand, not the top of the file


def test_a_few_aliases_are_fine():
    text = OHLCV_CONTRACT.read_text().replace("owner:", "x_shared: &who ops@example\nowner:", 1)
    with pytest.raises(ContractError, match="unknown key 'x_shared'"):
        parse_contract(text, "c.yaml")  # the alias machinery itself does not refuse it
    text = (
        OHLCV_CONTRACT.read_text().replace("  - volume >= 0\n", "  - &vol volume >= 0\n", 1) + "x_copy: [*vol, *vol]\n"
    )
    with pytest.raises(ContractError, match="unknown key 'x_copy'") as info:
        parse_contract(text, "c.yaml")
    assert "alias" not in str(info.value)


def test_an_alias_inside_its_own_collection_is_refused():
    text = "contract: x\nversion: 1.0.0\nloop: &a [1, *a]\n"
    with pytest.raises(ContractError, match="refers to the collection it stands in") as info:
        parse_contract(text, "c.yaml")
    assert info.value.location is not None and info.value.location.line == 3


@pytest.mark.parametrize("flow", [True, False], ids=["flow", "block"])
def test_collections_nested_too_deep_are_refused(flow):
    depth = 5000 if flow else MAX_DEPTH + 5
    note = "[" * depth + "]" * depth if flow else "".join("\n" + "  " * (i + 1) + "- " for i in range(depth)) + "x"
    text = OHLCV_CONTRACT.read_text() + f"note: {note}\n"
    started = time.monotonic()
    with pytest.raises(ContractError, match=f"collections nest more than {MAX_DEPTH} deep") as info:
        parse_contract(text, "c.yaml")
    assert time.monotonic() - started < 5
    assert info.value.location is not None and info.value.location.line > text.count("\n") - depth - 2


def test_a_tab_in_an_invariant_is_named_with_its_position(tmp_path):
    text = with_invariant("volume\t>= 0")
    path = write(tmp_path, text)
    match = one_error(run_bounded("lint", str(path)))
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "\t" in row)
    assert (int(match["line"]), int(match["col"])) == (line, text.splitlines()[line - 1].index("\t") + 1)
    assert "a tab character" in match["rest"]


def test_a_tab_inside_a_quoted_invariant_is_whitespace():
    contract = parse_contract(with_invariant('"volume\t>= 0"'), "c.yaml")
    assert any(c.sql == "volume >= 0" for c in contract.invariants)


# ---------------------------------------------------------------- clause size and depth


def test_an_overlong_invariant_is_refused_without_parsing(tmp_path):
    clause = " and ".join(["volume >= 0"] * 25_000)  # 300 KB, 31 s and 840 MB before
    path = write(tmp_path, with_invariant(clause))
    started = time.monotonic()
    match = one_error(run_bounded("lint", str(path)))
    assert time.monotonic() - started < 20
    assert f"invariant is {len(clause)} characters long; a clause has at most {MAX_CLAUSE_CHARS}" in match["rest"]
    assert match["rest"].startswith("invariants[2]:")
    assert f"{len(clause)} characters)" in match["rest"] and len(match["rest"]) < 600  # the clause, shortened


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ("(" * 600 + "volume >= 0" + ")" * 600, f"nests brackets more than {MAX_BRACKETS} deep"),
        ("not " * 500 + "volume >= 0", "nests too deeply"),
        ("abs(" * 20 + "volume" + ")" * 20 + " >= 0", "nests too deeply"),
        (" + ".join(["volume"] * 400) + " >= 0", "nests too deeply"),
        ("-" * 300 + "volume <= 0", "nests too deeply"),
    ],
    ids=["600 brackets", "500 nots", "20 functions", "400-term sum", "300 signs"],
)
def test_deeply_nested_clauses_are_refused_naming_the_clause(clause, message):
    text = with_invariant(clause)
    with pytest.raises(ContractError) as info:
        parse_contract(text, "c.yaml")
    error = info.value
    assert message in error.message
    assert error.section == "invariants[2]" and error.clause == clause
    assert error.location is not None and error.location.line == 23


def test_nesting_counts_the_costly_levels():
    with pytest.raises(ClauseSyntaxError, match=rf"\(\d+ levels, at most {MAX_NESTING}"):
        parse("invariant", "not " * 60 + "x > 0")
    parse("invariant", "not " * 30 + "x > 0")  # 30 'not's: fine
    parse("invariant", " and ".join(["x > 0"] * 200))  # a chain of 'and's: one level each


@pytest.mark.parametrize("terms", [200, 250])
def test_a_long_sum_passes_and_is_cached_without_a_traceback(tmp_path, terms):
    """A 200-term sum exited 0, then printed a RecursionError from pickling the clause cache at exit."""
    path = write(tmp_path, with_invariant(" + ".join(["volume"] * terms) + " >= 0"))
    cache = tmp_path / "cache"
    for _ in range(2):  # written by the first run, read by the second
        done = run_bounded("lint", str(path), "--format", "json", cache=cache)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert json.loads(done.stdout)["passed"] is True
    assert list(cache.glob("clauses-*/*.pickle"))  # the other clauses were cached


def test_and_chains_generate_flat_sql():
    contract = parse_contract(with_invariant(" and ".join(["volume >= 0"] * 100)), "c.yaml")
    sql = contract.invariants[2].sql
    assert "(" not in sql and sql.count(" AND ") == 99
    mixed = parse_contract(with_invariant("(volume >= 0 or low >= 0) and high >= 0 and close >= 0"), "c.yaml")
    assert mixed.invariants[2].sql == "(volume >= 0 OR low >= 0) AND high >= 0 AND close >= 0"


def test_the_cache_writer_never_raises(tmp_path):
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    write_pickle(tmp_path / "deep.pickle", deep)  # RecursionError inside: skipped
    assert not list(tmp_path.iterdir())  # nothing half-written left behind
    write_pickle(tmp_path / "lambda.pickle", lambda: 1)  # unpicklable: skipped
    assert not list(tmp_path.iterdir())
    blocked = tmp_path / "file"
    blocked.write_text("x")
    write_pickle(blocked / "sub" / "c.pickle", {"a": 1})  # the directory cannot be made: skipped


# ---------------------------------------------------------------- every error


MANY = {
    "owner: market-data@example": "ownerx: market-data@example",
    "precision: ms": "precision: xx\n  bogus: 1",
    "trade_count: {type: int64, nullable: true}": "trade_count: {type: int64, nullable: maybe}",
}


def many_errors_text() -> str:
    text = OHLCV_CONTRACT.read_text()
    for old, new in MANY.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def test_every_contract_error_is_shown_in_text(tmp_path):
    path = write(tmp_path, many_errors_text())
    done = run_bounded("lint", str(path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 4, done.stderr
    matches = [ERROR_LINE.match(line) for line in lines]
    assert all(matches), done.stderr
    positions = [(int(m["line"]), int(m["col"])) for m in matches if m]
    assert positions == sorted(positions)  # in file order
    rests = [m["rest"] for m in matches if m]
    assert rests[0].startswith("ownerx: unknown key 'ownerx'")
    assert any(r.startswith("time.precision:") for r in rests)
    assert any(r.startswith("time.bogus: unknown key 'bogus'") for r in rests)
    assert any(r.startswith("fields.trade_count.nullable:") for r in rests)
    assert "more error" not in done.stderr


def test_every_contract_error_is_in_the_json_error(tmp_path):
    path = write(tmp_path, many_errors_text())
    done = run_bounded("lint", str(path), "--format", "json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert [e["section"] for e in error["errors"]] == [
        "ownerx",
        "time.precision",
        "time.bogus",
        "fields.trade_count.nullable",
    ]
    assert error["errors"][0]["message"] == error["message"]
    assert all(e["file"] == str(path) or e["file"].endswith("contract.yaml") for e in error["errors"])
    assert error["errors"][1]["clause"] == "xx" and error["errors"][1]["line"] == 7


def test_the_library_error_counts_the_others():
    with pytest.raises(ContractError) as info:
        parse_contract(many_errors_text(), "c.yaml")
    assert str(info.value).endswith("(and 3 more error(s))")
    assert [e.section for e in info.value.all_errors()] == [  # type: ignore[attr-defined]
        "ownerx",
        "time.precision",
        "time.bogus",
        "fields.trade_count.nullable",
    ]


def test_cross_section_errors_are_all_reported_in_file_order():
    """Errors between sections (an unknown key column, an invariant naming no field, an unknown
    series column) are each reported, not only the first one met."""
    text = OHLCV_CONTRACT.read_text()
    text = text.replace("key: [symbol, bar_start, revision]", "key: [symbl, bar_start, revision]", 1)
    text = with_invariant("volumes >= 0", text)
    text = text.replace("  - low <= open", "  - lowest <= open", 1)
    with pytest.raises(ContractError) as info:
        parse_contract(text, "c.yaml")
    errors = info.value.all_errors()  # type: ignore[attr-defined]
    assert [e.section for e in errors] == ["key[0]", "invariants[0]", "invariants[2]"], [str(e) for e in errors]
    assert "symbl" in errors[0].message and "lowest" in errors[1].message and "volumes" in errors[2].message
    lines = [e.location.line for e in errors]
    assert lines == sorted(lines) and len(set(lines)) == 3


def test_an_sql_timestamp_type_name_is_a_positioned_error_not_a_crash():
    text = OHLCV_CONTRACT.read_text()
    assert "timestamp_ms_utc" in text
    with pytest.raises(ContractError) as info:
        parse_contract(text.replace("timestamp_ms_utc", "timestamptz", 1), "c.yaml")
    assert "unknown timestamp type 'timestamptz'" in str(info.value)
    assert info.value.location is not None  # type: ignore[attr-defined]
