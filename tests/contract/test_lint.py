"""Lint implements the seed's Checklist and Common Mistakes as findings."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES, OHLCV_CONTRACT, SENSOR_CONTRACT, run_cli, write
from tscontract import lint, load_catalog, load_contract, parse_catalog, parse_contract

TEMPLATE = """contract: t
version: 1.0.0
key: [series_id, ts, revision]
time: {column: ts, precision: ms, timezone: UTC instant, cadence: 10s}
fields:
  series_id: {type: string, nullable: false}
  ts: {type: timestamp_ms_utc, nullable: false}
FIELDS
freshness: {max_age: 15m}
completeness: {window: 1h}
revision_policy: {allowed: false}
provenance_required: [source_id, ingest_run_id, transform_version, revision]
"""


def findings(fields: str = "", *, replace: tuple[str, str] | None = None, catalog: str | None = None):
    text = TEMPLATE.replace("FIELDS", fields)
    if replace:
        text = text.replace(*replace)
    report = lint(parse_contract(text, "t.yaml"), parse_catalog(catalog, "c.yaml") if catalog else None)
    return report, {(f.code, f.severity) for f in report.findings}


def test_clean_template_has_no_findings():
    report, codes = findings("  value: {type: decimal(9,3), unit: bar, dimension: pressure, nullable: true}")
    assert codes == set() and report.passed


def test_seed_contracts_lint_without_errors_and_show_expected_warnings():
    ohlcv = lint(load_contract(OHLCV_CONTRACT))
    assert ohlcv.passed and ohlcv.count("error") == 0
    assert {f.code for f in ohlcv.findings} == {"TS102", "TS103", "TS107", "TS114", "TS115", "TS130", "TS163"}
    sensor = lint(load_contract(SENSOR_CONTRACT), load_catalog(EXAMPLES / "plant_sensor" / "catalog.yaml"))
    assert sensor.passed
    assert {f.code for f in sensor.findings} == {"TS107", "TS114", "TS115", "TS130"}
    window = next(f for f in sensor.findings if "without a window" in f.message)
    assert (window.section, window.line) == ("revision_policy", 21)


@pytest.mark.parametrize(
    ("fields", "code", "severity"),
    [
        (
            "  price: {type: float64, unit: quote_currency, dimension: currency_amount, nullable: false}",
            "TS101",
            "error",
        ),
        (
            "  value: {type: float64, unit: per series from catalog, dimension: per series, nullable: true}",
            "TS101",
            "error",
        ),
        ("  temp: {type: float64, unit: degC, dimension: temperature, nullable: true}", "TS101", "warning"),
        ("  qty: {type: int64, nullable: true}", "TS102", "warning"),
        ("  p: {type: decimal(9,3), unit: bar, nullable: true}", "TS103", "warning"),
        ("  p: {type: decimal(9,3), unit: kPa, dimension: temperature, nullable: true}", "TS104", "error"),
        (
            "  value_degc: {type: decimal(9,3), unit: K, dimension: temperature, nullable: true}",
            "TS105",
            "error",
        ),
        (
            "  pressure_kpa: {type: decimal(9,3), unit: bar, dimension: pressure, nullable: true}",
            "TS105",
            "error",
        ),
        ("  pressure_kpa: {type: decimal(9,3), nullable: true}", "TS106", "warning"),
        ("  p: {type: decimal(9,3), unit: bar, dimension: pressure}", "TS107", "warning"),
        (
            "  p: {type: decimal(9,3), unit: bar, dimension: pressure, nullable: false, default: 0}",
            "TS120",
            "error",
        ),
    ],
)
def test_field_findings(fields, code, severity):
    report, codes = findings(fields)
    assert (code, severity) in codes, report.findings
    assert report.passed is (severity != "error")


# a TMY3 solar file: irradiance in W/m**2 (global, direct normal, diffuse) and a kW/m**2 variant
@pytest.mark.parametrize(
    ("name", "unit"),
    [("ghi_w_m2", "W/m**2"), ("dni_w_m2", "W / m ** 2"), ("dhi_kw_m2", "kW/m**2"), ("ghi_wh_m2", "Wh/m**2")],
)
def test_irradiance_names_agree_with_their_units(name, unit):
    report, codes = findings(f"  {name}: {{type: decimal(9,3), unit: {unit}, nullable: true}}")
    assert not {c for c, _ in codes if c in ("TS105", "TS106")}, report.findings


def test_irradiance_name_with_another_unit_is_ts105():
    report, codes = findings("  ghi_w_m2: {type: decimal(9,3), unit: kW/m**2, nullable: true}")
    assert ("TS105", "error") in codes, report.findings


def test_matching_suffix_is_fine():
    _, codes = findings("  value_degc: {type: decimal(9,3), unit: degC, dimension: temperature, nullable: true}")
    assert codes == set()


@pytest.mark.parametrize(
    ("old", "new", "code", "severity"),
    [
        (
            "time: {column: ts, precision: ms, timezone: UTC instant, cadence: 10s}",
            "time: {column: ts}",
            "TS111",
            "warning",
        ),
        (
            "time: {column: ts, precision: ms, timezone: UTC instant, cadence: 10s}",
            "time: {column: ts}",
            "TS112",
            "warning",
        ),
        (
            "time: {column: ts, precision: ms, timezone: UTC instant, cadence: 10s}",
            "time: {column: ts}",
            "TS113",
            "warning",
        ),
        ("freshness: {max_age: 15m}\n", "", "TS114", "warning"),
        ("completeness: {window: 1h}\n", "", "TS115", "warning"),
        ("revision_policy: {allowed: false}\n", "", "TS131", "warning"),
        (
            "revision_policy: {allowed: false}",
            "revision_policy: {allowed: true, reasons: [x]}",
            "TS130",
            "warning",
        ),
        (
            "provenance_required: [source_id, ingest_run_id, transform_version, revision]",
            "provenance_required: [source_id, revision]",
            "TS140",
            "warning",
        ),
        (
            "key: [series_id, ts, revision]",
            "key: [series_id, ts]\nevolution: {compatibility: NONE}",
            "TS150",
            "error",
        ),
        (
            "freshness:",
            "evolution: {compatibility: NONE, compatibility_reason: migration CHG-1}\nfreshness:",
            "TS150",
            "warning",
        ),
    ],
)
def test_section_findings(old, new, code, severity):
    report, codes = findings(replace=(old, new))
    assert (code, severity) in codes, report.findings


def test_no_provenance_is_an_error():
    text = TEMPLATE.replace("FIELDS", "").replace(
        "provenance_required: [source_id, ingest_run_id, transform_version, revision]\n", ""
    )
    text = text.replace("key: [series_id, ts, revision]", "key: [series_id, ts]")
    report = lint(parse_contract(text, "t.yaml"))
    assert ("TS140", "error") in {(f.code, f.severity) for f in report.findings}
    assert not report.passed


SENSOR_CATALOG = """catalog: plant_sensor_reading
series:
  P1: {unit: kPa, dimension: pressure, hard_bounds: [0, 6000], cadence: 10s, device_zone: UTC,
       calibrations: [{id: A, valid_from: "2026-01-01T00:00:00Z"}]}
