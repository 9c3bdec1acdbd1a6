"""A float written past its type's range is refused, not read as infinity (issue #26).

A vendor's "1e400" (a unit gone wrong, a sentinel) read as +inf passed the float64 type check and then
every bound (inf > 0). Written infinities ("inf", "-Infinity") are infinities; numbers past float32's
range fail a float32 column; numbers below the smallest subnormal round to zero, as IEEE parsing does.
Text is read by DuckDB (CSV, JSON lines) and Spark (CSV); PostgreSQL and chdb read typed columns only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tscontract import parse_contract, validate

CONTRACT = """
contract: vendor_floats
version: 1.0.0
owner: sensors@example
key: [series_id, ts]
time: {column: ts, precision: s, timezone: UTC instant, cadence: irregular}
fields:
  series_id: {type: string, nullable: false}
  ts: {type: timestamp_s_utc, nullable: false}
  x: {type: float64, nullable: true}
  y: {type: float32, nullable: true}
"""

# (x as written, y as written): rows 1.. in this order
VALUES = [
    ("1.5", "1.5"),
    ("1e400", "1e39"),  # past float64 / float32
    ("-1e999", "-3.5e38"),
    ("inf", "-Infinity"),  # written infinities
    ("1e-400", "1e-50"),  # below the smallest subnormal: zero
    ("1.7976931348623157e308", "3.4e38"),  # the largest finite values
    (" INF ", "nan"),
    ("12 lots", "1e38"),
]
X_FAILING = {2: "outside the float64 range", 3: "outside the float64 range", 8: "not a number"}
Y_FAILING = {2: "outside the float32 range", 3: "outside the float32 range"}


def write(tmp_path: Path, form: str) -> Path:
    """The rows as a vendor's CSV (numbers quoted, as some write them) or as JSON lines (numbers bare)."""
    stamps = [f"2026-12-05T10:{i:02d}:00Z" for i in range(len(VALUES))]
    if form == "csv":
        path = tmp_path / "floats.csv"
        lines = [f'"s","{t}","{x}","{y}"' for t, (x, y) in zip(stamps, VALUES, strict=True)]
        path.write_text("series_id,ts,x,y\n" + "\n".join(lines) + "\n")
        return path
    path = tmp_path / "floats.jsonl"
    number = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
    lines = []
    for t, (x, y) in zip(stamps, VALUES, strict=True):
        x_json, y_json = (v if number.match(v) else json.dumps(v) for v in (x, y))
        lines.append(f'{{"series_id": "s", "ts": "{t}", "x": {x_json}, "y": {y_json}}}')
    path.write_text("\n".join(lines) + "\n")
    return path


def type_failures(report: Any, column: str) -> dict[int, str]:
    [check] = [c for c in report.to_json()["checks"] if c["id"] == f"field.{column}.type"]
    return {e["row"]: e["reason"] for e in check["examples"]}


@pytest.mark.parametrize(("engine", "form"), [("duckdb", "csv"), ("duckdb", "json"), ("spark", "csv")])
def test_numbers_past_the_range_fail_the_type_check(engine: str, form: str, request: pytest.FixtureRequest, tmp_path):
    if engine == "spark":
        request.getfixturevalue("spark")
    report = validate(parse_contract(CONTRACT), write(tmp_path, form), engine=engine, examples=20)
    text = {row: "JSON varchar where float is declared" for row in (4, 7, 8)} if form == "json" else {}
    assert type_failures(report, "x") == X_FAILING | text  # JSON has no infinity: "inf" there is text
    assert type_failures(report, "y") == Y_FAILING | ({4: text[4], 7: text[7]} if text else {})
