"""Convert at ingest: renamed columns, epoch and local timestamps, exact unit conversion."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import EXAMPLES, write
from tests.engines.conftest import OHLCV, SENSOR
from tests.gate.conftest import open_spec
from tscontract import ContractError, InputError, load_catalog, load_contract
from tscontract.gate.ingest import ingest
from tscontract.gate.mapping import load_mapping

MAPPINGS = EXAMPLES / "mappings"


def run(spec, dataset, data, mapping, now="2026-11-30T15:00:00+00:00"):
    from datetime import datetime

    store = open_spec(spec)
    try:
        result = ingest(
            load_contract(dataset / "contract.yaml"),
            [data],
            store,
            catalog=load_catalog(dataset / "catalog.yaml"),
            mapping=load_mapping(mapping),
            now=datetime.fromisoformat(now),
        )
        return result, store.query
    finally:
        pass


def test_vendor_bars_epoch_ms_and_lots(tmp_path):
    spec = str(tmp_path / "w.duckdb")
    result, query = run(spec, OHLCV, MAPPINGS / "vendor_x_bars.csv", MAPPINGS / "vendor_x_ohlcv.yaml")
    assert (result.published, result.quarantined) == (3, 0)
    rows = query(
        "SELECT symbol, strftime(bar_start, '%Y-%m-%dT%H:%M:%S'), volume, source_id, transform_version "
        "FROM ohlcv_1m ORDER BY symbol, bar_start"
    )
    assert rows[0] == ("AAPL", "2026-11-30T14:30:00", Decimal("10932.0000"), "vendor-x", "2.1.0")
    assert rows[2][2] == Decimal("5207.0000")  # 52.07 lots of 100 shares, exactly


def test_historian_local_time_and_per_series_units(tmp_path):
    spec = str(tmp_path / "w.duckdb")
    result, query = run(
        spec,
        SENSOR,
        MAPPINGS / "historian_export.csv",
        MAPPINGS / "plant_historian.yaml",
        now="2026-11-30T12:00:00+00:00",
    )
    assert (result.published, result.quarantined) == (4, 0)
    rows = query(
        "SELECT series_id, strftime(event_ts, '%H:%M:%S'), value, unit FROM plant_sensor_reading "
        "ORDER BY series_id, event_ts"
    )
    # 12:55 Berlin is 11:55 UTC; 850.12 kPa is 8.5012 bar; 149.45 degF is exactly 65.25 degC
    assert rows[0] == ("P-101.discharge_pressure", "11:55:00", Decimal("8.5012"), "bar")
    assert rows[2] == ("T-204.bearing_temp", "11:55:00", Decimal("65.2500"), "degC")


def test_conversion_that_does_not_fit_the_scale_fails_unless_rounding_is_asked(tmp_path):
    data = write(
        tmp_path,
        "tag,time_local,reading,uom,q,cal\n"
        "T-204.bearing_temp,2026-11-30 12:55:00.000,150.0001,degF,good,CAL-T204-2026A\n",
        "x.csv",
    )
    spec = str(tmp_path / "w.duckdb")
    result, _ = run(spec, SENSOR, data, MAPPINGS / "plant_historian.yaml", now="2026-11-30T12:00:00+00:00")
    assert result.row_failures == {"field.value.type": 1}  # 65.5556111... degC: no silent rounding
    rounding = (
        (MAPPINGS / "plant_historian.yaml")
        .read_text()
        .replace("{from: reading, unit_column: uom}", "{from: reading, unit_column: uom, round: half_even}")
    )
    result, query = run(
        str(tmp_path / "r.duckdb"), SENSOR, data, write(tmp_path, rounding, "m.yaml"), now="2026-11-30T12:00:00+00:00"
    )
    assert result.published == 1
    assert query("SELECT value FROM plant_sensor_reading")[0][0] == Decimal("65.5556")


def test_unknown_unit_is_left_for_the_unit_clause_to_reject(tmp_path):
    data = write(
        tmp_path,
        "tag,time_local,reading,uom,q,cal\n"
        "P-101.discharge_pressure,2026-11-30 12:55:00.000,8.5,furlongs,good,CAL-P101-2026A\n",
        "x.csv",
    )
    result, _ = run(
        str(tmp_path / "w.duckdb"), SENSOR, data, MAPPINGS / "plant_historian.yaml", now="2026-11-30T12:00:00+00:00"
    )
    assert "invariants[2]" in result.batch_rejected_by and result.published == 0


def test_mapping_errors(tmp_path):
    bad = write(tmp_path, "mapping: m\ntransform_version: 1\ncolumns:\n  symbol: {from: a, value: b}\n", "m.yaml")
    with pytest.raises(ContractError, match="expected text, got a number"):
        load_mapping(bad)
    both = write(tmp_path, "mapping: m\ntransform_version: '1'\ncolumns:\n  symbol: {from: a, value: b}\n", "b.yaml")
    with pytest.raises(ContractError, match="exactly one of"):
        load_mapping(both)
    typo = write(tmp_path, "mapping: m\ntransform_version: '1'\ncolumns:\n  symbol: {form: a}\n", "t.yaml")
    with pytest.raises(ContractError, match="unknown key 'form'") as info:
        load_mapping(typo)
    assert info.value.location.line == 4
    missing = write(tmp_path, "mapping: m\ntransform_version: '1'\ncolumns:\n  symbol: {from: nope}\n", "n.yaml")
    with pytest.raises(InputError, match="source column 'nope' is not in the input"):
        run(str(tmp_path / "w.duckdb"), OHLCV, MAPPINGS / "vendor_x_bars.csv", missing)
