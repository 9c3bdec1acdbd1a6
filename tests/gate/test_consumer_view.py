"""What a store publishes validates against its contract; a store with nothing published is stale.

The consumer view ``<contract>`` holds the contract's columns only (the bookkeeping columns
``_run_id`` and ``_ingested_at`` stay in ``<contract>__published``), so ``validate CONTRACT
warehouse.duckdb::<contract>`` passes ``schema.strict`` on what the gate published.
"""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tests.gate.bars import AFTER_CLOSE as NOW
from tests.gate.bars import OHLCV, session_bars, write_bars, write_contract
from tests.gate.conftest import open_spec
from tscontract import load_catalog, load_contract
from tscontract.gate.ingest import ingest
from tscontract.gate.store import BOOKKEEPING_COLUMNS

CATALOG = OHLCV / "catalog.yaml"
AFTER_CLOSE = "2026-11-27T18:05:00Z"
FRESH = "freshness: {max_age: 15m}\n"


def failed(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"] if c["status"] != "passed"}


def test_validate_reads_the_consumer_view_of_a_duckdb_store(tmp_path):
    contract = write_contract(tmp_path / "c.yaml", extra=FRESH)
    bars = write_bars(tmp_path / "bars_2026-11-27.csv", session_bars())
    store = tmp_path / "warehouse.duckdb"
    done = run_cli("ingest", contract, bars, "--store", store, "--catalog", CATALOG, "--now", AFTER_CLOSE)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = run_cli(
        "validate", contract, f"{store}::ohlcv_1m", "--catalog", CATALOG, "--now", AFTER_CLOSE, "--format", "json"
    )
    assert shown.returncode == 0, shown.stdout
    report = json.loads(shown.stdout)
    assert report["rows"] == 420 and failed(report) == {}
    assert report["data"] == [f"{store}::ohlcv_1m"]
    # the bookkeeping is still there for lineage, beside the view
    raw = run_cli("validate", contract, f"{store}::ohlcv_1m__published", "--catalog", CATALOG, "--now", AFTER_CLOSE,
                  "--format", "json")  # fmt: skip
    strict = next(c for c in json.loads(raw.stdout)["checks"] if c["id"] == "schema.strict")
    assert strict["status"] == "failed" and strict["examples"] == [{"unknown": sorted(BOOKKEEPING_COLUMNS)}]
    # and the same data, read by check-store, passes as well
    checked = run_cli("check-store", contract, store, "--catalog", CATALOG, "--now", AFTER_CLOSE, "--format", "json")
    assert checked.returncode == 0 and failed(json.loads(checked.stdout)) == {}


def test_a_contract_version_that_adds_a_field_adds_it_to_the_store(tmp_path):
    before = write_contract(tmp_path / "v310.yaml", with_seq=False)
    after = write_contract(tmp_path / "v320.yaml", version="3.2.0")
    store = tmp_path / "warehouse.duckdb"
    bars = session_bars()
    old = write_bars(tmp_path / "old.csv", bars[:20])
    old.write_text("\n".join(_drop_column(line, 9) for line in old.read_text().splitlines()) + "\n")
    common = ["--store", store, "--catalog", CATALOG, "--now", AFTER_CLOSE]
    assert run_cli("ingest", before, old, *common).returncode == 0
    assert run_cli("ingest", after, write_bars(tmp_path / "new.csv", bars[20:]), *common).returncode == 0
    published = open_spec(str(store))
    try:
        assert published.query("SELECT count(*), count(vendor_seq) FROM ohlcv_1m") == [(420, 400)]
    finally:
        published.close()


def _drop_column(line: str, index: int) -> str:
    cells = line.split(",")
    return ",".join(cells[:index] + cells[index + 1 :])


def test_check_store_fails_freshness_when_the_only_batch_was_rejected(store_spec, tmp_path):
    """Nothing published is nothing fresh: the rejected half day leaves the consumer view empty."""
    before = write_contract(tmp_path / "v310.yaml", with_seq=False, extra=FRESH)  # the file has vendor_seq: drift
    bars = write_bars(tmp_path / "bars_2026-11-27.csv", session_bars())
    store = open_spec(store_spec)
    try:
        rejected = ingest(load_contract(before), [bars], store, catalog=load_catalog(CATALOG), now=NOW)
    finally:
        store.close()
    assert rejected.batch_rejected_by == ["schema.strict"] and rejected.published == 0
    checked = run_cli("check-store", before, store_spec, "--catalog", CATALOG, "--now", AFTER_CLOSE, "--format", "json")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    freshness = next(c for c in report["checks"] if c["id"] == "freshness")
    assert report["rows"] == 0 and freshness["status"] == "failed"


def test_check_store_reports_a_catalog_series_that_never_arrived(tmp_path):
    """A batch may hold some series; the store holds all of them: a catalog series with no point in
    the store fails freshness there, named, while the batch alone passes."""
    contract = write_contract(tmp_path / "c.yaml", extra=FRESH)
    only_aapl = [bar for bar in session_bars() if bar.symbol == "AAPL"]
    bars = write_bars(tmp_path / "bars_2026-11-27.csv", only_aapl)
    store = tmp_path / "warehouse.duckdb"
    common = ["--catalog", CATALOG, "--now", AFTER_CLOSE]
    assert run_cli("ingest", contract, bars, "--store", store, *common).returncode == 0
    batch = json.loads(run_cli("validate", contract, bars, *common, "--format", "json").stdout)
    assert failed(batch) == {}
    checked = run_cli("check-store", contract, store, *common, "--format", "json")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert failed(report) == {"freshness": "failed"}
    freshness = next(c for c in report["checks"] if c["id"] == "freshness")
    assert freshness["failed_rows"] == 1 and "1 never arrived" in freshness["message"]
    assert [(e["symbol"], e["newest"]) for e in freshness["examples"]] == [("MSFT", None)]
