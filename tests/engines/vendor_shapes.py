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


# ------------------------------------------------------------------ stray bars (issue 29, coverage)

STRAY_SYMBOLS = ("AAPL", "MSFT", "NVDA")
# the batch: four XNAS sessions around Thanksgiving (closed) and the half day after it
STRAY_DAYS = (date(2026, 11, 24), date(2026, 11, 25), HALF_DAY, date(2026, 11, 30))
# a Saturday bar and a bar at 03:00Z on a weekday (22:00 New York the evening before), both before the
# batch's first session: each is outside every session, and each once widened the batch's coverage to
# the sessions between it and the batch, whole, for every symbol (the Saturday bar to 23 November, the
# night bar to 19, 20 and 23 November)
SATURDAY_BAR = ("AAPL", datetime(2026, 11, 21, 15, tzinfo=UTC))
NIGHT_BAR = ("MSFT", datetime(2026, 11, 19, 3, tzinfo=UTC))


def stray_batch(strays: tuple[tuple[str, datetime], ...] = (SATURDAY_BAR, NIGHT_BAR)) -> list[tuple[str, datetime]]:
    """1-minute bars of three symbols over :data:`STRAY_DAYS`, with four planted holes, and ``strays``:

    - AAPL, 24 Nov: 15:00-15:09Z missing (one gap between two bars, 380 of 390 bars);
    - MSFT, 27 Nov (half day): the opening bar missing (a session start, 209 of 210);
    - NVDA, 25 Nov: the whole session missing (390 expected, none there);
    - NVDA, 30 Nov: the last five bars missing (a session end, 385 of 390).
    """
    aapl_gap = datetime(2026, 11, 24, 15, tzinfo=UTC)
    missing = {
        *(("AAPL", aapl_gap + timedelta(minutes=n)) for n in range(10)),
        ("MSFT", datetime(2026, 11, 27, 14, 30, tzinfo=UTC)),
        *(("NVDA", t) for t in minute_bars(date(2026, 11, 25))),
        *(("NVDA", t) for t in minute_bars(date(2026, 11, 30))[-5:]),
    }
    rows = [(s, t) for s in STRAY_SYMBOLS for day in STRAY_DAYS for t in minute_bars(day) if (s, t) not in missing]
    return sorted([*rows, *strays], key=lambda row: (row[0], row[1]))


def symbols_csv(tmp_path: Path, rows: list[tuple[str, datetime]], name: str = "bars.csv") -> Path:
    lines = [f"{s},{stamp(t)},230.00,230.10,229.90,230.05,1000.0000,10,false,vendor,run,1.0.0,0" for s, t in rows]
    return write(tmp_path, "\n".join([HEADER, *lines]) + "\n", name)


def symbols_catalog(tmp_path: Path) -> Path:
    entries = "".join(
        f"  {s}:\n    cadence: 60s\n    venue: XNAS\n    calendar: XNAS\n    quote_currency: USD\n"
        for s in STRAY_SYMBOLS
    )
    return write(tmp_path, f"catalog: ohlcv_1m\nseries:\n{entries}", "catalog.yaml")
