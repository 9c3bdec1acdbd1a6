"""A validation report as JUnit XML: one test case per check, so CI lists each failed clause as a failed test."""

from __future__ import annotations

from collections.abc import Callable
from xml.etree import ElementTree as ET

from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.report.text import example_text
from tscontract.shown import visible


def failure_message(check: CheckResult) -> str:
    """One line: the clause and how many rows broke it (or why it could not run)."""
    if check.status == "error":
        return f"could not run [{check.clause}]: {check.message or 'error'}"
    rows = f"{check.failed_rows} row(s) fail" if check.failed_rows else "fails"
    detail = f": {check.message}" if check.message else ""
    return f"{rows} [{check.clause}]{detail}"


def _examples(check: CheckResult) -> str:
    """The check's examples, one a line, each with its controls visible (XML 1.0 cannot hold most of them)."""
    return "\n".join(visible(example_text(e)) for e in check.examples)


def render_junit(report: ValidationReport, contract_file: str, line_of: Callable[[str], int | None]) -> str:
    """JUnit XML for ``report``; ``line_of`` maps a check's source path to its line in ``contract_file``.

    A failed error-severity check is a ``<failure>``, a check that could not run an ``<error>``; a failed
    warning-severity check passes (as the run does) with the finding in ``<system-out>``. Every text
    from the contract or the data has its control characters made visible; ElementTree escapes the rest.
    """
    failures = sum(1 for c in report.checks if c.status == "failed" and c.severity == "error")
    errors = sum(1 for c in report.checks if c.status == "error" and c.severity == "error")
    counts = {"tests": str(len(report.checks)), "failures": str(failures), "errors": str(errors), "skipped": "0"}
    elapsed = f"{report.elapsed_s:.3f}"
    root = ET.Element("testsuites", {"name": "tscontract", **counts, "time": elapsed})
    suite = ET.SubElement(root, "testsuite", {"name": visible(f"{report.contract} {report.version}"), **counts})
    suite.set("time", elapsed)
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("contract", contract_file),
        ("data", ", ".join(report.data)),
        ("rows", str(report.rows)),
        ("engine", report.engine),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": visible(value)})
    for check in report.checks:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": visible(f"{report.contract}.{check.section}"),
                "name": visible(check.id),
                "file": visible(contract_file),
            },
        )
        line = line_of(check.source)
        if line is not None:
            case.set("line", str(line))
        case.set("time", "0")
        if check.status == "passed":
            continue
        body, message = _examples(check), visible(failure_message(check))
        if check.severity != "error":
            ET.SubElement(case, "system-out").text = f"warning: {message}\n{body}".rstrip()
            continue
        tag = "failure" if check.status == "failed" else "error"
        element = ET.SubElement(case, tag, {"message": message, "type": check.kind})
        element.text = body or None
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
