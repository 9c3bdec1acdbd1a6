"""Schema parsing and compatibility checks with protoc kept out of the server's process.

Protobuf texts are compiled by protoc (C++) in the ``Sandbox``'s capped children: the registration's
parse and the whole default compatibility check of a Protobuf subject. Avro and JSON Schema stay in
process: after ``limits`` (size and nesting) their pure-Python parsers cost memory in proportion to
a text of at most 1 MiB, and a round trip to a child would cost more than the parse.
"""

from __future__ import annotations

from tscontract.registry.sandbox import Sandbox, SandboxLimit
from tscontract.registry.schemas import default_compat, parse_problem
from tscontract.registry.store import CompatFn


class ContainedSchemas:
    """``parse_problem`` and a compatibility callable for the server; ``inner`` checks Avro and JSON Schema."""

    def __init__(self, sandbox: Sandbox, inner: CompatFn = default_compat) -> None:
        self.sandbox = sandbox
        self.inner = inner

    def parse_problem(self, schema_type: str, text: str) -> str | None:
        if schema_type != "PROTOBUF":
            return parse_problem(schema_type, text)
        try:
            return self.sandbox.run(parse_problem, schema_type, text)
        except SandboxLimit as exc:
            return f"Invalid schema (Protobuf): compiling it {exc}"
        except RuntimeError as exc:
            return f"Invalid schema (Protobuf): {exc}"

    def compat(self, mode: str, schema_type: str, new_text: str, olds: list[str]) -> tuple[bool, list[str]]:
        if schema_type != "PROTOBUF":
            return self.inner(mode, schema_type, new_text, olds)
        try:
            return self.sandbox.run(default_compat, mode, schema_type, new_text, olds)
        except SandboxLimit as exc:  # fail closed: what cannot be checked is not compatible
            return False, [f"the Protobuf compatibility check {exc}"]
        except RuntimeError as exc:
            return False, [f"the Protobuf compatibility check failed: {exc}"]
