"""One finding of a pairwise compatibility check: shared by the modes and the three format checks.

It lived in ``modes.py``, which loads the Avro, JSON Schema and Protobuf checks, each of which
imported it back (an import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    """One finding of a pairwise check: where (a JSON-pointer-like path) and what."""

    path: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.message}"


class CheckBudgetExceeded(ValueError):
    """A check that went over its budget (pairs compared, nesting): it decided nothing, so the
    change is refused, and the message says which budget, never that a schema is invalid."""
