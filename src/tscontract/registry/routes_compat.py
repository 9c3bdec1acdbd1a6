"""``POST /compatibility/subjects/{s}/versions[/{v}]``: the compatibility test, as Confluent answers it.

* With a version (a number, ``latest`` or -1) the schema is checked against *that version only*,
  whatever the subject's mode (a transitive mode does not widen it). ``latest`` of a subject
  with no live version is compatible; a numbered version that is not live is 40402.
* Without a version the schema is checked against the versions the mode names (the latest, or
  every live version under a ``_TRANSITIVE`` mode), as a registration would be. A subject with
  no live version is compatible.
* The answer is ``{"is_compatible": bool}``; with ``?verbose=true`` also ``messages``: the
  reasons when incompatible (empty when compatible), ending with Confluent's
  ``{validateFields: 'false', compatibility: 'MODE'}`` line. An invalid schema is 422/42201, or
  with ``verbose`` a 200 that is not compatible and gives the reason.
* The subject's compatibility group (``compatibilityGroup``) keeps only the versions with the
  same value of that metadata property, as at registration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tscontract.registry.contract_fields import property_value
from tscontract.registry.errors import RegistryError, version_not_found
from tscontract.registry.store import CompatFn, RegisteredVersion, olds_for_mode

DIFFERENT_TYPE = "Incompatible because of different schema type"


class _Submitted(Protocol):
    @property
    def schema_type(self) -> str: ...

    @property
    def metadata(self) -> str: ...

    @property
    def check_text(self) -> str: ...


class _Store(Protocol):
    def compatibility(self, subject: str | None = None, default_to_global: bool = True) -> str | None: ...

    def compatibility_group(self, subject: str | None = None) -> str | None: ...

    def get_version(self, subject: str, version: int | str, include_deleted: bool = False) -> RegisteredVersion: ...

    def live_versions(self, subject: str) -> list[RegisteredVersion]: ...

    def check_text(self, schema_type: str, text: str, references: list[dict]) -> str: ...


def compatibility_answer(
    store: _Store,
    compat: CompatFn,
    submit: Callable[[], _Submitted],
    subject: str,
    version: int | str | None,
    verbose: bool,
) -> dict[str, Any]:
    """The endpoint's answer; ``version`` is None for ``/versions`` (the mode decides), else parsed."""
    olds = _olds(store, subject, version)
    try:
        submitted = submit()
    except RegistryError as exc:
        if verbose and exc.error_code == 42201:
            return {"is_compatible": False, "messages": [exc.message]}
        raise
    mode = store.compatibility(subject) or "FULL_TRANSITIVE"
    group = store.compatibility_group(subject)
    if group:
        wanted = property_value(submitted.metadata, group)
        olds = [old for old in olds if property_value(old.metadata, group) == wanted]
    if version is None:
        olds = olds_for_mode(mode, olds)
    elif mode == "NONE":
        olds = []
    if any(old.schema_type != submitted.schema_type for old in olds):
        ok, messages = False, [DIFFERENT_TYPE]
    else:
        texts = [store.check_text(old.schema_type, old.schema_text, old.references) for old in olds]
        ok, messages = compat(mode, submitted.schema_type, submitted.check_text, texts)
    answer: dict[str, Any] = {"is_compatible": bool(ok)}
    if verbose:
        reasons = [] if ok else [str(m) for m in messages] or ["incompatible"]
        if reasons:
            reasons.append(f"{{validateFields: 'false', compatibility: '{mode}'}}")
        answer["messages"] = reasons
    return answer


def _olds(store: _Store, subject: str, version: int | str | None) -> list[RegisteredVersion]:
    """The versions a check may read, newest first (before the mode and the group narrow them)."""
    if version is None:
        return store.live_versions(subject)
    try:
        return [store.get_version(subject, version)]
    except RegistryError as exc:
        if exc.error_code not in (40401, 40402):
            raise
        if version == "latest":
            return []  # no live version: nothing to be incompatible with
        raise version_not_found(subject, version) from None
