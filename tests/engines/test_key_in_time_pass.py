"""The key check judged in the time pass's window (Parquet on DuckDB) and in its own grouped pass (CSV).

The same bars, with copies of some rows (the same key, another revision, a null revision, a copy moved
outside the session), give the same verdict, count, examples and message either way, and the count a
plain Python count of the keys gives.
"""

from __future__ import annotations

import csv
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tscontract import load_catalog, load_contract, validate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ohlcv_1m"
with (EXAMPLE / "data" / "good.csv").open(newline="") as handle:
    GOOD = list(csv.DictReader(handle))
CONTRACT = load_contract(EXAMPLE / "contract.yaml")
CATALOG = load_catalog(EXAMPLE / "catalog.yaml")
EDITS = st.sampled_from(["copy", "revision", "null revision", "outside", "outside copy"])


def edited(edits: list[tuple[int, str]]) -> list[dict[str, str]]:
    """The good bars with a row added per edit: a copy of bar ``i``, changed as the edit says."""
    rows = [dict(r) for r in GOOD]
    for i, edit in edits:
        row = dict(GOOD[i % len(GOOD)])
        if edit == "revision":
            row["revision"] = str(int(row["revision"]) + 1)
        elif edit == "null revision":
            row["revision"] = ""
        elif edit.startswith("outside"):  # at 03:00Z, hours before the open; "outside copy" twice
            start = datetime.fromisoformat(row["bar_start"].replace("Z", "+00:00"))
            row["bar_start"] = start.replace(hour=3).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            if edit == "outside copy":
                rows.append(dict(row))
        rows.append(row)
    return rows


def key_result(path: Path) -> tuple[object, list[str]]:
    said: list[str] = []
    report = validate(CONTRACT, path, catalog=CATALOG, progress=said.append, now=datetime(2027, 1, 1, tzinfo=UTC))
    (key,) = [c for c in report.checks if c.id == "key.unique"]
    return (key.status, key.failed_rows, key.examples, key.message), said


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, len(GOOD) - 1), EDITS), max_size=12))
def test_the_window_and_the_grouped_pass_report_the_same_duplicates(tmp_path, edits):
    rows = edited(edits)
    text = write_csv(tmp_path / f"bars-{len(rows)}.csv", rows)
    parquet = as_parquet(text)
    in_window, said = key_result(parquet)
    grouped, said_csv = key_result(text)
    assert "key uniqueness" not in said and "key uniqueness" in said_csv  # each took the path named
    assert in_window == grouped
    keys = Counter((r["symbol"], r["bar_start"], r["revision"]) for r in rows if r["revision"])
    assert in_window[1] == sum(n for n in keys.values() if n > 1)


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(GOOD[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def as_parquet(text: Path) -> Path:
    parquet = text.with_suffix(".parquet")
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{text}')) TO '{parquet}'")
    return parquet


def test_a_time_that_breaks_its_precision_keeps_the_key_check_in_its_own_pass(tmp_path):
    # two bars at one sub-millisecond instant: left out of the time pass's points, still one key twice
    rows = edited([(0, "copy")])
    rows[0]["bar_start"] = rows[-1]["bar_start"] = "2026-11-30T14:30:00.000500Z"
    (status, failed, examples, _), said = key_result(as_parquet(write_csv(tmp_path / "bars.csv", rows)))
    assert "key uniqueness" in said
    assert (status, failed) == ("failed", 2)
    assert examples[0]["rows"] == [1, len(rows)]
