"""Positioned errors for any file read through :mod:`tscontract.contract.source`."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.positions import PositionIndex, format_path
from tscontract.errors import Location, SourceError

Model = TypeVar("Model", bound=BaseModel)


class LocatedErrors:
    """Turns paths of a parsed file into positioned errors of one class."""

    def __init__(self, tree: Any, index: PositionIndex, kind: type[SourceError]) -> None:
        self.tree = tree
        self.index = index
        self.kind = kind

    def clause_at(self, path: tuple[str | int, ...]) -> str | None:
        node: Any = self.tree
        for part in path:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return None
        return node if isinstance(node, str) else None

    def at(
        self,
        path: tuple[str | int, ...],
        message: str,
        *,
        key: bool = False,
        offset: int = 0,
        clause: bool = True,
    ) -> SourceError:
        return self.kind(
            message,
            self.index.location(path, key=key, offset=offset),
            format_path(path) or None,
            self.clause_at(path) if clause else None,
        )

    def from_validation(self, exc: ValidationError) -> SourceError:
        """Every error of ``exc``, positioned, in file order: the first, carrying the others."""
        found = []
        for error in exc.errors(include_url=False):
            path = tuple(p for p in error["loc"] if isinstance(p, str | int))
            found.append((self._order(path), path, error))
        found.sort(key=lambda item: item[0])
        errors = [self._one(path, error) for _, path, error in found]
        first = errors[0]
        return self.kind(first.message, first.location, first.section, first.clause, more=errors[1:])

    def _one(self, path: tuple[str | int, ...], error: Any) -> SourceError:
        kind = error["type"]
        known_path, _ = self.index.nearest(path)
        if kind == "extra_forbidden":
            return self.at(
                path,
                f"unknown key {path[-1]!r}: tscontract does not know this clause; "
                "informational text belongs under 'note' or 'description'",
                key=True,
                clause=False,
            )
        if kind == "missing":
            return self.at(path, f"missing required key {path[-1]!r}", clause=False)
        if kind == "string_type":
            got = error.get("input")
            what = (
                "a number"
                if isinstance(got, int | float) or type(got).__name__ == "Decimal"
                else (f"a {type(got).__name__}")
            )
            return self.at(
                path,
                f"expected text, got {what} ({got!s}); quote it if YAML read it as something else",
                clause=False,
            )
        cause = (error.get("ctx") or {}).get("error")
        offset = cause.offset if isinstance(cause, ClauseSyntaxError) else 0
        message = cause.message if isinstance(cause, ClauseSyntaxError) else error["msg"]
        message = message.removeprefix("Value error, ")
        target = path if known_path == path else known_path
        return self.at(target, message, offset=offset)

    def _order(self, path: tuple[str | int, ...]) -> tuple[int, int]:
        _, info = self.index.nearest(path)
        if info is None:
            return (0, 0)
        loc = info.key or info.value
        return (loc.line, loc.column)


def load_located(text: str, path: str, kind: type[SourceError], what: str) -> tuple[dict[str, Any], LocatedErrors]:
    """YAML ``text`` that must be a mapping, with every later error positioned and of class ``kind``."""
    from tscontract.contract.source import load_yaml  # ruamel.yaml: only where YAML is read (not from the cache)

    try:
        tree, index = load_yaml(text, path)
    except SourceError as exc:
        raise kind(exc.message, exc.location, exc.section, exc.clause) from None
    if not isinstance(tree, dict):
        raise kind(f"{what} is a YAML mapping of sections", Location(path, 1, 1))
    return tree, LocatedErrors(tree, index, kind)


def validate_located(model: type[Model], tree: dict[str, Any], errors: LocatedErrors) -> Model:
    """``model.model_validate(tree)``, every error positioned in the file."""
    try:
        return model.model_validate(tree)
    except ValidationError as exc:
        raise errors.from_validation(exc) from None
