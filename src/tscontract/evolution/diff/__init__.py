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

# one job per module: report (the result), rules + classification (how a key's change counts),
# recorder, sections (keys by CLASSIFICATION), clauses, fields, compare (``diff``)
from tscontract.evolution.diff.classification import CLASSIFICATION, HANDLED, SECTION, TEXT, rule_for
from tscontract.evolution.diff.compare import diff
from tscontract.evolution.diff.report import LEVELS, Change, DiffReport, Level, declared_bump, version_goes_down
from tscontract.evolution.diff.rules import Compare, Compatible, Direction, Rule

__all__ = [
    "CLASSIFICATION",
    "HANDLED",
    "LEVELS",
    "SECTION",
    "TEXT",
    "Change",
    "Compare",
    "Compatible",
    "DiffReport",
    "Direction",
    "Level",
    "Rule",
    "declared_bump",
    "diff",
    "rule_for",
    "version_goes_down",
]
