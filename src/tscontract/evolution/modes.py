"""Compatibility modes: how reader/writer checks compose over a schema history.

``olds`` is ordered newest first: ``olds[0]`` is the latest registered version.

* ``BACKWARD``: the new schema reads data written with the latest old one.
* ``FORWARD``: the latest old schema reads data written with the new one.
* ``FULL``: both.
* ``*_TRANSITIVE``: the same, against every old version, not only the latest.
* ``NONE``: always compatible.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from tscontract.contract.json_text import load_json
from tscontract.evolution.issues import Issue

FORMATS = ("avro", "protobuf", "jsonschema")


class Mode(enum.StrEnum):
    BACKWARD = "BACKWARD"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD = "FORWARD"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL = "FULL"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"
    NONE = "NONE"


@dataclass
class CompatResult:
    """``compatible`` is False when any reason is present; warnings never make it False."""

    compatible: bool
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# A pairwise check: (reader schema text, writer schema text, reader_is_new) -> findings.
ReadCheck = Callable[[str, str, bool], list[Issue]]


def _read_check(fmt: str) -> ReadCheck:
    if fmt == "avro":
        from tscontract.evolution.avro_compat import check_read

        return check_read
    if fmt == "jsonschema":
        from tscontract.evolution.json_compat import check_read

        return check_read
    if fmt == "protobuf":
        from tscontract.evolution.proto_compat import check_read

        return check_read
    raise ValueError(f"unknown schema format {fmt!r}; known: {', '.join(FORMATS)}")


def text_problem(fmt: str, text: str) -> str | None:
    """Why one schema text cannot be read as ``fmt`` (not JSON; protoc's diagnostics), or None."""
    _read_check(fmt)
    if fmt == "protobuf":
        from tscontract.evolution.proto_compat import compile_problem

        return compile_problem(text)
    try:
        load_json(text)
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc}"
    except ValueError as exc:  # nested past the bound the readers walk
        return str(exc)
    return None


@functools.lru_cache(maxsize=2048)
def _pair(fmt: str, reader: str, writer: str, reader_is_new: bool) -> tuple[Issue, ...]:
    """One pairwise verdict, memoised: a registry re-checks the same pairs (a lost race, a test
    request before the register, the same history under another subject). Issues are frozen."""
    return tuple(_read_check(fmt)(reader, writer, reader_is_new))


def check(mode: Mode | str, new: str, olds: list[str], fmt: str) -> CompatResult:
    """Is schema text ``new`` compatible with the history ``olds`` (newest first) under ``mode``?

    ``fmt`` is ``avro`` (``.avsc`` JSON), ``protobuf`` (``.proto`` text) or
    ``jsonschema``. Each reason reads ``olds[i] (<direction>): <path>: <what>``.
    """
    mode = Mode(str(mode.value if isinstance(mode, Mode) else mode).upper())
    _read_check(fmt)  # an unknown format is an error even with nothing to compare
    if mode is Mode.NONE or not olds:
        return CompatResult(True)
    targets = list(enumerate(olds)) if mode.value.endswith("_TRANSITIVE") else [(0, olds[0])]
    directions = []
    if mode.value.startswith(("BACKWARD", "FULL")):
        directions.append("new reads old")
    if mode.value.startswith(("FORWARD", "FULL")):
        directions.append("old reads new")
    result = CompatResult(True)
    for index, old in targets:
        for direction in directions:
            reader, writer = (new, old) if direction == "new reads old" else (old, new)
            for issue in _pair(fmt, reader, writer, direction == "new reads old"):
                text = f"olds[{index}] ({direction}): {issue}"
                (result.warnings if issue.warning else result.reasons).append(text)
    result.warnings = list(dict.fromkeys(result.warnings))
    result.reasons = list(dict.fromkeys(result.reasons))
    result.compatible = not result.reasons
    return result
