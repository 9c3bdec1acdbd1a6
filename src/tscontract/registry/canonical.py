"""The text a registry stores for a schema, so the same schema gets the same id however it is written.

Like Confluent's registry, every registration and lookup uses a canonical string, not the bytes
sent: Avro is written as Java Avro's ``Schema.toString()`` writes it (``registry.avro_canonical``:
attribute order, names relative to their namespace, ``{"type": "int"}`` as ``"int"``), JSON Schema
re-serialised compactly, and Protobuf re-printed from its tokens (whitespace and comments never
matter). With ``normalize=true`` (query parameter) the registry also removes differences that do
not change the meaning:

* Avro: custom properties sorted, objects inside defaults and custom properties sorted, aliases
  sorted, every name and type reference resolved (then written as Avro writes them);
* JSON Schema: members of every object sorted, at every depth (nested ``properties`` too);
* Protobuf: ``import`` statements and file ``option`` statements sorted.

Record field order, union branch order and enum symbol order are never changed: they are part of
the binary encoding (Avro) or of the meaning (JSON arrays).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tscontract.registry.avro_canonical import avro_canonical

# Avro's attributes in Parsing Canonical Form order, then the ones PCF drops but a schema keeps
_AVRO_ORDER = ["type", "name", "fields", "symbols", "items", "values", "size"]
_AVRO_KEEP = ["logicalType", "precision", "scale", "default", "order", "aliases", "doc"]
AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
AVRO_NAMED = {"record", "error", "enum", "fixed"}


def canonical_text(
    schema_type: str, text: str, normalize: bool = False, collapse: bool = True, avro_order: bool = True
) -> str:
    """The registry's stored form of ``text`` (already known to parse as ``schema_type``).

    Avro: as Java Avro's ``Schema.toString()`` writes it (``registry.avro_canonical``), as Confluent's
    registry stores it: a primitive written as an object with nothing else (``{"type": "int"}``) is
    the primitive's name (``"int"``), attributes in Avro's order, names relative to the enclosing
    namespace. ``avro_order=False`` and ``collapse=False`` give the forms stores written before hold.
    """
    if schema_type == "PROTOBUF":
        return _proto_text(text, normalize)
    document = json.loads(text)
    if normalize:
        document = _avro_normal(document, "") if schema_type == "AVRO" else _sorted(document)
    if schema_type == "AVRO" and collapse:
        # normalized or not, written as Avro writes it (Confluent: normalize(), then canonicalString())
        document = avro_canonical(document) if avro_order else _avro_collapsed(document)
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def legacy_texts(schema_type: str, text: str, normalize: bool, canonical: str) -> tuple[str, ...]:
    """The other forms of an Avro ``text`` that stores written by earlier versions hold, so lookups
    and re-registrations still find them: as written (compact) before Avro's attribute order, and
    before ``{"type": "int"}`` became ``"int"``."""
    if schema_type != "AVRO":
        return ()
    forms = [canonical_text(schema_type, text, normalize, collapse, avro_order=False) for collapse in (True, False)]
    return tuple(form for form in dict.fromkeys(forms) if form != canonical)


def _avro_collapsed(node: Any) -> Any:
    """``node`` with every ``{"type": "<primitive>"}`` (no other member) at a schema position as the name."""
    if isinstance(node, list):
        return [_avro_collapsed(branch) for branch in node]
    if not isinstance(node, dict):
        return node
    out = dict(node)
    if isinstance(out.get("type"), dict | list):
        out["type"] = _avro_collapsed(out["type"])
    for key in ("items", "values"):
        if key in out:
            out[key] = _avro_collapsed(out[key])
    if isinstance(out.get("fields"), list):
        out["fields"] = [
            dict(field, type=_avro_collapsed(field["type"])) if isinstance(field, dict) and "type" in field else field
            for field in out["fields"]
        ]
    if list(out) == ["type"] and out["type"] in AVRO_PRIMITIVES:
        return out["type"]
    return out


def _sorted(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _sorted(node[key]) for key in sorted(node)}
    if isinstance(node, list):
        return [_sorted(item) for item in node]
    return node


def qualify(name: str, namespace: str) -> str:
    """An Avro name's full name in the enclosing namespace."""
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _avro_normal(node: Any, namespace: str) -> Any:
    """``node`` with names qualified and object members in canonical order (values of ``default`` untouched)."""
    if isinstance(node, list):
        return [_avro_normal(branch, namespace) for branch in node]
    if isinstance(node, str):
        return node if node in AVRO_PRIMITIVES else qualify(node, namespace)
    if not isinstance(node, dict):
        return node
    out = dict(node)
    kind = out.get("type")
    if kind in AVRO_NAMED and isinstance(out.get("name"), str):
        fullname = qualify(out["name"], out.get("namespace") or namespace)
        out.pop("namespace", None)
        out["name"] = fullname
        namespace = fullname.rpartition(".")[0]
        if isinstance(out.get("aliases"), list):
            out["aliases"] = [qualify(a, namespace) if isinstance(a, str) else a for a in out["aliases"]]
    if isinstance(kind, list | dict) or (
        isinstance(kind, str) and kind not in AVRO_PRIMITIVES | AVRO_NAMED | {"array", "map"}
    ):
        out["type"] = _avro_normal(kind, namespace)
    for key in ("items", "values"):
        if key in out:
            out[key] = _avro_normal(out[key], namespace)
    if isinstance(out.get("fields"), list):
        out["fields"] = [_avro_field(field, namespace) for field in out["fields"]]
    return _avro_ordered(out)


