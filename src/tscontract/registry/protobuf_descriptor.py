"""Protobuf schemas sent as a base64 ``FileDescriptorProto`` (what confluent-kafka's ``ProtobufSerializer``
registers), and the ``?format=serialized`` answer (what ``ProtobufDeserializer`` reads back).

As Confluent's ``ProtobufSchema`` does, a text that is a base64 ``FileDescriptorProto`` is turned into the
``.proto`` text it describes, and that text is what the registry stores, compares and answers; the
serialized form is the ``.proto`` text compiled again (its references as imports) and base64-encoded.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from typing import Any

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_TYPES = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
    9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64", 17: "sint32", 18: "sint64",
}  # fmt: skip
_LABELS = {1: "optional", 2: "required", 3: "repeated"}
_MAX_FIELD = 536870911


def descriptor_text(text: str) -> str:
    """The ``.proto`` text a base64 ``FileDescriptorProto`` describes; any other text unchanged.

    Raises ValueError when the text is base64 of a descriptor the registry cannot write out (editions)."""
    stripped = text.strip()
    if not _BASE64.fullmatch(stripped):
        return text
    from google.protobuf import descriptor_pb2, message

    try:
        raw = base64.b64decode(stripped, validate=True)
        file = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (binascii.Error, ValueError, message.DecodeError):
        return text
    if not (file.name or file.message_type or file.enum_type or file.syntax or file.package):
        return text
    return _file(file)


@functools.lru_cache(maxsize=1024)
def serialized(check_text: str) -> str:
    """The base64 ``FileDescriptorProto`` of a ``.proto`` text (or a bundle with its imports)."""
    from tscontract.evolution.proto_compat import compile_proto

    for file in compile_proto(check_text).file:
        if file.name == "schema.proto":
            return base64.standard_b64encode(file.SerializeToString()).decode("ascii")
    raise ValueError("the compiled schema holds no main file")


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _option_value(value: Any, field: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value)
    if field.enum_type is not None:
        return str(field.enum_type.values_by_number[value].name)
    return str(value)


def _options(options: Any, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(name, value) of the set scalar options (extensions and message-valued ones are left out)."""
    out = []
    for field, value in options.ListFields():
        if field.is_extension or field.name in skip or field.message_type is not None or isinstance(value, list):
            continue
        out.append((field.name, _option_value(value, field)))
    return out


def _file(file: Any) -> str:
    if file.syntax not in ("", "proto2", "proto3"):
        raise ValueError(f"Protobuf descriptor with syntax {file.syntax!r} is not supported")
    lines = [f'syntax = "{file.syntax or "proto2"}";']
    if file.package:
        lines.append(f"package {file.package};")
    public = set(file.public_dependency)
    weak = set(file.weak_dependency)
    for index, name in enumerate(file.dependency):
        kind = "public " if index in public else "weak " if index in weak else ""
        lines.append(f"import {kind}{_quote(name)};")
    lines += [f"option {name} = {value};" for name, value in _options(file.options)]
    proto3 = file.syntax == "proto3"
    scope = f".{file.package}" if file.package else ""
    for message_type in file.message_type:
        lines += _message(message_type, proto3, scope)
    for enum in file.enum_type:
        lines += _enum(enum)
    lines += _extensions(file.extension, proto3)
    for service in file.service:
        lines += _service(service)
    return "\n".join(lines) + "\n"


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]


def _type(field: Any) -> str:
    return field.type_name if field.type in (10, 11, 14) else _TYPES[field.type]


def _field(field: Any, proto3: bool, maps: dict[str, Any], in_oneof: bool = False) -> str:
    options = [(n, v) for n, v in _options(field.options) if n in ("packed", "deprecated", "lazy")]
    if field.HasField("default_value"):
        value = field.default_value  # bytes come C-escaped already
        value = _quote(value) if field.type == 9 else f'"{value}"' if field.type == 12 else value
        options.insert(0, ("default", value))
    if field.json_name and field.json_name != _json_name(field.name):
        options.append(("json_name", _quote(field.json_name)))
    suffix = " [" + ", ".join(f"{n} = {v}" for n, v in options) + "]" if options else ""
    entry = maps.get(field.type_name) if field.label == 3 and field.type == 11 else None
    if entry is not None:
        key, value = entry.field[0], entry.field[1]
        return f"map<{_type(key)}, {_type(value)}> {field.name} = {field.number}{suffix};"
    label = "" if in_oneof else _LABELS[field.label] + " "
    if proto3 and field.label == 1 and not field.proto3_optional:
        label = ""
    return f"{label}{_type(field)} {field.name} = {field.number}{suffix};"


def _json_name(name: str) -> str:
    parts = name.split("_")
    return parts[0] + "".join(part[:1].upper() + part[1:] for part in parts[1:])


def _message(message: Any, proto3: bool, scope: str = "") -> list[str]:
    full = f"{scope}.{message.name}"
    maps = {f"{full}.{n.name}": n for n in message.nested_type if n.options.map_entry}
    body = [f"option {name} = {value};" for name, value in _options(message.options, ("map_entry",))]
    real_oneofs: dict[int, list[Any]] = {}
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            real_oneofs.setdefault(field.oneof_index, []).append(field)
    emitted: set[int] = set()
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            index = field.oneof_index
            if index not in emitted:
                emitted.add(index)
                inner = [_field(f, proto3, maps, in_oneof=True) for f in real_oneofs[index]]
                body += [f"oneof {message.oneof_decl[index].name} {{", *_indent(inner), "}"]
            continue
        body.append(_field(field, proto3, maps))
    for nested in message.nested_type:
        if not nested.options.map_entry:
            body += _message(nested, proto3, full)
    for enum in message.enum_type:
        body += _enum(enum)
    body += _ranges("extensions", [(r.start, r.end - 1) for r in message.extension_range])
    body += _ranges("reserved", [(r.start, r.end - 1) for r in message.reserved_range])
    if message.reserved_name:
        body.append("reserved " + ", ".join(_quote(name) for name in message.reserved_name) + ";")
    body += _extensions(message.extension, proto3)
    return [f"message {message.name} {{", *_indent(body), "}"]


def _ranges(keyword: str, ranges: list[tuple[int, int]]) -> list[str]:
    if not ranges:
        return []
    parts = [
        str(a) if a == b else f"{a} to {'max' if b >= _MAX_FIELD and keyword == 'extensions' else b}" for a, b in ranges
    ]
    return [f"{keyword} {', '.join(parts)};"]


def _enum(enum: Any) -> list[str]:
    body = [f"option {name} = {value};" for name, value in _options(enum.options)]
    body += [f"{value.name} = {value.number};" for value in enum.value]
    body += _ranges("reserved", [(r.start, r.end) for r in enum.reserved_range])
    if enum.reserved_name:
        body.append("reserved " + ", ".join(_quote(name) for name in enum.reserved_name) + ";")
    return [f"enum {enum.name} {{", *_indent(body), "}"]


def _extensions(fields: Any, proto3: bool) -> list[str]:
    by_extendee: dict[str, list[str]] = {}
    for field in fields:
        by_extendee.setdefault(field.extendee, []).append(_field(field, proto3, {}))
    return [line for extendee, body in by_extendee.items() for line in (f"extend {extendee} {{", *_indent(body), "}")]


def _service(service: Any) -> list[str]:
    body = []
    for method in service.method:
        request = ("stream " if method.client_streaming else "") + method.input_type
        response = ("stream " if method.server_streaming else "") + method.output_type
        body.append(f"rpc {method.name}({request}) returns ({response});")
    return [f"service {service.name} {{", *_indent(body), "}"]
