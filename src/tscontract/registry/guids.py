"""Schema guids as Confluent computes them: the MD5 of the schema text, its references, metadata and
rule set (``io.confluent...rest.entities.Schema.updateHash``), written as a UUID.

A guid names the content, not the id, so the same schema registered here and in Confluent's registry
(same canonical text) has the same guid. ``GuidIndex`` answers ``GET /schemas/guids/{guid}``: schemas
never change and ids are never reused, so it learns each id's guid once (an id permanently
deleted is forgotten, and the same schema registered again is learnt under its new id) and, on a guid it does not
know, reads only the ids it has not seen.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any


def _text(md: Any, value: Any) -> None:
    if value is not None:
        md.update(str(value).encode())


def _rule(md: Any, rule: dict[str, Any]) -> None:
    defaults = {"kind": "TRANSFORM", "mode": "WRITEREAD"}  # Rule's constructor fills these in
    for key in ("name", "doc", "kind", "mode", "type"):
        _text(md, rule.get(key) or defaults.get(key))
    for tag in sorted(rule.get("tags") or []):
        _text(md, tag)
    for key, value in sorted((rule.get("params") or {}).items()):
        _text(md, key)
        _text(md, value)
    for key in ("expr", "onSuccess", "onFailure"):
        _text(md, rule.get(key))
    if rule.get("disabled"):
        md.update(b"\x01")


def _metadata(md: Any, metadata: dict[str, Any]) -> None:
    for key, values in sorted((metadata.get("tags") or {}).items()):
        _text(md, key)
        for value in sorted(values):
            _text(md, value)
    for key, value in sorted((metadata.get("properties") or {}).items()):
        _text(md, key)
        _text(md, value)
    for value in sorted(metadata.get("sensitive") or []):
        _text(md, value)


def schema_guid(text: str, references: Iterable[dict[str, Any]], metadata: str = "", rule_set: str = "") -> str:
    """The guid of a stored schema (``metadata`` and ``rule_set`` as stored: compact JSON, '' when absent)."""
    md = hashlib.md5(usedforsecurity=False)
    md.update(text.encode())
    for reference in references:
        _text(md, reference.get("name"))
        _text(md, reference.get("subject"))
        md.update(int(reference.get("version", -1)).to_bytes(4, "big", signed=True))
    if metadata:
        md.update(b"\x01")
        _metadata(md, json.loads(metadata))
    if rule_set:
        md.update(b"\x01")
        rules = json.loads(rule_set)
        for kind in ("migrationRules", "domainRules", "encodingRules"):
            for rule in rules.get(kind) or []:
                _rule(md, rule)
        _text(md, rules.get("enableAt"))
    return str(uuid.UUID(bytes=md.digest()))


class GuidIndex:
    """guid -> schema id, learnt from the store as guids are asked for."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._seen: set[int] = set()
        self._lock = threading.Lock()

    def find(self, guid: str, schema_ids: Callable[[], list[int]], guid_of: Callable[[int], str]) -> int | None:
        """The id whose schema has this guid, else None; ``schema_ids`` lists every id, ``guid_of`` one's guid."""
        with self._lock:
            known = self._ids.get(guid)
            if known is not None:
                return known
            seen = set(self._seen)
        learnt = {schema_id: guid_of(schema_id) for schema_id in schema_ids() if schema_id not in seen}
        with self._lock:
            for schema_id, found in learnt.items():
                self._ids.setdefault(found, schema_id)
                self._seen.add(schema_id)
            return self._ids.get(guid)

    def forget(self, guid: str) -> None:
        """The id learnt for ``guid`` is gone (permanently deleted): the next ``find`` learns anew."""
        with self._lock:
            self._ids.pop(guid, None)
