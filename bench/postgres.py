"""DuckDB against PostgreSQL on the same rows: the OHLCV contract, validated where the data lives.

    .venv/bin/python bench/postgres.py [--rows 100000 ...] [--repeat 1] [--url postgresql://user@host:port/db]
        [--results bench/RESULTS.md | --no-write]

Generates ``--rows`` bars with bench/generate.py (the same Parquet file bench/run.py uses),
copies them in file order into the PostgreSQL table ``tsc_bench_ohlcv_<rows>`` (numeric,
timestamptz, ... : the types the contract declares; kept for the next run), then times
``tscontract validate`` with the generated catalog:

* ``duckdb``: the embedded engine on the Parquet file;
* ``postgres``: the PostgreSQL engine on the table, inside the server (only counts and
  failing examples come back).

Both reports must agree (statuses, failing counts, examples, row numbers); the run says
so and exits 1 when they do not. The table of times goes between ``<!-- postgres:start -->``
and ``<!-- postgres:end -->`` in bench/RESULTS.md (bench/run.py keeps it). Without ``--url``
(or ``TSC_PG_URL``) a throwaway cluster is started on 127.0.0.1 as the tests start one
(tests/conftest.py), with PostgreSQL's default settings apart from ``fsync=off``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import generate  # noqa: E402  (bench/generate.py)
from run import machine, section_marks, write_section  # noqa: E402

DATA = ROOT / "bench" / "data"
CONTRACT = ROOT / "examples" / "ohlcv_1m" / "contract.yaml"
NOW = datetime(2027, 1, 4, tzinfo=UTC)  # after the generated sessions: freshness fails alike on both


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from tests.conftest import postgres_cluster

    with postgres_cluster() as started:
        yield started


def load(url: str, parquet: Path, rows: int, force: bool) -> str:
    """The generated rows as a PostgreSQL table (created once, in the file's order); its name."""
    import psycopg
    import pyarrow.parquet as pq

    from tscontract.engines.postgres import copy_arrow

    name = f"tsc_bench_ohlcv_{rows}"
    with psycopg.connect(url, autocommit=True) as con:
        exists = con.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
        if exists and exists[0] and not force:
            count = con.execute(f"SELECT count(*) FROM {name}").fetchone()
            if count and count[0] == rows:
                return name
        con.execute(f"DROP TABLE IF EXISTS {name}")
        started = time.perf_counter()
        copy_arrow(con, name, pq.read_table(parquet))
        con.execute(f"ANALYZE {name}")
        print(f"loaded {rows:,} rows into {name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return name


def timed(data: object, catalog: Path, engine: str, repeat: int) -> tuple[list[float], dict]:
    from tscontract import validate

    seconds, report = [], {}
    for _ in range(repeat):
        started = time.perf_counter()
        result = validate(CONTRACT, data, catalog=catalog, now=NOW, engine=engine)
        seconds.append(time.perf_counter() - started)
        report = result.to_json()
    for key in ("elapsed_s", "engine", "data"):
        report.pop(key)
    return seconds, report


def measure(url: str, rows: int, repeat: int, force: bool) -> dict:
    """One size: load once, time both engines, compare their reports."""
    parquet = generate.generate(rows, DATA, force=force, quiet=True)
    catalog = generate.paths(DATA, rows)[2]
    table = load(url, parquet, rows, force)
    duck_s, duck = timed(parquet, catalog, "duckdb", repeat)
    pg_s, pg = timed(f"{url}#{table}", catalog, "postgres", repeat)
    differs = [
        f"differs: {a['id']}\n  duckdb   {json.dumps(a)}\n  postgres {json.dumps(b)}"
        for a, b in zip(duck["checks"], pg["checks"], strict=False)
        if a != b
    ]
    return {
        "rows": rows,
        "duckdb_s": round(statistics.median(duck_s), 3),
        "postgres_s": round(statistics.median(pg_s), 3),
        "same_report": duck == pg,
        "differs": differs,
        "failed_checks": {c["id"]: c["failed_rows"] for c in duck["checks"] if c["status"] == "failed"},
    }


def section(results: list[dict], command: str, versions: str) -> str:
    """The markdown kept between the ``postgres`` marks of RESULTS.md."""
    start, end = section_marks("postgres")
    rows = [
        f"| {r['rows']:,} | {r['duckdb_s']:.2f} | {r['postgres_s']:.2f} | "
        f"{r['postgres_s'] / r['duckdb_s']:.1f}× | {'yes' if r['same_report'] else '**no**'} |"
        for r in results
    ]
    return "\n".join(
        [
            start,
            "## PostgreSQL: the contract validated where the data lives",
            "",
            f"- command: `{command}`",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {machine()}; {versions}",
            "- the whole seed contract with the generated catalog, `now` fixed; DuckDB reads the Parquet"
            " file, PostgreSQL validates the same rows copied into a table (`numeric`, `timestamptz`;"
            " loaded once, not timed) inside the server: only counts, aggregates of the time checks and"
            " failing examples come back. The server runs with its default settings (fsync off) on the"
            " same 2 cores. Times are `validate()` wall seconds in one process, medians.",
            "",
            "| rows | duckdb s | postgres s | postgres/duckdb | same report |",
            "|---|---|---|---|---|",
            *rows,
            end,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, action="append", help="bars to generate (repeatable; default 100,000)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per engine (median shown)")
    parser.add_argument(
        "--url", default=os.environ.get("TSC_PG_URL"), help="PostgreSQL URL (default: start one)"
    )
    parser.add_argument("--force", action="store_true", help="generate and load again")
    parser.add_argument(
        "--results", type=Path, default=ROOT / "bench" / "RESULTS.md", help="markdown to update"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    results = []
    with server(args.url) as url:
        import psycopg

        with psycopg.connect(url) as con:
            version = con.execute("SHOW server_version").fetchone()
        versions = f"PostgreSQL {version[0] if version else '?'}"
        for rows in args.rows or [100_000]:
            result = measure(url, rows, args.repeat, args.force)
            print(json.dumps({k: v for k, v in result.items() if k != "differs"}, indent=2))
            for line in result["differs"]:
                print(line, file=sys.stderr)
            results.append(result)
    command = "bench/postgres.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if not args.no_write:
        write_section(args.results, "postgres", section(results, command, versions))
    return 0 if all(r["same_report"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
