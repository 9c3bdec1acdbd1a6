"""Calendar cadences on an engine against the reference (:mod:`tscontract.contract.calendar_time`).

A case is a calendar step, a zone, a tolerance, series of points (on the calendar, off it, jittered
within the tolerance), an optional ``--from/--to`` and a completeness window of months; ``engine_findings``
runs it through ``validate`` and ``reference_findings`` says what the reference fails, both in one shape:
the cadence faults and the short windows per series.

``cases(size=N)`` draws N cases that share the step, tolerance, window and ``--from/--to`` (each its own
zone and series, named ``c<i>s<n>``) as one panel, its zones in a catalog (``device_zone``): one
``validate`` judges them all, where an engine's cost is per call and per statement, not per row. The
completeness windows then span the whole panel's points, in each series' zone, as the reference's do.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from tscontract import parse_contract, validate
from tscontract.contract.calendar_time import CalendarStep, cadence_faults, short_windows, window_bounds
from tscontract.contract.catalog import Catalog, parse_catalog

NOW = datetime(2090, 1, 1, tzinfo=UTC)
ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney")
SCHEMA = pa.schema([("series_id", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("value", pa.float64())])


def panel_contract(cadence: str, zone: str, extra: str = "") -> str:
    """A contract of ``series_id``, ``ts`` and ``value`` with ``cadence`` in ``zone``; ``extra``: more sections."""
    return (
        "contract: panel\nversion: 1.0.0\nowner: tests\nkey: [series_id, ts]\n"
        f'time:\n  column: ts\n  precision: us\n  timezone: UTC instant\n  cadence: "{cadence}"\n  zone: {zone}\n'
        "fields:\n  series_id: {type: string, nullable: false}\n  ts: {type: timestamp_us_utc, nullable: false}\n"
        "  value: {type: float64, nullable: true}\n" + extra
    )


@dataclass(frozen=True)
class Case:
    step: CalendarStep
    zone: str
    tolerance_h: int
    window_months: int
    points: dict[str, list[datetime]]
    coverage: tuple[datetime, datetime] | None = None
    zones: dict[str, str] = field(default_factory=dict)  # per series, a catalog device_zone (else ``zone``)

    def zone_of(self, series: str) -> str:
        return self.zones.get(series, self.zone)

    @property
    def cadence_text(self) -> str:
        anchor = self.step.anchor
        where = f"month {anchor}" if isinstance(anchor, str) else f"day {anchor}"
        year, month = divmod(self.step.phase + (self.step.months - 1 if anchor == "end" else 0), 12)
        text = f"{self.step.months} months; anchored at {where}; aligned to {year:04d}-{month + 1:02d}"
        return text + (f"; tolerance +/-{self.tolerance_h}h" if self.tolerance_h else "")

    def contract(self) -> str:
        months = f"completeness: {{window: {self.window_months} months, expected_count: per cadence}}\n"
        return panel_contract(self.cadence_text, self.zone, months)

    def catalog(self) -> Catalog | None:
        if not self.zones:
            return None
        entries = "".join(f"  {s}: {{device_zone: {z}}}\n" for s, z in sorted(self.zones.items()))
        return parse_catalog(f"catalog: panel\nseries:\n{entries}")

    def table(self) -> pa.Table:
        rows = [{"series_id": s, "ts": t, "value": 1.0} for s, points in sorted(self.points.items()) for t in points]
        return pa.Table.from_pylist(rows, schema=SCHEMA)


def _series(draw: Any, step: CalendarStep, zone: str, tolerance_h: int, first: int) -> list[datetime]:
    periods = draw(st.lists(st.integers(first, first + 14), min_size=1, max_size=12, unique=True))
    instants = []
    for k in periods:
        jitter = draw(st.sampled_from([0, 0, 0, tolerance_h, -tolerance_h, tolerance_h + 1, 30 * 24]))
        instants.append(step.at(k, zone) + timedelta(hours=jitter))
    if tolerance_h and draw(st.booleans()):  # a second point for one period, within the tolerance
        instants.append(step.at(periods[0], zone) - timedelta(hours=tolerance_h - 1))
    return instants


@st.composite
def cases(draw: Any, max_series: int = 3, size: int = 1) -> Case:
    """One case (``size=1``), or ``size`` cases as one panel: each its zone and 1..``max_series`` series."""
    months = draw(st.sampled_from([1, 2, 3, 12, 60]))
    anchor = draw(st.sampled_from(["start", "end", 1, 15, 29, 31]))
    step = CalendarStep(months, anchor, draw(st.integers(2000 * 12, 2000 * 12 + months - 1)))
    zone = draw(st.sampled_from(ZONES))
    tolerance_h = draw(st.sampled_from([0, 0, 6]))
    first = step.period_of(datetime(2020, 1, 1).date()) if months < 60 else step.period_of(datetime(2000, 1, 1).date())
    points: dict[str, list[datetime]] = {}
    zones: dict[str, str] = {}
    for c in range(size):
        # the first case in the drawn zone, each further one in its own (the next zones when all draw the first)
        case_zone = zone if c == 0 else ZONES[(ZONES.index(draw(st.sampled_from(ZONES))) + c) % len(ZONES)]
        for n in range(draw(st.integers(1, max_series))):
            name = f"c{c}s{n}" if size > 1 else f"s{n}"
            points[name] = _series(draw, step, case_zone, tolerance_h, first)
            zones[name] = case_zone
    coverage = None
    if draw(st.booleans()):
        lo = step.at(first - draw(st.integers(0, 3)), zone) + timedelta(hours=draw(st.sampled_from([0, 5])))
        coverage = (lo, step.at(first + draw(st.integers(5, 18)), zone))
    window = months * draw(st.sampled_from([1, 2, 4])) if months < 60 else 120
    return Case(step, zone, tolerance_h, window, points, coverage, zones if size > 1 else {})


def _fault(example: dict[str, Any]) -> tuple[str, str, str, int]:
    series = example["series_id"]
    if "off_calendar" in example:
        return series, example["ts"], "off", 0
    if "same_period" in example:
        return series, example["ts"], "again", 0
    if "edge" in example:
        return series, example["missing"][0], example["edge"], example["missing_periods"]
    return series, example["ts"], "gap", example["missing_periods"]


def engine_findings(case: Case, engine: str = "duckdb", where: Any = None) -> tuple[list[Any], list[Any]]:
    """The cadence faults and short windows ``engine`` reports for ``case`` (``where``: a PostgreSQL URL, or
    a directory for Spark's Parquet)."""
    data: Any = case.table()
    if engine == "postgres":
        from tests.engines.pg_tables import load_table

        name = f"public.cal{time.time_ns()}"
        load_table(where, name, data)
        data = f"{where}#{name}"
    elif engine == "spark":
        path = Path(where) / f"cal{time.time_ns()}.parquet"
        pq.write_table(data, path)
        data = path
    report = validate(
        parse_contract(case.contract()),
        data,
        catalog=case.catalog(),
        now=NOW,
        engine=engine,
        examples=1000,
        coverage=case.coverage,
    )
    checks = {c.id: c for c in report.checks}
    cadence, completeness = checks["time.cadence"], checks["completeness"]
    assert cadence.status in ("passed", "failed"), cadence.message
    assert completeness.status in ("passed", "failed"), completeness.message
    assert cadence.failed_rows == len(cadence.examples) and completeness.failed_rows == len(completeness.examples)
    faults = sorted(_fault(e) for e in cadence.examples)
    short = sorted(
        (e["series_id"], e.get("counted", [e["window_start"]])[0], e["expected"], e["actual"])
        for e in completeness.examples
    )
    return faults, short


def _z(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def reference_findings(case: Case) -> tuple[list[Any], list[Any]]:
    tolerance = timedelta(hours=case.tolerance_h)
    faults = sorted(
        (series, _z(f.at), f.what, f.periods)
        for series, points in case.points.items()
        for f in cadence_faults(case.step, case.zone_of(series), points, tolerance, case.coverage, NOW)
    )
    placed = {
        s: [p for p in points if case.step.index(p, case.zone_of(s), tolerance) is not None]
        for s, points in case.points.items()
    }
    on_calendar = [p for points in placed.values() for p in points]
    if case.coverage is not None:
        start, end = case.coverage
    elif on_calendar:
        start, end = min(on_calendar), max(on_calendar) + timedelta(microseconds=1)
    else:
        return faults, []
    short = sorted(
        (series, _z(lo), expected, actual)
        for series, points in case.points.items()
        if placed[series]
        for lo, expected, actual in short_windows(
            case.step, case.zone_of(series), points, _counted(case, case.zone_of(series), start, end), 1.0, tolerance
        )
    )
    return faults, short


def _counted(case: Case, zone: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The completeness windows of ``zone`` over the batch's span, each cut to what is counted of it."""
    windows = window_bounds(case.window_months, zone, start, end)
    if case.coverage is None:
        counted = [(a, min(b, NOW)) for a, b in windows]
    else:
        counted = [(max(a, start), min(b, end, NOW)) for a, b in windows]
    return [(a, b) for a, b in counted if b > a]


def per_case(findings: tuple[list[Any], list[Any]]) -> dict[str, tuple[list[Any], list[Any]]]:
    """Findings split by case (a series name up to its ``s<n>``): a failure names the case that differs."""
    split: dict[str, tuple[list[Any], list[Any]]] = defaultdict(lambda: ([], []))
    for part, rows in enumerate(findings):
        for row in rows:
            split[row[0].rsplit("s", 1)[0]][part].append(row)
    return dict(split)
