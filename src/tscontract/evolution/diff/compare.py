"""``diff``: classify every change between two versions of one contract and check the declared bump."""

from __future__ import annotations

import re
from datetime import date

from tscontract.contract.model import Contract
from tscontract.errors import InputError
from tscontract.evolution.diff.fields import FieldDiffer
from tscontract.evolution.diff.report import LEVELS, Change, DiffReport, version_goes_down
from tscontract.evolution.diff.sections import SectionDiffer


class _Differ(FieldDiffer, SectionDiffer):
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
