"""Read contract and catalog YAML as people write it, keeping every position.

Contracts are written with type expressions inside flow mappings::

    open: {type: decimal(18,8), unit: quote_currency}
    quality: {type: enum[good, suspect, bad]}

A plain YAML loader reads the first as ``type: "decimal(18"`` plus a key
``"8)"`` and fails on the second. Before YAML parsing, :func:`protect_type_calls`
quotes every ``name(...)`` / ``name[...]`` plain scalar inside a flow
collection, recording the inserted characters so that every reported column
refers to the file as written. Nothing else is rewritten.

The result of :func:`load_yaml` is a plain Python tree (``dict``/``list``/
scalars; floats as :class:`~decimal.Decimal`, timestamps as their text) plus a
:class:`PositionIndex` mapping every path to its key and value positions.

Limits, so that no file makes loading hang or exhaust memory: collections nest at
most :data:`MAX_DEPTH` deep, and aliases (``*name``) copy at most
:data:`ALIAS_BUDGET` nodes in all (a 2 KB "billion laughs" file would expand to
billions); an alias inside the collection it names is refused.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from decimal import Decimal, InvalidOperation
from types import SimpleNamespace
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tscontract.contract.positions import NodeInfo, Path, PositionIndex, format_path
from tscontract.errors import Location, SourceError

MAX_DEPTH = 64  # collections nested deeper than this are refused
ALIAS_BUDGET = 10_000  # nodes all aliases of a file may copy together

_CALL_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[(\[]")
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*\s*(#.*)?$")
_OPEN_CLOSE = {"(": ")", "[": "]"}


class _ColumnMap:
    """Maps columns of the rewritten text back to the text as written."""

    def __init__(self) -> None:
        self._inserted: dict[int, list[int]] = {}
        self.too_deep: tuple[int, int] | None = None  # (line, column) from 0 where flow nesting passes MAX_DEPTH

    def record(self, line: int, original_column: int) -> None:
        self._inserted.setdefault(line, []).append(original_column)

    def protected(self, line: int, original_column: int) -> bool:
        """True where a quote was inserted before ``original_column``."""
        return original_column in self._inserted.get(line, ())

    def original(self, line: int, column: int) -> int:
        inserts = self._inserted.get(line)
        if not inserts:
            return column
        # insert k sits at column inserts[k] + k of the rewritten line
        shifted = [pos + k for k, pos in enumerate(inserts)]
        return column - bisect_left(shifted, column)


def _skip_quoted(line: str, start: int) -> int:
    quote = line[start]
    i = start + 1
    while i < len(line):
        if quote == '"' and line[i] == "\\":
            i += 2
            continue
        if line[i] == quote:
            if quote == "'" and i + 1 < len(line) and line[i + 1] == "'":
                i += 2
                continue
            return i + 1
        i += 1
    return len(line)


def _balanced_end(line: str, open_at: int) -> int | None:
    stack = [_OPEN_CLOSE[line[open_at]]]
    i = open_at + 1
    while i < len(line) and stack:
        c = line[i]
        if c in "\"'":
            i = _skip_quoted(line, i)
            continue
        if c in _OPEN_CLOSE:
            stack.append(_OPEN_CLOSE[c])
        elif c in ")]" and c != stack.pop():
            return None
        i += 1
    return i if not stack else None


def protect_type_calls(text: str) -> tuple[str, _ColumnMap]:
    """Quote ``name(...)``/``name[...]`` plain scalars that stand inside flow collections."""
    columns = _ColumnMap()
    out: list[str] = []
    depth = 0
    block_indent: int | None = None
    for lineno, line in enumerate(text.split("\n")):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        buf: list[str] = []
        prev = ""  # previous significant character on this line
        i = 0
        while i < len(line):
            c = line[i]
            if c in "\"'" and (depth or prev in ("", ":", "-", "?", ",")):
                end = _skip_quoted(line, i)
                buf.append(line[i:end])
                prev, i = c, end
                continue
            if c == "#" and (i == 0 or line[i - 1] in " \t"):
                buf.append(line[i:])
                break
            if depth:
                starts_scalar = prev in ("{", "[", ",", ":") and (i == 0 or line[i - 1] in " \t{[,")
                match = _CALL_START.match(line, i) if starts_scalar else None
                closing = _balanced_end(line, match.end() - 1) if match else None
                if closing is not None:
                    buf.append('"' + line[i:closing] + '"')
                    columns.record(lineno, i)
                    columns.record(lineno, closing)
                    prev, i = '"', closing
                    continue
                if c in "{[":
                    depth += 1
                    if depth > MAX_DEPTH and columns.too_deep is None:
                        columns.too_deep = (lineno, i)  # refused before YAML parsing, whose scan is quadratic here
                elif c in "}]":
                    depth -= 1
            elif c in "{[" and prev in ("", ":", "-", "?", ","):
                depth += 1
            elif c in "|>" and prev in (":", "-") and _BLOCK_SCALAR.match(line, i):
                block_indent = indent
            buf.append(c)
            if c not in " \t":
                prev = c
            i += 1
        out.append("".join(buf))
    return "\n".join(out), columns


_TAG = "tag:yaml.org,2002:"


def _scalar_value(node: ScalarNode) -> Any:
    tag = getattr(node.tag, "value", node.tag) or ""
    raw = node.value
    if node.style == ">":
        # ruamel's round-trip composer marks each fold of a folded scalar with BEL (its constructor,
        # which we do not run, removes them); YAML allows no literal BEL in a block scalar
        raw = raw.replace("\a", "")
    if not tag.startswith(_TAG):
        return raw
    kind = tag[len(_TAG) :]
    if kind == "null":
        return None
    if kind == "bool":
        return raw.lower() == "true"
    if kind == "int":
        try:
            return int(raw.replace("_", ""), 0)
        except ValueError:
            return raw
    if kind == "float":
        try:
            number = Decimal(raw.replace("_", ""))
        except InvalidOperation:
            return raw
        return number if number.is_finite() else raw
    return raw


class _Builder:
    def __init__(self, path: str, columns: _ColumnMap) -> None:
        self.index = PositionIndex(path)
        self._columns = columns
        self._built: set[int] = set()  # nodes built once: met again, they come from an alias
        self._open: set[int] = set()  # collections being built: met again, an alias refers to itself
        self._copied = 0
        self._alias: tuple[Path, Location | None] | None = None  # the alias being expanded

    def _near(self, path: Path) -> Location | None:
        """Where ``path``, or its deepest ancestor built so far, stands (the root is built first)."""
        info = self.index.nearest(path)[1]
        return info.value if info is not None else None

    def _count(self, node: Node, path: Path, key: Location | None) -> None:
        """Count a node that an alias copies; refuse more than :data:`ALIAS_BUDGET` of them."""
        if id(node) in self._open:
            raise SourceError(
                "a YAML alias refers to the collection it stands in (a recursive structure)",
                key or self._near(path[:-1]),
                format_path(path),
            )
        if id(node) not in self._built:
            self._built.add(id(node))
            return
        self._copied += 1
        if self._copied > ALIAS_BUDGET:
            at, where = self._alias or (path, key)
            raise SourceError(
                f"YAML aliases expand to more than {ALIAS_BUDGET} copied values (an alias bomb?); "
                "write the values out instead of repeating anchors",
                where or self._near(at[:-1]),
                format_path(at),
            )

    def loc(self, node: Node) -> Location:
        mark = node.start_mark
        return Location(self.index.path, mark.line + 1, self._columns.original(mark.line, mark.column) + 1)

    def build(self, node: Node, path: Path, key: Location | None) -> Any:
        outermost = self._alias is None and id(node) in self._built
        if outermost:
            self._alias = (path, key)
        try:
            self._count(node, path, key)
            if isinstance(node, SequenceNode | MappingNode):
                self._open.add(id(node))
            try:
                return self._build(node, path, key)
            finally:
                self._open.discard(id(node))
        finally:
            if outermost:
                self._alias = None

    def _build(self, node: Node, path: Path, key: Location | None) -> Any:
        value_loc = self.loc(node)
        if isinstance(node, ScalarNode):
            single_line = node.start_mark.line == node.end_mark.line
            protected = self._columns.protected(node.start_mark.line, value_loc.column - 1)
            quoted = node.style in ("'", '"') and not protected
            self.index.nodes[path] = NodeInfo(
                value_loc,
                key,
                plain=single_line and (not node.style or protected),
                quote_offset=1 if quoted and single_line and "\\" not in node.value else 0,
            )
            return _scalar_value(node)
        self.index.nodes[path] = NodeInfo(value_loc, key, plain=False)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, i), None) for i, item in enumerate(node.value)]
        if isinstance(node, MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key_loc = self.loc(key_node)
                if not isinstance(key_node, ScalarNode):
                    raise SourceError("a key must be a plain name", key_loc, format_path(path))
                if key_node.value == "<<":
                    raise SourceError("YAML merge keys (<<) are not supported", key_loc)
                name = str(key_node.value)
                if name in result:
                    first = self.index.nodes[(*path, name)].key
                    raise SourceError(
                        f"duplicate key {name!r} (first defined at line {first.line if first else '?'})",
                        key_loc,
                        format_path(path),
                    )
                result[name] = self.build(value_node, (*path, name), key_loc)
            return result
        raise SourceError(f"unsupported YAML node {type(node).__name__}", value_loc)


def _fast_compose(text: str) -> Node | None:
    """``text`` composed by libyaml (ruamel.yaml.clib), about ten times faster than the pure parser; None
    where it might not compose as the pure parser does, which then decides and reports in its own words.

    Both resolve plain scalars by YAML 1.2 (``on`` and ``yes`` are text). Where they differ the text takes the
    pure path: tabs and YAML 1.1 line breaks, directives, tags, anchors and explicit keys (:data:`_PURE_ONLY`),
    lines that could nest deeply (libyaml's composer recurses), any libyaml error (it refuses ``1:20`` in a
    flow sequence, which YAML 1.2 allows). tests/contract/test_source_fast.py holds the two to the same trees,
    positions and errors on every YAML file of the repository and on generated texts.
    """
    if any(c in text for c in _PURE_ONLY) or _PURE_ONLY_RE.search(text) or not _shallow(text):
        return None
    yaml = YAML(typ="safe", pure=False)
    if yaml.Parser.__module__.startswith("ruamel.yaml.parser"):  # clib missing: the pure parser
        return None
    try:
        node: Node | None = yaml.compose(text)
    except Exception:  # libyaml's refusals and wording differ: the pure parser decides and reports
        return None
    if not isinstance(node, MappingNode | SequenceNode) or _depth(node) >= MAX_DEPTH:
        return None  # a scalar document (refused as a contract anyway); 64 levels (the pure composer refuses)
    if not _place_empty_values(node, text.split("\n")):
        return None
    return node


_PURE_ONLY = ("\t", "\x85", "\u2028", "\u2029")  # tabs; line breaks in YAML 1.1 (libyaml), not in 1.2
# a directive (libyaml reads %YAML its own way); a comment against a block scalar's header (libyaml takes it);
# a tag or an anchor (the parsers start the node at different marks); an explicit key (? key)
_PURE_ONLY_RE = re.compile(r"^%|[|>][-+0-9]*#|(?:^|[\s\[{,])(?:[!&]\S|\?(?:\s|$))", re.MULTILINE)


def _place_empty_values(node: Node, lines: list[str]) -> bool:
    """Put each empty mapping value just after its ``:`` (libyaml does; the pure parser puts it at the next
    token, maybe lines below, where an error about it would point); False when an empty value stands
    elsewhere (an item, a key), which the two parsers place differently: the fast path then steps aside."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        here = stack.pop()
        if id(here) in seen:
            continue
        seen.add(id(here))
        if isinstance(here, SequenceNode):
            if any(_empty(item) for item in here.value):
                return False
            stack.extend(here.value)
        elif isinstance(here, MappingNode):
            for key, value in here.value:
                if _empty(key):
                    return False
                if _empty(value):
                    mark = key.end_mark
                    colon = lines[mark.line].find(":", mark.column)
                    if colon < 0:
                        return False
                    value.start_mark = value.end_mark = SimpleNamespace(line=mark.line, column=colon + 1)
                stack.extend((key, value))
    return True


