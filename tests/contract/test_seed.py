"""The two worked contracts load byte for byte as written in the seed.

The bundled copies (examples/*/contract.yaml) are compared with ../shared/seed when it is beside the
checkout (skipped on a bare clone, never in CI: tests/conftest.py); the parse is checked on the copies.
"""

from __future__ import annotations

from decimal import Decimal

from tests.conftest import OHLCV_CONTRACT, SENSOR_CONTRACT
from tscontract import load_contract


def test_examples_are_the_seed_byte_for_byte(seed_dir):
    assert OHLCV_CONTRACT.read_bytes() == (seed_dir / "ohlcv_1m.contract.yaml").read_bytes()
    assert SENSOR_CONTRACT.read_bytes() == (seed_dir / "plant_sensor_reading.contract.yaml").read_bytes()


def test_ohlcv_fields_types_precision_and_scale():
    c = load_contract(OHLCV_CONTRACT)
    assert (c.contract, c.version, c.owner) == ("ohlcv_1m", "3.1.0", "market-data@example")
    for name in ("open", "high", "low", "close"):
        t = c.fields[name].type
        assert (t.kind, t.precision, t.scale) == ("decimal", 18, 8)
        assert c.fields[name].unit == "quote_currency"
        assert not c.is_nullable(name)
    volume = c.fields["volume"]
    assert (volume.type.precision, volume.type.scale) == (24, 4)
    assert volume.unit == "base_units_per_venue_contract"
    assert c.fields["trade_count"].type.kind == "int" and c.fields["trade_count"].type.bits == 64
    assert c.is_nullable("trade_count")
    assert c.fields["bar_start"].type.time_unit == "ms"
    adjusted = c.fields["adjusted"]
    assert adjusted.type.kind == "bool" and adjusted.has_value and adjusted.value is False
    assert adjusted.note.startswith("this series is never adjusted")
    # no key such as "8)" leaked from a naive YAML read of decimal(18,8)
    assert set(c.declared_fields) == {
        "symbol",
        "bar_start",
        "open",
        "high",
        "low",
        "close",
        "volume",
        "trade_count",
        "adjusted",
    }


def test_ohlcv_time_invariants_and_revisions():
    c = load_contract(OHLCV_CONTRACT)
    assert c.key == ("symbol", "bar_start", "revision")
    assert c.series_column == "symbol"
    assert c.time.precision == "ms"
    assert c.time.timezone.utc_instant and c.time.timezone.sessions == "venue"
    cadence = c.time.cadence
    assert cadence.source == "fixed" and cadence.interval.seconds == Decimal(60)
    assert cadence.within_session and cadence.outside_session_forbidden
    assert [i.text for i in c.invariants] == [
        "low <= open <= high",
        "low <= close <= high",
        "volume >= 0",
        "trade_count is null or trade_count >= 0",
    ]
    assert c.invariants[0].sql == "low <= open AND open <= high"
    assert c.invariants[3].kind == "null_rule"
    policy = c.revision_policy
    assert policy.allowed and policy.window.amount == 5 and policy.window.calendar == "trading"
    assert policy.reasons == ("venue_correction", "late_trades", "vendor_restatement")
    assert policy.notification == "correction log topic"
    # provenance columns exist though not listed under fields
    assert c.provenance_required == ("source_id", "ingest_run_id", "transform_version", "revision")
    assert c.fields["revision"].implied and c.fields["revision"].type.kind == "int"
    assert c.fields["source_id"].type.kind == "string" and not c.is_nullable("source_id")


def test_sensor_enum_catalog_units_and_clauses():
    c = load_contract(SENSOR_CONTRACT)
    assert (c.contract, c.version) == ("plant_sensor_reading", "2.0.0")
    assert c.fields["quality"].type.members == ("good", "suspect", "bad")
    value = c.fields["value"]
    assert (value.type.precision, value.type.scale) == (12, 4)
    assert value.unit_from_catalog and value.dimension_from_catalog
    assert c.constraints["unit"].kind == "catalog_equals"
    assert c.constraints["unit"].catalog.attribute == "unit"
    assert c.constraints["unit"].catalog.key == "series_id"
    kinds = [i.kind for i in c.invariants]
    assert kinds == ["null_only_when", "catalog_bound", "catalog_equals"]
    # the bare word 'bad' is read as the enum member, not a column
    assert "'bad'" in c.invariants[0].sql
    assert c.invariants[2].text == "unit equals catalog unit for series_id"  # comment stripped
    cadence = c.time.cadence
    assert cadence.source == "catalog" and cadence.tolerance_ratio == Decimal("0.1")
    assert c.time.timezone.device_zone_in_catalog
    assert c.revision_policy.window is None
    assert c.revision_policy.note.startswith("recalibration re-derives")
    assert not c.is_nullable("calibration_id")
    assert c.provenance_required[-1] == "calibration_id"
    assert not c.fields["calibration_id"].implied  # declared under fields
