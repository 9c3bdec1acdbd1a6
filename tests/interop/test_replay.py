"""Replay old Avro files through the new reader, then validate against the new contract."""

from __future__ import annotations

import json

import fastavro

from tests.conftest import run_cli, write
from tests.engines.conftest import NOW, OHLCV, OHLCV_CLI_OPTIONS
from tscontract import load_contract, parse_contract
from tscontract.interop.exports import export
from tscontract.interop.exports._records import python_record, read_csv_rows
from tscontract.interop.replay import replay

TRADES = "  trade_count: {type: int64, nullable: true}"


def history_file(tmp_path, contract, csv, name):
    """An Avro file as the old writer wrote it: the old contract's schema, the good rows."""
    schema = fastavro.parse_schema(json.loads(export("avro", contract).artifacts[0].content))
    path = tmp_path / name
    with path.open("wb") as handle:
        fastavro.writer(handle, schema, [python_record(contract, row) for row in read_csv_rows(csv)])
    return path


def new_version(tmp_path, replacement: tuple[str, str], version: str):
    text = (OHLCV / "contract.yaml").read_text().replace(*replacement).replace("version: 3.1.0", f"version: {version}")
    return write(tmp_path, text, f"v{version}.yaml")


def test_compatible_reader_reads_old_files_and_validates(tmp_path):
    old = load_contract(OHLCV / "contract.yaml")
    files = [history_file(tmp_path, old, OHLCV / "data" / "good.csv", "2026-11-30.avro")]
    newer = new_version(
        tmp_path, (TRADES, TRADES + "\n  vwap: {type: decimal(18,8), unit: quote_currency, nullable: true}"), "3.2.0"
    )
    result = replay(load_contract(newer), files, catalog=None, now=NOW)
    (item,) = result.files
    assert item.error is None and item.rows == 781
    failing = {c.id for c in item.report.checks if c.status == "failed"}
    assert failing == set()  # vwap is null in old records: allowed
    cli = run_cli("replay", files[0], "--reader", newer, *OHLCV_CLI_OPTIONS)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert json.loads(cli.stdout)["files"][0]["rows"] == 781


def test_reader_that_cannot_resolve_old_data_is_reported_per_file(tmp_path):
    old = load_contract(OHLCV / "contract.yaml")
    files = [history_file(tmp_path, old, OHLCV / "data" / "good.csv", "old.avro")]
    # a new non-nullable field without a default: old records cannot be read (not BACKWARD compatible)
    newer = new_version(tmp_path, (TRADES, TRADES + "\n  venue: {type: string, nullable: false}"), "4.0.0")
    result = replay(load_contract(newer), files, now=NOW)
    assert not result.ok and "cannot be read with the new reader" in result.files[0].error
    cli = run_cli("replay", files[0], "--reader", newer)
    assert cli.returncode == 1 and "cannot be read with the new reader" in cli.stdout


def test_old_data_that_breaks_a_tightened_clause_fails_validation(tmp_path):
    old = load_contract(OHLCV / "contract.yaml")
    files = [history_file(tmp_path, old, OHLCV / "data" / "good.csv", "old.avro")]
    tightened = (
        (OHLCV / "contract.yaml")
        .read_text()
        .replace("  - volume >= 0", "  - volume >= 20000")
        .replace("version: 3.1.0", "version: 4.0.0")
    )
    result = replay(parse_contract(tightened, "v4.yaml"), files, now=NOW)
    check = result.files[0].report.check("invariants[2]")
    assert check.status == "failed" and check.failed_rows > 0 and check.clause == "volume >= 20000"
