"""A validation report as GitHub Actions workflow commands: each failed check an annotation on its clause."""

from __future__ import annotations

from collections.abc import Callable

from tscontract.report.junit import failure_message
from tscontract.report.model import ValidationReport
from tscontract.report.text import example_text


def _data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """Escape a workflow command's property value."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


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
        message = "\n".join([failure_message(check), *(example_text(e) for e in check.examples)])
        lines.append(f"::{level} {','.join(props)}::{_data(message)}")
    failed = sum(1 for c in report.checks if c.status != "passed")
    verdict = "passed" if report.passed else "failed"
    lines.append(
        f"{report.contract} {report.version}: {report.rows} rows from {', '.join(report.data)}: "
        f"{failed} of {len(report.checks)} checks failed — {verdict}"
    )
    return "\n".join(lines) + "\n"
