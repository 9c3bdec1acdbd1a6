"""The ingest gate and the step clause (issue 25 item 3): the Celsius reading is quarantined by row, under its
clause, and everything else of the batch is published; at warning severity it is reported only."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.conftest import write
from tests.engines.test_step import CONTRACT, readings
from tests.gate.conftest import open_spec, query
from tscontract import load_contract
from tscontract.gate.ingest import ingest

NOW = datetime(2026, 7, 1, 12, tzinfo=UTC)


def gate(spec: str, contract_text: str, data, tmp_path):
    store = open_spec(spec)
    try:
        return ingest(load_contract(write(tmp_path, contract_text, "temp.yaml")), [data], store, now=NOW)
    finally:
        store.close()


def test_the_spike_is_quarantined_by_row_and_the_rest_published(tmp_path):
    spec = str(tmp_path / "warehouse.duckdb")
    text = CONTRACT.replace("STEP", "{max_mad: 6, window: 5, max_gap: 2h}")
    result = gate(spec, text, readings(tmp_path), tmp_path)
    assert (result.rows_in, result.published, result.quarantined) == (18, 17, 1)
    (row,) = query(spec, "SELECT _checks, _clauses, _record FROM airport_temperature__quarantine")
    assert json.loads(row[0]) == ["field.temp_f.step"]
    assert json.loads(row[1]) == ["step: {max_mad: 6, window: 5, max_gap: 2h}"]
    assert json.loads(row[2])["temp_f"] in (13.1, "13.1")


def test_a_warning_step_is_reported_and_nothing_quarantined(tmp_path):
    spec = str(tmp_path / "warehouse.duckdb")
    text = CONTRACT.replace("STEP", "{max_abs: 10, severity: warning}")
    result = gate(spec, text, readings(tmp_path), tmp_path)
    assert (result.published, result.quarantined) == (18, 0)
