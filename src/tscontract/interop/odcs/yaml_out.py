"""YAML as tscontract writes it for ODCS documents and for contracts drafted by an import.

Shared by the ODCS export and every importer (``interop/odcs/export.py`` and ``interop/odcs/read.py``
imported each other for it).
"""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

from ruamel.yaml import YAML

# the order of a contract's sections in a drafted contract
CONTRACT_ORDER = (
    "contract",
    "version",
    "owner",
    "source",
    "description",
    "note",
    "series",
    "key",
    "time",
    "fields",
    "units",
    "invariants",
    "revision_policy",
    "completeness",
    "freshness",
    "evolution",
    "provenance_required",
    "calendars",
)


def dump(document: dict[str, Any]) -> str:
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(
        Decimal, lambda r, d: r.represent_scalar("tag:yaml.org,2002:" + number_tag(d), format(d, "f"))
    )
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue()


def number_tag(value: Decimal) -> str:
    return "int" if value == value.to_integral_value() and "." not in format(value, "f") else "float"
