"""Text rendering of a validation report: a table grouped by section, failing examples below."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tscontract.plan.checks import SECTIONS
from tscontract.report.model import ValidationReport

_STATUS = {"passed": "[green]passed[/]", "failed": "[bold red]failed[/]", "error": "[magenta]error[/]"}


def _example_text(example: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in example.items())


def conversion_text(conversion: dict[str, Any]) -> str:
    """One line on what a mapping did: rows read, rows its filter dropped."""
    dropped = "".join(f"; {d['rows']} dropped by {d['id']} [{d['clause']}]" for d in conversion["dropped"])
    name = f"{conversion['mapping']} {conversion['transform_version']}"
    return f"mapping {name}: {conversion['rows_read']} rows read{dropped}"


def render_validation(report: ValidationReport, console: Console) -> None:
    title = (
        f"validate {report.contract} {report.version} — {report.rows} rows from "
        f"{', '.join(report.data)} ({report.engine}, {report.elapsed_s:.3f}s)"
    )
    table = Table(title=escape(title), title_justify="left")
    table.add_column("section")
    table.add_column("check")
    table.add_column("clause", overflow="fold")
    table.add_column("status")
    table.add_column("failed", justify="right")
    order = {s: i for i, s in enumerate(SECTIONS)}
    for check in sorted(report.checks, key=lambda c: order.get(c.section, len(order))):
        status = _STATUS[check.status]
        if check.status != "passed" and check.severity == "warning":
            status += " (warning)"
        table.add_row(
            escape(check.section),
            escape(check.id),
            escape(check.clause),
            status,
            str(check.failed_rows) if check.status == "failed" else "",
        )
    console.print(table)
    if report.conversion is not None:
        console.print(escape(conversion_text(report.conversion)), soft_wrap=True)
    for check in report.failed:
        console.print(f"[bold]{escape(check.id)}[/] {escape(check.clause)!s}", soft_wrap=True)
        if check.message:
            console.print(f"  {escape(check.message)}", soft_wrap=True)
        for example in check.examples:
            console.print(f"  - {escape(_example_text(example))}", soft_wrap=True)
    failed = sum(1 for c in report.checks if c.status == "failed")
    errors = sum(1 for c in report.checks if c.status == "error")
    verdict = "[green]passed[/]" if report.passed else "[bold red]failed[/]"
    console.print(f"{len(report.checks)} checks: {failed} failed, {errors} could not run — {verdict}")
