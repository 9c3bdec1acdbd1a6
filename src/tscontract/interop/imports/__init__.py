"""``tscontract import FORMAT FILE``: which module reads which format."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from tscontract.errors import InputError
from tscontract.interop.imports.result import Imported

# format -> (module, function); every function takes (text, origin, object_name, key, time_column)
# and the keyword options import_options builds for it
FORMATS: dict[str, tuple[str, str]] = {
    "odcs": ("tscontract.interop.imports.odcs", "import_odcs"),
    "avro": ("tscontract.interop.imports.avro", "import_avro"),
    "protobuf": ("tscontract.interop.imports.proto", "import_proto"),
    "jsonschema": ("tscontract.interop.imports.jsonschema", "import_jsonschema"),
    "dbt": ("tscontract.interop.imports.dbt", "import_dbt"),
    "ddl": ("tscontract.interop.imports.ddl", "import_ddl"),
}
# format -> (module, function) turning the command line's format options into the importer's keywords
OPTIONS: dict[str, tuple[str, str]] = {"odcs": ("tscontract.interop.imports.odcs", "odcs_options")}
# formats whose importer, given ``refused``, imports the objects it can and lists the others there
PARTIAL = frozenset({"odcs"})
LABELS = {"odcs": "ODCS"}


def document_label(fmt: str) -> str:
    """How an error names the document: ``ODCS document``, ``avro document``."""
    return f"{LABELS.get(fmt, fmt)} document"


def import_options(fmt: str, *, allow_loss: bool = False, **given: Any) -> dict[str, Any]:
    """The keyword options of FORMAT's importer from the command line's format options (``given``: None or
    empty when not used), checked before any document is read; a format without options refuses them."""
    if fmt in OPTIONS:
        module, function = OPTIONS[fmt]
        built: dict[str, Any] = getattr(import_module(module), function)(allow_loss=allow_loss, **given)
        return built
    if any(given.values()):
        raise InputError("--timezone, --decimal, --drop and --type apply to import odcs")
    return {}


def import_file(
    fmt: str,
    text: str,
    origin: str,
    object_name: str | None,
    key: list[str] | None,
    time_column: str | None,
    *,
    refused: list[tuple[str, str]] | None = None,
    **options: Any,
) -> list[Imported]:
    """One draft contract per record/message/model/table/schema object of the document (or the one named).

    With ``refused`` (a list), a format that can (``PARTIAL``) adds there, as (name, reason), each object
    of a several-object document it cannot import and imports the others; ``options`` come from
    :func:`import_options`.
    """
    module, function = FORMATS[fmt]
    importer: Any = getattr(import_module(module), function)
    if refused is not None and fmt in PARTIAL:
        options["refused"] = refused
    try:
        return list(importer(text, origin, object_name, key, time_column, **options))
    except RecursionError:  # a parser that recurses per level (sqlglot for DDL): nested thousands deep
        raise InputError(f"{origin}: the {fmt} document nests too deeply to import") from None
