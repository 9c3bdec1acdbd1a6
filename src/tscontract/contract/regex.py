"""Regular expressions a contract may write: the part DuckDB (RE2) and Spark (Java) read alike.

A pattern is compiled with Python's ``re`` (a syntax error is one line with its position), then
refused where the engines would disagree or fail: RE2 has no backreferences, lookaround,
conditionals, atomic groups or possessive quantifiers; Java reads ``(?P<name>``, ``\\v``,
``\\Z``, ``{,n}``, ``[[:alpha:]]``, ``[a&&b]`` and a ``[`` inside a class differently or not
at all. What is left means the same on both engines (matched as a whole, like ``re.fullmatch``).

DuckDB and chdb match with RE2, in time linear in the value; Spark (Java), PostgreSQL and the
exported pandera/CEL checks (Python ``re``) backtrack, and a pattern like ``(a+)+$`` takes time
exponential in the value's length there. A contract is untrusted (SECURITY.md), so a repetition
of something that itself repeats or offers a choice, where one repetition can end with a
character the next can start with (or match nothing), is refused whatever engine runs it:
``(a+)+``, ``(a|ab)*``, ``(\\w+\\s?)*``. ``([A-Z]+\\.)*`` (a letter starts, a dot ends),
``(\\d{1,3}\\.){3}`` (a fixed count) and ``([A-Z]+)?`` (at most once) stay.
"""

from __future__ import annotations

import re
import warnings
from re import _constants as sre_constants
from re import _parser as sre_parse
from typing import Any

from tscontract.contract.grammar import ClauseSyntaxError

_PORTABLE_ESCAPES = set("dDwWsSbBAtnrf")
_UNSUPPORTED = {
    sre_constants.GROUPREF: "a backreference",
    sre_constants.GROUPREF_EXISTS: "a conditional group",
    sre_constants.ASSERT: "a lookahead or lookbehind",
    sre_constants.ASSERT_NOT: "a negative lookahead or lookbehind",
    sre_constants.ATOMIC_GROUP: "an atomic group",
    sre_constants.POSSESSIVE_REPEAT: "a possessive quantifier",
}
_FLAGS_ALLOWED = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.UNICODE


def check_regex(pattern: str) -> None:
    """Refuse ``pattern`` unless DuckDB and Spark match it alike; offsets are into ``pattern``."""
    try:
        with warnings.catch_warnings():  # "possible nested set": refused below, never printed
            warnings.simplefilter("ignore")
            parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise ClauseSyntaxError(f"not a valid regular expression: {exc.msg}", exc.pos or 0) from None
    _scan_text(pattern)
    if parsed.state.flags & ~_FLAGS_ALLOWED:
        raise ClauseSyntaxError("only the flags (?i), (?m) and (?s) mean the same on DuckDB and Spark")
    if parsed.state.groupdict:
        raise ClauseSyntaxError("named groups are written differently in RE2 and Java; use (...) or (?:...)")
    _walk(parsed)
    _refuse_nested_repeats(parsed)


