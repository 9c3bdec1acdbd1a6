"""A registration's ``ruleSet`` as Confluent's registry validates it (7.4.1 on): 422, error code 42210.

``SubjectVersionsResource.register`` runs ``RuleSet.validate()`` before it reads the schema and
answers ``RestInvalidRuleSetException`` (422, ``INVALID_RULESET_ERROR_CODE`` 42210) with the
rule's message: a rule name used twice in the ruleSet (across its lists), a missing, empty,
too long or illegal name, a missing type, several actions outside WRITEREAD/UPDOWN, a mode the
list does not take. The rules are ``tscontract.contract.confluent_rules``: the ones
``export confluent`` names its rules by. A ruleSet not of the shape a registration carries fails
first, as ``contract_fields`` answers (42201; a kind or mode Confluent lacks, 400).
"""

from __future__ import annotations

from typing import Any

from tscontract.contract.confluent_rules import rule_set_problem
from tscontract.registry.contract_fields import check_rule_set
from tscontract.registry.errors import RegistryError

INVALID_RULESET = 42210  # Errors.INVALID_RULESET_ERROR_CODE


def invalid_rule_set(message: str) -> RegistryError:
    return RegistryError(422, INVALID_RULESET, message)


def validate_rule_set(rule_set: Any) -> None:
    """Raise Confluent's answer for a ruleSet it refuses; None (absent) passes."""
    if rule_set is None:
        return
    problem = rule_set_problem(check_rule_set(rule_set))
    if problem is not None:
        raise invalid_rule_set(problem)


# Confluent's config members this registry does not apply: refused, not ignored (taken silently, defaults and
# overrides would register schemas without the rules they name, ``normalize`` would give other ids...)
_DEFAULTS_AND_OVERRIDES = {
    "defaultRuleSet": INVALID_RULESET,
    "overrideRuleSet": INVALID_RULESET,
    "defaultMetadata": 422,
    "overrideMetadata": 422,
    "normalize": 422,
    "validateFields": 422,
    "validateRules": 422,
    "validateNewSchemas": 422,
    "compatibilityPolicy": 422,
    "alias": 422,
    "aliasForDeks": 422,
}


def refuse_defaults_and_overrides(body: dict[str, Any]) -> None:
    """422 for a ``PUT /config`` that sets a member the registry does not apply (42210 for a rule set)."""
    for member, code in _DEFAULTS_AND_OVERRIDES.items():
        if body.get(member) is not None:
            raise RegistryError(
                422,
                code,
                f"'{member}' is not supported by this registry's config (only compatibility and compatibilityGroup)",
            )
