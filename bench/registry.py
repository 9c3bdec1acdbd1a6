"""The schema registry under load: many writers and readers at once (issue #13).

    .venv/bin/python bench/registry.py [--duration 60] [--writers 50] [--readers 16]
        [--versions-per-subject 20] [--results bench/RESULTS.md | --no-write]

Starts ``tscontract registry serve`` as its own process on loopback, with a SQLite database in a
temporary directory and the default compatibility (FULL_TRANSITIVE, checked by
tscontract.evolution). Then, for ``--duration`` seconds, over plain HTTP/1.1 keep-alive
connections (``http.client``, one per client thread):

* each writer registers the next version of its own subject: version n adds field ``fn`` with
  a default (compatible with every earlier version, so every check runs in full); after
  ``--versions-per-subject`` versions it moves on to a new subject, as topics come and go;
* each reader loops over the three reads a serializer makes: ``GET /schemas/ids/{id}``,
  ``GET /subjects/{s}/versions/latest``, ``GET /subjects/{s}/versions/{v}``, of versions
  registered so far.

Reported: connection resets and other connection errors, 5xx answers, other non-2xx answers,
write latency p50/p99/max, reads per second. Afterwards every subject's versions are read back:
they must be 1..n with n the writes its writer saw succeed. Targets: 0 resets, 0 5xx, write
p99 < 500 ms, reads >= 1,000 req/s. Writes the section between ``<!-- registry:start -->``
and ``<!-- registry:end -->`` in bench/RESULTS.md (bench/run.py keeps it). Exit status 1 when a
target is missed or the read-back finds a gap or a duplicate.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from run import machine, section_marks, write_section  # noqa: E402

START_MARK, END_MARK = section_marks("registry")
CT = "application/vnd.schemaregistry.v1+json"
CONNECTION_ERRORS = (ConnectionError, http.client.HTTPException, TimeoutError, OSError)


def schema(fields: int) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "Bar",
            "namespace": "bench",
            "fields": [{"name": f"f{i}", "type": "string", "default": ""} for i in range(fields)],
        }
    )


@dataclass
class Tally:
    """One client thread's counts (merged at the end; no lock on the hot path)."""

    latencies: list[float] = field(default_factory=list)
    ok: int = 0
    resets: int = 0
    connection_errors: list[str] = field(default_factory=list)
    server_errors: int = 0
    other_statuses: dict[int, int] = field(default_factory=dict)


class Client:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.conn = http.client.HTTPConnection(host, port, timeout=60)

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": CT} if body is not None else {}
        self.conn.request(method, path, body=body, headers=headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def reopen(self) -> None:
        self.conn.close()
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)


class Shared:
    """Versions registered so far (readers pick from them) and the stop flag."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.registered: list[tuple[str, int, int]] = []  # subject, version, id
        self.stop = threading.Event()

    def add(self, subject: str, version: int, schema_id: int) -> None:
        with self.lock:
            self.registered.append((subject, version, schema_id))

    def pick(self, rng: random.Random) -> tuple[str, int, int]:
        with self.lock:
            return self.registered[rng.randrange(len(self.registered))]


def call(
    client: Client, tally: Tally, method: str, path: str, body: bytes | None = None
) -> tuple[int, bytes]:
    """One request, counted: (status, body), or (0, b'') after a connection error (then reconnect)."""
    try:
        status, data = client.request(method, path, body)
    except CONNECTION_ERRORS as exc:
        if isinstance(exc, ConnectionResetError | BrokenPipeError | http.client.RemoteDisconnected):
            tally.resets += 1
        else:
            tally.connection_errors.append(f"{type(exc).__name__}: {exc}")
        client.reopen()
        return 0, b""
    if status >= 500:
        tally.server_errors += 1
    elif status >= 300:
        tally.other_statuses[status] = tally.other_statuses.get(status, 0) + 1
    else:
        tally.ok += 1
    return status, data


def writer(
    worker: int, host: str, port: int, shared: Shared, tally: Tally, per_subject: int, written: dict[str, int]
) -> None:
    client = Client(host, port)
    generation, version = 0, 0
    while not shared.stop.is_set():
        if version == per_subject:
            generation, version = generation + 1, 0
        subject = f"bench-w{worker}-s{generation}-value"
        body = json.dumps({"schema": schema(version + 1)}).encode()
        began = time.perf_counter()
        status, data = call(client, tally, "POST", f"/subjects/{subject}/versions", body)
        tally.latencies.append(time.perf_counter() - began)
        if status == 200:
            version += 1
            written[subject] = version
            shared.add(subject, version, json.loads(data)["id"])
    client.conn.close()


def reader(worker: int, host: str, port: int, shared: Shared, tally: Tally) -> None:
    client = Client(host, port)
    rng = random.Random(worker)
    turn = 0
    while not shared.stop.is_set():
        subject, version, schema_id = shared.pick(rng)
        path = (
            f"/schemas/ids/{schema_id}",
            f"/subjects/{subject}/versions/latest",
            f"/subjects/{subject}/versions/{version}",
        )[turn % 3]
        turn += 1
        began = time.perf_counter()
        call(client, tally, "GET", path)
        tally.latencies.append(time.perf_counter() - began)
    client.conn.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_server(db: Path, stderr: Path) -> tuple[subprocess.Popen[str], str, int]:
    with stderr.open("w") as err:  # a file, not a pipe: nothing blocks on the server's children
        proc = subprocess.Popen(
            [sys.executable, "-m", "tscontract", "registry", "serve", "--db", str(db), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=ROOT,
        )
    assert proc.stdout is not None
    banner = proc.stdout.readline()
    if not banner.startswith("tscontract registry on http://"):
        proc.kill()
        raise SystemExit(f"the registry did not start: {banner}{stderr.read_text()}")
    address = banner.split("http://", 1)[1].split(" ", 1)[0]
    host, port = address.rsplit(":", 1)
    return proc, host, int(port)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its live children (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def read_back(host: str, port: int, written: dict[str, int]) -> list[str]:
    """Every subject's versions must be exactly 1..n, n the successful writes its writer counted."""
    client = Client(host, port)
    problems = []
    for subject, count in sorted(written.items()):
        status, data = client.request("GET", f"/subjects/{subject}/versions")
        if status != 200 or json.loads(data) != list(range(1, count + 1)):
            problems.append(f"{subject}: {status} {data[:200]!r}, expected versions 1..{count}")
    client.conn.close()
    return problems


