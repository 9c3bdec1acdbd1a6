"""Confluent's rules for a data contract's ``ruleSet`` (Schema Registry 7.4.1 on), in one place.

``tscontract registry serve`` refuses a ruleSet these rules refuse, with Confluent's message
(``registry.rulesets``), and ``export confluent`` names its rules with ``rule_names`` so that a
real registry accepts them. Both live above this layer and neither may import the other.

As ``RuleSet.validate()`` and ``Rule.validate()`` (client/.../rest/entities): rules are checked
list by list (migration, domain, encoding), each rule in order: a name already used in any list,
then the name (present, not empty, at most 256 UTF-16 units, a letter or ``_`` first, then
letters, digits, ``_`` or ``-``, as Java's ``Character.isLetter``/``isLetterOrDigit`` read them),
a ``type``, ``onSuccess``/``onFailure`` holding ``,`` only in WRITEREAD and UPDOWN, then the
mode the list takes. An absent ``kind`` is TRANSFORM and an absent ``mode`` WRITEREAD.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

NAME_MAX_LENGTH = 256  # Rule.NAME_MAX_LENGTH, in UTF-16 code units (Java's String.length())
RULE_KINDS = ("TRANSFORM", "CONDITION")  # RuleKind, in declaration order
RULE_MODES = ("UPGRADE", "DOWNGRADE", "UPDOWN", "WRITE", "READ", "WRITEREAD")  # RuleMode
DEFAULT_KIND, DEFAULT_MODE = "TRANSFORM", "WRITEREAD"
MIGRATION_MODES = frozenset({"UPGRADE", "DOWNGRADE", "UPDOWN"})
DOMAIN_MODES = frozenset({"WRITE", "READ", "WRITEREAD"})  # domain and encoding rules
# (list, the modes it takes, Confluent's message when a rule's mode is another)
RULE_LISTS: tuple[tuple[str, frozenset[str], str], ...] = (
    ("migrationRules", MIGRATION_MODES, "Migration rules can only be UPGRADE, DOWNGRADE, UPDOWN"),
    ("domainRules", DOMAIN_MODES, "Domain rules can only be WRITE, READ, WRITEREAD"),
    ("encodingRules", DOMAIN_MODES, "Encoding rules can only be WRITE, READ, WRITEREAD"),
)
EXPORT_NAME_LENGTH = 64  # the longest name ``rule_names`` gives: readable, far under Confluent's 256


def _java_letter(char: str) -> bool:
    """``Character.isLetter(char)``: a UTF-16 unit in a letter category (a surrogate half is none)."""
    return ord(char) <= 0xFFFF and unicodedata.category(char) in ("Lu", "Ll", "Lt", "Lm", "Lo")


def _java_letter_or_digit(char: str) -> bool:
    return _java_letter(char) or (ord(char) <= 0xFFFF and unicodedata.category(char) == "Nd")


def rule_name_problem(name: Any) -> str | None:
    """Confluent's message for a rule name it refuses (``Rule.validateName``), or None."""
    if name is None:
        return "Missing rule name"
    length = len(name.encode("utf-16-le")) // 2
    if length == 0:
        return "Empty rule name"
    if length > NAME_MAX_LENGTH:
        return "Rule name too long"
    if not (_java_letter(name[0]) or name[0] == "_"):
        return f"Illegal initial character in rule name: {name}"
    if not all(_java_letter_or_digit(c) or c in "_-" for c in name[1:]):
        return f"Illegal character in rule name: {name}"
    return None


def rule_problem(rule: dict[str, Any]) -> str | None:
    """Confluent's message for a rule ``Rule.validate()`` refuses, or None."""
    problem = rule_name_problem(rule.get("name"))
    if problem is not None:
        return problem
    if rule.get("type") is None:
        return "Missing rule type"
    mode = rule.get("mode") or DEFAULT_MODE
    for action in (rule.get("onSuccess"), rule.get("onFailure")):
        if mode not in ("WRITEREAD", "UPDOWN") and action is not None and "," in action:
            return "Multiple actions only valid with WRITEREAD and UPDOWN"
    return None


def rule_set_problem(rule_set: dict[str, Any]) -> str | None:
    """Confluent's message for a ruleSet ``RuleSet.validate()`` refuses, or None.

    ``rule_set`` has the shape a registration carries (lists of rule objects whose members are
    strings); the kinds and modes present are Confluent's (an unknown one fails earlier, as JSON
    that does not map onto Confluent's ``Rule``).
    """
    names: set[Any] = set()
    for key, modes, wrong_mode in RULE_LISTS:
        for rule in rule_set.get(key) or []:
            name = rule.get("name")
            if name in names:
                return f"Found rule with duplicate name '{name}'"
            names.add(name)
            problem = rule_problem(rule)
            if problem is not None:
                return problem
            if (rule.get("mode") or DEFAULT_MODE) not in modes:
                return wrong_mode
    return None


def _readable(text: str) -> str:
    """``invariants[0]`` -> ``invariants_0``, ``field.adjusted.value`` -> ``field_adjusted_value``."""
    name = re.sub(r"\[([0-9]+)\]", r"_\1", text)
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "rule"
    return name if name[0].isalpha() else "_" + name


def _with_digest(name: str, source: str, length: int) -> str:
    digest = hashlib.sha256(source.encode()).hexdigest()[:8]
    return f"{name[: length - len(digest) - 1]}_{digest}"


def rule_names(sources: Iterable[str], taken: Iterable[str] = (), length: int = EXPORT_NAME_LENGTH) -> list[str]:
    """A rule name per source text (a check id), each one Confluent accepts and none used twice.

    ASCII letters, digits, ``_`` and ``-`` only, a letter or ``_`` first, at most ``length``
    characters. A name cut to fit, or one already given (``taken`` included), ends in ``_`` and
    8 hex digits of its source's SHA-256: the same sources always get the same names.
    """
    used = set(taken)
    names = []
    for source in sources:
        name = _readable(source)
        if len(name) > length:
            name = _with_digest(name, source, length)
        salt = 0
        while name in used:
            salt += 1
            name = _with_digest(_readable(source), f"{source}#{salt}" if salt > 1 else source, length)
        used.add(name)
        names.append(name)
    return names
