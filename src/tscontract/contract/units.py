"""Units and dimensions, through pint, with Decimal magnitudes throughout.

Physical units come from pint's registry (``bar``, ``kPa``, ``degC``,
``m**3/h``). Market units that are not physical are their own dimensions:
``quote_currency`` is a ``[quote_currency]`` amount and
``base_units_per_venue_contract`` a ``[base_asset_quantity]``; a contract may
declare more under ``units:``. A dimension is named in words (``pressure``,
``temperature``, ``volumetric_flow``, ``currency_amount``) or as a pint
dimension (``[length]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache

import pint

from tscontract.contract.cache import cache_dir

BUILTIN_UNITS: tuple[tuple[str, str], ...] = (
    ("quote_currency", "[quote_currency]"),
    ("base_units_per_venue_contract", "[base_asset_quantity]"),
)

# contract words for dimensions pint has no name for
_DIMENSION_ALIASES = {
    "currency": "[quote_currency]",
    "currency_amount": "[quote_currency]",
    "money": "[quote_currency]",
    "quote_currency": "[quote_currency]",
    "base_asset_quantity": "[base_asset_quantity]",
    "quantity": "[base_asset_quantity]",
    "volumetric_flow": "[volumetric_flow_rate]",
    "flow": "[volumetric_flow_rate]",
    "mass_flow": "[mass] / [time]",
    "mass_flow_rate": "[mass] / [time]",
    "voltage": "[electric_potential]",
    "dimensionless": "",
    "ratio": "",
    "count": "",
    "angle": "",
}


class UnitError(ValueError):
    """A unit or dimension that cannot be used."""


@dataclass(frozen=True)
class UnitDefinition:
    """A unit a contract declares: a new base dimension, or a pint definition."""

    name: str
    dimension: str | None = None
    definition: str | None = None

    def pint_line(self) -> str:
        if self.definition is not None:
            return f"{self.name} = {self.definition}"
        dimension = self.dimension or self.name
        return f"{self.name} = [{dimension.strip('[]')}]"


@cache
def registry(declared: tuple[UnitDefinition, ...] = ()) -> pint.UnitRegistry:
    """A Decimal-valued pint registry with the built-in and ``declared`` units."""
    directory = cache_dir()
    try:
        # pint caches its parsed definition files (contract.cache): 0.03 s instead of 0.25 s to start;
        # an unwritable or damaged cache only costs that time
        ureg = pint.UnitRegistry(
            non_int_type=Decimal,
            autoconvert_offset_to_baseunit=False,
            cache_folder=None if directory is None else directory / "pint",
        )
    except Exception:
        ureg = pint.UnitRegistry(non_int_type=Decimal, autoconvert_offset_to_baseunit=False)
    for name, dimension in BUILTIN_UNITS:
        ureg.define(f"{name} = {dimension}")
    for unit in declared:
        try:
            ureg.define(unit.pint_line())
        except Exception as exc:  # pint raises several types for bad definitions
            raise UnitError(f"cannot define unit {unit.name!r}: {exc}") from None
    return ureg


def _units(ureg: pint.UnitRegistry, text: str) -> pint.Unit:
    try:
        return ureg.parse_units(text)
    except (
        pint.errors.UndefinedUnitError,
        pint.errors.DefinitionSyntaxError,
        ValueError,
        AttributeError,
        TypeError,
        AssertionError,
    ) as exc:
        raise UnitError(f"unknown unit {text!r} ({exc})") from None


def check_unit(text: str, declared: tuple[UnitDefinition, ...] = ()) -> str:
    """Parse a unit; return its dimensionality as text (``[mass] / [length] / [time] ** 2``)."""
    return str(_units(registry(declared), text).dimensionality)


def dimensionality(dimension: str, declared: tuple[UnitDefinition, ...] = ()) -> str:
    """The pint dimensionality of a dimension written in a contract."""
    ureg = registry(declared)
    key = dimension.strip().lower().replace(" ", "_")
    target = _DIMENSION_ALIASES.get(key)
    if target is None:
        target = key if key.startswith("[") else f"[{key}]"
    if target == "":
        return str(ureg.parse_units("dimensionless").dimensionality)
    try:
        return str(ureg.get_dimensionality(target))
    except (pint.errors.UndefinedUnitError, ValueError, KeyError) as exc:
        raise UnitError(f"unknown dimension {dimension!r} ({exc})") from None


def unit_in_dimension(unit: str, dimension: str, declared: tuple[UnitDefinition, ...] = ()) -> bool:
    """True when ``unit`` measures ``dimension`` (kPa is pressure, degC is temperature)."""
    return check_unit(unit, declared) == dimensionality(dimension, declared)


def same_unit(a: str, b: str, declared: tuple[UnitDefinition, ...] = ()) -> bool:
    """True when two unit texts name the same unit (``kPa`` and ``kilopascal``)."""
    ureg = registry(declared)
    return _units(ureg, a) == _units(ureg, b)


def convert(
    value: Decimal,
    from_unit: str,
    to_unit: str,
    *,
    scale: int | None = None,
    declared: tuple[UnitDefinition, ...] = (),
) -> Decimal:
    """Convert a Decimal between units without passing through float.

    With ``scale`` the result is rounded half-even to that many decimal places,
    the scale a ``decimal(p,s)`` field stores.
    """
    if not isinstance(value, Decimal):
        raise TypeError(f"convert() takes a Decimal, not {type(value).__name__}")
    ureg = registry(declared)
    source, target = _units(ureg, from_unit), _units(ureg, to_unit)
    try:
        magnitude = ureg.Quantity(value, source).to(target).magnitude
    except pint.errors.DimensionalityError as exc:
        raise UnitError(f"cannot convert {from_unit} to {to_unit}: {exc}") from None
    result = Decimal(magnitude)
    if scale is not None:
        result = result.quantize(Decimal(1).scaleb(-scale))
    return result


def exact_affine(
    from_unit: str, to_unit: str, *, declared: tuple[UnitDefinition, ...] = ()
) -> tuple[Fraction, Fraction]:
    """``(factor, offset)`` as exact fractions with ``to = from * factor + offset``.

    pint's definitions are rational (degF is 5/9 K), but it computes them as 28-digit
    Decimals; the fraction with the smallest denominator within 1e-20 recovers them, so
    a reading converts exactly (149.45 degF is 65.25 degC, not 65.250000000000000066).
    """
    offset = convert(Decimal(0), from_unit, to_unit, declared=declared)
    factor = convert(Decimal(1), from_unit, to_unit, declared=declared) - offset
    return _rational(factor), _rational(offset)


def _rational(value: Decimal) -> Fraction:
    exact = Fraction(value)
    simple = exact.limit_denominator(10**12)
    return simple if abs(simple - exact) <= Fraction(1, 10**20) * max(1, abs(exact)) else exact


def affine(from_unit: str, to_unit: str, *, declared: tuple[UnitDefinition, ...] = ()) -> tuple[Decimal, Decimal]:
    """``(factor, offset)`` as Decimals where they terminate (see :func:`exact_affine`).

    Every pint conversion is affine, so a whole column converts in one vectorised
    expression (SQL ``value * factor + offset``) instead of a loop.
    """
    factor, offset = exact_affine(from_unit, to_unit, declared=declared)
    exact = Decimal("1e-18")

    def as_decimal(value: Fraction) -> Decimal:
        return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(exact).normalize()

    return as_decimal(factor), as_decimal(offset)
