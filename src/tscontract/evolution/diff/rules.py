"""How a change to one key counts: a direction (tighter, looser, ...) and the verdict it gives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from tscontract.contract.durations import Duration
from tscontract.evolution.diff.report import Level

Compatible = Literal["yes", "notice", "no"]
Direction = Literal["tighter", "looser", "stronger", "changed", "text", "forbidden"]
Compare = Callable[[Any, Any], Direction]

_VERDICTS: dict[Direction, tuple[str, Compatible, Level, str]] = {
    "tighter": ("tighten", "no", "major", "major version; data or producers valid before may fail"),
    "looser": ("relax", "notice", "minor", "minor version, notice period: consumers are promised less"),
    "stronger": ("strengthen", "yes", "minor", "minor version: consumers are promised more"),
    "changed": ("change", "no", "major", "major version"),
    "text": ("change", "yes", "patch", "patch version"),
    "forbidden": ("change", "no", "major", "never on the same name: declare a new one"),
}


@dataclass(frozen=True)
class Rule:
    """How a change of one contract key is classified: ``<verb>_<topic>`` by ``compare``'s direction.

    ``compare(old, new)`` gets the two values as parsed (``None`` where absent; for a whole
    section, only when it is added or removed). Without ``compare`` the key is a section whose
    keys are classified one by one, or one that :class:`_Differ`'s own methods classify.
    """

    topic: str = ""  # '' = the key's own name
    compare: Compare | None = None
    action: str | None = None
    kind: str | None = None  # one kind whatever the direction
    handled: bool = False


def _text(old: Any, new: Any) -> Direction:
    return "text"


def _changed(old: Any, new: Any) -> Direction:
    return "changed"


def _forbidden(old: Any, new: Any) -> Direction:
    return "forbidden"


def _added_is_tighter(old: Any, new: Any) -> Direction:
    return "tighter" if old is None else "looser" if new is None else "changed"


def _added_is_stronger(old: Any, new: Any) -> Direction:
    return "stronger" if old is None else "looser" if new is None else "changed"


def _more_is_tighter(old: Any, new: Any) -> Direction:
    if not all(isinstance(v, int | Decimal) and not isinstance(v, bool) for v in (old, new)):
        return "changed"
    return "tighter" if new > old else "looser" if new < old else "text"


def _span(value: Duration) -> tuple[str, Decimal]:
    if value.in_months:
        return ("months", Decimal(value.months))
    return ("fixed", value.seconds) if value.fixed else (f"{value.calendar} {value.unit}", value.amount)


def _shorter_is_tighter(old: Duration | None, new: Duration | None) -> Direction:
    """A limit: ``None`` is no limit. Lengths on different clocks (hours, trading days) have no order."""
    if old is None or new is None:
        return _added_is_tighter(old, new)
    (a_kind, a), (b_kind, b) = _span(old), _span(new)
    if a_kind != b_kind:
        return "changed"
    return "tighter" if b < a else "looser" if b > a else "text"


def _longer_is_stronger(old: Duration | None, new: Duration | None) -> Direction:
    """A promised period (a deprecation notice): ``None`` promises none."""
    direction = _shorter_is_tighter(old, new)
    return {"tighter": "looser", "looser": "stronger"}.get(direction, direction)  # type: ignore[return-value]


def _later_is_stronger(old: str | None, new: str | None) -> Direction:
    """``removal_after``: a later date is longer notice; no date means no removal is planned."""
    if old is None or new is None:
        return "looser" if old is None else "stronger"
    return "stronger" if new > old else "looser" if new < old else "text"


def _fewer_is_tighter(old: Any, new: Any) -> Direction:
    """A list of what is allowed (gap types): fewer entries allow less."""
    a, b = set(old or ()), set(new or ())
    return "tighter" if b < a else "looser" if b > a else "changed" if a != b else "text"


def _listed_is_tighter(old: Any, new: Any) -> Direction:
    """A list of who or why where an empty list allows anyone (revision ``who``, ``reasons``)."""
    a, b = set(old or ()), set(new or ())
    if not a or not b:
        return "tighter" if not a else "looser"
    return _fewer_is_tighter(a, b)


def _more_is_stronger(old: Any, new: Any) -> Direction:
    """Aliases: more names resolve; a dropped alias breaks readers of that name."""
    a, b = set(old or ()), set(new or ())
    return "stronger" if b > a else "changed" if a != b else "text"


def _ranked(*order: str) -> Compare:
    """Values from strictest to loosest; ``None`` is the first (the default)."""

    def compare(old: str | None, new: str | None) -> Direction:
        a, b = order.index(old or order[0]), order.index(new or order[0])
        return "tighter" if b < a else "looser" if b > a else "text"

    return compare


_MODE_GUARANTEES: dict[str, set[str]] = {
    "NONE": set(),
    "BACKWARD": {"backward"},
    "FORWARD": {"forward"},
    "FULL": {"backward", "forward"},
    "BACKWARD_TRANSITIVE": {"backward", "backward_all"},
    "FORWARD_TRANSITIVE": {"forward", "forward_all"},
    "FULL_TRANSITIVE": {"backward", "forward", "backward_all", "forward_all"},
}


def _mode(old: str, new: str) -> Direction:
    """A registry mode that guarantees more is stronger; BACKWARD and FORWARD have no order."""
    a, b = _MODE_GUARANTEES[old], _MODE_GUARANTEES[new]
    return "stronger" if b > a else "looser" if b < a else "changed"


def _kept_copy(old: str | None, new: str | None) -> Direction:
    """``duplicates.keep``: ``all`` (absent) rejects every copy; keeping one publishes what was rejected."""
    a, b = old or "all", new or "all"
    return "text" if a == b else "tighter" if b == "all" else "looser" if a == "all" else "changed"


def _copy_order(old: str | None, new: str | None) -> Direction:
    """``duplicates.by``: set or dropped with ``keep`` (classified there); another column keeps other copies."""
    return "changed" if old is not None and new is not None and old != new else "text"


def _unique_strength(value: Any) -> int:
    """``unique``: absent or false 0, a warning 1, an error (``true``) 2."""
    if value is None or value is False:
        return 0
    return 2 if value is True or value.severity == "error" else 1


def _unique(old: Any, new: Any) -> Direction:
    """``unique`` stated, dropped or switched between ``true`` and its options."""
    a, b = _unique_strength(old), _unique_strength(new)
    if a != b:
        return "tighter" if b > a else "looser"
    return _tolerated(getattr(old, "max_failing", None), getattr(new, "max_failing", None))


def _tolerated(old: Any, new: Any) -> Direction:
    """``max_failing``: a larger share of failing rows tolerated is looser; none tolerates nothing."""
    a = old.ratio if old is not None else Decimal(0)
    b = new.ratio if new is not None else Decimal(0)
    return "looser" if b > a else "tighter" if b < a else "text"


def _bound(lower: bool) -> Compare:
    """``row_count.min`` / ``.max``: stating a bound is tighter, raising a min or lowering a max too."""

    def compare(old: int | None, new: int | None) -> Direction:
        if old is None or new is None:
            return _added_is_tighter(old, new)
        return "text" if old == new else "tighter" if (new > old) == lower else "looser"

    return compare


def _step_limit(old: Decimal | None, new: Decimal | None) -> Direction:
    """``step`` limits: lower is tighter; one rule swapped for the other (max_abs, max_mad) is changed."""
    if old is None or new is None:
        return "changed"
    return "text" if old == new else "tighter" if new < old else "looser"


def _sql_checks(old: Any, new: Any) -> Direction:
    """SQL checks by name: one added is tighter, one dropped (or made a warning) looser, one rewritten changed."""
    a = {c.name: c for c in old or ()}
    b = {c.name: c for c in new or ()}
    kept = set(a) & set(b)
    same = {"severity": "error"}  # compared apart from severity, which is judged below
    if any(a[n].model_copy(update=same) != b[n].model_copy(update=same) for n in kept):
        return "changed"
    tighter = set(b) - set(a) or any(a[n].severity == "warning" and b[n].severity == "error" for n in kept)
    looser = set(a) - set(b) or any(a[n].severity == "error" and b[n].severity == "warning" for n in kept)
    return "changed" if tighter and looser else "tighter" if tighter else "looser" if looser else "text"