def _empty(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.value == "" and not node.style  # null, or tagged and empty


def _shallow(text: str) -> bool:
    """Whether no line can open more than ``4 * MAX_DEPTH`` collections (libyaml's composer recurses per
    level): a block collection needs more indentation than its parent's (a sequence may share its key's),
    and a line opens at most one per indicator on it."""
    for line in text.split("\n"):
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        opened = sum(body.count(c) for c in "-:?[{")
        if 2 * indent + opened > 4 * MAX_DEPTH:
            return False
    return True


def _depth(node: Node) -> int:
    """How deeply collections nest in ``node`` (a scalar is 0): each node once (an alias bomb is linear),
    without recursion. An alias counts the height of what it stands for, so this is never below the depth
    the pure composer guards."""
    height: dict[int, int] = {}
    open_: set[int] = set()  # collections whose children are being measured: met again, a cycle
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        here, children_done = stack.pop()
        if id(here) in height:
            continue
        parts = _children(here)
        if children_done or not parts:
            height[id(here)] = 1 + max(height[id(p)] for p in parts) if parts else 0
            open_.discard(id(here))
            continue
        if id(here) in open_:  # an alias inside the collection it names: the pure path refuses it
            return MAX_DEPTH
        open_.add(id(here))
        stack.append((here, True))
        stack.extend((p, False) for p in parts if id(p) not in height)
    return height[id(node)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _checked_compose(text: str) -> Node | None:
    yaml = YAML(typ="rt")
    yaml.max_depth = MAX_DEPTH
    composed: Node | None = yaml.compose(text)  # ruamel leaves compose() unannotated: the root node, or None
    return composed


def load_yaml(text: str, path: str) -> tuple[Any, PositionIndex]:
    """Parse ``text`` (from ``path``) into a plain tree and its position index."""
    rewritten, columns = protect_type_calls(text)
    if columns.too_deep is not None:
        line, column = columns.too_deep
        raise SourceError(
            f"not valid YAML: collections nest more than {MAX_DEPTH} deep", Location(path, line + 1, column + 1)
        )
    node = _fast_compose(rewritten)
    try:
        if node is None:
            node = _checked_compose(rewritten)
            if node is not None:
                _place_empty_values(node, rewritten.split("\n"))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = None
        if mark is not None:
            loc = Location(path, mark.line + 1, columns.original(mark.line, mark.column) + 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if isinstance(exc, MaxDepthExceededError):
            problem = f"collections nest more than {MAX_DEPTH} deep"
        elif "'\\t'" in problem:
            problem = "a tab character where YAML allows none; use spaces (a tab is allowed inside quotes)"
        raise SourceError(f"not valid YAML: {problem}", loc) from exc
    except YAMLError as exc:
        raise SourceError(f"not valid YAML: {exc}", Location(path, 1, 1)) from exc
    if node is None:
        raise SourceError("the file is empty", Location(path, 1, 1))
    builder = _Builder(path, columns)
    tree = builder.build(node, (), None)
    return tree, builder.index
