"""An ordinary electricity meter export, built from the wall clock (not from tscontract's conversion).

15-minute kWh readings of one meter, naive Europe/Berlin times, from 2026-03-28 00:00 to 2026-10-26 23:45
local: 2026-03-29 has no 02:00-02:45 (92 points), 2026-10-25 writes 02:00-02:45 twice, in order (100
points). Planted, each a real problem of the sample:

- four gaps: 2026-03-29 10:00 (on the spring DST day), 2026-05-12 14:15-14:45 (three readings),
  2026-07-01 00:00 (a local midnight), 2026-10-25 13:00 (on the autumn DST day): six readings missing;
- one reading resent: 2026-06-15 12:00 written twice, the same value;
- one negative reading: 2026-08-20 03:15, -0.412 kWh.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

BERLIN = ZoneInfo("Europe/Berlin")
METER = "MTR-4711"
FIRST, END = datetime(2026, 3, 28, tzinfo=BERLIN), datetime(2026, 10, 27, tzinfo=BERLIN)
GAPS = (  # local wall-clock times never delivered
    "2026-03-29 10:00:00",
    "2026-05-12 14:15:00",
    "2026-05-12 14:30:00",
    "2026-05-12 14:45:00",
    "2026-07-01 00:00:00",
    "2026-10-25 13:00:00",
)
GAP_DAYS = ("2026-03-29", "2026-05-12", "2026-07-01", "2026-10-25")
RESENT = "2026-06-15 12:00:00"
NEGATIVE = ("2026-08-20 03:15:00", "-0.412")


def readings() -> list[tuple[datetime, str]]:
    """Every delivered reading, (instant, kWh as written), in file order, the resent one twice."""
    out: list[tuple[datetime, str]] = []
    moment = FIRST.astimezone(UTC)
    i = 0
    while moment < END.astimezone(UTC):
        local = moment.astimezone(BERLIN)
        text = f"{local:%Y-%m-%d %H:%M:%S}"
        hour = local.hour + local.minute / 60
        kwh = f"{0.05 + 0.4 * (7 <= hour < 22) + (i * 37 % 23) / 100:.3f}"
        if text == NEGATIVE[0]:
            kwh = NEGATIVE[1]
        if text not in GAPS:
            out.append((moment, kwh))
            if text == RESENT:
                out.append((moment, kwh))
        moment += timedelta(minutes=15)
        i += 1
    return out


def write_local(path: Path) -> None:
    """The export as the meter writes it: naive local times, the repeated autumn hour twice, in order."""
    lines = ["meter_id,timestamp,energy_kwh"]
    lines += [f"{METER},{m.astimezone(BERLIN):%Y-%m-%d %H:%M:%S},{kwh}" for m, kwh in readings()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_offsets(path: Path) -> None:
    """The same export with each time's UTC offset (``2026-03-29T01:45:00+01:00``)."""
    lines = ["meter_id,timestamp,energy_kwh"]
    lines += [f"{METER},{m.astimezone(BERLIN).isoformat()},{kwh}" for m, kwh in readings()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
