"""A sentinel's flag column (issue 32) in every export: described like any column (its enum members), and
its ``flag_of`` rule carried as a row clause or listed, by check id and with a reason, as not exported."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES
from tscontract.contract.loader import load_contract
from tscontract.interop.exports import FORMATS, export

CGM = EXAMPLES / "vendors" / "cgm_glucose" / "contract.yaml"
ROW_CLAUSES = {"dbt", "soda", "pandera", "jsonschema", "odcs", "confluent"}  # state flag_of as a row clause


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_export_describes_the_flag_and_states_or_names_its_rule(fmt):
    result = export(fmt, load_contract(CGM))
    text = "\n".join(a.content for a in result.artifacts)
    assert "glucose_flag" in text
    assert all(member in text for member in ("below_range", "above_range", "no_reading", "warming_up"))
    check = "field.glucose_flag.flag_of"
    if fmt in ROW_CLAUSES:
        assert check in result.exported
    else:
        (refused,) = [n for n in result.not_exported if n.check_id == check]
        assert refused.clause == "flag_of: glucose_mg_dl" and refused.reason


def test_odcs_gives_the_flag_back():
    from tscontract.contract.loader import parse_contract
    from tscontract.interop.odcs.export import import_odcs

    contract = load_contract(CGM)
    back = parse_contract(import_odcs(export("odcs", contract).artifacts[0].content), "imported.yaml")
    assert back.fields["glucose_flag"].flag_of == "glucose_mg_dl"
    assert back.fields["glucose_flag"].type.text == contract.fields["glucose_flag"].type.text
    assert back.sql_checks == []  # the flag_of rule is the field's clause again, not a query
