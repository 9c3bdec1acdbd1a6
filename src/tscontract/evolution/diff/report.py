"""The diff's result: one classified change, the report, and the version bump declared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tscontract.contract.model import SEMVER

Level = Literal["none", "patch", "minor", "major", "new_dataset"]
LEVELS: tuple[Level, ...] = ("none", "patch", "minor", "major", "new_dataset")


@dataclass(frozen=True)
class Change:
    kind: str
    path: str
    old: str | None
    new: str | None
    compatible: Literal["yes", "notice", "no"]
    required: Level
    action: str
    forbidden: bool = False  # never allowed, whatever the version bump

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "old": self.old,
            "new": self.new,
            "compatible": self.compatible,
            "required": self.required,
            "action": self.action,
            "forbidden": self.forbidden,
        }


@dataclass
class DiffReport:
    old_version: str
    new_version: str
    contract: str
    changes: list[Change] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def required(self) -> Level:
        return max((c.required for c in self.changes), key=LEVELS.index, default="none")

    @property
    def declared(self) -> Level:
        return declared_bump(self.old_version, self.new_version)

    @property
    def version_down(self) -> bool:
        return version_goes_down(self.old_version, self.new_version)

    @property
    def declared_label(self) -> str:
        """The declared bump in words: ``minor``, or ``version goes down``."""
        return "version goes down" if self.version_down else self.declared

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {
            "contract": self.contract,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "declared_bump": self.declared,
            "version_down": self.version_down,
            "required_bump": self.required,
            "ok": self.ok,
            "problems": self.problems,
            "changes": [c.to_json() for c in self.changes],
        }


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in SEMVER.match(version).groups()[:3])  # type: ignore[union-attr]


def version_goes_down(old: str, new: str) -> bool:
    """``3.1.0 -> 3.0.0``: a later version numbered lower."""
    return _release(new) < _release(old)


def declared_bump(old: str, new: str) -> Level:
    a, b = _release(old), _release(new)
    if b[0] != a[0]:
        return "major" if b[0] > a[0] else "none"
    if b[1] != a[1]:
        return "minor" if b[1] > a[1] else "none"
    return "patch" if b[2] > a[2] else "none"
