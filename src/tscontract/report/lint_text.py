"""Text rendering of lint reports and parsed contracts (rich)."""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tscontract.contract.clauses import Share
from tscontract.contract.lint import LintReport
from tscontract.contract.model import Contract
from tscontract.shown import shown_message, visible

LINT_ROWS = 200  # findings drawn in the text table; --format json lists every one

_INLINE_SHARE = re.compile(r";\s*at\s+most\s+\S+\s+of\s+rows\s*$", re.IGNORECASE)
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_RANK = {"error": 0, "warning": 1, "info": 2}


def render_lint(report: LintReport, console: Console) -> None:
    title = f"lint {report.contract} {report.version} ({report.file})"
    if report.findings:
        table = Table(title=escape(title), title_justify="left", show_lines=False)
        table.add_column("severity")
        table.add_column("code")
        table.add_column("where", no_wrap=True)
        table.add_column("clause")
        table.add_column("finding", overflow="fold")
        shown = report.findings
        if len(shown) > LINT_ROWS:  # the most severe first, each severity in file order
            shown = sorted(shown, key=lambda f: _RANK[f.severity])[:LINT_ROWS]
        for f in shown:
            where = f"{f.line}:{f.column}" if f.line is not None else ""
            table.add_row(
                f"[{_STYLE[f.severity]}]{f.severity}[/]",
                f.code,
                where,
                escape(shown_message(f.section or "(contract)")),
                escape(shown_message(f.message)),
            )
        console.print(table)
        if len(report.findings) > LINT_ROWS:
            console.print(
                f"… {len(report.findings) - LINT_ROWS} more finding(s) not drawn (the first {LINT_ROWS} by severity "
                "are); --format json lists every one"
            )
    else:
        console.print(escape(title))
    verdict = "[green]passed[/]" if report.passed else "[bold red]failed[/]"
    console.print(
        f"{report.count('error')} error(s), {report.count('warning')} warning(s), "
        f"{report.count('info')} info — {verdict}"
    )


def _options(severity: str, max_failing: Share | None) -> str:
    """`` (severity: warning, max_failing: 1%)``: what a rule states beside its clause; empty for the defaults."""
    parts = [f"severity: {severity}"] if severity != "error" else []
    if max_failing is not None:
        parts.append(f"max_failing: {max_failing.text}")
    return f" ({', '.join(parts)})" if parts else ""


def render_contract(contract: Contract, console: Console) -> None:
    console.print(
        f"[bold]{escape(visible(contract.contract))}[/] {escape(visible(contract.version))}  "
        f"owner: {escape(visible(contract.owner or '-'))}"
    )
    console.print(escape(visible(f"key: {', '.join(contract.key)}   time: {contract.time.column}")))
    table = Table(title_justify="left")
    for column in ("field", "type", "nullable", "unit", "dimension", "constraint / value"):
        table.add_column(column)
    for name, spec in contract.fields.items():
        extra = contract.constraints[name].text if name in contract.constraints else ""
        if spec.has_value:
            extra = f"value = {spec.value!r}"
        if spec.implied:
            extra = "(provenance)"
        unique = spec.unique_rule
        if unique is not None:
            extra = "; ".join(p for p in (extra, "unique" + _options(unique.severity, unique.max_failing)) if p)
        cells = (
            name,
            spec.type.text,
            "yes" if contract.is_nullable(name) else "no",
            spec.unit or "",
            spec.dimension or "",
            extra,
        )
        table.add_row(*(escape(visible(cell)) for cell in cells))  # contract text: controls shown, not run
    console.print(table)
    for clause in contract.invariants:
        inline = _INLINE_SHARE.search(clause.text) is not None  # '; at most 1% of rows' is in the text
        options = _options(clause.severity, None if inline else clause.max_failing)
        text = f"invariant [{clause.kind}] {clause.text}  ->  {clause.sql}{options}"
        console.print(escape(visible(text)), soft_wrap=True)
    if contract.row_count is not None:
        console.print(escape(visible(contract.row_count.as_text() + _options(contract.row_count.severity, None))))
    for check in contract.sql_checks:
        line = f"sql check {check.name}: {' '.join(check.sql.split())}  ({check.expectation()})"
        console.print(escape(visible(line + _options(check.severity, None))), soft_wrap=True)
    if contract.time.cadence is not None:
        console.print(escape(visible(f"cadence: {contract.time.cadence.text}")))
    if contract.duplicates is not None:
        console.print(escape(visible(contract.duplicates.as_text())))
