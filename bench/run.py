"""Benchmark tscontract against its peers on generated ohlcv_1m data.

    .venv/bin/python bench/run.py --rows 1000000 [--rows 10000000] [--peers tscontract,sql,pandera,gx]
    .venv/bin/python bench/run.py --peers tscontract,tscontract-compared,sql,pandera,pandera:numpy

For each row count: generate the data if it is not there yet (bench/generate.py), then
run every peer in a fresh subprocess with its own interpreter -- the project venv for
tscontract and the hand-written SQL (``sql``, and ``sql-full``: the whole contract by hand),
bench/.venv-pandera, bench/.venv-gx, bench/.venv-pandera-polars and bench/.venv-dataframely
for the others (bench/setup.sh makes them). Per run it measures

* wall time of ``peer.run(path)`` inside the subprocess: reading the Parquet file and
  validating it, end to end (interpreter start-up and library imports are reported
  apart, as ``process`` and ``import``);
* peak resident memory of that subprocess (``ru_maxrss`` from ``os.wait4``, so each
  peer's peak is its own);
* the failing-row count per common check, compared with the other peers and with the
  ground truth the generator wrote; and the whole contract's other checks (cadence,
  sessions, catalog, precision, schema), compared between tscontract and sql-full.

A pandas peer may carry its pandas dtypes in its name (``pandera:numpy``, ``gx:arrow``);
without one it reads with ``--pandas-dtypes``. A run over ``--timeout`` seconds or
``--max-rss-gib`` GiB resident is stopped and reported as such, with the reason.

It prints the tables, and the project's targets (pandera against tscontract, tscontract
against the hand-written SQL, the full contract against sql-full) met or not, and writes
them with the package versions to bench/RESULTS.md. Exit status: 0 when every peer that
finished agrees with the ground truth (and sql-full with tscontract) and none failed, 1
otherwise (a peer stopped by a budget does not change it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import io
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from peers.common import CHECKS, FULL_CHECKS  # noqa: E402
from worker import DISTRIBUTIONS  # noqa: E402  (the versions each peer's process reports)

MAIN_PYTHON = REPO / ".venv" / "bin" / "python"


@dataclass(frozen=True)
class Peer:
    name: str  # the module key of bench/worker.py
    label: str
    python: Path
    env: str
    uses_pandas: bool = False
    dtypes: str | None = None  # pandas dtypes (arrow | numpy) of a pandas peer

    @property
    def id(self) -> str:
        """The peer as named in tables and on the command line: ``pandera:numpy``."""
        return f"{self.name}:{self.dtypes}" if self.dtypes else self.name


PANDAS_DTYPES = ("arrow", "numpy")
# Both variants of tscontract: the whole seed contract (with catalog), and the compared clauses only.
TSCONTRACT_PEERS = ("tscontract", "tscontract-compared")
PEERS = {
    "tscontract": Peer("tscontract", "tscontract", MAIN_PYTHON, ".venv"),
    "tscontract-compared": Peer(
        "tscontract-compared", "tscontract (compared clauses only)", MAIN_PYTHON, ".venv"
    ),
    "sql": Peer("sql", "handwritten SQL (DuckDB)", MAIN_PYTHON, ".venv"),
    "sql-full": Peer("sql-full", "handwritten SQL, full checks (DuckDB)", MAIN_PYTHON, ".venv"),
    "pandera": Peer(
        "pandera", "pandera (pandas)", BENCH / ".venv-pandera" / "bin" / "python", "bench/.venv-pandera", True
    ),
    "gx": Peer(
        "gx", "Great Expectations (pandas)", BENCH / ".venv-gx" / "bin" / "python", "bench/.venv-gx", True
    ),
    "pandera-polars": Peer(
        "pandera-polars",
        "pandera (polars)",
        BENCH / ".venv-pandera-polars" / "bin" / "python",
        "bench/.venv-pandera-polars",
    ),
    "dataframely": Peer(
        "dataframely",
        "dataframely (polars)",
        BENCH / ".venv-dataframely" / "bin" / "python",
        "bench/.venv-dataframely",
    ),
}
DEFAULT_PEERS = "tscontract,tscontract-compared,sql,sql-full,pandera,gx,pandera-polars,dataframely"


def parse_peers(spec: str, default_dtypes: str) -> list[Peer]:
    """``tscontract,sql,pandera,pandera:numpy`` -> peers; pandas peers get their dtypes."""
    peers = []
    for item in (p.strip() for p in spec.split(",") if p.strip()):
        name, _, dtypes = item.partition(":")
        if name not in PEERS:
            raise ValueError(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")
        peer = PEERS[name]
        if dtypes and not peer.uses_pandas:
            raise ValueError(f"{name} does not read through pandas; ':{dtypes}' applies to pandera and gx")
        if dtypes and dtypes not in PANDAS_DTYPES:
            raise ValueError(f"pandas dtypes must be one of {', '.join(PANDAS_DTYPES)}, not {dtypes!r}")
        if peer.uses_pandas:
            dtypes = dtypes or default_dtypes
            peer = replace(peer, dtypes=dtypes, label=f"{peer.label}, {dtypes} dtypes")
        if any(p.id == peer.id for p in peers):
            raise ValueError(f"peer {peer.id} given twice")
        peers.append(peer)
    return peers


@dataclass
class Outcome:
    peer: Peer
    status: str = "ok"  # ok | skipped | stopped (over a budget) | error
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
    def full(self) -> dict[str, int]:
        """Counts of the whole contract's other checks (``FULL_CHECKS``): sql-full reports them, the
        full-contract tscontract peer has them among its unmapped checks, by id."""
        if not self.runs:
            return {}
        if "full" in self.runs[-1]:
            return self.runs[-1]["full"]
        if self.peer.name != "tscontract":
            return {}
        by_id = {label.split(": ", 1)[0]: int(n or 0) for label, n in self.unmapped.items()}
        schema = [
            n
            for i, n in by_id.items()
            if i.startswith("schema.") or i.endswith(".type") or i == "time.timezone"
        ]
        found = {"schema": int(any(schema))}
        found.update({key: by_id[key] for key in FULL_CHECKS if key in by_id})
        return found

    @property
    def unmapped(self) -> dict[str, Any]:
        return self.runs[-1].get("unmapped", {}) if self.runs else {}

    @property
    def versions(self) -> dict[str, str]:
        return self.runs[-1].get("versions", {}) if self.runs else {}


def _rss_kib(pid: int) -> int:
    """Current resident set of a live process, from /proc (0 when it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_worker(peer: Peer, parquet: Path, args: argparse.Namespace, log_dir: Path) -> dict[str, Any]:
    """One fresh subprocess; returns the worker's JSON plus process wall time and peak RSS.

    The child is polled rather than waited on, so that it can be stopped while it is still
    ours (never reaped): after ``--timeout`` seconds, or once its resident set exceeds
    ``--max-rss-gib``. Such a run comes back with ``stopped`` and the reason.
    """
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    log = log_dir / f"{peer.id.replace(':', '-')}.log"
    command = [str(peer.python), str(BENCH / "worker.py"), peer.name, str(parquet), str(out)]
    command += ["--pandas-dtypes", peer.dtypes or args.pandas_dtypes]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "GX_ANALYTICS_ENABLED": "false"}
    if peer.name in TSCONTRACT_PEERS and args.tscontract_src:  # a snapshot of one commit, ahead of src/
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.tscontract_src), env.get("PYTHONPATH")]))
    max_rss_kib = int(args.max_rss_gib * 2**20) if args.max_rss_gib else 0
    stopped = ""
    started = time.perf_counter()
    with log.open("w") as log_file:
        proc = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # rusage of this child alone
            if pid:
                break
            elapsed = time.perf_counter() - started
            if elapsed > args.timeout:
                stopped = f"stopped after {elapsed:.0f} s: over the time budget (--timeout {args.timeout:g})"
            elif max_rss_kib and _rss_kib(proc.pid) > max_rss_kib:
                stopped = (
                    f"stopped after {elapsed:.0f} s: resident memory over the budget "
                    f"(--max-rss-gib {args.max_rss_gib:g})"
                )
            if stopped:
                os.kill(proc.pid, signal.SIGKILL)  # not reaped yet, so the pid is still this child
                os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
    elapsed = time.perf_counter() - started
    try:
        result = json.loads(out.read_text()) if out.stat().st_size else {}
    finally:
        out.unlink(missing_ok=True)
    if stopped:
        return {"stopped": stopped, "process_s": elapsed}
    proc.returncode = os.waitstatus_to_exitcode(status)
    result["process_s"] = elapsed
    result["maxrss_kib"] = usage.ru_maxrss
    result["returncode"] = proc.returncode
    if proc.returncode < 0 and "error" not in result:
        result["error"] = f"killed by signal {-proc.returncode} after {elapsed:.0f}s"
    elif not result.get("counts") and "error" not in result and "skipped" not in result:
        result["error"] = f"exit code {proc.returncode}, no result"
    if "error" in result:
        result["log"] = log.read_text()[-4000:]
    return result


