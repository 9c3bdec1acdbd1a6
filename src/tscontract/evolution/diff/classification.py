"""Every key a contract can state, by path, with the rule that classifies its changes."""

from __future__ import annotations

from decimal import Decimal

from tscontract.evolution.diff.rules import (
    Rule,
    _added_is_stronger,
    _added_is_tighter,
    _bound,
    _changed,
    _copy_order,
    _fewer_is_tighter,
    _forbidden,
    _kept_copy,
    _later_is_stronger,
    _listed_is_tighter,
    _longer_is_stronger,
    _mode,
    _more_is_stronger,
    _more_is_tighter,
    _ranked,
    _shorter_is_tighter,
    _sql_checks,
    _step_limit,
    _text,
    _tolerated,
    _unique,
)

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
    "time.zone": Rule("zone", _changed, "major version: months, quarters and local days follow another zone"),
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
    "fields.*.flag_of": Rule("flag_of", _added_is_tighter),  # set flag => null value: a new row rule
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
    "completeness.aligned_to": Rule("completeness", _changed),
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
    "odcs": TEXT,  # an ODCS document's own elements (id, servers, names ...), carried for export odcs: no check
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
