"""The validation report: every check's verdict with failing examples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tscontract.shown import MESSAGE_CHARS, cut, shown_value

Status = Literal["passed", "failed", "error"]


@dataclass
class CheckResult:
    """The outcome of one check. ``clause`` is the contract's text as written.

    Every string of ``examples`` is cut to ``shown.VALUE_CHARS`` characters, ``message`` to
    ``shown.MESSAGE_CHARS`` (``…(N chars)`` states the length as read).
    """

    id: str
    kind: str
    section: str
    clause: str
    source: str
    severity: str
    status: Status
    failed_rows: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    message: str | None = None

    def __post_init__(self) -> None:
        # bounded once, here: every format shows the same cut values (shown.py), none holds a 256 KB one
        self.examples = [shown_value(e) for e in self.examples]
        if self.message is not None:
            self.message = cut(self.message, MESSAGE_CHARS)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "section": self.section,
            "clause": self.clause,
            "source": self.source,
            "severity": self.severity,
            "status": self.status,
            "failed_rows": self.failed_rows,
            "examples": self.examples,
        }
        if self.message:
            data["message"] = self.message
        return data


@dataclass
class ValidationReport:
    """All checks of one validation run; ``passed`` ignores warning-severity checks."""

    contract: str
    version: str
    rows: int
    engine: str
    elapsed_s: float
    data: list[str]
    checks: list[CheckResult]
    conversion: dict[str, Any] | None = None  # what a mapping did: rows read, rows dropped and why

    @property
    def passed(self) -> bool:
        return not any(c.status != "passed" and c.severity == "error" for c in self.checks)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status != "passed"]

    def check(self, check_id: str) -> CheckResult:
        return next(c for c in self.checks if c.id == check_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "version": self.version,
            "passed": self.passed,
            "rows": self.rows,
            "engine": self.engine,
            "elapsed_s": round(self.elapsed_s, 4),
            "data": self.data,
            "checks": [c.to_json() for c in self.checks],
        } | ({"conversion": self.conversion} if self.conversion is not None else {})
