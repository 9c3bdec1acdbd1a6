"""Local wall-clock times to UTC instants, in SQL, never resolving a DST change silently.

DuckDB's ``timezone(zone, local)`` quietly picks an instant for a local time that does
not exist (skipped when clocks spring forward) and for one that exists twice (repeated
when they fall back). Here each local time ``L`` gets two candidate instants: ``L`` minus
the UTC offset in force a day before, and ``L`` minus the offset a day after. A candidate
is valid when converting it back to the zone gives ``L`` again. Two distinct valid
candidates: ``L`` is ambiguous; none: ``L`` does not exist. Either makes the value fail
with a reason naming the local time and the zone, unless the mapping chose a rule:

* ``ambiguous: earlier`` / ``later`` -- the first or second of the two instants;
* ``ambiguous: file_order`` -- a local time the file holds exactly twice for a series (a
  device writing its clock through the repeated hour) is the earlier instant at its first
  row and the later at its second; held once or three times, it still fails;
* ``nonexistent: shift_forward`` -- moved forward by the length of the gap (02:30 in a
  02:00->03:00 gap is 03:30), as java.time and Python's ``zoneinfo`` do.

Fixed offsets (``+01:00``, ``-0500``) have no DST: ``L`` minus the offset. One SQL
expression per column; no Python touches rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tscontract.contract.zones import offset_minutes
from tscontract.sql.columns import sql_string

CATALOG_ZONE = "catalog device_zone"

Nonexistent = Literal["fail", "shift_forward"]
Ambiguous = Literal["fail", "earlier", "later", "file_order"]


@dataclass(frozen=True)
class Resolved:
    """SQL for one column: the instant (TIMESTAMPTZ, NULL when it cannot be had) and why not."""

    instant: str
    reason: str  # VARCHAR, NULL when the local time resolved


def resolve_local(
    local: str,
    zone: str,
    *,
    zone_is_sql: bool = False,
    nonexistent: Nonexistent = "fail",
    ambiguous: Ambiguous = "fail",
    occurrence: tuple[str, str] | None = None,
) -> Resolved:
    """The instant of the naive TIMESTAMP ``local`` in ``zone`` (an IANA name or a fixed offset).

    ``zone_is_sql``: ``zone`` is an SQL expression giving the IANA zone per row (from the
    catalog); NULL there is a reason of its own, stated by the caller. ``occurrence``: SQL for
    the row's rank among the rows of its series with the same local time, in file order, and
    their count (for ``ambiguous: file_order``).
    """
    if not zone_is_sql:
        minutes = offset_minutes(zone)
        if minutes is not None:
            return Resolved(f"timezone('UTC', {local} - INTERVAL ({minutes}) MINUTE)", "NULL")
    z = zone if zone_is_sql else sql_string(zone)

    def offset_at(probe: str) -> str:
        return f"(timezone({z}, timezone('UTC', {probe})) - ({probe}))"

    before = f"timezone('UTC', {local} - {offset_at(f'{local} - INTERVAL 1 DAY')})"
    after = f"timezone('UTC', {local} - {offset_at(f'{local} + INTERVAL 1 DAY')})"
    ok_before = f"(timezone({z}, {before}) = {local})"
    ok_after = f"(timezone({z}, {after}) = {local})"
    is_ambiguous = f"({ok_before} AND {ok_after} AND {before} <> {after})"
    is_nonexistent = f"(NOT {ok_before} AND NOT {ok_after})"
    earlier, later = f"least({before}, {after})", f"greatest({before}, {after})"
    on_ambiguous = {"fail": "NULL", "earlier": earlier, "later": later}
    if ambiguous == "file_order":
        if occurrence is None:
            raise ValueError("ambiguous: file_order needs the rows' occurrence")
        rank, count = occurrence
        on_ambiguous["file_order"] = (
            f"CASE WHEN {count} = 2 AND {rank} = 1 THEN {earlier} WHEN {count} = 2 AND {rank} = 2 THEN {later} END"
        )
    on_nonexistent = {"fail": "NULL", "shift_forward": before}  # the offset before the gap carries L past it
    instant = (
        f"CASE WHEN {is_ambiguous} THEN {on_ambiguous[ambiguous]} "
        f"WHEN {ok_before} THEN {before} WHEN {ok_after} THEN {after} "
        f"ELSE {on_nonexistent[nonexistent]} END"
    )
    shown = f"strftime({local}, '%Y-%m-%d %H:%M:%S')"
    reasons = []
    if ambiguous == "fail":
        reasons.append(
            f"WHEN {is_ambiguous} THEN 'local time ' || {shown} || ' is ambiguous in ' || {z} "
            "|| ' (repeated when clocks go back; the mapping may say ambiguous: earlier or later)'"
        )
    if nonexistent == "fail":
        reasons.append(
            f"WHEN {is_nonexistent} THEN 'local time ' || {shown} || ' does not exist in ' || {z} "
            "|| ' (skipped when clocks go forward; the mapping may say nonexistent: shift_forward)'"
        )
    if ambiguous == "file_order":
        rank, count = occurrence  # type: ignore[misc]
        reasons.append(
            f"WHEN {is_ambiguous} AND {count} <> 2 THEN 'local time ' || {shown} || ' is ambiguous in ' || {z} "
            f"|| ' and the file has it ' || {count} || ' time(s) for this series (file_order needs it twice, "
            "in order)'"
        )
    reason = f"CASE {' '.join(reasons)} END" if reasons else "NULL"
    return Resolved(instant, reason)
