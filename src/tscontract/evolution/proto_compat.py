"""Protobuf wire compatibility of two ``.proto`` texts, compared as compiled descriptors.

Both texts are compiled with grpcio-tools' protoc to a ``FileDescriptorSet``;
messages are paired by full name (or, when each file has exactly one top-level
message in the same package, with each other: a rename is wire-compatible and
reported as a warning) and their fields by number. The rules follow the language
guide's "Updating A Message Type" and Confluent Schema Registry's Protobuf checker.

Errors: a changed ``package``; a number kept with a wire-incompatible type or a
different message/enum type; repeated <-> singular for numbers and enums
(packed encoding); a proto2 ``required`` field added or removed, or its label
changed; a number or name that collides with the other side's ``reserved``;
fields moved into a oneof that already had members, several fields moved into
one new oneof, oneofs merged, a oneof member deleted. Warnings: a field removed
without reserving its number (a later version may reuse it), a field moved to
another number, renames (message, enum, field), presence changes, varint/fixed
changes within one wire type (sign and width caveats), string <-> bytes,
singular <-> repeated for string, bytes and messages, a removed name not reserved.
"""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
import threading
from pathlib import Path

from google.protobuf import descriptor_pb2

from tscontract.evolution.issues import Issue

_F = descriptor_pb2.FieldDescriptorProto
_TYPE_NAMES = {v: k[len("TYPE_") :].lower() for k, v in _F.Type.items()}
_WIRE = {
    "int32": "varint",
    "int64": "varint",
    "uint32": "varint",
    "uint64": "varint",
    "bool": "varint",
    "enum": "varint",
    "sint32": "zigzag",
    "sint64": "zigzag",
    "fixed32": "fixed32",
    "sfixed32": "fixed32",
    "float": "fixed32",
    "fixed64": "fixed64",
    "sfixed64": "fixed64",
    "double": "fixed64",
    "string": "len",
    "bytes": "len",
    "message": "len",
    "group": "group",
}


_BUNDLE = "tscontract.proto_bundle"


def bundle(main: str, imports: dict[str, str]) -> str:
    """One text holding a ``.proto`` file and the files it imports (by import path): what a schema
    with references is checked as. A ``.proto`` file never starts with ``{``, so the two never mix."""
    return json.dumps({_BUNDLE: {"main": main, "imports": imports}}, sort_keys=True)


def import_files(directories: list[Path]) -> dict[str, str]:
    """Every ``.proto`` file under the directories, by its import path (the first directory wins)."""
    from tscontract.errors import InputError

    found: dict[str, str] = {}
    for directory in directories:
        if not directory.is_dir():
            raise InputError(f"--proto-path {directory}: not a directory")
        for path in sorted(directory.rglob("*.proto")):
            name = path.relative_to(directory).as_posix()
            if name != "schema.proto":
                found.setdefault(name, path.read_text(encoding="utf-8"))
    return found


def _unbundle(text: str) -> tuple[str, dict[str, str]]:
    if text.lstrip().startswith("{"):
        content = json.loads(text)[_BUNDLE]
        return content["main"], dict(content["imports"])
    return text, {}


