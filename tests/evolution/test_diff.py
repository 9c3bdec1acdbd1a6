"""Contract diff: each row of the seed's evolution table, and the version-bump verdict."""

from __future__ import annotations

import json
from datetime import date

import pytest

from tests.conftest import OHLCV_SEED, SENSOR_SEED, run_cli, write
from tscontract import parse_contract
from tscontract.evolution.diff import declared_bump, diff

BASE = OHLCV_SEED.read_text()


def changed(old_text: str, replacements: list[tuple[str, str]], version: str) -> tuple[object, object]:
    new_text = old_text
    for before, after in replacements:
        assert before in new_text, before
        new_text = new_text.replace(before, after, 1)
    new_text = new_text.replace("version: 3.1.0", f"version: {version}", 1)
    return parse_contract(old_text, "old.yaml"), parse_contract(new_text, "new.yaml")


VOLUME = "  volume:   {type: decimal(24,4), unit: base_units_per_venue_contract, nullable: false}"
TRADES = "  trade_count: {type: int64, nullable: true}"


@pytest.mark.parametrize(
    ("replacements", "kind", "required"),
    [
        (
            [(TRADES, TRADES + "\n  vwap: {type: decimal(18,8), unit: quote_currency, nullable: true}")],
            "add_nullable_field",
            "minor",
        ),
        ([(TRADES, TRADES + "\n  venue: {type: string, nullable: false}")], "add_required_field", "major"),
        ([(VOLUME, VOLUME.replace("nullable: false", "nullable: true"))], "relax_nullability", "minor"),
        ([(TRADES, TRADES.replace("nullable: true", "nullable: false"))], "tighten_nullability", "major"),
        ([(VOLUME, VOLUME.replace("decimal(24,4)", "decimal(20,4)"))], "narrow_precision", "major"),
        ([(VOLUME, VOLUME.replace("decimal(24,4)", "decimal(28,4)"))], "widen_precision", "minor"),
        ([("cadence: 60s within session", "cadence: 300s within session")], "change_cadence", "major"),
        (
            [("timezone: UTC instant; session boundaries defined per venue calendar", "timezone: UTC instant")],
            "change_timezone",
            "major",
        ),
        ([("  - volume >= 0", "  - volume >= -1")], "widen_range", "minor"),
        ([("  - volume >= 0", "  - volume > 0")], "tighten_range", "major"),
        ([("  - volume >= 0\n", "")], "widen_range", "minor"),
        (
            [
                (
                    "  - trade_count is null or trade_count >= 0",
                    "  - trade_count is null or trade_count >= 0\n  - high - low <= high",
                )
            ],
            "tighten_range",
            "major",
        ),
        (
            [("reasons: [venue_correction, late_trades, vendor_restatement]", "reasons: [venue_correction]")],
            "change_revision_reasons",
            "major",
        ),
        (
            [
                (
                    "provenance_required: [source_id, ingest_run_id, transform_version, revision]",
                    "provenance_required: [source_id, ingest_run_id, transform_version, revision, vendor_batch]",
                )
            ],
            "add_provenance",
            "major",
        ),
        ([("owner: market-data@example", "owner: market-data-platform@example")], "change_owner", "patch"),
    ],
)
def test_classification(replacements, kind, required):
    old, new = changed(BASE, replacements, "9.0.0")
    report = diff(old, new)
    kinds = {c.kind: c for c in report.changes}
    assert kind in kinds, [c.kind for c in report.changes]
    assert kinds[kind].required == required
    assert report.ok  # a major bump covers everything but forbidden and new-dataset changes


def test_bump_must_cover_the_required_level():
    old, new = changed(BASE, [(TRADES, TRADES.replace("nullable: true", "nullable: false"))], "3.2.0")
    report = diff(old, new)
    assert (report.declared, report.required, report.ok) == ("minor", "major", False)
    assert "the changes need a major bump" in report.problems[0]
    old, new = changed(
        BASE, [(TRADES, TRADES + "\n  vwap: {type: decimal(18,8), unit: quote_currency, nullable: true}")], "3.2.0"
    )
    assert diff(old, new).ok
    old, new = changed(
        BASE, [(TRADES, TRADES + "\n  vwap: {type: decimal(18,8), unit: quote_currency, nullable: true}")], "3.1.1"
    )
    assert not diff(old, new).ok
    assert declared_bump("3.1.0", "3.1.0") == "none" and declared_bump("3.1.0", "4.0.0") == "major"


