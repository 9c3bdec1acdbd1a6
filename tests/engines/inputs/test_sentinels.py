"""Sentinels (issue 32): a CGM's 40 (LOW), 400 (HIGH) and nil become a null value and a declared flag.

Matching is exact and typed: a number sentinel matches a number column's equal value, and in a text
file the cell written as the mapping writes it; a cell that reads as the number but is written
otherwise fails the type check with its reason; a text sentinel on a number column is refused.
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, run_cli, write
from tscontract import ContractError, InputError, validate
from tscontract.contract.loader import parse_contract
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.engines.inputs.staging import BATCH_TABLE, stage

CGM = EXAMPLES / "vendors" / "cgm_glucose"
CONTRACT = """\
contract: cgm
version: 1.0.0
key: [sensor, ts]
time: {column: ts, precision: s, timezone: UTC instant, cadence: irregular}
fields:
  sensor: {type: string, nullable: false}
  ts: {type: timestamp_s_utc, nullable: false}
  glucose: {type: int32, unit: mg/dL, dimension: "[mass] / [length] ** 3", nullable: true}
  glucose_flag: {type: enum[below_range, above_range, no_reading], nullable: true, flag_of: glucose}
invariants:
  - glucose between 41 and 399
"""
MAPPING = """\
mapping: cgm_csv
transform_version: 1.0.0
columns:
  glucose:
    from: reading
    sentinels:
      flag: glucose_flag
      values: {below_range: [40], above_range: [400], no_reading: [nil]}
