"""Structured clauses parsed from the words a contract is written in.

Row clauses (invariants and per-field constraints) become sqlglot expression
trees: the predicate holds for a valid row. SQL NULL in a predicate counts as
"not violated"; nullability is its own clause. Catalog references compile to
columns of a relation named ``catalog`` joined on the series key, e.g.
``value within catalog hard_bounds for series_id`` ->
``value BETWEEN catalog.hard_bounds_low AND catalog.hard_bounds_high``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, cast

from tscontract.contract.calendar_time import CalendarStep, parse_alignment
from tscontract.contract.durations import (
    Duration,
    _duration,
    _rule,
)
from tscontract.contract.grammar import ClauseSyntaxError, parse
from tscontract.contract.trees import TreeField

if TYPE_CHECKING:
    import sqlglot.expressions as exp
    from lark import Token, Tree

CATALOG_TABLE = "catalog"
BOUND_ATTRIBUTES = ("hard_bounds", "plausibility_bounds")
EQUALITY_ATTRIBUTES = ("unit", "dimension", "quote_currency", "venue", "calendar", "device_zone")

# ---------------------------------------------------------------- cadence


@dataclass(frozen=True)
class Cadence:
    """A cadence clause.

    ``60s within session; no bars outside session``,
    ``per series from catalog; tolerance +/-10% of interval`` or
    ``1 session; stamped at session date``: one point per trading session, stamped at the
    session's open, its close, or 00:00 of the session date in the venue's zone (``session
    date in UTC``: 00:00 UTC of that date).
    """

    text: str
    source: Literal["fixed", "catalog", "irregular", "session", "calendar"]
    interval: Duration | None = None
    within_session: bool = False
    outside_session_forbidden: bool = False
    tolerance_ratio: Decimal | None = None
    tolerance: Duration | None = None
    stamp: Literal["open", "close", "date", "date_utc"] | None = None
    step: CalendarStep | None = None  # a calendar cadence: months per period, anchor, phase

    @property
    def per_session(self) -> bool:
        return self.source == "session"

    @property
    def uses_sessions(self) -> bool:
        """Points are placed in exchange sessions (intraday within a session, or one per session)."""
        return self.within_session or self.per_session

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "source": self.source,
            "interval": self.interval.to_json() if self.interval else None,
            "within_session": self.within_session,
            "outside_session_forbidden": self.outside_session_forbidden,
            "tolerance_ratio": str(self.tolerance_ratio) if self.tolerance_ratio is not None else None,
            "tolerance": self.tolerance.to_json() if self.tolerance else None,
            "stamp": self.stamp,
            **({"calendar": dict(self.step.__dict__)} if self.step else {}),
        }


def parse_cadence(text: str) -> Cadence:
    tree = parse("cadence", text)
    base, *options = tree.children
    assert not isinstance(base, str)  # a rule (a token is a str)
    if base.data == "fixed_cadence":
        interval = _duration(_rule(base.children[0]), text)
        if interval.in_local_days:
            raise ClauseSyntaxError("a cadence is a fixed interval or '1 session', not local days")
        if interval.in_months and len(base.children) > 1:
            raise ClauseSyntaxError("a calendar cadence is not 'within session'; drop it")
        if interval.in_months:
            cadence = Cadence(
                text=text.strip(), source="calendar", interval=interval, step=CalendarStep(interval.months)
            )
        elif interval.on_trading_calendar:
            if interval.amount != 1:
                raise ClauseSyntaxError("a session cadence is one point per session: '1 session'")
            if len(base.children) > 1:
                raise ClauseSyntaxError("one point per session is not 'within session'; drop it")
            cadence = Cadence(text=text.strip(), source="session", interval=interval)
        else:
            cadence = Cadence(
                text=text.strip(), source="fixed", interval=interval, within_session=len(base.children) > 1
            )
    elif base.data == "catalog_cadence":
        cadence = Cadence(text=text.strip(), source="catalog")
    else:
        cadence = Cadence(text=text.strip(), source="irregular")
    seen: set[str] = set()
    for option in options:
        assert not isinstance(option, str)  # a rule (a token is a str)
        kind = "tolerance" if option.data.startswith("tolerance") else option.data
        kind = "anchor" if kind.startswith("anchored") else kind
        if kind in seen:
            raise ClauseSyntaxError(f"cadence states its {kind.replace('_', ' ')} twice", option.meta.start_pos)
        seen.add(kind)
        if option.data in _CALENDAR_OPTIONS:
            cadence = _calendar_option(cadence, option)
        elif option.data == "no_outside_session":
            cadence = replace(cadence, outside_session_forbidden=True)
        elif option.data == "stamped_at":
            if not cadence.per_session:
                raise ClauseSyntaxError("only a '1 session' cadence is stamped at a session", option.meta.start_pos)
            point = str(option.children[0]).lower()
            stamp = cast(Literal["open", "close", "date"], point)  # the grammar's STAMP_POINT words, lowered
            cadence = replace(cadence, stamp="date_utc" if len(option.children) > 1 else stamp)
            if len(option.children) > 1 and point != "date":
                raise ClauseSyntaxError("only the session date is stamped 'in UTC'", option.meta.start_pos)
        elif option.data == "tolerance_ratio":
            ratio = Decimal(str(option.children[0]).rstrip("%")) / 100
            if not 0 <= ratio < 1:
                raise ClauseSyntaxError("a cadence tolerance must be below 100% of the interval", option.meta.start_pos)
            cadence = replace(cadence, tolerance_ratio=ratio)
        else:
            cadence = replace(cadence, tolerance=_duration(_rule(option.children[0]), text, zero=True))
    if cadence.source in ("irregular", "session") and (cadence.tolerance_ratio or cadence.tolerance):
        which = "an irregular" if cadence.source == "irregular" else "a session"
        raise ClauseSyntaxError(f"{which} cadence has no tolerance")
    if cadence.per_session and cadence.stamp is None:
        raise ClauseSyntaxError(
            "say where the point of a session is stamped: '; stamped at session open', 'session close', "
            "'session date' (00:00 in the venue's zone) or 'session date in UTC'"
        )
    if cadence.tolerance is not None and not cadence.tolerance.fixed:
        raise ClauseSyntaxError("a cadence tolerance is a fixed length of time")
    return _calendar_checked(cadence, seen, options)


_CALENDAR_OPTIONS = ("anchored_edge", "anchored_day", "aligned_to")


def _calendar_option(cadence: Cadence, option: Tree[Token]) -> Cadence:
    """``anchored at month end``, ``anchored at day 15``, ``aligned to 2021-07``."""
    if cadence.step is None:
        raise ClauseSyntaxError(
            f"only a calendar cadence (months, quarters, years) is {option.data.split('_')[0]}",
            option.meta.start_pos,
        )
    value = str(option.children[0])
    if option.data == "anchored_edge":
        unit, edge = value.lower().split()
        needed = {"quarter": 3, "year": 12}.get(unit, 1)
        if cadence.step.months % needed:
            raise ClauseSyntaxError(f"a period of {cadence.step.months} month(s) has no {unit} {edge}")
        return replace(cadence, step=replace(cadence.step, anchor=cast(Literal["start", "end"], edge)))
    if option.data == "anchored_day":
        if not 1 <= int(value) <= 31:
            raise ClauseSyntaxError("the anchor day is a day of the month, 1 to 31", option.meta.start_pos)
        return replace(cadence, step=replace(cadence.step, anchor=int(value)))
    return cadence  # the phase follows from the anchor, which may come later (:func:`_calendar_checked`)


def _calendar_checked(cadence: Cadence, seen: set[str], options: list[Tree[Token] | Token]) -> Cadence:
    if cadence.step is None:
        return cadence
    for option in options:
        if not isinstance(option, str) and option.data == "aligned_to":  # a rule (a token is a str)
            step = cadence.step
            try:
                phase = parse_alignment(str(option.children[0]), step.months, step.anchor)
            except ValueError as exc:
                raise ClauseSyntaxError(str(exc), option.meta.start_pos) from None
            cadence = replace(cadence, step=replace(step, phase=phase))
    if cadence.tolerance_ratio is not None:
        raise ClauseSyntaxError("a calendar cadence's tolerance is a fixed length of time ('tolerance +/-12h')")
    if cadence.tolerance is not None and cadence.tolerance.seconds >= 14 * 86400:
        raise ClauseSyntaxError("a calendar cadence's tolerance is below 14 days (half the shortest month)")
    if cadence.outside_session_forbidden:
        raise ClauseSyntaxError("a calendar cadence has no sessions; drop 'no bars outside session'")
    if "anchor" not in seen:
        raise ClauseSyntaxError(
            "say where each period's point stands: '; anchored at month start', 'month end' (the period's last "
            "day: quarter end for quarters) or 'day 15'"
        )
    return cadence


# ---------------------------------------------------------------- timezone rule


@dataclass(frozen=True)
class TimezoneRule:
    """``UTC instant; session boundaries defined per venue calendar``."""

    text: str
    utc_instant: bool = True
    sessions: Literal["venue", "named"] | None = None
    session_calendar: str | None = None
    device_zone_in_catalog: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "utc_instant": self.utc_instant,
            "sessions": self.sessions,
            "session_calendar": self.session_calendar,
            "device_zone_in_catalog": self.device_zone_in_catalog,
        }


def parse_timezone(text: str) -> TimezoneRule:
    tree = parse("timezone", text)
    rule = TimezoneRule(text=text.strip())
    for note in tree.children[1:]:
        assert not isinstance(note, str)  # a rule (a token is a str)
        if note.data == "venue_sessions":
            rule = replace(rule, sessions="venue")
        elif note.data == "named_calendar":
            rule = replace(rule, sessions="named", session_calendar=str(note.children[0]))
        else:
            rule = replace(rule, device_zone_in_catalog=True)
    return rule


# ---------------------------------------------------------------- row clauses


@dataclass(frozen=True)
class CatalogRef:
    """``catalog hard_bounds for series_id``: a catalog attribute looked up by a key column."""

    attribute: str
    key: str


RowClauseKind = Literal[
    "comparison",
    "null_rule",
    "null_only_when",
    "catalog_bound",
    "catalog_equals",
    "membership",
    "pattern",
    "expression",
]


@dataclass(frozen=True)
class RowClause:
    """A clause every row must satisfy, with its text exactly as written."""

    text: str
    kind: RowClauseKind
    # built when read: a clause read from the cache holds it unbuilt (contract/trees.py)
    predicate: TreeField[exp.Expression] = TreeField()  # noqa: RUF009 (a descriptor: one per class)
    subject: str | None = None
    catalog: CatalogRef | None = None
    columns: tuple[str, ...] = field(default=())
    severity: Literal["error", "warning"] = "error"  # a failing warning is reported, never rejects data
    max_failing: Share | None = None  # the check fails only when more than this share of rows fails

    @classmethod
    def __get_pydantic_core_schema__(cls, source: object, handler: object) -> Any:
        """A model holds a clause as is: pydantic never walks its tree (nor imports sqlglot to type it)."""
        from pydantic_core import core_schema

        return core_schema.is_instance_schema(cls)

    @property
    def sql(self) -> str:
        return self.predicate.sql(dialect="duckdb")

    def qualified(self, data_alias: str) -> exp.Expression:
        """The predicate with every data column qualified by ``data_alias``.

        Needed where the catalog relation is joined and shares column names
        with the data (``unit = catalog.unit``).
        """
        import sqlglot.expressions as exp  # sqlglot: only where a tree is read

        predicate = self.predicate.copy()
        for column in predicate.find_all(exp.Column):
            if not column.table:
                column.set("table", exp.to_identifier(data_alias))
        return predicate

    def to_json(self) -> dict[str, object]:
        shown: dict[str, object] = {
            "text": self.text,
            "kind": self.kind,
            "sql": self.sql,
            "subject": self.subject,
            "columns": list(self.columns),
            "catalog": {"attribute": self.catalog.attribute, "key": self.catalog.key} if self.catalog else None,
            "severity": self.severity,
        }
        return shown | ({"max_failing": self.max_failing.text} if self.max_failing else {})


@dataclass(frozen=True)
class Share:
    """``max_failing: "0.1%"``: the share of rows a check tolerates failing (``ratio`` 0.001)."""

    text: str
    ratio: Decimal

    def to_json(self) -> str:
        return self.text


def parse_share(value: object) -> Share:
    """``"0.1%"``, ``"5%"``: a percentage from 0 to 100, written as text with its ``%``."""
    if isinstance(value, Share):
        return value
    if not isinstance(value, str) or not re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*%\s*", value):
        raise ValueError(f"max_failing is a percentage of rows written with %, e.g. '0.1%'; got {value!r}")
    ratio = Decimal(value.strip().rstrip("%").strip()) / 100
    if ratio > 1:
        raise ValueError(f"max_failing {value!r} is more than 100% of rows")
    return Share(text=value.strip(), ratio=ratio)
