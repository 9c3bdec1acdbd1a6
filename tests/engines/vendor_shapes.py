"""Bars and readings shaped like real vendor deliveries around US holidays, a half day and DST.

The sessions are written out here, from the NASDAQ calendar, not computed by the code under
test: 2026-11-26 (Thanksgiving) is closed, 2026-11-27 closes at 13:00 New York time (18:00Z),
and New York leaves daylight saving time on 2026-11-01, so a session opens at 13:30Z before
and at 14:30Z after.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from tests.conftest import EXAMPLES, write

OHLCV = EXAMPLES / "ohlcv_1m"
HEADER = (
    "symbol,bar_start,open,high,low,close,volume,trade_count,adjusted,source_id,ingest_run_id,"
    "transform_version,revision"
)
THANKSGIVING = date(2026, 11, 26)
HALF_DAY = date(2026, 11, 27)
DST_END = date(2026, 11, 1)


def regular_session(day: date) -> tuple[datetime, datetime] | None:
    """Open and close (UTC) of XNAS's regular session on ``day``; None when closed."""
    if day.weekday() >= 5 or day == THANKSGIVING:
        return None
    offset = 4 if day < DST_END else 5  # EDT, then EST
    opens = datetime(day.year, day.month, day.day, 9 + offset, 30, tzinfo=UTC)
    closes = datetime(day.year, day.month, day.day, (13 if day == HALF_DAY else 16) + offset, tzinfo=UTC)
    return opens, closes


def sessions(first: date, last: date) -> list[date]:
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    return [d for d in days if regular_session(d) is not None]


def minute_bars(day: date, step_min: int = 1) -> list[datetime]:
    """Every bar of ``day``'s regular session, ``step_min`` minutes apart, from the open."""
    found = regular_session(day)
    assert found is not None, day
    opens, closes = found
    count = int((closes - opens).total_seconds() // (60 * step_min))
    return [opens + timedelta(minutes=step_min * n) for n in range(count)]


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def bars_csv(tmp_path: Path, instants: list[datetime], symbol: str = "AAPL", name: str = "bars.csv") -> Path:
    rows = [f"{symbol},{stamp(t)},230.00,230.10,229.90,230.05,1000.0000,10,false,vendor,run,1.0.0,0" for t in instants]
    return write(tmp_path, "\n".join([HEADER, *rows]) + "\n", name)


def contract_with(tmp_path: Path, cadence: str | None = None, extra: str = "", name: str = "c.yaml") -> Path:
    """The OHLCV seed contract with another cadence clause and more sections."""
    text = (OHLCV / "contract.yaml").read_text()
    if cadence is not None:
        text = text.replace("cadence: 60s within session; no bars outside session", f"cadence: {cadence}")
    return write(tmp_path, text + extra, name)


def catalog_with(tmp_path: Path, session: str = "regular") -> Path:
    text = (OHLCV / "catalog.yaml").read_text()
    if session != "regular":
        text = text.replace("calendar: XNAS", f"calendar: XNAS\n    session: {session}")
    return write(tmp_path, text, "catalog.yaml")


def venue_date_stamp(day: date) -> datetime:
    """00:00 of ``day`` in New York, in UTC: how daily bars are stamped by 'session date'."""
    return datetime(day.year, day.month, day.day, 4 if day < DST_END else 5, tzinfo=UTC)