"""


def readings_csv(tmp_path, cells: list[str], name: str = "cgm.csv"):
    lines = ["sensor,ts,reading"]
    lines += [f"S1,2026-01-12T{i // 60:02d}:{i % 60:02d}:00Z,{cell}" for i, cell in enumerate(cells)]
    return write(tmp_path, "\n".join(lines) + "\n", name)


def checks(report) -> dict[str, dict]:
    return {c["id"]: c for c in report.to_json()["checks"]}


def converted(tmp_path, data, mapping: str = MAPPING, contract: str = CONTRACT) -> list[tuple]:
    con = duckdb.connect()
    stage(con, data, parse_contract(contract), None, load_mapping(write(tmp_path, mapping, "m.yaml")))
    return con.execute(f"SELECT glucose, glucose_flag FROM {BATCH_TABLE} ORDER BY __row").fetchall()


def test_sentinels_become_a_null_value_and_their_flag(tmp_path):
    data = readings_csv(tmp_path, ["125", "40", "400", "nil", "", "41"])
    assert converted(tmp_path, data) == [
        ("125", None),
        (None, "below_range"),
        (None, "above_range"),
        (None, "no_reading"),
        (None, None),  # an empty cell is no sentinel unless the mapping lists null
        ("41", None),
    ]
    contract = write(tmp_path, CONTRACT, "c.yaml")
    report = validate(contract, data, mapping=write(tmp_path, MAPPING, "m.yaml"))
    assert report.passed, report.to_json()  # the range clause sees no fake 40 or 400


def test_a_null_sentinel_flags_a_missing_cell(tmp_path):
    mapping = MAPPING.replace("no_reading: [nil]", "no_reading: [nil, null]")
    assert converted(tmp_path, readings_csv(tmp_path, ["", "nil", "90"]), mapping) == [
        (None, "no_reading"),
        (None, "no_reading"),
        ("90", None),
    ]


def test_text_matching_is_exact_and_a_number_written_otherwise_fails_with_its_reason(tmp_path):
    data = readings_csv(tmp_path, ["40.0", "040", " 40", "NIL", "4e1"])
    report = validate(write(tmp_path, CONTRACT, "c.yaml"), data, mapping=write(tmp_path, MAPPING, "m.yaml"))
    found = checks(report)
    typed = found["field.glucose.type"]
    assert typed["failed_rows"] == 5
    reasons = [e["reason"] for e in typed["examples"]]
    assert (
        reasons[0]
        == "'40.0' equals the sentinel 40 but is not written as it: list '40.0' among the sentinels or correct the file"
    )
    assert "equals the sentinel 40" in reasons[1] and "equals the sentinel 40" in reasons[2]
    assert found["field.glucose_flag.type"]["status"] == "passed"  # no flag set for any of them
    # listed as text, '40.0' is a sentinel of its own: matched exactly
    quoted = MAPPING.replace("below_range: [40]", "below_range: [40, '40.0']")
    assert converted(tmp_path, readings_csv(tmp_path, ["40.0", "40", "40.00"], "b.csv"), quoted)[:2] == [
        (None, "below_range"),
        (None, "below_range"),
    ]


def test_on_a_number_column_a_number_sentinel_matches_its_value_and_a_text_one_is_refused(tmp_path):
    table = pa.table(
        {
            "sensor": ["S1"] * 3,
            "ts": ["2026-01-12T00:00:00Z", "2026-01-12T00:05:00Z", "2026-01-12T00:10:00Z"],
            "reading": pa.array([40.0, 400.0, 125.0], pa.float64()),
        }
    )
    path = tmp_path / "cgm.parquet"
    pq.write_table(table, path)
    numbers = MAPPING.replace("no_reading: [nil]", "no_reading: [null]")  # a DOUBLE cell is never 'nil'
    assert converted(tmp_path, path, numbers) == [(None, "below_range"), (None, "above_range"), ("125.0", None)]
    text = numbers.replace("below_range: [40]", "below_range: ['40']")
    with pytest.raises(ContractError, match=r"m\.yaml:\d+:\d+: columns\.glucose\.sentinels\.values\.below_range: "):
        converted(tmp_path, path, text)
    with pytest.raises(
        ContractError, match="sentinel '40' is text but source column 'reading' is DOUBLE: a DOUBLE cell is never text"
    ):
        converted(tmp_path, path, text)


@pytest.mark.parametrize(
    ("contract", "mapping", "message"),
    [
        (
            CONTRACT.replace(
                "  glucose_flag: {type: enum[below_range, above_range, no_reading], nullable: true, "
                "flag_of: glucose}\n",
                "",
            ),
            MAPPING,
            r"columns\.glucose\.sentinels\.flag: flag column 'glucose_flag' is not a field of cgm: declare it",
        ),
        (
            CONTRACT.replace(", flag_of: glucose}", "}"),
            MAPPING,
            r"columns\.glucose\.sentinels\.flag: flag column 'glucose_flag' must say flag_of: glucose",
        ),
        (
            CONTRACT,
            MAPPING.replace("no_reading: [nil]", "lost: [nil]"),
            r"columns\.glucose\.sentinels\.values\.lost: 'lost' is not a value of glucose_flag",
        ),
        (
            CONTRACT,
            MAPPING + "  glucose_flag: {value: no_reading}\n",
            r"columns\.glucose\.sentinels\.flag: 'glucose_flag' is set by the sentinels",
        ),
    ],
)
def test_a_mapping_names_only_a_declared_flag_and_its_values(tmp_path, contract, mapping, message):
    data = readings_csv(tmp_path, ["40"])
    with pytest.raises(ContractError, match=r"m\.yaml:\d+:\d+: " + message):
        converted(tmp_path, data, mapping, contract)


def test_the_flag_must_be_an_enum_field_of_a_nullable_value(tmp_path):
    with pytest.raises(ContractError, match=r"fields\.glucose_flag\.type: flag 'glucose_flag' is string: a flag lists"):
        parse_contract(CONTRACT.replace("type: enum[below_range, above_range, no_reading]", "type: string"))
    with pytest.raises(ContractError, match="'glucose' is never null, so a flag of it could never be set"):
        parse_contract(CONTRACT.replace('** 3", nullable: true', '** 3", nullable: false'))
    with pytest.raises(ContractError, match="flag_of names 'glucoze', which is not another field"):
        parse_contract(CONTRACT.replace("flag_of: glucose}", "flag_of: glucoze}"))


def test_sentinels_are_texts_numbers_or_null_each_listed_once(tmp_path):
    for values, message in (
        ("{below_range: [40], above_range: [40]}", "sentinel 40 is listed under below_range and above_range"),
        ("{below_range: [true]}", "a sentinel is a text, a number or null"),
        ("{below_range: []}", "give a list of the source values"),
    ):
        text = MAPPING.replace("{below_range: [40], above_range: [400], no_reading: [nil]}", values)
        with pytest.raises(ContractError, match=message):
            load_mapping(write(tmp_path, text, "m.yaml"))
    with pytest.raises(ContractError, match="sentinels apply to a value read 'from' one source column"):
        load_mapping(write(tmp_path, MAPPING.replace("from: reading", "value: 1"), "m.yaml"))


def test_a_mapping_built_in_python_names_itself_and_the_clause(tmp_path):
    from tscontract.engines.inputs.mapping import Mapping

    mapping = Mapping.model_validate(
        load_mapping(write(tmp_path, MAPPING.replace("no_reading: [nil]", "lost: [nil]"), "m.yaml")).model_dump()
    )
    with pytest.raises(InputError, match=r"^mapping cgm_csv: columns\.glucose\.sentinels\.values\.lost: "):
        validate(write(tmp_path, CONTRACT, "c.yaml"), readings_csv(tmp_path, ["40"]), mapping=mapping)


_cells = st.one_of(
    st.integers(41, 399).map(str),
    st.sampled_from(["40", "400", "nil", ""]),  # "" is an empty cell: null, listed as a sentinel here
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(_cells, min_size=1, max_size=40))
def test_no_sentinel_survives_as_a_value_and_none_is_lost(tmp_path, cells):
    mapping = MAPPING.replace("no_reading: [nil]", "no_reading: [nil, null]")
    rows = converted(tmp_path, readings_csv(tmp_path, cells), mapping)
    assert len(rows) == len(cells)  # no row added or dropped
    flags = {"40": "below_range", "400": "above_range", "nil": "no_reading", "": "no_reading"}
    for cell, (value, flag) in zip(cells, rows, strict=True):
        assert value not in flags  # never a sentinel in the value column
        assert (value, flag) == ((None, flags[cell]) if cell in flags else (cell, None))


def test_cgm_export_validates_and_ingests_with_its_flags_end_to_end(tmp_path):
    args = [CGM / "contract.yaml", CGM / "data" / "cgm_8G1234.csv", "--mapping", CGM / "mapping.yaml"]
    good = run_cli("validate", *args, "--format", "json")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = run_cli("validate", *args[:1], CGM / "data" / "bad" / "cgm_8G1234.csv", *args[2:], "--format", "json")
    assert bad.returncode == 1

    failed = {c["id"]: c for c in json.loads(bad.stdout)["checks"] if c["status"] == "failed"}
    assert set(failed) == {"field.glucose_mg_dl.type", "key.unique", "invariants[0]"}
    assert [e["glucose_mg_dl"] for e in failed["field.glucose_mg_dl.type"]["examples"]] == ["40.0", "LOW"]
    assert [e["glucose_mg_dl"] for e in failed["invariants[0]"]["examples"]] == [412]
    store = tmp_path / "w.duckdb"
    ingested = run_cli("ingest", *args, "--store", store)
    assert ingested.returncode == 0, ingested.stderr
    assert "315 rows in (3 dropped by the mapping), 312 published, 0 quarantined" in ingested.stdout
    with duckdb.connect(str(store), read_only=True) as con:
        counts = con.execute(
            "SELECT glucose_flag, count(*), count(glucose_mg_dl) FROM cgm_glucose GROUP BY 1 ORDER BY 1"
        ).fetchall()
    assert counts == [
        ("above_range", 3, 0),
        ("below_range", 5, 0),
        ("no_reading", 6, 0),
        ("warming_up", 24, 0),
        (None, 274, 274),
    ]
    quarantined = run_cli("ingest", *args[:1], CGM / "data" / "bad" / "cgm_8G1234.csv", *args[2:], "--store", store)
    assert quarantined.returncode == 1
    assert "64 rows in (3 dropped by the mapping), 56 published, 5 quarantined" in quarantined.stdout
    with duckdb.connect(str(store), read_only=True) as con:
        held = con.execute("SELECT _record FROM cgm_glucose__quarantine ORDER BY _row").fetchall()
    assert json.loads(held[0][0])["Glucose Value (mg/dL)"] == "40.0"  # as written, with its reason


def test_a_mapping_error_is_one_line_exit_2_naming_file_clause_and_column(tmp_path):
    mapping = write(
        tmp_path, (CGM / "mapping.yaml").read_text().replace("warming_up: [null]", "warmup: [null]"), "m.yaml"
    )
    result = run_cli("validate", CGM / "contract.yaml", CGM / "data" / "cgm_8G1234.csv", "--mapping", mapping)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "m.yaml:" in lines[0] and "columns.glucose_mg_dl.sentinels.values.warmup" in lines[0]
    assert "'warmup' is not a value of glucose_flag" in lines[0]


def test_a_flag_outside_its_values_fails_its_type(tmp_path):
    rows = ["S1,2026-01-12T00:00:00Z,,low", "S1,2026-01-12T00:05:00Z,,below_range"]
    data = write(tmp_path, "\n".join(["sensor,ts,glucose,glucose_flag", *rows]) + "\n", "flags.csv")
    found = checks(validate(write(tmp_path, CONTRACT, "c.yaml"), data))
    assert found["field.glucose_flag.type"]["failed_rows"] == 1
    assert found["field.glucose_flag.type"]["examples"][0]["glucose_flag"] == "low"
    assert found["field.glucose_flag.flag_of"]["status"] == "passed"


@pytest.mark.parametrize(("old", "new", "compatible"), [(False, True, False), (True, False, True)])
def test_adding_flag_of_is_breaking_and_removing_it_is_not(old, new, compatible):
    from tscontract.evolution.diff import diff

    def version(flagged: bool, number: str):
        text = CONTRACT.replace("1.0.0", number)
        return parse_contract(text if flagged else text.replace(", flag_of: glucose}", "}"))

    changes = [c for c in diff(version(old, "1.0.0"), version(new, "2.0.0")).changes if "flag_of" in c.path]
    assert changes
    assert all(c.compatible != "no" for c in changes) is compatible


def test_the_contract_as_json_states_the_flag():
    from tscontract.contract.serialize import contract_to_json

    assert contract_to_json(parse_contract(CONTRACT))["fields"]["glucose_flag"]["flag_of"] == "glucose"


@pytest.mark.parametrize(
    "arrow_type", [pa.int16(), pa.int64(), pa.uint32(), pa.float32(), pa.decimal128(5, 1)], ids=str
)
def test_a_number_sentinel_matches_its_value_in_every_number_type(tmp_path, arrow_type):
    from decimal import Decimal

    values = [Decimal(40), Decimal(400), Decimal(125)] if pa.types.is_decimal(arrow_type) else [40, 400, 125]
    table = pa.table(
        {
            "sensor": ["S1"] * 3,
            "ts": ["2026-01-12T00:00:00Z", "2026-01-12T00:05:00Z", "2026-01-12T00:10:00Z"],
            "reading": pa.array(values, arrow_type),
        }
    )
    pq.write_table(table, tmp_path / "cgm.parquet")
    numbers = MAPPING.replace("no_reading: [nil]", "no_reading: [null]")
    rows = converted(tmp_path, tmp_path / "cgm.parquet", numbers)
    assert [flag for _, flag in rows] == ["below_range", "above_range", None]
    assert rows[0][0] is None and rows[1][0] is None and Decimal(rows[2][0]) == 125


def test_a_number_sentinel_on_a_boolean_column_is_refused(tmp_path):
    table = pa.table({"sensor": ["S1"], "ts": ["2026-01-12T00:00:00Z"], "reading": pa.array([True])})
    pq.write_table(table, tmp_path / "cgm.parquet")
    numbers = MAPPING.replace("no_reading: [nil]", "no_reading: [null]")
    with pytest.raises(ContractError, match="sentinel 40 is a number but source column 'reading' is BOOLEAN"):
        converted(tmp_path, tmp_path / "cgm.parquet", numbers)


def test_a_text_sentinel_with_quotes_is_a_literal_never_sql(tmp_path):
    # a mapping is untrusted input: a sentinel written as SQL matches only a cell written exactly so
    hostile = "x' OR TRUE OR '"
    mapping = MAPPING.replace("no_reading: [nil]", "no_reading: [nil, \"x' OR TRUE OR '\"]")
    cells = ["125", "\"x' OR TRUE OR '\"", "nil"]
    rows = converted(tmp_path, readings_csv(tmp_path, cells), mapping)
    assert rows == [("125", None), (None, "no_reading"), (None, "no_reading")], hostile
