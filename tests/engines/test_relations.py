"""Catalogs, bounds and sessions reach SQL exactly and cheaply; sessions are cached by year."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tests.conftest import ROOT
from tscontract.engines import calendars, relations
from tscontract.engines.duckdb import connect

COLUMNS = [("name", "VARCHAR"), ("low", "DECIMAL(38,10)"), ("n", "BIGINT"), ("at", "TIMESTAMPTZ")]
ROWS = [
    ("it's", Decimal("0.0000000001"), 2**62, datetime(2026, 11, 27, 18, 0, tzinfo=UTC)),
    ("b", Decimal("-12345678901234567890123456.1234567890"), None, None),
    (None, 1.1, -1, datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
]


# list parameters (DuckDB's way), literals (the other engines'), then the Arrow relation (a large table)
@pytest.mark.parametrize(
    ("parameter_rows", "literal_rows"),
    [(relations.PARAMETER_ROWS, relations.LITERAL_ROWS), (0, relations.LITERAL_ROWS), (0, 0)],
    ids=["parameters", "literals", "arrow"],
)
def test_small_table_keeps_every_value_exactly(monkeypatch, parameter_rows, literal_rows):
    monkeypatch.setattr(relations, "PARAMETER_ROWS", parameter_rows)
    monkeypatch.setattr(relations, "LITERAL_ROWS", literal_rows)
    con = connect()
    relations.small_table(con, "t", COLUMNS, ROWS)
    assert con.execute("SELECT * FROM t").fetchall() == [(r[0], Decimal(str(r[1])), r[2], r[3]) for r in ROWS]
    types = [r[1] for r in con.execute("DESCRIBE t").fetchall()]
    assert types == ["VARCHAR", "DECIMAL(38,10)", "BIGINT", "TIMESTAMP WITH TIME ZONE"]
    relations.small_table(con, "empty", COLUMNS, [])
    assert con.execute("SELECT count(*) FROM empty").fetchall() == [(0,)]
    assert [r[1] for r in con.execute("DESCRIBE empty").fetchall()] == types


SESSIONS_PROBE = """
import json, sys
from datetime import datetime, UTC
from tscontract.engines import calendars
rows = calendars.sessions(["XNAS"], datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC))
print(json.dumps({"imported": "exchange_calendars" in sys.modules,
                  "rows": [[c, o.isoformat(), e.isoformat()] for c, _kind, _day, o, e, _zone in rows]}))
"""


def probe(cache: str) -> dict:
    env = {**os.environ, "TSCONTRACT_CACHE_DIR": cache}
    done = subprocess.run(
        [sys.executable, "-c", SESSIONS_PROBE], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    return json.loads(done.stdout)


def test_sessions_come_from_the_cache_without_the_calendar_package(tmp_path):
    first = probe(str(tmp_path))
    assert first["imported"]
    second = probe(str(tmp_path))
    assert not second["imported"]  # no exchange-calendars import, no calendar built
    assert second["rows"] == first["rows"]
    days = {o[:10]: (o, c) for _, o, c in first["rows"]}
    # the half day after Thanksgiving closes at 18:00 UTC; Thanksgiving itself has no session
    assert days["2026-11-27"] == ("2026-11-27T14:30:00+00:00", "2026-11-27T18:00:00+00:00")
    assert "2026-11-26" not in days
    assert {o[:4] for _, o, _ in first["rows"]} == {"2026"}  # the whole year is kept, nothing more
    assert len(first["rows"]) > 240


def test_unknown_calendar_is_an_input_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TSCONTRACT_CACHE_DIR", str(tmp_path))
    with pytest.raises(calendars.InputError, match="exchange calendar 'NOPE' is not available"):
        calendars.sessions(["NOPE"], datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC))
    assert not list(tmp_path.rglob("*.pickle"))  # nothing is kept for a calendar that does not exist


def test_a_catalog_without_sessions_does_not_import_pandas():
    code = (
        "import sys, tscontract; "
        "r = tscontract.validate('examples/plant_sensor/contract.yaml', 'examples/plant_sensor/data/good.csv', "
        "catalog='examples/plant_sensor/catalog.csv'); print(r.passed, 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["True", "False"]
