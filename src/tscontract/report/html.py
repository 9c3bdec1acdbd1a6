"""A self-contained HTML validation report: inline CSS and inline SVG plots, no scripts."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from tscontract.report.model import CheckResult, ValidationReport

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232b;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}
h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:4px 0 12px;width:100%}
th,td{border:1px solid #d6dae0;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f1f3f6}
code{font:12px ui-monospace,monospace}.meta td:first-child{width:110px;color:#555}
.status{font-weight:600;border-radius:3px;padding:0 6px}.status-passed{color:#17692f;background:#e2f4e6}
.status-failed{color:#a4161a;background:#fbe3e3}.status-error{color:#7a4a00;background:#fff0cc}
.verdict{font-size:18px;font-weight:700;padding:6px 12px;display:inline-block;border-radius:4px}
.verdict.pass{background:#e2f4e6;color:#17692f}.verdict.fail{background:#fbe3e3;color:#a4161a}
.counts span{margin-right:18px}.plot{display:block;margin:4px 0 14px;background:#fcfcfd;border:1px solid #e3e6ea}
.legend{font-size:12px;color:#555}.msg{color:#555;font-style:italic}
"""

_W, _PAD_L, _PAD_R = 1000, 70, 20


def _ts(iso: str) -> float:
    dt = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _fmt(x: float) -> str:
    return f"{x:.1f}"


class _Scale:
    def __init__(self, lo: float, hi: float, a: float, b: float) -> None:
        if hi <= lo:
            lo, hi = lo - 1, hi + 1
        self.lo, self.hi, self.a, self.b = lo, hi, a, b

    def __call__(self, v: float) -> float:
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)


def _time_axis(xs: _Scale, y: float, t0: float, t1: float) -> list[str]:
    out = [f'<line x1="{_PAD_L}" y1="{y}" x2="{_W - _PAD_R}" y2="{y}" stroke="#999"/>']
    ticks = 5 if t1 > t0 else 1
    for i in range(ticks):
        t = t0 + (t1 - t0) * i / max(1, ticks - 1)
        label = datetime.fromtimestamp(t, UTC).strftime("%m-%d %H:%M:%S")
        anchor = "middle" if ticks == 1 or 0 < i < ticks - 1 else ("start" if i == 0 else "end")
        out.append(f'<text x="{_fmt(xs(t))}" y="{y + 14}" font-size="10" text-anchor="{anchor}">{label}</text>')
    return out


def _svg(kind: str, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg class="plot plot-{kind}" xmlns="http://www.w3.org/2000/svg" role="img" width="{_W}" '
        f'height="{height}" viewBox="0 0 {_W} {height}"><title>{escape(title)}</title>' + "".join(body) + "</svg>"
    )


def _timeline(sid: str, field: str, points: list, bounds: dict[str, Any]) -> str:
    pts = [(_ts(t), None if v is None else float(v), bool(f)) for t, v, f in points]
    ts = [p[0] for p in pts] or [0.0]
    vals = [p[1] for p in pts if p[1] is not None]
    hard, plaus = bounds.get("hard"), bounds.get("plausibility")
    ys_all = vals + [float(b) for pair in (hard, plaus) if pair for b in pair]
    h, top, bottom = 240, 12, 210
    xs = _Scale(min(ts), max(ts), _PAD_L, _W - _PAD_R)
    lo, hi = (min(ys_all), max(ys_all)) if ys_all else (0.0, 1.0)
    span = (hi - lo) or 1.0
    ys = _Scale(lo - 0.05 * span, hi + 0.05 * span, bottom, top)
    body = _time_axis(xs, bottom, min(ts), max(ts))
    for v in (ys.lo, (ys.lo + ys.hi) / 2, ys.hi):
        body.append(f'<text x="{_PAD_L - 6}" y="{_fmt(ys(v) + 4)}" font-size="10" text-anchor="end">{v:.4g}</text>')
    for pair, colour, dash, name in ((hard, "#c0392b", "6 3", "hard"), (plaus, "#e67e22", "2 3", "plausibility")):
        for b in pair or ():
            y = _fmt(ys(float(b)))
            body.append(
                f'<line class="bound bound-{name}" x1="{_PAD_L}" y1="{y}" x2="{_W - _PAD_R}" y2="{y}" '
                f'stroke="{colour}" stroke-dasharray="{dash}"/>'
            )
    segment: list[str] = []
    segments = []
    for t, v, _ in pts:
        if v is None:
            segments.append(segment)
            segment = []
        else:
            segment.append(f"{_fmt(xs(t))},{_fmt(ys(v))}")
    segments.append(segment)
    for seg in segments:
        if seg:
            body.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="#2c6fbb" stroke-width="1.3"/>')
    for t, v, failed in pts:
        if failed:
            y = ys(v) if v is not None else bottom - 4
            body.append(f'<circle class="failing" cx="{_fmt(xs(t))}" cy="{_fmt(y)}" r="4" fill="#d62728"/>')
    return _svg("timeline", h, f"{sid}: {field} over time", body)


