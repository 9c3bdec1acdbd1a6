"""Hostile or just unusual data files: each read right, or refused in one line (exit 2) within bounds.

Big inputs are generated in ``tmp_path`` at test time, each kept to a few seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import run_cli, write
from tscontract import load_contract, validate
from tscontract.gate.ingest import ingest
from tscontract.gate.store import DuckDBStore

UNITS = ("s", "ms", "us", "ns")
ZONES = (None, "UTC", "Europe/Berlin", "+05:30")
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
# 2026-11-30T14:37:00Z and two more instants, each with a last digit in its unit's place
_BASE_S = 1_796_049_420


def _contract(tmp_path: Path, unit: str) -> Path:
    return write(
        tmp_path,
        f"""contract: ticks
version: 1.0.0
owner: t@example
key: [sensor, ts]
time:
  column: ts
  precision: {unit}
  timezone: UTC instant
fields:
  sensor: {{type: string, nullable: false}}
  ts: {{type: timestamp_{unit}_utc, nullable: false}}
  value: {{type: float64, nullable: false}}
""",
        f"ticks_{unit}.yaml",
    )


def _ticks(unit: str, zone: str | None) -> pa.Table:
    """Three instants of ``unit`` written with ``zone`` (None: naive), each with a non-zero last digit."""
    per = _PER_SECOND[unit]
    last = 1 if unit == "s" else 7  # whole seconds for s; a digit in the unit's last place otherwise
    counts = [(_BASE_S + 60 * i) * per + (last if unit != "s" else 0) for i in range(3)]
    return pa.table(
        {
            "sensor": ["a", "a", "a"],
            "ts": pa.array(counts, pa.timestamp(unit, tz=zone)),
            "value": [1.0, 2.0, 3.0],
        }
    )


def _expected_example(unit: str) -> str:
    digits = {"s": "", "ms": ".007", "us": ".000007", "ns": ".000000007"}[unit]
    return f"2026-11-30T14:37:00{digits}Z"


def _finer(data_unit: str, contract_unit: str) -> bool:
    return UNITS.index(data_unit) > UNITS.index(contract_unit)


@pytest.mark.parametrize("zone", ZONES, ids=lambda z: str(z))
@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("as_file", [True, False], ids=["parquet", "arrow"])
def test_every_timestamp_unit_and_zone_against_every_precision(tmp_path, unit, zone, as_file):
    """A zoned timestamp is an instant (its zone is how it was shown): accepted and compared as UTC.
    A naive one fails the UTC-instant rule on every row. Digits finer than the contract's precision fail it."""
    table = _ticks(unit, zone)
    data: object = table
    if as_file:
        data = tmp_path / "ticks.parquet"
        pq.write_table(table, data)
    for contract_unit in UNITS:
        report = validate(_contract(tmp_path, contract_unit), data)
        timezone = report.check("time.timezone")
        precision = report.check("time.precision")
        assert report.check("field.ts.type").status == "passed", (contract_unit, report.check("field.ts.type"))
        if zone is None:
            assert (timezone.status, timezone.failed_rows) == ("failed", 3), contract_unit
        else:
            assert timezone.status == "passed", (contract_unit, timezone.message)
        if _finer(unit, contract_unit):
            assert (precision.status, precision.failed_rows) == ("failed", 3), contract_unit
            if zone is not None:  # the example is the instant in UTC, every digit the file held
                assert precision.examples[0]["ts"] == _expected_example(unit)
        else:
            assert precision.status == "passed", (contract_unit, precision.examples)
        if zone is not None and not _finer(unit, contract_unit):
            assert report.passed, [(c.id, c.message, c.examples) for c in report.failed]


@pytest.mark.parametrize("zone", ZONES, ids=lambda z: str(z))
@pytest.mark.parametrize("unit", UNITS)
def test_ingest_publishes_zoned_instants_of_every_unit_as_utc(tmp_path, unit, zone):
    data = tmp_path / "ticks.parquet"
    pq.write_table(_ticks(unit, zone), data)
    store = DuckDBStore(str(tmp_path / "store.duckdb"))
    try:
        result = ingest(load_contract(_contract(tmp_path, "ns")), [data], store, now=datetime(2026, 12, 1, tzinfo=UTC))
        published = store.query("SELECT min(ts) FROM ticks__published")
    finally:
        store.close()
    if zone is None:  # naive: no instant, every row quarantined by the UTC rule
        assert (result.published, result.quarantined) == (0, 3)
        assert result.row_failures == {"time.timezone": 3}
    else:
        assert (result.published, result.quarantined) == (3, 0), result.row_failures
        first = published[0][0].astimezone(UTC)
        assert first.replace(microsecond=0) == datetime(2026, 11, 30, 14, 37, tzinfo=UTC)


