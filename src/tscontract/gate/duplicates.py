"""Repeated keys in one batch, resolved as the contract's ``duplicates:`` section says.

Without the section (or with ``keep: all``) every copy of a repeated key fails ``key.unique``
and is quarantined. With ``keep: first`` / ``keep: last`` and ``by: <column>``, the copies that
``by`` orders -- every copy has a value, no two the same -- are resolved: the copy with the
lowest / highest value goes on through the gate, the others are quarantined as superseded
(check id ``duplicates``). Copies ``by`` cannot order (a null, a tie) still fail ``key.unique``
(the engine leaves them there), all of them: which one is right is not known.

A vendor that resends a corrected bar in the same file with a higher sequence number is the
case this is for: ``duplicates: {keep: last, by: vendor_seq}``.
"""

from __future__ import annotations

import duckdb

from tscontract.contract.model import Contract
from tscontract.engines.duckdb import ValidationRun
from tscontract.engines.run.keys import KEY_ROWS
from tscontract.plan.result import ValidationReport
from tscontract.sql.columns import ident, sql_string

CHECK_ID = "duplicates"


def clause(contract: Contract) -> dict[str, str]:
    """The clause text a superseded copy is quarantined with."""
    policy = contract.duplicates
    if policy is None or not policy.keeps_one:
        return {}
    side = "higher" if policy.keep == "last" else "lower"
    return {CHECK_ID: f"{policy.as_text()} (a copy of the key with a {side} {policy.by} supersedes this one)"}


def mark_superseded(
    con: duckdb.DuckDBPyConnection, validation: ValidationRun, report: ValidationReport, failures: str
) -> int:
    """Append every superseded copy to ``failures(__row, check_id)``; how many there were."""
    contract = validation.contract
    policy = contract.duplicates
    if policy is None or not policy.keeps_one or policy.by is None or report.check("key.unique").status == "error":
        return 0  # without key columns the engine's uniqueness pass did not run (the batch is rejected)
    columns = validation.columns
    by = columns[policy.by]
    if not by.present:
        return 0  # a missing column rejects the batch
    keys = ", ".join(f"{ident(k)} AS __k{i}" for i, k in enumerate(contract.key))
    partition = ", ".join(f"__k{i}" for i in range(len(contract.key)))
    order = "DESC" if policy.keep == "last" else "ASC"
    # only rows whose key hash repeats, with their typed key and ``by`` (the engine's uniqueness pass kept them)
    candidates = f"SELECT __row, {keys}, __by FROM {KEY_ROWS}"
    ranked = (
        f"SELECT __row, row_number() OVER (PARTITION BY {partition} ORDER BY __by {order}) AS __rank, "
        f"count(*) OVER (PARTITION BY {partition}) AS __copies, "
        f"count(DISTINCT __by) OVER (PARTITION BY {partition}) AS __ordered FROM ({candidates})"
    )
    before = con.execute(f"SELECT count(*) FROM {failures}").fetchall()[0][0]
    con.execute(
        f"INSERT INTO {failures} SELECT __row, {sql_string(CHECK_ID)} FROM ({ranked}) "
        "WHERE __copies > 1 AND __ordered = __copies AND __rank > 1"
    )
    return int(con.execute(f"SELECT count(*) FROM {failures}").fetchall()[0][0] - before)