def run_peer(peer: Peer, parquet: Path, args: argparse.Namespace, log_dir: Path) -> Outcome:
    outcome = Outcome(peer)
    if not peer.python.exists():
        hint = "make install" if peer.env == ".venv" else "bench/setup.sh"
        outcome.status, outcome.message = "skipped", f"{peer.python} not found: run {hint}"
        return outcome
    for repetition in range(1, args.repeat + 1):
        result = run_worker(peer, parquet, args, log_dir)
        if "stopped" in result:
            outcome.status = "stopped"
            outcome.message = f"run {repetition} of {args.repeat} {result['stopped']}; not measured"
            return outcome
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


def _glance(result: TargetResult) -> str:
    if result.met is None:
        return "not measured"
    return f"{result.value:,.2f}× " + ("yes" if result.met else "**no**")


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else f"{a / b:,.1f}×"


def summary_rows(outcomes: list[Outcome], expected: dict[str, int]) -> list[list[str]]:
    """One row per peer; "vs tscontract" is against the full-contract tscontract peer."""
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
        elif o.peer.name == "sql-full":  # the same full checks written by hand
            vs = (
                f"tscontract/sql-full {_ratio(base.wall_s, o.wall_s)} time, "
                f"{_ratio(base.process_s, o.process_s)} process, "
                f"{_ratio(base.peak_rss_mib, o.peak_rss_mib)} RSS"
            )
        else:
            vs = (
                f"{o.peer.id}/tscontract {_ratio(o.wall_s, base.wall_s)} time, "
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
    header = ["check", "ground truth", *(o.peer.id for o in ran)]
    rows = []
    for check in CHECKS:
        cells = [check, str(expected[check])]
        for o in ran:
            got = o.counts.get(check)
            cells.append("—" if got is None else (str(got) if got == expected[check] else f"**{got}**"))
        rows.append(cells)
    return header, rows


# The project's targets (docs/performance.md, issues #3, #16 and #29), per tscontract variant.
TIME_VS_PANDERA = 10.0  # pandera time / tscontract time at least this
TIME_VS_SQL = 1.5  # tscontract time / hand-written SQL time at most this (also against sql-full)


@dataclass
class TargetResult:
    variant: Outcome
    ratio: str  # what is divided by what
    bound: str
    measured: str
    value: float | None = None
    met: bool | None = None  # None: not measured

    @property
    def verdict(self) -> str:
        return "not measured" if self.met is None else ("yes" if self.met else "**no**")


def _measured(a: float, b: float, unit: str, digits: int) -> str:
    return f"{a:,.{digits}f} / {b:,.{digits}f} {unit} = {a / b:,.2f}×"


# what each measure is called in a target, its unit and the digits shown
UNITS = {
    "wall_s": ("s", 2, "time"),
    "process_s": ("s", 2, "process s"),
    "peak_rss_mib": ("MiB", 0, "peak RSS"),
}


def ratio_target(
    variant: Outcome,
    other: Outcome | None,
    other_id: str,
    of: str,
    bound: float,
    *,
    inverse: bool = False,
    below: bool = False,
) -> TargetResult:
    """One target: ``variant``'s ``of`` (wall_s, process_s or peak_rss_mib) over ``other``'s (``inverse``:
    ``other``'s over ``variant``'s, at least ``bound``), at most ``bound`` (``below``: under it). Not measured
    when ``other`` (``other_id``) did not run or was stopped."""
    unit, digits, what = UNITS[of]
    names = (other_id, variant.peer.id) if inverse else (variant.peer.id, other_id)
    shown = f"{'≥' if inverse else '<' if below else '≤'} {bound:g}×"
    result = TargetResult(variant, f"{names[0]} {what} / {names[1]} {what}", shown, f"{other_id} did not run")
    if other is None:
        return result
    a, b = (
        (getattr(other, of), getattr(variant, of)) if inverse else (getattr(variant, of), getattr(other, of))
    )
    if other.status != "ok":
        result.measured = f"{other_id} {other.status}: {other.message}"
    elif a and b:
        result.value = a / b
        result.measured = _measured(a, b, unit, digits)
        if inverse:
            result.met = result.value >= bound
        else:
            result.met = result.value < bound if below else result.value <= bound
    return result


def targets(outcomes: list[Outcome], rows: int) -> list[TargetResult]:
    """Each target for each tscontract variant that ran: against the SQL peers, every pandera peer, and
    issue #29's whole-process ratios at this size (:data:`PROCESS_TARGETS`)."""
    found: list[TargetResult] = []
    by_name = {o.peer.name: o for o in outcomes}
    panderas = [o for o in outcomes if o.peer.name == "pandera"]
    for variant in (o for o in outcomes if o.peer.name in TSCONTRACT_PEERS and o.status == "ok"):
        found.append(ratio_target(variant, by_name.get("sql"), "sql", "wall_s", TIME_VS_SQL))
        if variant.peer.name == "tscontract":  # the full contract against the same full checks by hand
            found.append(ratio_target(variant, by_name.get("sql-full"), "sql-full", "wall_s", TIME_VS_SQL))
        for pandera in panderas:
            pid = pandera.peer.id
            found.append(ratio_target(variant, pandera, pid, "wall_s", TIME_VS_PANDERA, inverse=True))
            found.append(ratio_target(variant, pandera, pid, "peak_rss_mib", 1.0, below=True))
        for mine, other, bound in PROCESS_TARGETS.get(rows, DEFAULT_PROCESS_TARGETS):
            if mine == variant.peer.name and other in by_name:
                found.append(ratio_target(variant, by_name[other], other, "process_s", bound))
    return found


# Whole process (interpreter, imports, validation), per size: (tscontract peer, peer, at most); issue #29 at
# 1M and 10M, issue #16's "under 2x of the hand-written full checks" at other sizes
PROCESS_TARGETS = {
    1_000_000: (("tscontract", "sql-full", 1.3), ("tscontract-compared", "dataframely", 1.0)),
    10_000_000: (("tscontract", "sql-full", 1.10), ("tscontract-compared", "sql", 1.05)),
}
DEFAULT_PROCESS_TARGETS = (("tscontract", "sql-full", 2.0),)


def full_rows(outcomes: list[Outcome]) -> tuple[list[str], list[list[str]], list[str]]:
    """The whole contract's other checks, for the peers that report them; and where they differ.

    The full-contract tscontract peer is the reference: a sql-full count that differs from it is
    in bold and listed (and the run exits 1). Without tscontract, nothing is compared.
    """
    ran = [o for o in outcomes if o.status == "ok" and o.full]
    if not ran:
        return [], [], []
    base = next((o for o in ran if o.peer.name == "tscontract"), None)
    header = ["check", *(o.peer.id for o in ran)]
    rows, problems = [], []
    for check in FULL_CHECKS:
        cells = [check]
        for o in ran:
            got = o.full.get(check)
            want = base.full.get(check) if base is not None else None
            differs = o is not base and base is not None and got != want
            if differs:
                problems.append(f"{o.peer.id} {check}: {got} != tscontract {want}")
            cells.append("—" if got is None else (f"**{got}**" if differs else str(got)))
        rows.append(cells)
    return header, rows, problems


TARGET_HEADER = ["tscontract variant", "ratio", "measured", "target", "met"]


def target_rows(results: list[TargetResult]) -> list[list[str]]:
    return [[r.variant.peer.label, r.ratio, r.measured, r.bound, r.verdict] for r in results]


def target_verdicts(results: list[TargetResult]) -> list[str]:
    """One plain sentence per tscontract variant: which targets are met, which are not."""
    lines = []
    for variant in dict.fromkeys(r.variant.peer.label for r in results):
        mine = [r for r in results if r.variant.peer.label == variant]
        met = [f"{r.ratio} {r.value:,.2f}× (target {r.bound})" for r in mine if r.met]
        missed = [f"{r.ratio} {r.value:,.2f}× (target {r.bound})" for r in mine if r.met is False]
        unmeasured = [r.ratio for r in mine if r.met is None]
        parts = [f"meets {len(met)} of {len(mine) - len(unmeasured)} measured targets"]
        parts.append("met: " + ("; ".join(met) if met else "none"))
        parts.append("not met: " + ("; ".join(missed) if missed else "none"))
        if unmeasured:
            parts.append("not measured: " + "; ".join(unmeasured))
        lines.append(f"- **{variant}** — " + ". ".join(parts) + ".")
    return lines


def unmapped_lines(outcomes: list[Outcome]) -> list[str]:
    """Checks a peer reported without a common key: failing ones in full, passing ones by id."""
    lines = []
    for o in outcomes:
        if not o.unmapped:
            continue
        failing = [f"`{k}` = {v}" for k, v in o.unmapped.items() if v]
        passing = [f"`{k.split(': ', 1)[0]}`" for k, v in o.unmapped.items() if not v]
        text = f"- {o.peer.id}: {len(o.unmapped)} checks"
        if failing:
            text += "; failing rows: " + ", ".join(failing)
        if passing:
            text += f"; 0 failing rows: {', '.join(passing)}"
        lines.append(text)
    return lines


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


def _git(*command: str) -> str:
    return subprocess.run(["git", *command], cwd=REPO, capture_output=True, text=True, check=True).stdout


def git_state() -> str:
    """The commit the measured tscontract came from, and any local changes in src/.

    Local changes are named by the files and a digest of their diff, so that two calls (at
    the start and at the end of a run) tell whether src/ changed while the peers ran.
    """
    try:
        commit = _git("rev-parse", "--short", "HEAD").strip()
        changed = _git("status", "--porcelain", "--untracked-files=all", "--", "src")
        diff = _git("diff", "HEAD", "--", "src")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    if not changed.strip():
        return commit
    files = [line[3:] for line in changed.splitlines() if line.strip()]  # "XY path"
    digest = hashlib.sha256((changed + diff).encode())
    for name in files:  # untracked files are not in the diff: hash their content
        path = REPO / name
        if f"?? {name}" in changed and path.is_file():
            digest.update(path.read_bytes())
    return f"{commit} with uncommitted changes in src/ ({', '.join(files)}; digest {digest.hexdigest()[:12]})"


def tscontract_snapshot(rev: str, data_dir: Path) -> tuple[Path, str]:
    """``git archive`` of src/tscontract at ``rev`` under data_dir; returns its src/ and the commit.

    The tscontract peers then import this snapshot (it goes first on PYTHONPATH) instead of
    the working tree, so a run measures one commit even while src/ is being edited.
    """
    commit = _git("rev-parse", "--short", f"{rev}^{{commit}}").strip()
    target = data_dir / "tscontract-src" / commit
    if not (target / "src" / "tscontract" / "__init__.py").is_file():
        partial = target.with_name(f"{commit}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        command = ["git", "archive", "--format=tar", commit, "src/tscontract"]
        archive = subprocess.run(command, cwd=REPO, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(partial, filter="data")
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
    return target / "src", commit


def _relative(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def source_line(args: Any, outcomes_all: list[Outcome]) -> str:
    """Which tscontract was measured: a commit snapshot, or the working tree (and whether it moved)."""
    files = {o.runs[-1].get("tscontract_file") for o in outcomes_all if o.runs}
    shown = [f"`{_relative(Path(f).parent)}`" for f in sorted(f for f in files if f)]
    where = f" (imported from {', '.join(shown)})" if shown else ""
    if args.tscontract_src:
        dirty = " with " in args.git_at_start
        note = "; the working tree's uncommitted changes in src/ are not measured" if dirty else ""
        return f"- tscontract source: commit {args.tscontract_commit}, `git archive` snapshot{where}{note}"
    at_end = git_state()
    moved = "" if at_end == args.git_at_start else f"; **src/ changed during the run**, at the end: {at_end}"
    return f"- tscontract source: working tree at commit {args.git_at_start}{where}{moved}"


def write_results(
    path: Path,
    sections: list[str],
    glance: list[str],
    outcomes_all: list[Outcome],
    argv: list[str],
    args: Any,
) -> None:
    envs: dict[str, dict[str, str]] = {}
    for o in outcomes_all:
        if o.versions:
            envs.setdefault(o.peer.env, {}).update(o.versions)
    names = ["python", *DISTRIBUTIONS]
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
        source_line(args, outcomes_all),
        f"- repetitions per peer: {args.repeat} (times are medians; peak RSS is the maximum)",
        "- pandas dtypes of pandera and GX: in the peer's name (`pandera:arrow`, `pandera:numpy`;"
        " see bench/peers/pandas_io.py)",
        f"- budgets per peer run: {args.timeout:g} s"
        + (f", {args.max_rss_gib:g} GiB resident" if args.max_rss_gib else "")
        + " (a run over budget is stopped and reported as not measured)",
        "- wall s: `peer.run(path)` inside a fresh process: read the Parquet file and validate it."
        " process s adds interpreter start-up and imports; import s is the import alone."
        " peak RSS: `ru_maxrss` of the peer's own process.",
        "",
        *glance,
        *sections,
        "## Package versions",
        "",
        markdown_table(["environment", *names], version_rows),
        "",
    ]
    # the sections of bench/scaling.py and bench/registry.py are kept, at the end
    old = path.read_text() if path.exists() else ""
    for name in KEPT_SECTIONS:
        start, end = section_marks(name)
        first, last = old.find(start), old.find(end)
        if 0 <= first < last:
            text += [old[first : last + len(end)], ""]
    path.write_text("\n".join(text))


# written by bench/scaling.py, registry.py, postgres.py, chdb_engine.py
KEPT_SECTIONS = ("scaling", "registry", "postgres", "chdb")


def section_marks(name: str) -> tuple[str, str]:
    """The HTML comments around a section another bench script keeps in RESULTS.md."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def write_section(path: Path, name: str, text: str) -> None:
    """Replace section ``name`` of ``path`` (``text`` holds its marks), or append it."""
    start, end = section_marks(name)
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    first, last = old.find(start), old.find(end)
    if 0 <= first < last:
        new = old[:first] + text + old[last + len(end) :]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(new)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description="Benchmark tscontract against its peers.")
    parser.add_argument(
        "--rows", type=int, action="append", help="rows of data (repeatable; default 1000000)"
    )
    parser.add_argument(
        "--peers",
        default=DEFAULT_PEERS,
        help=f"comma-separated, from {', '.join(PEERS)}; pandas peers may name their dtypes: pandera:numpy",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per peer (median time reported)")
    parser.add_argument(
        "--pandas-dtypes", choices=PANDAS_DTYPES, default="arrow", help="dtypes of pandas peers named without"
    )
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds per peer run before it is stopped"
    )
    parser.add_argument(
        "--max-rss-gib",
        type=float,
        default=0,
        help="resident GiB per peer run before it is stopped (0: none)",
    )
    parser.add_argument(
        "--tscontract-rev",
        help="measure tscontract at this git revision (a snapshot in the data dir), not the working tree",
    )
    parser.add_argument("--data-dir", type=Path, default=BENCH / "data")
    parser.add_argument("--results", type=Path, default=BENCH / "RESULTS.md", help="markdown file to write")
    args = parser.parse_args(argv)
    rows_list = args.rows or [1_000_000]
    args.git_at_start = git_state()
    args.tscontract_src = args.tscontract_commit = None
    if args.tscontract_rev:
        try:
            snapshot = tscontract_snapshot(args.tscontract_rev, args.data_dir)
        except (OSError, subprocess.CalledProcessError) as error:
            parser.error(f"--tscontract-rev {args.tscontract_rev}: {error}")
        args.tscontract_src, args.tscontract_commit = snapshot
        print(f"tscontract peers import commit {args.tscontract_commit} from {args.tscontract_src}")
    try:
        peers = parse_peers(args.peers, args.pandas_dtypes)
    except ValueError as error:
        parser.error(str(error))

    all_ok = True
    sections: list[str] = []
    outcomes_all: list[Outcome] = []
    glance_rows: list[list[str]] = []
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
        for stale in [*log_dir.glob("*.log"), log_dir / "runs.json"]:  # logs are of the last run only
            stale.unlink(missing_ok=True)

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
        # every repetition's numbers, for a look at the spread behind the medians
        raw = {o.peer.id: {"status": o.status, "message": o.message, "runs": o.runs} for o in outcomes}
        (log_dir / "runs.json").write_text(json.dumps(raw, indent=2, default=str) + "\n")

        title = f"{rows:,} rows, {truth['symbols']} symbols, {truth['injected_rows']} injected defect rows"
        summary = summary_rows(outcomes, expected)
        count_header, count_rows = counts_rows(outcomes, expected)
        found = targets(outcomes, rows)
        verdicts = target_verdicts(found)
        print_table(title, SUMMARY_HEADER, summary)
        print_table(f"targets ({rows:,} rows)", TARGET_HEADER, target_rows(found))
        print("\n".join(verdicts))
        print_table(f"failing rows per check ({rows:,} rows)", count_header, count_rows)
        full_header, full_table, full_problems = full_rows(outcomes)
        if full_table:
            print_table(f"whole-contract checks ({rows:,} rows)", full_header, full_table)
        if full_problems:
            all_ok = False
            print("sql-full differs from tscontract: " + "; ".join(full_problems))
        extra = unmapped_lines(outcomes)
        print("not compared:\n" + "\n".join(extra) if extra else "")
        for r in found:
            glance_rows.append([f"{rows:,}", r.variant.peer.label, r.ratio, r.bound, _glance(r)])
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
            "Targets:",
            "",
            markdown_table(TARGET_HEADER, target_rows(found)),
            "",
            *verdicts,
            "",
            "Failing rows per check (bold: differs from the ground truth):",
            "",
            markdown_table(count_header, count_rows),
            "",
        ]
        if full_table:
            sections += [
                "The whole contract's other checks, failing rows (`schema`: 0 when the columns and types"
                " are as declared), tscontract against the same checks written by hand"
                " (bold: differs from tscontract):",
                "",
                markdown_table(full_header, full_table),
                "",
            ]
        if extra:
            sections += ["Checks without a common key (not compared):", "", *extra, ""]
    glance = []
    if glance_rows:
        glance = [
            "## Targets at a glance",
            "",
            "Per size and tscontract variant; details and the measured values under each size.",
            "",
            markdown_table(["rows", "tscontract variant", "ratio", "target", "measured, met"], glance_rows),
            "",
        ]
    write_results(args.results, sections, glance, outcomes_all, argv, args)
    print(f"wrote {args.results}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
