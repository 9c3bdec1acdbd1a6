"""Hostile data files (issue 13): unreadable input is one line and exit 2 naming the file; large
fields, header-only files and lazy frames are data; a catalog of another contract is refused."""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.engines.conftest import NOW, OHLCV, SENSOR
from tscontract import InputError, validate
from tscontract.cli import main
from tscontract.engines.inputs.csv_source import BUFFER_LINE_BYTES

CONTRACT = OHLCV / "contract.yaml"
CATALOG = OHLCV / "catalog.yaml"
GOOD = OHLCV / "data" / "good.csv"
OPTIONS = ("--catalog", str(CATALOG), "--now", "2026-11-30T21:05:00Z", "--format", "json")


def cli(capsys, *args: object) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def input_error(capsys, *args: object) -> str:
    """The one error line of a command that must exit 2."""
    code, _, err = cli(capsys, *args)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------- corrupt Parquet


def plain_parquet(ohlcv_table: pa.Table, tmp_path, compression: str = "none"):
    path = tmp_path / f"bars-{compression}.parquet"
    pq.write_table(ohlcv_table, path, compression=compression, use_dictionary=False)
    return path, bytearray(path.read_bytes())


def test_parquet_string_that_is_not_utf8_is_an_input_error(ohlcv_table, tmp_path, capsys):
    _, data = plain_parquet(ohlcv_table, tmp_path)
    at = data.find(b"AAPL", 200)  # a value in the symbol column's data page
    assert at > 0
    data[at] = 0xFF
    bad = tmp_path / "bad_utf8.parquet"
    bad.write_bytes(bytes(data))
    line = input_error(capsys, "validate", CONTRACT, bad, *OPTIONS)
    assert line.startswith(f"error: cannot read {bad}: ") and "not valid UTF8" in line
    # profile meets the same page in its own queries: the same one line
    line = input_error(capsys, "profile", CONTRACT, bad, "--out", tmp_path / "bounds.yaml")
    assert line.startswith(f"error: cannot read {bad}: ") and "not valid UTF8" in line
    assert not (tmp_path / "bounds.yaml").exists()


def test_parquet_page_that_does_not_decompress_is_an_input_error(ohlcv_table, tmp_path, capsys):
    _, data = plain_parquet(ohlcv_table, tmp_path, "snappy")
    for i in range(200, 260):  # inside the first column chunk's compressed page
        data[i] ^= 0x55
    bad = tmp_path / "bad_snappy.parquet"
    bad.write_bytes(bytes(data))
    line = input_error(capsys, "validate", CONTRACT, bad, *OPTIONS)
    assert line.startswith(f"error: cannot read {bad}: ")
    assert "snappy" in line.lower() or "corrupt" in line.lower() or "decompress" in line.lower(), line
    with pytest.raises(InputError, match="cannot read"):  # the library raises the same input error
        validate(CONTRACT, bad, catalog=CATALOG, now=NOW)


