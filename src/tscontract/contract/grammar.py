"""The lark parser behind every clause written in words, and its errors."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
from functools import cache, lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from tscontract.contract.cache import cache_dir, read_pickle, write_pickle

if TYPE_CHECKING:  # lark is imported where a clause is read: a contract read back from the cache needs none
    from lark import Lark, Token, Tree
    from lark.exceptions import UnexpectedInput

START_RULES = (
    "type_expr",
    "invariant",
    "field_constraint",
    "cadence",
    "timezone",
    "duration_start",
)

_WHAT = {
    "type_expr": "type",
    "invariant": "invariant",
    "field_constraint": "constraint",
    "cadence": "cadence",
    "timezone": "timezone rule",
    "duration_start": "duration",
}


MAX_CLAUSE_CHARS = 4000  # a longer clause is refused: split it, or move long lists to the catalog
MAX_NESTING = 256  # the weighted depth of a clause's parse tree (:func:`nesting`)
# what one level of each rule costs in the recursion that turns a clause into SQL (sqlglot) and back
# (the Spark engine reads the SQL again); every other rule costs 1, so chains of 'and', 'or', '+' or
# comparisons are flat enough at 256 and nesting function calls is the costliest
_NESTING_COST = {"func": 16, "not_": 6, "neg": 2}
MAX_BRACKETS = 32  # brackets nested deeper are refused before parsing
_CACHED_DEPTH = 48  # deeper trees are not written to the disk cache (pickling recurses per level)


class ClauseSyntaxError(ValueError):
    """A clause that the grammar does not accept; ``offset`` is 0-based into the text."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@cache
def _grammar() -> str:
    return files("tscontract.contract").joinpath("clauses.lark").read_text(encoding="utf-8")


PARSER = "lalr"  # part of the tree cache's key: another parser may build other trees


@cache
def _parser() -> Lark:
    import lark

    # LALR(1) with lark's contextual lexer: about 0.2 ms a clause where Earley took 4 ms, and a column whose
    # name starts with a keyword (``notional``) is one name, where Earley could read ``not ional``
    # lark keeps its parser tables in the cache (12 ms to load where building them takes 80 ms); it checks
    # them against the grammar and options, and builds anew from a missing, stale or damaged file
    directory = cache_dir()
    kept: dict[str, str] = {}
    if directory is not None:
        with contextlib.suppress(OSError):
            directory.mkdir(parents=True, exist_ok=True)
            kept["cache"] = str(directory / f"lark-{lark.__version__}-{PARSER}.tables")
    return lark.Lark(_grammar(), start=list(START_RULES), parser=PARSER, propagate_positions=True, **kept)


class _TreeCache:
    """Parse trees kept on disk between processes, keyed by grammar, lark version and text.

    Building the parser is the bulk of reading a contract's clauses in a fresh process
    (about 70 ms); a process whose clauses are all in the cache never builds it. Trees
    live in :data:`SHARDS` files by a digest of their text, and a process reads only the
    files of the clauses it meets: one file of every tree cost each command 1.5 s once a
    test run had filled it with 20,000 generated clauses. New trees are written once, when
    the process exits; a full file forgets its oldest trees.
    """

    SHARDS = 256
    PER_SHARD = 80  # trees kept in one file (20,480 in all)

    def __init__(self) -> None:
        self.directory: Path | None = None
        self.opened = False
        self.shards: dict[str, dict[tuple[str, str], Tree[Token]]] = {}
        self.dirty: set[str] = set()

    def _shard(self, start: str, text: str) -> tuple[str, dict[tuple[str, str], Tree[Token]]]:
        if not self.opened:
            self.opened = True
            directory = cache_dir()
            if directory is not None:
                import lark

                key = f"{lark.__version__}\n{PARSER}\n{START_RULES}\n{_grammar()}"
                key = hashlib.sha256(key.encode()).hexdigest()
                self.directory = directory / f"clauses-{key[:20]}"
        digest = hashlib.sha256(f"{start}\n{text}".encode()).digest()
        name = f"{digest[0] % self.SHARDS:02x}"
        if name not in self.shards:
            found = read_pickle(self.directory / f"{name}.pickle") if self.directory is not None else None
            self.shards[name] = found if isinstance(found, dict) else {}
        return name, self.shards[name]

    def get(self, start: str, text: str) -> Tree[Token] | None:
        return self._shard(start, text)[1].get((start, text))

    def put(self, start: str, text: str, tree: Tree[Token]) -> None:
        name, trees = self._shard(start, text)
        if self.directory is None or _depth(tree) > _CACHED_DEPTH:
            return
        while len(trees) >= self.PER_SHARD:
            del trees[next(iter(trees))]
        trees[(start, text)] = tree
        if not self.dirty:
            atexit.register(self.save)
        self.dirty.add(name)

    def save(self) -> None:
        """Write the files that grew (at exit): a cache that cannot be written is skipped, never an error."""
        if self.directory is not None:
            for name in sorted(self.dirty):
                write_pickle(self.directory / f"{name}.pickle", self.shards[name])
        self.dirty.clear()


_TREES = _TreeCache()


