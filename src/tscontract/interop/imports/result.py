"""What every importer returns: a draft contract per schema object (``Imported``), what it cannot carry (``Loss``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Loss:
    """An element of the ODCS document the contract does not carry."""

    path: str
    text: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "text": self.text, "reason": self.reason}

    def line(self) -> str:
        return f"{self.path}: {self.reason}: {self.text}"


@dataclass
class Imported:
    """One schema object as a contract: its YAML, the mapping that renames columns, the losses."""

    object: str
    contract: str
    text: str
    mapping: str | None = None
    losses: list[Loss] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # descriptive elements kept as written in notes, by path

    def to_json(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "contract": self.contract,
            "mapping": self.mapping is not None,
            "lost": [loss.to_json() for loss in self.losses],
            "kept": list(self.kept),
        }
