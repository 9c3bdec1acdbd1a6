"""Raw text read the same on both engines: the CSV dialect, malformed rows, duplicate JSON keys.

The same fixtures as tests/engines/inputs/test_csv_dialect.py, validated on DuckDB and on Spark
(real pyspark in local mode): the JSON reports must be identical apart from timing and
the engine's name -- statuses, counts, examples, row numbers and reasons.
"""

from __future__ import annotations

import pytest

from tests.engines.conftest import OHLCV
from tests.engines.csv_fixtures import COLUMNS, HEADER, ROWS, CsvBuilder, json_lines, vendor_export, with_field
from tests.engines.test_spark_parity import assert_same
from tscontract import InputError, validate

pytest.importorskip("pyspark", reason="the Spark engine is part of the dev install")

CONTRACT = OHLCV / "contract.yaml"
CATALOG = OHLCV / "catalog.yaml"


def test_vendor_export_hash_symbol_quotes_mixed_line_breaks_wrong_field_counts(spark, tmp_path):
    vendor = vendor_export(tmp_path / "bars_20261130.csv")
    report = assert_same(CONTRACT, vendor.path, catalog=CATALOG)
    checks = {c["id"]: c for c in report["checks"]}
    assert report["rows"] == vendor.builder.rows
    assert [e["row"] for e in checks["source.rows"]["examples"]] == [w.row for w in vendor.malformed]
    assert [e["symbol"] for e in checks["catalog.series"]["examples"]] == ["#AAPL", "'MSFT'"]


def test_lf_file_with_crlf_lines_appended_and_a_quote_never_closed(spark, tmp_path):
    b = CsvBuilder()
    b.add(HEADER, "\n", row=False)
    for row in ROWS[:300]:
        b.add(row, "\n")
    b.add(with_field(ROWS[300], "source_id", '"vendor-x\r\nfeed B"'), "\r\n")  # DuckDB reads this file with pyarrow
    for row in ROWS[301:]:
        b.add(row, "\r\n")
    b.add(with_field(ROWS[5], "ingest_run_id", '"run-0001'), "\r\n")
    report = assert_same(CONTRACT, b.write(tmp_path / "appended.csv"), catalog=CATALOG)
    check = next(c for c in report["checks"] if c["id"] == "source.rows")
    assert check["examples"][0]["reason"] == f"line {b.line - 1}: a quoted value is never closed"


def test_two_files_with_their_own_headers(spark, tmp_path):
    first = tmp_path / "part-1.csv"
    first.write_text("\n".join([HEADER, *ROWS[:400]]) + "\n")
    second = tmp_path / "part-2.csv"
    order = list(reversed(COLUMNS))
    rows = [",".join(reversed(r.split(","))) for r in ROWS[400:]]
    rows[7] += ",extra"
    second.write_text("\n".join([",".join(order), *rows]) + "\n\n")
    report = assert_same(CONTRACT, [first, second], catalog=CATALOG)
    check = next(c for c in report["checks"] if c["id"] == "source.rows")
    assert [e["row"] for e in check["examples"]] == [400 + 8]


def test_json_key_given_twice(spark, tmp_path):
    lines = json_lines()
    lines[9] = lines[9][:-1] + ', "symbol": "MSFT"}'
    path = tmp_path / "bars.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = assert_same(CONTRACT, path, catalog=CATALOG)
    check = next(c for c in report["checks"] if c["id"] == "source.rows")
    assert check["failed_rows"] == 1 and check["examples"][0]["reason"] == 'key "symbol" appears more than once'


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "lone_cr.csv",
            f"{HEADER}\n{ROWS[0]}\r{ROWS[1]}\n".encode(),
            "line 2 has a carriage return without a line feed",
        ),
        ("latin1.csv", f"{HEADER}\n{with_field(ROWS[0], 'source_id', 'société')}\n".encode("latin-1"), "line 2 is not"),
        ("empty.csv", b"", "empty file"),
    ],
)
def test_unreadable_text_is_the_same_input_error(spark, tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    for engine in ("duckdb", "spark"):
        with pytest.raises(InputError, match=f"{name}: {message}"):
            validate(CONTRACT, path, catalog=CATALOG, engine=engine)


def test_a_java_error_pyspark_does_not_translate_is_shown_by_its_innermost_cause(spark):
    """A task out of memory reaches Python as "An error occurred while calling o1.getResult." with the reason
    one cause down (pyspark re-raises py4j's error when it has no class for the cause): the reason is shown."""
    from py4j.protocol import Py4JJavaError

    from tscontract.shown import engine_message

    jvm = spark.sparkContext._jvm
    cause = jvm.java.lang.OutOfMemoryError("[AGGREGATE_OUT_OF_MEMORY] No enough memory for aggregation")
    job = jvm.org.apache.spark.SparkException("Job aborted due to stage failure: Task 0 in stage 3164.0 failed", cause)
    error = Py4JJavaError("An error occurred while calling o9363.getResult.\n", job)
    assert engine_message(error) == "OutOfMemoryError: [AGGREGATE_OUT_OF_MEMORY] No enough memory for aggregation"
    assert engine_message(ValueError("first line\nsecond")) == "first line"
