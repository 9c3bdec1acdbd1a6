"""A batch rejected whole is gated again once its cause is fixed; a published one never twice.

The story, on a DuckDB file and on a real PostgreSQL server: the vendor starts sending its
message sequence number (a new column) before the contract declares it, so the half-day file
fails ``schema.strict`` and is rejected whole. Contract 3.2.0 declares the column; the same
file, gated again, is the run's second attempt and is published.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.conftest import run_cli
from tests.gate.bars import AFTER_CLOSE, OHLCV, session_bars, write_bars, write_contract
from tests.gate.conftest import gate_into, open_spec, query
from tscontract import load_catalog, load_contract
from tscontract.gate.ingest import ingest

CATALOG = OHLCV / "catalog.yaml"


def gate(spec, contract_path, files, **kwargs):
    return gate_into(spec, contract_path, files, CATALOG, kwargs.pop("now", AFTER_CLOSE), **kwargs)


@pytest.fixture
def drift(tmp_path):
    """The vendor's file with the new column, the contract before it and the fixed contract."""
    return {
        "file": write_bars(tmp_path / "bars_2026-11-27.csv", session_bars()),
        "old": write_contract(tmp_path / "v310.yaml", with_seq=False),
        "fixed": write_contract(tmp_path / "v320.yaml", version="3.2.0"),
    }


def test_a_batch_rejected_whole_is_gated_again_after_the_contract_is_fixed(store_spec, drift):
    rejected = gate(store_spec, drift["old"], [drift["file"]])
    assert rejected.status == "committed" and rejected.batch_rejected_by == ["schema.strict"]
    assert (rejected.published, rejected.quarantined, rejected.attempt, rejected.retry_of) == (0, 420, 1, None)
    # the same bytes, the same contract: still nothing it could publish, so it runs (and fails) again
    again = gate(store_spec, drift["old"], [drift["file"]])
    assert again.status == "committed" and again.published == 0
    assert (again.attempt, again.retry_of) == (2, rejected.run_id)

    fixed = gate(store_spec, drift["fixed"], [drift["file"]])
    assert (fixed.status, fixed.published, fixed.quarantined) == ("committed", 420, 0)
    assert (fixed.attempt, fixed.retry_of, fixed.version) == (3, again.run_id, "3.2.0")
    assert query(store_spec, "SELECT count(*), min(vendor_seq), max(vendor_seq) FROM ohlcv_1m")[0] == (420, 1001, 1420)

    # published once: from now on the file is a duplicate of the run that published it, whatever the contract
    for contract in (drift["fixed"], drift["old"]):
        duplicate = gate(store_spec, contract, [drift["file"]])
        assert (duplicate.status, duplicate.run_id, duplicate.attempt) == ("duplicate", fixed.run_id, 3)
    runs = query(
        store_spec,
        "SELECT attempt, retry_of, version, batch_rejected, published, quarantined FROM tscontract_runs "
        "ORDER BY attempt",
    )
    assert runs == [
        (1, None, "3.1.0", True, 0, 420),
        (2, rejected.run_id, "3.1.0", True, 0, 420),
        (3, again.run_id, "3.2.0", False, 420, 0),
    ]
    assert query(store_spec, "SELECT count(*) FROM ohlcv_1m__published")[0][0] == 420


def test_a_batch_that_published_some_rows_is_never_gated_again(store_spec, drift, tmp_path):
    bars = session_bars()
    broken = [*bars[:10], replace(bars[10], low=bars[10].high + 1), *bars[11:]]
    path = write_bars(tmp_path / "one_bad_bar.csv", broken)  # low above high: one row quarantined
    first = gate(store_spec, drift["fixed"], [path])
    assert (first.published, first.quarantined) == (419, 1)
    again = gate(store_spec, drift["fixed"], [path])
    assert (again.status, again.run_id) == ("duplicate", first.run_id)
    assert query(store_spec, "SELECT count(*) FROM tscontract_runs")[0][0] == 1


