"""Fuzzing the command line (issue 13): mutated contracts through ``lint`` and ``validate``, mutated
CSV, JSON lines and Parquet files through ``validate``. Whatever the input: exit 0, 1 or 2, never a
traceback or an internal error, never longer than 10 s, never more than 1 GiB resident.

Each example runs the real entry point, ``tscontract.cli.main``, in a process forked from a server
that has imported tscontract once (a fresh interpreter per example would spend the minute importing):
the child's exit code, output, wall time and peak resident memory (``wait4``) are what is judged,
and its exit handlers run as at a normal exit (the clause cache is written there). Derandomized and
bounded (about a minute in all), so CI runs the same examples every time;
``TSCONTRACT_FUZZ_EXAMPLES=N`` runs N fresh random examples per test instead.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, ROOT

TIMEOUT_S = 10
MEMORY_KB = 1 << 20  # 1 GiB
OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"
CONTRACTS = [OHLCV / "contract.yaml", SENSOR / "contract.yaml"]  # the seed's, byte for byte (test_seed.py)
DATA = [OHLCV / "data" / "good.csv", OHLCV / "data" / "bad.csv"]
NOW = "2026-11-30T21:05:00Z"
# TSCONTRACT_FUZZ_EXAMPLES=500 explores further, with fresh random examples each run
EXPLORE = int(os.environ.get("TSCONTRACT_FUZZ_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=EXPLORE or 30,
    deadline=None,  # each example has its own 10 s limit, enforced by the server
    derandomize=not EXPLORE,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

SERVER = r"""
import atexit, json, os, signal, sys, time, traceback
os.environ["TSCONTRACT_CACHE_DIR"] = sys.argv[1]
import tscontract.cli, tscontract.engines, tscontract.engines.duckdb, tscontract.contract.lint  # imported once
from tscontract.contract import grammar
grammar._parser()  # built once, as a warm clause cache would spare it
for line in sys.stdin:
    request = json.loads(line)
    out, err = request["out"], request["err"]
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            for fd, name in ((1, out), (2, err)):
                os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
            try:
                tscontract.cli.main(request["args"])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                traceback.print_exc()
            atexit._run_exitfuncs()  # as at a normal exit: the clause cache is saved here
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > request["timeout"]:
            os.kill(pid, signal.SIGKILL)
            timed_out = True
            done, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.01)
    print(json.dumps({
        "code": os.waitstatus_to_exitcode(status), "timed_out": timed_out,
        "seconds": time.monotonic() - started, "maxrss_kb": usage.ru_maxrss,
    }), flush=True)
"""


class Runner:
    """The fork server: one request a line, one JSON answer a line."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        cache = workdir / "cache"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(cache)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        self.count = 0

    def run(self, *args: object) -> tuple[dict, str, str]:
        self.count += 1
        out, err = self.workdir / f"out-{self.count}", self.workdir / f"err-{self.count}"
        request = {"args": [str(a) for a in args], "out": str(out), "err": str(err), "timeout": TIMEOUT_S}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        texts = out.read_text(errors="replace"), err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        return answer, *texts

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Iterator[Runner]:
    server = Runner(tmp_path_factory.mktemp("fuzz"))
    yield server
    server.close()


def judge(runner: Runner, *args: object) -> int:
    answer, out, err = runner.run(*args)
    shown = f"tscontract {' '.join(map(str, args))}\nstderr: {err[-2000:]}"
    assert not answer["timed_out"], f"over {TIMEOUT_S} s: {shown}"
    assert answer["code"] in (0, 1, 2), f"exit {answer['code']}: {shown}"
    assert "Traceback" not in err + out, shown
    assert "internal error" not in err + out, shown
    assert answer["maxrss_kb"] < MEMORY_KB, f"{answer['maxrss_kb'] >> 10} MiB: {shown}"
    if answer["code"] == 2:
        assert err.startswith("error: "), shown  # a usage or input error is said, one line per error
    return int(answer["code"])


# ---------------------------------------------------------------- contracts

# values a mutation writes where a contract has one: YAML structure, anchors, numbers, clause fragments
VALUES = [
    "",
    "[",
    "{",
    "}",
    "&a [1, *a]",
    "*nowhere",
    "null",
    "~",
    "-1",
    "1e309",
    "0x1F",
    "decimal(18,",
    "decimal(99,100)",
    "enum[]",
    "timestamp_ms_utc",
    "'quoted'",
    '"a\\tb"',
    "\t",
    "١٢",
    "𝟙𝟚",
    "yes",
    "<<: {a: 1}",
    "!!python/object:os.system",
    "%TAG ! tag:x",
    "per series from catalog",
    "60s within session; no bars outside session",
    "5 trading days",
    "0s",
    "x" * 5000,
]
TOKENS = ["open", "high", "low", "close", "volume", "value", "symbol", "x", "1", "0.5", "-", "+", "*", "/"]
TOKENS += ["<=", ">=", "<", "=", "!=", "and", "or", "not", "(", ")", "abs(", "is null", "is not null", "in (1, 2)"]
TOKENS += ["between 1 and 2", "within catalog hard_bounds for series_id", "'a'", ",", "only when"]


