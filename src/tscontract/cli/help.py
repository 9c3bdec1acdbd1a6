"""What ``--help`` and a bad option value show: placeholders a person reads, never Python types.

Typer labels parameters with their annotations (``<list[str]>``, ``<bool>``, ``{contract}``).
:func:`tidy` gives every parameter a plain placeholder instead: an argument its upper-case name
(``CONTRACT``, ``DATA...``), an option its explicit ``metavar`` (``SECONDS``, ``STORE``), one named
for its shape (``ZONE``, ``P,S``, ``builtin|dbt_utils``) or one from its type (``FILE``, ``TEXT``,
``INTEGER``, ``FLOAT``, ``duckdb|postgres|chdb|spark``); flags none.
:func:`parameter_message` turns a refused value into one clean line.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

HELP_NAMES = ["-h", "--help"]
_BY_TYPE: dict[Any, str] = {Path: "FILE", str: "TEXT", int: "INTEGER", float: "FLOAT"}
# options whose values have a shape better named than their type
_BY_NAME = {
    "now": "INSTANT",
    "coverage_from": "INSTANT",
    "coverage_to": "INSTANT",
    "today": "YYYY-MM-DD",
    "spark_conf": "KEY=VALUE",
    "spark_master": "URL",
    "registry": "URL",
    "margin": "FLOAT",  # read as an exact decimal
    "scale_factor": "FLOAT",
    "timezone": "ZONE",
    "decimal": "P,S",
    "types": "PHYSICAL=TYPE",
    "key": "COLUMNS",
    "drop": "COLUMNS",
    "fields": "FIELDS",
    "time_column": "COLUMN",
    "series_column": "COLUMN",
    "object_name": "NAME",
    "name": "NAME",
    "mode": "MODE",
    "dbt_tests": "builtin|dbt_utils",
    "rule_mode": "WRITE|WRITEREAD",
}


def tidy(command: Any) -> None:
    """Set plain placeholders on ``command``, its help option and every subcommand (idempotent)."""
    for param in getattr(command, "params", []):
        _tidy_param(param)
    _tidy_help_option(command)
    for sub in getattr(command, "commands", {}).values():
        tidy(sub)


def _tidy_help_option(command: Any) -> None:
    context_class = getattr(command, "context_class", None)
    if context_class is None or not hasattr(command, "get_help_option"):
        return
    option = command.get_help_option(context_class(command, help_option_names=HELP_NAMES))
    if option is not None:
        option.metavar = ""


def _element(annotation: Any) -> Any:
    """``list[X]``, ``X | None`` -> ``X``."""
    while True:
        origin = get_origin(annotation)
        args = [a for a in get_args(annotation) if a is not type(None)]
        if origin in (list, tuple, Union, UnionType) and len(args) == 1:
            annotation = args[0]
        else:
            return annotation


def _placeholder(param: Any) -> str | None:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:
        return None
    choices = descriptor.choices
    if choices:
        return "|".join(str(c.value if isinstance(c, Enum) else c) for c in choices)
    return _BY_TYPE.get(_element(descriptor.annotation))


def _tidy_param(param: Any) -> None:
    if getattr(param, "param_type_name", "") == "argument":
        if param.metavar is None and param.name:
            param.metavar = param.name.upper() + ("..." if param.nargs != 1 else "")
        if param.__class__.__name__ == "TyperArgument":
            param.__class__ = _plain_argument_class(param.__class__)
        return
    if getattr(param, "is_flag", False):
        param.metavar = ""
    elif param.metavar is None:
        param.metavar = _BY_NAME.get(param.name) or _placeholder(param)


_PLAIN: dict[type, type] = {}


def _plain_argument_class(base: type) -> type:
    """The argument class with its name as the whole label: no ``<type>`` column, no ``{braces}``."""
    if base not in _PLAIN:

        def display_type_rich(self: Any, ctx: Any) -> None:
            return None

        def usage_display_name(self: Any) -> str:
            return str(self.metavar) if self.required else f"[{self.metavar}]"

        _PLAIN[base] = type(
            "PlainArgument",
            (base,),
            {"display_type_rich": display_type_rich, "_usage_display_name": usage_display_name},
        )
    return _PLAIN[base]


def parameter_message(exc: Any) -> str:
    """A refused option value as one line: the option, the value's problem, the valid values when few."""
    message = exc.format_message()
    message = re.sub(r"(: )Value error, ", r"\1", message)  # pydantic's prefix
    param = getattr(exc, "param", None)
    descriptor = getattr(param, "type_descriptor", None)
    choices = descriptor.choices if descriptor is not None else None
    if choices:
        valid = ", ".join(str(c.value if isinstance(c, Enum) else c) for c in choices)
        message = re.sub(r" is not one of .*$", f" is not one of: {valid}", message)
    elif param is not None and param.metavar and "Input should be" in message:
        message = message.replace("Input should be", f"{param.metavar} should be", 1)
    return message.rstrip(".")
