"""The ingest gate with issue 14's rules: repeated values and regex failures quarantine their rows,
a tolerated share and warnings publish, a failing row count or SQL check rejects the batch."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.engines.test_rules import GOOD_ROWS, trades_contract, trades_csv
from tscontract import load_contract
from tscontract.gate.ingest import ingest
from tscontract.gate.store import DuckDBStore

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)


def gate(tmp_path, rows, name):
    store = DuckDBStore(str(tmp_path / f"{name}.duckdb"))
    try:
        return ingest(
            load_contract(trades_contract(tmp_path)), [trades_csv(tmp_path, rows, f"{name}.csv")], store, now=NOW
        )
    finally:
        store.close()


def test_unique_and_regex_failures_are_quarantined_row_by_row(tmp_path):
    rows = list(GOOD_ROWS)
    rows[1] = rows[1].replace("AAPL,", "aapl,", 1)  # row 2 fails the symbol pattern
    rows[11] = rows[11].replace(",T-1011,", ",T-1004,")  # rows 5 and 12 share a trade_id
    rows[12] = rows[12].replace(",75,", ",0,")  # row 13: zero size, within the tolerated 5%
    rows[13] = rows[13].replace(",@", ",X")  # row 14: unknown condition, a warning
    result = gate(tmp_path, rows, "rows")
    assert (result.published, result.quarantined, result.batch_rejected_by) == (17, 3, [])


def test_a_failing_sql_check_or_row_count_rejects_the_batch(tmp_path):
    rows = list(GOOD_ROWS)
    rows[14] = rows[14].replace("421.7900", "0.0000")  # a free trade: sql_checks.no_free_trades
    result = gate(tmp_path, rows, "free")
    assert (result.published, result.quarantined) == (0, 20)
    assert result.batch_rejected_by == ["sql_checks.no_free_trades"]
    result = gate(tmp_path, [], "empty")
    assert result.published == 0 and result.batch_rejected_by == ["batch.row_count"]
