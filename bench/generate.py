"""Generate ohlcv_1m-shaped Parquet data with a known number of injected violations.

    python bench/generate.py --rows 1000000 [--rows 10000000] [--out bench/data] [--force]

For each N it writes, under ``bench/data/``:

* ``ohlcv_1m_<N>.parquet``  -- N rows, the columns of ``examples/ohlcv_1m/contract.yaml``
  plus its provenance columns, in row groups of ``ROW_GROUP_ROWS`` rows, built ``GENERATE_ROWS`` at a time;
* ``ohlcv_1m_<N>.truth.json`` -- the exact number of injected violations per kind and the
  number of failing rows every benchmark check must report (the ground truth);
* ``ohlcv_1m_catalog.yaml`` -- a series catalog listing the generated symbols, so the
  tscontract peer can resolve cadence and calendar for every symbol.

Layout: ``SYMBOLS`` symbols, 1-minute bars in the XNAS regular session (390 bars a
session from its real open: 14:30:00Z <= bar_start < 21:00:00Z in winter, 13:30:00Z to
20:00:00Z in summer), the consecutive full XNAS sessions from ``FIRST_SESSION`` to
``LAST_SESSION`` (exchange-calendars: holidays and early closes skipped; 290 sessions,
56,550,000 bars of 500 symbols), rows ordered by bar_start then symbol. Prices are
whole cents, volumes whole shares; both are written as exact decimals.

Every number comes from numpy's PCG64 seeded with ``(SEED, chunk number)``, so the
output is the same on every run and the rows of a smaller N are a prefix of a larger one's
layout. Each defect row carries exactly one defect, and duplicated rows are clean copies,
so every injected violation is counted by exactly one check:

=====================  ==========================================  ===========================
kind                   what is written                             check that counts it
=====================  ==========================================  ===========================
low_gt_open            open moved 1-25 cents below low             ``low <= open <= high``
close_gt_high          close moved 1-25 cents above high           ``low <= close <= high``
negative_volume        volume negated                              ``volume >= 0``
negative_trade_count   trade_count set to -max(trade_count, 1)     ``trade_count is null or ...``
null_close             close null (an invariant skips it)          ``not_null:close``
duplicate_key          the row written twice, identical            ``unique:symbol,bar_start,...``
=====================  ==========================================  ===========================

About 0.5% of clean rows have a null ``trade_count``; the field is nullable, so they pass.
All arrays are built with numpy and pyarrow; no per-row Python objects are created.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers.common import CHECKS, NOT_NULL_COLUMNS, UNIQUE_KEY, check_not_null, check_unique

SEED = 20261130
SYMBOLS = 500
GENERATE_ROWS = 1_000_000  # rows built in memory at a time (one numpy pass)
# Parquet row group size: DuckDB's own, so a scan parallelises as it would on DuckDB's files.
ROW_GROUP_ROWS = 122_880
BARS_PER_SESSION = 390  # 09:30-16:00 America/New_York: 14:30Z in winter, 13:30Z in summer
FIRST_SESSION = dt.date(2026, 11, 2)  # a Monday, the first session after the switch to EST
# The calendar's last day. XNAS has no upper bound in exchange-calendars (``bound_max`` is
# None), so an explicit end is accepted; its default end moves with today's date, this does not.
# 290 full sessions: 290 * 390 * 500 = 56,550,000 bars.
LAST_SESSION = dt.date(2027, 12, 31)
# Probability, per row, of each single-row defect; duplicate_key uses the same rate.
# Six kinds at 1/6000 each make about 0.1% of rows defective.
DEFECT_RATE = 0.001 / 6
NULL_TRADE_COUNT_RATE = 0.005
DEFECT_KINDS = ("low_gt_open", "close_gt_high", "negative_volume", "negative_trade_count", "null_close")
KINDS = (*DEFECT_KINDS, "duplicate_key")

PRICE = pa.decimal128(18, 8)
VOLUME = pa.decimal128(24, 4)
SCHEMA = pa.schema(
    [
        ("symbol", pa.string()),
        ("bar_start", pa.timestamp("ms", tz="UTC")),
        ("open", PRICE),
        ("high", PRICE),
        ("low", PRICE),
        ("close", PRICE),
        ("volume", VOLUME),
        ("trade_count", pa.int64()),
        ("adjusted", pa.bool_()),
        ("source_id", pa.string()),
        ("ingest_run_id", pa.string()),
        ("transform_version", pa.string()),
        ("revision", pa.int64()),
    ]
)


def symbol_names(count: int = SYMBOLS) -> list[str]:
    """Distinct four-letter tickers, scrambled so neighbours don't look alike."""
    names = []
    for i in range(count):
        code = (i * 7919 + 12345) % 26**4  # 7919 is prime and coprime with 26**4: a bijection
        letters = []
        for _ in range(4):
            code, digit = divmod(code, 26)
            letters.append(chr(65 + digit))
        names.append("".join(reversed(letters)))
    assert len(set(names)) == count
    return names


