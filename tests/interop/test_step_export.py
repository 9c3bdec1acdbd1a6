"""The step clause (issue 25 item 3) in every export: each one that cannot state it lists it, by check id
and with its reason, among the clauses it does not export -- never dropped without a word."""

from __future__ import annotations

import pytest

from tests.engines.test_step import CONTRACT
from tscontract.contract.loader import parse_contract
from tscontract.interop.exports import FORMATS, export

CARRIED = {"dbt", "soda", "pandera"}  # each run in its tool: tests/interop/test_step_{dbt,soda,pandera}.py


@pytest.mark.parametrize("fmt", sorted(set(FORMATS) - CARRIED))
def test_every_export_names_the_step_clause_it_does_not_carry(fmt):
    contract = parse_contract(CONTRACT.replace("STEP", "{max_mad: 6, window: 5, max_gap: 2h}"))
    result = export(fmt, contract)
    assert "field.temp_f.step" not in result.exported
    (refused,) = [n for n in result.not_exported if n.check_id == "field.temp_f.step"]
    assert refused.clause == "step: {max_mad: 6, window: 5, max_gap: 2h}"
    assert refused.reason


def test_dbt_carries_it_unless_dbt_utils_is_asked_for():
    contract = parse_contract(CONTRACT.replace("STEP", "{max_abs: 10}"))
    assert "field.temp_f.step" in export("dbt", contract).exported
    utils = export("dbt", contract, dbt_tests="dbt_utils")
    (refused,) = [n for n in utils.not_exported if n.check_id == "field.temp_f.step"]
    assert "dbt_tests='builtin'" in refused.reason
