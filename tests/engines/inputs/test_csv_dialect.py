"""CSV and JSON lines read exactly: an explicit dialect, nothing sniffed, no row lost or guessed."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.engines.conftest import NOW, OHLCV
from tests.engines.csv_fixtures import (
    COLUMNS,
    GOOD,
    HEADER,
    ROWS,
    CsvBuilder,
    json_lines,
    vendor_export,
    with_field,
)
from tscontract import InputError, validate
from tscontract.engines.duckdb import connect
from tscontract.engines.inputs.csv_dialect import CsvDialect
from tscontract.engines.inputs.sources import open_source

CONTRACT = OHLCV / "contract.yaml"
CATALOG = OHLCV / "catalog.yaml"


def run(data, **kwargs):
    return validate(CONTRACT, data, catalog=CATALOG, now=NOW, **kwargs)


def failed(report):
    return {c.id: c.failed_rows for c in report.checks if c.status != "passed"}


def read(path, dialect=None):
    """The source view's rows, as the engine reads and numbers ``path``."""
    con = connect()
    try:
        source = open_source(con, path, csv=dialect)
        query = "SELECT * FROM __tsc_source ORDER BY __row"
        if not source.has_row_number:  # numbered where examples need it, in order (engines/duckdb.py)
            query = "SELECT row_number() OVER () AS __row, * FROM __tsc_source"
        rows = con.execute(query).fetchall()
        names = [d[0] for d in con.description]
        return source, [dict(zip(names, r, strict=True)) for r in rows]
    finally:
        con.close()


def test_vendor_export_every_row_read_as_written(tmp_path):
    vendor = vendor_export(tmp_path / "bars_20261130.csv")
    report = run(vendor.path)
    assert report.rows == vendor.builder.rows == len(ROWS) + 5  # the banner, 2 odd symbols, 2 malformed rows
    # the banner, the row with a vendor column appended, the row cut short: rows that fail, with line and reason
    check = report.check("source.rows")
    assert check.failed_rows == 3 and check.clause == "every input row is well formed"
    assert check.examples == [
        {"row": w.row, "reason": f"line {w.line} has {n} fields, the header has 13", "text": w.text}
        for w, n in zip(vendor.malformed, (2, 14, 3), strict=True)
    ]
    # '#AAPL' is a symbol, not a comment; 'MSFT' keeps its single quotes: both unknown to the catalog, by row
    series = report.check("catalog.series")
    assert [(e["row"], e["symbol"]) for e in series.examples] == [
        (vendor.hash_symbol.row, "#AAPL"),
        (vendor.single_quoted.row, "'MSFT'"),
    ]
    # malformed rows have no values: no check but source.rows counts them (no null key, no duplicate)
    assert failed(report) == {"source.rows": 3, "catalog.series": 2, "time.session": 2}
    _, rows = read(vendor.path)
    by_row = {r["__row"]: r for r in rows}
    assert by_row[vendor.quoted_comma.row]["source_id"] == "vendor-x, feed A"
    assert by_row[vendor.multi_line.row]["source_id"] == "vendor-x\nfeed B"  # a quoted line break is read as LF
    assert by_row[vendor.multi_line.row + 1]["bar_start"] == ROWS[41].split(",")[1]  # numbering goes on after it
    assert all(by_row[vendor.builder.records[i].row]["symbol"] == "AAPL" for i in range(12, 22))  # quoted by Excel
    assert {k: v for k, v in by_row[vendor.truncated.row].items() if k in COLUMNS} == dict.fromkeys(COLUMNS)


def test_the_examples_report_rows_and_lines_the_cli_exits_1(tmp_path):
    vendor = vendor_export(tmp_path / "bars.csv")
    done = run_cli("validate", CONTRACT, vendor.path, "--catalog", CATALOG, "--now", NOW.isoformat(), "-f", "json")
    assert done.returncode == 1, done.stderr
    check = next(c for c in json.loads(done.stdout)["checks"] if c["id"] == "source.rows")
    assert check["status"] == "failed" and check["examples"][1]["reason"] == "line 396 has 14 fields, the header has 13"


def test_a_comment_character_is_only_what_the_dialect_says(tmp_path):
    vendor = vendor_export(tmp_path / "bars.csv")
    source, rows = read(vendor.path, CsvDialect(comment="#"))
    # the banner is skipped now -- and so is the data row whose symbol starts with '#': hence no default comment
    assert len(rows) == vendor.builder.rows - 2
    assert "#AAPL" not in {r["symbol"] for r in rows}
    lines = {r["__row"]: r for r in rows}
    assert lines[1]["symbol"] == "AAPL" and source.malformed  # rows renumbered from 1 without the skipped lines


