"""Malformed input rows at the gate: quarantined with their reason, never lost."""

from __future__ import annotations

import json

from tests.engines.conftest import OHLCV
from tests.engines.csv_fixtures import json_lines, vendor_export
from tests.gate.test_ingest import gate, query


def test_ingest_quarantines_a_malformed_row_with_its_reason_nothing_lost(store_spec, tmp_path):
    vendor = vendor_export(tmp_path / "bars_20261130.csv")
    result = gate(store_spec, OHLCV, [vendor.path], reason="late_trades")
    assert not result.batch_rejected_by
    assert result.rows_in == vendor.builder.rows  # every row of the file: none dropped as a comment or a bad line
    assert result.published + result.quarantined == vendor.builder.rows
    assert result.row_failures == {"catalog.series": 2, "source.rows": 3, "time.session": 2}
    quarantine = query(store_spec, "SELECT _row, _checks, _clauses, _record FROM ohlcv_1m__quarantine ORDER BY _row")
    malformed = {
        row: (json.loads(checks), json.loads(clauses), json.loads(record))
        for row, checks, clauses, record in quarantine
        if "source.rows" in json.loads(checks)
    }
    assert malformed == {
        w.row: (["source.rows"], [f"line {w.line} has {n} fields, the header has 13"], {"_text": w.text})
        for w, n in zip(vendor.malformed, (2, 14, 3), strict=True)
    }
    odd = {row for row, checks, _, _ in quarantine if "catalog.series" in json.loads(checks)}
    assert odd == {vendor.hash_symbol.row, vendor.single_quoted.row}  # kept as written, rejected by the catalog
    published = query(store_spec, "SELECT count(*) FROM ohlcv_1m__published")[0][0]
    assert published == result.published == vendor.builder.rows - 5
    run = query(store_spec, "SELECT rows_in, published, quarantined FROM tscontract_runs")[0]
    assert tuple(run) == (vendor.builder.rows, result.published, result.quarantined)


def test_ingest_quarantines_a_json_line_with_a_key_given_twice(tmp_path):
    lines = json_lines()
    lines[5] = lines[5][:-1] + ', "volume": 0}'
    path = tmp_path / "bars.jsonl"
    path.write_text("\n".join(lines) + "\n")
    spec = str(tmp_path / "warehouse.duckdb")
    result = gate(spec, OHLCV, [path], reason="late_trades")
    assert (result.published, result.quarantined) == (len(lines) - 1, 1)
    row, checks, clauses, record = query(spec, "SELECT _row, _checks, _clauses, _record FROM ohlcv_1m__quarantine")[0]
    assert (row, json.loads(checks), json.loads(clauses)) == (
        6,
        ["source.rows"],
        ['key "volume" appears more than once'],
    )
    assert json.loads(record) == {"_text": lines[5]}
