"""CSV files shaped like what vendors deliver, built from the OHLCV example's good.csv.

The builder writes the file and remembers, for every record it wrote, the line it starts
on and the row it is, so tests compare the engines against what was written, not
against numbers copied from a run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tests.engines.conftest import OHLCV

GOOD = OHLCV / "data" / "good.csv"
HEADER, *ROWS = GOOD.read_text().splitlines()
COLUMNS = HEADER.split(",")


@dataclass
class Written:
    """One record as written: its text, the line it starts on, its row (None: not a row)."""

    text: str
    line: int
    row: int | None


@dataclass
class CsvBuilder:
    """Lines joined by the line break each one asks for; rows numbered as the engines must number them."""

    parts: list[bytes] = field(default_factory=list)
    records: list[Written] = field(default_factory=list)
    line: int = 1
    rows: int = 0

    def add(self, text: str, end: str = "\n", row: bool = True) -> Written:
        if row:
            self.rows += 1
        written = Written(text, self.line, self.rows if row else None)
        self.records.append(written)
        self.parts.append((text + end).encode())
        self.line += (text + end).count("\n")
        return written

    def write(self, path: Path, bom: bool = False) -> Path:
        """The file; ``bom``: it starts with a UTF-8 byte order mark, as Excel's "CSV UTF-8" does."""
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + b"".join(self.parts))
        return path


def json_lines() -> list[str]:
    """good.csv as JSON lines, numbers as JSON numbers with their digits as written."""
    numbers = {"open", "high", "low", "close", "volume", "trade_count", "revision"}
    lines = []
    for row in ROWS:
        parts = []
        for name, value in zip(COLUMNS, fields(row), strict=True):
            if value == "":
                text = "null"
            elif name in numbers or name == "adjusted":
                text = value
            else:
                text = json.dumps(value)
            parts.append(f"{json.dumps(name)}: {text}")
        lines.append("{" + ", ".join(parts) + "}")
    return lines


def fields(row: str) -> list[str]:
    return row.split(",")


def with_field(row: str, column: str, value: str) -> str:
    parts = fields(row)
    parts[COLUMNS.index(column)] = value
    return ",".join(parts)


@dataclass
class VendorExport:
    """What :func:`vendor_export` wrote: the path and the records tests ask about."""

    path: Path
    builder: CsvBuilder
    comment: Written
    hash_symbol: Written
    single_quoted: Written
    extra_column: Written
    quoted_comma: Written
    multi_line: Written
    truncated: Written

    @property
    def malformed(self) -> list[Written]:
        return [self.comment, self.extra_column, self.truncated]


def vendor_export(path: Path) -> VendorExport:
    """good.csv as a vendor delivers it.

    A terminal export made on Windows (a byte order mark, CRLF) with a banner line that looks like a comment,
    Excel-style fully quoted rows, a source id with a comma and one with a line break (both
    quoted), a symbol written ``#AAPL`` and one written ``'MSFT'``, a row with a vendor column
    appended; then, after a blank line, rows appended by a script with LF, the last one cut
    short by the transfer (no line break at the end).
    """
    b = CsvBuilder()
    b.add(HEADER, "\r\n", row=False)
    comment = b.add("# exported by vendor-x terminal 4.2, 2026-11-30 21:05 UTC", "\r\n")
    half = len(ROWS) // 2
    quoted_comma = multi_line = None
    for i, row in enumerate(ROWS[:half]):
        if 10 <= i < 20:  # Excel quotes every field
            b.add(",".join(f'"{v}"' for v in fields(row)), "\r\n")
        elif i == 25:
            quoted_comma = b.add(with_field(row, "source_id", '"vendor-x, feed A"'), "\r\n")
        elif i == 40:
            multi_line = b.add(with_field(row, "source_id", '"vendor-x\r\nfeed B"'), "\r\n")
        else:
            b.add(row, "\r\n")
    hash_symbol = b.add(with_field(ROWS[3], "symbol", "#AAPL"), "\r\n")
    single_quoted = b.add(with_field(ROWS[-3], "symbol", "'MSFT'"), "\r\n")
    extra_column = b.add(ROWS[50] + ",X", "\r\n")
    b.add("", "\n", row=False)  # a blank line: no row
    for row in ROWS[half:]:
        b.add(row, "\n")
    truncated = b.add(ROWS[-1][:31], "")
    assert quoted_comma is not None and multi_line is not None
    return VendorExport(
        b.write(path, bom=True),
        b,
        comment,
        hash_symbol,
        single_quoted,
        extra_column,
        quoted_comma,
        multi_line,
        truncated,
    )
