"""Peer: tscontract itself -- the contract file, validated by the library.

    from tscontract import validate, load_contract, load_catalog
    report = validate(contract, parquet_path, catalog=catalog)

``report.checks`` is a list of results, each with ``.id``, ``.clause`` (verbatim contract
text) and ``.failed_rows``. Invariants map to the common keys by their clause text, which
is the contract's own. Nullability, the fixed ``adjusted`` value and key uniqueness are
recognised from the check id, kind and clause (the engine names the column and the
section). Checks with no common key -- types, cadence, session, revision policy -- are
returned under ``unmapped`` with their failing-row counts, for the report.

The benchmark data ignores exchange holidays and early closes (bench/generate.py), so a
calendar-aware cadence or session check may report bars on those days; they are not
among the compared checks.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from peers.common import (
    ADJUSTED_CHECK,
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
    """Whether ``tscontract.validate`` can be imported; the reason when it cannot."""
    try:
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


def common_key(check: Any) -> str | None:
    """The common key a tscontract check result answers for, or None."""
    clause = " ".join(str(getattr(check, "clause", "") or "").split())
    if clause in INVARIANTS:
        return clause
    check_id = str(getattr(check, "id", "") or "")
    kind = getattr(check, "kind", None)
    columns = getattr(check, "columns", None) or getattr(check, "column", None) or getattr(check, "subject", None)
    if isinstance(columns, str):
        columns = [columns]
    words = _words(check_id, kind, clause)
    named = [c for c in (columns or []) if isinstance(c, str)] or [c for c in NOT_NULL_COLUMNS if c in words]
    nullish = words & {"null", "nullable", "not_null", "nonnull", "non_null", "notnull", "nullability"}
    if nullish and len(named) == 1 and named[0] in NOT_NULL_COLUMNS:
        return check_not_null(named[0])
    if "adjusted" in words and words & {"value", "false", "fixed"}:
        return ADJUSTED_CHECK
    if not nullish and words & {"unique", "uniqueness", "duplicate", "duplicates", "key"}:
        if set(UNIQUE_KEY) <= words or words & {"unique", "uniqueness", "duplicate", "duplicates"}:
            return check_unique(UNIQUE_KEY)
    return None


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    from tscontract import load_catalog, load_contract, validate

    phases: dict[str, float] = {}
    started = time.perf_counter()
    contract = load_contract(str(REPO / CONTRACT_PATH))
    catalog = load_catalog(str(Path(parquet_path).resolve().parent / CATALOG_NAME))
    phases["load contract"] = time.perf_counter() - started

    started = time.perf_counter()
    report = validate(contract, parquet_path, catalog=catalog)
    phases["validate"] = time.perf_counter() - started

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
    return {"counts": counts, "phases": phases, "unmapped": unmapped}
