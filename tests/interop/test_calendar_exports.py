"""Calendar cadences, completeness in months and ``max_age`` in months in every export (#32): carried
where the target can state them, else listed as not exported with the reason, never dropped."""

from __future__ import annotations

import io

import pytest
from ruamel.yaml import YAML

from tests.interop.test_odcs_import_rules import LOSSY, TRADES
from tscontract import parse_contract
from tscontract.interop.exports import FORMATS, export
from tscontract.interop.odcs.read import import_document

MONTHLY = """\
contract: cpi
version: 1.0.0
owner: macro@example
key: [country, period]
time:
  column: period
  precision: us
  timezone: UTC instant
  cadence: "1 month; anchored at month end"
  zone: Europe/Berlin
fields:
  country: {type: string, nullable: false}
  period: {type: timestamp_us_utc, nullable: false}
  cpi: {type: float64, nullable: true}
completeness: {window: "1 year; aligned to 2024-07", expected_count: per cadence}
freshness: {max_age: 2 months}
"""
TIME_CHECKS = {"time.cadence", "completeness", "freshness"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_carries_or_lists_the_calendar_checks(fmt: str) -> None:
    result = export(fmt, parse_contract(MONTHLY))
    listed = {n.check_id: n.reason for n in result.not_exported}
    for check in TIME_CHECKS:
        assert (check in result.exported) != (check in listed), (fmt, check)
    if fmt in ("dbt", "soda"):  # they export fixed cadences and freshness; calendar ones are listed with why
        assert "calendar cadence" in listed["time.cadence"] and "calendar months" in listed["freshness"]


def test_odcs_states_the_latency_in_months_and_reads_months_back() -> None:
    (artifact,) = export("odcs", parse_contract(MONTHLY)).artifacts
    document = YAML(typ="safe").load(io.StringIO(artifact.content))
    assert document["slaProperties"][0] | {"element": None} == {
        "property": "latency",
        "value": 2,
        "unit": "month",
        "element": None,
    }
    sla = "slaProperties:\n  - {property: latency, value: 3, unit: months, element: trades_eu.trade_ts}\n"
    (result,) = import_document(TRADES + sla, choices=LOSSY)
    freshness = parse_contract(result.text).freshness
    assert freshness is not None and freshness.max_age.months == 3
