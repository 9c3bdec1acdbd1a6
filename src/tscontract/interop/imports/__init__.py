"""``tscontract import FORMAT FILE``: which module reads which format."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from tscontract.errors import InputError
from tscontract.interop.odcs.read import Imported

# format -> (module, function); every function takes (text, origin, object_name, key, time_column)
FORMATS: dict[str, tuple[str, str]] = {
    "avro": ("tscontract.interop.imports.avro", "import_avro"),
    "protobuf": ("tscontract.interop.imports.proto", "import_proto"),
    "jsonschema": ("tscontract.interop.imports.jsonschema", "import_jsonschema"),
    "dbt": ("tscontract.interop.imports.dbt", "import_dbt"),
    "ddl": ("tscontract.interop.imports.ddl", "import_ddl"),
}


def import_file(
    fmt: str, text: str, origin: str, object_name: str | None, key: list[str] | None, time_column: str | None
) -> list[Imported]:
    """One draft contract per record/message/model/table of the document (or the one named)."""
    module, function = FORMATS[fmt]
    importer: Any = getattr(import_module(module), function)
    try:
        return list(importer(text, origin, object_name, key, time_column))
    except RecursionError:  # a parser that recurses per level (sqlglot for DDL): nested thousands deep
        raise InputError(f"{origin}: the {fmt} document nests too deeply to import") from None
