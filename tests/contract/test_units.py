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
