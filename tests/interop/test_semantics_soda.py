"""The Soda export run by a real soda-core scan on generated clauses fails exactly where the reference fails (#25).

``tests/interop/test_semantics_exports.py`` runs the SQL the Soda export carries in DuckDB; this runs the
checks file itself in soda-core (the tool venv), where SodaCL decides what a check means: a bound
becomes ``min(x) > 0`` (Soda skips nulls), a clause a failed-rows check. Each generated case (clauses and
rows, as in the other differential tests) is one scan, all scans in one soda-core process; for each
clause the scan's outcome must be "fail" exactly when the reference fails some row.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.contract.clause_batches import DEEP, expected_failures, generated_batches
from tests.contract.clause_strategies import COLUMNS, contract_text, table
from tests.interop.test_soda import check_ids, run_soda
from tscontract import parse_contract
from tscontract.interop.exports import export
from tscontract.plan.checks import build_plan

NOW = datetime(2026, 3, 30, tzinfo=UTC)
# one scan per batch. A scan's verdict is per clause, not per row: over many rows nearly every clause fails
# somewhere, and a row failed by mistake would go unseen, so a batch here holds fewer rows than elsewhere
SCANS = 15 if DEEP else 2  # each at least 10 clauses on 20 rows
ROWS = 40


def soda_outcomes(cases: list[tuple[list[str], list[dict]]], tmp: Path) -> list[dict[str, str]]:
    """Per case, each exported clause's scan outcome (``pass``/``fail``) by clause text."""
    jobs, exported = [], []
    for n, (texts, batch) in enumerate(cases):
        contract = parse_contract(contract_text(texts))
        result, plan = export("soda", contract), build_plan(contract)
        path = tmp / f"case{n}.parquet"
        pq.write_table(table(batch), path)
        (artifact,) = result.artifacts
        load = f"CREATE TABLE generated AS SELECT * FROM read_parquet('{path}')"
        jobs.append({"name": f"case{n}", "load": load, "checks": artifact.content, "now": NOW.isoformat()})
        exported.append((result, plan))
    scans = run_soda(jobs, tmp)
    outcomes = []
    for n, (result, plan) in enumerate(exported):
        scan: dict[str, Any] = scans[f"case{n}"]
        assert scan["errors"] is None, scan["errors"]
        by_clause: dict[str, str] = {}
        for check in scan["checks"]:
            for check_id in check_ids(result, plan, check):
                clause = next(c.clause for c in plan.checks if c.id == check_id)
                if check_id.startswith("invariants["):
                    by_clause[clause] = (
                        "fail" if check["outcome"] == "fail" or by_clause.get(clause) == "fail" else "pass"
                    )
        outcomes.append(by_clause)
    return outcomes


def test_soda_scans_fail_the_clauses_the_reference_fails(tmp_path: Path) -> None:
    """Pairs (fast / deep, at most): before 40 / 300 scans x 4 x 12 = 1,920 / 14,400; now 2 / 15 x 25 x 40."""
    cases = generated_batches(SCANS, max_rows=ROWS, least=(10, 20))
    outcomes = soda_outcomes(cases, tmp_path)
    compared = 0
    for (texts, batch), found in zip(cases, outcomes, strict=True):
        for text in texts:
            if text not in found:
                continue  # not exported (listed with its reason in the checks file)
            failing = expected_failures(text, batch)
            expected = "fail" if failing else "pass"
            # the rows the reference fails, in full (the batch itself is cut short in pytest's message)
            assert found[text] == expected, (text, [(n, batch[n - 1]) for n in failing] or batch)
            compared += 1
    assert compared >= len(cases)  # most clauses are exported: the scans judged them


def test_a_zero_divisor_is_ieee_in_the_scan_whatever_duckdb_soda_runs(tmp_path: Path) -> None:
    """``x / 0`` is ±Inf and ``0 / 0`` NaN in the reference; soda-core's DuckDB (1.0) gives NULL there, which
    passed ``i < i / d6`` for i = -1, d6 = 0 (found once in a deep run: the only failing row of its batch).
    The export writes the zero divisor out, so the scan fails exactly the clauses the reference fails."""
    empty = dict.fromkeys(COLUMNS)
    batch = [
        {**empty, "i": -1, "d6": Decimal("0"), "f": -2.5, "j": 0},
        {**empty, "i": 7, "d6": Decimal("0"), "f": 2.5, "j": 3},
        {**empty, "i": 3, "d6": Decimal("0.5"), "f": 0.0, "j": -3},
    ]
    texts = ["i < i / d6", "f < f / d6", "j / d6 <= 0", "i / d6 > 0 or i > 5"]
    [found] = soda_outcomes([(texts, batch)], tmp_path)
    expected = {text: "fail" if expected_failures(text, batch) else "pass" for text in texts}
    assert expected == {
        "i < i / d6": "fail",
        "f < f / d6": "fail",
        "j / d6 <= 0": "fail",
        "i / d6 > 0 or i > 5": "fail",
    }
    assert found == expected
