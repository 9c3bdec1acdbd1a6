"""Text rendering of a validation report: a table grouped by section, failing examples below."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tscontract.plan.checks import SECTIONS
from tscontract.report.model import CheckResult, ValidationReport

_STATUS = {"passed": "[green]passed[/]", "failed": "[bold red]failed[/]", "error": "[magenta]error[/]"}


def example_text(example: dict[str, Any]) -> str:
    """``row=8, symbol=AAPL, open=229.780000001``."""
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
            str(check.failed_rows) if check.status == "failed" or _tolerated(check) else "",
        )
    console.print(table)
    if report.conversion is not None:
        console.print(escape(conversion_text(report.conversion)), soft_wrap=True)
    for check in [c for c in report.checks if c.status != "passed" or _tolerated(c)]:
        console.print(f"[bold]{escape(check.id)}[/] {escape(check.clause)!s}", soft_wrap=True)
        if check.message:
            console.print(f"  {escape(check.message)}", soft_wrap=True)
        for example in check.examples:
            console.print(f"  - {escape(example_text(example))}", soft_wrap=True)
    failed = sum(1 for c in report.checks if c.status == "failed")
    errors = sum(1 for c in report.checks if c.status == "error")
    verdict = "[green]passed[/]" if report.passed else "[bold red]failed[/]"
    console.print(f"{len(report.checks)} checks: {failed} failed, {errors} could not run — {verdict}")


def _tolerated(check: CheckResult) -> bool:
    """A check that passed with failing rows: fewer than its ``max_failing`` share (rows, examples, share kept)."""
    return check.status == "passed" and check.failed_rows > 0


def render_summary(report: ValidationReport, console: Console) -> None:
    """The short form (``--quiet``): one line when every check passes, else one line per failed check.

    A failed check's line names it, its clause and the rows it failed; its examples follow, indented.
    """
    failed = report.failed
    source = f"{report.rows} rows from {', '.join(report.data)}"
    head = f"validate {report.contract} {report.version} — {source}"
    if not failed:
        console.print(f"{escape(head)}: {len(report.checks)} checks [green]passed[/]", soft_wrap=True)
        return
    for check in failed:
        rows = f" {check.failed_rows} row(s)" if check.status == "failed" and check.failed_rows else ""
        note = " (warning)" if check.severity == "warning" else ""
        status = _STATUS[check.status]
        console.print(
            f"{status}{note} [bold]{escape(check.id)}[/] {escape(f'[{check.clause}]')}{rows}"
            + (f": {escape(check.message)}" if check.message else ""),
            soft_wrap=True,
        )
        for example in check.examples:
            console.print(f"  - {escape(example_text(example))}", soft_wrap=True)
    verdict = "[green]passed[/]" if report.passed else "[bold red]failed[/]"
    console.print(f"{escape(head)}: {len(failed)} of {len(report.checks)} checks failed — {verdict}", soft_wrap=True)
