"""Peer: tscontract itself -- the contract file, validated by the library.

    from tscontract import validate, load_contract, load_catalog
    report = validate(contract, parquet_path, catalog=catalog)

``report.checks`` is a list of results, each with ``.id``, ``.clause`` (verbatim contract
text) and ``.failed_rows``. Invariants map to the common keys by their clause text, which
is the contract's own. Nullability (``field.close.nullable``, ``provenance.source_id``),
the fixed ``adjusted`` value and key uniqueness are recognised by the result's ``.kind``
and the column its id names. Checks with no common key -- types, UTC rule, precision,
catalog, cadence, session -- are returned under ``unmapped`` with their failing-row
counts, for the report.

The benchmark data holds bars only inside full XNAS sessions (bench/generate.py, from
exchange-calendars) and ends where its row count runs out, inside a session: the peer
passes the period the file covers (``coverage``, ``--from/--to``: from the generator's first
bar to its last minute, which the row count fills for only some symbols; truth file), so the
session and catalog checks pass. Cadence fails from 10M rows on, rightly: the generator skips
early-close sessions (2026-11-27, 2026-12-24), which the coverage includes. None of these is
among the compared checks.
``bench/peers/tscontract_compared_peer.py`` runs the same engine without them.

Phases: ``load contract``, then the engine's own steps, timed from one ``progress``
message of ``validate`` to the next (``setup``: plan, source and typed views; ``row
scan``: the one scan of the row checks; ``row examples``: failing rows of failed row checks,
where the row scan only counted;
``keys``: key uniqueness; ``sessions``: exchange sessions; ``cadence``: the window pass
and the cadence and session counts), and ``report``: mapping the results.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import re
import time
from pathlib import Path
from typing import Any

from peers.common import (
    ADJUSTED_CHECK,
    ALL_COLUMNS,
    CONTRACT_PATH,
    INVARIANTS,
    NOT_NULL_COLUMNS,
    UNIQUE_KEY,
    check_not_null,
    check_unique,
)

REPO = Path(__file__).resolve().parents[2]
CATALOG_NAME = "ohlcv_1m_catalog.yaml"  # written by bench/generate.py beside the data


def available() -> tuple[bool, str]:
    """Whether ``tscontract.validate`` can be imported; the reason when it cannot.

    Imports the DuckDB engine too (the library imports it on the first ``validate``), as the
    SQL peer imports duckdb: import time is reported apart from the validation for every peer.
    """
    try:
        import tscontract.engines.duckdb  # noqa: F401
        from tscontract import validate  # noqa: F401
    except ImportError as error:
        return False, f"tscontract.validate is not importable yet ({error})"
    return True, ""


def _words(*texts: Any) -> set[str]:
    found: set[str] = set()
    for text in texts:
        if text:
            found.update(re.findall(r"[a-z_]+", str(text).lower()))
    return found


def _column(check_id: str) -> str | None:
    """The column a check id names (``field.close.nullable``, ``provenance.source_id``)."""
    named = [part for part in re.split(r"[.\[\]]", check_id) if part in ALL_COLUMNS]
    return named[0] if len(named) == 1 else None


def common_key(check: Any) -> str | None:
    """The common key a tscontract check result answers for, or None.

    By the check's ``kind`` (``invariant``, ``not_null``, ``fixed_value``, ``unique_key``)
    and the column its id names; invariants by their verbatim clause text. Falls back to
    the words of id, kind and clause for results that carry no recognised kind.
    """
    clause = " ".join(str(getattr(check, "clause", "") or "").split())
    if clause in INVARIANTS:
        return clause
    check_id = str(getattr(check, "id", "") or "")
    kind = str(getattr(check, "kind", "") or "")
    column = _column(check_id)
    if kind == "not_null" and column in NOT_NULL_COLUMNS:
        return check_not_null(column)
    if kind == "fixed_value" and column == "adjusted":
        return ADJUSTED_CHECK
    if kind == "unique_key":
        return check_unique(UNIQUE_KEY)
    if kind:
        return None
    words = _words(check_id, clause)
    if words & {"null", "nullable", "not_null"} and column in NOT_NULL_COLUMNS:
        return check_not_null(column)
    if column == "adjusted" and "value" in words:
        return ADJUSTED_CHECK
    if words & {"unique", "uniqueness", "duplicate", "duplicates"}:
        return check_unique(UNIQUE_KEY)
    return None


# The engine's progress messages (tscontract.engines.duckdb, duckdb_time), shortened.
PHASE_NAMES = {
    "row checks: one fused scan": "row scan",
    "row checks: one scan keeping the failing rows": "row scan",
    "examples for # failed row check(s)": "row examples",
    "key uniqueness": "keys",
    "exchange sessions": "sessions",
    "cadence and completeness": "cadence",
}


class PhaseClock:
    """Turns ``validate(progress=...)`` messages into the time spent in each step.

    A message marks the start of a step; the step lasts until the next message, or until
    ``stop()``. Time before the first message is ``setup``.
    """

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self.current = "setup"
        self.since = time.perf_counter()

    def __call__(self, message: str) -> None:
        now = time.perf_counter()
        self.phases[self.current] = self.phases.get(self.current, 0.0) + now - self.since
        normalised = re.sub(r"\d+", "#", str(message))
        self.current, self.since = PHASE_NAMES.get(normalised, normalised), now

    def stop(self) -> dict[str, float]:
        self("")
        return self.phases


def covered(parquet_path: str) -> tuple[dt.datetime, dt.datetime]:
    """The period the generated file covers: its first bar up to its last minute (truth file)."""
    truth = json.loads(Path(parquet_path.replace(".parquet", ".truth.json")).read_text())
    first, last = (truth[key].replace("Z", "+00:00") for key in ("first_bar", "last_bar"))
    return dt.datetime.fromisoformat(first), dt.datetime.fromisoformat(last)


def validate_timed(contract_path: Path, parquet_path: str, catalog_path: Path | None) -> dict[str, Any]:
    """Load the contract (and catalog), validate, and map the report to the common keys."""
    from tscontract import load_catalog, load_contract, validate

    phases: dict[str, float] = {}
    started = time.perf_counter()
    contract = load_contract(str(contract_path))
    catalog = load_catalog(str(catalog_path)) if catalog_path is not None else None
    phases["load contract"] = time.perf_counter() - started

    clock = PhaseClock()
    # a revision before --from/--to (``--tscontract-rev``) judges each series between its own points
    knows_coverage = "coverage" in inspect.signature(validate).parameters
    stated: dict[str, Any] = {"coverage": covered(parquet_path)} if knows_coverage else {}
    # judged as of the minute after the last bar, whatever today's date: sessions after ``now`` are not
    # judged, and the generated sessions run into 2027 (at 10M rows, a run in December 2026 judged half)
    stated["now"] = covered(parquet_path)[1] + dt.timedelta(minutes=1)
    report = validate(contract, parquet_path, catalog=catalog, progress=clock, **stated)
    phases.update(clock.stop())

    started = time.perf_counter()
    counts: dict[str, int] = {}
    unmapped: dict[str, int] = {}
    for check in report.checks:
        key = common_key(check)
        failed = int(getattr(check, "failed_rows", 0) or 0)
        if key is None:
            label = f"{check.id}: {check.clause}" if getattr(check, "clause", None) else str(check.id)
            unmapped[label] = failed
        else:
            # A column can be non-null under several clauses (field, key, provenance):
            # each check counts the same rows, so keep the largest.
            counts[key] = max(counts.get(key, 0), failed)
    phases["report"] = time.perf_counter() - started
    import tscontract  # where it was imported from: the working tree, or a --tscontract-rev snapshot

    return {"counts": counts, "phases": phases, "unmapped": unmapped, "tscontract_file": tscontract.__file__}


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    catalog = Path(parquet_path).resolve().parent / CATALOG_NAME
    return validate_timed(REPO / CONTRACT_PATH, parquet_path, catalog)
