"""How a value or a message from the data or an engine is shown: cut to a stated length, made visible.

Every report format shows the same bounded values: :func:`shown_value` cuts each string of a failing
example when the report is built (``plan/result.py``), so no renderer meets an unbounded value.
Each renderer then escapes for its format; :func:`visible` is the part they share (control
characters as escapes, so a value cannot move the cursor, recolour a terminal or break XML).
"""

from __future__ import annotations

import re
from typing import Any

VALUE_CHARS = 200  # characters of one value shown (an example's field, an engine error's line)
MESSAGE_CHARS = 500  # characters of one message shown (a check's message, an error line)

# C0 controls, DEL, C1 controls; line/paragraph separators; bidirectional overrides and isolates
# (text that reads differently from what it holds); the byte-order mark; lone surrogates and the
# non-characters U+FFFE/U+FFFF (not writable as UTF-8, not allowed in XML 1.0).
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def cut(text: str, limit: int = VALUE_CHARS) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit`` and ``…(N chars)``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text)} chars)"


def shown_value(value: Any, limit: int = VALUE_CHARS) -> Any:
    """``value`` with every string in it (keys too) cut to ``limit``; numbers and the rest as they are."""
    if isinstance(value, str):
        return cut(value, limit)
    if isinstance(value, bytes | bytearray):  # as JSON output writes them (``default=str``), cut
        return cut(repr(bytes(value)), limit)
    if isinstance(value, dict):
        return {shown_value(k, limit): shown_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_value(v, limit) for v in value]
    return value


def engine_message(exc: BaseException, limit: int = VALUE_CHARS) -> str:
    """An engine's error as shown: its first non-blank line, cut to ``limit`` characters.

    Engine errors quote what they met (a value, a file's text), so the rest never reaches a report.
    ``MESSAGE_CHARS`` where the error is about our own file, not data (a store's lock, naming its
    path twice and the process that holds it).
    """
    text = _java_root_cause(exc) or str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return cut(first, limit)


def _java_root_cause(exc: BaseException) -> str | None:
    """A py4j error's innermost Java exception, as ``Class: message``; None for any other error.

    A Spark job that fails on an error PySpark does not translate (a task out of memory) reaches Python
    as "An error occurred while calling o123.getResult." with the reason two causes down.
    """
    java = getattr(exc, "java_exception", None)
    if java is None:
        return None
    try:
        for _ in range(32):  # a cause chain is short; a cycle is not followed for ever
            cause = java.getCause()
            if cause is None:
                break
            java = cause
        return f"{java.getClass().getSimpleName()}: {java.getMessage()}"
    except Exception:  # the JVM is gone: its own text is all there is
        return None


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with control, separator and bidi-override characters as ``\\xNN``/``\\uNNNN`` escapes."""
    return _INVISIBLE.sub(_escape, text)


def shown_message(text: str) -> str:
    """A message on one line: control characters visible, cut to :data:`MESSAGE_CHARS`."""
    return visible(cut(text, MESSAGE_CHARS))
