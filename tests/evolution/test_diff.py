"""Contract diff: each row of the seed's evolution table, and the version-bump verdict."""

from __future__ import annotations

import json
from datetime import date

import pytest

from tests.conftest import OHLCV_CONTRACT, SENSOR_CONTRACT, run_cli, write
from tscontract import parse_contract
from tscontract.evolution.diff import declared_bump, diff

BASE = OHLCV_CONTRACT.read_text()


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
    sensor = SENSOR_CONTRACT.read_text()
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


# ---------------------------------------------------------------- every section classified

FULL = (
    BASE.replace(TRADES, TRADES + "\n  received_at: {type: timestamp_ms_utc, nullable: false}")
    + "completeness: {window: 1d, min_ratio: 0.99, allowed_gaps: [outside_session, exchange_holiday]}\n"
    + "freshness: {max_age: 15m}\n"
    + "evolution: {compatibility: FULL_TRANSITIVE, deprecation_notice: 30 days}\n"
    + "units:\n  lots: {definition: 100 * base_units_per_venue_contract}\n"
)


def only_change(old_text: str, replacements: list[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    old, new = changed(old_text, replacements, "9.0.0")
    return [(c.kind, c.path, c.compatible, c.required) for c in diff(old, new).changes]


@pytest.mark.parametrize(
    ("replacements", "expected"),
    [
        # completeness: a higher ratio, fewer allowed gaps, more expected points are stricter for producers
        ([("min_ratio: 0.99", "min_ratio: 0.999")], ("tighten_completeness", "completeness.min_ratio", "no", "major")),
        ([("min_ratio: 0.99", "min_ratio: 0.95")], ("relax_completeness", "completeness.min_ratio", "notice", "minor")),
        (
            [("allowed_gaps: [outside_session, exchange_holiday]", "allowed_gaps: [outside_session]")],
            ("tighten_completeness", "completeness.allowed_gaps", "no", "major"),
        ),
        (
            [("allowed_gaps: [outside_session, exchange_holiday]", "allowed_gaps: []")],
            ("tighten_completeness", "completeness.allowed_gaps", "no", "major"),
        ),
        (
            [("window: 1d, min_ratio", "window: 1h, min_ratio")],
            ("change_completeness", "completeness.window", "no", "major"),
        ),
        (
            [("window: 1d, min_ratio", "window: 1d, expected_count: 390, min_ratio")],
            ("change_completeness", "completeness.expected_count", "no", "major"),
        ),
        (
            [("completeness: {window: 1d, min_ratio: 0.99, allowed_gaps: [outside_session, exchange_holiday]}\n", "")],
            ("relax_completeness", "completeness", "notice", "minor"),
        ),
        ([("min_ratio: 0.99,", "min_ratio: 0.990,")], None),  # the same number written differently: no change
        # freshness: a shorter max_age is stricter; the same length in other words is a patch
        ([("max_age: 15m", "max_age: 5m")], ("tighten_freshness", "freshness.max_age", "no", "major")),
        ([("max_age: 15m", "max_age: 1h")], ("relax_freshness", "freshness.max_age", "notice", "minor")),
        ([("max_age: 15m", "max_age: 900s")], ("change_freshness", "freshness.max_age", "yes", "patch")),
        ([("max_age: 15m", "max_age: 1 trading days")], ("change_freshness", "freshness.max_age", "no", "major")),
        (
            [("max_age: 15m}", "max_age: 15m, column: received_at}")],
            ("change_freshness", "freshness.column", "no", "major"),
        ),
        ([("freshness: {max_age: 15m}\n", "")], ("relax_freshness", "freshness", "notice", "minor")),
        # evolution: the compatibility mode and notice period are promises to consumers
        (
            [("compatibility: FULL_TRANSITIVE", "compatibility: BACKWARD")],
            ("relax_compatibility", "evolution.compatibility", "notice", "minor"),
        ),
        (
            [("compatibility: FULL_TRANSITIVE, deprecation_notice: 30 days", "deprecation_notice: 30 days")],
            None,  # FULL_TRANSITIVE is the default
        ),
        (
            [("deprecation_notice: 30 days", "deprecation_notice: 7 days")],
            ("relax_deprecation_notice", "evolution.deprecation_notice", "notice", "minor"),
        ),
        (
            [("deprecation_notice: 30 days", "deprecation_notice: 90 days")],
            ("strengthen_deprecation_notice", "evolution.deprecation_notice", "yes", "minor"),
        ),
        # series identity, time, units
        (
            [("key: [symbol", 'series: {column: symbol, pattern: "^[A-Z.]+$"}\nkey: [symbol')],
            ("tighten_series_pattern", "series.pattern", "no", "major"),
        ),
        (
            [("precision: ms\n", "precision: ms\n  calendar: XNYS\n")],
            ("change_calendar", "time.calendar", "no", "major"),
        ),
        (
            [("precision: ms\n", "precision: ms\n  ingest_column: received_at\n")],
            ("change_ingest_column", "time.ingest_column", "no", "major"),
        ),
        (
            [("lots: {definition: 100 *", "lots: {definition: 10 *")],
            ("change_unit_definition", "units.lots.definition", "no", "major"),
        ),
        (
            [("  lots: {definition: 100 * base_units_per_venue_contract}\n", "  lots: {dimension: lot_count}\n")],
            [
                ("change_unit_dimension", "units.lots.dimension", "no", "major"),
                ("change_unit_definition", "units.lots.definition", "no", "major"),
            ],
        ),
        (
            [("units:\n", "units:\n  bp: {dimension: basis_point}\n")],
            ("change_units", "units.bp", "yes", "patch"),
        ),
        # revision policy
        (
            [("window: 5 trading days", "window: 3 trading days")],
            ("tighten_revision_window", "revision_policy.window", "no", "major"),
        ),
        (
            [("window: 5 trading days", "window: 10 trading days")],
            ("relax_revision_window", "revision_policy.window", "notice", "minor"),
        ),
        (
            [("  notification: correction log topic", "  notification: correction log topic\n  who: [vendor_x]")],
            ("tighten_revision_who", "revision_policy.who", "no", "major"),
        ),
        (
            [("notification: correction log topic", "notification: corrections email")],
            ("change_revision_notification", "revision_policy.notification", "no", "major"),
        ),
        # fields: documentation is a patch; a default changes what readers fill in
        (
            [(TRADES, "  trade_count: {type: int64, nullable: true, description: trades in the bar}")],
            ("change_description", "fields.trade_count.description", "yes", "patch"),
        ),
        (
            [(TRADES, "  trade_count: {type: int64, nullable: true, default: 0}")],
            ("change_default", "fields.trade_count.default", "no", "major"),
        ),
    ],
)
def test_every_section_is_classified(replacements, expected):
    changes = only_change(FULL, replacements)
    assert changes == (expected if isinstance(expected, list) else [expected] if expected else []), changes


def test_forbidden_unit_redefinition_is_refused_whatever_the_bump():
    # lots redefined from 100 to 10 shares: every field in lots changes unit without changing name
    old, new = changed(FULL, [("lots: {definition: 100 *", "lots: {definition: 10 *")], "9.0.0")
    report = diff(old, new)
    assert [c.forbidden for c in report.changes] == [True] and not report.ok
    assert "never allowed" in report.problems[0]


def test_completeness_added_is_breaking_and_needs_a_major_bump():
    old, new = changed(BASE, [("provenance_required", "completeness: {window: 1d}\nprovenance_required")], "3.2.0")
    report = diff(old, new)
    assert [(c.kind, c.path, c.new) for c in report.changes] == [
        ("tighten_completeness", "completeness", "{window: 1d, expected_count: per cadence, min_ratio: 1}")
    ]
    assert not report.ok and "need a major bump" in report.problems[0]


def test_deprecation_dates_and_removal_of_a_deprecation():
    deprecated = FULL.replace(
        TRADES, "  trade_count: {type: int64, nullable: true, deprecated: {since: 3.1.0, removal_after: '2027-01-01'}}"
    )
    earlier = only_change(deprecated, [("removal_after: '2027-01-01'", "removal_after: '2026-12-01'")])
    assert earlier == [("relax_deprecation", "fields.trade_count.deprecated.removal_after", "notice", "minor")]
    later = only_change(deprecated, [("removal_after: '2027-01-01'", "removal_after: '2027-06-01'")])
    assert later == [("strengthen_deprecation", "fields.trade_count.deprecated.removal_after", "yes", "minor")]
    undone = only_change(deprecated, [(", deprecated: {since: 3.1.0, removal_after: '2027-01-01'}", "")])
    assert undone == [("undeprecate_field", "fields.trade_count.deprecated", "yes", "minor")]


def test_series_column_is_compared_as_used():
    # `series: {column: symbol}` states the default: nothing changes
    assert only_change(FULL, [("key: [symbol", "series: {column: symbol}\nkey: [symbol")]) == []
    sensor = SENSOR_CONTRACT.read_text()
    text = sensor.replace("key: [series_id", "series: {column: series_id, scheme: plant tag}\nkey: [series_id")
    old, new = parse_contract(sensor, "a.yaml"), parse_contract(text.replace("2.0.0", "3.0.0"), "b.yaml")
    assert [(c.kind, c.path) for c in diff(old, new).changes] == [("change_series_scheme", "series.scheme")]
    moved = text.replace("series: {column: series_id,", "series: {column: unit,")
    report = diff(parse_contract(text, "a.yaml"), parse_contract(moved.replace("2.0.0", "3.0.0"), "b.yaml"))
    assert [(c.kind, c.required) for c in report.changes] == [("change_series_column", "major")]


def _model_keys(model: type, prefix: str = "") -> list[str]:
    """Every key a contract can state: the pydantic model walked recursively (maps and lists as ``*``)."""
    from typing import Annotated, Union, get_args, get_origin

    from pydantic import BaseModel

    def inner_models(annotation: object) -> list[tuple[type, str]]:
        origin = get_origin(annotation)
        if origin is Annotated:
            return inner_models(get_args(annotation)[0])
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return [(annotation, "")]
        if origin in (dict,):
            return [(m, ".*" + s) for m, s in inner_models(get_args(annotation)[1])]
        if origin in (list, tuple):
            return [(m, ".*" + s) for a in get_args(annotation) if a is not Ellipsis for m, s in inner_models(a)]
        if origin is Union or type(annotation).__name__ == "UnionType":
            return [found for a in get_args(annotation) for found in inner_models(a)]
        return []

    keys = []
    for name, info in model.model_fields.items():
        if info.exclude:  # set by the loader, never written in a contract
            continue
        path = f"{prefix}{name}"
        keys.append(path)
        for sub, suffix in inner_models(info.annotation):
            if suffix:  # an entry of a map or list (a field, a unit, an invariant)
                keys.append(f"{path}{suffix}")
            keys.extend(_model_keys(sub, f"{path}{suffix}."))
    return keys


def test_every_contract_key_is_classified_by_diff():
    """A new contract section or key fails here until diff says how its changes count (one line in
    CLASSIFICATION), so no key can be ignored by `tscontract diff` again."""
    from tscontract.contract.model import Contract
    from tscontract.evolution.diff import CLASSIFICATION, rule_for

    keys = _model_keys(Contract)
    assert {"completeness.min_ratio", "fields.*.deprecated.removal_after", "units.*.definition"} <= set(keys)
    missing = [k for k in keys if rule_for(k) is None]
    assert not missing, (
        f"contract keys not classified by tscontract diff: {missing}; "
        "add one line each to CLASSIFICATION in src/tscontract/evolution/diff/classification.py"
    )
    stale = [pattern for pattern in CLASSIFICATION if pattern not in keys]
    assert not stale, f"CLASSIFICATION names keys the contract model does not have: {stale}"


def test_a_key_without_a_rule_is_still_a_major_change(monkeypatch):
    from tscontract.evolution import diff as module

    monkeypatch.delitem(module.CLASSIFICATION, "completeness.min_ratio")
    assert only_change(FULL, [("min_ratio: 0.99", "min_ratio: 0.95")]) == [
        ("change_min_ratio", "completeness.min_ratio", "no", "major")
    ]


def test_invariant_severity():
    warned = BASE.replace("  - volume >= 0", "  - {clause: volume >= 0, severity: warning}")
    assert only_change(BASE, [("  - volume >= 0", "  - {clause: volume >= 0, severity: warning}")]) == [
        ("relax_invariant_severity", "invariants", "notice", "minor")
    ]
    assert only_change(warned, [("severity: warning", "severity: error")]) == [
        ("tighten_invariant_severity", "invariants", "no", "major")
    ]
    added = "  - volume >= 0\n  - {clause: volume < 1e12, severity: warning}"
    assert only_change(BASE, [("  - volume >= 0", added)]) == [("add_warning", "invariants", "yes", "minor")]
    assert only_change(
        BASE.replace("  - volume >= 0", added), [("  - {clause: volume < 1e12, severity: warning}\n", "")]
    ) == [("remove_warning", "invariants", "notice", "minor")]


STEP_BASE = """\
contract: t
version: VERSION
key: [s, t]
time: {column: t, cadence: irregular}
fields:
  s: {type: string}
  t: {type: timestamp_us_utc}
  v:
    type: float64
"""


@pytest.mark.parametrize(
    ("old", "new", "compatible"),
    [
        ("", "    step: {max_abs: 10}\n", False),  # a new step rejects rows that passed
        ("    step: {max_abs: 10}\n", "    step: {max_abs: 20}\n", True),
        ("    step: {max_abs: 10}\n", "    step: {max_abs: 5}\n", False),
        ("    step: {max_mad: 6, window: 5}\n", "    step: {max_mad: 6, window: 5, min_mad: 1}\n", True),
        ("    step: {max_mad: 6, window: 5}\n", "    step: {max_mad: 6, window: 11}\n", False),
        ("    step: {max_abs: 10}\n", "    step: {max_mad: 6, window: 5}\n", False),
        ("    step: {max_abs: 10}\n", "    step: {max_abs: 10, severity: warning}\n", True),
        ("    step: {max_abs: 10}\n", "", True),
    ],
)
def test_step_changes_are_classified(old, new, compatible):
    """Issue 25 item 3: the step clause's limits loosen or tighten; other neighbours are a change."""
    a = parse_contract(STEP_BASE.replace("VERSION", "1.0.0") + old, "a.yaml")
    b = parse_contract(STEP_BASE.replace("VERSION", "2.0.0") + new, "b.yaml")
    changes = [c for c in diff(a, b).changes if c.path.startswith("fields.v")]
    assert changes, "no change found"
    assert all(c.compatible != "no" for c in changes) is compatible, [(c.kind, c.compatible) for c in changes]
