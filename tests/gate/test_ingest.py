"""The ingest gate end to end, on a DuckDB file and on a real PostgreSQL server."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

from tests.conftest import run_cli, write
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tests.gate.conftest import gate_into, open_spec, query
from tscontract import load_catalog, load_contract
from tscontract.gate.ingest import ingest


def gate(spec, dataset, files, **kwargs):
    now = kwargs.pop("now", NOW)
    return gate_into(spec, dataset / "contract.yaml", files, dataset / "catalog.yaml", now, **kwargs)


def test_good_batch_published_latest_view_runs_and_correction_log(store_spec):
    result = gate(store_spec, OHLCV, [OHLCV / "data" / "good.csv"], reason="late_trades")
    bars = len((OHLCV / "data" / "good.csv").read_text().splitlines()) - 1  # one of them a restatement
    assert (result.status, result.rows_in, result.published, result.quarantined) == ("committed", bars, bars, 0)
    assert query(store_spec, "SELECT count(*) FROM ohlcv_1m__published")[0][0] == bars
    assert query(store_spec, "SELECT count(*) FROM ohlcv_1m")[0][0] == bars - 1  # latest revision per key
    restated = query(
        store_spec,
        "SELECT close, revision FROM ohlcv_1m WHERE symbol = 'AAPL' AND bar_start = '2026-11-30 14:42:00+00'",
    )
    assert [(str(c), r) for c, r in restated] == [("228.89000000", 1)]
    runs = query(
        store_spec, "SELECT run_id, rows_in, published, quarantined, batch_rejected, input_hash FROM tscontract_runs"
    )
    assert len(runs) == 1 and runs[0][0] == result.run_id and runs[0][1:5] == (bars, bars, 0, False)
    # provenance: the gate stamps its run id on every published row
    assert query(store_spec, "SELECT count(DISTINCT ingest_run_id), min(ingest_run_id) FROM ohlcv_1m__published")[
        0
    ] == (1, result.run_id)
    log = query(
        store_spec, "SELECT old_revision, new_revision, reason, who, old_values, new_values FROM tscontract_corrections"
    )
    assert len(log) == 1
    old_rev, new_rev, reason, who, old, new = log[0]
    assert (old_rev, new_rev, reason, who) == (0, 1, "late_trades", "vendor-x")
    assert json.loads(old)["close"] in (228.87, "228.87000000") and json.loads(new)["revision"] == 1


def test_same_file_twice_is_idempotent(store_spec):
    first = gate(store_spec, SENSOR, [SENSOR / "data" / "good.csv"])
    again = gate(store_spec, SENSOR, [SENSOR / "data" / "good.csv"])
    assert first.status == "committed" and again.status == "duplicate" and again.run_id == first.run_id
    assert query(store_spec, "SELECT count(*) FROM plant_sensor_reading__published")[0][0] == 96
    assert query(store_spec, "SELECT count(*) FROM tscontract_runs")[0][0] == 1


def test_bad_rows_quarantined_with_reasons_and_counts_add_up(store_spec, tmp_path):
    # bad.csv without its degF row: a unit mismatch would reject the whole batch (next test)
    lines = [line for line in (SENSOR / "data" / "bad.csv").read_text().splitlines() if ",degF," not in line]
    result = gate(store_spec, SENSOR, [write(tmp_path, "\n".join(lines) + "\n", "bad_rows.csv")])
    assert result.rows_in == 39 and result.published + result.quarantined == 39
    assert not result.batch_rejected_by
    rows = query(store_spec, "SELECT _row, _checks, _clauses, _record FROM plant_sensor_reading__quarantine")
    by_ts = {}
    for _, checks, clauses, record in rows:
        by_ts.setdefault(json.loads(record)["event_ts"], []).append((json.loads(checks), json.loads(clauses)))
    checks, clauses = by_ts["2026-11-30T11:55:20.000Z"][0]  # T-204: value null with quality good
    assert checks == ["invariants[0]"] and clauses == ["value is null only when quality = bad"]
    assert by_ts["2026-11-30T12:00:30.000Z"][0][0] == ["catalog.calibration"]
    assert by_ts["2026-11-30T11:56:40.000"][0][0] == ["time.timezone"]
    assert [c for c, _ in by_ts["2026-11-30T11:59:00.000Z"]] == [["key.unique"], ["key.unique"]]
    assert (result.published, result.quarantined) == (29, 10)
    published = query(store_spec, "SELECT count(*) FROM plant_sensor_reading__published")[0][0]
    quarantined = query(store_spec, "SELECT count(*) FROM plant_sensor_reading__quarantine")[0][0]
    assert (published, quarantined) == (29, 10)
    # cadence is reported, never a reason to reject a reading that exists
    assert all("time.cadence" not in c for entries in by_ts.values() for c, _ in entries)


def test_unit_mismatch_rejects_the_whole_batch(store_spec):
    result = gate(store_spec, SENSOR, [SENSOR / "data" / "bad_kpa.csv"])
    assert set(result.batch_rejected_by) == {"invariants[2]", "field.unit.constraint"}
    assert (result.published, result.quarantined) == (0, 96)
    flags = query(store_spec, "SELECT DISTINCT _batch_level FROM plant_sensor_reading__quarantine")
    assert flags == [(True,)]
    assert query(store_spec, "SELECT count(*) FROM plant_sensor_reading__published")[0][0] == 0


def restatement(tmp_path, *, revision=1, reason="venue_correction", bar="2026-11-30T14:31:00.000Z", close="229.90"):
    header = (
        "symbol,bar_start,open,high,low,close,volume,trade_count,adjusted,source_id,ingest_run_id,"
        "transform_version,revision,revision_reason"
    )
    line = f"AAPL,{bar},229.65,229.95,229.52,{close},34143.0000,275,false,vendor-x,run-2,1.0.0,{revision},{reason}"
    return write(tmp_path, f"{header}\n{line}\n", f"restate_{revision}_{reason}_{bar[11:13]}.csv")


def test_revision_policy(store_spec, tmp_path):
    gate(store_spec, OHLCV, [OHLCV / "data" / "good.csv"], reason="late_trades")
    ok = gate(store_spec, OHLCV, [restatement(tmp_path)])
    assert (ok.published, ok.corrections) == (1, 1)
    # consumers read the restated close exactly as the restatement file wrote it (229.90, good.csv has 229.82)
    bar = "symbol='AAPL' AND bar_start='2026-11-30 14:31:00+00'"
    assert query(store_spec, f"SELECT close, revision FROM ohlcv_1m WHERE {bar}") == [(Decimal("229.90000000"), 1)]
    assert query(store_spec, f"SELECT close FROM ohlcv_1m__published WHERE {bar} ORDER BY revision") == [
        (Decimal("229.82000000"),),
        (Decimal("229.90000000"),),
    ]
    log = json.loads(run_cli("corrections", store_spec, "--format", "json").stdout)["corrections"]
    entry = next(e for e in log if json.loads(e["key"]) == {"symbol": "AAPL", "bar_start": "2026-11-30T14:31:00Z"})
    assert entry["corrected_at"] == "2026-11-30T21:05:00Z"  # RFC 3339, as every instant in the log
    old, new = json.loads(entry["old_values"]), json.loads(entry["new_values"])
    assert (old["bar_start"], old["close"], new["bar_start"], new["close"]) == (
        "2026-11-30T14:31:00Z",
        229.82,
        "2026-11-30T14:31:00Z",
        229.9,
    )
    bad_reason = gate(store_spec, OHLCV, [restatement(tmp_path, revision=2, reason="felt_like_it")])
    assert bad_reason.row_failures == {"revision.reason": 1}
    skipped = gate(store_spec, OHLCV, [restatement(tmp_path, revision=3)])
    assert skipped.row_failures == {"revision.sequence": 1}
    replay = gate(store_spec, OHLCV, [restatement(tmp_path, revision=0, close="229.91")])
    assert replay.row_failures == {"key.published": 1}
    # 5 trading days: a bar restated eight sessions later (Thanksgiving and a weekend in between) is too late
    late = gate(store_spec, OHLCV, [restatement(tmp_path, revision=2)], now=datetime(2026, 12, 10, 15, tzinfo=UTC))
    assert late.row_failures == {"revision.window": 1}
    on_time = gate(
        store_spec,
        OHLCV,
        [restatement(tmp_path, revision=2, close="229.92", reason="late_trades")],
        now=datetime(2026, 12, 4, 15, tzinfo=UTC),
    )
    assert on_time.published == 1
    log = query(store_spec, "SELECT new_revision, reason FROM tscontract_corrections ORDER BY new_revision, reason")
    assert log == [(1, "late_trades"), (1, "venue_correction"), (2, "late_trades")]


def test_only_named_parties_may_restate(tmp_path):
    text = (
        (OHLCV / "contract.yaml")
        .read_text()
        .replace(
            "  notification: correction log topic", "  notification: correction log topic\n  who: [market-data-ops]"
        )
    )
    contract = load_contract(write(tmp_path, text, "who.yaml"))
    spec = str(tmp_path / "w.duckdb")
    store = open_spec(spec)
    try:
        ingest(
            contract,
            [OHLCV / "data" / "good.csv"],
            store,
            catalog=load_catalog(OHLCV / "catalog.yaml"),
            now=NOW,
            who="market-data-ops",
            reason="late_trades",
        )
        vendor = ingest(
            contract, [restatement(tmp_path)], store, catalog=load_catalog(OHLCV / "catalog.yaml"), now=NOW
        )  # the row's source_id, vendor-x, is not listed
        ops = ingest(
            contract,
            [restatement(tmp_path, reason="late_trades")],
            store,
            catalog=load_catalog(OHLCV / "catalog.yaml"),
            now=NOW,
            who="market-data-ops",
        )
    finally:
        store.close()
    assert vendor.row_failures == {"revision.who": 1}
    assert ops.published == 1 and ops.corrections == 1


def test_restatements_rejected_when_policy_forbids(store_spec, tmp_path):
    text = (OHLCV / "contract.yaml").read_text().replace("allowed: true", "allowed: false")
    contract = write(tmp_path, text, "raw_counts.yaml")
    store = open_spec(store_spec)
    try:
        result = ingest(
            load_contract(contract),
            [restatement(tmp_path)],
            store,
            catalog=load_catalog(OHLCV / "catalog.yaml"),
            now=NOW,
        )
    finally:
        store.close()
    assert result.published == 0 and "revision.allowed" in result.row_failures


def test_cli_ingest_corrections_and_check_store(tmp_path):
    store = tmp_path / "w.duckdb"
    common = ["--catalog", OHLCV / "catalog.yaml", "--now", "2026-11-30T21:05:00Z"]
    good = run_cli(
        "ingest",
        OHLCV / "contract.yaml",
        OHLCV / "data" / "good.csv",
        "--store",
        store,
        "--reason",
        "late_trades",
        *common,
        "--format",
        "json",
    )
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["published"] == len((OHLCV / "data" / "good.csv").read_text().splitlines()) - 1
    bad = run_cli("ingest", OHLCV / "contract.yaml", OHLCV / "data" / "bad.csv", "--store", store, *common)
    assert bad.returncode == 1 and "quarantined" in bad.stdout
    log = run_cli("corrections", store, "--format", "json")
    assert json.loads(log.stdout)["corrections"][0]["new_revision"] == 1
    fresh = run_cli("check-store", OHLCV / "contract.yaml", store, *common)
    assert fresh.returncode == 0, fresh.stdout
    stale_contract = write(tmp_path, (OHLCV / "contract.yaml").read_text() + "freshness: {max_age: 15m}\n", "c.yaml")
    stale = run_cli(
        "check-store",
        stale_contract,
        store,
        "--catalog",
        OHLCV / "catalog.yaml",
        "--now",
        "2026-12-01T15:00:00Z",
        "--format",
        "json",
    )
    assert stale.returncode == 1
    assert next(c for c in json.loads(stale.stdout)["checks"] if c["id"] == "freshness")["status"] == "failed"
    nostore = run_cli("ingest", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "--store", tmp_path / "x.txt")
    assert nostore.returncode == 2 and "a store is a .duckdb file or a postgresql:// URL" in nostore.stderr


def test_a_concurrent_writer_of_the_same_file_is_a_duplicate_not_an_error(store_spec):
    """Two gates race with the same file: the loser's commit hits UNIQUE (contract, input_hash, attempt)."""
    first = gate(store_spec, SENSOR, [SENSOR / "data" / "good.csv"])
    store = open_spec(store_spec)
    looked = []
    real_prior = store.prior_runs

    def prior_runs_after_the_race(contract, input_hash):
        looked.append(input_hash)
        return [] if len(looked) == 1 else real_prior(contract, input_hash)  # the race: first look sees nothing

    store.prior_runs = prior_runs_after_the_race
    try:
        raced = ingest(
            load_contract(SENSOR / "contract.yaml"),
            [SENSOR / "data" / "good.csv"],
            store,
            catalog=load_catalog(SENSOR / "catalog.yaml"),
            now=NOW,
        )
    finally:
        store.close()
    assert raced.status == "duplicate" and raced.run_id == first.run_id and len(looked) == 2
    assert query(store_spec, "SELECT count(*) FROM plant_sensor_reading__published")[0][0] == 96
    assert query(store_spec, "SELECT count(*) FROM tscontract_runs")[0][0] == 1