def check_backtracking(pattern: str) -> None:
    """Refuse ``pattern`` (any Python regex) where backtracking can take exponential time."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise ClauseSyntaxError(f"not a valid regular expression: {exc.msg}", exc.pos or 0) from None
    _refuse_nested_repeats(parsed)


def _refuse_nested_repeats(parsed: Any) -> None:
    for op, av in parsed:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, high, body = av
            if high != low and high > 1 and _varies(body) and _ambiguous(body):
                raise ClauseSyntaxError(
                    "a repetition of something that repeats or offers a choice, such as (a+)+ or (a|ab)*, "
                    "takes exponential time on backtracking engines (Spark, PostgreSQL, pandera); "
                    "write it without nesting, e.g. [a-z]+ instead of ([a-z]+)+"
                )
            _refuse_nested_repeats(body)
        elif op == sre_constants.SUBPATTERN:
            _refuse_nested_repeats(av[3])
        elif op == sre_constants.BRANCH:
            for sub in av[1]:
                _refuse_nested_repeats(sub)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            _refuse_nested_repeats(av[1])


_PROBES = (*(chr(c) for c in range(128)), "\u00e9", "\u00a0", "\u2028", "\u4e00")
_CHARACTER_OPS = (sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.ANY, sre_constants.IN)


def _ambiguous(body: Any) -> bool:
    """One repetition of ``body`` can end where the next begins, or match nothing: a text can be
    split among the repetitions in many ways. (``[\\s-][A-Za-z]+`` starts with a separator and ends
    with a letter: one way only.)"""
    first, empty = _edge(list(body), body.state, last=False)
    final, _ = _edge(list(body), body.state, last=True)
    return empty or bool(first & final)


def _edge(items: list[Any], state: Any, last: bool) -> tuple[frozenset[str], bool]:
    """The probe characters the items can start (``last``: end) with, and whether they can match nothing."""
    found: set[str] = set()
    for op, av in reversed(items) if last else items:
        chars, empty = _item_edge(op, av, state, last)
        found |= chars
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def _item_edge(op: Any, av: Any, state: Any, last: bool) -> tuple[frozenset[str], bool]:
    if op in _CHARACTER_OPS:
        return _matching(op, av, state), False
    if op == sre_constants.AT or op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return frozenset(), True
    if op == sre_constants.SUBPATTERN:
        return _edge(list(av[3]), state, last)
    if op == sre_constants.BRANCH:
        edges = [_edge(list(b), state, last) for b in av[1]]
        return frozenset().union(*(e[0] for e in edges)), any(e[1] for e in edges)
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
        chars, empty = _edge(list(av[2]), state, last)
        return chars, empty or av[0] == 0
    return frozenset(_PROBES), True  # anything else: assume the worst


def _matching(op: Any, av: Any, state: Any) -> frozenset[str]:
    """The probe characters one character item matches (compiled on its own, with the pattern's flags)."""
    one = sre_parse.SubPattern(state, [(op, av)])
    try:
        # re._compiler is private (typeshed omits it): the one way to compile a parsed item on its own
        compiled = re._compiler.compile(one, state.flags)  # type: ignore[attr-defined]
    except Exception:
        return frozenset(_PROBES)
    return frozenset(c for c in _PROBES if compiled.fullmatch(c))


def _walk(parsed: Any) -> None:
    for op, av in parsed:
        what = _UNSUPPORTED.get(op)
        if what is not None:
            raise ClauseSyntaxError(f"{what} is not supported by DuckDB's regular expressions (RE2)")
        if op == sre_constants.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if (add_flags | del_flags) & ~_FLAGS_ALLOWED:
                raise ClauseSyntaxError("only the flags (?i), (?m) and (?s) mean the same on DuckDB and Spark")
            _walk(sub)
        elif op == sre_constants.BRANCH:
            for sub in av[1]:
                _walk(sub)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            _walk(av[2])
        elif op == sre_constants.AT and av == sre_constants.AT_END_STRING:
            raise ClauseSyntaxError("\\Z means different things to RE2 and Java; the whole value is matched, use $")


def _varies(parsed: Any) -> bool:
    """``parsed`` holds a repetition of variable count or an alternation (also nested in groups)."""
    for op, av in parsed:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and (av[0] != av[1] or _varies(av[2])):
            return True
        if op == sre_constants.BRANCH:
            return True
        if op == sre_constants.SUBPATTERN and _varies(av[3]):
            return True
    return False


def _scan_text(pattern: str) -> None:
    """Escapes and class syntax the parsed form no longer shows."""
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "x" and re.match(r"[0-9A-Fa-f]{2}", pattern[i + 2 : i + 4]):
                i += 4
                continue
            if nxt.isalnum() and nxt not in _PORTABLE_ESCAPES:
                raise ClauseSyntaxError(_escape_problem(nxt), i)
            i += 2
            continue
        if in_class:
            if char == "]" and pattern[i - 1 : i] != "[" and pattern[i - 2 : i] != "[^":
                in_class = False
            elif char == "[":
                raise ClauseSyntaxError(
                    "'[' inside a character class is a nested class in Java and a character in RE2; write \\[", i
                )
            elif pattern.startswith("&&", i):
                raise ClauseSyntaxError(
                    "'&&' in a character class is an intersection in Java only; list the characters", i
                )
        elif char == "[":
            in_class = True
        elif pattern.startswith("{,", i):
            raise ClauseSyntaxError("write a repetition with its lower bound: {0,n}", i)
        i += 1


def _escape_problem(char: str) -> str:
    if char.isdigit():
        return f"\\{char} is a backreference or an octal escape, which DuckDB (RE2) and Spark (Java) read differently"
    if char == "Z":
        return "\\Z means different things to RE2 and Java; the whole value is matched, use $"
    if char in "uUNx":
        return f"\\{char} escapes are not read alike by RE2 and Java; write the character itself or \\xHH"
    return (
        f"\\{char} is not read alike by DuckDB (RE2) and Spark (Java); use \\d \\w \\s, classes [...] or the character"
    )


_WORD = "A-Za-z0-9_"
_SPACE = "\\t\\n\\f\\r "  # RE2's \s (Java's also takes \x0b, docs/language.md "Regular expressions")
_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
}
_INSIDE = {"d": "0-9", "w": _WORD, "s": _SPACE}


