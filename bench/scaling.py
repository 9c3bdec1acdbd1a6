"""How tscontract's validation time grows with rows, on DuckDB and on Spark (issue #7).

    .venv/bin/python bench/scaling.py --rows 1000000 --rows 10000000 --rows 50000000 \
        [--engines duckdb,spark] [--repeat N] [--spark-master 'local[*]'] [--timeout S]

For each size: generate the data with bench/generate.py (cached in bench/data/), unless
the free disk cannot hold it (then the size is reported as skipped); then, per engine and
repetition, run the whole seed contract with its catalog (as bench/peers/tscontract_peer.py
does) in a fresh ``.venv/bin/python bench/scaling.py --worker ...`` process. Per run:

* ``wall s``: ``validate(...)`` inside the worker; for Spark the session is started first
  and timed apart (``spark start s``: launching the JVM), so ``validate`` reuses it;
* ``process s``: the whole worker, interpreter start, imports and JVM start included;
* ``py RSS``: ``ru_maxrss`` of the Python worker (``os.wait4``); ``JVM RSS``: the peak
  resident set (``VmHWM`` in /proc) of the Spark JVM, a child of the worker, read just
  before the session stops (``os.wait4`` would not see it: the worker never reaps the
  JVM), and apart the summed peaks of the ``pyspark.daemon`` Python workers the JVM starts;
* per-check statuses and failing-row counts, compared between the engines at every size
  (and the compared checks against the generator's ground truth).

Writes the table between ``<!-- scaling:start -->`` and ``<!-- scaling:end -->`` in
bench/RESULTS.md (bench/run.py keeps that section). Exit status 1 when the engines
disagree, a run fails, or a count differs from the ground truth.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.metadata
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from run import (  # noqa: E402
    MAIN_PYTHON,
    REPO,
    _fmt,
    git_state,
    machine,
    markdown_table,
    print_table,
    section_marks,
    tscontract_snapshot,
    write_section,
)

ENGINES = ("duckdb", "spark")
START_MARK, END_MARK = section_marks("scaling")
FALLBACK_BYTES_PER_ROW = 20.0  # before any file exists (bench/README.md: 10M rows, about 160 MiB)
DISK_FACTOR = 3.0  # free space wanted per byte of Parquet: the file, and room for the engines to spill
DISK_RESERVE = 2 * 2**30  # bytes always left free


# ---------------------------------------------------------------------------- worker (one run)
def _descendants(pid: int) -> list[int]:
    """Child processes of ``pid`` and theirs, from /proc/<pid>/task/*/children."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            for child in map(int, children.read_text().split()):
                found += [child, *_descendants(child)]
    return found


def _status_kib(pid: int, field_name: str) -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field_name}:"):
                return int(line.split()[1])
    return 0


def children_peak_kib() -> dict[str, int]:
    """Peak resident sets (VmHWM) of this process's descendants: the Spark JVM, and the rest.

    The rest are the ``pyspark.daemon`` Python workers the JVM starts; their peaks are
    summed (an upper bound: they need not peak at the same moment).
    """
    found = {"jvm_hwm_kib": 0, "spark_workers_hwm_kib": 0}
    for pid in _descendants(os.getpid()):
        with contextlib.suppress(OSError):
            java = Path(f"/proc/{pid}/comm").read_text().strip() == "java"
            found["jvm_hwm_kib" if java else "spark_workers_hwm_kib"] += _status_kib(pid, "VmHWM")
    return found


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in ("tscontract", "duckdb", "pyspark", "pyarrow"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


def _validate(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Load the contract and catalog, start Spark if asked (timed apart), validate; fill ``result``."""
    from peers.common import CONTRACT_PATH
    from peers.tscontract_peer import CATALOG_NAME, PhaseClock, common_key

    from tscontract import load_catalog, load_contract, validate

    contract = load_contract(str(REPO / CONTRACT_PATH))
    catalog = load_catalog(str(Path(args.parquet).resolve().parent / CATALOG_NAME))
    conf = json.loads(args.spark_conf) if args.spark_conf else None
    session = None
    if args.engine == "spark":
        from tscontract.engines.spark import spark_session

        started = time.perf_counter()
        session = spark_session(args.spark_master, conf)
        result["spark_start_s"] = time.perf_counter() - started
    clock = PhaseClock()
    options = {
        "catalog": catalog,
        "now": dt.datetime.fromisoformat(args.now),
        "engine": args.engine,
        "spark_master": args.spark_master,
        "spark_conf": conf,
    }
    if session is not None:  # every Spark job of the first validation carries this group: counted after it
        session.sparkContext.setJobGroup("tscontract-bench", "the first validation")
    started = time.perf_counter()
    report = validate(contract, args.parquet, progress=clock, **options)
    result["run_s"] = time.perf_counter() - started
    if session is not None:
        result["spark_jobs"] = len(session.sparkContext.statusTracker().getJobIdsForGroup("tscontract-bench"))
        session.sparkContext.setJobGroup("tscontract-warm", "the warm validation")
    first_phases = clock.stop()  # before the warm run, which the last phase must not absorb
    # the same validation again in this process: what a long-lived session (a warm JVM) pays per batch
    started = time.perf_counter()
    validate(contract, args.parquet, **options)
    result["warm_s"] = time.perf_counter() - started
    phases: dict[str, float] = {}
    result["phases"] = phases
    for name, seconds in first_phases.items():  # the session is up already: "starting Spark" is setup
        name = "setup" if name == "starting Spark" else name
        phases[name] = phases.get(name, 0.0) + seconds
    result["rows"], result["passed"] = report.rows, report.passed
    result["checks"] = [[str(c.id), str(c.status), int(c.failed_rows or 0)] for c in report.checks]
    counts: dict[str, int] = {}
    for check in report.checks:
        key = common_key(check)
        if key is not None:  # a column may be non-null under several clauses: same rows, keep the largest
            counts[key] = max(counts.get(key, 0), int(check.failed_rows or 0))
    result["counts"] = counts
    if session is not None:
        result.update(children_peak_kib())
        session.stop()


def worker(args: argparse.Namespace) -> int:
    """``scaling.py --worker ENGINE PARQUET OUT.json``: one validation in this fresh process."""
    result: dict[str, Any] = {"engine": args.engine, "versions": versions()}
    try:
        _validate(args, result)
    except Exception as error:
        result["error"] = f"{type(error).__name__}: {error}"
        result["traceback"] = traceback.format_exc()
    result["self_maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Path(args.out).write_text(json.dumps(result, indent=2, default=str))
    return 1 if "error" in result else 0


# ---------------------------------------------------------------------------- runner
@dataclass
class Measure:
    rows: int
    engine: str
    status: str = "ok"  # ok | skipped | stopped | error
    message: str = ""
    runs: list[dict[str, Any]] = field(default_factory=list)

    def median(self, key: str) -> float | None:
        values = [r[key] for r in self.runs if r.get(key) is not None]
        return statistics.median(values) if values else None

    def peak_mib(self, key: str) -> float | None:
        values = [r[key] / 1024 for r in self.runs if r.get(key)]
        return max(values) if values else None

    @property
    def checks(self) -> list[list[Any]]:
        return self.runs[-1].get("checks", []) if self.runs else []

    @property
    def loads(self) -> str:
        return ", ".join(f"{r['load_start']:.2f}→{r['load_end']:.2f}" for r in self.runs)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_once(engine: str, parquet: Path, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    """One worker process: its JSON, its process time and peak RSS, the load average around it.

    The worker leads its own process group, so the Spark JVM goes with it when a run is
    stopped at ``--timeout`` (and no JVM outlives its run to load the next one).
    """
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    command = [str(MAIN_PYTHON), str(Path(__file__).resolve()), "--worker", engine, str(parquet), str(out)]
    command += ["--now", args.now, "--spark-master", args.spark_master, "--spark-conf", args.spark_conf_json]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if args.tscontract_src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.tscontract_src), env.get("PYTHONPATH")]))
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    with log.open("a") as log_file:
        proc = subprocess.Popen(
            command, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True
        )
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid or time.perf_counter() - started > args.timeout:
                break
            time.sleep(0.05)
    elapsed = time.perf_counter() - started
    _kill_group(proc.pid)  # over time (worker not reaped yet: its pid is still ours), or a stray JVM
    loads = {"load_start": load_start, "load_end": os.getloadavg()[0], "process_s": elapsed}
    if not pid:
        os.wait4(proc.pid, 0)
        out.unlink(missing_ok=True)
        return {**loads, "stopped": f"stopped after {elapsed:.0f} s (--timeout {args.timeout:g})"}
    result = json.loads(out.read_text()) if out.stat().st_size else {}
    out.unlink(missing_ok=True)
    code = os.waitstatus_to_exitcode(status)
    if "error" not in result and not result.get("checks"):
        result["error"] = f"exit code {code}, no result (log: {log})"
    return {**result, **loads, "maxrss_kib": usage.ru_maxrss}


def measure(rows: int, engine: str, parquet: Path, args: argparse.Namespace, log_dir: Path) -> Measure:
    found = Measure(rows, engine)
    log = log_dir / f"{engine}.log"
    log.unlink(missing_ok=True)
    for repetition in range(1, args.repeat + 1):
        print(f"[{rows:,} rows] {engine} run {repetition}/{args.repeat} ...", flush=True)
        result = run_once(engine, parquet, args, log)
        if "stopped" in result or "error" in result:
            found.status = "stopped" if "stopped" in result else "error"
            found.message = result.get("stopped") or result["error"]
            print(f"  {found.status}: {found.message}", flush=True)
            print(result.get("traceback", ""), file=sys.stderr)
            found.runs.append(result)  # for its load average; no times are taken from it
            return found
        found.runs.append(result)
        jvm = f", JVM {result['jvm_hwm_kib'] / 1024:,.0f} MiB" if result.get("jvm_hwm_kib") else ""
        print(f"  {result['run_s']:.2f}s, peak RSS {result['maxrss_kib'] / 1024:,.0f} MiB{jvm}", flush=True)
    return found


def bytes_per_row(data_dir: Path) -> float:
    """Parquet bytes per row of the largest data set already generated (a fallback before any)."""
    sizes = [
        (int(p.stem.rsplit("_", 1)[1]), p.stat().st_size)
        for p in data_dir.glob("ohlcv_1m_*.parquet")
        if p.stem.rsplit("_", 1)[1].isdigit()
    ]
    if not sizes:
        return FALLBACK_BYTES_PER_ROW
    rows, size = max(sizes)
    return size / rows


def disk_shortfall(rows: int, data_dir: Path) -> str:
    """Why ``rows`` rows do not fit on the disk (empty when they do, or the file is there)."""
    parquet = data_dir / f"ohlcv_1m_{rows}.parquet"
    if parquet.exists():
        return ""
    estimate = rows * bytes_per_row(data_dir)
    wanted = estimate * DISK_FACTOR + DISK_RESERVE
    free = shutil.disk_usage(data_dir).free
    if free >= wanted:
        return ""
    return (
        f"not enough disk ({free / 2**30:,.1f} GiB free, {wanted / 2**30:,.1f} GiB wanted "
        f"for a file of about {estimate / 2**30:,.1f} GiB)"
    )


def prepare(rows: int, args: argparse.Namespace) -> tuple[Path | None, str]:
    """The Parquet file of ``rows`` rows (generated or cached), or None and why it was skipped."""
    args.data_dir.mkdir(parents=True, exist_ok=True)
    reason = disk_shortfall(rows, args.data_dir)
    if reason:
        return None, reason
    from generate import generate  # numpy and pyarrow: imported by the runner only

    try:
        parquet = generate(rows, args.data_dir)
    except SystemExit as error:  # the generator's own limit (its calendar has so many sessions)
        args.data_dir.joinpath(f"ohlcv_1m_{rows}.parquet.tmp").unlink(missing_ok=True)
        return None, f"bench/generate.py cannot write it: {error}"
    parquet.read_bytes()  # warm the page cache, as bench/run.py does
    return parquet, ""


def checks_diff(a: Measure, b: Measure) -> list[str]:
    """Checks whose status or failing-row count differ between two engines' reports."""
    left = {c[0]: c[1:] for c in a.checks}
    right = {c[0]: c[1:] for c in b.checks}
    diffs = []
    for check in sorted(left.keys() | right.keys()):
        if left.get(check) != right.get(check):
            diffs.append(f"{check}: {a.engine} {left.get(check)} vs {b.engine} {right.get(check)}")
    return diffs


def truth_diff(found: Measure, expected: dict[str, int]) -> list[str]:
    counts = found.runs[-1].get("counts", {}) if found.runs else {}
    return [f"{k}: {counts.get(k)} != {v}" for k, v in expected.items() if counts.get(k) != v]


def agreement(measures: list[Measure], expected: dict[str, int]) -> tuple[str, bool]:
    """``yes`` when every engine that ran reports the same checks (and matches the ground truth)."""
    ran = [m for m in measures if m.status == "ok"]
    problems = [f"{m.engine} vs truth: {d}" for m in ran for d in truth_diff(m, expected)]
    problems += [d for m in ran[1:] for d in checks_diff(ran[0], m)]
    verdict = "yes" if len(ran) > 1 else ("only one engine ran" if ran else "no engine ran")
    return (verdict if not problems else "NO: " + "; ".join(problems)), not problems


# ---------------------------------------------------------------------------- table
HEADER = [
    "rows",
    "engine",
    "wall s",
    "warm s",
    "spark start s",
    "process s",
    "py peak RSS MiB",
    "JVM peak RSS MiB",
    "spark jobs",
    "rows/s",
    "vs previous size",
    "spark/duckdb",
    "load 1-min start→end",
]


def _growth(m: Measure, previous: Measure | None) -> str:
    wall, before = m.median("run_s"), previous.median("run_s") if previous else None
    if wall is None or before is None or previous is None:
        return "—"
    return f"×{wall / before:,.2f} time for ×{m.rows / previous.rows:,.3g} rows"


def _jvm(m: Measure) -> str:
    jvm, workers = m.peak_mib("jvm_hwm_kib"), m.peak_mib("spark_workers_hwm_kib")
    return _fmt(jvm, 0) + (f" (+{workers:,.0f} py workers)" if workers else "")


def table_rows(measures: list[Measure]) -> list[list[str]]:
    rows: list[list[str]] = []
    previous: dict[str, Measure] = {}
    for m in measures:
        if m.status != "ok":
            rows.append([f"{m.rows:,}", m.engine, f"{m.status}: {m.message}", *["—"] * 9, m.loads or "—"])
            continue
        wall = m.median("run_s")
        duck = next(
            (d for d in measures if d.rows == m.rows and d.engine == "duckdb" and d.status == "ok"), None
        )
        ratio = "—"
        if m.engine == "spark" and duck is not None and wall and duck.median("run_s"):
            ratio = f"{wall / duck.median('run_s'):,.1f}×"  # type: ignore[operator]
            warm, duck_warm = m.median("warm_s"), duck.median("warm_s")
            if warm and duck_warm:
                ratio += f" ({warm / duck_warm:,.1f}× warm)"
        rows.append(
            [
                f"{m.rows:,}",
                m.engine,
                _fmt(wall),
                _fmt(m.median("warm_s")),
                _fmt(m.median("spark_start_s")),
                _fmt(m.median("process_s")),
                _fmt(m.peak_mib("maxrss_kib"), 0),
                _jvm(m),
                _fmt(m.median("spark_jobs"), 0),
                f"{m.rows / wall:,.0f}" if wall else "—",
                _growth(m, previous.get(m.engine)),
                ratio,
                m.loads,
            ]
        )
        previous[m.engine] = m
    return rows


def phase_lines(measures: list[Measure]) -> list[str]:
    """Where each run's wall time went (the engine's own steps, from ``validate(progress=...)``)."""
    lines = []
    for m in (m for m in measures if m.status == "ok" and m.runs):
        names = m.runs[-1].get("phases", {})
        median = {
            n: statistics.median(r["phases"][n] for r in m.runs if n in r.get("phases", {})) for n in names
        }
        lines.append(f"- {m.rows:,} {m.engine}: " + ", ".join(f"{k} {v:.2f}" for k, v in median.items()))
    return lines


# ---------------------------------------------------------------------------- RESULTS.md
def java_version() -> str:
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    except OSError:
        return "no java on PATH"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[0] if lines else "?"


def section(
    measures: list[Measure], agree: list[list[str]], args: argparse.Namespace, argv: list[str]
) -> str:
    found = next((r["versions"] for m in measures for r in m.runs if r.get("versions")), versions())
    source = f"commit {args.tscontract_commit} (`git archive` snapshot)" if args.tscontract_src else ""
    at_end = git_state()
    if not source:
        moved = (
            "" if at_end == args.git_at_start else f"; **src/ changed during the run**, at the end: {at_end}"
        )
        source = f"working tree at {args.git_at_start}{moved}"
    conf = f", spark conf {args.spark_conf_json}" if args.spark_conf else ""
    lines = [
        START_MARK,
        "## Scaling: time against rows, DuckDB and Spark",
        "",
        "Written by `bench/scaling.py` (bench/README.md, Scaling); `bench/run.py` keeps this section.",
        "",
        f"- command: `{' '.join(['.venv/bin/python', 'bench/scaling.py', *argv])}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {machine()}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in found.items()) + f", java: {java_version()}",
        f"- tscontract source: {source}",
        f"- the whole seed contract with the generated catalog; `now` {args.now} for every run;"
        f" Spark master `{args.spark_master}`{conf}; {args.repeat} run(s) per size and engine"
        f" (times are medians, RSS the maximum); budget per run {args.timeout:g} s",
        "- wall s: `validate()` alone, in a fresh process; warm s: the same `validate()` once more in"
        " that process (a warm JVM and OS cache: what a long-lived session pays per batch);"
        " spark start s: `spark_session()` (the JVM) before it;"
        " process s: the whole process (interpreter, imports, JVM, validate)."
        " py peak RSS: `ru_maxrss` of the Python worker; JVM peak RSS: `VmHWM` of the Spark JVM"
        " (a child of the worker), read before the session stops, and in brackets the summed"
        " `VmHWM` of the `pyspark.daemon` Python workers it started. spark jobs: the Spark jobs the"
        " first `validate()` ran (its job group, from the status tracker). rows/s: rows / wall s.",
        "- load 1-min: the machine's 1-minute load average when each run started and ended"
        f" ({os.cpu_count()} cores; another process's load above that slows the runs).",
        "",
        markdown_table(HEADER, table_rows(measures)),
        "",
        "Engines agree (same status and failing-row count for every check; compared checks equal"
        " to the ground truth):",
        "",
        markdown_table(["rows", "agree"], agree),
        "",
        "Phases, s (the engine's steps as `validate(progress=...)` reports them):",
        "",
        *phase_lines(measures),
        END_MARK,
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main
def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="rows (repeatable; default 1000000)")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: duckdb,spark")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size and engine (median reported)")
    parser.add_argument("--spark-master", default="local[*]")
    parser.add_argument("--spark-conf", action="append", default=[], help="key=value for the Spark session")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run before it is stopped")
    parser.add_argument("--tscontract-rev", help="measure tscontract as committed at this revision")
    parser.add_argument("--data-dir", type=Path, default=BENCH / "data")
    parser.add_argument("--results", type=Path, default=BENCH / "RESULTS.md")
    args = parser.parse_args(argv)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not args.engines or set(args.engines) - set(ENGINES):
        parser.error(f"--engines: choose from {', '.join(ENGINES)}")
    conf = dict(item.partition("=")[::2] for item in args.spark_conf)
    args.spark_conf_json = json.dumps(conf) if conf else ""
    return args


def parse_worker(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scaling.py --worker")
    parser.add_argument("engine", choices=ENGINES)
    parser.add_argument("parquet")
    parser.add_argument("out")
    parser.add_argument("--now", required=True)
    parser.add_argument("--spark-master", default="local[*]")
    parser.add_argument("--spark-conf", default="")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return worker(parse_worker(argv[1:]))
    args = parse_args(argv)
    args.now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    args.git_at_start = git_state()
    args.tscontract_src = args.tscontract_commit = None
    if args.tscontract_rev:
        args.tscontract_src, args.tscontract_commit = tscontract_snapshot(args.tscontract_rev, args.data_dir)
    measures: list[Measure] = []
    agree: list[list[str]] = []
    all_ok = True
    for rows in sorted(set(args.rows or [1_000_000])):
        parquet, skipped = prepare(rows, args)
        if parquet is None:
            print(f"[{rows:,} rows] skipped: {skipped}")
            measures += [Measure(rows, e, "skipped", skipped) for e in args.engines]
            agree.append([f"{rows:,}", f"skipped: {skipped}"])
            continue
        truth = json.loads((args.data_dir / f"ohlcv_1m_{rows}.truth.json").read_text())
        log_dir = args.data_dir / "logs" / "scaling" / str(rows)
        log_dir.mkdir(parents=True, exist_ok=True)
        here = [measure(rows, engine, parquet, args, log_dir) for engine in args.engines]
        text, ok = agreement(here, truth["expected_failed_rows"])
        all_ok &= ok and all(m.status in ("ok", "stopped") for m in here)
        print(f"[{rows:,} rows] agree: {text}")
        measures += here
        agree.append([f"{rows:,}", text])
        (log_dir / "runs.json").write_text(
            json.dumps([m.__dict__ for m in here], indent=2, default=str) + "\n"
        )
    print_table("validation time against rows", HEADER, table_rows(measures))
    print_table("engines agree", ["rows", "agree"], agree)
    write_section(args.results, "scaling", section(measures, agree, args, argv))
    print(f"wrote the scaling section of {args.results}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
