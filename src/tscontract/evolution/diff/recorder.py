"""The changes and problems a diff collects."""

from __future__ import annotations

from datetime import date
from typing import Literal

from tscontract.contract.model import Contract
from tscontract.evolution.diff.report import Change, Level


class Recorder:
    """Two contracts and what differs between them."""

    def __init__(self, old: Contract, new: Contract, today: date | None) -> None:
        self.old, self.new, self.today = old, new, today
        self.changes: list[Change] = []
        self.problems: list[str] = []

    def add(
        self,
        kind: str,
        path: str,
        old: object,
        new: object,
        compatible: Literal["yes", "notice", "no"],
        required: Level,
        action: str,
        forbidden: bool = False,
    ) -> None:
        self.changes.append(
            Change(
                kind,
                path,
                None if old is None else str(old),
                None if new is None else str(new),
                compatible,
                required,
                action,
                forbidden,
            )
        )

    def problem(self, text: str) -> None:
        self.problems.append(text)
