"""YAML as tscontract writes it for ODCS documents and for contracts drafted by an import.

Shared by the ODCS export and every importer (``interop/odcs/export.py`` and ``interop/odcs/read.py``
imported each other for it).
"""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver

# YAML 1.1 readers (PyYAML, so datacontract-cli) read `on`, `no`, `y`, `1:20` and `010` as booleans and
# numbers; ruamel writes YAML 1.2 and leaves them bare. A string either version would read as another
# type is quoted, so a property called `on` stays a string for every reader.
_YAML11 = VersionedResolver(version=(1, 1))
_STR = "tag:yaml.org,2002:str"

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
    "odcs",
)


def dump(document: dict[str, Any]) -> str:
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(
        Decimal, lambda r, d: r.represent_scalar("tag:yaml.org,2002:" + number_tag(d), format(d, "f"))
    )
    yaml.representer.add_representer(str, _represent_str)
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue()


def number_tag(value: Decimal) -> str:
    return "int" if value == value.to_integral_value() and "." not in format(value, "f") else "float"


def _represent_str(representer: RoundTripRepresenter, value: str) -> ScalarNode:
    if _YAML11.resolve(ScalarNode, value, (True, False)) != _STR:
        return representer.represent_scalar(_STR, value, style="'")
    return representer.represent_str(value)