def python_pattern(pattern: str, dot: str = ".") -> str:
    """``pattern`` for Python's ``re`` as the engines read it: ``\\d \\w \\s`` (and their negations, ``\\b``,
    ``\\B``) are ASCII classes, as in RE2 and Java; everything else, ``(?i)`` included, stays Unicode.

    ``re.ASCII`` would also make ``(?i)`` ASCII-only (``(?i)é`` would not match ``É``, which RE2 and Java
    match). Inside a character class ``\\D \\W \\S`` keep Python's Unicode reading (rare; not rewritten).
    ``dot``: what an unescaped ``.`` outside a class becomes (``[^\\n]`` where a ``.`` would take ``\\n``).
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            table = _INSIDE if in_class else _OUTSIDE
            out.append(table.get(escaped, char + escaped))
            i += 2
            continue
        out.append(dot if char == "." and not in_class else char)
        i += 1
        if char == "[" and not in_class:
            in_class = True
            for literal in ("^", "]"):  # '[^]...]' and '[]...]': the first ']' is a member
                if pattern.startswith(literal, i):
                    out.append(literal)
                    i += 1
        elif char == "]" and in_class:
            in_class = False
    return "".join(out)


_LEADING_FLAGS = re.compile(r"^\(\?([a-zA-Z]+)\)")
NOT_NEWLINE = "[^\\n]"  # RE2's '.' where an engine's own '.' also takes '\n' (PostgreSQL) or refuses '\r' (ECMA)


def leading_flags(pattern: str) -> tuple[str, str]:
    """(the letters of ``pattern``'s leading flag group, the rest): ``(?is)a.b`` -> ``("is", "a.b")``."""
    found = _LEADING_FLAGS.match(pattern)
    return (found[1], pattern[found.end() :]) if found else ("", pattern)


def ecma_pattern(pattern: str) -> str:
    """A whole-text match of ``pattern`` as an ECMA-262 pattern (JSON Schema's ``pattern`` searches).

    ``\\d \\w \\s`` become the ASCII classes (ECMA's ``\\s`` is Unicode space), ``.`` is ``[^\\n]`` (ECMA's
    ``.`` also refuses ``\\r``, U+2028 and U+2029), and the end is ``(?![\\s\\S])``: ECMA's ``$`` is the end
    of the text, but validators that search with Python's ``re`` read ``$`` before a final ``\\n`` too.
    ECMA-262 has no inline flags: a pattern with ``(?i)``, ``(?m)`` or ``(?s)`` raises ``ValueError``.
    """
    letters, body = leading_flags(pattern)
    if letters:
        raise ValueError(f"uses the inline flag (?{letters}); ECMA-262 patterns (JSON Schema) have none")
    return f"^(?:{python_pattern(body, dot=NOT_NEWLINE)})(?![\\s\\S])"


def python_anchored(pattern: str) -> str:
    """A whole-text match of ``pattern`` for tools that *search* with Python's ``re`` (GX on pandas):
    leading flags first (Python refuses them inside a group), ASCII classes, ``\\A ... \\Z`` (``$`` also
    matches before a final ``\\n``, and under ``(?m)`` at every line end)."""
    letters, body = leading_flags(pattern)
    flags = f"(?{letters})" if letters else ""
    return f"{flags}\\A(?:{python_pattern(body)})\\Z"
