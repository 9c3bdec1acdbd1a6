"""Units through pint, Decimal all the way, market units as their own dimensions."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from tscontract.contract.units import (
    UnitDefinition,
    UnitError,
    affine,
    check_unit,
    convert,
    dimensionality,
    same_unit,
    unit_in_dimension,
)


@pytest.mark.parametrize(
    ("unit", "dimension", "fits"),
    [
        ("kPa", "pressure", True),
        ("bar", "pressure", True),
        ("degC", "temperature", True),
        ("K", "temperature", True),
        ("degC", "pressure", False),
        ("m**3/h", "volumetric_flow", True),
        ("quote_currency", "currency_amount", True),
        ("quote_currency", "pressure", False),
        ("base_units_per_venue_contract", "base_asset_quantity", True),
        ("base_units_per_venue_contract", "currency_amount", False),
        ("count", "count", True),
        ("V", "voltage", True),
    ],
)
def test_unit_belongs_to_dimension(unit, dimension, fits):
    assert unit_in_dimension(unit, dimension) is fits


def test_market_units_are_their_own_dimensions():
    assert check_unit("quote_currency") == "[quote_currency]"
    assert check_unit("base_units_per_venue_contract") == "[base_asset_quantity]"
    with pytest.raises(UnitError):
        convert(Decimal(1), "quote_currency", "base_units_per_venue_contract")


def test_declared_units():
    lots = (UnitDefinition("lot", definition="100 * base_units_per_venue_contract"),)
    assert convert(Decimal("3"), "lot", "base_units_per_venue_contract", declared=lots) == Decimal(300)
    bp = (UnitDefinition("index_point", dimension="index_level"),)
    assert check_unit("index_point", bp) == "[index_level]"
    with pytest.raises(UnitError):
        check_unit("bananas")


def test_conversion_keeps_decimal_precision():
    result = convert(Decimal("8.5012"), "bar", "kPa", scale=4)
    assert isinstance(result, Decimal) and str(result) == "850.1200"
    assert convert(Decimal("65.25"), "degC", "K") == Decimal("338.40")
    assert convert(Decimal("0.1"), "m", "mm") == Decimal("100.0")  # 0.1 exactly, not 100.00000000000001
    with pytest.raises(TypeError):
        convert(0.1, "m", "mm")  # type: ignore[arg-type]
    assert same_unit("kPa", "kilopascal") and not same_unit("kPa", "bar")


def test_affine_conversion_runs_vectorised_in_duckdb_exactly():
    factor, offset = affine("degC", "degF")
    assert (factor, offset) == (Decimal("1.8"), Decimal(32))
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (CAST(-40 AS DECIMAL(12,4))), (100.0125)) v(c)")
    rows = con.execute(f"SELECT c * {factor} + {offset} FROM t ORDER BY c").fetchall()
    assert [r[0] for r in rows] == [Decimal("-40.0000"), Decimal("212.02250")]


# ---------------------------------------------------------------- dimensions written as expressions


@pytest.mark.parametrize(
    ("unit", "dimension"),
    [
        ("m/s", "[length] / [time]"),  # the example of docs/language.md, Units and dimensions
        ("km/h", "[length]/[time]"),
        ("kg/m**3", "[mass] / [length] ** 3"),
        ("ug/m**3", "[mass] / [length]**3"),
        ("kg/h", "mass_flow"),
        ("m**3/h", "[length] ** 3 / [time]"),
        ("m**3/h", "volumetric_flow"),
        ("Hz", "1 / [time]"),
        ("W", "[mass] * [length] ** 2 / [time] ** 3"),
        ("W", "[mass] * ([length] / [time]) ** 2 / [time]"),
        ("m/s**2", "[length] * [time] ** -2"),
        ("quote_currency/base_units_per_venue_contract", "currency_amount / base_asset_quantity"),
    ],
)
def test_dimension_expressions(unit, dimension):
    assert unit_in_dimension(unit, dimension)
    assert dimensionality(dimension) == check_unit(unit)


def test_dimension_expression_of_another_quantity_does_not_fit():
    assert not unit_in_dimension("m/s", "[length] / [time] ** 2")
    assert not unit_in_dimension("kg/m**3", "[mass] / [length] ** 2")


@pytest.mark.parametrize(
    ("text", "fragment", "offset"),
    [
        ("([length] / [time]", "unbalanced parentheses: '(' is not closed", 0),
        ("[length] / [time])", "unbalanced parentheses: ')' closes nothing", 17),
        ("[length] // [time]", "cannot read dimension", 10),
        ("[length] ** x", "exponent", 12),
        ("[length] ** 99999", "exponent", 12),
        ("[length] / [pressiness]", "unknown dimension 'pressiness'", 11),
        ("[length] /", "ends too early", 10),
        ("[length] [time]", "cannot read dimension", 9),
    ],
)
def test_bad_dimension_expressions_are_unit_errors_with_position(text, fragment, offset):
    with pytest.raises(UnitError) as info:
        dimensionality(text)
    assert fragment in str(info.value), str(info.value)
    assert info.value.offset == offset


@pytest.mark.parametrize(
    ("text", "fragment", "offset"),
    [
        ("m/0", "division by zero", 0),
        ("10**10**10 m", "number out of range", 0),
        ("(m/s", "unbalanced parentheses: '(' is not closed", 0),
        ("m/s)", "unbalanced parentheses: ')' closes nothing", 3),
        ("kg/(m**3", "unbalanced parentheses: '(' is not closed", 3),
        ("m**", "cannot read unit", 0),
        ("bananas", "unknown unit 'bananas'", 0),
    ],
)
def test_bad_unit_texts_are_unit_errors(text, fragment, offset):
    with pytest.raises(UnitError) as info:
        check_unit(text)
    assert fragment in str(info.value), str(info.value)
    assert info.value.offset == offset


def test_a_unit_declared_by_a_known_dimension_belongs_to_it():
    declared = (
        UnitDefinition("trades", dimension="count"),
        UnitDefinition("usd", dimension="currency_amount"),
        UnitDefinition("mcf_per_day", dimension="volumetric_flow"),
        UnitDefinition("index_point", dimension="index_level"),  # a new base dimension
    )
    assert unit_in_dimension("trades", "count", declared)
    assert unit_in_dimension("usd", "currency_amount", declared)
    assert unit_in_dimension("mcf_per_day", "volumetric_flow", declared)
    assert unit_in_dimension("index_point", "index_level", declared)
    assert not unit_in_dimension("trades", "currency_amount", declared)
    # a unit declared by its dimension alone has no scale: it converts to nothing but itself
    assert convert(Decimal("7"), "trades", "trades", declared=declared) == Decimal(7)
    for other in ("count", "percent"):
        with pytest.raises(UnitError, match="declared by its dimension only"):
            convert(Decimal("7"), "trades", other, declared=declared)
    with pytest.raises(UnitError, match="declared by its dimension only"):
        affine("mcf_per_day", "m**3/h", declared=declared)


@pytest.mark.parametrize("spelling", ["1", "dimensionless", "unitless", "ratio"])
def test_unitless_spellings_are_pints_dimensionless(spelling):
    assert check_unit(spelling) == "dimensionless"
    assert same_unit(spelling, "dimensionless")
    assert unit_in_dimension(spelling, "dimensionless") and unit_in_dimension(spelling, "ratio")
    assert convert(Decimal("12.5"), "percent", spelling) == Decimal("0.125")  # 1 is a fraction, not percent
    assert not same_unit(spelling, "percent")


@pytest.mark.parametrize(
    ("old", "new", "changed"), [("1", "dimensionless", False), ("ratio", "1", False), ("1", "percent", True)]
)
def test_respelling_a_pure_number_is_no_unit_change(old, new, changed):
    from tscontract import parse_contract
    from tscontract.evolution.diff import diff

    text = (
        "contract: t\nversion: VER\nkey: [ts]\ntime: {column: ts, precision: s, timezone: UTC instant, cadence: 1h}\n"
        "fields:\n  ts: {type: timestamp_s_utc}\n  r: {type: decimal(6,3), unit: UNIT, nullable: true}\n"
    )
    a = parse_contract(text.replace("VER", "1.0.0").replace("UNIT", old))
    b = parse_contract(text.replace("VER", "1.0.1").replace("UNIT", new))
    assert any(c.kind == "change_unit" for c in diff(a, b).changes) is changed