def _cadence(sid: str, points: list, gaps: list) -> str:
    ts = [_ts(p[0]) for p in points]
    spans = [(_ts(a), _ts(b)) for a, b in gaps]
    every = ts + [x for s in spans for x in s] or [0.0]
    xs = _Scale(min(every), max(every), _PAD_L, _W - _PAD_R)
    body = []
    for a, b in spans:
        body.append(
            f'<rect class="gap" x="{_fmt(xs(a))}" y="6" width="{_fmt(max(2.0, xs(b) - xs(a)))}" height="40" '
            f'fill="#d62728" fill-opacity="0.28"><title>gap {escape(str(a))}</title></rect>'
        )
    body += [f'<line x1="{_fmt(xs(t))}" y1="18" x2="{_fmt(xs(t))}" y2="34" stroke="#2c6fbb"/>' for t in ts]
    body += _time_axis(xs, 50, min(every), max(every))
    return _svg("cadence", 70, f"{sid}: points along time, gaps highlighted", body)


def _completeness(sid: str, windows: list) -> str:
    n = max(1, len(windows))
    bw = (_W - _PAD_L - _PAD_R) / n
    ys = _Scale(0, 1, 150, 10)
    body = [f'<line x1="{_PAD_L}" y1="{ys(1)}" x2="{_W - _PAD_R}" y2="{ys(1)}" stroke="#999" stroke-dasharray="4 3"/>']
    body.append(f'<text x="{_PAD_L - 6}" y="{ys(1) + 4}" font-size="10" text-anchor="end">100%</text>')
    for i, (start, expected, actual) in enumerate(windows):
        ratio = min(1.0, actual / expected) if expected else 1.0
        x, y = _PAD_L + i * bw, ys(ratio)
        colour = "#2ca02c" if ratio >= 1 else "#d62728"
        body.append(
            f'<rect x="{_fmt(x + 1)}" y="{_fmt(y)}" width="{_fmt(max(1.0, bw - 2))}" height="{_fmt(150 - y)}" '
            f'fill="{colour}"><title>{escape(str(start))}: {actual}/{expected}</title></rect>'
        )
        if n <= 24:
            body.append(
                f'<text x="{_fmt(x + bw / 2)}" y="166" font-size="9" text-anchor="middle">'
                f"{escape(str(start)[5:16])}</text>"
            )
    return _svg("completeness", 175, f"{sid}: completeness per window", body)


def _examples_table(check: CheckResult) -> str:
    keys: list[str] = []
    for ex in check.examples:
        keys += [k for k in ex if k not in keys]
    head = "".join(f"<th>{escape(k)}</th>" for k in keys)
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape('' if ex.get(k) is None else str(ex.get(k)))}</td>" for k in keys) + "</tr>"
        for ex in check.examples
    )
    return f'<table class="examples"><tr>{head}</tr>{rows}</table>'


def render_html(report: ValidationReport, *, series: dict | None = None) -> str:
    """One self-contained HTML page for ``report``; ``series`` (see :func:`series_data`) adds plots."""
    counts = {s: sum(c.status == s for c in report.checks) for s in ("passed", "failed", "error")}
    verdict = "PASSED" if report.passed else "FAILED"
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(report.contract)} {escape(report.version)} validation</title>",
        f"<style>{_CSS}</style></head><body>",
        f'<h1 id="contract">{escape(report.contract)} <small>v{escape(report.version)}</small></h1>',
        '<table class="meta">',
        f"<tr><td>rows</td><td>{report.rows}</td></tr><tr><td>engine</td><td>{escape(report.engine)}</td></tr>",
        f"<tr><td>elapsed</td><td>{report.elapsed_s:.3f} s</td></tr>",
        f"<tr><td>data</td><td>{'<br>'.join(f'<code>{escape(d)}</code>' for d in report.data)}</td></tr></table>",
        '<h2>Summary</h2><div id="summary">',
        f'<span class="verdict {"pass" if report.passed else "fail"}">{verdict}</span>',
        '<p class="counts">'
        + "".join(f'<span class="count-{s}">{n} {s}</span>' for s, n in counts.items())
        + "</p></div>",
    ]
    if series:
        out.append(_plots(report, series))
    out.append("<h2>Checks</h2>")
    sections: dict[str, list[CheckResult]] = {}
    for c in report.checks:
        sections.setdefault(c.section, []).append(c)
    for section, checks in sections.items():
        out.append(
            f'<h3>{escape(section)}</h3><table class="checks"><tr><th>check</th><th>clause</th>'
            "<th>severity</th><th>status</th><th>failed</th></tr>"
        )
        for c in checks:
            msg = f'<div class="msg">{escape(c.message)}</div>' if c.message else ""
            out.append(
                f'<tr id="check-{escape(c.id)}"><td><code>{escape(c.id)}</code></td>'
                f'<td class="clause">{escape(c.clause)}{msg}</td><td>{escape(c.severity)}</td>'
                f'<td><span class="status status-{escape(c.status)}">{escape(c.status)}</span></td>'
                f"<td>{c.failed_rows}</td></tr>"
            )
        out.append("</table>")
    failed = [c for c in report.checks if c.status != "passed"]
    if failed:
        out.append("<h2>Failing examples</h2>")
    for c in failed:
        out.append(f'<h3 id="examples-{escape(c.id)}"><code>{escape(c.id)}</code> — {escape(c.clause)}</h3>')
        out.append(_examples_table(c) if c.examples else f'<p class="msg">{escape(c.message or "no examples")}</p>')
    out.append("</body></html>")
    return "\n".join(out)


