"""Subject names: the one rule every route and store write applies."""

from __future__ import annotations

import unicodedata

from tscontract.registry.errors import RegistryError

MAX_SUBJECT_CHARS = 512
# Confluent's reserved names of the global and default contexts
_RESERVED_SUBJECTS = ("__GLOBAL", "__EMPTY")


def subject_problem(subject: str) -> str | None:
    """Why ``subject`` is not a valid subject name, or None: the one rule every route and store write applies.

    Confluent's practical rules (not empty, no control characters, not a reserved context name) plus
    what keeps a name from reading as a path anywhere it lands (files, URLs, logs): no backslash, at
    most ``MAX_SUBJECT_CHARS`` characters, and split on ``/`` no empty, ``.`` or ``..`` part (so
    ``/``, ``a//b`` and ``../x`` are refused, ``team/bars-value`` and ``a..b`` are not)."""
    if not subject:
        return "empty"
    if len(subject) > MAX_SUBJECT_CHARS:
        return f"longer than {MAX_SUBJECT_CHARS} characters"
    bad = next((c for c in subject if unicodedata.category(c) in ("Cc", "Cf", "Cs")), None)
    if bad is not None:
        return f"control character U+{ord(bad):04X}"
    if "\\" in subject:
        return "backslash"
    if subject in _RESERVED_SUBJECTS:
        return "reserved name"
    if any(part in ("", ".", "..") for part in subject.split("/")):
        return "empty, '.' or '..' path part"
    return None


def check_subject(subject: str) -> str:
    """The subject, or 42208 naming what ``subject_problem`` found."""
    problem = subject_problem(subject)
    if problem is not None:
        shown = subject if len(subject) <= 80 else subject[:80] + "..."
        raise RegistryError(422, 42208, f"The specified subject {shown!r} is not valid: {problem}")
    return subject
