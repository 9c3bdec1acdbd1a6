"""Repeated keys in one batch: every copy rejected, or one kept by the vendor's sequence number.

The vendor's half-day file (tests/gate/bars.py) ends with three resends, as the vendor sends them:
AAPL 10:05 corrected (a higher sequence number), MSFT 10:10 retransmitted with the sequence
number it had (a tie: which copy is right cannot be told), MSFT 11:00 resent with no sequence
number at all.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.conftest import run_cli, write
from tests.gate.bars import (
    AFTER_CLOSE,
    OHLCV,
    bar_at,
    contract_text,
    corrected,
    session_bars,
    write_bars,
    write_contract,
)
from tests.gate.conftest import gate_into, query
from tscontract import lint, load_contract, validate
from tscontract.contract.serialize import contract_to_json
from tscontract.errors import ContractError
from tscontract.evolution.diff import diff

CATALOG = OHLCV / "catalog.yaml"
KEEP_LAST = "duplicates: {keep: last, by: vendor_seq}\n"


@pytest.fixture
def resends(tmp_path):
    bars = session_bars()
    last = max(b.seq for b in bars)
    aapl, msft = bar_at(bars, "AAPL", "10:05"), bar_at(bars, "MSFT", "10:10")
    clean = write_bars(tmp_path / "resend_one.csv", [*bars, corrected(aapl, last + 1)])
    mixed = write_bars(tmp_path / "resends.csv", [*bars, corrected(aapl, last + 1), corrected(msft, msft.seq, "-0.02")])
    lines = mixed.read_text().splitlines()
    eleven = bar_at(bars, "MSFT", "11:00")
    no_seq = eleven.line().replace(f",{eleven.seq},", ",,")  # the vendor's resend without a sequence number
    mixed.write_text("\n".join([*lines, no_seq]) + "\n")
    return {"bars": bars, "aapl": aapl, "msft": msft, "last": last, "clean": clean, "mixed": mixed}


def gate(spec, contract_path, files):
    return gate_into(spec, contract_path, files, CATALOG, AFTER_CLOSE)


def quarantine(spec) -> dict[str, list[tuple[list[str], list[str]]]]:
    """Quarantined rows by 'symbol bar_start vendor_seq': their check ids and clauses."""
    found: dict[str, list[tuple[list[str], list[str]]]] = {}
    for checks, clauses, record in query(spec, "SELECT _checks, _clauses, _record FROM ohlcv_1m__quarantine"):
        row = json.loads(record)
        found.setdefault(f"{row['symbol']} {row['bar_start'][11:16]} {row['vendor_seq']}", []).append(
            (json.loads(checks), json.loads(clauses))
        )
    return found


def test_keep_last_publishes_the_vendors_correction_and_quarantines_the_copy_it_supersedes(
    store_spec, resends, tmp_path
):
    contract = write_contract(tmp_path / "c.yaml", extra=KEEP_LAST)
    result = gate(store_spec, contract, [resends["mixed"]])
    # 420 bars + 3 resends: AAPL's old copy superseded; both MSFT 10:10 copies tie; MSFT 11:00 has no sequence
    assert (result.rows_in, result.published, result.quarantined, result.superseded) == (423, 418, 5, 1)
    assert result.row_failures == {"duplicates": 1, "field.vendor_seq.nullable": 1, "key.unique": 4}
    assert not result.clean and result.duplicates == "duplicates: keep last by vendor_seq"
    aapl = resends["aapl"]
    published = query(
        store_spec,
        "SELECT close, vendor_seq FROM ohlcv_1m WHERE symbol = 'AAPL' AND bar_start = '2026-11-27 15:05:00+00'",
    )
    assert [(Decimal(c), s) for c, s in published] == [(aapl.close + Decimal("0.03"), resends["last"] + 1)]
    held = quarantine(store_spec)
    assert held[f"AAPL 15:05 {aapl.seq}"] == [
        (
            ["duplicates"],
            ["duplicates: keep last by vendor_seq (a copy of the key with a higher vendor_seq supersedes this one)"],
        )
    ]
    msft = resends["msft"]
    assert [checks for checks, _ in held[f"MSFT 15:10 {msft.seq}"]] == [["key.unique"], ["key.unique"]]
    # the copy without a sequence number cannot be ordered: neither copy of MSFT 11:00 is published
    original = bar_at(resends["bars"], "MSFT", "11:00")
    assert [checks for checks, _ in held[f"MSFT 16:00 {original.seq}"]] == [["key.unique"]]
    assert [checks for checks, _ in held["MSFT 16:00 None"]] == [["field.vendor_seq.nullable", "key.unique"]]
    (record,) = query(store_spec, "SELECT duplicates FROM tscontract_runs")[0]
    assert json.loads(record) == {"keep": "last", "by": "vendor_seq", "superseded": 1}


def test_keep_first_keeps_the_original(store_spec, resends, tmp_path):
    contract = write_contract(tmp_path / "c.yaml", extra="duplicates: {keep: first, by: vendor_seq}\n")
    result = gate(store_spec, contract, [resends["clean"]])
    assert (result.published, result.quarantined, result.superseded, result.clean) == (420, 1, 1, True)
    aapl = resends["aapl"]
    kept = query(
        store_spec, "SELECT vendor_seq FROM ohlcv_1m WHERE symbol = 'AAPL' AND bar_start = '2026-11-27 15:05:00+00'"
    )
    assert kept == [(aapl.seq,)]
    assert list(quarantine(store_spec)) == [f"AAPL 15:05 {resends['last'] + 1}"]


def test_without_the_section_every_copy_is_quarantined(store_spec, resends, tmp_path):
    contract = write_contract(tmp_path / "c.yaml")
    result = gate(store_spec, contract, [resends["clean"]])
    assert (result.published, result.quarantined, result.superseded, result.clean) == (419, 2, 0, False)
    assert result.row_failures == {"key.unique": 2} and result.duplicates is None
    assert query(store_spec, "SELECT duplicates FROM tscontract_runs") == [(None,)]


def test_validate_fails_only_the_copies_the_sequence_cannot_order(resends, tmp_path):
    keep_last = write_contract(tmp_path / "last.yaml", extra=KEEP_LAST)
    report = validate(keep_last, resends["mixed"], catalog=CATALOG, now=AFTER_CLOSE)
    unique = report.check("key.unique")
    assert unique.clause == "key: [symbol, bar_start, revision]; duplicates: keep last by vendor_seq"
    assert (unique.status, unique.failed_rows) == ("failed", 4)  # the tie and the copy without a sequence
    assert {e["bar_start"] for e in unique.examples} == {"2026-11-27T15:10:00Z", "2026-11-27T16:00:00Z"}
    assert (
        validate(keep_last, resends["clean"], catalog=CATALOG, now=AFTER_CLOSE).check("key.unique").status == "passed"
    )
    plain = write_contract(tmp_path / "plain.yaml")
    assert validate(plain, resends["clean"], catalog=CATALOG, now=AFTER_CLOSE).check("key.unique").failed_rows == 2


def test_spark_resolves_the_same_copies(spark, resends, tmp_path):  # the shared session (tests/conftest.py)
    keep_last = write_contract(tmp_path / "last.yaml", extra=KEEP_LAST)
    duck = validate(keep_last, resends["mixed"], catalog=CATALOG, now=AFTER_CLOSE, engine="duckdb")
    on_spark = validate(keep_last, resends["mixed"], catalog=CATALOG, now=AFTER_CLOSE, engine="spark")
    assert duck.check("key.unique").to_json() == on_spark.check("key.unique").to_json()
    assert on_spark.check("key.unique").failed_rows == 4


def test_cli_exit_0_when_only_superseded_copies_are_quarantined(resends, tmp_path):
    contract = write_contract(tmp_path / "c.yaml", extra=KEEP_LAST)
    store = tmp_path / "w.duckdb"
    common = ["--store", store, "--catalog", CATALOG, "--now", "2026-11-27T18:05:00Z"]
    clean = run_cli("ingest", contract, resends["clean"], *common)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert (
        "421 rows in, 420 published, 1 quarantined (1 superseded: duplicates: keep last by vendor_seq)" in clean.stdout
    )
    common[1] = tmp_path / "other.duckdb"  # (into the first store, every bar would be a published key)
    mixed = run_cli("ingest", contract, resends["mixed"], *common, "--format", "json")
    assert mixed.returncode == 1
    body = json.loads(mixed.stdout)
    assert (body["superseded"], body["duplicates"], body["row_failures"]["duplicates"]) == (
        1,
        "duplicates: keep last by vendor_seq",
        1,
    )


def test_contract_syntax_errors_name_the_clause(tmp_path):
    cases = {
        "duplicates: {keep: last, by: vendor_sequence}": ("duplicates.by", "unknown column 'vendor_sequence'"),
        "duplicates: {keep: last, by: symbol}": ("duplicates.by", "'symbol' is part of the key"),
        "duplicates: {keep: last, by: source_id}": ("duplicates.by", "'source_id' is string"),
        "duplicates: {keep: last}": ("duplicates", "keep: last needs 'by'"),
        "duplicates: {keep: all, by: vendor_seq}": ("duplicates", "with keep: all every copy is rejected"),
        "duplicates: {keep: newest, by: vendor_seq}": ("duplicates.keep", "'all', 'first' or 'last'"),
        "duplicates: {keep: last, by: vendor_seq, order: desc}": ("duplicates.order", "unknown key 'order'"),
    }
    line = len(contract_text().splitlines()) + 1
    for section, (path, message) in cases.items():
        contract = write(tmp_path, contract_text(extra=section + "\n"), "c.yaml")
        with pytest.raises(ContractError) as caught:
            load_contract(contract)
        assert caught.value.section == path and message in caught.value.message, (section, caught.value)
        assert caught.value.location.line == line
    result = run_cli(
        "lint", write(tmp_path, contract_text(extra="duplicates: {keep: last, by: vendor_sq}\n"), "c.yaml")
    )
    assert result.returncode == 2 and f"c.yaml:{line}:30: duplicates.by: unknown column 'vendor_sq'" in result.stderr


def test_show_and_diff(tmp_path):
    before = load_contract(write_contract(tmp_path / "a.yaml"))
    after = load_contract(write_contract(tmp_path / "b.yaml", version="3.2.0", extra=KEEP_LAST))
    assert contract_to_json(after)["duplicates"] == {"keep": "last", "by": "vendor_seq"}
    assert contract_to_json(before)["duplicates"] is None
    shown = run_cli("show", tmp_path / "b.yaml")
    assert "duplicates: keep last by vendor_seq" in shown.stdout
    changes = {c.path: c for c in diff(before, after).changes}
    assert (changes["duplicates.keep"].kind, changes["duplicates.keep"].required) == ("relax_duplicates_keep", "minor")
    first = load_contract(
        write_contract(tmp_path / "c.yaml", version="4.0.0", extra=KEEP_LAST.replace("last", "first"))
    )
    change = next(c for c in diff(after, first).changes if c.path == "duplicates.keep")
    assert (change.old, change.new, change.required) == ("last", "first", "major")
    back = next(c for c in diff(after, before).changes if c.path == "duplicates.keep")
    assert (back.kind, back.compatible) == ("tighten_duplicates_keep", "no")


def test_lint_warns_when_copies_are_kept_by_a_nullable_column(tmp_path):
    nullable = contract_text(extra=KEEP_LAST).replace("{type: int64, nullable: false,", "{type: int64, nullable: true,")
    findings = lint(load_contract(write(tmp_path, nullable, "c.yaml"))).findings
    (ts132,) = [f for f in findings if f.code == "TS132"]
    assert ts132.severity == "warning" and ts132.section == "duplicates.by" and "vendor_seq" in ts132.message
    strict = lint(load_contract(write(tmp_path, contract_text(extra=KEEP_LAST), "d.yaml"))).findings
    assert not [f for f in strict if f.code == "TS132"]
