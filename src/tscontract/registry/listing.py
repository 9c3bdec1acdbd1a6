"""List answers as Confluent's resources shape them: ``subjectPrefix``, ``deleted``/``deletedOnly``/
``deletedAsNegative`` filters, then ``offset`` and ``limit`` (a limit of 0 or below: no limit).

``GET /subjects`` lists a subject as deleted when every version it has is soft-deleted; ``deletedOnly``
wins over ``deleted``, as in Confluent. Pages are cut after filtering, in the listed order (subjects by
name, versions ascending).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from tscontract.registry.errors import RegistryError

T = TypeVar("T")
Query = dict[str, list[str]]


class _Lists(Protocol):
    def subjects(self, include_deleted: bool = False) -> list[str]: ...

    def versions(self, subject: str, include_deleted: bool = False) -> list[int]: ...


def flag(query: Query, name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() == "true"


def _number(query: Query, name: str, default: int) -> int:
    text = query.get(name, [str(default)])[-1]
    try:
        return int(text)
    except ValueError:
        # Jersey answers a query parameter it cannot convert to its int with 404
        raise RegistryError(
            404, 404, f"HTTP 404 Not Found: query parameter {name}={text!r} is not an integer"
        ) from None


def page(items: Sequence[T], query: Query) -> list[T]:
    """``offset`` and ``limit`` applied to ``items``."""
    offset, limit = max(_number(query, "offset", 0), 0), _number(query, "limit", -1)
    return list(items[offset : offset + limit] if limit > 0 else items[offset:])


def list_subjects(store: _Lists, query: Query) -> list[str]:
    live = store.subjects()
    if flag(query, "deletedOnly"):
        held = set(live)
        names = [subject for subject in store.subjects(include_deleted=True) if subject not in held]
    elif flag(query, "deleted"):
        names = store.subjects(include_deleted=True)
    else:
        names = live
    prefix = query.get("subjectPrefix", [""])[-1]
    if prefix and prefix != ":*:":  # Confluent's default prefix, every subject of every context
        names = [subject for subject in names if subject.startswith(prefix)]
    return page(names, query)


def list_versions(store: _Lists, subject: str, query: Query) -> list[int]:
    deleted_only, negative = flag(query, "deletedOnly"), flag(query, "deletedAsNegative")
    every = store.versions(subject, include_deleted=deleted_only or negative or flag(query, "deleted"))  # 40401
    if not (deleted_only or negative) and not flag(query, "deleted"):
        return page(every, query)
    try:
        live = set(store.versions(subject))
    except RegistryError:  # every version soft-deleted
        live = set()
    if negative:
        versions = [version if version in live else -version for version in every]
    elif deleted_only:
        versions = [version for version in every if version not in live]
    else:
        versions = every
    return page(versions, query)