def run_bench(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="tscontract-registry-bench-") as tmp:
        proc, host, port = start_server(Path(tmp) / "registry.sqlite", Path(tmp) / "server.stderr")
        try:
            shared = Shared()
            seed = Client(host, port)
            status, data = seed.request("POST", "/subjects/bench-seed-value/versions", schema_body(1))
            assert status == 200, data
            shared.add("bench-seed-value", 1, json.loads(data)["id"])
            seed.conn.close()

            write_tallies = [Tally() for _ in range(args.writers)]
            read_tallies = [Tally() for _ in range(args.readers)]
            written: list[dict[str, int]] = [{} for _ in range(args.writers)]
            threads = [
                threading.Thread(
                    target=writer,
                    args=(w, host, port, shared, write_tallies[w], args.versions_per_subject, written[w]),
                )
                for w in range(args.writers)
            ] + [
                threading.Thread(target=reader, args=(r, host, port, shared, read_tallies[r]))
                for r in range(args.readers)
            ]
            load_start = os.getloadavg()[0]
            server_cpu_start = cpu_seconds(proc.pid)
            client_cpu_start = time.process_time()
            began = time.monotonic()
            for thread in threads:
                thread.start()
            time.sleep(args.duration)
            shared.stop.set()
            for thread in threads:
                thread.join(timeout=120)
            elapsed = time.monotonic() - began
            server_cpu = cpu_seconds(proc.pid) - server_cpu_start
            client_cpu = time.process_time() - client_cpu_start
            load_end = os.getloadavg()[0]
            merged_written = {k: v for part in written for k, v in part.items()}
            problems = read_back(host, port, merged_written)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            server_stderr = (Path(tmp) / "server.stderr").read_text()

    def total(tallies: list[Tally], name: str) -> int:
        return sum(getattr(t, name) for t in tallies)

    every = write_tallies + read_tallies
    write_latencies = [x for t in write_tallies for x in t.latencies]
    read_latencies = [x for t in read_tallies for x in t.latencies]
    other: dict[int, int] = {}
    for tally in every:
        for status, count in tally.other_statuses.items():
            other[status] = other.get(status, 0) + count
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "duration_s": elapsed,
        "writers": args.writers,
        "readers": args.readers,
        "versions_per_subject": args.versions_per_subject,
        "check_processes": check_processes(),
        "subjects": len(merged_written),
        "writes_ok": total(write_tallies, "ok"),
        "reads_ok": total(read_tallies, "ok"),
        "resets": total(every, "resets"),
        "connection_errors": [e for t in every for e in t.connection_errors],
        "server_errors": total(every, "server_errors"),
        "other_statuses": other,
        "write_p50_ms": percentile(write_latencies, 0.50) * 1000,
        "write_p99_ms": percentile(write_latencies, 0.99) * 1000,
        "write_max_ms": max(write_latencies, default=float("nan")) * 1000,
        "writes_per_s": total(write_tallies, "ok") / elapsed,
        "read_p50_ms": percentile(read_latencies, 0.50) * 1000,
        "read_p99_ms": percentile(read_latencies, 0.99) * 1000,
        "reads_per_s": len(read_latencies) / elapsed,
        "load_start": load_start,
        "server_cpu_s": server_cpu,
        "client_cpu_s": client_cpu,
        "load_end": load_end,
        "read_back_problems": problems,
        "server_stderr_lines": [line for line in server_stderr.splitlines() if line.strip()][:20],
    }


