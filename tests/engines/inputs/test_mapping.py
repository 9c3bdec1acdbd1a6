"""Convert at ingest: renamed columns, epoch and local timestamps, exact unit conversion."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from tests.conftest import EXAMPLES, write
from tests.engines.conftest import OHLCV, SENSOR
from tests.gate.conftest import open_spec
from tscontract import ContractError, InputError, load_catalog, load_contract
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.gate.ingest import ingest

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


# ---------------------------------------------------------------- raw files: validate --mapping
# The machine-temperature vendor shape (examples/vendors/machine_temperature): series M17, its
# device clock in America/Chicago (from the catalog), temperature_degf decimal(9,4).
NAB = EXAMPLES / "vendors" / "machine_temperature"
HEAD = "mapping: t\ntransform_version: '1'\n"
NAB_COLUMNS = "  machine_id: {value: M17}\n  temperature_degf: {from: value}\n  source_id: {value: s}\n"


def check_raw(tmp_path, text, mapping, *, name="raw.csv", catalog=NAB / "catalog.yaml"):
    """Validate the raw file ``text`` converted by ``mapping`` (its text) against the NAB contract."""
    from tscontract import validate

    data = write(tmp_path, text, name)
    return validate(
        NAB / "contract.yaml",
        [data],
        catalog=catalog,
        mapping=write(tmp_path, HEAD + mapping, "m.yaml"),
        now=datetime.fromisoformat("2026-12-01T00:00:00+00:00"),
    )


def failures(report):
    """Failed checks but cadence: these raw files are a few rows each, their gaps are not the point."""
    return {c.id: c.failed_rows for c in report.checks if c.status != "passed" and c.id != "time.cadence"}


def reasons(report, check_id):
    return [(e["row"], e["reason"]) for e in report.check(check_id).examples]


def converted(tmp_path, text, mapping, column, *, name="raw.csv", catalog=NAB / "catalog.yaml"):
    """The converted text of ``column`` per row, as the engine reads it (staging, as ingest does)."""
    from tscontract.engines.duckdb import connect
    from tscontract.engines.inputs.staging import stage_source

    con = connect()
    try:
        stage_source(
            con,
            [write(tmp_path, text, name)],
            load_contract(NAB / "contract.yaml"),
            load_catalog(catalog),
            load_mapping(write(tmp_path, HEAD + mapping, "m.yaml")),
        )
        return [r[0] for r in con.execute(f'SELECT "{column}" FROM __tsc_batch ORDER BY __row').fetchall()]
    finally:
        con.close()


def test_strptime_format_with_date_and_time_columns_joined(tmp_path):
    text = "Date,Time,value\n10/03/2026,18.00.00,70.5\n31/02/2026,25.00.00,71.25\n10/03/2026,,72\n"
    mapping = "columns:\n  ts: {from: [Date, Time], format: '%d/%m/%Y %H.%M.%S', zone: America/Chicago}\n"
    report = check_raw(tmp_path, text, mapping + NAB_COLUMNS)
    # 18:00 CDT is 23:00Z; the impossible date keeps its text and says why; a missing part is null
    assert converted(tmp_path, text, mapping + NAB_COLUMNS, "ts") == [
        "2026-03-10T23:00:00Z",
        "31/02/2026 25.00.00",
        None,
    ]
    assert failures(report) == {"field.ts.type": 1, "field.ts.nullable": 1}
    assert reasons(report, "field.ts.type") == [(2, "'31/02/2026 25.00.00' does not match '%d/%m/%Y %H.%M.%S'")]
    assert report.check("field.ts.type").examples[0]["ts"] == "31/02/2026 25.00.00"


def test_fixed_offsets_as_zone_and_in_the_text(tmp_path):
    text = "t,value\n2026-03-08 02:30:00,70\n"
    for zone, expected in (("+01:00", "2026-03-08T01:30:00"), ("-0500", "2026-03-08T07:30:00")):
        mapping = f"columns:\n  ts: {{from: t, format: '%Y-%m-%d %H:%M:%S', zone: '{zone}'}}\n" + NAB_COLUMNS
        assert converted(tmp_path, text, mapping, "ts") == [expected + "Z"]  # no DST in an offset
    text = "t,value\n2026-03-08 02:30:00+0100,70\n2026-03-08 02:30:00-05:00,71\n2026-03-08 02:30:00,72\n"
    mapping = "columns:\n  ts: {from: t, format: '%Y-%m-%d %H:%M:%S%z'}\n" + NAB_COLUMNS
    assert converted(tmp_path, text, mapping, "ts") == [
        "2026-03-08T01:30:00Z",
        "2026-03-08T07:30:00Z",
        "2026-03-08 02:30:00",
    ]
    report = check_raw(tmp_path, text, mapping)
    assert reasons(report, "field.ts.type") == [(3, "'2026-03-08 02:30:00' does not match '%Y-%m-%d %H:%M:%S%z'")]


SPRING_AND_FALL = (
    "t,value\n"
    "2026-03-08 01:55:00,70\n"  # CST, 07:55Z
    "2026-03-08 02:30:00,71\n"  # does not exist in Chicago
    "2026-03-08 03:00:00,72\n"  # CDT, 08:00Z
    "2026-11-01 01:30:00,73\n"  # twice in Chicago: 06:30Z (CDT) and 07:30Z (CST)
    "2026-11-01 02:00:00,74\n"  # CST, 08:00Z
)


def test_local_times_a_dst_change_skips_or_repeats_fail_unless_the_mapping_chooses(tmp_path):
    rule = "columns:\n  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: America/Chicago"
    report = check_raw(tmp_path, SPRING_AND_FALL, rule + "}\n" + NAB_COLUMNS)
    assert failures(report) == {"field.ts.type": 2}
    assert reasons(report, "field.ts.type") == [
        (
            2,
            "local time 2026-03-08 02:30:00 does not exist in America/Chicago (skipped when clocks go forward; "
            "the mapping may say nonexistent: shift_forward)",
        ),
        (
            4,
            "local time 2026-11-01 01:30:00 is ambiguous in America/Chicago (repeated when clocks go back; "
            "the mapping may say ambiguous: earlier or later)",
        ),
    ]
    chosen = rule + ", nonexistent: shift_forward, ambiguous: earlier}\n" + NAB_COLUMNS
    assert [t[11:16] for t in converted(tmp_path, SPRING_AND_FALL, chosen, "ts")] == [
        "07:55",
        "08:30",  # 02:30 moved forward by the gap: 03:30 CDT
        "08:00",
        "06:30",  # the first 01:30 (CDT)
        "08:00",
    ]
    later = rule + ", ambiguous: later}\n" + NAB_COLUMNS
    assert converted(tmp_path, SPRING_AND_FALL, later, "ts")[3] == "2026-11-01T07:30:00Z"
    assert failures(check_raw(tmp_path, SPRING_AND_FALL, chosen)) == {}


def test_file_order_resolves_a_repeated_hour_written_twice_in_order(tmp_path):
    rule = "columns:\n  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: catalog device_zone, ambiguous: file_order}\n"
    twice = "t,value\n2026-11-01 00:30:00,1\n2026-11-01 01:30:00,2\n2026-11-01 01:30:00,3\n2026-11-01 02:00:00,4\n"
    assert [t[11:16] for t in converted(tmp_path, twice, rule + NAB_COLUMNS, "ts")] == [
        "05:30",
        "06:30",
        "07:30",
        "08:00",
    ]
    once = "t,value\n2026-11-01 01:30:00,2\n2026-11-01 02:00:00,4\n"  # the vendor lost one of them
    report = check_raw(tmp_path, once, rule + NAB_COLUMNS)
    assert reasons(report, "field.ts.type") == [
        (
            1,
            "local time 2026-11-01 01:30:00 is ambiguous in America/Chicago and the file has it 1 time(s) for "
            "this series (file_order needs it twice, in order)",
        )
    ]


def test_zone_per_series_from_the_catalog(tmp_path):
    catalog = write(
        tmp_path,
        "catalog: machine_temperature\nseries:\n"
        "  M17: {cadence: 300s, device_zone: America/Chicago}\n"
        "  M18: {cadence: 300s, device_zone: Europe/Rome}\n"
        "  M19: {cadence: 300s}\n",
        "catalog.yaml",
    )
    text = "machine,t,value\nM17,2026-11-30 12:00:00,1\nM18,2026-11-30 12:00:00,2\nM19,2026-11-30 12:00:00,3\n"
    mapping = (
        "columns:\n  machine_id: {from: machine}\n"
        "  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: catalog device_zone}\n"
        "  temperature_degf: {from: value}\n  source_id: {value: s}\n"
    )
    assert converted(tmp_path, text, mapping, "ts", catalog=catalog) == [
        "2026-11-30T18:00:00Z",
        "2026-11-30T11:00:00Z",
        "2026-11-30 12:00:00",
    ]
    report = check_raw(tmp_path, text, mapping, catalog=catalog)
    assert reasons(report, "field.ts.type") == [(3, "no device_zone in the catalog for series 'M19'")]


def test_sentinels_per_column_and_mapping_wide(tmp_path):
    text = "t,value,other\n2026-11-30 12:00:00,-200,-200\n2026-11-30 12:05:00,NA,1\n"
    mapping = (
        "null_values: [-200]\ncolumns:\n  machine_id: {value: M17}\n"
        "  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: catalog device_zone}\n"
        "  temperature_degf: {from: value, null_values: ['-200', NA]}\n  source_id: {from: other}\n"
    )
    assert converted(tmp_path, text, mapping, "temperature_degf") == [None, None]
    assert converted(tmp_path, text, mapping, "source_id") == [None, "1"]  # the mapping-wide list
    keep = mapping.replace("null_values: ['-200', NA]", "null_values: []")  # -200 is a value here
    assert converted(tmp_path, text, keep, "temperature_degf") == ["-200", "NA"]


def test_decimal_comma_and_rounding_of_text_decimals(tmp_path):
    text = 't,value\n2026-11-30 12:00:00,"70,123449"\n2026-11-30 12:05:00,"70,12345"\n2026-11-30 12:10:00,70.5\n'
    mapping = (
        "decimal_separator: ','\ncolumns:\n  machine_id: {value: M17}\n"
        "  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: catalog device_zone}\n"
        "  temperature_degf: {from: value, round: half_even}\n  source_id: {value: s}\n"
    )
    # decimal(9,4): rounded half-even (70.12345 -> 70.1234), only because the mapping says so
    assert converted(tmp_path, text, mapping, "temperature_degf") == ["70.1234", "70.1234", "70.5"]
    report = check_raw(tmp_path, text, mapping)
    assert reasons(report, "field.temperature_degf.type") == [
        (3, "'70.5' has '.' where the mapping's decimal separator is ','")
    ]
    unrounded = check_raw(tmp_path, text.replace("70.5", '"70,5"'), mapping.replace(", round: half_even", ""))
    assert reasons(unrounded, "field.temperature_degf.type") == [
        (1, "more than 4 decimal places"),
        (2, "more than 4 decimal places"),
    ]
    text = "t,value\n2026-11-30 12:00:00,seventy\n2026-11-30 12:05:00,1e2\n"
    report = check_raw(tmp_path, text, mapping.replace("decimal_separator: ','\n", ""))
    assert failures(report) == {"field.temperature_degf.type": 2}  # rounding never turns text into a number


def test_column_from_the_file_name(tmp_path):
    mapping = (
        "columns:\n  machine_id: {file_name: '^machine_(?P<machine>[A-Z0-9]+)_'}\n"
        "  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: catalog device_zone}\n"
        "  temperature_degf: {from: value}\n  source_id: {value: s}\n"
    )
    text = "t,value\n2026-11-30 12:00:00,70\n"
    assert converted(tmp_path, text, mapping, "machine_id", name="machine_M17_day.csv") == ["M17"]
    # the zone comes from the catalog entry of the series named by the file
    assert converted(tmp_path, text, mapping, "ts", name="machine_M17_day.csv") == ["2026-11-30T18:00:00Z"]
    with pytest.raises(InputError, match=r"file name 'M17\.csv' does not match machine_id's file_name"):
        check_raw(tmp_path, text, mapping, name="M17.csv")


def test_filter_drops_rows_counted_in_the_report(tmp_path):
    text = "t,value,status\n2026-11-30 12:00:00,70,ok\n2026-11-30 12:05:00,71,maintenance\n,,\n"
    mapping = (
        "filter: \"status = 'ok'\"\ncolumns:\n  machine_id: {value: M17}\n"
        "  ts: {from: t, format: '%Y-%m-%d %H:%M:%S', zone: catalog device_zone}\n"
        "  temperature_degf: {from: value}\n  source_id: {value: s}\ndrop: [status]\n"
    )
    report = check_raw(tmp_path, text, mapping)
    assert report.passed and report.rows == 1
    assert report.conversion == {
        "mapping": "t",
        "transform_version": "1",
        "rows_read": 3,
        "dropped": [{"id": "mapping.filter", "clause": "status = 'ok'", "rows": 2}],
    }
    with pytest.raises(InputError, match=r"filter \"stat = 'ok'\" names 'stat', which is not a column of the input"):
        check_raw(tmp_path, text, mapping.replace("status = 'ok'", "stat = 'ok'"))


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("{from: t, format: '%Y'}", "a format without %z reads a local time: give 'zone'"),
        ("{from: t, format: '%Y %z', zone: UTC}", r"the format reads the UTC offset \(%z\): no 'zone'"),
        ("{from: t, parse: rfc3339, format: '%Y'}", "give 'parse' or 'format', not both"),
        ("{from: [a, b]}", "'from' with a list joins date and time columns"),
        ("{from: t, parse: epoch_ms, zone: UTC}", "an epoch is an instant: no 'zone'"),
        ("{from: t, format: '%Y', zone: '+01:00', ambiguous: earlier}", "apply to a zone with DST changes"),
        ("{from: t, format: '%Y', zone: Mars/Olympus}", "'Mars/Olympus' is not an IANA time zone"),
        ("{file_name: '^(\\d+)'}", "give the part of the file name to take as one named group"),
        ("{from: t, ambiguous: sometimes, zone: UTC}", "ambiguous"),
    ],
)
def test_mapping_rules_that_cannot_work_are_refused_with_their_line(tmp_path, rule, message):
    path = write(tmp_path, HEAD + "columns:\n  ts: " + rule + "\n", "m.yaml")
    with pytest.raises(ContractError, match=message) as info:
        load_mapping(path)
    assert info.value.location.line == 4


@pytest.mark.parametrize(
    "expression",
    ["x IN (SELECT 1)", "count(*) > 1", "row_number() OVER () > 1", "a; DROP TABLE t", "r.x = 1", "x ="],
)
def test_filter_is_one_condition_on_one_row(tmp_path, expression):
    path = write(tmp_path, HEAD + f'filter: "{expression}"\n', "m.yaml")
    with pytest.raises(ContractError, match="filter"):
        load_mapping(path)


def test_unparsable_epoch_keeps_its_text_and_reason(tmp_path):
    text = "ts,value\n1796049000000,70\n17960490x,71\n1796049000,72\n"
    mapping = "columns:\n  ts: {from: ts, parse: epoch_ms}\n" + NAB_COLUMNS
    report = check_raw(tmp_path, text, mapping)
    assert reasons(report, "field.ts.type") == [
        (2, "'17960490x' is not an epoch_ms integer"),
        (3, "'1796049000' as epoch_ms is outside 1990-01-01..2100-01-01: wrong epoch unit?"),
    ]


def test_csv_dialect_of_the_raw_file(tmp_path):
    text = 'Date;Time;value\n08/03/2026;01.55.00;70,5\n08/03/2026;03.00.00;"71,25"\n;;\n'
    mapping = (
        "csv: {delimiter: ';'}\ndecimal_separator: ','\nfilter: Date IS NOT NULL\ncolumns:\n"
        "  machine_id: {value: M17}\n"
        "  ts: {from: [Date, Time], format: '%d/%m/%Y %H.%M.%S', zone: catalog device_zone}\n"
        "  temperature_degf: {from: value}\n  source_id: {value: s}\n"
    )
    assert converted(tmp_path, text, mapping, "temperature_degf") == ["70.5", "71.25"]
    report = check_raw(tmp_path, text, mapping)
    assert (report.rows, failures(report)) == (2, {})
    assert report.conversion["dropped"] == [{"id": "mapping.filter", "clause": "Date IS NOT NULL", "rows": 1}]
    # a malformed line (four fields) is kept whatever the filter says: it fails source.rows, never vanishes
    report = check_raw(tmp_path, text + ";;;\n", mapping)
    assert (report.rows, failures(report)) == (3, {"source.rows": 1})
    with pytest.raises(ContractError, match="delimiter and quote are both"):
        load_mapping(write(tmp_path, HEAD + "csv: {delimiter: '\"'}\n", "bad.yaml"))
