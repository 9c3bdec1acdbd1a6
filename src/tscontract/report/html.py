"""A self-contained HTML validation report: inline CSS and inline SVG plots, no scripts."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Any

from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.shown import cut, visible

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
.verdict.warn{background:#fff0cc;color:#7a4a00}
.counts span{margin-right:18px}.plot{display:block;margin:4px 0 14px;background:#fcfcfd;border:1px solid #e3e6ea}
.legend{font-size:12px;color:#555}.msg{color:#555;font-style:italic}
"""

_W, _PAD_L, _PAD_R = 1000, 70, 20


def escape(text: str) -> str:
    """Text from the contract or the data as HTML: control characters visible (shown.py), markup escaped."""
    return html.escape(visible(text))


def _ts(iso: str) -> float:
    dt = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


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
        label = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        anchor = "middle" if ticks == 1 or 0 < i < ticks - 1 else ("start" if i == 0 else "end")
        out.append(f'<text x="{_fmt(xs(t))}" y="{y + 14}" font-size="10" text-anchor="{anchor}">{label}</text>')
    return out


def _svg(kind: str, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg class="plot plot-{kind}" xmlns="http://www.w3.org/2000/svg" role="img" width="{_W}" '
        f'height="{height}" viewBox="0 0 {_W} {height}"><title>{escape(title)}</title>' + "".join(body) + "</svg>"
    )


# the bounds a plot draws: (key in series["bounds"], colour, dash, what the line is)
_BOUNDS = (
    ("hard", "#c0392b", "6 3", "hard bounds (catalog)"),
    ("plausibility", "#e67e22", "2 3", "plausibility bounds (catalog)"),
    ("profiled", "#8e44ad", "8 3 2 3", "plausibility bounds profiled from history (--bounds)"),
)


def _timeline(sid: str, field: str, points: list, bounds: dict[str, Any], holes: list[int] | None = None) -> str:
    pts = [(_ts(t), None if v is None else float(v), bool(f)) for t, v, f in points]
    holes = holes or [0] * len(pts)  # data holes in the series up to each point: a line never spans one
    ts = [p[0] for p in pts] or [0.0]
    vals = [p[1] for p in pts if p[1] is not None]
    pairs = [(bounds.get(key), colour, dash, key, what) for key, colour, dash, what in _BOUNDS]
    ys_all = vals + [float(b) for pair, *_ in pairs if pair for b in pair]
    h, top, bottom = 240, 12, 210
    xs = _Scale(min(ts), max(ts), _PAD_L, _W - _PAD_R)
    lo, hi = (min(ys_all), max(ys_all)) if ys_all else (0.0, 1.0)
    span = (hi - lo) or 1.0
    ys = _Scale(lo - 0.05 * span, hi + 0.05 * span, bottom, top)
    body = _time_axis(xs, bottom, min(ts), max(ts))
    for at in (ys.lo, (ys.lo + ys.hi) / 2, ys.hi):
        body.append(f'<text x="{_PAD_L - 6}" y="{_fmt(ys(at) + 4)}" font-size="10" text-anchor="end">{at:.4g}</text>')
    for pair, colour, dash, name, what in pairs:
        if not pair:
            continue
        for b in pair:
            y = _fmt(ys(float(b)))
            low, high = (float(x) for x in pair)
            body.append(
                f'<line class="bound bound-{name}" x1="{_PAD_L}" y1="{y}" x2="{_W - _PAD_R}" y2="{y}" '
                f'stroke="{colour}" stroke-dasharray="{dash}"><title>{escape(what)}: '
                f"{low:.6g} .. {high:.6g}</title></line>"
            )
    segment: list[str] = []
    segments = []
    for i, (t, v, _) in enumerate(pts):
        if v is None or (i and holes[i] != holes[i - 1]):
            segments.append(segment)
            segment = []
        if v is not None:
            segment.append(f"{_fmt(xs(t))},{_fmt(ys(v))}")
    segments.append(segment)
    for seg in segments:
        if seg:
            body.append(
                f'<polyline class="line" points="{" ".join(seg)}" fill="none" stroke="#2c6fbb" stroke-width="1.3"/>'
            )
    for t, v, failed in pts:
        if failed:
            cy = ys(v) if v is not None else bottom - 4
            body.append(f'<circle class="failing" cx="{_fmt(xs(t))}" cy="{_fmt(cy)}" r="4" fill="#d62728"/>')
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
            f'fill="#d62728" fill-opacity="0.28"><title>gap {escape(_iso(a))} .. {escape(_iso(b))}</title></rect>'
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
                f"{escape(str(start)[:16].replace('T', ' '))}</text>"
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


