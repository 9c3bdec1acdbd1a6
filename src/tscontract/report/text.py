"""Text rendering of a validation report: a table grouped by section, failing examples below.

What comes from the contract or the data is printed as ``rich.text.Text`` (no markup, no emoji
codes) with control characters made visible (shown.py): a value cannot style or move the terminal.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tscontract.plan.checks import SECTIONS
from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.shown import visible

_STYLE = {"passed": "green", "failed": "bold red", "error": "magenta"}


def data_text(text: str, style: str = "") -> Text:
    """``text`` from the contract or the data, to print as written: no markup, controls visible."""
    return Text(visible(text), style=style)


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
    table = Table(title=data_text(title), title_justify="left")
    table.add_column("section")
    table.add_column("check")
    table.add_column("clause", overflow="fold")
    table.add_column("status")
    table.add_column("failed", justify="right")
    order = {s: i for i, s in enumerate(SECTIONS)}
    for check in sorted(report.checks, key=lambda c: order.get(c.section, len(order))):
        status = Text(check.status, _STYLE[check.status])
        if check.status != "passed" and check.severity == "warning":
            status.append(" (warning)")
        table.add_row(
            data_text(check.section),
            data_text(check.id),
            data_text(check.clause),
            status,
            str(check.failed_rows) if check.status == "failed" or _tolerated(check) else "",
        )
    console.print(table)
    if report.conversion is not None:
        console.print(data_text(conversion_text(report.conversion)), soft_wrap=True)
    for check in [c for c in report.checks if c.status != "passed" or _tolerated(c)]:
        console.print(Text.assemble(data_text(check.id, "bold"), " ", data_text(check.clause)), soft_wrap=True)
        if check.message:
            console.print(Text.assemble("  ", data_text(check.message)), soft_wrap=True)
        _print_examples(check, console)
    failed = sum(1 for c in report.checks if c.status == "failed")
    errors = sum(1 for c in report.checks if c.status == "error")
    verdict = "[green]passed[/]" if report.passed else "[bold red]failed[/]"
    console.print(f"{len(report.checks)} checks: {failed} failed, {errors} could not run — {verdict}")


def _print_examples(check: CheckResult, console: Console) -> None:
    for example in check.examples:
        console.print(Text.assemble("  - ", data_text(example_text(example))), soft_wrap=True)


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
        console.print(
            Text.assemble(data_text(head), f": {len(report.checks)} checks ", ("passed", "green")), soft_wrap=True
        )
        return
    for check in failed:
        rows = f" {check.failed_rows} row(s)" if check.status == "failed" and check.failed_rows else ""
        note = " (warning)" if check.severity == "warning" else ""
        line = Text.assemble(
            (check.status, _STYLE[check.status]),
            f"{note} ",
            data_text(check.id, "bold"),
            " ",
            data_text(f"[{check.clause}]"),
            rows,
            data_text(f": {check.message}" if check.message else ""),
        )
        console.print(line, soft_wrap=True)
        _print_examples(check, console)
    verdict = Text("passed", "green") if report.passed else Text("failed", "bold red")
    summary = f": {len(failed)} of {len(report.checks)} checks failed — "
    console.print(Text.assemble(data_text(head), summary, verdict), soft_wrap=True)