def _depth(tree: Tree[Token], cost: dict[str, int] | None = None) -> int:
    """The depth of ``tree``, each level weighted by ``cost`` (1 where it names none); no recursion."""
    deepest, stack = 0, [(tree, 0)]
    while stack:
        node, above = stack.pop()
        here = above + (cost.get(node.data, 1) if cost else 1)
        deepest = max(deepest, here)
        stack.extend((child, here) for child in node.children if not isinstance(child, str))  # a token is a str
    return deepest


def nesting(tree: Tree[Token]) -> int:
    """How deeply a clause nests: its parse tree's depth, a function call counting 16, 'not' 6, a sign 2."""
    return _depth(tree, _NESTING_COST)


def unquote(token: str) -> str:
    """A quoted literal's value: the quotes off, a doubled quote inside as one (``'d''Ivoire'``).

    Backslashes stay as written (a ``matches`` pattern needs them).
    """
    quote = token[0]
    return token[1:-1].replace(quote * 2, quote)


def _check_size(what: str, text: str) -> None:
    if len(text) > MAX_CLAUSE_CHARS:
        raise ClauseSyntaxError(
            f"{what} is {len(text)} characters long; a clause has at most {MAX_CLAUSE_CHARS}: "
            "split it into several clauses (or move long lists to the catalog)"
        )


def _check_brackets(what: str, text: str) -> None:
    """Refuse brackets nested deeper than :data:`MAX_BRACKETS` (outside quoted text), before parsing."""
    depth, quote, escaped = 0, "", False
    for offset, char in enumerate(text):
        if quote:
            quote = "" if char == quote and not escaped else quote
            escaped = char == "\\" and not escaped
        elif char in "'\"":
            quote = char
        elif char in "([":
            depth += 1
            if depth > MAX_BRACKETS:
                raise ClauseSyntaxError(f"{what} nests brackets more than {MAX_BRACKETS} deep", offset)
        elif char in ")]":
            depth -= 1


def _check_nesting(what: str, tree: Tree[Token]) -> None:
    depth = nesting(tree)
    if depth > MAX_NESTING:
        raise ClauseSyntaxError(
            f"{what} nests too deeply ({depth} levels, at most {MAX_NESTING}: a function call counts 16, "
            "'not' 6, a minus sign 2, every other operator 1); split it into several clauses"
        )


def _expected(exc: UnexpectedInput) -> str:
    names = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    pretty: list[str] = []
    for name in names[:8]:
        pattern = _parser().get_terminal(name).pattern if name in _terminal_names() else None
        literal = getattr(pattern, "value", None) if pattern is not None else None
        is_literal = pattern is not None and type(pattern).__name__ == "PatternStr"
        shown = repr(literal) if is_literal and literal else name.lower()
        if shown not in pretty:
            pretty.append(shown)
    return ", ".join(pretty)


@cache
def _terminal_names() -> frozenset[str]:
    return frozenset(t.name for t in _parser().terminals)


def ascii_digits(text: str) -> None:
    """Refuse digits other than 0-9 (``decimal(１８,８)``, ``１５m``): Python reads them as numbers, SQL does not."""
    for offset, char in enumerate(text):
        if char.isdigit() and not char.isascii():
            raise ClauseSyntaxError(f"non-ASCII digit {char!r} (U+{ord(char):04X}); write digits 0-9", offset)


def _syntax_error(what: str, text: str, exc: UnexpectedInput) -> ClauseSyntaxError:
    """lark's error as one line naming the offending text, its position and what could come there."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    expected = _expected(exc)
    hint = f"; expected {expected}" if expected else ""
    offset = max(0, getattr(exc, "pos_in_stream", None) or 0)
    at_end = isinstance(exc, UnexpectedToken) and exc.token.type == "$END"  # LALR: the text ran out
    if isinstance(exc, UnexpectedEOF) or at_end or offset >= len(text):
        return ClauseSyntaxError(f"cannot parse {what}: it ends too early{hint}", len(text))
    if isinstance(exc, UnexpectedCharacters | UnexpectedToken):
        near = text[offset : offset + 12].split()[0] if text[offset:].strip() else text[offset:]
        return ClauseSyntaxError(f"cannot parse {what}: unexpected {near!r} at character {offset + 1}{hint}", offset)
    return ClauseSyntaxError(f"cannot parse {what}: {exc}")  # pragma: no cover - other lark errors


@lru_cache(maxsize=4096)
def parse(start: str, text: str) -> Tree[Token]:
    """Parse ``text`` with the start rule ``start``; raise :class:`ClauseSyntaxError`.

    Cached: catalogs repeat the same few cadences and units across thousands of series.
    Callers only read the tree (transformers build new objects).
    """
    what = _WHAT[start]
    if not text.strip():
        raise ClauseSyntaxError(f"empty {what}")
    _check_size(what, text)
    _check_brackets(what, text)
    ascii_digits(text)  # every clause: types, row clauses, cadences, durations
    tree = _TREES.get(start, text)
    if tree is not None:
        _check_nesting(what, tree)
        return tree
    from lark.exceptions import UnexpectedInput

    try:
        tree = _parser().parse(text, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(what, text, exc) from None
    _check_nesting(what, tree)
    _TREES.put(start, text, tree)
    return tree
