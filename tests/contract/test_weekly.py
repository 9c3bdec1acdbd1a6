"""Declaring a calendar by its weekly hours: every bad declaration is one line at its position."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli, write
from tests.engines.callcentre import CONTRACT
from tscontract.contract.catalog import parse_catalog
from tscontract.contract.loader import parse_contract
from tscontract.contract.weekly import parse_days, parse_hours
from tscontract.errors import CatalogError, ContractError

HOURS = '    hours: {mon-fri: "07:00-21:00"}\n'


def declared(hours: str = HOURS, more: str = "") -> str:
    return CONTRACT.replace(HOURS, hours + more)


def test_days_ranges_and_lists():
    assert parse_days("mon-fri") == [0, 1, 2, 3, 4]
    assert parse_days("Sat, sun") == [5, 6]
    assert parse_days("fri-mon") == [4, 5, 6, 0]  # forward through the week


def test_hours_several_overnight_and_to_midnight():
    assert parse_hours("09:00-12:00, 13:00-17:00") == [(540, 720), (780, 1020)]
    assert parse_hours("22:00-06:00+1") == [(1320, 1800)]
    assert parse_hours("00:00-24:00") == [(0, 1440)]


@pytest.mark.parametrize(
    ("hours", "where", "message"),
    [
        ('    hours: {mon-fry: "07:00-21:00"}\n', "13:22: calendars.callcentre.hours.mon-fry", "days 'mon-fry': write"),
        ('    hours: {mon: "25:00-26:00"}\n', "13:18: calendars.callcentre.hours.mon", "25:00 is not a time of day"),
        ('    hours: {mon: "07:60-08:00"}\n', "13:18: calendars.callcentre.hours.mon", "07:60 is not a time of day"),
        (
            '    hours: {mon: "21:00-07:00"}\n',
            "13:18: calendars.callcentre.hours.mon",
            "end before they start; for hours that cross midnight write '21:00-07:00+1'",
        ),
        ('    hours: {mon: "07:00-07:00"}\n', "13:18: calendars.callcentre.hours.mon", "are empty"),
        ('    hours: {mon: "07:00-08:00+1"}\n', "13:18: calendars.callcentre.hours.mon", "more than 24 hours"),
        ("    hours: {mon: 7}\n", "13:18: calendars.callcentre.hours.mon", "hours are text"),
        (
            '    hours: {mon-fri: "07:00-21:00", fri: "08:00-09:00"}\n',
            "13:12: calendars.callcentre.hours",
            "fri is given hours twice",
        ),
        (
            '    hours: {sun: "22:00-06:00+1", mon: "05:00-09:00"}\n',
            "13:12: calendars.callcentre.hours",
            "hours overlap: sun 22:00 to mon 06:00 and the session from mon 05:00",
        ),
        ("    hours: {}\n", "13:12: calendars.callcentre.hours", "hours name at least one day"),
    ],
)
def test_a_bad_declaration_is_an_error_at_its_clause(hours, where, message):
    with pytest.raises(ContractError) as found:
        parse_contract(declared(hours), "c.yaml")
    line = found.value.one_line()
    assert line.startswith(f"c.yaml:{where}: ") and message in line, line
    assert not found.value.all_errors()[1:]


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        ("zone: Europe/London", "zone: Europe/Lndon", "12:11: calendars.callcentre.zone", "not an IANA time zone"),
        ("[2026-10-19, 2026-12-25]", "[2026-13-01]", "14:15: calendars.callcentre.holidays", "'2026-13-01' is not a"),
        ("[2026-10-19, 2026-12-25]", "{country: XX}", "14:15: calendars.callcentre.holidays", "country 'XX'"),
        (
            "[2026-10-19, 2026-12-25]",
            "{country: GB, subdivision: XYZ}",
            "14:15: calendars.callcentre.holidays",
            "GB has no subdivision 'XYZ'; known: ENG, NIR, SCT, WLS",
        ),
        ("[2026-10-19, 2026-12-25]", "{subdivision: ENG}", "14:15: calendars.callcentre.holidays", "needs its country"),
        ("  callcentre:\n", "  XLON:\n", "11:3: calendars", "'XLON' could be an exchange calendar's code"),
        ("  callcentre:\n", "  us_futures:\n", "11:3: calendars", "'us_futures' could be an exchange"),
        (
            "    zone: Europe/London\n",
            "    zone: Europe/London\n    opens: 07:00\n",
            "13:5: calendars.callcentre.opens",
            "unknown key 'opens'",
        ),
    ],
)
def test_zone_holidays_and_names_are_checked_at_load(old, new, where, message):
    with pytest.raises(ContractError) as found:
        parse_contract(CONTRACT.replace(old, new, 1), "c.yaml")
    line = found.value.one_line()
    assert line.startswith(f"c.yaml:{where}: ") and message in line, line


def test_the_cli_refuses_a_bad_declaration_in_one_line_with_exit_2(tmp_path):
    done = run_cli("validate", write(tmp_path, declared('    hours: {mon: "21:00-07:00"}\n')), tmp_path / "x.csv")
    assert done.returncode == 2, done.stderr
    assert "calendars.callcentre.hours.mon" in done.stderr and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1


def test_a_catalog_declares_calendars_with_the_same_checks():
    text = "series:\n  retail: {calendar: callcentre}\ncalendars:\n  callcentre:\n    zone: Europe/London\n"
    catalog = parse_catalog(text + '    hours: {mon-fri: "08:00-18:00"}\n')
    assert catalog.calendars["callcentre"].week()[4] == [(480, 1080)]
    with pytest.raises(CatalogError, match=r"cat.yaml:6:18: calendars.callcentre.hours.sat: .*write '18:00-08:00\+1'"):
        parse_catalog(text + '    hours: {sat: "18:00-08:00"}\n', "cat.yaml")


def test_show_json_lists_the_declared_calendars():
    from tscontract.contract.serialize import contract_to_json

    shown = contract_to_json(parse_contract(CONTRACT))["calendars"]
    assert shown == {
        "callcentre": {
            "zone": "Europe/London",
            "hours": {"mon-fri": "07:00-21:00"},
            "holidays": {"dates": ["2026-10-19", "2026-12-25"]},
        }
    }
