"""ODCS v3 documents behind the importer registry; the reader itself is ``interop/odcs/read.py``."""

from __future__ import annotations

from typing import Any

from tscontract.interop.imports.result import Imported
from tscontract.interop.odcs.read import import_document
from tscontract.interop.odcs.types import Choices, make_choices


def odcs_options(
    timezone: str | None = None,
    decimal: str | None = None,
    drop: list[str] | None = None,
    types: list[str] | None = None,
    allow_loss: bool = False,
) -> dict[str, Any]:
    """The command line's ODCS options as :func:`import_odcs`'s ``choices``, or a one-line InputError."""
    return {"choices": make_choices(timezone, decimal, drop, types, allow_loss)}


def import_odcs(
    text: str,
    origin: str,
    object_name: str | None,
    key: list[str] | None,
    time_column: str | None,
    *,
    choices: Choices | None = None,
    refused: list[tuple[str, str]] | None = None,
) -> list[Imported]:
    """One draft contract per schema object (see :func:`~tscontract.interop.odcs.read.import_document`)."""
    return import_document(text, object_name, key, time_column, refused, choices)
