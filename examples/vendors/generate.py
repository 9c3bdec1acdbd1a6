#!/usr/bin/env python3
"""Deterministic generator for the raw vendor files under examples/vendors/.

Run from the repository root:

    python3 examples/vendors/generate.py

It (re)writes every file under examples/vendors/*/data/ (never the contracts,
catalogs and mappings beside them, which are written by hand). Standard library
only, no network, no randomness: noisy numbers come from a SHA-256 hash of a
fixed label, numbers are held as integers and formatted as text, so the output
is byte-for-byte the same on every run.

The files copy the shapes of real public downloads (docs/raw-vendor-files.md, "Worked
examples"): Alpha Vantage intraday bars, Yahoo daily bars, the NAB machine
temperature file, the UCI AirQuality file and a CGM (Dexcom Clarity style) glucose
export. Sessions and DST changes are
written out here, not computed by the code under test:

* XNAS 2026: Thanksgiving 2026-11-26 closed, 2026-11-27 closes 13:00 (extended
  hours until 17:00), Christmas 2026-12-25 closed, 2026-12-24 closes 13:00;
  regular hours 09:30-16:00, extended 04:00-20:00 New York time;
* New York and Chicago leave daylight saving time on 2026-11-01 (02:00 -> 01:00)
  and enter it on 2026-03-08 (02:00 -> 03:00); Rome leaves it on 2026-10-25
  (03:00 -> 02:00).
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime, time, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLOSED = {date(2026, 11, 26), date(2026, 12, 25)}
HALF_DAYS = {date(2026, 11, 27), date(2026, 12, 24)}


def rint(lo: int, hi: int, *label: object) -> int:
    """Deterministic integer in [lo, hi] from a label (no RNG state)."""
    digest = hashlib.sha256("|".join(str(p) for p in label).encode("utf-8")).digest()
    return lo + int.from_bytes(digest[:8], "big") % (hi - lo + 1)


def fixed(value: int, places: int, sep: str = ".") -> str:
    """``value`` in units of 10**-places as plain decimal text (``fixed(-2512, 2) == '-25.12'``)."""
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 10**places)
    return f"{sign}{whole}{sep}{frac:0{places}d}" if places else f"{sign}{whole}"


def write(path: Path, lines: list[str], newline: str = "\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((newline.join(lines) + newline).encode("utf-8"))


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def is_session(day: date) -> bool:
    return day.weekday() < 5 and day not in CLOSED


# --------------------------------------------------------------------------
# Alpha Vantage TIME_SERIES_INTRADAY (datatype=csv, extended_hours=true)
# --------------------------------------------------------------------------


def extended_bars(day: date, step: int) -> list[datetime]:
    """Bar starts (naive New York time) of ``day``'s extended hours, ``step`` minutes apart."""
    start = datetime.combine(day, time(4, 0))
    end = datetime.combine(day, time(17, 0) if day in HALF_DAYS else time(20, 0))
    count = int((end - start).total_seconds() // (60 * step))
    return [start + timedelta(minutes=step * n) for n in range(count)]


def bar_line(symbol: str, at: datetime, step: int) -> str:
    """One bar, prices in 1e-4 USD: open near the previous close, high/low around both."""
    base = {"AAPL": 2_300_000, "MSFT": 4_800_000}[symbol]
    minute = int((at - datetime(2026, 1, 1)).total_seconds() // 60)
    drift = rint(-9_000, 9_000, symbol, "drift", at.date())
    open_ = base + drift + rint(-2_500, 2_500, symbol, step, minute, "o")
    close = open_ + rint(-1_200, 1_200, symbol, step, minute, "c")
    high = max(open_, close) + rint(0, 900, symbol, step, minute, "h")
    low = min(open_, close) - rint(0, 900, symbol, step, minute, "l")
    regular = time(9, 30) <= at.time() < (time(13, 0) if at.date() in HALF_DAYS else time(16, 0))
    volume = rint(20_000, 90_000, symbol, step, minute, "v") if regular else rint(100, 4_000, symbol, step, minute)
    volume *= step
    prices = ",".join(fixed(p, 4) for p in (open_, high, low, close))
    return f"{at:%Y-%m-%d %H:%M:%S},{prices},{volume}"


def intraday(symbol: str, step: int, first: date, last: date) -> list[str]:
    """The file as Alpha Vantage sends it: header, then the newest bar first."""
    bars = [at for day in days(first, last) if is_session(day) for at in extended_bars(day, step)]
    return ["timestamp,open,high,low,close,volume", *(bar_line(symbol, at, step) for at in reversed(bars))]


def intraday_files() -> None:
    data = HERE / "intraday_bars" / "data"
    write(data / "AAPL_1min.csv", intraday("AAPL", 1, date(2026, 11, 25), date(2026, 11, 27)))
    write(data / "AAPL_5min.csv", intraday("AAPL", 5, date(2026, 10, 29), date(2026, 11, 4)))
    write(data / "AAPL_60min.csv", intraday("AAPL", 60, date(2026, 10, 26), date(2026, 12, 4)))
    write(data / "MSFT_60min.csv", intraday("MSFT", 60, date(2026, 10, 26), date(2026, 12, 4)))
    # Defects, one session (Monday 2026-11-02, the first after the DST change):
    lines = intraday("AAPL", 5, date(2026, 11, 2), date(2026, 11, 2))
    header, bars = lines[0], lines[1:]
    bars = [b for b in bars if not b.startswith("2026-11-02 10:00:00")]  # a bar never delivered
    bars.insert(1, bars[1])  # the vendor repeats a bar
    bars.append("2026-11-02 03:55:00,231.0000,231.1000,230.9000,231.0500,300")  # before extended hours
    at_0405 = [b[:19] for b in bars].index("2026-11-02 04:05:00")
    bars[at_0405] = bars[at_0405].replace("2026-11-02 04:05:00", "11/02/2026 04:05", 1)  # another export's format
    write(data / "bad" / "AAPL_5min.csv", [header, *bars])


# --------------------------------------------------------------------------
# Yahoo Finance daily history (Date,Open,High,Low,Close,Adj Close,Volume)
# --------------------------------------------------------------------------


def yahoo_price(value: int) -> str:
    """Yahoo's six places from a float: 230.01 arrives as 230.009995 or 230.010002."""
    wobble = rint(-8, 8, "wobble", value)
    return fixed(value * 10_000 + wobble, 6)


def daily_line(symbol: str, day: date) -> str:
    base = {"AAPL": 23_000, "MSFT": 48_000}[symbol]  # cents
    n = day.toordinal()
    open_ = base + rint(-900, 900, symbol, "daily", n)
    close = open_ + rint(-400, 400, symbol, "daily-c", n)
    high = max(open_, close) + rint(5, 300, symbol, "daily-h", n)
    low = min(open_, close) - rint(5, 300, symbol, "daily-l", n)
    adjusted = close - 26  # a dividend of 0.26 after the period
    volume = rint(30_000_000, 90_000_000, symbol, "daily-v", n)
    prices = ",".join(yahoo_price(p) for p in (open_, high, low, close, adjusted))
    return f"{day:%Y-%m-%d},{prices},{volume}"


def daily_files() -> None:
    data = HERE / "daily_bars" / "data"
    sessions = [d for d in days(date(2026, 10, 1), date(2026, 12, 31)) if is_session(d)]
    header = "Date,Open,High,Low,Close,Adj Close,Volume"
    write(data / "AAPL.csv", [header, *(daily_line("AAPL", d) for d in sessions)])
    write(data / "MSFT.csv", [header, *(daily_line("MSFT", d) for d in sessions)])
    # Defects: a session missing, a row for the Thanksgiving holiday (the vendor carried the
    # previous close forward), a day delivered twice, a price the vendor wrote as null.
    bad = [daily_line("AAPL", d) for d in sessions if date(2026, 11, 16) <= d <= date(2026, 11, 30)]
    bad = [b for b in bad if not b.startswith("2026-11-18")]
    holiday = daily_line("AAPL", date(2026, 11, 25)).replace("2026-11-25", "2026-11-26", 1)
    bad.insert([b[:10] for b in bad].index("2026-11-27"), holiday)
    bad.insert(2, bad[2])
    bad[-1] = ",".join(["2026-11-30", "null", *bad[-1].split(",")[2:]])
    write(data / "bad" / "AAPL.csv", [header, *bad])


# --------------------------------------------------------------------------
# NAB machine_temperature_system_failure.csv (timestamp,value), local time
# --------------------------------------------------------------------------


def temperature(step: int) -> str:
    """Degrees F with eight places, as NAB writes them (73.96732207)."""
    return fixed(7_000_000_000 + rint(0, 2_000_000_000, "nab", step), 8)


def local_minutes(first: datetime, last: datetime, step: int) -> list[datetime]:
    count = int((last - first).total_seconds() // (60 * step)) + 1
    return [first + timedelta(minutes=step * n) for n in range(count)]


def nab_files() -> None:
    data = HERE / "machine_temperature" / "data"
    header = "timestamp,value"
    # spring forward: 2026-03-08 02:00-02:55 does not exist in Chicago, the device skips it
    spring = [
        t
        for t in local_minutes(datetime(2026, 3, 7, 12, 0), datetime(2026, 3, 8, 12, 0), 5)
        if not datetime(2026, 3, 8, 2, 0) <= t < datetime(2026, 3, 8, 3, 0)
    ]
    lines = [f"{t:%Y-%m-%d %H:%M:%S},{temperature(i)}" for i, t in enumerate(spring)]
    write(data / "machine_M17_2026-03-08.csv", [header, *lines])
    # fall back: 2026-11-01 01:00-01:55 happens twice, and the device writes it twice, in order
    first = local_minutes(datetime(2026, 10, 31, 12, 0), datetime(2026, 11, 1, 1, 55), 5)
    repeat = local_minutes(datetime(2026, 11, 1, 1, 0), datetime(2026, 11, 1, 12, 0), 5)
    lines = [f"{t:%Y-%m-%d %H:%M:%S},{temperature(1000 + i)}" for i, t in enumerate([*first, *repeat])]
    write(data / "machine_M17_2026-11-01.csv", [header, *lines])
    # Defect: a device whose clock did not spring forward writes the hour that does not exist
    broken = local_minutes(datetime(2026, 3, 8, 0, 0), datetime(2026, 3, 8, 4, 0), 5)
    lines = [f"{t:%Y-%m-%d %H:%M:%S},{temperature(2000 + i)}" for i, t in enumerate(broken)]
    write(data / "bad" / "machine_M17_2026-03-08.csv", [header, *lines])


# --------------------------------------------------------------------------
# UCI AirQualityUCI.csv: ';'-separated, decimal commas, -200 for missing, Rome clock
# --------------------------------------------------------------------------

UCI_HEADER = (
    "Date;Time;CO(GT);PT08.S1(CO);NMHC(GT);C6H6(GT);PT08.S2(NMHC);NOx(GT);PT08.S3(NOx);"
    "NO2(GT);PT08.S4(NO2);PT08.S5(O3);T;RH;AH;;"
)


def uci_line(at: datetime, n: int) -> str:
    def r(lo: int, hi: int, name: str) -> int:
        return rint(lo, hi, "uci", name, n)

    co = fixed(r(3, 119, "co"), 1, ",") if at.hour != 4 else "-200"  # the analyser calibrates at 04:00
    values = [
        co,
        str(r(800, 2000, "s1")),
        "-200",  # the NMHC analyser was out of service for the whole period
        fixed(r(5, 400, "c6h6"), 1, ","),
        str(r(400, 2000, "s2")),
        str(r(20, 900, "nox")) if at.hour != 4 else "-200",
        str(r(300, 2200, "s3")),
        str(r(20, 250, "no2")) if at.hour != 4 else "-200",
        str(r(600, 2600, "s4")),
        str(r(200, 2500, "s5")),
        fixed(r(50, 250, "t"), 1, ","),
        fixed(r(200, 900, "rh"), 1, ","),
        fixed(r(3000, 20000, "ah"), 4, ","),
    ]
    return f"{at:%d/%m/%Y};{at:%H.%M.%S};{';'.join(values)};;"


def uci_files() -> None:
    data = HERE / "air_quality" / "data"
    # 2026-10-22 18:00 to 2026-10-28 17:00 Rome time; 02:00 on 2026-10-25 happens twice and is
    # written twice, in order. The file ends with empty rows (';;;;...'), as the original does.
    hours = local_minutes(datetime(2026, 10, 22, 18, 0), datetime(2026, 10, 28, 17, 0), 60)
    repeated = hours.index(datetime(2026, 10, 25, 2, 0))
    hours.insert(repeated + 1, hours[repeated])
    empty = ";" * UCI_HEADER.count(";")
    lines = [uci_line(at, n) for n, at in enumerate(hours)]
    write(data / "AirQualityUCI.csv", [UCI_HEADER, *lines, empty, empty, empty], newline="\r\n")
    # Defects: a date that does not exist, a value written with a decimal point, a sentinel
    # the mapping does not list (-999).
    bad = [uci_line(at, n) for n, at in enumerate(hours[:24])]
    bad[3] = bad[3].replace("22/10/2026", "31/09/2026", 1)
    fields = bad[5].split(";")
    fields[12] = fields[12].replace(",", ".")  # T
    bad[5] = ";".join(fields)
    fields = bad[7].split(";")
    fields[13] = "-999"  # RH
    bad[7] = ";".join(fields)
    write(data / "bad" / "AirQualityUCI.csv", [UCI_HEADER, *bad, empty], newline="\r\n")


CGM_HEADER = "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Glucose Value (mg/dL),Transmitter ID"
CGM_LOW = range(200, 205)  # 04:40-05:00 the second night: below 40 mg/dL, written 40 (LOW)
CGM_HIGH = range(150, 153)  # after dinner: above 400 mg/dL, written 400 (HIGH)
CGM_LOST = range(100, 106)  # half an hour of lost signal: written nil
CGM_WARMUP = 24  # the sensor's first two hours: rows without a value


def glucose(n: int) -> str:
    """Row ``n``'s cell: a reading 41..399 mg/dL, or what the sensor writes instead."""
    if n < CGM_WARMUP:
        return ""
    if n in CGM_LOST:
        return "nil"
    if n in CGM_LOW:
        return "40"
    if n in CGM_HIGH:
        return "400"
    return str(min(399, max(41, 120 + (n % 60) - 30 + rint(-15, 15, "cgm", n))))


def cgm_line(index: int, at: datetime, event: str, subtype: str, value: str, transmitter: str) -> str:
    return f"{index},{at:%Y-%m-%dT%H:%M:%S},{event},{subtype},{value},{transmitter}"


def cgm_files() -> None:
    """A CGM export: device header rows, then a reading every 5 minutes of Chicago wall-clock time
    (January: no DST), 40 = LOW, 400 = HIGH, nil = no reading, empty while the sensor warms up."""
    data = HERE / "cgm_glucose" / "data"
    start = datetime(2026, 1, 12, 8, 0, 17)
    head = [
        cgm_line(1, start - timedelta(minutes=2), "FirstName", "", "", ""),
        cgm_line(2, start - timedelta(minutes=2), "Device", "", "", "8G1234"),
        cgm_line(3, start - timedelta(minutes=1), "Sensor Start", "", "", "8G1234"),
    ]
    rows = [cgm_line(4 + n, start + timedelta(minutes=5 * n), "EGV", "", glucose(n), "8G1234") for n in range(312)]
    write(data / "cgm_8G1234.csv", [CGM_HEADER, *head, *rows], newline="\r\n")
    # Defects: 40 written as 40.0, a LOW the mapping does not list, 412 (no sensor reads it), a row twice.
    bad = rows[:60]
    bad[30] = bad[30].replace(f",{glucose(30)},", ",40.0,")
    bad[31] = bad[31].replace(f",{glucose(31)},", ",LOW,")
    bad[32] = bad[32].replace(f",{glucose(32)},", ",412,")
    bad.insert(41, bad[40])
    write(data / "bad" / "cgm_8G1234.csv", [CGM_HEADER, *head, *bad], newline="\r\n")


if __name__ == "__main__":
    intraday_files()
    daily_files()
    nab_files()
    uci_files()
    cgm_files()