def _full_sessions() -> np.ndarray:
    """Epoch milliseconds of the opens of the XNAS full sessions from FIRST_SESSION to LAST_SESSION.

    From exchange-calendars: a full session lasts 6.5 hours (holidays and early closes are
    skipped) and opens at its real instant (14:30Z under EST, 13:30Z under EDT), so every
    generated bar lies inside a real session.
    """
    import exchange_calendars as xcals

    calendar = xcals.get_calendar("XNAS", start=FIRST_SESSION.isoformat(), end=LAST_SESSION.isoformat())
    schedule = calendar.schedule
    opens = schedule["open"].dt.tz_convert("UTC")
    closes = schedule["close"].dt.tz_convert("UTC")
    full = (closes - opens) == pd_timedelta(hours=6.5)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    open_ms = [(ts.to_pydatetime() - epoch) // dt.timedelta(milliseconds=1) for ts in opens[full]]
    return np.array(open_ms, dtype=np.int64)


def pd_timedelta(**kwargs: float):  # type: ignore[no-untyped-def]
    import pandas as pd

    return pd.Timedelta(**kwargs)


_SESSION_OPENS: np.ndarray | None = None


def _session_opens() -> np.ndarray:
    global _SESSION_OPENS
    if _SESSION_OPENS is None:
        _SESSION_OPENS = _full_sessions()
    return _SESSION_OPENS


def max_base_rows(n_symbols: int = SYMBOLS) -> int:
    """Distinct bars the calendar holds: full sessions x 390 minutes x symbols.

    A data set may have slightly more rows (its duplicates, about 1 in 6000, use no bar).
    """
    return len(_session_opens()) * BARS_PER_SESSION * n_symbols


def _session_open_ms(day_index: np.ndarray) -> np.ndarray:
    """Epoch milliseconds of the open of the n-th full XNAS session from FIRST_SESSION."""
    opens = _session_opens()
    if int(np.max(day_index, initial=0)) >= len(opens):
        raise SystemExit(
            f"too many rows: the generator knows {len(opens)} full XNAS sessions from {FIRST_SESSION}"
            f" to {LAST_SESSION}, {max_base_rows():,} bars of {SYMBOLS} symbols; use fewer rows"
        )
    return opens[day_index]


def _hash_unit(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A deterministic value in [0, 1) from two integer arrays (splitmix64 finaliser)."""
    with np.errstate(over="ignore"):
        z = a.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + b.astype(np.uint64) * np.uint64(
            0xBF58476D1CE4E5B9
        )
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _price_cents(base_cents: np.ndarray, symbol: np.ndarray, minute: np.ndarray) -> np.ndarray:
    """Price of a symbol at the start of a global minute: a smooth path plus noise.

    A pure function of (symbol, minute), so close(t) == open(t + 1) without carrying
    state from one chunk to the next.
    """
    phase = _hash_unit(symbol, np.zeros_like(symbol)) * 2 * np.pi
    t = minute.astype(np.float64)
    log_move = 0.04 * np.sin(t / 3000.0 + phase) + 0.01 * np.sin(t / 170.0 + 2 * phase)
    log_move += 0.002 * (_hash_unit(symbol, minute) - 0.5)
    return np.maximum(np.rint(base_cents[symbol] * np.exp(log_move)).astype(np.int64), 100)


def _decimal_array(
    unscaled: np.ndarray, type_: pa.Decimal128Type, valid: np.ndarray | None = None
) -> pa.Array:
    """Build a decimal128 array from int64 unscaled values without Python objects."""
    words = np.empty((len(unscaled), 2), dtype=np.int64)
    words[:, 0] = unscaled  # little-endian two's complement: low word, then sign extension
    words[:, 1] = np.where(unscaled < 0, -1, 0)
    buffers = [None, pa.py_buffer(words)]
    null_count = 0
    if valid is not None and not valid.all():
        buffers[0] = pa.py_buffer(np.packbits(valid, bitorder="little"))
        null_count = int((~valid).sum())
    return pa.Array.from_buffers(type_, len(unscaled), buffers, null_count=null_count)


def _string_column(values: list[str], indices: np.ndarray) -> pa.Array:
    return pc.take(pa.array(values, pa.string()), pa.array(indices.astype(np.int32)))


def _chunk(
    chunk: int, first_base_row: int, rows: int, symbols: list[str], base_cents: np.ndarray
) -> tuple[pa.Table, int, dict[str, int]]:
    """One chunk of ``rows`` rows; returns it, the base rows consumed and defect counts."""
    rng = np.random.default_rng([SEED, chunk])
    duplicates = int(rng.binomial(rows, DEFECT_RATE)) if rows > 1 else 0
    base = rows - duplicates
    n_symbols = len(symbols)
    idx = first_base_row + np.arange(base, dtype=np.int64)
    minute, symbol = np.divmod(idx, n_symbols)
    day, bar = np.divmod(minute, BARS_PER_SESSION)
    bar_start = _session_open_ms(day) + bar * 60_000

    open_c = _price_cents(base_cents, symbol, minute)
    close_c = _price_cents(base_cents, symbol, minute + 1)
    body_hi = np.maximum(open_c, close_c)
    body_lo = np.minimum(open_c, close_c)
    high_c = body_hi + rng.geometric(0.15, base) - 1
    low_c = np.maximum(body_lo - (rng.geometric(0.15, base) - 1), 50)
    shares = np.rint(rng.lognormal(8.5, 1.0, base)).astype(np.int64) + 1
    trade_count = np.maximum(shares // rng.integers(40, 160, base), 1)
    trade_count_valid = rng.random(base) >= NULL_TRADE_COUNT_RATE
    close_valid = np.ones(base, dtype=bool)

    # One defect per row at most: a uniform draw picks the kind (or none).
    draw = rng.random(base)
    kind_of = np.full(base, -1, dtype=np.int8)
    for k in range(len(DEFECT_KINDS)):
        kind_of[(draw >= k * DEFECT_RATE) & (draw < (k + 1) * DEFECT_RATE)] = k
    defect = {name: kind_of == k for k, name in enumerate(DEFECT_KINDS)}

    shift = rng.integers(1, 26, base)
    low_gt_open = defect["low_gt_open"]
    open_c[low_gt_open] = low_c[low_gt_open] - shift[low_gt_open]
    close_gt_high = defect["close_gt_high"]
    close_c[close_gt_high] = high_c[close_gt_high] + shift[close_gt_high]
    shares[defect["negative_volume"]] *= -1
    negative_tc = defect["negative_trade_count"]
    trade_count[negative_tc] = -trade_count[negative_tc]
    trade_count_valid[negative_tc] = True
    close_valid[defect["null_close"]] = False

    # Duplicate clean rows only, each at most once, and write the copy right after it.
    clean = np.flatnonzero(kind_of < 0)
    dup_rows = np.sort(rng.choice(clean, size=min(duplicates, len(clean)), replace=False))
    order = np.sort(np.concatenate([np.arange(base), dup_rows]), kind="stable")

    cents_to_price = 10**6  # decimal(18,8) holds cents * 10**6
    table = pa.table(
        {
            "symbol": _string_column(symbols, symbol),
            "bar_start": pa.array(bar_start, pa.int64()).cast(pa.timestamp("ms", tz="UTC")),
            "open": _decimal_array(open_c * cents_to_price, PRICE),
            "high": _decimal_array(high_c * cents_to_price, PRICE),
            "low": _decimal_array(low_c * cents_to_price, PRICE),
            "close": _decimal_array(close_c * cents_to_price, PRICE, close_valid),
            "volume": _decimal_array(shares * 10**4, VOLUME),
            "trade_count": pa.array(trade_count, pa.int64(), mask=~trade_count_valid),
            "adjusted": pa.array(np.zeros(base, dtype=bool)),
            "source_id": _string_column(["vendor-x"], np.zeros(base, dtype=np.int32)),
            "ingest_run_id": pc.cast(
                pc.binary_join_element_wise(
                    "run-", pc.utf8_lpad(pa.array(day + 1).cast(pa.string()), 5, "0"), ""
                ),
                pa.string(),
            ),
            "transform_version": _string_column(["1.0.0"], np.zeros(base, dtype=np.int32)),
            "revision": pa.array(np.zeros(base, dtype=np.int64)),
        },
        schema=SCHEMA,
    ).take(pa.array(order))
    counts = {name: int(mask.sum()) for name, mask in defect.items()}
    counts["duplicate_key"] = len(dup_rows)
    return table, base, counts


def _iso_ms(epoch_ms: int) -> str:
    return dt.datetime.fromtimestamp(epoch_ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def expected_failures(injected: dict[str, int]) -> dict[str, int]:
    """The failing-row count each benchmark check must report for these injections."""
    expected = dict.fromkeys(CHECKS, 0)
    expected["low <= open <= high"] = injected["low_gt_open"]
    expected["low <= close <= high"] = injected["close_gt_high"]
    expected["volume >= 0"] = injected["negative_volume"]
    expected["trade_count is null or trade_count >= 0"] = injected["negative_trade_count"]
    expected[check_not_null("close")] = injected["null_close"]
    expected[check_unique(UNIQUE_KEY)] = 2 * injected["duplicate_key"]  # both copies of each key
    assert set(expected) == set(CHECKS), sorted(set(expected) ^ set(CHECKS))
    assert all(check_not_null(c) in expected for c in NOT_NULL_COLUMNS)
    return expected


def write_catalog(path: Path, symbols: list[str]) -> None:
    lines = [
        "# Generated by bench/generate.py: every symbol of the benchmark data.",
        "catalog: ohlcv_1m",
        "series:",
    ]
    for name in symbols:
        lines += [
            f"  {name}:",
            "    cadence: 60s",
            "    venue: XNAS",
            "    calendar: XNAS",
            "    quote_currency: USD",
        ]
    path.write_text("\n".join(lines) + "\n")


def paths(out_dir: Path, rows: int) -> tuple[Path, Path, Path]:
    return (
        out_dir / f"ohlcv_1m_{rows}.parquet",
        out_dir / f"ohlcv_1m_{rows}.truth.json",
        out_dir / "ohlcv_1m_catalog.yaml",
    )


def generate(rows: int, out_dir: Path, force: bool = False, quiet: bool = False) -> Path:
    """Write the data set of ``rows`` rows unless an identical one is already there."""
    parquet_path, truth_path, catalog_path = paths(out_dir, rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    symbols = symbol_names()
    if not catalog_path.exists() or force:
        write_catalog(catalog_path, symbols)
    if not force and parquet_path.exists() and truth_path.exists():
        truth = json.loads(truth_path.read_text())
        if truth.get("rows") == rows and truth.get("seed") == SEED:
            if not quiet:
                print(f"up to date: {parquet_path}")
            return parquet_path

    started = time.perf_counter()
    base_rng = np.random.default_rng([SEED, 999_999])  # no chunk number below 10**12 rows
    base_cents = np.rint(np.exp(base_rng.uniform(np.log(500), np.log(80_000), len(symbols)))).astype(np.int64)
    injected = dict.fromkeys(KINDS, 0)
    tmp_path = parquet_path.with_suffix(".parquet.tmp")
    written = base_rows = chunk = 0
    with pq.ParquetWriter(tmp_path, SCHEMA, compression="zstd") as writer:
        while written < rows:
            size = min(GENERATE_ROWS, rows - written)
            table, used, counts = _chunk(chunk, base_rows, size, symbols, base_cents)
            writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
            for kind, count in counts.items():
                injected[kind] += count
            written += table.num_rows
            base_rows += used
            chunk += 1
    tmp_path.replace(parquet_path)
    last_minute = (base_rows - 1) // len(symbols)
    last_day, last_bar = divmod(last_minute, BARS_PER_SESSION)
    last_ms = int(_session_open_ms(np.array(last_day)) + last_bar * 60_000)
    first_ms = int(_session_open_ms(np.array(0)))
    truth = {
        "rows": rows,
        "seed": SEED,
        "symbols": len(symbols),
        "generate_rows": GENERATE_ROWS,
        "row_group_rows": ROW_GROUP_ROWS,
        "first_bar": _iso_ms(first_ms),
        "last_bar": _iso_ms(last_ms),
        "sessions": last_day + 1,
        "injected": injected,
        "injected_rows": sum(injected.values()) + injected["duplicate_key"],
        "expected_failed_rows": expected_failures(injected),
        "parquet": parquet_path.name,
        "catalog": catalog_path.name,
    }
    truth_path.write_text(json.dumps(truth, indent=2) + "\n")
    if not quiet:
        seconds = time.perf_counter() - started
        size_mb = parquet_path.stat().st_size / 2**20
        print(f"wrote {parquet_path} ({rows:,} rows, {size_mb:,.1f} MiB) in {seconds:.1f}s")
        print(f"wrote {truth_path}: injected {injected}")
    return parquet_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", required=True, help="rows to write (repeatable)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    parser.add_argument("--force", action="store_true", help="regenerate even if the files exist")
    args = parser.parse_args(argv)
    for rows in args.rows:
        if rows < 1:
            parser.error("--rows must be positive")
        generate(rows, args.out, force=args.force)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
