"""Durations as contracts write them: ``60s``, ``15m``, ``5 trading days``, ``1 local day``, ``1 month``,
``5 years`` and compounds (``1826d 12h``, ``1h 30m``): one parser for every place a duration is accepted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Literal, cast

from tscontract.contract.calendar_time import months_of
from tscontract.contract.grammar import ClauseSyntaxError, parse

if TYPE_CHECKING:  # lark is imported where a clause is read (grammar.parse)
    from lark import Token, Tree

_UNIT_SECONDS = {
    "ns": Decimal("1e-9"),
    "us": Decimal("1e-6"),
    "ms": Decimal("0.001"),
    "s": Decimal(1),
    "min": Decimal(60),
    "h": Decimal(3600),
    "d": Decimal(86400),
    "w": Decimal(604800),
}
_UNIT_ALIASES = {
    "µs": "us",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "m": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "day": "d",
    "days": "d",
    "week": "w",
    "weeks": "w",
    "sessions": "session",
    "months": "month",
    "mo": "month",
    "quarters": "quarter",
    "q": "quarter",
    "years": "year",
    "yrs": "year",
    "yr": "year",
    "y": "year",
}
MONTH_UNITS = ("month", "quarter", "year")

CalendarKind = Literal["trading", "business", "calendar", "local"]


@dataclass(frozen=True)
class Duration:
    """``60s``, ``15m``, ``5 trading days``, ``1 local day``: an amount of a unit, maybe on a calendar.

    ``N sessions`` is ``N trading days``: sessions of the series' exchange calendar. ``N local days``
    are days of the series' own zone (a catalog ``device_zone`` or the venue's zone), 23 or 25 hours
    long across a DST change, so they have no fixed length either.
    """

    text: str
    amount: Decimal
    unit: str
    calendar: CalendarKind | None = None

    @property
    def on_trading_calendar(self) -> bool:
        return self.calendar in ("trading", "business")

    @property
    def in_local_days(self) -> bool:
        return self.calendar == "local"

    @property
    def in_months(self) -> bool:
        """Months, quarters or years: calendar months of the series' zone, 28 to 31 days long."""
        return self.unit in MONTH_UNITS

    @property
    def months(self) -> int:
        return months_of(self.unit, int(self.amount))

    @property
    def fixed(self) -> bool:
        """A fixed length of time (``calendar days`` are 24 h; trading and local days and months are not)."""
        return not self.on_trading_calendar and not self.in_local_days and not self.in_months

    @property
    def seconds(self) -> Decimal:
        if self.in_months:
            raise ValueError(f"{self.text!r} counts calendar months; it has no fixed length")
        if not self.fixed:
            raise ValueError(f"{self.text!r} counts {self.calendar} days; it needs a calendar")
        return self.amount * _UNIT_SECONDS[self.unit]

    @property
    def timedelta(self) -> timedelta:
        return timedelta(seconds=float(self.seconds))

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"text": self.text, "amount": str(self.amount), "unit": self.unit}
        if self.calendar:
            data["calendar"] = self.calendar
        elif self.in_months:
            data["months"] = self.months
        else:
            data["seconds"] = str(self.seconds.normalize())
        return data


MAX_DURATION_DIGITS = 12  # digits of an amount: more is a mistake, or an overflow in the engines
MAX_DURATION_S = Decimal(4_000_000_000)  # in nanoseconds, still within a 64-bit integer


def _rule(node: Tree[Token] | Token) -> Tree[Token]:
    """A child the grammar makes a rule (lark types every child as a rule or a token)."""
    assert not isinstance(node, str)  # a token is a str
    return node


def _duration_part(node: Tree[Token], zero: bool) -> tuple[Decimal, str, str | None]:
    """One ``amount [calendar] unit`` of a duration: its amount, unit and calendar kind, checked."""
    tokens = [str(t) for t in node.children]
    amount = Decimal(tokens[0])
    unit_text = tokens[-1]
    unit = _UNIT_ALIASES.get(unit_text.lower(), unit_text.lower())
    calendar = tokens[1].lower() if len(tokens) == 3 else None
    if unit == "session":  # a session is a trading day of the series' exchange calendar
        if calendar is not None:
            raise ClauseSyntaxError(f"sessions are trading days already; drop {tokens[1]!r}")
        unit, calendar = "d", "trading"
    if calendar and unit != "d":
        raise ClauseSyntaxError(f"{calendar} calendars count days, not {unit_text!r}")
    if unit in MONTH_UNITS and amount != amount.to_integral_value():
        raise ClauseSyntaxError(f"calendar {unit}s are counted whole: {tokens[0]} {unit_text}")
    if amount < 0 or (amount == 0 and not zero):
        raise ClauseSyntaxError("a duration must be positive" + (" or zero" if zero else ""))
    if amount and not -9 <= amount.adjusted() <= MAX_DURATION_DIGITS:
        raise ClauseSyntaxError(f"a duration's amount is between 1e-9 and 1e{MAX_DURATION_DIGITS}")
    return amount, unit, calendar


def _duration(node: Tree[Token], text: str, *, zero: bool = False) -> Duration:
    """The duration ``node`` spells; positive, or zero where ``zero`` allows it (a cadence tolerance).

    Compound durations (``1826d 12h``, ``1h 30m``, ``1 year 6 months``) add their parts: parts of fixed
    time give seconds, parts of months give months; trading or local days and a mix of months with
    fixed time are refused (a month has no fixed length).
    """
    parts = [_duration_part(_rule(child), zero) for child in node.children]
    segment = text[node.meta.start_pos : node.meta.end_pos] if node.meta.start_pos is not None else text
    if len(parts) == 1:
        amount, unit, calendar = parts[0]
    elif any(calendar for _, _, calendar in parts):
        raise ClauseSyntaxError(f"{segment.strip()!r}: trading, business, calendar and local days are not compounded")
    elif all(unit in MONTH_UNITS for _, unit, _ in parts):
        amount, unit, calendar = Decimal(sum(months_of(u, int(a)) for a, u, _ in parts)), "month", None
    elif any(unit in MONTH_UNITS for _, unit, _ in parts):
        raise ClauseSyntaxError(f"{segment.strip()!r} mixes calendar months with fixed time, which has no one length")
    else:
        amount, unit, calendar = sum((a * _UNIT_SECONDS[u] for a, u, _ in parts), Decimal(0)), "s", None
    kind = cast(CalendarKind | None, calendar)  # the grammar's CALENDAR_KIND words, lowered
    duration = Duration(text=segment.strip(), amount=amount, unit=unit, calendar=kind)
    if duration.fixed and duration.unit in _UNIT_SECONDS and duration.seconds > MAX_DURATION_S:
        raise ClauseSyntaxError(f"a duration is at most {MAX_DURATION_S:.0f} seconds (about 126 years)")
    if duration.in_months and duration.months > 12 * 126:
        raise ClauseSyntaxError("a duration is at most 126 years")
    return duration


def parse_duration(text: str) -> Duration:
    return _duration(parse("duration_start", text), text)