def test_pandas_default_nanosecond_utc_parquet_passes(tmp_path):
    """The incident: pandas' ``datetime64[ns, UTC]`` written to Parquet, every good row quarantined."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "sensor": ["a", "a"],
            "ts": pd.to_datetime(["2026-11-30T14:37:00Z", "2026-11-30T14:38:00.123456789Z"], format="ISO8601"),
            "value": [1.0, 2.0],
        }
    )
    assert str(frame["ts"].dtype) == "datetime64[ns, UTC]"
    data = tmp_path / "frame.parquet"
    frame.to_parquet(data)
    assert validate(_contract(tmp_path, "ns"), data).passed
    assert validate(_contract(tmp_path, "ns"), frame).passed
    report = validate(_contract(tmp_path, "ms"), data)
    assert report.check("time.timezone").status == "passed"
    assert report.check("time.precision").examples[0]["ts"] == "2026-11-30T14:38:00.123456789Z"


@pytest.mark.parametrize("zone", ZONES, ids=lambda z: str(z))
@pytest.mark.parametrize("unit", UNITS)
def test_chdb_reads_every_unit_and_zone_as_duckdb_does(tmp_path, unit, zone):
    pytest.importorskip("chdb", reason="the chdb engine is part of the dev install")
    data = tmp_path / "ticks.parquet"
    pq.write_table(_ticks(unit, zone), data)
    for contract_unit in ("ms", "us", "ns"):
        contract = _contract(tmp_path, contract_unit)
        duck, ch = (validate(contract, data, engine=e).to_json() for e in ("duckdb", "chdb"))
        for report in (duck, ch):
            report.pop("elapsed_s"), report.pop("engine")
        assert duck == ch, contract_unit


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_mapping_reads_zoned_columns_as_instants_and_naive_ones_in_the_stated_zone(tmp_path, unit):
    """A mapping passes a zoned column on as the UTC instant it is; a naive one needs the mapping's zone."""
    table = _ticks(unit, "Europe/Berlin").rename_columns(["sensor", "t", "value"])
    zoned, naive = tmp_path / "zoned.parquet", tmp_path / "naive.parquet"
    pq.write_table(table, zoned)
    pq.write_table(_ticks(unit, None).rename_columns(["sensor", "t", "value"]), naive)
    columns = "  sensor: {from: sensor}\n  value: {from: value}\n"
    plain = write(tmp_path, f"mapping: m\ntransform_version: 1.0.0\ncolumns:\n{columns}  ts: {{from: t}}\n", "m1.yaml")
    local = write(
        tmp_path,
        f"mapping: m\ntransform_version: 1.0.0\ncolumns:\n{columns}  ts: {{from: t, parse: rfc3339, zone: UTC}}\n",
        "m2.yaml",
    )
    contract = _contract(tmp_path, "ns")
    assert validate(contract, zoned, mapping=plain).passed
    assert validate(contract, naive, mapping=local).passed
    assert validate(contract, naive, mapping=plain).check("time.timezone").failed_rows == 3


def test_init_drafts_zoned_nanoseconds_as_utc_instants(tmp_path):
    data = tmp_path / "ticks.parquet"
    pq.write_table(_ticks("ns", "+05:30"), data)
    done = run_cli("init", data, "--out", tmp_path / "drafted.yaml")
    assert done.returncode == 0, done.stderr
    assert "ts: {type: timestamp_ns_utc" in (tmp_path / "drafted.yaml").read_text()


# ---------------------------------------------------------------------------- CSV and JSON lines bounds


def _one_line_refusal(done: object, *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-500:]
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_a_header_over_a_mebibyte_is_refused_before_any_reader(tmp_path):
    data = tmp_path / "long_header.csv"
    with data.open("w") as handle:
        handle.write("x" * (8 << 20) + "\n1\n")  # 8 MiB of header (the incident: 200 MB, killed at 5 GB)
    done = run_cli("validate", _contract(tmp_path, "ms"), data)
    _one_line_refusal(done, "long_header.csv", "the header (line 1) is longer than 1 MiB")


def test_more_columns_than_the_bound_are_refused_in_one_line(tmp_path):
    data = tmp_path / "wide.csv"
    data.write_text(",".join(f"c{i}" for i in range(20_000)) + "\n" + "," * 19_999 + "\n")
    done = run_cli("validate", _contract(tmp_path, "ms"), data)
    _one_line_refusal(done, "wide.csv", "the header has 20000 fields; at most 2,000 columns are read")
    empty = tmp_path / "empty_columns.csv"  # 20,000 unnamed columns: named by position, the same bound
    empty.write_text("," * 19_999 + "\n")
    _one_line_refusal(run_cli("validate", _contract(tmp_path, "ms"), empty), "empty_columns.csv", "2,000 columns")