def test_two_writers_racing_on_the_second_attempt_publish_once(store_spec, drift):
    """Both saw attempt 1 rejected; the loser's commit of attempt 2 hits UNIQUE (contract, input_hash, attempt)."""
    rejected = gate(store_spec, drift["old"], [drift["file"]])
    assert rejected.published == 0
    store = open_spec(store_spec)
    looked = []
    real_prior = store.prior_runs

    def prior_runs_during_the_race(contract, input_hash):
        looked.append(input_hash)
        if len(looked) == 1:  # the winner commits attempt 2 between the loser's look and its commit
            stale = real_prior(contract, input_hash)
            assert gate(store_spec, drift["fixed"], [drift["file"]]).attempt == 2
            return stale
        return real_prior(contract, input_hash)

    store.prior_runs = prior_runs_during_the_race
    try:
        raced = ingest(
            load_contract(drift["fixed"]), [drift["file"]], store, catalog=load_catalog(CATALOG), now=AFTER_CLOSE
        )
    finally:
        store.close()
    winner = query(store_spec, "SELECT run_id FROM tscontract_runs WHERE attempt = 2")[0][0]
    assert (raced.status, raced.run_id, raced.attempt) == ("duplicate", winner, 2)
    assert query(store_spec, "SELECT count(*) FROM ohlcv_1m__published")[0][0] == 420
    assert query(store_spec, "SELECT count(*) FROM tscontract_runs")[0][0] == 2


def _old_store(spec: str, contract) -> None:
    """A store as tscontract wrote it before attempts: UNIQUE (contract, input_hash), a view with bookkeeping."""
    store = open_spec(spec)
    try:
        store.ensure_schema(contract)
        text = "TEXT"  # VARCHAR in DuckDB
        for statement in (
            "DROP TABLE tscontract_runs",
            f"CREATE TABLE tscontract_runs (run_id {text} PRIMARY KEY, contract {text}, version {text}, "
            f"input_hash {text}, inputs {text}, source_id {text}, transform_version {text}, started_at TIMESTAMPTZ, "
            "finished_at TIMESTAMPTZ, rows_in BIGINT, published BIGINT, quarantined BIGINT, batch_rejected "
            f"BOOLEAN, checks {text}, UNIQUE (contract, input_hash))",
            "INSERT INTO tscontract_runs VALUES ('run-old-1', 'ohlcv_1m', '3.0.0', 'somehash', '[]', 'vendor-x', "
            "NULL, '2026-11-20 21:00:00+00', '2026-11-20 21:00:01+00', 5, 5, 0, FALSE, '{}')",
            "DROP VIEW ohlcv_1m",
            "CREATE VIEW ohlcv_1m AS SELECT * FROM ohlcv_1m__published",
        ):
            _execute(store, statement)
    finally:
        store.close()


def _execute(store, statement: str) -> None:
    if hasattr(store, "path"):  # DuckDB
        store.con.execute(statement)
    else:
        with store.con.cursor() as cur:
            cur.execute(statement)
        store.con.commit()


def test_a_store_written_before_attempts_is_upgraded_in_place(store_spec, drift):
    contract = load_contract(drift["fixed"])
    _old_store(store_spec, contract)
    assert "_run_id" in [r[0] for r in query(store_spec, _VIEW_COLUMNS)]
    rejected = gate(store_spec, drift["old"], [drift["file"]])
    fixed = gate(store_spec, drift["fixed"], [drift["file"]])
    assert (rejected.attempt, fixed.attempt, fixed.published) == (1, 2, 420)
    runs = query(store_spec, "SELECT run_id, attempt, backfill FROM tscontract_runs ORDER BY started_at")
    assert runs == [("run-old-1", 1, None), (rejected.run_id, 1, False), (fixed.run_id, 2, False)]
    # the consumer view is rebuilt with the contract's columns only
    assert [r[0] for r in query(store_spec, _VIEW_COLUMNS)] == list(contract.fields)


_VIEW_COLUMNS = (
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'ohlcv_1m' ORDER BY ordinal_position"
)


def test_cli_regate_shows_the_attempt_and_the_run_before(tmp_path, drift):
    store = tmp_path / "w.duckdb"
    common = ["--store", store, "--catalog", CATALOG, "--now", "2026-11-27T18:05:00Z"]
    first = run_cli("ingest", drift["old"], drift["file"], *common)
    assert first.returncode == 1 and "batch rejected by schema.strict" in first.stdout
    second = run_cli("ingest", drift["fixed"], drift["file"], *common, "--format", "json")
    assert second.returncode == 0, second.stderr
    body = json.loads(second.stdout)
    assert (body["attempt"], body["published"]) == (2, 420) and body["retry_of"].startswith("run-20261127T180500-")
    third = run_cli("ingest", drift["fixed"], drift["file"], *common)
    assert third.returncode == 0 and f"already ingested as {body['run_id']}" in third.stdout
