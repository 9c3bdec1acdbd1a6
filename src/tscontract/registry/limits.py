"""Size and nesting limits on a submitted schema text, checked before any parser sees it.

A schema text is at most ``MAX_SCHEMA_BYTES`` (UTF-8), and that holds for the text as submitted and
for the canonical text the registry stores. JSON (Avro, JSON Schema) nests at most
``MAX_JSON_DEPTH`` arrays and objects; Protobuf nests at most ``MAX_PROTO_DEPTH`` blocks (``{}`` and
the ``<>`` of option values). The scanners read each character at most once, allocate nothing per
level and skip string literals and comments, so a hostile text costs a pass over at most
``MAX_SCHEMA_BYTES``: canonical formatting indents by depth, and a Protobuf text 20,000 messages deep
(400 KB) once became 800 MB of indentation before protoc even ran.
"""

from __future__ import annotations

import re

MAX_SCHEMA_BYTES = 1024 * 1024  # Kafka's default message size, which bounds a schema in Confluent's registry
MAX_JSON_DEPTH = 256  # Avro records nest 3 JSON levels each: about 85 nested records
MAX_PROTO_DEPTH = 64  # protoc itself stops nested messages at 32
MAX_RESOLVED_BYTES = 8 * MAX_SCHEMA_BYTES  # a schema with the texts its references reach, as checks read it

# a string literal (escapes included), an unterminated quote, or one bracket
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{}]', re.DOTALL)
# comments, string literals, an unterminated quote or comment, or one block delimiter
_PROTO_TOKENS = re.compile(
    r"//[^\n]*|/\*.*?\*/|/\*|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|[\"']|[{}<>]", re.DOTALL
)
_OPEN = frozenset("{[<")
_CLOSE = frozenset("}]>")


class LimitError(ValueError):
    """A schema text over one of the limits; the message names the limit."""


def check_size(text: str, what: str = "schema text", limit: int = MAX_SCHEMA_BYTES) -> None:
    """LimitError when ``text`` is over ``limit`` bytes in UTF-8."""
    # a character is at most 4 bytes: only a text near the limit needs encoding to know
    if len(text) > limit // 4 and len(text.encode("utf-8", "surrogatepass")) > limit:
        raise LimitError(f"{what} is over the registry's limit of {limit} bytes")


def _depth_over(text: str, tokens: re.Pattern[str], limit: int) -> bool:
    """Whether the delimiters outside strings and comments nest deeper than ``limit``.

    A lone quote (a JSON string that never ends; a Protobuf string that ends its line) is skipped as
    one character, as the canonical formatter reads it. A ``/*`` without ``*/`` is refused here: every
    later ``/*`` would scan to the end again."""
    if sum(text.count(c) for c in "{[<") <= limit and "/*" not in text:
        return False  # cannot nest deeper than it opens
    depth = 0
    for match in tokens.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif token in _CLOSE:
            depth = max(depth - 1, 0)
        elif token == "/*":
            raise LimitError("a /* comment is never closed")
    return False


def check_schema_text(schema_type: str, text: str) -> None:
    """LimitError naming the limit when the text is too large or nested too deeply for its type."""
    check_size(text)
    if schema_type == "PROTOBUF":
        if _depth_over(text, _PROTO_TOKENS, MAX_PROTO_DEPTH):
            raise LimitError(f"Protobuf text nests blocks deeper than the registry's limit of {MAX_PROTO_DEPTH}")
    elif _depth_over(text, _JSON_TOKENS, MAX_JSON_DEPTH):
        raise LimitError(f"JSON nests arrays and objects deeper than the registry's limit of {MAX_JSON_DEPTH}")


MAX_BODY_BYTES = 4 * 1024 * 1024  # a 1 MiB schema fits even with every character escaped as \uXXXX
MAX_BODY_VALUES = 10_000  # arrays, objects and commas outside strings: references, metadata, rules
# a JSON string literal, or one container opener or comma
_BODY_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{,]', re.DOTALL)


def check_body(raw: bytes) -> None:
    """LimitError when a JSON request body holds more than ``MAX_BODY_VALUES`` values.

    Bounds what parsing builds: 4 MiB of ``[{},{},...]`` is a million dicts, about 100 MB, while a
    registration holds one object, its schema as one string, and a few references and rules."""
    if raw.count(b",") + raw.count(b"{") + raw.count(b"[") <= MAX_BODY_VALUES:
        return
    values = 0
    for match in _BODY_TOKENS.finditer(raw):
        if len(match.group()) == 1:
            values += 1
            if values > MAX_BODY_VALUES:
                raise LimitError(f"JSON body holds more than the registry's limit of {MAX_BODY_VALUES} values")
