"""What the store holds and answers: levels, modes, identities, a registered version, a stored schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple, TypeVar

from tscontract.contract.model import COMPATIBILITY_MODES

COMPATIBILITY_LEVELS = COMPATIBILITY_MODES  # the modes a contract's evolution section names
DEFAULT_COMPATIBILITY = "FULL_TRANSITIVE"
_GLOBAL = ""  # the config row of the global level
_T = TypeVar("_T")
MAX_ID = 2**31 - 1  # Confluent's ids and versions are 32-bit

# a schema's identity: (schema type, text, references, metadata, ruleSet); one id per identity
Identity = tuple[str, str, str, str, str]
# compat(mode, schema_type, new_schema_text, older_schema_texts_newest_first) -> (ok, messages)
CompatFn = Callable[[str, str, str, list[str]], tuple[bool, list[str]]]

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
DEFAULT_MODE = "READWRITE"


@dataclass(frozen=True)
class RegisteredVersion:
    subject: str
    version: int
    schema_id: int
    schema_type: str
    schema_text: str
    references: list[dict]
    metadata: str = ""  # compact JSON, '' when none
    rule_set: str = ""


class StoredSchema(NamedTuple):
    """A schema by its global id."""

    schema_type: str
    schema_text: str
    references: list[dict]
    metadata: str = ""
    rule_set: str = ""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _refs_key(references: list[dict] | None) -> str:
    return json.dumps(
        [{"name": r.get("name"), "subject": r.get("subject"), "version": r.get("version")} for r in references or []],
        sort_keys=True,
    )


def olds_for_mode(mode: str, olds_newest_first: list[_T]) -> list[_T]:
    """Confluent semantics: a transitive mode checks every live version, the others only the latest."""
    if mode == "NONE":
        return []
    return list(olds_newest_first) if mode.endswith("_TRANSITIVE") else olds_newest_first[:1]


_SELECT_VERSION = (
    "SELECT v.version, s.id, s.schema_type, s.schema_text, s.refs, s.metadata, s.rule_set FROM subject_versions v"
    " JOIN schemas s ON s.id = v.schema_id"
)