def test_lone_cr_line_ends_are_named_not_a_repeated_column(tmp_path):
    data = tmp_path / "mac.csv"
    data.write_bytes(b"sensor,ts,value\r" + b"a,2026-11-30T14:37:00Z,1\r" * 3)
    done = run_cli("validate", _contract(tmp_path, "ms"), data)
    _one_line_refusal(done, "mac.csv: line 1 has a carriage return without a line feed; lines end in LF or CRLF")
    assert "appears twice" not in done.stderr


def test_json_lines_that_are_no_object_are_malformed_rows_like_csv(tmp_path):
    data = tmp_path / "mixed.jsonl"
    good = '{"sensor":"a","ts":"2026-11-30T14:3%d:00Z","value":1.5}'
    data.write_text("\n".join([good % 7, "[1, 2]", "42", '"text"', "null", good % 8]) + "\n")
    report = validate(_contract(tmp_path, "ms"), data)
    rows = report.check("source.rows")
    assert (rows.status, rows.failed_rows, report.rows) == ("failed", 4, 6)
    assert [(e["row"], e["reason"], e["text"]) for e in rows.examples] == [
        (2, "a JSON array where a record (an object) is expected", "[1, 2]"),
        (3, "a JSON number where a record (an object) is expected", "42"),
        (4, "a JSON string where a record (an object) is expected", '"text"'),
        (5, "a JSON null where a record (an object) is expected", "null"),
    ]
    assert report.check("field.ts.type").status == "passed"  # the other rows are read and judged
    assert report.check("key.unique").status == "passed"


# ---------------------------------------------------------------------------- bounds files


def test_a_bounds_file_of_another_contract_or_major_version_is_refused(tmp_path):
    history = tmp_path / "history.csv"
    history.write_text(
        "sensor,ts,value\n" + "".join(f"a,2026-11-30T14:{m:02d}:00Z,{m}.5\n" for m in range(30)), encoding="utf-8"
    )
    contract = _contract(tmp_path, "ms")
    out = tmp_path / "bounds.yaml"
    assert run_cli("profile", contract, history, "--out", out).returncode == 0
    assert run_cli("validate", contract, history, "--bounds", out).returncode == 0
    other = tmp_path / "other.yaml"
    other.write_text(contract.read_text().replace("contract: ticks", "contract: prices"))
    done = run_cli("validate", other, history, "--bounds", out)
    _one_line_refusal(done, "the bounds were profiled for ticks 1.0.0, not prices 1.0.0")
    major = tmp_path / "major.yaml"
    major.write_text(contract.read_text().replace("version: 1.0.0", "version: 2.0.0"))
    _one_line_refusal(run_cli("validate", major, history, "--bounds", out), "profiled for ticks 1.0.0, not ticks 2.0.0")
    minor = tmp_path / "minor.yaml"
    minor.write_text(contract.read_text().replace("version: 1.0.0", "version: 1.1.0"))
    assert run_cli("validate", minor, history, "--bounds", out).returncode == 0
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("contract: ticks\nversion: 1.0.0\nseries_column: sensor\nfields: {value: {a: [1, 2]}}\n")
    _one_line_refusal(run_cli("validate", contract, history, "--bounds", garbage), "garbage.yaml: not a bounds file")


# ---------------------------------------------------------------------------- deep schemas


def _deep_avro(depth: int) -> str:
    inner = '{"type": "record", "name": "r0", "fields": [{"name": "v", "type": "long"}]}'
    for i in range(1, depth):
        inner = f'{{"type": "record", "name": "r{i}", "fields": [{{"name": "f", "type": {inner}}}]}}'
    return inner


def _deep_jsonschema(depth: int) -> str:
    inner = '{"type": "integer"}'
    for _ in range(depth):
        inner = f'{{"type": "object", "properties": {{"f": {inner}}}}}'
    return inner


@pytest.mark.parametrize(("fmt", "make"), [("avro", _deep_avro), ("jsonschema", _deep_jsonschema)])
def test_schemas_nested_thousands_deep_are_refused_in_one_line(tmp_path, fmt, make):
    deep = tmp_path / f"deep.{'avsc' if fmt == 'avro' else 'json'}"
    deep.write_text(make(5_000))
    _one_line_refusal(run_cli("import", fmt, deep, "--out", tmp_path / "c.yaml"), "nested deeper than 64 levels")
    _one_line_refusal(run_cli("compat", fmt, deep, deep), "nested deeper than 64 levels")
    shallow = tmp_path / f"shallow.{'avsc' if fmt == 'avro' else 'json'}"
    shallow.write_text(make(3))
    assert run_cli("compat", fmt, shallow, shallow).returncode == 0
