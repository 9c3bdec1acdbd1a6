"""Contract diff: every change between two versions, classified by the seed's evolution table.

| change                                   | compatible?     | required                    |
|------------------------------------------|-----------------|-----------------------------|
| add nullable field                       | yes             | minor                       |
| widen a range or relax nullability       | yes, with notice| minor                       |
| rename a field                           | no (alias: yes) | major (minor with aliases)  |
| change unit or scale                     | never on the same field: a new field (pressure_kpa) |
| change precision downward, type, cadence, timezone convention | no | major          |
| tighten a range or nullability           | no              | major                       |
| change the natural key                   | no              | a new dataset (new name)    |

The declared version bump must be at least the largest required one; removing a
field needs a deprecation whose notice period has run out.

Every other key of the contract model is classified by :data:`CLASSIFICATION`, one line
per key, by the direction of the change: *tighter* (a batch or producer valid before may
now fail: not compatible, major), *looser* (consumers are promised less: compatible with
notice, minor), *stronger* (consumers are promised more, nothing valid before fails:
compatible, minor), *changed* (a different meaning, no order: major), *text* (wording
only: patch) and *forbidden* (never on the same name). A test walks the model and fails
on any key without a line here; a key that somehow has none is still reported, as major.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, Literal

import sqlglot.expressions as exp
from pydantic import BaseModel, ValidationError

from tscontract.contract.clauses import Duration, RowClause
from tscontract.contract.model import SEMVER, Contract, FieldSpec, SeriesIdentity
from tscontract.errors import InputError

Level = Literal["none", "patch", "minor", "major", "new_dataset"]
LEVELS: tuple[Level, ...] = ("none", "patch", "minor", "major", "new_dataset")


@dataclass(frozen=True)
class Change:
    kind: str
    path: str
    old: str | None
    new: str | None
    compatible: Literal["yes", "notice", "no"]
    required: Level
    action: str
    forbidden: bool = False  # never allowed, whatever the version bump

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "old": self.old,
            "new": self.new,
            "compatible": self.compatible,
            "required": self.required,
            "action": self.action,
            "forbidden": self.forbidden,
        }


@dataclass
class DiffReport:
    old_version: str
    new_version: str
    contract: str
    changes: list[Change] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def required(self) -> Level:
        return max((c.required for c in self.changes), key=LEVELS.index, default="none")

    @property
    def declared(self) -> Level:
        return declared_bump(self.old_version, self.new_version)

    @property
    def version_down(self) -> bool:
        return version_goes_down(self.old_version, self.new_version)

    @property
    def declared_label(self) -> str:
        """The declared bump in words: ``minor``, or ``version goes down``."""
        return "version goes down" if self.version_down else self.declared

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {
            "contract": self.contract,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "declared_bump": self.declared,
            "version_down": self.version_down,
            "required_bump": self.required,
            "ok": self.ok,
            "problems": self.problems,
            "changes": [c.to_json() for c in self.changes],
        }


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in SEMVER.match(version).groups()[:3])  # type: ignore[union-attr]


def version_goes_down(old: str, new: str) -> bool:
    """``3.1.0 -> 3.0.0``: a later version numbered lower."""
    return _release(new) < _release(old)


def declared_bump(old: str, new: str) -> Level:
    a, b = _release(old), _release(new)
    if b[0] != a[0]:
        return "major" if b[0] > a[0] else "none"
    if b[1] != a[1]:
        return "minor" if b[1] > a[1] else "none"
    return "patch" if b[2] > a[2] else "none"


# ------------------------------------------------------------ how a change to one key counts

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


HANDLED = Rule(handled=True)  # classified by _Differ's own methods (renames, clauses, key, policy)
SECTION = Rule()  # a section or map: its keys are classified one by one
TEXT = Rule(compare=_text)  # wording only: patch

# Every key a contract can state, by path (``*`` = a field or unit name). One line per key.
CLASSIFICATION: dict[str, Rule] = {
    "contract": HANDLED,  # another name is a new dataset
    "version": HANDLED,  # the declared bump itself
    "owner": TEXT,
    "source": TEXT,
    "description": TEXT,
    "note": TEXT,
    "series": HANDLED,  # the column as used (key minus time and revision when not stated)
    "series.column": HANDLED,
    "series.scheme": Rule("series_scheme", _changed, "major version: series ids follow another scheme"),
    "series.pattern": Rule("series_pattern", _added_is_tighter),
    "series.description": TEXT,
    "series.note": TEXT,
    "key": HANDLED,  # another key is a new dataset
    "time": SECTION,
    "time.column": Rule("time_column", _changed),
    "time.precision": Rule("time_precision", _changed),
    "time.timezone": Rule("timezone", _changed, "major version; usually a sign the original was wrong"),
    "time.cadence": Rule("cadence", _changed, "major version or a new series id"),
    "time.ingest_column": Rule("ingest_column", _changed),
    "time.calendar": Rule("calendar", _changed, "major version: sessions and trading days follow another calendar"),
    "time.description": TEXT,
    "time.note": TEXT,
    "fields": SECTION,
    "fields.*": HANDLED,  # added, removed, renamed
    "fields.*.type": HANDLED,
    "fields.*.nullable": HANDLED,
    "fields.*.unit": HANDLED,
    "fields.*.dimension": HANDLED,
    "fields.*.value": HANDLED,
    "fields.*.constraint": HANDLED,
    "fields.*.unique": Rule("unique", _unique),
    "fields.*.unique.severity": Rule("unique", _ranked("error", "warning")),  # a warning rejects nothing
    "fields.*.unique.max_failing": Rule("unique", _tolerated),
    "fields.*.unique.description": TEXT,
    "fields.*.unique.note": TEXT,
    "fields.*.step": Rule("step", _added_is_tighter),
    "fields.*.step.max_abs": Rule("step", _step_limit),  # a smaller jump allowed is tighter
    "fields.*.step.max_mad": Rule("step", _step_limit),
    "fields.*.step.min_mad": Rule("step", lambda old, new: _step_limit(old or Decimal(0), new or Decimal(0))),
    "fields.*.step.window": Rule("step", _changed),  # other neighbours: neither tighter nor looser
    "fields.*.step.max_gap": Rule("step", _changed),
    "fields.*.step.severity": Rule("step", _ranked("error", "warning")),
    "fields.*.step.description": TEXT,
    "fields.*.step.note": TEXT,
    "fields.*.default": Rule("default", _changed, "major version: readers fill a missing value differently"),
    "fields.*.aliases": Rule("aliases", _more_is_stronger),
    "fields.*.deprecated": HANDLED,
    "fields.*.deprecated.since": TEXT,
    "fields.*.deprecated.removal_after": Rule("deprecation", _later_is_stronger),
    "fields.*.deprecated.replacement": TEXT,
    "fields.*.deprecated.note": TEXT,
    "fields.*.description": TEXT,
    "fields.*.note": TEXT,
    "units": SECTION,
    "units.*": Rule("units", _text, "patch version: fields that use a unit are classified at their own unit"),
    "units.*.dimension": Rule("unit_dimension", _forbidden, "never on the same unit: declare a new unit name"),
    "units.*.definition": Rule("unit_definition", _forbidden, "never on the same unit: declare a new unit name"),
    "units.*.description": TEXT,
    "units.*.note": TEXT,
    "invariants": HANDLED,  # matched by columns; widened or tightened bounds
    "invariants.*": HANDLED,
    "invariants.*.clause": HANDLED,
    "invariants.*.severity": HANDLED,  # a warning rejects nothing: error -> warning is looser
    "invariants.*.max_failing": HANDLED,  # a larger share of failing rows tolerated is looser
    "invariants.*.description": TEXT,
    "invariants.*.note": TEXT,
    "revision_policy": HANDLED,  # added, removed, allowed
    "revision_policy.allowed": HANDLED,
    "revision_policy.window": Rule("revision_window", _shorter_is_tighter),
    "revision_policy.reasons": Rule("", _listed_is_tighter, "tell consumers", kind="change_revision_reasons"),
    "revision_policy.who": Rule("revision_who", _listed_is_tighter),
    "revision_policy.notification": Rule("revision_notification", _added_is_stronger),
    "revision_policy.description": TEXT,
    "revision_policy.note": TEXT,
    "duplicates": SECTION,  # absent = keep: all
    "duplicates.keep": Rule("duplicates_keep", _kept_copy),
    "duplicates.by": Rule("duplicates_by", _copy_order),
    "duplicates.description": TEXT,
    "duplicates.note": TEXT,
    "row_count": Rule("row_count", _added_is_tighter),
    "row_count.min": Rule("row_count", _bound(lower=True)),
    "row_count.max": Rule("row_count", _bound(lower=False)),
    "row_count.severity": Rule("row_count", _ranked("error", "warning")),
    "row_count.description": TEXT,
    "row_count.note": TEXT,
    "sql_checks": Rule("sql_checks", _sql_checks),  # the list, by name
    "sql_checks.*": HANDLED,
    "sql_checks.*.name": HANDLED,
    "sql_checks.*.sql": HANDLED,
    "sql_checks.*.must_be": HANDLED,
    "sql_checks.*.must_be_less_than": HANDLED,
    "sql_checks.*.must_be_greater_than": HANDLED,
    "sql_checks.*.must_be_between": HANDLED,
    "sql_checks.*.severity": HANDLED,
    "sql_checks.*.description": HANDLED,
    "sql_checks.*.note": HANDLED,
    "completeness": Rule("completeness", _added_is_tighter),
    "completeness.window": Rule("completeness", _changed),
    "completeness.expected_count": Rule("completeness", _more_is_tighter),
    "completeness.min_ratio": Rule("completeness", _more_is_tighter),
    "completeness.allowed_gaps": Rule("completeness", _fewer_is_tighter),
    "completeness.description": TEXT,
    "completeness.note": TEXT,
    "freshness": Rule("freshness", _added_is_tighter),
    "freshness.max_age": Rule("freshness", _shorter_is_tighter),
    "freshness.column": Rule("freshness", _changed),
    "freshness.clock": Rule("freshness", _ranked("wall", "session")),  # session time passes slower
    "freshness.description": TEXT,
    "freshness.note": TEXT,
    "evolution": SECTION,  # absent = the defaults
    "evolution.compatibility": Rule("compatibility", _mode),
    "evolution.deprecation_notice": Rule("deprecation_notice", _longer_is_stronger),
    "evolution.compatibility_reason": TEXT,
    "evolution.description": TEXT,
    "evolution.note": TEXT,
    "provenance_required": HANDLED,  # more required columns break old data
    "calendars": SECTION,  # sessions as local weekly hours: other hours are other sessions
    "calendars.*": Rule("calendar", _changed, "major version: sessions and trading days follow another calendar"),
    "calendars.*.zone": Rule("calendar_zone", _changed, "major version: sessions follow another clock"),
    "calendars.*.hours": Rule("calendar_hours", _changed, "major version: sessions open at other hours"),
    "calendars.*.holidays": SECTION,
    "calendars.*.holidays.dates": Rule("calendar_holidays", _changed, "major version: other days have no session"),
    "calendars.*.holidays.country": Rule("calendar_holidays", _changed, "major version: other days have no session"),
    "calendars.*.holidays.subdivision": Rule(
        "calendar_holidays", _changed, "major version: other days have no session"
    ),
    "calendars.*.holidays.description": TEXT,
    "calendars.*.holidays.note": TEXT,
    "calendars.*.description": TEXT,
    "calendars.*.note": TEXT,
}


def rule_for(path: str) -> Rule | None:
    """The rule of a key path (``fields.volume.unit`` or its pattern ``fields.*.unit``)."""
    if path in CLASSIFICATION:
        return CLASSIFICATION[path]
    parts = path.split(".")
    for pattern, rule in CLASSIFICATION.items():
        names = pattern.split(".")
        if len(names) == len(parts) and all(n in ("*", p) for n, p in zip(names, parts, strict=True)):
            return rule
    return None


def _plain(value: Any) -> Any:
    """A value as compared: clauses by their text, lists as lists."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    text = getattr(value, "text", None)
    return text if isinstance(text, str) and not isinstance(value, str) else value


