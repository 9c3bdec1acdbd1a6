"""DuckDB against chdb (in-process ClickHouse) on the same Parquet file: the OHLCV contract.

(Not bench/chdb.py: as a script's own directory comes first on sys.path, that name would shadow
the chdb package.)

    .venv/bin/python bench/chdb_engine.py [--rows 1000000 ...] [--repeat 3]
        [--results bench/RESULTS.md | --no-write]

Generates ``--rows`` bars with bench/generate.py (the same Parquet file bench/run.py uses) and
times ``validate()`` of the seed contract with the generated catalog, ``now`` fixed, on both
engines in one process: ``duckdb`` (the embedded engine) and ``chdb`` (the same statements
generated for ClickHouse by sql/dialects.py, the file read in place by ``file()``).

Both reports must agree (statuses, failing counts, examples, row numbers); the run says so and
exits 1 when they do not. The table of times goes between ``<!-- chdb:start -->`` and
``<!-- chdb:end -->`` in bench/RESULTS.md (bench/run.py keeps it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import generate  # noqa: E402  (bench/generate.py)
from run import machine, section_marks, write_section  # noqa: E402

DATA = ROOT / "bench" / "data"
CONTRACT = ROOT / "examples" / "ohlcv_1m" / "contract.yaml"
NOW = datetime(2027, 1, 4, tzinfo=UTC)  # after the generated sessions: freshness fails alike on both


def timed(data: Path, catalog: Path, engine: str) -> tuple[float, dict]:
    from tscontract import validate

    started = time.perf_counter()
    report = validate(CONTRACT, data, catalog=catalog, now=NOW, engine=engine).to_json()
    seconds = time.perf_counter() - started
    for key in ("elapsed_s", "engine"):
        report.pop(key)
    return seconds, report


def measure(rows: int, repeat: int, force: bool) -> dict:
    """One size: time both engines on the one file, compare their reports."""
    parquet = generate.generate(rows, DATA, force=force, quiet=True)
    catalog = generate.paths(DATA, rows)[2]
    timed(parquet, catalog, "chdb")  # a first session loads ClickHouse's functions: not timed
    duck_s, ch_s, duck, ch = [], [], {}, {}
    for _ in range(repeat):  # interleaved: a load from other work falls on both engines alike
        seconds, duck = timed(parquet, catalog, "duckdb")
        duck_s.append(seconds)
        seconds, ch = timed(parquet, catalog, "chdb")
        ch_s.append(seconds)
    differs = [
        f"differs: {a['id']}\n  duckdb {json.dumps(a)}\n  chdb   {json.dumps(b)}"
        for a, b in zip(duck["checks"], ch["checks"], strict=False)
        if a != b
    ]
    return {
        "rows": rows,
        "duckdb_s": round(statistics.median(duck_s), 3),
        "chdb_s": round(statistics.median(ch_s), 3),
        "same_report": duck == ch,
        "differs": differs,
        "failed_checks": {c["id"]: c["failed_rows"] for c in duck["checks"] if c["status"] == "failed"},
    }


def section(results: list[dict], command: str, versions: str) -> str:
    """The markdown kept between the ``chdb`` marks of RESULTS.md."""
    start, end = section_marks("chdb")
    rows = [
        f"| {r['rows']:,} | {r['duckdb_s']:.2f} | {r['chdb_s']:.2f} | "
        f"{r['chdb_s'] / r['duckdb_s']:.1f}× | {'yes' if r['same_report'] else '**no**'} |"
        for r in results
    ]
    return "\n".join(
        [
            start,
            "## chdb: the contract on in-process ClickHouse",
            "",
            f"- command: `{command}`",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {machine()}; {versions}",
            "- the whole seed contract with the generated catalog, `now` fixed, on the same Parquet file:"
            " DuckDB reads it with `read_parquet`, chdb with ClickHouse's `file()`, each in this process"
            " (a first chdb run, not timed, loads ClickHouse). Times are `validate()` wall seconds, medians"
            " of runs interleaved engine by engine.",
            "",
            "| rows | duckdb s | chdb s | chdb/duckdb | same report |",
            "|---|---|---|---|---|",
            *rows,
            end,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, action="append", help="bars to generate (repeatable; default 1,000,000)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (median shown)")
    parser.add_argument("--force", action="store_true", help="generate again")
    parser.add_argument(
        "--results", type=Path, default=ROOT / "bench" / "RESULTS.md", help="markdown to update"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    import chdb
    import duckdb

    versions = f"DuckDB {duckdb.__version__}, chdb {chdb.__version__} (ClickHouse {chdb.engine_version})"
    results = []
    for rows in args.rows or [1_000_000]:
        result = measure(rows, args.repeat, args.force)
        print(json.dumps({k: v for k, v in result.items() if k != "differs"}, indent=2))
        for line in result["differs"]:
            print(line, file=sys.stderr)
        results.append(result)
    command = "bench/chdb_engine.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if not args.no_write:
        write_section(args.results, "chdb", section(results, command, versions))
    return 0 if all(r["same_report"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
