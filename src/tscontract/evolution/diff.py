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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

import sqlglot.expressions as exp

from tscontract.contract.clauses import RowClause
from tscontract.contract.model import SEMVER, Contract, FieldSpec

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
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {
            "contract": self.contract,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "declared_bump": self.declared,
            "required_bump": self.required,
            "ok": self.ok,
            "problems": self.problems,
            "changes": [c.to_json() for c in self.changes],
        }


def declared_bump(old: str, new: str) -> Level:
    a, b = (tuple(int(x) for x in SEMVER.match(v).groups()[:3]) for v in (old, new))  # type: ignore[union-attr]
    if b[0] != a[0]:
        return "major" if b[0] > a[0] else "none"
    if b[1] != a[1]:
        return "minor" if b[1] > a[1] else "none"
    return "patch" if b[2] > a[2] else "none"


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
        self.time()
        self.invariants()
        self.policy()
        for name in ("owner", "source", "description", "note"):
            if getattr(old, name) != getattr(new, name):
                self.add(
                    f"change_{name}", name, getattr(old, name), getattr(new, name), "yes", "patch", "patch version"
                )
        return self.changes

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

    # ------------------------------------------------------------ time, invariants, policies
    def time(self) -> None:
        ot, nt = self.old.time, self.new.time
        if ot.column != nt.column:
            self.add("change_time_column", "time.column", ot.column, nt.column, "no", "major", "major version")
        if (ot.precision or "") != (nt.precision or ""):
            self.add(
                "change_time_precision", "time.precision", ot.precision, nt.precision, "no", "major", "major version"
            )
        otz, ntz = (ot.timezone.text if ot.timezone else None), (nt.timezone.text if nt.timezone else None)
        if otz != ntz:
            self.add(
                "change_timezone",
                "time.timezone",
                otz,
                ntz,
                "no",
                "major",
                "major version; usually a sign the original was wrong",
            )
        oc, nc = (ot.cadence.text if ot.cadence else None), (nt.cadence.text if nt.cadence else None)
        if oc != nc:
            self.add("change_cadence", "time.cadence", oc, nc, "no", "major", "major version or a new series id")

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

    def clause_change(self, path: str, before: RowClause | None, after: RowClause | None) -> None:
        if before is None and after is not None:
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
        elif op and np_:
            if set(np_.reasons) != set(op.reasons):
                fewer = not set(np_.reasons) >= set(op.reasons)
                self.add(
                    "change_revision_reasons",
                    "revision_policy.reasons",
                    list(op.reasons),
                    list(np_.reasons),
                    "no" if fewer else "notice",
                    "major" if fewer else "minor",
                    "tell consumers",
                )
            if (op.window.text if op.window else None) != (np_.window.text if np_.window else None):
                self.add(
                    "change_revision_window",
                    "revision_policy.window",
                    op.window.text if op.window else None,
                    np_.window.text if np_.window else None,
                    "notice",
                    "minor",
                    "minor version, notice period",
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
        of = self.old.freshness.max_age.text if self.old.freshness else None
        nf = self.new.freshness.max_age.text if self.new.freshness else None
        if of != nf:
            self.add("change_freshness", "freshness.max_age", of, nf, "notice", "minor", "minor version, notice")

    def problem(self, text: str) -> None:
        self.problems.append(text)


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
    differ = _Differ(old, new, today)
    report = DiffReport(old.version, new.version, new.contract, differ.run(), differ.problems)
    required, declared = report.required, report.declared
    for change in report.changes:
        if change.forbidden:
            report.problems.append(
                f"{change.path}: {change.kind.replace('_', ' ')} {change.old!r} -> "
                f"{change.new!r} is never allowed on the same field: {change.action}"
            )
    if required == "new_dataset":
        report.problems.append("the change needs a new dataset (a new contract name), not a new version")
    elif LEVELS.index(declared) < LEVELS.index(required):
        report.problems.append(
            f"version {old.version} -> {new.version} is a {declared} bump; the changes need a {required} bump"
        )
    return report
