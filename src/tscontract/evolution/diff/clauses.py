"""Row clauses (constraints, invariants) and policies: a range widened, tightened or only warned."""

from __future__ import annotations

import re
from typing import Literal

import sqlglot.expressions as exp

from tscontract.contract.clauses import RowClause
from tscontract.evolution.diff.recorder import Recorder
from tscontract.evolution.diff.rules import _tolerated


class ClauseDiffer(Recorder):
    """Invariants, constraint clauses, revision policy and provenance."""

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
        self.invariant_severity(old, new)
        self.invariant_threshold(old, new)

    def invariant_severity(self, old: dict[str, RowClause], new: dict[str, RowClause]) -> None:
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

    def invariant_threshold(self, old: dict[str, RowClause], new: dict[str, RowClause]) -> None:
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
