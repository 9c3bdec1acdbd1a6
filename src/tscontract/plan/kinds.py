"""Every kind of check a plan holds: one name per meaning, so a new kind fails loudly everywhere.

``Check.kind`` is a :class:`CheckKind`; a ``StrEnum`` member equals its name as text, so the
engines and exporters may compare it with ``"invariant"``, but a check cannot be built with a
kind this list does not name (``CheckKind("typo")`` raises). ``tests/plan/test_kinds.py`` builds a
plan holding every kind and requires every engine run and every export to give each check a
verdict or a named reason.
"""

from __future__ import annotations

from enum import StrEnum


class CheckKind(StrEnum):
    # schema: the columns and their types
    WELL_FORMED = "well_formed"  # every input row parses (a malformed CSV line)
    REQUIRED_COLUMNS = "required_columns"  # every field the contract names is present
    UNKNOWN_COLUMNS = "unknown_columns"  # no column the contract does not name
    TYPE = "type"  # each value is of its field's type (precision, scale, width, enum members)
    NOT_NULL = "not_null"  # nullable: false
    FIXED_VALUE = "fixed_value"  # a field with one allowed value
    UTC_INSTANT = "utc_instant"  # time.timezone: instants written at UTC
    TIME_PRECISION = "time_precision"  # time.precision: no finer fraction than declared
    # rows: clauses judged row by row
    INVARIANT = "invariant"  # invariants: a row clause
    CONSTRAINT = "constraint"  # fields.<name>.constraint: a row clause with the field as subject
    SERIES_PATTERN = "series_pattern"  # series.pattern: the series id's naming scheme
    CATALOG_SERIES = "catalog_series"  # every series is in the catalog
    CALIBRATION_IN_FORCE = "calibration_in_force"  # the calibration record in force at the instant
    PLAUSIBILITY = "plausibility"  # history-derived bounds (--bounds)
    # windows: over each series' points in time order
    UNIQUE_KEY = "unique_key"  # the natural key (with revisions)
    UNIQUE = "unique"  # fields.<name>.unique
    CADENCE = "cadence"  # time.cadence with its tolerance
    SESSION = "session"  # points inside the series' sessions
    STEP = "step"  # fields.<name>.step: jumps between neighbours
    # batches: the whole input
    COMPLETENESS = "completeness"  # expected points per window
    FRESHNESS = "freshness"  # the newest point against the clock
    ROW_COUNT = "row_count"  # batch.row_count
    SCALE_SHIFT = "scale_shift"  # the batch's typical magnitude against history (--bounds)
    SQL_CHECK = "sql_check"  # sql_checks: a query's value against a threshold
