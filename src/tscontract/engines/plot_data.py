"""What the HTML report plots, read from the data with DuckDB: points, failing points, holes, gaps, windows.

The report (``report/html.py``) renders a ValidationReport and never reads data; this module is
the engine side of its plots. Each series is downsampled (M4: the first, last, lowest and highest
point of each time bucket, so spikes survive); failing points are found by the engine's own
failure SQL; gaps and short completeness windows are found again for every series.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tscontract.contract.catalog import load_catalog
from tscontract.contract.loader import load_contract
from tscontract.engines.base import TYPED_VIEW
from tscontract.engines.duckdb import ValidationRun, connect
from tscontract.engines.inputs.sources import Source, open_source
from tscontract.engines.inputs.tables import windowed
from tscontract.engines.profile import measurement_fields
from tscontract.engines.run.time import TimeChecks
from tscontract.plan.bounds import load_bounds
from tscontract.plan.checks import build_plan
from tscontract.plan.result import ValidationReport
from tscontract.sql.columns import ident

GAP_CAP = 1000  # gaps and short completeness windows plotted, over all series


def _instant(iso: str) -> datetime:
    found = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def series_data(
    contract_path: str | Path,
    data_path: Any,
    catalog_path: str | Path | None,
    report: ValidationReport,
    field: str | None = None,
    max_points: int = 2000,
    mapping: Any = None,
    bounds: Any = None,
    max_failing: int = 2000,
    now: Any = None,
    coverage: Any = None,
) -> dict:
    """Build the ``series`` argument of :func:`render_html` from the data with DuckDB.

    With ``mapping`` the data is raw and plotted as converted (as ``validate --mapping`` checks it).
    ``bounds`` (a path or :class:`~tscontract.plan.bounds.Bounds`) are the ``--bounds`` validate
    applied: drawn as the profiled plausibility bounds. Each series is downsampled to about
    ``max_points`` (the first, last, lowest and highest point of each time bucket, so spikes
    survive); every point failing a row check of the plotted field that failed (up to
    ``max_failing`` per series, the first in time) is drawn and marked, found by the engine's
    own failure SQL, not only the report's few examples. Gaps and short completeness windows are
    found again for every series (up to ``GAP_CAP`` each, over all series), at ``now`` over
    ``coverage`` as validate judged them, not only the report's ``--examples``.
    """
    contract = load_contract(contract_path)
    catalog = load_catalog(catalog_path) if catalog_path else None
    if isinstance(bounds, str | Path):
        bounds = load_bounds(bounds)
    scol, tcol = contract.series_column, contract.time.column
    field = field or (measurement_fields(contract) or ["value"])[0]
    plan = build_plan(contract, catalog, bounds)
    data_path = windowed(data_path, tcol, coverage)  # a table's window, as validate read it
    con = connect()
    try:
        src: Source
        if mapping is not None:
            from tscontract.engines.inputs.staging import stage_source

            src, _ = stage_source(con, data_path, contract, catalog, mapping)
        else:
            src = open_source(con, data_path)
        run = ValidationRun(plan, src, now, GAP_CAP, None, con=con, coverage=coverage)
        run.register_catalog()
        run.register_bounds()
        run.create_typed_view(numbered=True)
        time = TimeChecks(run)
        sql = _points_sql(run, field, scol, tcol, time.interval_sql(), time.tolerance_sql())
        rows = con.execute(sql, [max(1, max_points // 4), max_failing]).fetchall()
        time_checks = [c for c in plan.checks if c.kind in ("cadence", "completeness")]
        if time_checks:  # every series' gaps and short windows, not only the report's examples
            time.execute(time_checks)
    finally:
        con.close()
    points: dict[str, list] = {}
    holes: dict[str, list[int]] = {}
    for s, t, v, f, h in rows:
        iso = t.astimezone(UTC).isoformat().replace("+00:00", "Z")
        points.setdefault(s, []).append((iso, v, bool(f)))
        holes.setdefault(s, []).append(int(h))
    drawn = {sid: _applied_bounds(contract, catalog, bounds, field, sid) for sid in points}
    gaps: dict[str, list] = {}
    windows: dict[str, list] = {}
    for c in list(run.results.values()) or report.checks:  # cadence and completeness found again, all series
        for e in c.examples:
            sid = str(e.get(scol)) if scol else "all"
            if c.kind == "cadence" and e.get("previous") and e.get(tcol):
                gaps.setdefault(sid, []).append([e["previous"], e[tcol]])
            if c.kind == "cadence" and isinstance(e.get("missing"), list):  # a hole at a session's edge
                gaps.setdefault(sid, []).append(list(e["missing"]))
            if c.kind == "completeness" and "window_start" in e:
                windows.setdefault(sid, []).append((e["window_start"], e["expected"], e["actual"]))
                gaps.setdefault(sid, []).extend([list(g) for g in e.get("gaps", [])])
    merged = {sid: _merged(spans) for sid, spans in gaps.items()}  # a hole cadence and completeness both name
    return {"field": field, "points": points, "holes": holes, "bounds": drawn, "gaps": merged, "windows": windows}


def _merged(spans: list) -> list[list[str]]:
    """Overlapping ``[from, to]`` instants (RFC 3339 text) as one span each."""
    out: list[list[str]] = []
    for a, b in sorted(spans, key=lambda span: _instant(span[0])):
        if out and _instant(a) <= _instant(out[-1][1]):
            out[-1][1] = max(out[-1][1], b, key=_instant)
        else:
            out.append([a, b])
    return out


def _points_sql(
    run: Any, field: str, scol: str | None, tcol: str, interval: str = "NULL::BIGINT", tolerance: str = "0"
) -> str:
    """Per series: first, last, min and max of each of $1 time buckets (M4), and failing points ($2 at most).

    A point fails when it fails a row check on ``field`` that failed in the run, by the engine's own SQL.
    Each point carries the number of holes in its series up to it (a hole: the step from the previous
    point is longer than the cadence ``interval`` + ``tolerance``, in µs over ``__i``; without a fixed
    cadence, five times the series' median step): the line breaks between two plotted points with a
    hole between them.
    """
    failing = [
        sql
        for check in run.plan.of_scope("row")
        if field in check.columns and not run.missing(check)
        if not (check.params.needs_catalog and not run.catalog_joined)
        if (sql := run.failure_sql(check)) is not None
    ]
    fail = " OR ".join(f"COALESCE(({sql}), FALSE)" for sql in failing) or "FALSE"
    series = f"CAST({ident(scol)} AS VARCHAR)" if scol else "'all'"
    value = f"TRY_CAST({ident('__raw_' + field)} AS DOUBLE)" if field in run.columns else "NULL::DOUBLE"
    return f"""
        WITH p AS (SELECT __row AS r, {series} AS s, {ident(tcol)} AS t, {value} AS v, ({fail}) AS f,
                   {interval} AS __i FROM {TYPED_VIEW} WHERE {ident(tcol)} IS NOT NULL),
             o AS (SELECT *, epoch_us(t) - lag(epoch_us(t)) OVER (PARTITION BY s ORDER BY t, r) AS __dt FROM p),
             h AS (SELECT *, coalesce(__dt > __i + {tolerance},
                   __dt > 5 * median(nullif(__dt, 0)) OVER (PARTITION BY s), FALSE) AS hole FROM o),
             q AS (SELECT *, epoch_us(t) - min(epoch_us(t)) OVER (PARTITION BY s) AS dt,
                   sum(CASE WHEN hole THEN 1 ELSE 0 END) OVER (PARTITION BY s ORDER BY t, r) AS holes,
                   max(epoch_us(t)) OVER (PARTITION BY s) - min(epoch_us(t)) OVER (PARTITION BY s) AS span FROM h),
             k AS (SELECT *, CASE WHEN span = 0 THEN 0 ELSE least($1 - 1, floor(dt * $1 / span)) END AS b FROM q),
             m AS (SELECT *,
                   row_number() OVER (PARTITION BY s, b ORDER BY t, r) AS first_,
                   row_number() OVER (PARTITION BY s, b ORDER BY t DESC, r DESC) AS last_,
                   row_number() OVER (PARTITION BY s, b, v IS NULL ORDER BY v, t, r) AS low_,
                   row_number() OVER (PARTITION BY s, b, v IS NULL ORDER BY v DESC, t, r) AS high_,
                   row_number() OVER (PARTITION BY s, f ORDER BY t, r) AS nth FROM k)
        SELECT s, t, v, f AND nth <= $2, holes FROM m
        WHERE first_ = 1 OR last_ = 1 OR low_ = 1 OR high_ = 1 OR (f AND nth <= $2)
        ORDER BY s, t, r"""


def _applied_bounds(contract: Any, catalog: Any, bounds: Any, field: str, sid: str) -> dict[str, Any]:
    """The bounds validation applied to ``field`` of series ``sid``: catalog bounds a clause names, --bounds."""
    clauses = [*contract.invariants, *([contract.constraints[field]] if field in contract.constraints else [])]
    applied = {c.catalog.attribute for c in clauses if c.catalog is not None and field in c.columns}
    entry = catalog.series.get(sid) if catalog else None
    drawn: dict[str, Any] = {}
    for name, attribute in (("hard", "hard_bounds"), ("plausibility", "plausibility_bounds")):
        pair = getattr(entry, attribute, None) if attribute in applied else None
        drawn[name] = [float(b) for b in pair] if pair else None
    profile = bounds.fields.get(field, {}).get(sid) if bounds is not None else None
    drawn["profiled"] = [float(b) for b in profile.limits(bounds.margin)] if profile else None
    return drawn
