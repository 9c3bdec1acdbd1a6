"""tscontract on Spark against the same checks written by hand in PySpark (issue #29).

    .venv/bin/python bench/spark.py --rows 1000000 [--rows 10000000] [--repeat 3] [--master 'local[2]']

Per size: the generated bench data (bench/generate.py), then for each repetition, alternating, one
fresh process per side: ``tscontract`` (``validate`` of the seed contract with the generated catalog
and the covered period, ``engine="spark"``) and ``spark-hand`` (bench/peers/handwritten_spark.py).
Each starts the same Spark session first (``tscontract.engines.spark.spark_session``, timed apart),
runs once (``cold s``: the JVM's first queries) and again (``warm s``: a long-lived session); the
Spark jobs of the first run are counted on a job group. Both sides' counts are checked against the
ground truth (``common.CHECKS``) and against each other (``common.FULL_CHECKS``) in the same run.

Prints per size the median times, the jobs, the ratio tscontract / hand-written, and whether the
counts agree; exit status 1 when they do not.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from peers.common import CHECKS, CONTRACT_PATH, FULL_CHECKS  # noqa: E402

SIDES = ("tscontract", "spark-hand")
TARGET = 1.2  # tscontract on Spark / hand-written PySpark at most this (issue #29)
CPU = ("cold_cpu_s", "warm_cpu_s")


def _tscontract(parquet: str) -> dict[str, Any]:
    """One validation, as the full-contract tscontract peer maps it (counts, and FULL_CHECKS by id)."""
    from peers.tscontract_peer import CATALOG_NAME, common_key, covered

    from tscontract import load_catalog, load_contract, validate

    contract = load_contract(str(REPO / CONTRACT_PATH))
    catalog = load_catalog(str(Path(parquet).resolve().parent / CATALOG_NAME))
    # judged as of the minute after the last bar, as bench/peers/tscontract_peer.py judges it: as of today,
    # sessions after today are not judged, and a batch reaching past it (10M rows run into January 2027)
    # counted fewer missing sessions than the hand-written job, which judges every one
    period = covered(parquet)
    now = period[1] + dt.timedelta(minutes=1)
    report = validate(contract, parquet, catalog=catalog, coverage=period, now=now, engine="spark")
    counts: dict[str, int] = {}
    by_id: dict[str, int] = {}
    for check in report.checks:
        key = common_key(check)
        if key is None:
            by_id[str(check.id)] = int(check.failed_rows or 0)
        else:
            counts[key] = max(counts.get(key, 0), int(check.failed_rows or 0))
    schema = [
        n for i, n in by_id.items() if i.startswith("schema.") or i.endswith(".type") or i == "time.timezone"
    ]
    full = {"schema": int(any(schema))} | {key: by_id[key] for key in FULL_CHECKS if key in by_id}
    return {"counts": counts, "full": full}


def cpu_s() -> float:
    """CPU seconds (user + system) of this process and every live process under it: the Spark JVM and its
    Python workers. A shared machine's load stretches wall time; it stretches CPU time much less."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks
    mine, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        mine.add(pid)
        todo += [child for child, parent in parents.items() if parent == pid and child not in mine]
    return sum(used.get(pid, 0.0) for pid in mine)


def worker(side: str, parquet: str, out: Path, master: str) -> None:
    """Start the session, run ``side`` twice (jobs of the first counted), write the result as JSON."""
    from tscontract.engines.spark import spark_session

    started = time.perf_counter()
    spark = spark_session(master)
    result: dict[str, Any] = {"spark_start_s": time.perf_counter() - started}
    context = spark.sparkContext
    if side == "tscontract":
        once = lambda: _tscontract(parquet)  # noqa: E731
    else:
        from peers import handwritten_spark

        once = lambda: handwritten_spark.run(parquet, spark=spark)  # noqa: E731
    for label in ("cold", "warm"):
        context.setJobGroup(f"bench-{label}", label)
        started, cpu = time.perf_counter(), cpu_s()
        found = once()
        result[f"{label}_s"] = time.perf_counter() - started
        result[f"{label}_cpu_s"] = cpu_s() - cpu
        result[f"{label}_jobs"] = len(context.statusTracker().getJobIdsForGroup(f"bench-{label}"))
    result.update(found)
    out.write_text(json.dumps(result))


def run_side(side: str, parquet: Path, master: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", side, str(parquet), str(out)]
    subprocess.run([*command, "--master", master], check=True, cwd=REPO)
    try:
        return dict(json.loads(out.read_text()))
    finally:
        out.unlink(missing_ok=True)


def compare(results: dict[str, list[dict[str, Any]]], expected: dict[str, int]) -> list[str]:
    """Disagreements: each side against the ground truth, and the two sides' FULL_CHECKS."""
    problems = []
    for side, runs in results.items():
        counts = runs[-1]["counts"]
        problems += [
            f"{side} {c}: {counts.get(c)} != {expected[c]}" for c in CHECKS if counts.get(c) != expected[c]
        ]
    ours, hand = (results[s][-1]["full"] for s in SIDES)
    problems += [
        f"{c}: tscontract {ours.get(c)} != spark-hand {hand.get(c)}"
        for c in FULL_CHECKS
        if ours.get(c) != hand.get(c)
    ]
    return problems


def bench_size(rows: int, args: argparse.Namespace) -> bool:
    parquet = BENCH / "data" / f"ohlcv_1m_{rows}.parquet"
    truth = parquet.with_suffix(".truth.json")
    if not truth.is_file():
        subprocess.run(
            [sys.executable, str(BENCH / "generate.py"), "--rows", str(rows)], check=True, cwd=REPO
        )
    expected = json.loads(truth.read_text())["expected_failed_rows"]
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for _ in range(args.repeat):  # alternating: a load that changes over the run weighs on both sides
        for side in SIDES:
            results[side].append(run_side(side, parquet, args.master))
    median = {
        side: {k: statistics.median(r[k] for r in results[side]) for k in ("cold_s", "warm_s", *CPU)}
        for side in SIDES
    }
    print(
        f"\n## {rows:,} rows, Spark master {args.master}, {args.repeat} run(s) each, "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    )
    print("| side | cold s | warm s | cold CPU s | warm CPU s | Spark jobs (first run) | session start s |")
    print("|---|---|---|---|---|---|---|")
    for side in SIDES:
        last, m = results[side][-1], median[side]
        print(
            f"| {side} | {m['cold_s']:.2f} | {m['warm_s']:.2f} | {m['cold_cpu_s']:.1f} | "
            f"{m['warm_cpu_s']:.1f} | {last['cold_jobs']} | "
            f"{statistics.median(r['spark_start_s'] for r in results[side]):.2f} |"
        )
    for label in ("cold_s", "warm_s", *CPU):
        ratio = median["tscontract"][label] / median["spark-hand"][label]
        verdict = "yes" if ratio <= TARGET else "no"
        name = label[:-2].replace("_", " ")
        print(f"tscontract / spark-hand, {name}: {ratio:.2f}x (target <= {TARGET}x: {verdict})")
    problems = compare(results, expected)
    print("counts agree (truth, and tscontract against spark-hand):", "yes" if not problems else "NO")
    for problem in problems:
        print("  ", problem)
    return not problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, action="append")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--worker", nargs=3, metavar=("SIDE", "PARQUET", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        side, parquet, out = args.worker
        worker(side, parquet, Path(out), args.master)
        return 0
    agreed = [bench_size(rows, args) for rows in args.rows or [1_000_000]]
    return 0 if all(agreed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
