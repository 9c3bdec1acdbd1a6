"""Vendor 1-minute bars for the gate tests, shaped as a market-data vendor delivers them.

The session is Friday 2026-11-27, the half day after Thanksgiving: XNAS opens 09:30 and
closes 13:00 New York time (14:30-18:00 UTC), 210 bars per symbol. Every message carries the
vendor's sequence number (``vendor_seq``, rising through the file). A vendor that corrects a
bar resends it later in the same file with a higher sequence number; a retransmission repeats
the sequence number it had.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from tests.conftest import EXAMPLES

OHLCV = EXAMPLES / "ohlcv_1m"
SESSION_OPEN = datetime(2026, 11, 27, 14, 30, tzinfo=UTC)
BARS_PER_SYMBOL = 210  # the half day
AFTER_CLOSE = datetime(2026, 11, 27, 18, 5, tzinfo=UTC)  # five minutes after the early close
HEADER = (
    "symbol,bar_start,open,high,low,close,volume,trade_count,adjusted,vendor_seq,"
    "source_id,ingest_run_id,transform_version,revision"
)
FIELD = "  vendor_seq: {type: int64, nullable: false, description: the vendor's message sequence number}\n"


@dataclass(frozen=True)
class Bar:
    symbol: str
    start: datetime
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal
    trade_count: int | None
    seq: int

    def line(self) -> str:
        stamp = self.start.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        count = "" if self.trade_count is None else str(self.trade_count)
        return (
            f"{self.symbol},{stamp},{self.open},{self.high},{self.low},{self.close},{self.volume},{count},false,"
            f"{self.seq},vendor-x,run-v,1.0.0,0"
        )


def session_bars() -> list[Bar]:
    """Both symbols' bars for the whole half day, in the vendor's order (by time, then symbol)."""
    bars = []
    price = {"AAPL": Decimal("231.40"), "MSFT": Decimal("476.10")}
    seq = 1000
    for minute in range(BARS_PER_SYMBOL):
        for symbol in ("AAPL", "MSFT"):
            step = Decimal((minute * 7 + len(symbol)) % 11 - 5) / 100
            start_price = price[symbol]
            close = start_price + step
            high = max(start_price, close) + Decimal("0.06")
            low = min(start_price, close) - Decimal("0.04")
            volume = Decimal(18000 + (minute * 131) % 9000).quantize(Decimal("0.0001"))
            seq += 1
            bars.append(
                Bar(symbol, SESSION_OPEN + timedelta(minutes=minute), start_price, high, low, close, volume, 150, seq)
            )
            price[symbol] = close
    return bars


def bar_at(bars: list[Bar], symbol: str, hhmm: str) -> Bar:
    """The bar of ``symbol`` starting at ``hhmm`` New York time (EST: UTC-5)."""
    hour, minute = map(int, hhmm.split(":"))
    start = datetime(2026, 11, 27, hour + 5, minute, tzinfo=UTC)
    return next(b for b in bars if b.symbol == symbol and b.start == start)


def corrected(bar: Bar, seq: int, close_delta: str = "0.03") -> Bar:
    """The vendor's corrected copy of ``bar``: a new close (within the bar's range), a later sequence."""
    close = bar.close + Decimal(close_delta)
    return replace(bar, close=close, high=max(bar.high, close), seq=seq)


def write_bars(path: Path, bars: list[Bar]) -> Path:
    path.write_text(HEADER + "\n" + "".join(b.line() + "\n" for b in bars), encoding="utf-8")
    return path


def contract_text(*, version: str = "3.1.0", extra: str = "", with_seq: bool = True) -> str:
    """The OHLCV example contract, with the vendor's sequence column and ``extra`` sections."""
    text = (OHLCV / "contract.yaml").read_text(encoding="utf-8")
    text = text.replace("version: 3.1.0", f"version: {version}")
    if with_seq:
        text = text.replace("  adjusted:", FIELD + "  adjusted:", 1)
    return text + extra


def write_contract(path: Path, **kwargs: object) -> Path:
    path.write_text(contract_text(**kwargs), encoding="utf-8")  # type: ignore[arg-type]
    return path