def test_unit_or_scale_change_is_never_allowed_on_the_same_field():
    # the shares -> lots incident, even with a major bump
    text = (
        BASE.replace(VOLUME, VOLUME.replace("base_units_per_venue_contract", "lots")).replace(
            "version: 3.1.0", "version: 4.0.0"
        )
        + "units:\n  lots: {definition: 100 * base_units_per_venue_contract}\n"
    )
    report = diff(parse_contract(BASE, "a.yaml"), parse_contract(text, "b.yaml"))
    change = next(c for c in report.changes if c.kind == "change_unit")
    assert change.forbidden and not report.ok
    assert any("never allowed on the same field" in p for p in report.problems)
    old, new = changed(BASE, [(VOLUME, VOLUME.replace("decimal(24,4)", "decimal(24,2)"))], "4.0.0")
    assert any(c.kind == "change_scale" and c.forbidden for c in diff(old, new).changes)


def test_rename_needs_aliases_and_key_change_is_a_new_dataset():
    renamed = BASE.replace("  trade_count: {type: int64, nullable: true}", "  trades: {type: int64, nullable: true}")
    renamed = renamed.replace("trade_count is null or trade_count >= 0", "trades is null or trades >= 0")
    report = diff(parse_contract(BASE, "a.yaml"), parse_contract(renamed.replace("3.1.0", "4.0.0"), "b.yaml"))
    assert any(c.kind == "rename_field" and c.required == "major" for c in report.changes)
    aliased = renamed.replace(
        "  trades: {type: int64, nullable: true}", "  trades: {type: int64, nullable: true, aliases: [trade_count]}"
    )
    report = diff(parse_contract(BASE, "a.yaml"), parse_contract(aliased.replace("3.1.0", "3.2.0"), "b.yaml"))
    rename = next(c for c in report.changes if c.kind == "rename_field")
    assert rename.required == "minor" and rename.compatible == "yes"
    sensor = SENSOR_SEED.read_text()
    rekeyed = sensor.replace("key: [series_id, event_ts, revision]", "key: [series_id, event_ts, unit, revision]")
    report = diff(parse_contract(sensor, "a.yaml"), parse_contract(rekeyed.replace("2.0.0", "3.0.0"), "b.yaml"))
    assert report.required == "new_dataset" and not report.ok


def test_removal_honours_the_deprecation_notice():
    deprecated = BASE.replace(
        TRADES, "  trade_count: {type: int64, nullable: true, deprecated: {since: 3.1.0, removal_after: '2027-01-01'}}"
    )
    deprecated += "evolution: {deprecation_notice: 30 days}\n"
    removed = (
        deprecated.replace(
            "  trade_count: {type: int64, nullable: true, deprecated: {since: 3.1.0, removal_after: '2027-01-01'}}\n",
            "",
        )
        .replace("  - trade_count is null or trade_count >= 0\n", "")
        .replace("3.1.0", "4.0.0", 1)
    )
    old, new = parse_contract(deprecated, "a.yaml"), parse_contract(removed, "b.yaml")
    assert diff(old, new, today=date(2027, 2, 1)).ok
    early = diff(old, new, today=date(2026, 12, 1))
    assert not early.ok and "before its removal_after date 2027-01-01" in early.problems[0]
    undeprecated = diff(
        parse_contract(BASE, "a.yaml"),
        parse_contract(
            BASE.replace(TRADES + "\n", "")
            .replace("  - trade_count is null or trade_count >= 0\n", "")
            .replace("3.1.0", "4.0.0", 1),
            "b.yaml",
        ),
    )
    assert any("removed without a deprecation" in p for p in undeprecated.problems)


def test_cli_diff_and_history(tmp_path):
    v1 = write(tmp_path / "v", BASE, "a.yaml") if (tmp_path / "v").mkdir() is None else None
    v2 = write(
        tmp_path / "v",
        BASE.replace("version: 3.1.0", "version: 3.2.0").replace(
            TRADES, TRADES + "\n  vwap: {type: decimal(18,8), unit: quote_currency, nullable: true}"
        ),
        "b.yaml",
    )
    v3 = write(
        tmp_path / "v",
        BASE.replace("version: 3.1.0", "version: 3.3.0").replace(
            TRADES, TRADES.replace("nullable: true", "nullable: false")
        ),
        "c.yaml",
    )
    ok = run_cli("diff", v1, v2, "--format", "json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["required_bump"] == "minor"
    history = run_cli("history", tmp_path / "v", "--format", "json")
    assert history.returncode == 1
    diffs = json.loads(history.stdout)["diffs"]
    assert [(d["old_version"], d["new_version"], d["ok"]) for d in diffs] == [
        ("3.1.0", "3.2.0", True),
        ("3.2.0", "3.3.0", False),
    ]
    assert v3.exists()