def _counts(report: ValidationReport) -> dict[str, int]:
    """Checks by outcome: a warning-severity check that did not pass is a warning, never 'failed'."""
    counts = {"passed": 0, "failed": 0, "warning": 0, "error": 0}
    for c in report.checks:
        outcome = c.status if c.status == "passed" or c.severity == "error" else "warning"
        counts[outcome] += 1
    return counts


def render_html(report: ValidationReport, *, series: dict | None = None) -> str:
    """One self-contained HTML page for ``report``; ``series`` adds plots.

    ``series`` comes from :func:`tscontract.engines.plot_data.series_data`: the report never reads data.
    """
    counts = _counts(report)
    warnings = counts["warning"]
    verdict = "PASSED" if report.passed else "FAILED"
    if report.passed and warnings:
        verdict += f" with {warnings} warning{'s' if warnings != 1 else ''}"
    tone = "fail" if not report.passed else "warn" if warnings else "pass"
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
        f'<span class="verdict {tone}">{verdict}</span>',
        '<p class="counts">'
        + "".join(
            f'<span class="count-{s}">{n} {s}{"s" if s == "warning" and n != 1 else ""}</span>'
            for s, n in counts.items()
        )
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
        f'<p class="legend">Timeline of <code>{escape(field)}</code> (first, last, lowest and highest point of each '
        "time bucket, so spikes show): red dashed lines the catalog hard bounds and orange dotted the catalog "
        "plausibility bounds, each where a clause applies them; purple dash-dot the plausibility bounds profiled "
        f"from history (<code>--bounds</code>); red dots rows failing a check on <code>{escape(field)}</code>. "
        "Cadence: one tick per point, red bands gaps.</p>",
    ]
    has_completeness = any(c.kind == "completeness" or c.id == "completeness" for c in report.checks)
    every = series.get("points", {})
    drawn = _drawn_series(series)
    if len(drawn) < len(every):
        out.append(
            f'<p class="msg cap">{len(drawn)} of {len(every)} series drawn (at most {SERIES_CAP}: those with '
            "gaps, short windows or failing points first, then by id).</p>"
        )
    for sid in drawn:
        points = every[sid]
        shown = cut(str(sid))  # a series id from the data, cut as the examples (and their gaps) are
        out.append(f"<h3>{escape(shown)}</h3>")
        bounds = (series.get("bounds") or {}).get(sid) or {}
        out.append(_timeline(shown, field, points, bounds, (series.get("holes") or {}).get(sid)))
        out.append(_cadence(shown, points, (series.get("gaps") or {}).get(shown, [])))
        windows = (series.get("windows") or {}).get(shown)
        if has_completeness and windows:
            out.append(_completeness(shown, windows))
    return "\n".join(out)


SERIES_CAP = 50  # series plotted on one page


def _drawn_series(series: dict) -> list[str]:
    """The series plotted: at most SERIES_CAP, those with something to show first, then by id."""
    every = series.get("points", {})
    gaps, windows = series.get("gaps") or {}, series.get("windows") or {}

    def troubled(sid: str) -> bool:
        return bool(gaps.get(sid) or windows.get(sid) or any(p[2] for p in every[sid]))

    return sorted(every, key=lambda sid: (not troubled(sid), str(sid)))[:SERIES_CAP]