def test_truncated_parquet_is_an_input_error(ohlcv_table, tmp_path, capsys):
    _, data = plain_parquet(ohlcv_table, tmp_path)
    bad = tmp_path / "half.parquet"
    bad.write_bytes(bytes(data[: len(data) // 2]))
    assert input_error(capsys, "validate", CONTRACT, bad, *OPTIONS).startswith(f"error: cannot read {bad}: ")


# ---------------------------------------------------------------- empty files


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_a_zero_byte_file_is_an_empty_file(tmp_path, capsys, suffix):
    empty = tmp_path / f"empty{suffix}"
    empty.write_bytes(b"")
    code, out, err = cli(capsys, "validate", CONTRACT, empty, *OPTIONS)
    assert code == 2 and err == f"error: {empty}: empty file\n"
    assert "column0" not in out + err
    assert json.loads(out)["error"]["message"] == f"{empty}: empty file"


def test_a_header_only_csv_is_an_empty_batch(tmp_path, capsys):
    header = tmp_path / "header.csv"
    header.write_text(GOOD.read_text().splitlines()[0] + "\n")
    code, out, _ = cli(capsys, "validate", CONTRACT, header, *OPTIONS)
    report = json.loads(out)
    assert report["rows"] == 0
    not_passed = {c["id"]: c["message"] for c in report["checks"] if c["status"] != "passed"}
    # every column is there and no row fails: only the time checks, with no point to judge, cannot pass
    assert not_passed == {"time.cadence": "no valid timestamps", "time.session": "no valid timestamps"}
    assert code == 1


# ---------------------------------------------------------------- large fields


def test_fields_over_16_mib_are_data(tmp_path, capsys):
    lines = GOOD.read_text().splitlines()
    wide = "x" * (BUFFER_LINE_BYTES + (4 << 20))  # 20 MiB, past DuckDB's first line buffer
    # 18 MiB quoted across 9,216 lines of 2 KiB, with delimiters inside (6M lines of 3 bytes cost 10 s more: the
    # records are assembled by window functions over the lines; the size, not the count, is what crosses the buffer)
    quoted = '"' + ("y," * 1023 + "y\n") * (9 << 10) + '"'
    rows = [row.split(",") for row in lines[1:4]]
    rows[0][9] = wide  # source_id
    rows[2][10] = quoted  # ingest_run_id
    path = tmp_path / "wide.csv"
    path.write_text("\n".join([lines[0], *(",".join(r) for r in rows)]) + "\n")
    code, out, err = cli(capsys, "validate", CONTRACT, path, *OPTIONS, "--examples", "0")
    assert code in (0, 1), err
    report = json.loads(out)
    assert report["rows"] == 3
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    assert statuses["source.rows"] == "passed" and statuses["schema.columns"] == "passed"


def test_a_wide_field_keeps_every_character(tmp_path):
    import duckdb

    from tscontract.engines.inputs.sources import open_source

    lines = GOOD.read_text().splitlines()
    row = lines[1].split(",")
    row[9] = "é" * (9 << 20)  # 18 MiB of two-byte characters
    path = tmp_path / "wide.csv"
    path.write_text(lines[0] + "\n" + ",".join(row) + "\n" + lines[2] + "\n", encoding="utf-8")
    con = duckdb.connect()
    open_source(con, path)
    lengths = con.execute("SELECT length(source_id), symbol FROM __tsc_source ORDER BY 1 DESC").fetchall()
    assert lengths == [(9 << 20, "AAPL"), (len("vendor-x"), "AAPL")]


# ---------------------------------------------------------------- a catalog of another contract


def test_a_catalog_of_another_contract_is_refused_everywhere(tmp_path, capsys):
    other = SENSOR / "catalog.yaml"
    expected = "the catalog is for contract 'plant_sensor_reading', not 'ohlcv_1m' (lint: TS160)"
    store = tmp_path / "store.duckdb"
    commands = [
        ("validate", CONTRACT, GOOD, "--catalog", other),
        ("ingest", CONTRACT, GOOD, "--store", store, "--catalog", other),
        ("profile", CONTRACT, GOOD, "--out", tmp_path / "bounds.yaml", "--catalog", other),
    ]
    for args in commands:
        line = input_error(capsys, *args)
        assert expected in line and "ohlcv_1m/contract.yaml: " in line, line
    assert not (tmp_path / "bounds.yaml").exists()
    with pytest.raises(InputError, match="TS160"):
        validate(CONTRACT, GOOD, catalog=other, now=NOW)
    code, out, _ = cli(capsys, "lint", CONTRACT, "--catalog", other, "--format", "json")
    assert code == 1 and "TS160" in {f["code"] for f in json.loads(out)["findings"]}  # lint reports it


# ---------------------------------------------------------------- polars LazyFrame


def test_a_polars_lazyframe_is_validated_like_its_dataframe(ohlcv_table):
    frame = pl.from_arrow(ohlcv_table)
    assert isinstance(frame, pl.DataFrame)
    lazy = frame.lazy().filter(pl.col("symbol") == "AAPL")
    eager = validate(CONTRACT, lazy.collect(), catalog=CATALOG, now=NOW)
    report = validate(CONTRACT, lazy, catalog=CATALOG, now=NOW)
    assert report.rows == eager.rows == frame.filter(pl.col("symbol") == "AAPL").height > 0
    assert [(c.id, c.status, c.failed_rows) for c in report.checks] == [
        (c.id, c.status, c.failed_rows) for c in eager.checks
    ]
    assert report.data == ["<LazyFrame>"]
    broken = frame.lazy().with_columns(pl.col("high") * -1)  # a plan computing bad values: checked, not trusted
    assert "invariants[0]" in {c.id for c in validate(CONTRACT, broken, catalog=CATALOG, now=NOW).failed}
