"""What commands write to stdout and stderr: JSON, a validation report in the asked format, progress."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tscontract.cli.options import ReportFormat

if TYPE_CHECKING:
    from rich.console import Console


def make_console(*, stderr: bool = False) -> Console:
    """report.console's rich console, rich imported now: a command writing JSON never imports it (60 ms)."""
    from tscontract.report.console import make_console as console

    return console(stderr=stderr)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def print_report(report: Any, fmt: ReportFormat, contract: Path, quiet: bool = False) -> None:
    """A validation report in the asked format, on stdout."""
    from tscontract.errors import display_path

    if fmt is ReportFormat.json:
        emit_json(report.to_json())
    elif fmt in (ReportFormat.junit, ReportFormat.github):
        from tscontract.report.clause_lines import clause_lines
        from tscontract.report.github import render_github
        from tscontract.report.junit import render_junit

        render = render_junit if fmt is ReportFormat.junit else render_github
        sys.stdout.write(render(report, display_path(contract), clause_lines(contract)))
    elif quiet:
        from tscontract.report.text import render_summary

        render_summary(report, make_console())
    else:
        from tscontract.report.text import render_validation

        render_validation(report, make_console())


def status_line(message: str, text_output: bool) -> AbstractContextManager[Any]:
    """While the block runs, a rich status line on stderr showing ``message`` when ``text_output`` and stderr is
    a terminal, else nothing; the block gets the status, or None."""
    if not text_output:
        return nullcontext()
    console = make_console(stderr=True)
    return console.status(message, spinner="dots") if console.is_terminal else nullcontext()


def status_updater(status: Any) -> Callable[[str], None]:
    """A progress callback that updates a rich status line, or does nothing without one (JSON, no TTY)."""

    def progress(message: str) -> None:
        if status is not None:
            status.update(message)

    return progress
