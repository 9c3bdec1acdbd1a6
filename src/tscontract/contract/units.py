"""Units and dimensions, through pint, with Decimal magnitudes throughout.

Physical units come from pint's registry (``bar``, ``kPa``, ``degC``,
``m**3/h``). Market units that are not physical are their own dimensions:
``quote_currency`` is a ``[quote_currency]`` amount and
``base_units_per_venue_contract`` a ``[base_asset_quantity]``; a contract may
declare more under ``units:``. A dimension is named in words (``pressure``,
``temperature``, ``volumetric_flow``, ``currency_amount``, ``count``), as a pint
dimension (``[length]``) or as an expression of them (``[length] / [time]``,
``[mass] / [length] ** 3``).

Every unit or dimension that cannot be used is a :class:`UnitError` with the
offset of the trouble in the text, whatever pint raised (division by zero,
overflow, unbalanced parentheses).

pint (and numpy, which it imports) costs about 0.3 s to import and its registry 0.03 s to
build, so both wait for the first question the cache cannot answer: every verdict
(a unit's dimensionality, a declaration that defines, an affine conversion) is kept in the
tscontract cache (contract.cache), keyed by this code and the installed pint, and a process
whose questions were all asked before never imports pint.
"""

from __future__ import annotations

import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from tscontract.contract.cache import PickledDict, cache_dir, code_digest, library_stamp

if TYPE_CHECKING:
    import pint
    from pint.util import UnitsContainer

T = TypeVar("T")

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


# a pure number's unit, as contracts write it: pint's ``dimensionless`` (``1``), or a word that says so
UNITLESS = ("1", "dimensionless", "unitless", "ratio")


def is_unitless(text: str) -> bool:
    """``unit: 1`` (or ``dimensionless``, ``unitless``, ``ratio``): a pure number, scale 1 (not percent)."""
    return text.strip() in UNITLESS