@st.composite
def clauses(draw: st.DrawFn) -> str:
    """A clause from the grammar's words, or a pathological shape (deep, long) of a valid one."""
    kind = draw(st.sampled_from(["words", "deep", "long"]))
    if kind == "words":
        return " ".join(draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12)))
    n = draw(st.integers(1, 700))
    if kind == "deep":
        shape = draw(st.sampled_from(["(", "not ", "abs(", "-"]))
        close = ")" * n if shape.endswith("(") else ""
        return shape * n + "volume" + close + " >= 0"
    joiner = draw(st.sampled_from([" and ", " + ", " or "]))
    return joiner.join(["volume >= 0" if joiner != " + " else "volume"] * n) + ("" if joiner != " + " else " >= 0")


@st.composite
def contract_texts(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(CONTRACTS)).read_text()
    for _ in range(draw(st.integers(1, 3))):
        lines = text.split("\n")
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["value", "clause", "delete", "duplicate", "indent", "insert", "truncate"]))
        if how == "value" and ":" in lines[at]:
            key = lines[at].split(":", 1)[0]
            lines[at] = f"{key}: {draw(st.sampled_from(VALUES))}"
        elif how == "clause":
            lines.insert(at, f"  - {json.dumps(draw(clauses()))}" if draw(st.booleans()) else f"  - {draw(clauses())}")
        elif how == "delete":
            del lines[at]
        elif how == "duplicate":
            lines.insert(at, lines[at])
        elif how == "indent":
            lines[at] = draw(st.sampled_from(["", " ", "\t", "    "])) + lines[at].lstrip()
        elif how == "insert":
            lines[at] = lines[at][: len(lines[at]) // 2] + draw(st.text(max_size=8)) + lines[at][len(lines[at]) // 2 :]
        else:
            text = "\n".join(lines)
            lines = text[: draw(st.integers(0, len(text)))].split("\n")
        text = "\n".join(lines)
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.integers(0, 9)) == 0:  # a byte that is not UTF-8
        at = draw(st.integers(0, max(0, len(data) - 1)))
        data = data[:at] + bytes([draw(st.integers(0x80, 0xFF))]) + data[at + 1 :]
    return data


@SETTINGS
@given(text=contract_texts())
def test_fuzzed_contracts(runner, tmp_path_factory, text):
    path = tmp_path_factory.mktemp("contract") / "contract.yaml"
    path.write_bytes(text)
    judge(runner, "lint", path)
    code = judge(runner, "show", path, "--format", "json")
    if code == 0:  # a contract that loads is also run against data
        judge(runner, "validate", path, DATA[0], "--now", NOW, "--format", "json")


def test_the_seed_contracts_lint_in_the_fuzz_runner(runner):
    """The runner judges real runs: the seed contracts load (exit 0 or 1), a bad file exits 2."""
    for path in CONTRACTS:
        assert judge(runner, "lint", path) in (0, 1)
    assert judge(runner, "lint", ROOT / "no-such-contract.yaml") == 2


# ---------------------------------------------------------------- data files


def csv_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def as_jsonl(rows: list[list[str]]) -> bytes:
    header, *body = rows
    return "".join(json.dumps(dict(zip(header, row, strict=False))) + "\n" for row in body).encode()


def as_parquet(rows: list[list[str]]) -> bytes:
    header, *body = rows
    table = pa.table({name: [row[i] if i < len(row) else None for row in body] for i, name in enumerate(header)})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="snappy")
    return sink.getvalue()


@st.composite
def data_files(draw: st.DrawFn) -> tuple[str, bytes]:
    rows = csv_rows(draw(st.sampled_from(DATA)))[: draw(st.integers(1, 60))]
    suffix = draw(st.sampled_from([".csv", ".jsonl", ".parquet"]))
    if draw(st.booleans()):  # a field made wide
        row, column = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(rows[0]) - 1))
        if column < len(rows[row]):
            rows[row][column] = draw(st.sampled_from(["x", '"', ",", "\n", "é", "\x00"])) * draw(
                st.integers(1, 3 << 20)
            )
    if suffix == ".csv":
        data = "\n".join(",".join(r) for r in rows).encode() + b"\n"
    elif suffix == ".jsonl":
        data = as_jsonl(rows)
    else:
        data = as_parquet(rows)
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["truncate", "flip", "insert", "encoding", "crlf", "empty"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if how == "truncate":
            data = data[:at]
        elif how == "flip" and data:
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif how == "insert":
            data = (
                data[:at]
                + draw(st.sampled_from([b"\r", b'"', b"\xff\xfe", b"\x00", b",,,", b"{", b"\n\n"]))
                + data[at:]
            )
        elif how == "encoding" and suffix != ".parquet":
            data = data.decode("utf-8", errors="replace").encode(
                draw(st.sampled_from(["utf-16", "latin-1", "utf-8-sig"])), errors="replace"
            )
        elif how == "crlf":
            data = data.replace(b"\n", b"\r\n", draw(st.integers(1, 20)))
        elif how == "empty":
            data = b""
    return suffix, data


@SETTINGS
@given(file=data_files(), contract=st.sampled_from([OHLCV, SENSOR]))
def test_fuzzed_data_files(runner, tmp_path_factory, file, contract):
    suffix, data = file
    path = tmp_path_factory.mktemp("data") / f"batch{suffix}"
    path.write_bytes(data)
    catalog = contract / "catalog.yaml"
    judge(runner, "validate", contract / "contract.yaml", path, "--catalog", catalog, "--now", NOW, "--format", "json")