def compile_proto(text: str) -> descriptor_pb2.FileDescriptorSet:
    """Compile ``.proto`` text (or a ``bundle`` with its imports) with protoc, well-known types
    included, to a FileDescriptorSet."""
    from importlib.resources import files

    from grpc_tools import protoc

    main, imports = _unbundle(text)
    include = str(files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory() as tmp:
        for name, imported in imports.items():
            path = Path(tmp) / name
            if name == "schema.proto" or Path(tmp).resolve() not in path.resolve().parents:
                raise ValueError(f"import path {name!r} leaves the import directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(imported, encoding="utf-8")
        source = Path(tmp) / "schema.proto"
        source.write_text(main, encoding="utf-8")
        out = Path(tmp) / "schema.pb"
        code = protoc.main(
            ["protoc", f"-I{tmp}", f"-I{include}", "--include_imports", f"--descriptor_set_out={out}", str(source)]
        )
        if code != 0:
            raise ValueError("protoc could not compile the .proto text (see its message on stderr)")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


_PROTOC_LOCK = threading.Lock()  # protoc writes its diagnostics to file descriptor 2: one compile at a time
_PROTOC_LINE = re.compile(r"[^\s:]*\.proto:\d+:\d+: .*")
_TEMP_DIR = re.compile(r"^.*[/\\]tmp\w{6,}[/\\]")  # the compile's temporary directory, not the user's


@functools.lru_cache(maxsize=512)
def compile_problem(text: str) -> str | None:
    """None when protoc compiles the text (or bundle), else protoc's first diagnostics
    (``schema.proto:line:column: message``), read from its standard error."""
    with _PROTOC_LOCK, tempfile.TemporaryFile(mode="w+b") as captured:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            compile_proto(text)
            failed = None
        except ValueError as exc:
            failed = str(exc)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        diagnostics = captured.read().decode("utf-8", "replace")
    if failed is None:
        return None
    lines = [_TEMP_DIR.sub("", match.group(0)) for match in _PROTOC_LINE.finditer(diagnostics)]
    return "; ".join(lines[:5]) or failed


class _Index:
    def __init__(self, fds: descriptor_pb2.FileDescriptorSet) -> None:
        self.messages: dict[str, descriptor_pb2.DescriptorProto] = {}
        self.enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}
        self.top: list[str] = []
        self.package = ""
        for file in fds.file:
            prefix = f".{file.package}" if file.package else ""
            if file.name == "schema.proto":
                self.package = file.package
            for message in file.message_type:
                if file.name == "schema.proto":  # imports (well-known types) are indexed, not compared
                    self.top.append(f"{prefix}.{message.name}")
                self._add(message, prefix)
            for enum in file.enum_type:
                self.enums[f"{prefix}.{enum.name}"] = enum

    def _add(self, message: descriptor_pb2.DescriptorProto, prefix: str) -> None:
        name = f"{prefix}.{message.name}"
        self.messages[name] = message
        for nested in message.nested_type:
            self._add(nested, name)
        for enum in message.enum_type:
            self.enums[f"{name}.{enum.name}"] = enum


def _reserved(message: descriptor_pb2.DescriptorProto, number: int) -> bool:
    return any(r.start <= number < r.end for r in message.reserved_range)  # end is exclusive in descriptors


def _oneof(field: descriptor_pb2.FieldDescriptorProto, message: descriptor_pb2.DescriptorProto) -> str | None:
    """The name of the real (not proto3-``optional`` synthetic) oneof holding ``field``, or None."""
    if field.HasField("oneof_index") and not field.proto3_optional:
        return message.oneof_decl[field.oneof_index].name
    return None


def _oneof_moves(new: descriptor_pb2.DescriptorProto, old: descriptor_pb2.DescriptorProto, path: str) -> list[Issue]:
    """Oneof membership changes that make old data read differently (a set member clears the others)."""
    issues = []
    old_fields = {f.number: f for f in old.field}
    new_fields = {f.number: f for f in new.field}
    groups: dict[str, list[int]] = {}
    for number, field in new_fields.items():
        name = _oneof(field, new)
        if name is not None and number in old_fields:
            groups.setdefault(name, []).append(number)
    for name, numbers in groups.items():
        sources = {_oneof(old_fields[n], old) for n in numbers}
        top = [n for n in numbers if _oneof(old_fields[n], old) is None]
        if len(sources - {None}) > 1 or (top and sources - {None}):
            issues.append(Issue(f"{path}/oneofs/{name}", f"fields {sorted(numbers)} moved into existing oneof {name}"))
        elif len(top) > 1:
            issues.append(Issue(f"{path}/oneofs/{name}", f"several fields {sorted(top)} moved into new oneof {name}"))
    for number, field in old_fields.items():
        name = _oneof(field, old)
        if name is not None and number not in new_fields and field.name not in {f.name for f in new.field}:
            issues.append(Issue(f"{path}/fields/{number}", f"field {field.name} = {number} removed from oneof {name}"))
    return issues


def _presence(field: descriptor_pb2.FieldDescriptorProto, message: descriptor_pb2.DescriptorProto) -> str:
    if field.label == _F.LABEL_REPEATED:
        return "repeated"
    if field.proto3_optional or field.type == _F.TYPE_MESSAGE:
        return "explicit presence"
    if field.HasField("oneof_index"):
        return f"oneof {message.oneof_decl[field.oneof_index].name}"
    return "implicit presence"


class _Comparer:
    def __init__(self, new: _Index, old: _Index) -> None:
        self.new, self.old = new, old
        self.seen: set[tuple[str, str]] = set()

    def message(self, new_name: str, old_name: str, path: str) -> list[Issue]:
        if (new_name, old_name) in self.seen:
            return []
        self.seen.add((new_name, old_name))
        issues = []
        if new_name.rpartition(".")[2] != old_name.rpartition(".")[2]:
            issues.append(Issue(path, f"message renamed {old_name[1:]} -> {new_name[1:]} (wire-compatible)", True))
        new, old = self.new.messages[new_name], self.old.messages[old_name]
        new_fields = {f.number: f for f in new.field}
        old_fields = {f.number: f for f in old.field}
        for number, old_field in old_fields.items():
            field_path = f"{path}/fields/{number}"
            new_field = new_fields.get(number)
            if new_field is None:
                if old_field.label == _F.LABEL_REQUIRED:
                    issues.append(Issue(field_path, f"required field {old_field.name} = {number} removed"))
                if old_field.name in {f.name for f in new.field}:
                    continue  # reported below as a number change of that name
                if not _reserved(new, number):
                    issues.append(
                        Issue(field_path, f"field {old_field.name} = {number} removed but number not reserved", True)
                    )
                if old_field.name not in new.reserved_name:
                    issues.append(Issue(field_path, f"field {old_field.name} removed but name not reserved", True))
                continue
            issues += self.field(new_field, old_field, new, old, field_path)
        for reserved in old.reserved_range:
            dropped = [
                n for n in range(reserved.start, min(reserved.end, reserved.start + 1000)) if not _reserved(new, n)
            ]
            if dropped:
                issues.append(Issue(f"{path}/reserved", f"reserved number(s) {dropped[:5]} no longer reserved", True))
        dropped_names = sorted(set(old.reserved_name) - set(new.reserved_name))
        if dropped_names:
            issues.append(Issue(f"{path}/reserved", f"reserved name(s) {dropped_names} no longer reserved", True))
        for number, new_field in new_fields.items():
            field_path = f"{path}/fields/{number}"
            if number not in old_fields and new_field.label == _F.LABEL_REQUIRED:
                issues.append(Issue(field_path, f"required field {new_field.name} = {number} added"))
            if number not in old_fields and _reserved(old, number):
                issues.append(Issue(field_path, f"field {new_field.name} reuses number {number} reserved in old"))
            if new_field.name in old.reserved_name:
                issues.append(Issue(field_path, f"field {new_field.name} reuses name reserved in old"))
            old_same_name = next((f for f in old.field if f.name == new_field.name and f.number != number), None)
            if old_same_name is not None:
                issues.append(
                    Issue(field_path, f"field {new_field.name} number {old_same_name.number} -> {number}", True)
                )
        return issues + _oneof_moves(new, old, path)

    def field(self, new_field, old_field, new_msg, old_msg, path: str) -> list[Issue]:
        issues = []
        new_type, old_type = _TYPE_NAMES[new_field.type], _TYPE_NAMES[old_field.type]
        if _WIRE[new_type] != _WIRE[old_type] or ({new_type, old_type} & {"float", "double"} and new_type != old_type):
            return [
                Issue(
                    f"{path}/type",
                    f"number {old_field.number} reused: {old_type} {old_field.name} -> "
                    f"{new_type} {new_field.name} (wire-incompatible)",
                )
            ]
        if (new_type == "message") != (old_type == "message"):
            return [Issue(f"{path}/type", f"{old_type} -> {new_type}: a message's bytes are not text")]
        if new_field.name != old_field.name:
            issues.append(
                Issue(
                    f"{path}/name",
                    f"field renamed {old_field.name} -> {new_field.name} "
                    "(wire-compatible; ProtoJSON and field masks break)",
                    True,
                )
            )
        if new_type == old_type and new_type in ("message", "enum"):
            if new_field.type_name.rpartition(".")[2] != old_field.type_name.rpartition(".")[2]:
                issues.append(
                    Issue(f"{path}/type", f"{new_type} type {old_field.type_name[1:]} -> {new_field.type_name[1:]}")
                )
            elif new_type == "message":
                issues += self.message(new_field.type_name, old_field.type_name, f"{path}/type")
            else:
                issues += self.enum(new_field.type_name, old_field.type_name, f"{path}/type")
        elif new_type != old_type:
            issues.append(
                Issue(
                    f"{path}/type",
                    f"{old_type} -> {new_type}: same wire type, but values may be truncated or change sign"
                    if new_type not in ("string", "bytes")
                    else f"{old_type} -> {new_type}: same wire type; bytes must be valid UTF-8",
                    True,
                )
            )
        old_presence, new_presence = _presence(old_field, old_msg), _presence(new_field, new_msg)
        if (old_field.label == _F.LABEL_REQUIRED) != (new_field.label == _F.LABEL_REQUIRED):
            issues.append(Issue(f"{path}/label", f"{old_presence} -> {new_presence} (required changed)"))
        elif (old_presence == "repeated") != (new_presence == "repeated"):
            # length-delimited values read the same as one element or the last of several; numbers are packed
            lenient = new_type in ("string", "bytes", "message")
            issues.append(Issue(f"{path}/label", f"{old_presence} -> {new_presence}", lenient))
        elif old_presence != new_presence:
            issues.append(Issue(f"{path}/label", f"presence {old_presence} -> {new_presence}", True))
        return issues

    def enum(self, new_name: str, old_name: str, path: str) -> list[Issue]:
        issues = []
        if new_name.rpartition(".")[2] != old_name.rpartition(".")[2]:
            issues.append(Issue(path, f"enum renamed {old_name[1:]} -> {new_name[1:]} (wire-compatible)", True))
        new, old = self.new.enums[new_name], self.old.enums[old_name]
        new_values = {v.number: v.name for v in new.value}
        for value in old.value:
            if value.number not in new_values:
                issues.append(
                    Issue(
                        f"{path}/values/{value.number}",
                        f"enum value {value.name} removed (proto3 readers keep it as an unknown number)",
                        True,
                    )
                )
        return issues


def check_read(reader: str, writer: str, reader_is_new: bool = True) -> list[Issue]:
    """Wire-compatibility findings between two ``.proto`` texts.

    Protobuf wire rules are symmetric, so the direction only decides which side
    is new (whose removals must be reserved).
    """
    new_text, old_text = (reader, writer) if reader_is_new else (writer, reader)
    return compare(new_text, old_text)


@functools.lru_cache(maxsize=256)
def _index(text: str) -> _Index:
    """A ``.proto`` text compiled and indexed once (protoc, files in a temporary directory); read-only after."""
    return _Index(compile_proto(text))


def compare(new: str, old: str) -> list[Issue]:
    """Findings for ``.proto`` text ``new`` replacing ``old``: messages by full name, fields by number."""
    new_index, old_index = _index(new), _index(old)
    comparer = _Comparer(new_index, old_index)
    issues: list[Issue] = []
    if new_index.package != old_index.package:
        issues.append(Issue("/", f"package {old_index.package or '(none)'} -> {new_index.package or '(none)'}"))
    pairs = [(name, name) for name in old_index.top if name in new_index.messages]
    if not pairs and len(new_index.top) == len(old_index.top) == 1 and not issues:
        pairs = [(new_index.top[0], old_index.top[0])]
    for new_name, old_name in pairs:
        issues += comparer.message(new_name, old_name, f"/{old_name.rpartition('.')[2]}")
    for name in old_index.top:
        if not any(old_name == name for _, old_name in pairs):
            issues.append(Issue(f"/{name.rpartition('.')[2]}", f"message {name[1:]} removed", True))
    return issues