def check_processes() -> int:
    """What `tscontract registry serve` starts by default (one per core, at most 4)."""
    from tscontract.registry.server import default_check_processes

    return default_check_processes()


def schema_body(fields: int) -> bytes:
    return json.dumps({"schema": schema(fields)}).encode()


def targets(result: dict) -> list[tuple[str, str, bool]]:
    return [
        ("connection resets", f"{result['resets']} (target 0)", result["resets"] == 0),
        (
            "other connection errors",
            f"{len(result['connection_errors'])} (target 0)",
            not result["connection_errors"],
        ),
        ("5xx answers", f"{result['server_errors']} (target 0)", result["server_errors"] == 0),
        ("write p99", f"{result['write_p99_ms']:.0f} ms (target < 500 ms)", result["write_p99_ms"] < 500),
        ("reads", f"{result['reads_per_s']:,.0f} req/s (target >= 1,000)", result["reads_per_s"] >= 1000),
        (
            "versions read back",
            "1..n for every subject"
            if not result["read_back_problems"]
            else "; ".join(result["read_back_problems"][:3]),
            not result["read_back_problems"],
        ),
    ]


def section(result: dict) -> str:
    rows = [f"| {name} | {value} | {'met' if ok else '**missed**'} |" for name, value, ok in targets(result)]
    other = (
        ", ".join(f"{status}: {count}" for status, count in sorted(result["other_statuses"].items()))
        or "none"
    )
    r = result
    processes = r["check_processes"]
    where = f" in {processes} worker processes" if processes else " in the server process"
    run = (
        f"- run: {r['duration_s']:.0f} s, {r['writers']} writer and {r['readers']} reader threads in one"
        " client process (plain HTTP/1.1 keep-alive, `http.client`); the server in its own process"
        " (`tscontract registry serve`: Starlette on uvicorn with httptools and uvloop, SQLite in WAL mode"
        " in a temporary directory, the default FULL_TRANSITIVE checks by tscontract.evolution"
        + where
        + "); each writer moves to a new subject every"
        f" {r['versions_per_subject']} versions"
    )
    writes = (
        f"Writes: {r['writes_ok']:,} registered ({r['writes_per_s']:,.0f}/s) over {r['subjects']} subjects;"
        f" latency p50 {r['write_p50_ms']:.0f} ms, p99 {r['write_p99_ms']:.0f} ms,"
        f" max {r['write_max_ms']:.0f} ms."
    )
    reads = (
        f"Reads: {r['reads_ok']:,} ({r['reads_per_s']:,.0f}/s), p50 {r['read_p50_ms']:.1f} ms,"
        f" p99 {r['read_p99_ms']:.1f} ms. Other non-2xx answers: {other}."
    )
    lines = [
        START_MARK,
        f"## Registry: {r['writers']} writers and {r['readers']} readers against `tscontract registry serve`",
        "",
        f"- date: {r['date']}; machine: {r['machine']}",
        f"- load 1-min at start/end: {r['load_start']:.1f} / {r['load_end']:.1f} (the machine is shared:"
        " load above the core count means other processes took CPU from this run)",
        f"- CPU used during the run: server and its check processes {r['server_cpu_s']:.0f} s, client"
        f" {r['client_cpu_s']:.0f} s, of {r['duration_s'] * (os.cpu_count() or 1):.0f} core-seconds the"
        " machine has in that time",
        run,
        f"- command: `.venv/bin/python bench/registry.py --duration {r['duration_s']:.0f}"
        f" --writers {r['writers']} --readers {r['readers']}`",
        "",
        "| measure | result | target |",
        "|---|---|---|",
        *rows,
        "",
        f"{writes} {reads}",
        END_MARK,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--writers", type=int, default=50, help="writer threads (default 50)")
    parser.add_argument("--readers", type=int, default=16, help="reader threads (default 16)")
    parser.add_argument(
        "--versions-per-subject",
        type=int,
        default=20,
        help="versions a writer registers per subject (default 20)",
    )
    parser.add_argument("--results", type=Path, default=BENCH / "RESULTS.md", help="markdown file to update")
    parser.add_argument("--no-write", action="store_true", help="print the section, do not update --results")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    result = run_bench(args)
    text = section(result)
    print(text)
    if result["connection_errors"]:
        print("connection errors:", *result["connection_errors"][:10], sep="\n  ", file=sys.stderr)
    if result["server_stderr_lines"]:
        print("server stderr:", *result["server_stderr_lines"], sep="\n  ", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    if not args.no_write:
        write_section(args.results, "registry", text)
    return 0 if all(ok for _, _, ok in targets(result)) else 1


if __name__ == "__main__":
    sys.exit(main())
