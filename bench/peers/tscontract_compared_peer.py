"""Peer: tscontract on the compared clauses only -- the same engine, a smaller contract.

The seed contract (``examples/ohlcv_1m/contract.yaml``) with its ``cadence:`` line removed
and no catalog: tscontract then runs the clauses the other peers run (invariants,
nullability, ``adjusted``, key uniqueness) plus its type, UTC, precision and schema
checks, but no cadence, session or catalog check. This is the like-for-like comparison
with pandera, GX and the hand-written SQL; ``tscontract_peer.py`` runs the whole contract.

The contract text is derived at run time (inside the timed ``run``, it takes
microseconds) and written beside the data (``tscontract_compared_contract.yaml``, rewritten
only when the seed changed), so no second contract is kept in the repository and it cannot
drift from the seed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from peers.common import CONTRACT_PATH
from peers.tscontract_peer import REPO, available, validate_timed

__all__ = ["available", "compared_contract_text", "run"]

CADENCE_LINE = re.compile(r"^[ \t]*cadence:.*(?:\r?\n|$)", re.MULTILINE)


def compared_contract_text(seed_text: str) -> str:
    """The seed contract without its ``cadence:`` line (exactly one must be there)."""
    text, removed = CADENCE_LINE.subn("", seed_text)
    if removed != 1:
        raise ValueError(f"expected one 'cadence:' line in {CONTRACT_PATH}, found {removed}")
    return text


def run(parquet_path: str, **_: Any) -> dict[str, Any]:
    # beside the data, at the same path every run, as a user's contract is: a warm run reads it back from
    # tscontract's cache (keyed by path and text), as it does the seed contract
    contract_path = Path(parquet_path).resolve().parent / "tscontract_compared_contract.yaml"
    text = compared_contract_text((REPO / CONTRACT_PATH).read_text())
    if not contract_path.exists() or contract_path.read_text() != text:
        contract_path.write_text(text)
    return validate_timed(contract_path, parquet_path, catalog_path=None)
