"""Where each value of a YAML document stands in its text: what errors point at, long after reading.

Kept apart from :mod:`.source` (which reads the YAML with ruamel) so that a contract or catalog read
back from the cache carries its positions without importing the YAML reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tscontract.errors import Location

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class NodeInfo:
    """Where a value (and the key that names it) stands in the original text."""

    value: Location
    key: Location | None = None
    plain: bool = True  # single-line plain scalar: text offsets map 1:1 to columns
    quote_offset: int = 0  # 1 for a quoted scalar: the text starts after the quote


@dataclass
class PositionIndex:
    """Positions of every node, keyed by path (``("fields", "open", "type")``)."""

    path: str
    nodes: dict[Path, NodeInfo] = field(default_factory=dict)

    def nearest(self, path: Path) -> tuple[Path, NodeInfo | None]:
        """The info of ``path`` or of its deepest ancestor that exists."""
        probe = tuple(path)
        while probe:
            if probe in self.nodes:
                return probe, self.nodes[probe]
            probe = probe[:-1]
        return (), self.nodes.get(())

    def location(self, path: Path, *, key: bool = False, offset: int = 0) -> Location | None:
        """Location of ``path``; of its key with ``key=True``; ``offset`` chars into a clause."""
        found, info = self.nearest(path)
        if info is None:
            return None
        if key and info.key is not None:
            return info.key
        loc = info.value
        if offset and found == tuple(path) and (info.plain or info.quote_offset):
            return Location(loc.path, loc.line, loc.column + info.quote_offset + offset)
        return loc


def format_path(path: Path) -> str:
    """``("fields", "open", "type")`` -> ``fields.open.type``; ints as ``[i]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += part if not text else f".{part}"
    return text
