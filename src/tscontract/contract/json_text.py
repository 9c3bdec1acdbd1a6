"""JSON documents (Avro, JSON Schema) read with a nesting bound: the readers walk them recursively."""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 64  # arrays and objects inside each other; a deeper schema is refused, never walked


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep arrays and objects nest in ``value`` (a scalar: 0), counted without recursion up to ``limit + 1``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def load_json(text: str | dict[str, Any] | list[Any]) -> Any:
    """``text`` parsed (a dict or list passes as it is), refusing a document nested deeper than
    :data:`MAX_JSON_DEPTH`: :class:`ValueError` (:class:`json.JSONDecodeError` where it is no JSON)."""
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels (at most {MAX_JSON_DEPTH})") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels (at most {MAX_JSON_DEPTH})")
    return value
