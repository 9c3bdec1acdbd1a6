"""A Protobuf schema (``.proto``, proto2/proto3) as draft contracts: one per message.

A small reader of the ``.proto`` text (no compiler needed): messages (nested ones too), enums, oneofs,
maps, field options, services and file options; ``//`` and ``/* */`` comments just above an element
are its description.

- the message: ``--object NAME`` (any message, nested ones too), else the only top-level one.
- types: ``double``/``float`` → ``float64``/``float32``; ``int32``/``sint32``/``sfixed32`` → ``int32``;
  ``int64``/``sint64``/``sfixed64`` → ``int64``; ``uint32``/``fixed32`` → ``int64`` with ``>= 0``;
  ``uint64``/``fixed64`` → ``decimal(20,0)`` with ``>= 0``; ``bool``, ``string``, ``bytes``;
  ``google.protobuf.Timestamp`` → ``timestamp_ns_utc`` (it carries nanoseconds); ``google.type.Date``
  → ``date``; the wrappers (``google.protobuf.DoubleValue``...) → their scalar, nullable; enums →
  ``enum[...]`` with every member as written.
- nullability: a proto3 scalar without ``optional`` reads as its zero value when absent: not
  nullable; ``optional`` (and proto2 ``optional``), wrappers and oneof members: nullable; proto2
  ``required``: not nullable. A ``Timestamp`` does not say (the time column is never null).
- ``repeated``, ``map<>``, other message types: listed, and the mapping drops the column; oneof
  exclusivity, field options, reserved numbers, services and file options: listed.
- a ``.proto`` this package exported gives back the contract's types (decimals travel as strings),
  nullability, key, time rules and invariants from its comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tscontract.errors import InputError
from tscontract.interop.imports.base import (
    SchemaDraft,
    contract_name,
    finish,
    is_own,
    restore_field_doc,
    restore_record_lines,
)
from tscontract.interop.imports.result import Imported
from tscontract.typemap.protobuf import SCALAR_READS

_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<line>//[^\n]*)|(?P<block>/\*.*?\*/)|(?P<string>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<word>[A-Za-z_.][A-Za-z0-9_.]*)|(?P<number>[-+]?[0-9][0-9A-Za-z_.+-]*)|(?P<symbol>[{}\[\]()<>;=,:])",
    re.S,
)
_SCALAR = SCALAR_READS
_UNSIGNED = ("uint32", "fixed32", "uint64", "fixed64")
_WRAPPERS = {
    "DoubleValue": "double",
    "FloatValue": "float",
    "Int64Value": "int64",
    "UInt64Value": "uint64",
    "Int32Value": "int32",
    "UInt32Value": "uint32",
    "BoolValue": "bool",
    "StringValue": "string",
    "BytesValue": "bytes",
}


@dataclass
class Token:
    kind: str
    text: str
    line: int
    comment: list[str]


@dataclass
class Field:
    name: str
    type: str
    number: str
    label: str | None
    comment: list[str]
    options: str | None = None
    oneof: str | None = None
    key_type: str | None = None  # map<K, V>


@dataclass
class Message:
    name: str
    full: str
    comment: list[str]
    fields: list[Field] = field(default_factory=list)
    enums: dict[str, list[str]] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    other: list[tuple[str, str]] = field(default_factory=list)  # (what, text) with no place


@dataclass
class ProtoFile:
    syntax: str = "proto2"
    package: str = ""
    messages: list[Message] = field(default_factory=list)
    enums: dict[str, list[str]] = field(default_factory=dict)
    other: list[tuple[str, str]] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    enum_other: list[tuple[str, str]] = field(default_factory=list)  # (enum, option or reserved statement)


def tokens(text: str) -> list[Token]:
    out: list[Token] = []
    pending: list[str] = []
    position, line = 0, 1
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None:
            raise InputError(f"not a .proto file: unexpected {text[position]!r} at line {line}")
        kind = found.lastgroup or ""
        value = found.group()
        if kind == "line":
            pending.append(value[2:].strip())
        elif kind == "block":
            pending += [re.sub(r"^\s*\*\s?", "", x).strip() for x in value[2:-2].strip().splitlines()]
        elif kind == "ws":
            if value.count("\n") > 1:
                pending = [*pending, ""] if pending else []  # a blank line ends a comment block's claim
        else:
            comment = pending
            while comment and comment[-1] == "":
                comment = []  # a comment separated by a blank line belongs to nothing below it
            out.append(Token(kind, value, line, comment))
            pending = []
        line += value.count("\n")
        position = found.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = tokens(text)
        self.i = 0
        self.file = ProtoFile()

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise InputError("not a .proto file: it ends inside a definition")
        self.i += 1
        return token

    def expect(self, text: str) -> None:
        token = self.next()
        if token.text != text:
            raise InputError(f"not a .proto file: expected {text!r} at line {token.line}, found {token.text!r}")

    def statement(self) -> str:
        """The rest of a statement up to ``;`` (or a braced block), as text."""
        words: list[str] = []
        depth = 0
        while True:
            token = self.next()
            if token.text == "{":
                depth += 1
            elif token.text == "}":
                depth -= 1
                if depth == 0:
                    return " ".join([*words, "{...}"])
            elif token.text == ";" and depth == 0:
                return " ".join(words)
            if depth == 0:
                words.append(token.text)

    def parse(self) -> ProtoFile:
        if self.tokens:
            self.file.header = self.tokens[0].comment
        while (token := self.peek()) is not None:
            if token.text in ("syntax", "edition"):
                self.next()
                self.expect("=")
                self.file.syntax = self.next().text.strip("\"'")
                self.expect(";")
            elif token.text == "package":
                self.next()
                self.file.package = self.next().text
                self.expect(";")
            elif token.text == "import":
                self.statement()
            elif token.text == "message":
                self.file.messages.append(self.message(self.file.package))
            elif token.text == "enum":
                name, members = self.enum()
                self.file.enums[name] = members
            elif token.text == ";":
                self.next()
            else:
                first = token.text
                self.file.other.append((first, self.statement()))
        return self.file

    def message(self, scope: str) -> Message:
        comment = self.next().comment
        name = self.next().text
        full = f"{scope}.{name}" if scope else name
        message = Message(name, full, comment)
        self.expect("{")
        self.body(message, None)
        return message

    def body(self, message: Message, oneof: str | None) -> None:
        while True:
            token = self.peek()
            if token is None:
                raise InputError(f"not a .proto file: message {message.name} is not closed")
            if token.text == "}":
                self.next()
                return
            if token.text == ";":
                self.next()
            elif token.text == "message" and oneof is None:
                message.messages.append(self.message(message.full))
            elif token.text == "enum" and oneof is None:
                name, members = self.enum()
                message.enums[name] = members
            elif token.text == "oneof" and oneof is None:
                self.next()
                name = self.next().text
                self.expect("{")
                self.body(message, name)
            elif token.text in ("option", "reserved", "extensions", "extend", "group"):
                message.other.append((token.text, self.statement()))
            else:
                message.fields.append(self.field(oneof))

    def field(self, oneof: str | None) -> Field:
        first = self.next()
        label = first.text if first.text in ("optional", "required", "repeated") else None
        type_token = self.next() if label else first
        key_type = None
        type_text = type_token.text
        if type_text == "map":
            self.expect("<")
            key_type = self.next().text
            self.expect(",")
            type_text = self.next().text
            self.expect(">")
        name = self.next().text
        self.expect("=")
        number = self.next().text
        options = None
        if self.peek() is not None and self.peek().text == "[":  # type: ignore[union-attr]
            options = self.statement()
        else:
            self.expect(";")
        return Field(name, type_text, number, label, first.comment, options, oneof, key_type)

    def enum(self) -> tuple[str, list[str]]:
        self.next()
        name = self.next().text
        self.expect("{")
        members: list[str] = []
        while (token := self.next()).text != "}":
            if token.text in ("option", "reserved"):
                self.file.enum_other.append((name, f"{token.text} {self.statement()}"))
            elif token.text != ";":
                members.append(token.text)
                rest = self.statement()
                if "[" in rest:  # value options ([deprecated = true])
                    self.file.enum_other.append((name, f"{token.text} {rest}"))
        return name, members


def parse_proto(text: str) -> ProtoFile:
    return _Parser(text).parse()


def import_proto(
    text: str,
    origin: str,
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
) -> list[Imported]:
    proto = parse_proto(text)
    every = _all_messages(proto.messages)
    if not every:
        raise InputError("the .proto file defines no message to import")
    if object_name is not None:
        chosen = [m for m in every if object_name in (m.name, m.full)]
        if not chosen:
            raise InputError(f"no message {object_name!r} in the file; it has: {', '.join(m.name for m in every)}")
    elif len(proto.messages) > 1:
        names = ", ".join(m.name for m in proto.messages)
        raise InputError(f"the file has {len(proto.messages)} messages ({names}): give --object NAME")
    else:
        chosen = proto.messages
    own = is_own("\n".join(proto.header))
    results = []
    for message in chosen:
        try:
            results.append(_message(proto, message, origin, own, every, key, time_column))
        except InputError as exc:
            if len(chosen) > 1:
                raise InputError(f"message {message.name!r}: {exc}") from None
            raise
    return results


def _all_messages(messages: list[Message]) -> list[Message]:
    return [x for m in messages for x in (m, *_all_messages(m.messages))]


def _short(type_name: str) -> str:
    return type_name.rsplit(".", 1)[-1]


def _message(
    proto: ProtoFile,
    message: Message,
    origin: str,
    own: bool,
    every: list[Message],
    key: list[str] | None,
    time_column: str | None,
) -> Imported:
    where = f"{origin} message {message.full}"
    draft = SchemaDraft("Protobuf message", where, contract_name(message.name), message.name)
    if own:
        restore_record_lines(draft, proto.header, "file")
        restore_record_lines(draft, message.comment, message.name)
        draft.name = contract_name(draft.name)
    elif message.comment:
        draft.top["description"] = "\n".join(message.comment).strip()
    for what, statement in proto.other:
        reason = "a code-generation option" if what == "option" else f"a {what}"
        draft.lose(f"file.{what}", statement, f"{reason}: no place in a tscontract contract")
    for what, statement in message.other:
        draft.lose(f"{message.name}.{what}", statement, "no place in a tscontract contract")
    enums = {**proto.enums, **{n: v for m in every for n, v in m.enums.items()}}
    nested = {m.name for m in every}
    oneofs: dict[str, list[str]] = {}
    for f in message.fields:
        path = f"{message.name}.{f.name}"
        if f.oneof:
            oneofs.setdefault(f.oneof, []).append(f.name)
        entry, reason = _field_type(proto, f, enums, nested)
        if entry is None:
            written = f"map<{f.key_type}, {f.type}>" if f.key_type else f"{f.label or ''} {f.type}".strip()
            draft.lose(path, f"{written} {f.name} = {f.number}", f"{reason}; the mapping drops it")
            draft.drop.append(f.name)
            continue
        if own and f.comment:
            entry = {**entry, **restore_field_doc("; ".join(f.comment))}
            if "nullable" not in " ".join(f.comment):
                entry.pop("nullable", None)
        elif f.comment:
            entry["description"] = "\n".join(f.comment).strip()
        if f.options:
            draft.lose(f"{path}.options", f.options, "field options: no place in a tscontract contract")
        name = draft.add_field(f.name, entry)
        for enum_name, statement in proto.enum_other if entry["type"].startswith("enum[") else []:
            if enum_name == _short(f.type):
                draft.lose(f"{path}.enum {enum_name}", statement, "an enum option or reservation: no place")
        if f.type in _UNSIGNED:
            draft.clause(path, f"{f.type} {f.name}", f"{name} >= 0", column=name)
    for oneof, members in oneofs.items():
        draft.lose(
            f"{message.name}.oneof {oneof}",
            ", ".join(members),
            "at most one of these is set: no clause written (each member is nullable)",
        )
    return finish(draft, key, time_column)


def _field_type(
    proto: ProtoFile, f: Field, enums: dict[str, list[str]], nested: set[str]
) -> tuple[dict[str, Any] | None, str]:
    if f.key_type is not None:
        return None, "a map: tscontract fields are scalar"
    if f.label == "repeated":
        return None, "a repeated field: tscontract fields are scalar"
    presence = f.label == "optional" or f.oneof is not None or (proto.syntax == "proto2" and f.label != "required")
    name = f.type.lstrip(".")
    if name in _SCALAR:
        return {"type": _SCALAR[name], "nullable": presence}, ""
    if name == "google.protobuf.Timestamp":
        return ({"type": "timestamp_ns_utc", "nullable": True} if f.oneof else {"type": "timestamp_ns_utc"}), ""
    if name == "google.type.Date":
        return {"type": "date", "nullable": True}, ""
    if name.startswith("google.protobuf.") and _short(name) in _WRAPPERS:
        return {"type": _SCALAR[_WRAPPERS[_short(name)]], "nullable": True}, ""
    if _short(name) in enums and _short(name) not in nested:
        members = enums[_short(name)]
        return {"type": f"enum[{', '.join(members)}]", "nullable": presence}, ""
    return None, f"a message of type {f.type}: tscontract fields are scalar"