def _show(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, BaseModel):
        shown = {
            name: _show(getattr(value, name))
            for name, info in type(value).model_fields.items()
            if not info.exclude and name not in ("description", "note") and getattr(value, name) not in (None, (), [])
        }
        return "{" + ", ".join(f"{k}: {v}" for k, v in shown.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(str(_show(v)) for v in value) + "]"
    return str(_plain(value))


def _defaults(model: type[BaseModel]) -> BaseModel | None:
    """A section that states nothing, where every key has a default (``evolution``)."""
    try:
        return model()
    except ValidationError:
        return None


def _type_text(spec: FieldSpec) -> str:
    return spec.type.text


class _Differ:
    def __init__(self, old: Contract, new: Contract, today: date | None) -> None:
        self.old, self.new, self.today = old, new, today
        self.changes: list[Change] = []
        self.problems: list[str] = []

    def add(
        self,
        kind: str,
        path: str,
        old: object,
        new: object,
        compatible: Literal["yes", "notice", "no"],
        required: Level,
        action: str,
        forbidden: bool = False,
    ) -> None:
        self.changes.append(
            Change(
                kind,
                path,
                None if old is None else str(old),
                None if new is None else str(new),
                compatible,
                required,
                action,
                forbidden,
            )
        )

    def run(self) -> list[Change]:
        old, new = self.old, self.new
        if old.contract != new.contract:
            self.add(
                "rename_contract",
                "contract",
                old.contract,
                new.contract,
                "no",
                "new_dataset",
                "a new dataset: a new contract, not a new version",
            )
        if tuple(old.key) != tuple(new.key):
            self.add(
                "change_key",
                "key",
                list(old.key),
                list(new.key),
                "no",
                "new_dataset",
                "changing the natural key is a new dataset",
            )
        self.fields()
        self.series()
        self.invariants()
        self.policy()
        self.walk(old, new, (), ())
        return self.changes

    # ------------------------------------------------------------ every other key, by CLASSIFICATION
    def walk(self, old: Any, new: Any, path: tuple[str, ...], pattern: tuple[str, ...]) -> None:
        """Compare two values of the same key; sections key by key, maps name by name."""
        rule = rule_for(".".join(pattern)) if pattern else SECTION
        models = isinstance(old, BaseModel) and isinstance(new, BaseModel)
        if rule is not None and rule.handled and not models:
            return
        model = old if isinstance(old, BaseModel) else new if isinstance(new, BaseModel) else None
        if model is not None:
            if not models:
                stand_in = _defaults(type(model)) if pattern[-1] != "*" else None
                if stand_in is None:
                    self.classify(rule, path, old, new)
                    return
                old, new = (stand_in if old is None else old), (stand_in if new is None else new)
            for name, info in type(model).model_fields.items():
                if not info.exclude:
                    self.walk(getattr(old, name), getattr(new, name), (*path, name), (*pattern, name))
        elif (isinstance(old, dict) or isinstance(new, dict)) and (rule is None or rule.compare is None):
            before, after = old or {}, new or {}
            for name in [*before, *(n for n in after if n not in before)]:
                self.walk(before.get(name), after.get(name), (*path, name), (*pattern, "*"))
        elif _plain(old) != _plain(new):
            self.classify(rule, path, old, new)

    def classify(self, rule: Rule | None, path: tuple[str, ...], old: Any, new: Any) -> None:
        rule = rule or Rule(compare=_changed)  # unclassified: never ignored, counted as breaking
        if rule.compare is None:
            return
        direction = rule.compare(old, new)
        verb, compatible, required, action = _VERDICTS[direction]
        self.add(
            rule.kind or f"{verb}_{rule.topic or path[-1]}",
            ".".join(path),
            _show(old),
            _show(new),
            compatible,
            required,
            rule.action or action,
            forbidden=direction == "forbidden",
        )

    def series(self) -> None:
        """The series column as the engine groups by it; scheme and pattern by CLASSIFICATION."""
        before, after = self.old.series_column, self.new.series_column
        if before != after:
            self.add(
                "change_series_column",
                "series.column",
                before,
                after,
                "no",
                "major",
                "major version: points are grouped into series by another column",
            )
        old, new = self.old.series, self.new.series
        if (old is None) != (new is None):
            stand_in = SeriesIdentity(column="")
            self.walk(old or stand_in, new or stand_in, ("series",), ("series",))

    # ------------------------------------------------------------ fields
    def fields(self) -> None:
        old_fields, new_fields = self.old.declared_fields, self.new.declared_fields
        renamed_from = {
            alias: name
            for name, spec in new_fields.items()
            for alias in spec.aliases
            if alias in old_fields and alias not in new_fields
        }
        for name, spec in new_fields.items():
            if name in old_fields:
                self.field(name, old_fields[name], spec)
            elif name in renamed_from.values():
                source = next(a for a, n in renamed_from.items() if n == name)
                self.add(
                    "rename_field",
                    f"fields.{name}",
                    source,
                    name,
                    "yes",
                    "minor",
                    f"renamed with aliases: [{source}]; readers resolve the old name",
                )
                self.field(name, old_fields[source], spec, old_name=source)
            elif self.new.is_nullable(name):
                self.add(
                    "add_nullable_field",
                    f"fields.{name}",
                    None,
                    _type_text(spec),
                    "yes",
                    "minor",
                    "minor version, changelog entry",
                )
            else:
                self.add(
                    "add_required_field",
                    f"fields.{name}",
                    None,
                    _type_text(spec),
                    "no",
                    "major",
                    "major version: data written before lacks the field",
                )
        for name, spec in old_fields.items():
            if name in new_fields or name in renamed_from:
                continue
            self.removed(name, spec)

    def removed(self, name: str, spec: FieldSpec) -> None:
        guess = self.rename_guess(name, spec)
        if guess is not None:
            self.add(
                "rename_field",
                f"fields.{name}",
                name,
                guess,
                "no",
                "major",
                f"major version, or declare aliases: [{name}] on {guess} (or a dual-write period)",
            )
            return
        self.add(
            "remove_field",
            f"fields.{name}",
            _type_text(spec),
            None,
            "no",
            "major",
            "major version after the deprecation notice",
        )
        deprecation = spec.deprecated
        notice = (
            self.old.evolution.deprecation_notice.text
            if self.old.evolution and self.old.evolution.deprecation_notice
            else None
        )
        if deprecation is None:
            self.problem(
                f"fields.{name} removed without a deprecation in {self.old.version}"
                + (f" (deprecation_notice: {notice})" if notice else "")
            )
        elif (
            deprecation.removal_after
            and self.today is not None
            and self.today < date.fromisoformat(deprecation.removal_after)
        ):
            self.problem(f"fields.{name} removed before its removal_after date {deprecation.removal_after}")

    def rename_guess(self, name: str, spec: FieldSpec) -> str | None:
        """A new field of the same type and unit that replaced a removed one: a rename without aliases."""
        new_fields = self.new.declared_fields
        candidates = [
            n
            for n, s in new_fields.items()
            if n not in self.old.declared_fields and s.type == spec.type and s.unit == spec.unit and not s.aliases
        ]
        return candidates[0] if len(candidates) == 1 else None

    def field(self, name: str, old: FieldSpec, new: FieldSpec, old_name: str | None = None) -> None:
        path = f"fields.{name}"
        old_name = old_name or name
        if old.unit != new.unit:
            self.add(
                "change_unit",
                f"{path}.unit",
                old.unit,
                new.unit,
                "no",
                "major",
                "never on the same field: add a new field named for its unit (pressure_kpa beside pressure_bar)",
                forbidden=True,
            )
        if old.dimension != new.dimension:
            self.add(
                "change_dimension",
                f"{path}.dimension",
                old.dimension,
                new.dimension,
                "no",
                "major",
                "a new field",
                forbidden=True,
            )
        ot, nt = old.type, new.type
        if ot.kind == "decimal" and nt.kind == "decimal":
            if ot.scale != nt.scale:
                self.add(
                    "change_scale",
                    f"{path}.type",
                    ot.text,
                    nt.text,
                    "no",
                    "major",
                    "never on the same field: a new field",
                    forbidden=True,
                )
            elif (nt.precision or 0) < (ot.precision or 0):
                self.add("narrow_precision", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
            elif (nt.precision or 0) > (ot.precision or 0):
                self.add(
                    "widen_precision",
                    f"{path}.type",
                    ot.text,
                    nt.text,
                    "notice",
                    "minor",
                    "minor version, notice period",
                )
        elif ot.kind == "enum" and nt.kind == "enum":
            lost = [m for m in ot.members if m not in nt.members]
            gained = [m for m in nt.members if m not in ot.members]
            if lost:
                self.add("remove_enum_member", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
            if gained:
                self.add(
                    "add_enum_member",
                    f"{path}.type",
                    ot.text,
                    nt.text,
                    "notice",
                    "minor",
                    "minor version, notice period: consumers meet a new value",
                )
        elif ot.kind == "int" and nt.kind == "int" and ot.bits != nt.bits:
            wider = (nt.bits or 64) > (ot.bits or 64)
            self.add(
                "widen_type" if wider else "narrow_type",
                f"{path}.type",
                ot.text,
                nt.text,
                "notice" if wider else "no",
                "minor" if wider else "major",
                "minor version, notice period" if wider else "major version",
            )
        elif ot.kind == "timestamp" and nt.kind == "timestamp" and ot.time_unit != nt.time_unit:
            self.add("change_time_precision", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
        elif ot != nt:
            self.add("change_type", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
        was, now = self.old.is_nullable(old_name), self.new.is_nullable(name)
        if was != now:
            if now:
                self.add(
                    "relax_nullability",
                    f"{path}.nullable",
                    "false",
                    "true",
                    "notice",
                    "minor",
                    "minor version, notice period",
                )
            else:
                self.add(
                    "tighten_nullability",
                    f"{path}.nullable",
                    "true",
                    "false",
                    "no",
                    "major",
                    "major version; existing data may fail",
                )
        if old.has_value != new.has_value or (old.has_value and old.value != new.value):
            self.add(
                "change_fixed_value",
                f"{path}.value",
                old.value if old.has_value else None,
                new.value if new.has_value else None,
                "no" if new.has_value else "notice",
                "major" if new.has_value else "minor",
                "major version" if new.has_value else "minor version",
            )
        oc = self.old.constraints.get(old_name)
        nc = self.new.constraints.get(name)
        if (oc.text if oc else None) != (nc.text if nc else None):
            self.clause_change(f"{path}.constraint", oc, nc)
        if old.deprecated is None and new.deprecated is not None:
            self.add(
                "deprecate_field",
                f"{path}.deprecated",
                None,
                new.deprecated.since,
                "yes",
                "minor",
                "minor version; the field may be removed after the notice",
            )
        elif old.deprecated is not None and new.deprecated is None:
            self.add(
                "undeprecate_field",
                f"{path}.deprecated",
                old.deprecated.since,
                None,
                "yes",
                "minor",
                "minor version: the field stays",
            )

    # ------------------------------------------------------------ invariants, policies
    def invariants(self) -> None:
        old = {c.text: c for c in self.old.invariants}
        new = {c.text: c for c in self.new.invariants}
        gone = [c for t, c in old.items() if t not in new]
        came = [c for t, c in new.items() if t not in old]
        for before in list(gone):
            match = next((after for after in came if after.columns == before.columns), None)
            if match is not None:
                gone.remove(before)
                came.remove(match)
                self.clause_change("invariants", before, match)
        for before in gone:
            self.clause_change("invariants", before, None)
        for after in came:
            self.clause_change("invariants", None, after)
        for text in [t for t in new if t in old and _severity(old[t]) != _severity(new[t])]:
            warning = _severity(new[text]) == "warning"
            self.add(
                "relax_invariant_severity" if warning else "tighten_invariant_severity",
                "invariants",
                f"{text} ({_severity(old[text])})",
                f"{text} ({_severity(new[text])})",
                "notice" if warning else "no",
                "minor" if warning else "major",
                "minor version, notice period: a warning rejects nothing"
                if warning
                else "major version; existing data may fail",
            )
        for text in [t for t in new if t in old and old[t].max_failing != new[t].max_failing]:
            before, after = old[text].max_failing, new[text].max_failing
            looser = _tolerated(before, after) == "looser"
            self.add(
                "relax_invariant_threshold" if looser else "tighten_invariant_threshold",
                "invariants",
                f"{text} (max_failing {before.text if before else 'none'})",
                f"{text} (max_failing {after.text if after else 'none'})",
                "notice" if looser else "no",
                "minor" if looser else "major",
                "minor version, notice period" if looser else "major version; existing data may fail",
            )

    def clause_change(self, path: str, before: RowClause | None, after: RowClause | None) -> None:
        if _severity(after) == "warning":  # reports, never rejects: nothing valid before fails
            relaxed = _severity(before) == "error"  # an error clause became a warning
            kind = "relax_range" if relaxed else "add_warning" if before is None else "change_warning"
            self.add(
                kind,
                path,
                before.text if before else None,
                after.text if after else None,
                "notice" if relaxed else "yes",
                "minor",
                "minor version: a warning reports, rejects nothing",
            )
        elif after is None and _severity(before) == "warning":
            self.add("remove_warning", path, before.text if before else None, None, "notice", "minor", "minor version")
        elif before is None and after is not None:
            self.add("tighten_range", path, None, after.text, "no", "major", "major version; existing data may fail")
        elif after is None and before is not None:
            self.add("widen_range", path, before.text, None, "notice", "minor", "minor version, notice period")
        elif before is not None and after is not None:
            direction = _bound_direction(before, after)
            if direction == "wider":
                self.add(
                    "widen_range", path, before.text, after.text, "notice", "minor", "minor version, notice period"
                )
            else:
                self.add(
                    "tighten_range" if direction == "tighter" else "change_clause",
                    path,
                    before.text,
                    after.text,
                    "no",
                    "major",
                    "major version; existing data may fail",
                )

    def policy(self) -> None:
        op, np_ = self.old.revision_policy, self.new.revision_policy
        if (op is None) != (np_ is None) or (op and np_ and op.allowed != np_.allowed):
            looser = bool(np_ and np_.allowed)
            self.add(
                "change_revision_policy",
                "revision_policy.allowed",
                op.allowed if op else None,
                np_.allowed if np_ else None,
                "notice" if looser else "no",
                "minor" if looser else "major",
                "consumers must be told how restatements change",
            )
        oprov, nprov = set(self.old.provenance_required), set(self.new.provenance_required)
        for column in sorted(nprov - oprov):
            self.add(
                "add_provenance",
                "provenance_required",
                None,
                column,
                "no",
                "major",
                "major version: data written before lacks it",
            )
        for column in sorted(oprov - nprov):
            self.add("remove_provenance", "provenance_required", column, None, "notice", "minor", "minor version")

    def problem(self, text: str) -> None:
        self.problems.append(text)


def _severity(clause: RowClause | None) -> str | None:
    return None if clause is None else getattr(clause, "severity", "error")


def _literal_bound(clause: RowClause) -> tuple[str, str, float] | None:
    """``column op number`` (either side) for a single comparison, else None."""
    node = clause.predicate
    if not isinstance(node, exp.LT | exp.LTE | exp.GT | exp.GTE):
        return None
    left, right = node.this, node.expression
    ops = {exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    op = ops[type(node)]
    if isinstance(left, exp.Column) and _number(right) is not None:
        return left.name, op, _number(right)  # type: ignore[return-value]
    if isinstance(right, exp.Column) and _number(left) is not None:
        return right.name, flip[op], _number(left)  # type: ignore[return-value]
    return None


def _number(node: exp.Expression) -> float | None:
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -float(node.this.this)
    if isinstance(node, exp.Literal) and not node.is_string and re.match(r"^-?\d", node.this):
        return float(node.this)
    return None


def _bound_direction(before: RowClause, after: RowClause) -> Literal["wider", "tighter", "other"]:
    a, b = _literal_bound(before), _literal_bound(after)
    if a is None or b is None or a[0] != b[0] or a[1][0] != b[1][0]:
        return "other"
    lower = a[1].startswith(">")
    if a[2] == b[2]:
        strict_a, strict_b = a[1] in ("<", ">"), b[1] in ("<", ">")
        return "wider" if strict_a and not strict_b else "tighter" if strict_b and not strict_a else "other"
    moved_out = b[2] < a[2] if lower else b[2] > a[2]
    return "wider" if moved_out else "tighter"


def diff(old: Contract, new: Contract, *, today: date | None = None) -> DiffReport:
    """Classify every change from ``old`` to ``new`` and check the declared version bump."""
    if old.contract != new.contract:
        raise InputError(
            f"{old.contract} {old.version} and {new.contract} {new.version} are different contracts: "
            "diff compares two versions of one contract (a contract under a new name is a new dataset)"
        )
    differ = _Differ(old, new, today)
    report = DiffReport(old.version, new.version, new.contract, differ.run(), differ.problems)
    required, declared = report.required, report.declared
    for change in report.changes:
        if change.forbidden:
            action = re.sub(r"^never on the same (field|name): ", "", change.action)
            report.problems.append(
                f"{change.path}: {change.kind.replace('_', ' ')} {change.old!r} -> "
                f"{change.new!r} is never allowed on the same field: {action}"
            )
    if version_goes_down(old.version, new.version):
        report.problems.append(
            f"version goes down: {old.version} -> {new.version}; a new version must be higher than the old one"
        )
    elif required == "new_dataset":
        report.problems.append("the change needs a new dataset (a new contract name), not a new version")
    elif LEVELS.index(declared) < LEVELS.index(required):
        was = (
            f"version {old.version} is unchanged"
            if declared == "none"
            else (f"version {old.version} -> {new.version} is a {declared} bump")
        )
        report.problems.append(f"{was}; the changes need a {required} bump")
    return report
