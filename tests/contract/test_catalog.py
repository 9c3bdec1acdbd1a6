"""The series catalog, in YAML and CSV, with calibrations and positioned errors."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tests.conftest import EXAMPLES, write
from tscontract import CatalogError, load_catalog, parse_catalog, parse_catalog_csv

SENSOR = EXAMPLES / "plant_sensor"


def test_yaml_and_csv_catalogs_are_the_same_catalog():
    yaml_catalog = load_catalog(SENSOR / "catalog.yaml")
    csv_catalog = load_catalog(SENSOR / "catalog.csv")
    assert yaml_catalog.series == csv_catalog.series
    assert yaml_catalog.catalog == "plant_sensor_reading" and csv_catalog.catalog is None
    pressure = yaml_catalog.series["P-101.discharge_pressure"]
    assert pressure.unit == "bar" and pressure.hard_bounds == (Decimal(0), Decimal(60))
    assert pressure.cadence.seconds == 10 and pressure.device_zone == "Europe/Berlin"


def test_calibration_in_force_at_an_instant():
    pressure = load_catalog(SENSOR / "catalog.yaml").series["P-101.discharge_pressure"]
    before = datetime(2026, 11, 30, 11, 59, 59, 999000, tzinfo=UTC)
    switch = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert pressure.calibration_at(before).id == "CAL-P101-2026A"
    assert pressure.calibration_at(switch).id == "CAL-P101-2026B"  # valid_to is exclusive
    assert pressure.calibration_at(datetime(2025, 1, 1, tzinfo=UTC)) is None


BASE = """catalog: c
series:
  S1:
    unit: bar
    hard_bounds: [0, 60]
    cadence: 10s
    device_zone: Europe/Berlin
    calibrations:
      - {id: A, valid_from: "2026-01-01T00:00:00Z", valid_to: "2026-06-01T00:00:00Z"}
      - {id: B, valid_from: "2026-06-01T00:00:00Z"}
"""


@pytest.mark.parametrize(
    ("old", "new", "message", "line"),
    [
        ("hard_bounds: [0, 60]", "hard_bounds: [60, 0]", "low 60 is above high 0", 5),
        ("hard_bounds: [0, 60]", "hard_bounds: [0]", "bounds are [low, high]", 5),
        ("device_zone: Europe/Berlin", "device_zone: Mars/Olympus", "not an IANA time zone", 7),
        ("unit: bar", "unit: barz", "unknown unit 'barz'", 4),
        ("cadence: 10s", "cadence: 2 trading days", "not trading days", 6),
        ('valid_to: "2026-06-01T00:00:00Z"', 'valid_to: "2026-07-01T00:00:00Z"', "overlap", 9),
        ('valid_from: "2026-06-01T00:00:00Z"', 'valid_from: "2026-06-01T00:00:00"', "no UTC offset", 10),
        ("unit: bar", "unit: bar\n    colour: red", "unknown key 'colour'", 5),
    ],
)
def test_yaml_catalog_errors(old, new, message, line):
    with pytest.raises(CatalogError) as info:
        parse_catalog(BASE.replace(old, new), "cat.yaml")
    assert message in str(info.value)
    assert info.value.location.line == line


def test_csv_catalog_errors_name_line_and_column():
    header = "series_id,unit,hard_min,hard_max,cadence\n"
    with pytest.raises(CatalogError) as info:
        parse_catalog_csv("series_id,unit,colour\nS1,bar,red\n", "c.csv")
    assert "unknown catalog column 'colour'" in str(info.value)
    assert (info.value.location.line, info.value.location.column) == (1, 16)
    with pytest.raises(CatalogError) as info:
        parse_catalog_csv(header + "S1,bar,0,sixty,10s\n", "c.csv")
    assert "hard_max 'sixty' is not a number" in str(info.value)
    assert (info.value.location.line, info.value.location.column) == (2, 10)
    with pytest.raises(CatalogError, match="unit differs between rows"):
        parse_catalog_csv(header + "S1,bar,0,60,10s\nS1,kPa,0,60,10s\n", "c.csv")
    with pytest.raises(CatalogError, match="only one of the hard_bounds"):
        parse_catalog_csv(header + "S1,bar,0,,10s\n", "c.csv")


def test_missing_catalog_file_is_an_input_error(tmp_path):
    from tscontract import InputError

    with pytest.raises(InputError, match="catalog file not found"):
        load_catalog(tmp_path / "none.yaml")
    path = write(tmp_path, "catalog: x\nseries: {}\n", "empty.yaml")
    with pytest.raises(CatalogError, match="at least one series"):
        load_catalog(path)
