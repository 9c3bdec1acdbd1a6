"""Schema texts as the registry accepts them, and its default compatibility decision.

``parse_schema`` refuses what a real registry refuses (the 42201 answer): Avro that fastavro
cannot parse or whose record repeats a field name, JSON Schema that its metaschema rejects,
Protobuf text that protoc cannot compile. ``default_compat`` is the injectable compatibility
callable the server uses unless told otherwise.
"""

from __future__ import annotations

import functools
import json
from typing import Any

SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")


def parse_schema(schema_type: str, text: str, named: dict[str, Any] | None = None) -> Any:
    """Parse a schema of its type or raise ValueError with the reason (the registry's 42201)."""
    if schema_type == "AVRO":
        import fastavro

        try:
            document = json.loads(text)
            parsed = fastavro.parse_schema(document, named_schemas=named if named is not None else {})
        except Exception as exc:  # fastavro raises many kinds; RecursionError for a deeply nested text
            raise ValueError(f"Invalid schema (Avro): {exc}") from exc
        duplicate = _avro_duplicate_field(document)
        if duplicate:
            raise ValueError(f"Invalid schema (Avro): {duplicate}")
        return parsed
    if schema_type == "JSON":
        import jsonschema

        try:
            document = json.loads(text)
            jsonschema.validators.validator_for(document).check_schema(document)
        except Exception as exc:
            raise ValueError(f"Invalid schema (JSON): {exc}") from exc
        return document
    if schema_type == "PROTOBUF":
        if not text.strip():
            raise ValueError("Invalid schema (Protobuf): empty text")
        problem = _protobuf_problem(text)
        if problem:
            raise ValueError(f"Invalid schema (Protobuf): {problem}")
        return text
    raise ValueError(f"Unknown schemaType '{schema_type}'; one of {', '.join(SCHEMA_TYPES)}")


def _avro_duplicate_field(document: Any) -> str | None:
    """'record T has field a twice' for the first record repeating a field name (walked without recursion)."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            fields = node.get("fields")
            if node.get("type") in ("record", "error") and isinstance(fields, list):
                seen: set[str] = set()
                for field in fields:
                    name = field.get("name") if isinstance(field, dict) else None
                    if isinstance(name, str):
                        if name in seen:
                            return f"record {node.get('name')!r} has field {name!r} twice"
                        seen.add(name)
            stack.extend(value for value in node.values() if isinstance(value, dict | list))
    return None


def _protobuf_problem(text: str) -> str | None:
    """None when protoc compiles the text, else protoc's first diagnostics (line:column: message)."""
    try:
        from tscontract.evolution.proto_compat import compile_problem
    except ImportError:
        return "cannot compile Protobuf without grpcio-tools and protobuf installed; refusing what cannot be checked"
    return compile_problem(text)


def parse_problem(schema_type: str, text: str) -> str | None:
    """Why the text does not parse (the registry's 42201 message), or None."""
    try:
        parse_schema(schema_type, text)
    except ValueError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=4096)
def _parse_problem(schema_type: str, text: str) -> str | None:
    """``parse_problem`` memoised: the older versions are the same at every check."""
    return parse_problem(schema_type, text)


_CHECKER_FORMATS = {"AVRO": "avro", "PROTOBUF": "protobuf", "JSON": "jsonschema"}


def default_compat(mode: str, schema_type: str, new_text: str, olds_newest_first: list[str]) -> tuple[bool, list[str]]:
    """The registry's default compatibility decision.

    Every schema must parse; NONE or no older version is compatible; otherwise the decision is
    ``tscontract.evolution.check(mode, new, olds, fmt)`` when that exists. Without it the answer is
    *not compatible* (fail closed): a registry that said yes would let any change through.
    """
    for text in (new_text, *olds_newest_first):
        problem = _parse_problem(schema_type, text)
        if problem:
            return False, [problem]
    if mode == "NONE" or not olds_newest_first:
        return True, []
    try:
        from tscontract.evolution import check
        from tscontract.evolution.issues import CheckBudgetExceeded
    except ImportError:
        return False, [
            f"no compatibility checker available for {schema_type} (tscontract.evolution.check is not installed); "
            f"cannot prove {mode} compatibility"
        ]
    try:
        result = check(mode, new_text, olds_newest_first, _CHECKER_FORMATS[schema_type])
    except CheckBudgetExceeded:
        raise  # undecided, not incompatible: the REST layer answers 422 with the budget's message
    except Exception as exc:  # a checker that cannot decide must not let the change through
        return False, [f"compatibility checker failed: {type(exc).__name__}: {exc}"]
    if isinstance(result, tuple):
        ok, messages = result
        return bool(ok), [str(m) for m in messages]
    # tscontract.evolution.CompatResult: compatible, reasons (break it), warnings (do not)
    messages = [str(m) for m in getattr(result, "reasons", [])]
    messages += [f"warning: {m}" for m in getattr(result, "warnings", [])]
    return bool(result.compatible), messages