def _plots(report: ValidationReport, series: dict) -> str:
    field = str(series.get("field", "value"))
    out = [
        "<h2>Plots</h2>",
        f'<p class="legend">Timeline of <code>{escape(field)}</code>: red dashed lines hard bounds, orange dotted '
        "plausibility bounds, red dots failing rows. Cadence: one tick per point, red bands gaps.</p>",
    ]
    has_completeness = any(c.kind == "completeness" or c.id == "completeness" for c in report.checks)
    for sid, points in series.get("points", {}).items():
        out.append(f"<h3>{escape(str(sid))}</h3>")
        out.append(_timeline(str(sid), field, points, (series.get("bounds") or {}).get(sid) or {}))
        out.append(_cadence(str(sid), points, (series.get("gaps") or {}).get(sid, [])))
        windows = (series.get("windows") or {}).get(sid)
        if has_completeness and windows:
            out.append(_completeness(str(sid), windows))
    return "\n".join(out)


def series_data(
    contract_path: str | Path,
    data_path: Any,
    catalog_path: str | Path | None,
    report: ValidationReport,
    field: str | None = None,
    max_points: int = 2000,
) -> dict:
    """Build the ``series`` argument of :func:`render_html` from the data with DuckDB."""
    import duckdb

    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.loader import load_contract
    from tscontract.engines.duckdb import measurement_fields
    from tscontract.engines.sources import SOURCE_VIEW, open_source

    contract = load_contract(contract_path)
    catalog = load_catalog(catalog_path) if catalog_path else None
    scol, tcol = contract.series_column, contract.time.column
    field = field or (measurement_fields(contract) or ["value"])[0]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    src = open_source(con, data_path)
    failed_rows = sorted({int(e["row"]) for c in report.failed for e in c.examples if e.get("row") is not None})
    row = "__row" if src.has_row_number else "row_number() OVER ()"
    q = lambda name: '"' + name.replace('"', '""') + '"'  # noqa: E731
    sexpr = f"CAST({q(scol)} AS VARCHAR)" if scol else "'all'"
    sql = f"""
        WITH s AS (SELECT {row} AS r, {sexpr} AS s, TRY_CAST(CAST({q(tcol)} AS VARCHAR) AS TIMESTAMPTZ) AS t,
                   TRY_CAST(CAST({q(field)} AS VARCHAR) AS DOUBLE) AS v FROM {SOURCE_VIEW}),
             n AS (SELECT *, list_contains($1::BIGINT[], r) AS f,
                   row_number() OVER (PARTITION BY s ORDER BY t) AS i, count(*) OVER (PARTITION BY s) AS c
                   FROM s WHERE t IS NOT NULL)
        SELECT s, t, v, f FROM n WHERE f OR (i - 1) % greatest(1, ceil(c / $2))::BIGINT = 0 ORDER BY s, t"""
    rows = con.execute(sql, [failed_rows, max_points]).fetchall()
    con.close()
    keyed = {
        (str(e.get(scol)) if scol else "all", _ts(e[tcol]))
        for c in report.failed
        for e in c.examples
        if e.get("row") is None and e.get(tcol)
    }
    points: dict[str, list] = {}
    for s, t, v, f in rows:
        iso = t.astimezone(UTC).isoformat().replace("+00:00", "Z")
        points.setdefault(s, []).append((iso, v, bool(f) or (s, t.timestamp()) in keyed))
    bounds: dict[str, dict] = {}
    for sid in points:
        entry = catalog.series.get(sid) if catalog else None
        bounds[sid] = {
            "hard": [float(b) for b in entry.hard_bounds] if entry and entry.hard_bounds else None,
            "plausibility": [float(b) for b in entry.plausibility_bounds]
            if entry and entry.plausibility_bounds
            else None,
        }
    gaps: dict[str, list] = {}
    windows: dict[str, list] = {}
    for c in report.checks:
        for e in c.examples:
            sid = str(e.get(scol)) if scol else "all"
            if c.kind == "cadence" and e.get("previous") and e.get(tcol):
                gaps.setdefault(sid, []).append([e["previous"], e[tcol]])
            if c.kind == "completeness" and "window_start" in e:
                windows.setdefault(sid, []).append((e["window_start"], e["expected"], e["actual"]))
                gaps.setdefault(sid, []).extend([list(g) for g in e.get("gaps", [])])
    return {"field": field, "points": points, "bounds": bounds, "gaps": gaps, "windows": windows}