def _avro_field(field: Any, namespace: str) -> Any:
    if not isinstance(field, dict):
        return field
    out = dict(field)
    if "type" in out:
        out["type"] = _avro_normal(out["type"], namespace)
    return _avro_ordered(out)


def _avro_ordered(node: dict[str, Any]) -> dict[str, Any]:
    """Members in canonical order; as Confluent's normalisation, objects inside a default or a custom
    property sorted by key, and aliases sorted (a set of names)."""
    known = [key for key in _AVRO_ORDER + _AVRO_KEEP if key in node]
    rest = sorted(key for key in node if key not in known)
    out = {key: node[key] for key in known + rest}
    for key in ["default", *rest]:
        if key in out:
            out[key] = _sorted(out[key])
    aliases = out.get("aliases")
    if isinstance(aliases, list) and all(isinstance(a, str) for a in aliases):
        out["aliases"] = sorted(aliases)
    return out


# .proto tokens: comments (dropped), string literals (kept verbatim), words and numbers, punctuation
_PROTO_TOKEN = re.compile(
    r"""(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<word>[A-Za-z0-9_.+-]+)|(?P<space>\s+)|(?P<punct>.)""",
    re.DOTALL,
)
_NO_SPACE_BEFORE = {";", ",", ")", "]", ">"}
_NO_SPACE_AFTER = {"(", "[", "<"}


def _proto_tokens(text: str) -> list[str]:
    return [m.group() for m in _PROTO_TOKEN.finditer(text) if m.lastgroup not in ("comment", "space")]


def _proto_statements(tokens: list[str]) -> list[list[str]]:
    """Top-level statements: up to a ``;`` at depth 0, or a ``{...}`` block and what closes it."""
    statements: list[list[str]] = []
    current: list[str] = []
    depth = 0
    for token in tokens:
        current.append(token)
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                statements.append(current)
                current = []
        elif token == ";" and depth == 0:
            statements.append(current)
            current = []
    if current:
        statements.append(current)
    return statements


def _proto_text(text: str, normalize: bool) -> str:
    statements = _proto_statements(_proto_tokens(text))
    if normalize:
        head = [s for s in statements if s[0] in ("syntax", "edition", "package")]
        imports = sorted((s for s in statements if s[0] == "import"), key=" ".join)
        options = sorted((s for s in statements if s[0] == "option"), key=" ".join)
        rest = [s for s in statements if s[0] not in ("syntax", "edition", "package", "import", "option")]
        statements = head + imports + options + rest
    return "".join(_proto_render(statement) for statement in statements)


def _proto_render(tokens: list[str]) -> str:
    """One statement, one line per ``;``/``{``/``}``, two spaces per nesting level."""
    lines: list[str] = []
    line: list[str] = []
    depth = 0

    def flush() -> None:
        if line:
            lines.append("  " * depth + _proto_join(line))
            line.clear()

    for token in tokens:
        if token == "}":
            flush()
            depth -= 1
            lines.append("  " * depth + "}")
            continue
        line.append(token)
        if token == "{":
            flush()
            depth += 1
        elif token == ";":
            flush()
    flush()
    return "\n".join(lines) + "\n"


def _proto_join(tokens: list[str]) -> str:
    out = ""
    for index, token in enumerate(tokens):
        if index and token not in _NO_SPACE_BEFORE and tokens[index - 1] not in _NO_SPACE_AFTER:
            out += " "
        out += token
    return out