def test_header_is_the_first_line_and_names_must_be_unique(tmp_path):
    wide = CsvBuilder()
    wide.add(HEADER, row=False)
    wide.add(ROWS[0] + ",extra,fields,vendor-added")  # a wider line is a malformed row, never the header
    wide.add(ROWS[1])
    source, rows = read(wide.write(tmp_path / "wide.csv"))
    assert list(source.columns) == COLUMNS and [r["__tsc_malformed"] for r in rows] == [
        "line 2 has 16 fields, the header has 13",
        None,
    ]
    for header, message in (
        (HEADER.replace("low", "close"), r"dup\.csv: column 'close' appears twice in the header \(columns 5 and 6\)"),
        (
            HEADER.replace(",low,", ",,").replace(",close,", ",column5,"),
            r"column 'column5' appears twice in the header \(columns 5 and 6\)",
        ),
        ('"symbol,bar_start', r"dup\.csv: the header opens a quoted value it does not close"),
    ):
        (tmp_path / "dup.csv").write_text(header + "\n" + ROWS[0] + "\n")
        with pytest.raises(InputError, match=message):
            run(tmp_path / "dup.csv")
    done = run_cli("validate", CONTRACT, tmp_path / "dup.csv")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "dup.csv" in done.stderr


def test_empty_file_is_an_input_error_a_header_alone_is_an_empty_batch(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.csv: empty file$"):
        run(empty)
    done = run_cli("validate", CONTRACT, empty)
    assert done.returncode == 2 and "empty.csv: empty file" in done.stderr
    assert "column0" not in done.stderr + done.stdout
    header_only = tmp_path / "header.csv"
    header_only.write_text(HEADER + "\r\n")
    report = run(header_only)
    assert report.rows == 0 and report.check("schema.columns").status == "passed"
    assert report.check("schema.strict").status == "passed"


def test_a_field_over_2_mb_is_data(tmp_path):
    big = "x" * (3 << 20)
    path = tmp_path / "big.csv"
    path.write_text("\n".join([HEADER, with_field(ROWS[0], "ingest_run_id", big), *ROWS[1:]]) + "\n")
    report = run(path)
    assert report.rows == len(ROWS) and "source.rows" not in failed(report)
    _, rows = read(path)
    assert len(rows[0]["ingest_run_id"]) == 3 << 20


def test_line_breaks_lf_crlf_mixed_and_a_lone_cr(tmp_path):
    windows, unix = "\r\n", "\n"
    for name, ends in (
        ("lf", [unix]),
        ("crlf", [windows]),
        ("crlf_then_lf", [windows, unix]),
        ("lf_then_crlf", [unix, windows]),
    ):
        b = CsvBuilder()
        b.add(HEADER, ends[0], row=False)
        for i, row in enumerate(ROWS):
            b.add(row, ends[min(i * len(ends) // len(ROWS), len(ends) - 1)])
        _, rows = read(b.write(tmp_path / f"{name}.csv"))
        assert [r["volume"] for r in rows] == [r.split(",")[6] for r in ROWS], name  # no \r kept, no row added
        assert rows[-1]["revision"] == ROWS[-1].split(",")[-1]
    lone = tmp_path / "lone_cr.csv"
    lone.write_bytes(f"{HEADER}\n{ROWS[0]}\n{ROWS[1]}\rX\n".encode())
    with pytest.raises(InputError, match=r"lone_cr\.csv: line 3 has a carriage return without a line feed"):
        run(lone)


def test_not_utf8_names_the_line(tmp_path):
    latin1 = tmp_path / "latin1.csv"
    text = "\n".join([HEADER, ROWS[0], with_field(ROWS[1], "source_id", "société"), ROWS[2]]) + "\n"
    latin1.write_bytes(text.encode("latin-1"))  # a vendor's Windows-1252 export
    with pytest.raises(InputError, match=r"latin1\.csv: line 3 is not UTF-8 text"):
        run(latin1)


def test_quotes_never_closed_or_followed_by_text(tmp_path):
    b = CsvBuilder()
    b.add(HEADER, row=False)
    after = b.add(with_field(ROWS[0], "source_id", '"vendor-x"-eu'))  # text after the closing quote
    b.add(ROWS[1])
    never = b.add(with_field(ROWS[2], "source_id", '"vendor-x'))  # opened on the last line, never closed
    _, rows = read(b.write(tmp_path / "quotes.csv"))
    assert [(r["__row"], r["__tsc_malformed"]) for r in rows if r["__tsc_malformed"]] == [
        (after.row, f"line {after.line}: text follows the closing quote of a value"),
        (never.row, f"line {never.line}: a quoted value is never closed"),
    ]
    assert len(rows) == 3


def test_dialect_options_delimiter_tsv_escape_nulls(tmp_path):
    tsv = tmp_path / "bars.tsv"
    tsv.write_text("\n".join(line.replace(",", "\t") for line in [HEADER, *ROWS[:5]]) + "\n")
    assert run(tsv).rows == 5 and "source.rows" not in failed(run(tsv))
    semi = tmp_path / "bars.csv"
    rows = [with_field(ROWS[0], "source_id", '"vendor; \\"x\\""'), with_field(ROWS[1], "trade_count", "NA")]
    semi.write_text("\n".join(line.replace(",", ";") for line in [HEADER, *rows]) + "\n")
    dialect = CsvDialect(delimiter=";", escape="\\", null_values=("", "NA"))
    _, read_rows = read(semi, dialect)
    assert read_rows[0]["source_id"] == 'vendor; "x"' and read_rows[1]["trade_count"] is None
    source, _ = read(semi)  # the default dialect does not guess ';': one column, named by the whole header line
    assert list(source.columns) == [HEADER.replace(",", ";")]
    with pytest.raises(ValueError, match="delimiter and quote are both"):
        CsvDialect(delimiter='"')
    with pytest.raises(ValueError, match="comment ',' would be the delimiter"):
        CsvDialect(comment=",")
    with pytest.raises(ValueError, match="one character"):
        CsvDialect(delimiter="||")


def test_many_files_with_their_own_headers(tmp_path):
    first = tmp_path / "a.csv"
    first.write_text("\n".join([HEADER, *ROWS[:3]]) + "\n")
    order = list(reversed(COLUMNS))
    second = tmp_path / "b.csv"
    second.write_text(
        "\n".join([",".join(order), *(",".join(reversed(r.split(","))) for r in ROWS[3:6]), "AAPL,x"]) + "\n"
    )
    _, rows = read([first, second])
    assert [r["bar_start"] for r in rows[:6]] == [r.split(",")[1] for r in ROWS[:6]]
    assert rows[6]["__row"] == 7 and rows[6]["__tsc_malformed"].endswith(
        "b.csv: line 5 has 2 fields, the header has 13"
    )


def test_json_key_given_twice_fails_the_row(tmp_path):
    lines = json_lines()
    lines[2] = lines[2][:-1] + ', "close": 1.5}'  # the vendor wrote close twice: which one holds is unknown
    path = tmp_path / "bars.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = run(path)
    check = report.check("source.rows")
    assert check.failed_rows == 1 and check.examples == [
        {"row": 3, "reason": 'key "close" appears more than once', "text": f"{lines[2][:200]}…({len(lines[2])} chars)"}
    ]
    assert "field.close.nullable" not in failed(report) and "key.unique" not in failed(report)


def test_good_files_pass_source_rows(tmp_path):
    report = run(GOOD)
    assert report.check("source.rows").status == "passed" and report.rows == len(ROWS)


def test_well_formed_files_read_by_duckdb_itself_give_the_same_values(tmp_path):
    """Where every line is well formed, DuckDB's own reader reads the files (faster); the same values."""
    b = CsvBuilder()
    b.add(HEADER, "\r\n", row=False)
    for i, row in enumerate(ROWS):
        parts = row.split(",")
        if i % 3 == 0:  # Excel quotes every field of some exports
            parts = [f'"{v}"' for v in parts]
        if i % 50 == 7:
            parts[COLUMNS.index("source_id")] = '"vendor-x, ""feed"" A"'
        if i % 50 == 9:
            parts[COLUMNS.index("trade_count")] = '""'
        b.add(",".join(parts), "\r\n")
    path = b.write(tmp_path / "excel.csv", bom=True)
    native, native_rows = read(path)
    statements, statement_rows = read(path, CsvDialect(null_values=("", "N/A")))  # not DuckDB's: its nulls differ
    assert not native.has_row_number and not statements.has_row_number
    assert native_rows == statement_rows and len(native_rows) == len(ROWS)
    assert native_rows[7]["source_id"] == 'vendor-x, "feed" A' and native_rows[9]["trade_count"] is None
    assert run(path).passed


def test_unnamed_header_columns_are_named_by_position(tmp_path):
    """A vendor's trailing delimiters (UCI's '...;AH;;') leave columns unnamed: they are read as
    column14, column15 (never dropped) and a contract that does not name them fails schema.strict."""
    path = tmp_path / "trailing.csv"
    path.write_text(HEADER + ",,\n" + "\n".join(row + ",," for row in ROWS[:3]) + "\n")
    n = len(COLUMNS)
    source, rows = read(path)
    assert list(source.columns) == [*COLUMNS, f"column{n + 1}", f"column{n + 2}"]
    assert len(rows) == 3 and all(r.get("__tsc_malformed") is None and r[f"column{n + 1}"] in (None, "") for r in rows)
    done = run_cli("validate", CONTRACT, path, "--now", NOW, "--format", "json")
    assert done.returncode == 1, done.stderr
    strict = next(c for c in json.loads(done.stdout)["checks"] if c["id"] == "schema.strict")
    assert strict["status"] == "failed" and f"column{n + 1}" in json.dumps(strict)
