"""What the gate reports without rejecting: warning-severity invariants, non-gating checks, backfills.

The bars are the vendor's half day after Thanksgiving (tests/gate/bars.py). One bar is a
block print (2.5M shares in a minute): a contract may say volumes that high deserve a look
without refusing them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tests.conftest import run_cli, write
from tests.gate.bars import AFTER_CLOSE, OHLCV, bar_at, contract_text, session_bars, write_bars, write_contract
from tests.gate.conftest import gate_into, query
from tscontract import load_contract, validate
from tscontract.contract.serialize import contract_to_json
from tscontract.errors import ContractError

CATALOG = OHLCV / "catalog.yaml"
SPIKE = "  - {clause: volume < 1000000, severity: warning, note: block prints are real but worth a look}\n"
FRESH = "freshness: {max_age: 15m}\n"
A_WEEK_LATER = datetime(2026, 12, 4, 21, 30, tzinfo=UTC)


def with_spike(text: str) -> str:
    return text.replace("  - volume >= 0\n", "  - volume >= 0\n" + SPIKE, 1)


@pytest.fixture
def spiked(tmp_path):
    bars = session_bars()
    block = bar_at(bars, "AAPL", "12:41")
    bars[bars.index(block)] = replace(block, volume=Decimal("2500000.0000"))
    return write_bars(tmp_path / "bars_block_print.csv", bars)


def gate(spec, contract_path, files, **kwargs):
    return gate_into(spec, contract_path, files, CATALOG, kwargs.pop("now", AFTER_CLOSE), **kwargs)


def options(store, now="2026-11-27T18:05:00Z"):
    return ["--store", store, "--catalog", CATALOG, "--now", now]


def without_msft_1120() -> list:
    return [b for b in session_bars() if not (b.symbol == "MSFT" and b.start.hour == 16 and b.start.minute == 20)]


# ---------------------------------------------------------------- warning-severity invariants


def test_a_warning_invariant_parses_with_its_severity(tmp_path):
    contract = load_contract(write(tmp_path, with_spike(contract_text()), "c.yaml"))
    spike = contract.invariants[3]
    assert (spike.text, spike.severity, spike.sql) == ("volume < 1000000", "warning", "volume < 1000000")
    assert {c.severity for i, c in enumerate(contract.invariants) if i != 3} == {"error"}
    assert contract_to_json(contract)["invariants"][3]["severity"] == "warning"
    shown = run_cli("show", tmp_path / "c.yaml")
    assert "volume < 1000000  ->  volume < 1000000 (severity: warning)" in shown.stdout


@pytest.mark.parametrize(
    ("written", "section", "message"),
    [
        ("{clause: volum < 1000000, severity: warning}", "invariants[3].clause", "unknown column 'volum'"),
        ("{clause: volume < 1000000, severity: info}", "invariants[3].severity", "'error' or 'warning'"),
        ("{clause: volume < 1000000, level: warning}", "invariants[3].level", "unknown key 'level'"),
        ("{severity: warning}", "invariants[3].clause", "missing required key 'clause'"),
        ("[volume, 1000000]", "invariants[3]", "a clause as text, or {clause: ..., severity: error|warning}"),
    ],
)
def test_a_malformed_invariant_mapping_is_an_error_at_its_position(tmp_path, written, section, message):
    text = contract_text().replace("  - volume >= 0\n", f"  - volume >= 0\n  - {written}\n", 1)
    line = text.splitlines().index(f"  - {written}") + 1
    with pytest.raises(ContractError) as caught:
        load_contract(write(tmp_path, text, "c.yaml"))
    assert caught.value.section == section and message in caught.value.message
    assert caught.value.location is not None and caught.value.location.line == line


def test_validate_reports_a_failing_warning_and_exits_0(tmp_path, spiked):
    contract = write(tmp_path, with_spike(contract_text()), "c.yaml")
    report = validate(contract, spiked, catalog=CATALOG, now=AFTER_CLOSE)
    spike = report.check("invariants[3]")
    assert (spike.status, spike.severity, spike.failed_rows) == ("failed", "warning", 1)
    assert report.passed
    text = run_cli("validate", contract, spiked, "--catalog", CATALOG, "--now", "2026-11-27T18:05:00Z")
    assert text.returncode == 0, text.stdout
    assert "failed (warning)" in text.stdout and "volume=2500000.0000" in text.stdout


def test_the_gate_publishes_a_row_that_fails_a_warning_and_reports_it(store_spec, tmp_path, spiked):
    contract = write(tmp_path, with_spike(contract_text()), "c.yaml")
    result = gate(store_spec, contract, [spiked])
    assert (result.published, result.quarantined, result.clean) == (420, 0, True)
    assert "invariants[3]" in result.reported and not result.row_failures
    assert query(store_spec, "SELECT count(*) FROM ohlcv_1m WHERE volume >= 1000000")[0][0] == 1
    summary = json.loads(query(store_spec, "SELECT checks FROM tscontract_runs")[0][0])
    assert summary["invariants[3]"] == {"status": "failed", "failed_rows": 1}


# ---------------------------------------------------------------- text mode shows every failed check


def test_text_ingest_shows_failed_checks_that_reject_nothing(tmp_path, spiked):
    """Nothing quarantined, exit 0, and still the warning and the gap are on the screen."""
    gap = write_bars(tmp_path / "bars_gap.csv", without_msft_1120())  # cadence fails: reported only
    contract = write(tmp_path, with_spike(contract_text()), "c.yaml")
    shown = run_cli("ingest", contract, gap, *options(tmp_path / "w.duckdb"))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "time.cadence" in shown.stdout and "gap_s=120.0" in shown.stdout
    assert "419 rows in, 419 published, 0 quarantined; failed, reported only: time.cadence" in shown.stdout
    warned = run_cli("ingest", contract, spiked, *options(tmp_path / "v.duckdb"))
    assert warned.returncode == 0 and "failed (warning)" in warned.stdout
    assert "failed, reported only: invariants[3]" in warned.stdout
    clean = run_cli("ingest", contract, write_bars(tmp_path / "clean.csv", session_bars()), *options(tmp_path / "c.db"))
    assert clean.returncode == 0 and "checks:" not in clean.stdout  # nothing failed: the summary line only


def test_json_ingest_lists_every_failed_check(tmp_path):
    gap = write_bars(tmp_path / "bars_gap.csv", without_msft_1120())
    contract = write_contract(tmp_path / "c.yaml")
    out = run_cli("ingest", contract, gap, *options(tmp_path / "w.duckdb"), "--format", "json")
    assert out.returncode == 0
    body = json.loads(out.stdout)
    failed = {c["id"]: c["status"] for c in body["validation"]["checks"] if c["status"] != "passed"}
    assert failed == {"time.cadence": "failed"} and body["reported"] == ["time.cadence"]


# ---------------------------------------------------------------- backfills


def test_a_backfill_reports_freshness_without_rejecting_and_the_run_log_says_so(store_spec, tmp_path):
    """A week later the half day is stale: rejected whole; as a backfill it is published."""
    contract = write_contract(tmp_path / "c.yaml", extra=FRESH)
    bars = write_bars(tmp_path / "bars_2026-11-27.csv", session_bars())
    live = gate(store_spec, contract, [bars], now=A_WEEK_LATER)
    assert live.batch_rejected_by == ["freshness"] and live.published == 0 and not live.backfill
    backfill = gate(store_spec, contract, [bars], now=A_WEEK_LATER, backfill=True)
    assert (backfill.published, backfill.quarantined, backfill.backfill) == (420, 0, True)
    assert backfill.reported == ["freshness"] and backfill.report.check("freshness").status == "failed"
    assert (backfill.attempt, backfill.retry_of) == (2, live.run_id)
    runs = query(store_spec, "SELECT backfill, batch_rejected, published FROM tscontract_runs ORDER BY attempt")
    assert runs == [(False, True, 0), (True, False, 420)]


def test_a_backfill_still_rejects_what_is_not_freshness(store_spec, tmp_path):
    bars = session_bars()
    broken = [*bars[:3], replace(bars[3], low=bars[3].high + 1), *bars[4:]]
    contract = write_contract(tmp_path / "c.yaml", extra=FRESH)
    result = gate(store_spec, contract, [write_bars(tmp_path / "b.csv", broken)], now=A_WEEK_LATER, backfill=True)
    assert (result.published, result.quarantined) == (419, 1)
    assert result.row_failures == {"invariants[0]": 1, "invariants[1]": 1}  # low above high: both ranges


def test_cli_backfill_flag_text_and_json(tmp_path):
    contract = write_contract(tmp_path / "c.yaml", extra=FRESH)
    bars = write_bars(tmp_path / "bars.csv", session_bars())
    week_later = "2026-12-04T21:30:00Z"
    live = run_cli("ingest", contract, bars, *options(tmp_path / "w.duckdb", week_later))
    assert live.returncode == 1 and "batch rejected by freshness" in live.stdout
    backfill = run_cli("ingest", contract, bars, *options(tmp_path / "w.duckdb", week_later), "--backfill")
    assert backfill.returncode == 0, backfill.stdout
    assert "(attempt 2, after run-" in backfill.stdout
    assert "failed, reported only: freshness [backfill: freshness reported, not gating]" in backfill.stdout
    other = run_cli("ingest", contract, bars, *options(tmp_path / "x.duckdb", week_later), "--backfill", "-f", "json")
    body = json.loads(other.stdout)
    assert (body["backfill"], body["reported"], body["published"]) == (True, ["freshness"], 420)