"""


def sensor_with_catalog(catalog: str, rename: str | None = None):
    text = SENSOR_CONTRACT.read_text()
    if rename:
        text = text.replace("  value:  ", f"  {rename}:  ").replace("value is null", f"{rename} is null")
        text = text.replace("value within", f"{rename} within")
    return lint(parse_contract(text, "s.yaml"), parse_catalog(catalog, "c.yaml"))


def test_catalog_checks():
    clean = sensor_with_catalog(SENSOR_CATALOG)
    assert clean.passed, clean.findings
    # the kPa incident at lint time: the field name promises bar, the catalog says kPa
    renamed = sensor_with_catalog(SENSOR_CATALOG, rename="value_bar")
    kpa = next(f for f in renamed.findings if f.code == "TS105")
    assert "for series P1 is kPa" in kpa.message and not renamed.passed
    missing = sensor_with_catalog(SENSOR_CATALOG.replace("hard_bounds: [0, 6000], ", ""))
    assert any(f.code == "TS161" and "hard_bounds" in f.message for f in missing.findings)
    wrong_dim = sensor_with_catalog(SENSOR_CATALOG.replace("unit: kPa", "unit: degC"))
    assert any(f.code == "TS162" and "degC is not a pressure unit" in f.message for f in wrong_dim.findings)
    other = sensor_with_catalog(SENSOR_CATALOG.replace("catalog: plant_sensor_reading", "catalog: other"))
    assert any(f.code == "TS160" for f in other.findings)
    no_cal = sensor_with_catalog(
        SENSOR_CATALOG.replace(',\n       calibrations: [{id: A, valid_from: "2026-01-01T00:00:00Z"}]', "")
    )
    assert any(f.code == "TS161" and "calibrations" in f.message for f in no_cal.findings)


def test_cli_lint_json_shape_and_exit_codes(tmp_path):
    ok = run_cli("lint", OHLCV_CONTRACT, "--catalog", EXAMPLES / "ohlcv_1m" / "catalog.yaml", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert set(report) == {"contract", "version", "file", "catalog", "passed", "counts", "findings"}
    assert report["passed"] is True and report["counts"]["error"] == 0 and report["counts"]["warning"] > 0
    assert set(report["findings"][0]) == {"code", "severity", "section", "line", "column", "message"}
    bad = write(
        tmp_path,
        OHLCV_CONTRACT.read_text().replace("decimal(18,8), unit: quote_currency", "float64, unit: quote_currency", 1),
    )
    failed = run_cli("lint", bad)
    assert failed.returncode == 1
    assert "TS101" in failed.stdout and "money typed float64" in failed.stdout


@pytest.mark.parametrize(
    "fields",
    [
        # count is a documented dimension, for pint's count and for a unit the contract declares
        "  trades: {type: int64, unit: count, dimension: count, nullable: true}",
        "  trades: {type: int64, unit: trades, dimension: count, nullable: true}\nunits: {trades: {dimension: count}}",
        '  v: {type: decimal(9,3), unit: m/s, dimension: "[length] / [time]", nullable: true}',
        '  rho: {type: decimal(9,3), unit: kg/m**3, dimension: "[mass] / [length] ** 3", nullable: true}',
        "  f: {type: decimal(9,3), unit: kg/h, dimension: mass_flow, nullable: true}",
    ],
    ids=["pint count", "declared count unit", "documented dimension", "density", "mass flow alias"],
)
def test_documented_dimensions_are_accepted(fields):
    report, codes = findings(fields)
    assert codes == set(), report.findings


@pytest.mark.parametrize(
    ("field", "unit", "dimension", "says"),
    [
        ("co_mg_m3", "ug/m**3", "[mass] / [length] ** 3", "mg/m**3"),  # a factor 1000 between name and unit
        ("no2_ug_m3", "mg/m**3", "[mass] / [length] ** 3", "ug/m**3"),
        ("flow_m3_h", "L/min", "volumetric_flow", "m**3/h"),
        ("flow_m3_h", "m**3/s", "volumetric_flow", "m**3/h"),
        ("speed_km_h", "m/s", "[length] / [time]", "km/h"),
        ("energy_kwh", "MWh", "energy", "kWh"),
        ("benzene_ug_m3", "ng/m**3", "[mass] / [length] ** 3", "ug/m**3"),
    ],
)
def test_compound_unit_suffix_disagreeing_with_the_unit_is_ts105(field, unit, dimension, says):
    text = f'  {field}: {{type: decimal(9,3), unit: "{unit}", dimension: "{dimension}", nullable: true}}'
    report, codes = findings(text)
    assert ("TS105", "error") in codes, report.findings
    finding = next(f for f in report.findings if f.code == "TS105")
    assert f"the name says {says} but the unit is {unit}" in finding.message


@pytest.mark.parametrize(
    ("field", "unit", "dimension"),
    [
        ("co_mg_m3", "mg/m**3", "[mass] / [length] ** 3"),
        ("co_mg_m3", "milligram / meter ** 3", "[mass] / [length] ** 3"),
        ("no2_ug_m3", "µg/m**3", "[mass] / [length] ** 3"),
        ("flow_m3_h", "m**3/h", "volumetric_flow"),
        ("energy_kwh", "kWh", "energy"),
        ("pressure_kpa", "kPa", "pressure"),
        ("rain_mm_h", "mm/h", "[length] / [time]"),
        ("pressure_kpa_g", "kPa", "pressure"),  # gauge: _g is no denominator
    ],
)
def test_compound_unit_suffix_agreeing_with_the_unit_is_fine(field, unit, dimension):
    text = f'  {field}: {{type: decimal(9,3), unit: "{unit}", dimension: "{dimension}", nullable: true}}'
    report, codes = findings(text)
    assert "TS105" not in {c for c, _ in codes}, report.findings


def test_compound_suffix_without_a_unit_is_ts106():
    report, codes = findings("  co_mg_m3: {type: decimal(9,3), nullable: true}")
    assert ("TS106", "warning") in codes
    assert "the name says mg/m**3" in next(f.message for f in report.findings if f.code == "TS106")


def test_catalog_unit_behind_a_compound_suffix_is_ts105():
    fields = "  co_mg_m3: {type: decimal(9,3), unit: per series from catalog, dimension: per series, nullable: true}"
    catalog = (
        "catalog: t\nseries:\n"
        '  S1: {unit: mg/m**3, dimension: "[mass] / [length] ** 3"}\n'
        '  S2: {unit: ug/m**3, dimension: "[mass] / [length] ** 3"}\n'
    )
    report, _ = findings(fields, catalog=catalog)
    found = [f.message for f in report.findings if f.code == "TS105"]
    assert len(found) == 1 and "for series S2 is ug/m**3" in found[0], report.findings


def test_session_clauses_need_a_calendar_from_the_catalog():
    # daily bars on a session cadence, freshness on the session clock: no calendar in the contract
    text = OHLCV_CONTRACT.read_text().replace(
        "cadence: 60s within session; no bars outside session", "cadence: 1 session; stamped at session close"
    )
    text = text.replace("; session boundaries defined per venue calendar", "")
    contract = parse_contract(text + "freshness: {max_age: 15m, clock: session}\n", "daily.yaml")
    catalog = parse_catalog("catalog: ohlcv_1m\nseries:\n  AAPL: {cadence: 60s}\n", "cat.yaml")
    report = lint(contract, catalog)
    assert any(f.code == "TS161" and "calendar" in f.message for f in report.findings)
    named = parse_contract(text.replace("  column: bar_start\n", "  column: bar_start\n  calendar: XNYS\n"), "n.yaml")
    assert not any(f.code == "TS161" for f in lint(named, catalog).findings)


# a pure number (a magnitude, an index, a ratio) states its unit as 1, in any of its common spellings
@pytest.mark.parametrize("unit", ["1", "'1'", "dimensionless", "unitless", "ratio"])
def test_a_unitless_quantity_is_declared_without_a_warning(unit):
    report, _ = findings(f"  magnitude: {{type: decimal(6,2), unit: {unit}, nullable: true}}")
    about = [f for f in report.findings if f.message.startswith("magnitude")]
    assert about == [] and report.passed
    assert parse_contract(TEMPLATE.replace("FIELDS", f"  m: {{type: float64, unit: {unit}}}")).fields["m"].unit in (
        "1",
        unit.strip("'"),
    )


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ("  magnitude: {type: decimal(6,2), nullable: true}", "TS102"),  # no unit stated: still warned
        ("  magnitude: {type: decimal(6,2), dimension: dimensionless, nullable: true}", "TS102"),  # 1 or percent?
        ("  magnitude: {type: decimal(6,2), unit: percent, nullable: true}", "TS103"),  # a scale, no dimension
    ],
)
def test_a_number_without_a_stated_unit_still_warns(fields, code):
    report, codes = findings(fields)
    assert (code, "warning") in codes
    if code == "TS102":
        assert "unit: 1" in next(f.message for f in report.findings if f.code == "TS102")


def test_unit_1_in_yaml_is_the_unit_not_a_number_and_other_numbers_are_refused():
    with pytest.raises(Exception, match="expected text, got a number"):
        parse_contract(TEMPLATE.replace("FIELDS", "  m: {type: float64, unit: 2, nullable: true}"))


def test_a_catalog_series_states_a_pure_number_as_unit_1_too():
    catalog = parse_catalog("catalog: t\nseries:\n  S1: {unit: 1, dimension: dimensionless}\n", "c.yaml")
    assert catalog.series["S1"].unit == "1"
