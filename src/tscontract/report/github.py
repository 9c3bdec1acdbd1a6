"""A validation report as GitHub Actions workflow commands: each failed check an annotation on its clause."""

from __future__ import annotations

from collections.abc import Callable

from tscontract.plan.result import ValidationReport
from tscontract.report.junit import failure_message
from tscontract.report.text import example_text
from tscontract.shown import visible


def _data(text: str) -> str:
    """Escape a workflow command's message (GitHub's rules: ``%``, CR, LF; other controls made visible)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """Escape a workflow command's property value: as a message, and ``:`` and ``,`` too."""
    return _data(visible(text)).replace(":", "%3A").replace(",", "%2C")


def render_github(report: ValidationReport, contract_file: str, line_of: Callable[[str], int | None]) -> str:
    """``::error file=<contract>,line=<clause line>,title=<check id>::<message>`` per failed check.

    Warning-severity checks become ``::warning``. The last line is a plain summary.
    """
    lines = []
    for check in report.failed:
        level = "error" if check.severity == "error" else "warning"
        props = [f"file={_property(contract_file)}"]
        line = line_of(check.source)
        if line is not None:
            props.append(f"line={line}")
        props.append(f"title={_property(check.id)}")
        # one line per part, each with its controls visible; the parts' line breaks are escaped as %0A
        message = "\n".join(visible(m) for m in [failure_message(check), *(example_text(e) for e in check.examples)])
        lines.append(f"::{level} {','.join(props)}::{_data(message)}")
    failed = sum(1 for c in report.checks if c.status != "passed")
    verdict = "passed" if report.passed else "failed"
    summary = (
        f"{report.contract} {report.version}: {report.rows} rows from {', '.join(report.data)}: "
        f"{failed} of {len(report.checks)} checks failed — {verdict}"
    )
    lines.append(visible(summary))  # starts with the contract's name (a letter first): never a command
    return "\n".join(lines) + "\n"
