"""Every input format, and nothing silently coerced on the way in."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.engines.conftest import NOW, OHLCV, replace_column
from tscontract import InputError, validate

CONTRACT = OHLCV / "contract.yaml"
CATALOG = OHLCV / "catalog.yaml"


def run(data, **kwargs):
    return validate(CONTRACT, data, catalog=CATALOG, now=NOW, **kwargs)


def not_passed(report):
    return {c.id for c in report.checks if c.status != "passed"}


def test_typed_parquet_arrow_pandas_polars_and_duckdb_table_pass(ohlcv_table, tmp_path):
    path = tmp_path / "good.parquet"
    pq.write_table(ohlcv_table, path)
    import pandas as pd
    import polars as pl

    # pandas' nullable Int64: a plain to_pandas() turns int64 with a null into float64
    frame = ohlcv_table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    before = frame.copy(deep=True)
    assert isinstance(frame["open"].iloc[0], Decimal)
    assert str(frame["bar_start"].dtype) == "datetime64[ms, UTC]"
    floaty = run(ohlcv_table.to_pandas()).check("field.trade_count.type")
    assert floaty.status == "failed" and "DOUBLE" in floaty.message
    db = tmp_path / "warehouse.duckdb"
    con = duckdb.connect(str(db))
    con.register("t", ohlcv_table)
    con.execute("CREATE TABLE bars AS SELECT * FROM t")
    con.close()
    for data in (path, [path], ohlcv_table, frame, pl.from_arrow(ohlcv_table), f"{db}::bars"):
        report = run(data)
        assert report.passed, (type(data), [(c.id, c.message) for c in report.failed])
        assert report.rows == 781
    pd.testing.assert_frame_equal(frame, before)  # validating a caller's frame leaves it as it was


def test_parquet_examples_point_at_file_rows(ohlcv_table, tmp_path):
    low = ohlcv_table.column("low").to_pylist()
    low[4] = Decimal("999.00000000")
    path = tmp_path / "bad.parquet"
    pq.write_table(replace_column(ohlcv_table, "low", pa.array(low, pa.decimal128(18, 8))), path)
    report = run(path)
    check = report.check("invariants[0]")
    assert check.status == "failed" and check.examples[0]["row"] == 5 and check.examples[0]["low"] == "999.00000000"


def test_many_parquet_files_are_numbered_as_one_input(ohlcv_table, tmp_path):
    low = ohlcv_table.column("low").to_pylist()
    for row in (4, 30, 55):  # 0-based: one in the first file, two in the second
        low[row] = Decimal("999.00000000")
    bad = replace_column(ohlcv_table, "low", pa.array(low, pa.decimal128(18, 8)))
    first, second = tmp_path / "part-0.parquet", tmp_path / "part-1.parquet"
    pq.write_table(bad.slice(0, 20), first)
    pq.write_table(bad.slice(20), second, row_group_size=7)  # several row groups in the second file
    pq.write_table(bad, tmp_path / "whole.parquet")
    whole = run(tmp_path / "whole.parquet")
    parts = run([first, second])
    assert parts.rows == whole.rows == 781
    check = parts.check("invariants[0]")
    assert [e["row"] for e in check.examples] == [5, 31, 56]
    assert [c.to_json() for c in parts.checks] == [c.to_json() for c in whole.checks]
    with pytest.raises(InputError, match=r"the same file is given more than once: .*part-0\.parquet"):
        run([first, second, first])


def test_input_without_any_contract_column_reports_schema_failures(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"foo": [1, 2]}), path)
    report = run(path)
    assert report.rows == 2
    assert report.check("schema.columns").status == "failed"
    assert report.check("schema.strict").examples == [{"unknown": ["foo"]}]


def test_float_where_decimal_declared_fails_loudly(ohlcv_table):
    floats = replace_column(ohlcv_table, "close", pc.cast(ohlcv_table.column("close"), pa.float64()))
    report = run(floats)
    check = report.check("field.close.type")
    assert check.status == "failed" and check.failed_rows == 781
    assert "floats are not decimals" in check.message
    assert not report.passed


def test_decimal_string_in_typed_source_fails(ohlcv_table):
    strings = replace_column(ohlcv_table, "volume", pc.cast(ohlcv_table.column("volume"), pa.string()))
    check = run(strings).check("field.volume.type")
    assert check.status == "failed" and "not a number" not in (check.message or "x")
    assert "VARCHAR" in check.message


def test_wider_decimal_scale_checked_per_value(ohlcv_table):
    wide = pc.cast(ohlcv_table.column("open"), pa.decimal128(20, 10)).to_pylist()
    wide[3] = Decimal("229.1234567891")
    table = replace_column(ohlcv_table, "open", pa.array(wide, pa.decimal128(20, 10)))
    check = run(table).check("field.open.type")
    assert check.status == "failed" and check.failed_rows == 1
    assert check.examples[0]["reason"] == "more than 8 decimal places"


def test_naive_timestamps_fail(ohlcv_table):
    naive = replace_column(ohlcv_table, "bar_start", pc.cast(ohlcv_table.column("bar_start"), pa.timestamp("ms")))
    report = run(naive)
    assert report.check("time.timezone").status == "failed"
    assert report.check("time.timezone").failed_rows == 781
    assert report.check("invariants[0]").status == "passed"  # other checks still run: the report is lazy


def test_epoch_integers_in_declared_unit_pass_and_changed_unit_fails(ohlcv_table):
    millis = pc.cast(pc.cast(ohlcv_table.column("bar_start"), pa.timestamp("ms")), pa.int64())
    report = run(replace_column(ohlcv_table, "bar_start", millis))
    assert report.passed, [(c.id, c.message) for c in report.failed]
    seconds = pc.divide(millis, 1000)  # vendor switched to epoch seconds: read as ms they land in 1970
    check = run(replace_column(ohlcv_table, "bar_start", seconds)).check("field.bar_start.type")
    assert check.status == "failed" and check.failed_rows == 781
    assert "wrong epoch unit" in check.examples[0]["reason"]


def test_unknown_and_missing_columns(ohlcv_table):
    extra = ohlcv_table.append_column("vwap", pa.array([Decimal(1)] * ohlcv_table.num_rows))
    report = run(extra)
    assert not_passed(report) == {"schema.strict"}
    assert report.check("schema.strict").examples == [{"unknown": ["vwap"]}]
    missing = ohlcv_table.drop_columns(["trade_count"])
    report = run(missing)
    assert report.check("schema.columns").status == "failed"
    assert report.check("invariants[3]").status == "error"
    assert "trade_count" in report.check("invariants[3]").message


def test_json_lines_keep_exact_decimal_digits(tmp_path):
    rows = [json.loads(line) for line in _jsonl_rows()]
    path = tmp_path / "bars.jsonl"
    # 1234567890.12345678 fits decimal(18,8) exactly; as a double it would read 1234567890.1234567
    rows[0]["open"] = rows[0]["low"] = 0  # placeholder replaced as raw text below
    text = "\n".join(json.dumps(r) for r in rows).replace('"open": 0', '"open": 1234567890.12345678', 1)
    text = text.replace('"low": 0', '"low": 1.5', 1)
    path.write_text(text + "\n")
    report = run(path)
    assert report.check("field.open.type").status == "passed"
    assert report.check("invariants[0]").status == "failed"  # open above high: compared exactly
    assert report.check("invariants[0]").examples[0]["open"] == "1234567890.12345678"
    path.write_text(text.replace("1234567890.12345678", "1234567890.123456789") + "\n")
    check = run(path).check("field.open.type")
    assert check.status == "failed" and check.examples[0]["reason"] == "more than 8 decimal places"


def test_json_types_must_match(tmp_path):
    rows = [json.loads(line) for line in _jsonl_rows()]
    rows[1]["volume"] = str(rows[1]["volume"])  # a decimal that became a string
    rows[2]["adjusted"] = "false"
    path = tmp_path / "bars.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = run(path)
    volume = report.check("field.volume.type")
    assert volume.failed_rows == 1 and volume.examples[0]["reason"] == "JSON varchar where decimal is declared"
    assert report.check("field.adjusted.type").failed_rows == 1


def _jsonl_rows() -> list[str]:
    import csv

    lines = []
    with (OHLCV / "data" / "good.csv").open() as handle:
        for record in csv.DictReader(handle):
            out = {}
            for key, value in record.items():
                if value == "":
                    out[key] = None
                elif key in ("open", "high", "low", "close", "volume"):
                    out[key] = float(value)
                elif key in ("trade_count", "revision"):
                    out[key] = int(value)
                elif key == "adjusted":
                    out[key] = value == "true"
                else:
                    out[key] = value
            lines.append(json.dumps(out))
    return lines


def test_good_json_lines_pass(tmp_path):
    path = tmp_path / "bars.jsonl"
    path.write_text("\n".join(_jsonl_rows()) + "\n")
    report = run(path)
    assert report.passed, [(c.id, c.examples) for c in report.failed]


def test_unreadable_inputs_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="cannot tell the format"):
        run(tmp_path / "x.txt" if (tmp_path / "x.txt").write_text("a") else None)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1, 2]\n")
    # a JSON line that is no object is a malformed row, as a bad CSV line is (#26), not a refused file
    assert "source.rows" in not_passed(run(bad))
    with pytest.raises(InputError, match="DuckDB database not found"):
        run(f"{tmp_path}/none.duckdb::bars")
    assert datetime.now(UTC)  # keep the import used
