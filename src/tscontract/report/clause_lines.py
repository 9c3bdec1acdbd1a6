"""Where a check's clause is written: the line of its ``source`` path in the contract file."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def source_path(source: str) -> tuple[str | int, ...]:
    """``fields.open.type`` -> ``("fields", "open", "type")``; ``invariants[2]`` -> ``("invariants", 2)``."""
    return tuple(name if name else int(index) for name, index in _PART.findall(source))


def clause_lines(contract: str | Path) -> Callable[[str], int | None]:
    """A lookup from a check's ``source`` to its 1-based line in ``contract`` (None: not in the file)."""
    from tscontract.contract.source import load_yaml  # ruamel.yaml: only when a report names lines

    try:
        _, index = load_yaml(Path(contract).read_text(encoding="utf-8"), str(contract))
    except (OSError, UnicodeDecodeError, ValueError):
        return lambda source: None

    def line(source: str) -> int | None:
        path = source_path(source)
        found, info = index.nearest(path)
        if info is None or not found:
            return None
        return (info.key or info.value).line

    return line
