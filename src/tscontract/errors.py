"""Errors that carry where in which file they come from.

Every error a user can cause is a :class:`TscontractError`; the CLI prints its
one-line form and exits 2. Errors about a contract or catalog name the file,
line, column, the clause path (``fields.open.type``) and, where there is one,
the clause text exactly as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class TscontractError(Exception):
    """Base class for every error caused by input rather than by a bug."""

    def one_line(self) -> str:
        return " ".join(str(self).split())

    def all_errors(self) -> list[TscontractError]:
        """Every error this one reports, each on its own (a contract may have several)."""
        return [self]


@dataclass(frozen=True)
class Location:
    """A 1-based position in a source file."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


_CLAUSE_SHOWN = 200  # characters of a clause quoted in a message


class SourceError(TscontractError):
    """A contract or catalog that cannot be read as written.

    ``section`` is the dotted path of the clause (``invariants[1]``),
    ``clause`` the clause text as written when the error is about one.
    ``more``: further errors found in the same file (the message counts them,
    :meth:`all_errors` lists them all).
    """

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        section: str | None = None,
        clause: str | None = None,
        more: Sequence[SourceError] = (),
    ) -> None:
        self.message = message
        self.location = location
        self.section = section
        self.clause = clause
        self.more = tuple(more)
        counted = f" (and {len(self.more)} more error(s))" if self.more else ""
        super().__init__(self._render() + counted)

    def all_errors(self) -> list[TscontractError]:
        first = type(self)(self.message, self.location, self.section, self.clause) if self.more else self
        return [first, *self.more]

    def _render(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(f"{self.location}:")
        if self.section:
            parts.append(f"{self.section}:")
        parts.append(self.message)
        if self.clause is not None:
            shown = self.clause if len(self.clause) <= _CLAUSE_SHOWN else self.clause[:_CLAUSE_SHOWN] + "..."
            parts.append(f"(clause: {shown!r}{f', {len(self.clause)} characters' if shown != self.clause else ''})")
        return " ".join(parts)


class ContractError(SourceError):
    """The contract file is unreadable or says something tscontract cannot honour."""


class CatalogError(SourceError):
    """The series catalog is unreadable or inconsistent."""


class InputError(TscontractError):
    """A file or argument that cannot be used (missing file, unknown format...)."""


# local copies of remote objects -> the address the user gave (engines/inputs/object_store.py registers them)
SHOWN_AS: dict[str, str] = {}


def display_path(path: str | Path) -> str:
    """A path as the user gave it, relative when that is shorter (a local copy of an object: its URL)."""
    text = str(path)
    if text in SHOWN_AS:
        return SHOWN_AS[text]
    if "://" in text:  # a URL (s3://, delta://): never a path to shorten
        return text
    try:
        rel = str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return text
    return rel if len(rel) < len(text) else text