class UnitError(ValueError):
    """A unit or dimension that cannot be used; ``offset`` is 0-based into the text.

    ``declared`` names the contract's own unit declaration at fault, if one is.
    """

    def __init__(self, message: str, offset: int = 0, declared: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.declared = declared


@dataclass(frozen=True)
class UnitDefinition:
    """A unit a contract declares: by a pint definition, or by its dimension alone.

    A dimension tscontract knows (``count``, ``pressure``, ``[length] / [time]``) makes the
    unit one of that dimension; any other word is a new base dimension (``index_level``).
    A unit declared by its dimension alone has no scale: it converts to no other unit.
    """

    name: str
    dimension: str | None = None
    definition: str | None = None

    def pint_line(self, ureg: pint.UnitRegistry[Decimal]) -> str:
        if self.definition is not None:
            return f"{self.name} = {self.definition}"
        dimension = self.dimension or self.name
        if _ONE_WORD.fullmatch(dimension):
            word = dimension.strip().strip("[]").strip()
            if _known_word(ureg, word) is None:
                return f"{self.name} = [{word}]"  # a new base dimension
        known = _dimension(ureg, dimension)
        return f"{self.name} = {str(known) if known else '[]'}"


def _balanced(text: str, what: str) -> None:
    """Parentheses must pair up; pint would fail on them with a tokenizer error."""
    opened: list[int] = []
    for offset, char in enumerate(text):
        if char == "(":
            opened.append(offset)
        elif char == ")":
            if not opened:
                raise UnitError(f"{what} {text!r}: unbalanced parentheses: ')' closes nothing", offset)
            opened.pop()
    if opened:
        raise UnitError(f"{what} {text!r}: unbalanced parentheses: '(' is not closed", opened[-1])


@cache
def registry(declared: tuple[UnitDefinition, ...] = ()) -> pint.UnitRegistry[Decimal]:
    """A Decimal-valued pint registry with the built-in and ``declared`` units."""
    import pint

    directory = cache_dir()
    ureg: pint.UnitRegistry[Decimal]
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
            if unit.definition is not None:
                _balanced(unit.definition, "definition")
            ureg.define(unit.pint_line(ureg))
        except UnitError as exc:
            raise UnitError(f"cannot define unit {unit.name!r}: {exc}", exc.offset, unit.name) from None
        except Exception as exc:  # pint raises many types (and decimal's) for bad definitions
            reason = str(exc) or type(exc).__name__
            raise UnitError(f"cannot define unit {unit.name!r}: {reason}", declared=unit.name) from None
    return ureg


@dataclass(frozen=True)
class _Refused:
    """A cached :class:`UnitError`."""

    message: str
    offset: int
    declared: str | None


@cache
def versions_key() -> str:
    """A digest of this code and the installed pint (its file's size and time): what a verdict depends on."""
    return code_digest("units", library_stamp("pint"))


_VERDICTS = PickledDict(lambda: f"units-{versions_key()[:20]}")


def _remembered(question: tuple[Any, ...], answer: Callable[[], T]) -> T:
    """``answer()``, or what it gave (or raised) for ``question`` before, in this process or an earlier one."""
    found = _VERDICTS.get(question)
    if isinstance(found, _Refused):
        raise UnitError(found.message, found.offset, found.declared)
    if found is not None:
        return cast(T, found)  # the cache holds what answer() gave for this question (the key names it)
    try:
        value = answer()
    except UnitError as exc:
        _VERDICTS.put(question, _Refused(str(exc), exc.offset, exc.declared))
        raise
    _VERDICTS.put(question, value)
    return value


def check_declarations(declared: tuple[UnitDefinition, ...]) -> None:
    """Raise :class:`UnitError` (naming the declaration) when a declared unit cannot be defined."""
    _remembered(("declarations", declared), lambda: registry(declared) is not None)


def _units(ureg: pint.UnitRegistry[Decimal], text: str) -> pint.Unit:
    import pint

    _balanced(text, "unit")
    try:
        return ureg.parse_units("dimensionless" if is_unitless(text) else text)
    except pint.errors.UndefinedUnitError as exc:
        raise UnitError(f"unknown unit {text!r} ({exc})") from None
    except ZeroDivisionError:
        raise UnitError(f"unit {text!r}: division by zero") from None
    except ArithmeticError:  # decimal.Overflow, InvalidOperation
        raise UnitError(f"unit {text!r}: number out of range") from None
    except (
        pint.errors.PintError,
        ValueError,
        AttributeError,
        TypeError,
        AssertionError,
        KeyError,
        IndexError,
        SyntaxError,
        tokenize.TokenError,
        RecursionError,
    ) as exc:
        reason = str(exc) or "not a unit expression"
        raise UnitError(f"cannot read unit {text!r} ({reason})") from None


def check_unit(text: str, declared: tuple[UnitDefinition, ...] = ()) -> str:
    """Parse a unit; return its dimensionality as text (``[mass] / [length] / [time] ** 2``)."""
    return _remembered(("unit", text, declared), lambda: str(_units(registry(declared), text).dimensionality))


# ------------------------------------------------------------ dimensions written in contracts

_OPERATOR = re.compile(r"[*/^()]")
_ONE_WORD = re.compile(r"\s*(\[\s*[A-Za-z_][A-Za-z0-9_ ]*\]|[A-Za-z_][A-Za-z0-9_ ]*)\s*")
_TOKEN = re.compile(
    r"\s*(?:(?P<op>\*\*|\^|\*|/|\(|\)|-)|(?P<dim>\[[^\[\]]*\])|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>[0-9]+))"
)
_MAX_EXPONENT = 12


def _known_word(ureg: pint.UnitRegistry[Decimal], word: str) -> UnitsContainer | None:
    """A dimension named by one word: a contract alias or a pint dimension; None if unknown."""
    import pint
    from pint.util import UnitsContainer

    key = word.strip().lower().replace(" ", "_")
    alias = _DIMENSION_ALIASES.get(key)
    if alias == "":
        return UnitsContainer()
    if alias is not None and _OPERATOR.search(alias):
        return _DimensionReader(ureg, alias).read()
    try:
        return ureg.get_dimensionality(alias or f"[{key}]")
    except (pint.errors.PintError, ValueError, KeyError, AttributeError):
        return None


class _DimensionReader:
    """``[mass] / [length] ** 3``: dimensions and words joined by ``*``, ``/``, ``**`` and parentheses."""

    def __init__(self, ureg: pint.UnitRegistry[Decimal], text: str) -> None:
        self.ureg, self.text = ureg, text
        self.tokens: list[tuple[str, str, int]] = []
        offset = 0
        while offset < len(text):
            if text[offset:].strip() == "":
                break
            match = _TOKEN.match(text, offset)
            if match is None or match.end() == offset:
                start = offset + len(text[offset:]) - len(text[offset:].lstrip())
                raise self.error(f"cannot read dimension at {text[start]!r}", start)
            kind = match.lastgroup or "op"
            self.tokens.append((kind, match.group(kind), match.start(kind)))
            offset = match.end()
        self.position = 0

    def error(self, message: str, offset: int) -> UnitError:
        return UnitError(f"dimension {self.text!r}: {message}", offset)

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise self.error("ends too early", len(self.text.rstrip()))
        self.position += 1
        return token

    def read(self) -> UnitsContainer:
        result = self.expression()
        token = self.peek()
        if token is not None:
            raise self.error(f"cannot read dimension at {token[1]!r}", token[2])
        return result

    def expression(self) -> UnitsContainer:
        result = self.power()
        while (token := self.peek()) is not None and token[1] in ("*", "/"):
            self.take()
            operand = self.power()
            result = result * operand if token[1] == "*" else result / operand
        return result

    def power(self) -> UnitsContainer:
        base = self.atom()
        token = self.peek()
        if token is None or token[1] not in ("**", "^"):
            return base
        self.take()
        sign, (kind, text, offset) = 1, self.take()
        if text == "-":
            sign, (kind, text, offset) = -1, self.take()
        if kind != "int":
            raise self.error(f"an exponent is a whole number, not {text!r}", offset)
        if int(text) > _MAX_EXPONENT:
            raise self.error(f"exponent {text} out of range (at most {_MAX_EXPONENT})", offset)
        powered: UnitsContainer = base ** (sign * int(text))  # pint leaves __pow__ unannotated
        return powered

    def atom(self) -> UnitsContainer:
        kind, text, offset = self.take()
        if text == "(":
            inner = self.expression()
            closing = self.take()
            if closing[1] != ")":
                raise self.error(f"cannot read dimension at {closing[1]!r}", closing[2])
            return inner
        if kind == "int" and text == "1":
            from pint.util import UnitsContainer

            return UnitsContainer()
        if kind in ("dim", "word"):
            name = text.strip("[]").strip()
            found = _known_word(self.ureg, name)
            if found is None:
                raise UnitError(f"unknown dimension {name!r}", offset)
            return found
        raise self.error(f"cannot read dimension at {text!r}", offset)


def _dimension(ureg: pint.UnitRegistry[Decimal], dimension: str) -> UnitsContainer:
    if _ONE_WORD.fullmatch(dimension):  # 'pressure', 'mass flow', '[length]'
        found = _known_word(ureg, dimension.strip().strip("[]"))
        if found is None:
            raise UnitError(f"unknown dimension {dimension!r}")
        return found
    _balanced(dimension, "dimension")
    return _DimensionReader(ureg, dimension).read()


def dimensionality(dimension: str, declared: tuple[UnitDefinition, ...] = ()) -> str:
    """The pint dimensionality of a dimension written in a contract, as text."""

    def answer() -> str:
        found = _dimension(registry(declared), dimension)
        return str(found) if found else "dimensionless"

    return _remembered(("dimension", dimension, declared), answer)


def unit_in_dimension(unit: str, dimension: str, declared: tuple[UnitDefinition, ...] = ()) -> bool:
    """True when ``unit`` measures ``dimension`` (kPa is pressure, degC is temperature)."""

    def answer() -> bool:
        from pint.util import UnitsContainer

        ureg = registry(declared)
        return UnitsContainer(_units(ureg, unit).dimensionality) == _dimension(ureg, dimension)

    return _remembered(("unit in dimension", unit, dimension, declared), answer)


def same_unit(a: str, b: str, declared: tuple[UnitDefinition, ...] = ()) -> bool:
    """True when two unit texts name the same unit (``kPa`` and ``kilopascal``)."""

    def answer() -> bool:
        ureg = registry(declared)
        return _units(ureg, a) == _units(ureg, b)

    return _remembered(("same unit", a, b, declared), answer)


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
    import pint

    ureg = registry(declared)
    source, target = _units(ureg, from_unit), _units(ureg, to_unit)
    scale_free = {u.name for u in declared if u.definition is None}
    if source != target and scale_free & {*dict(source._units), *dict(target._units)}:
        name = sorted(scale_free & {*dict(source._units), *dict(target._units)})[0]
        raise UnitError(
            f"cannot convert {from_unit} to {to_unit}: {name} is declared by its dimension only "
            "and has no scale; give it a definition (units: {name: {definition: ...}})"
        )
    try:
        magnitude = ureg.Quantity(value, source).to(target).magnitude
    except pint.errors.DimensionalityError as exc:
        raise UnitError(f"cannot convert {from_unit} to {to_unit}: {exc}") from None
    except ArithmeticError:
        raise UnitError(f"cannot convert {from_unit} to {to_unit}: the factor is out of range") from None
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

    def answer() -> tuple[Fraction, Fraction]:
        offset = convert(Decimal(0), from_unit, to_unit, declared=declared)
        factor = convert(Decimal(1), from_unit, to_unit, declared=declared) - offset
        return _rational(factor), _rational(offset)

    return _remembered(("affine", from_unit, to_unit, declared), answer)


def _rational(value: Decimal) -> Fraction:
    exact = Fraction(value)
    simple = exact.limit_denominator(10**12)
    return simple if abs(simple - exact) <= Fraction(1, 10**20) * max(Fraction(1), abs(exact)) else exact


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
