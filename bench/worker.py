"""Run one peer once in this (fresh) process and write what it found as JSON.

    <peer's python> bench/worker.py PEER PARQUET OUT.json [--pandas-dtypes arrow|numpy]

Called by bench/run.py, one process per peer and repetition, with the peer's own
interpreter; standard library only, apart from what the peer module imports.
``run_s`` covers ``peer.run(path)``: reading the Parquet file and validating it.
``import_s`` is the time to import the peer and its libraries.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import json
import platform
import resource
import sys
import time
import traceback
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

MODULES = {
    "tscontract": "peers.tscontract_peer",
    "tscontract-compared": "peers.tscontract_compared_peer",
    "sql": "peers.handwritten_sql",
    "sql-full": "peers.handwritten_full_sql",
    "pandera": "peers.pandera_peer",
    "gx": "peers.gx_peer",
    "pandera-polars": "peers.pandera_polars_peer",
    "dataframely": "peers.dataframely_peer",
}
DISTRIBUTIONS = (
    "tscontract",
    "duckdb",
    "pyarrow",
    "pandas",
    "numpy",
    "pandera",
    "great_expectations",
    "polars",
    "dataframely",
    "exchange-calendars",
)


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in DISTRIBUTIONS:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("peer", choices=sorted(MODULES))
    parser.add_argument("parquet")
    parser.add_argument("out", type=Path)
    parser.add_argument("--pandas-dtypes", default="arrow")
    args = parser.parse_args()
    result: dict[str, object] = {"peer": args.peer, "versions": versions()}
    try:
        started = time.perf_counter()
        module = importlib.import_module(MODULES[args.peer])
        ok, reason = getattr(module, "available", lambda: (True, ""))()  # imports the library
        result["import_s"] = time.perf_counter() - started
        if not ok:
            result["skipped"] = reason
        else:
            started = time.perf_counter()
            found = module.run(args.parquet, pandas_dtypes=args.pandas_dtypes)
            result["run_s"] = time.perf_counter() - started
            result.update(found)
    except Exception as error:
        result["error"] = f"{type(error).__name__}: {error}"
        result["traceback"] = traceback.format_exc()
    result["self_maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    args.out.write_text(json.dumps(result, indent=2, default=str))
    return 1 if "error" in result else 0


if __name__ == "__main__":
    raise SystemExit(main())
