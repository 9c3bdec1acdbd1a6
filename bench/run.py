"""Benchmark tscontract against its peers on generated ohlcv_1m data.

    .venv/bin/python bench/run.py --rows 1000000 [--rows 10000000] [--peers tscontract,sql,pandera,gx]

For each row count: generate the data if it is not there yet (bench/generate.py), then
run every peer in a fresh subprocess with its own interpreter -- the project venv for
tscontract and the hand-written SQL, bench/.venv-pandera and bench/.venv-gx for the
others (bench/setup.sh makes them). Per run it measures

* wall time of ``peer.run(path)`` inside the subprocess: reading the Parquet file and
  validating it, end to end (interpreter start-up and library imports are reported
  apart, as ``process`` and ``import``);
* peak resident memory of that subprocess (``ru_maxrss`` from ``os.wait4``, so each
  peer's peak is its own);
* the failing-row count per common check, compared with the other peers and with the
  ground truth the generator wrote.

It prints the tables and writes them, with the package versions, to bench/RESULTS.md.
Exit status: 0 when every peer that ran agrees with the ground truth, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from peers.common import CHECKS  # noqa: E402

MAIN_PYTHON = REPO / ".venv" / "bin" / "python"


@dataclass(frozen=True)
class Peer:
    name: str
    label: str
    python: Path
    env: str
    uses_pandas: bool = False


PEERS = {
    "tscontract": Peer("tscontract", "tscontract", MAIN_PYTHON, ".venv"),
    "sql": Peer("sql", "handwritten SQL (DuckDB)", MAIN_PYTHON, ".venv"),
    "pandera": Peer(
        "pandera", "pandera (pandas)", BENCH / ".venv-pandera" / "bin" / "python", "bench/.venv-pandera", True
    ),
    "gx": Peer(
        "gx", "Great Expectations (pandas)", BENCH / ".venv-gx" / "bin" / "python", "bench/.venv-gx", True
    ),
}
DEFAULT_PEERS = "tscontract,sql,pandera,gx"


@dataclass
class Outcome:
    peer: Peer
    status: str = "ok"  # ok | skipped | error
    message: str = ""
    runs: list[dict[str, Any]] = field(default_factory=list)

    def _median(self, key: str) -> float | None:
        values = [r[key] for r in self.runs if r.get(key) is not None]
        return statistics.median(values) if values else None

    @property
    def wall_s(self) -> float | None:
        return self._median("run_s")

    @property
    def process_s(self) -> float | None:
        return self._median("process_s")

    @property
    def import_s(self) -> float | None:
        return self._median("import_s")

    @property
    def peak_rss_mib(self) -> float | None:
        values = [r["maxrss_kib"] / 1024 for r in self.runs if r.get("maxrss_kib")]
        return max(values) if values else None

    @property
    def counts(self) -> dict[str, int]:
        return self.runs[-1].get("counts", {}) if self.runs else {}

    @property
    def phases(self) -> dict[str, float]:
        if not self.runs:
            return {}
        names = self.runs[-1].get("phases", {})
        return {
            name: statistics.median(r["phases"][name] for r in self.runs if name in r.get("phases", {}))
            for name in names
        }

    @property
    def unmapped(self) -> dict[str, Any]:
        return self.runs[-1].get("unmapped", {}) if self.runs else {}

    @property
    def versions(self) -> dict[str, str]:
        return self.runs[-1].get("versions", {}) if self.runs else {}


def run_worker(
    peer: Peer, parquet: Path, pandas_dtypes: str, timeout_s: float, log_dir: Path
) -> dict[str, Any]:
    """One fresh subprocess; returns the worker's JSON plus process wall time and peak RSS."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    log = log_dir / f"{peer.name}.log"
    command = [str(peer.python), str(BENCH / "worker.py"), peer.name, str(parquet), str(out)]
    command += ["--pandas-dtypes", pandas_dtypes]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "GX_ANALYTICS_ENABLED": "false"}
    started = time.perf_counter()
    with log.open("w") as log_file:
        proc = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        timer = threading.Timer(timeout_s, lambda: os.kill(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # rusage of this child alone
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    try:
        result = json.loads(out.read_text()) if out.stat().st_size else {}
    finally:
        out.unlink(missing_ok=True)
    result["process_s"] = elapsed
    result["maxrss_kib"] = usage.ru_maxrss
    result["returncode"] = proc.returncode
    if proc.returncode < 0 and "error" not in result:
        killed = "timed out" if elapsed >= timeout_s else f"killed by signal {-proc.returncode}"
        result["error"] = f"{killed} after {elapsed:.0f}s"
    elif not result.get("counts") and "error" not in result and "skipped" not in result:
        result["error"] = f"exit code {proc.returncode}, no result"
    if "error" in result:
        result["log"] = log.read_text()[-4000:]
    return result


def run_peer(peer: Peer, parquet: Path, args: argparse.Namespace, log_dir: Path) -> Outcome:
    if peer.uses_pandas:
        peer = replace(peer, label=f"{peer.label}, {args.pandas_dtypes} dtypes")
    outcome = Outcome(peer)
    if not peer.python.exists():
        hint = "make install" if peer.env == ".venv" else "bench/setup.sh"
        outcome.status, outcome.message = "skipped", f"{peer.python} not found: run {hint}"
        return outcome
    for _ in range(args.repeat):
        result = run_worker(peer, parquet, args.pandas_dtypes, args.timeout, log_dir)
        if "skipped" in result:
            outcome.status, outcome.message = "skipped", result["skipped"]
            return outcome
        if "error" in result:
            outcome.status, outcome.message = "error", result["error"]
            print(result.get("traceback") or result.get("log", ""), file=sys.stderr)
            return outcome
        outcome.runs.append(result)
    return outcome


def agreement(outcome: Outcome, expected: dict[str, int]) -> tuple[bool, list[str]]:
    """Whether a peer's counts equal the ground truth on every common check."""
    problems = []
    for check in CHECKS:
        got = outcome.counts.get(check)
        if got is None:
            problems.append(f"{check}: not reported")
        elif got != expected[check]:
            problems.append(f"{check}: {got} != {expected[check]}")
    return not problems, problems


def _fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else f"{a / b:,.1f}×"


def summary_rows(outcomes: list[Outcome], expected: dict[str, int]) -> list[list[str]]:
    base = next((o for o in outcomes if o.peer.name == "tscontract" and o.status == "ok"), None)
    rows = []
    for o in outcomes:
        if o.status != "ok":
            rows.append([o.peer.label, f"{o.status}: {o.message}", "—", "—", "—", "—", "—", "—"])
            continue
        ok, problems = agreement(o, expected)
        if base is None or o is base:
            vs = "—"
        elif o.peer.name == "sql":  # tscontract against the floor: how much over one hand-written query
            vs = (
                f"tscontract/sql {_ratio(base.wall_s, o.wall_s)} time, "
                f"{_ratio(base.peak_rss_mib, o.peak_rss_mib)} RSS"
            )
        else:
            vs = (
                f"{o.peer.name}/tscontract {_ratio(o.wall_s, base.wall_s)} time, "
                f"{_ratio(o.peak_rss_mib, base.peak_rss_mib)} RSS"
            )
        phases = ", ".join(f"{k} {v:.2f}" for k, v in o.phases.items())
        rows.append(
            [
                o.peer.label,
                "yes" if ok else "NO: " + "; ".join(problems),
                _fmt(o.wall_s),
                _fmt(o.process_s),
                _fmt(o.import_s),
                _fmt(o.peak_rss_mib, 0),
                vs,
                phases,
            ]
        )
    return rows


SUMMARY_HEADER = [
    "peer",
    "agrees",
    "wall s",
    "process s",
    "import s",
    "peak RSS MiB",
    "vs tscontract",
    "phases s",
]


def counts_rows(outcomes: list[Outcome], expected: dict[str, int]) -> tuple[list[str], list[list[str]]]:
    ran = [o for o in outcomes if o.status == "ok"]
    header = ["check", "ground truth", *(o.peer.name for o in ran)]
    rows = []
    for check in CHECKS:
        cells = [check, str(expected[check])]
        for o in ran:
            got = o.counts.get(check)
            cells.append("—" if got is None else (str(got) if got == expected[check] else f"**{got}**"))
        rows.append(cells)
    return header, rows


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = ["| " + " | ".join(map(esc, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(f"\n{title}\n{markdown_table(header, rows)}")
        return
    table = Table(title=title, title_justify="left")
    for name in header:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(cell.replace("**", "") for cell in row))
    Console(width=200).print(table)


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kib = int(
            next(
                x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")
            ).split()[1]
        )
        mem = f"{mem_kib / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        mem = "unknown memory"
    return f"{os.cpu_count()} cores ({cpu}), {mem}, {platform.system()} {platform.release()}"


def git_state() -> str:
    """The commit the measured tscontract came from, and whether src/ had local changes."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit}" + (" with uncommitted changes in src/" if dirty else "")


def write_results(
    path: Path, sections: list[str], outcomes_all: list[Outcome], argv: list[str], args: Any
) -> None:
    envs: dict[str, dict[str, str]] = {}
    for o in outcomes_all:
        if o.versions:
            envs.setdefault(o.peer.env, {}).update(o.versions)
    names = ["python", "tscontract", "duckdb", "pyarrow", "pandas", "numpy", "pandera", "great_expectations"]
    version_rows = [[env, *(v.get(n, "—") for n in names)] for env, v in envs.items()]
    text = [
        "# Benchmark results",
        "",
        "Written by `bench/run.py`; see bench/README.md for what each peer does and what"
        ' "agrees" means. Re-running overwrites this file.',
        "",
        f"- command: `{' '.join(['.venv/bin/python', 'bench/run.py', *argv])}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {machine()}",
        f"- tscontract source: commit {git_state()}",
        f"- repetitions per peer: {args.repeat} (times are medians; peak RSS is the maximum)",
        f"- pandas dtypes for pandera and GX: `{args.pandas_dtypes}` (see bench/peers/pandas_io.py)",
        "- wall s: `peer.run(path)` inside a fresh process: read the Parquet file and validate it."
        " process s adds interpreter start-up and imports; import s is the import alone."
        " peak RSS: `ru_maxrss` of the peer's own process.",
        "",
        *sections,
        "## Package versions",
        "",
        markdown_table(["environment", *names], version_rows),
        "",
    ]
    path.write_text("\n".join(text))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Benchmark tscontract against its peers.")
    parser.add_argument(
        "--rows", type=int, action="append", help="rows of data (repeatable; default 1000000)"
    )
    parser.add_argument("--peers", default=DEFAULT_PEERS, help=f"comma-separated, from {DEFAULT_PEERS}")
    parser.add_argument("--repeat", type=int, default=1, help="runs per peer (median time reported)")
    parser.add_argument("--pandas-dtypes", choices=("arrow", "numpy"), default="arrow")
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds per peer run before it is killed"
    )
    parser.add_argument("--data-dir", type=Path, default=BENCH / "data")
    parser.add_argument("--results", type=Path, default=BENCH / "RESULTS.md", help="markdown file to write")
    args = parser.parse_args(argv)
    rows_list = args.rows or [1_000_000]
    peers = []
    for name in (p.strip() for p in args.peers.split(",") if p.strip()):
        if name not in PEERS:
            parser.error(f"unknown peer {name!r}; choose from {DEFAULT_PEERS}")
        peers.append(PEERS[name])

    all_ok = True
    sections: list[str] = []
    outcomes_all: list[Outcome] = []
    for rows in rows_list:
        subprocess.run(
            [sys.executable, str(BENCH / "generate.py"), "--rows", str(rows), "--out", str(args.data_dir)],
            check=True,
        )
        parquet = args.data_dir / f"ohlcv_1m_{rows}.parquet"
        truth = json.loads((args.data_dir / f"ohlcv_1m_{rows}.truth.json").read_text())
        expected = truth["expected_failed_rows"]
        parquet.read_bytes()  # warm the page cache so the first peer does not pay for the disk
        log_dir = args.data_dir / "logs" / str(rows)
        log_dir.mkdir(parents=True, exist_ok=True)

        outcomes = []
        for peer in peers:
            print(f"[{rows:,} rows] {peer.label} ...", flush=True)
            outcome = run_peer(peer, parquet, args, log_dir)
            if outcome.status != "ok":
                print(f"  {outcome.status}: {outcome.message}")
            else:
                print(f"  {outcome.wall_s:.2f}s, peak RSS {outcome.peak_rss_mib:,.0f} MiB")
            outcomes.append(outcome)
        outcomes_all += outcomes

        title = f"{rows:,} rows, {truth['symbols']} symbols, {truth['injected_rows']} injected defect rows"
        summary = summary_rows(outcomes, expected)
        count_header, count_rows = counts_rows(outcomes, expected)
        print_table(title, SUMMARY_HEADER, summary)
        print_table(f"failing rows per check ({rows:,} rows)", count_header, count_rows)
        extra = [(o.peer.name, k, v) for o in outcomes for k, v in o.unmapped.items()]
        for peer_name, check, value in extra:
            print(f"  {peer_name}: not compared: {check} = {value}")
        for o in outcomes:
            if o.status == "ok" and not agreement(o, expected)[0]:
                all_ok = False
            if o.status == "error":
                all_ok = False
        sections += [
            f"## {title}",
            "",
            markdown_table(SUMMARY_HEADER, summary),
            "",
            "Failing rows per check (bold: differs from the ground truth):",
            "",
            markdown_table(count_header, count_rows),
            "",
        ]
        if extra:
            sections += ["Checks without a common key (not compared):", ""]
            sections += [f"- {p}: `{k}` = {v}" for p, k, v in extra]
            sections.append("")
    write_results(args.results, sections, outcomes_all, argv, args)
    print(f"wrote {args.results}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
