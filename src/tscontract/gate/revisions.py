"""Revision policy at the gate: who may restate what, within which window, in which order.

Rules (each a check id whose failures quarantine the row):

``revision.sequence``  revision is exactly the previous revision of the key + 1; a new key starts at 0,
                       so revision 0 of a key already published is rejected too.
``revision.allowed``   restatements (revision > 0) only where the policy allows them.
``revision.reason``    a restatement carries a reason (``revision_reason`` column or ``--reason``) from
                       the policy's list.
``revision.window``    a restatement falls within the window after the point's event time: calendar
                       time, or sessions of the series' exchange calendar for ``N trading days``.
``revision.who``       where the policy names who may restate, the restating party (``--who``, else the
                       row's ``source_id``) is one of them.

All rules are SQL over the batch joined with the latest revision per key from the store.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from tscontract.contract.catalog import Catalog, declared_calendars
from tscontract.contract.model import Contract
from tscontract.contract.weekly import WeeklyCalendar
from tscontract.engines import calendars
from tscontract.engines.inputs.sources import fetch_arrow
from tscontract.engines.relations import register, small_table
from tscontract.engines.run.time import calendar_sql
from tscontract.gate.store import Store
from tscontract.sql.columns import ident, sql_string

REVISION_TABLE = "__tsc_rev"


def rule_clauses(contract: Contract) -> dict[str, str]:
    policy = contract.revision_policy
    allowed = f"allowed: {str(policy.allowed).lower()}" if policy else "no revision_policy: restatements not allowed"
    return {
        "revision.sequence": "revision = previous revision of the key + 1 (a new key starts at 0)",
        "revision.allowed": f"revision_policy {allowed}",
        "revision.reason": f"reasons: [{', '.join(policy.reasons)}]" if policy else allowed,
        "revision.window": f"window: {policy.window.text}" if policy and policy.window else "no window",
        "revision.who": f"who: [{', '.join(policy.who)}]" if policy and policy.who else "anyone may restate",
        "key.published": "key already published",
    }


def check_revisions(
    con: duckdb.DuckDBPyConnection,
    contract: Contract,
    store: Store,
    catalog: Catalog | None,
    *,
    reason_flag: str | None,
    who: str | None,
    has_reason_column: bool,
    now: datetime,
    failures: str,
) -> None:
    """Append revision-rule failures to ``failures`` and leave ``__tsc_rev`` for the correction log."""
    if "revision" not in contract.fields:
        return
    series_key = [k for k in contract.key if k != "revision"]
    keys = ", ".join(ident(k) for k in series_key)
    reason = "r.reason" if has_reason_column else "NULL"
    flag = sql_string(reason_flag) if reason_flag else "NULL"
    catalog_joined = catalog is not None and contract.series_column is not None
    calendar = calendar_sql(contract, catalog_joined)
    not_null = " AND ".join(f"t.{ident(k)} IS NOT NULL" for k in series_key)
    source = "t.source_id" if "source_id" in contract.fields else "NULL"
    con.execute(
        "CREATE OR REPLACE TEMP TABLE __tsc_rev_batch AS SELECT t.__row, "
        f"{', '.join('t.' + ident(k) for k in series_key)}, "
        f"t.revision AS __rev, t.{ident(contract.time.column)} AS __t, coalesce({reason}, {flag}) AS __reason, "
        f"{calendar} AS __cal, {sql_string(who) if who else source} AS __who FROM __tsc_typed t "
        + ("LEFT JOIN __tsc_reasons r USING (__row) " if has_reason_column else "")
        + f"WHERE t.revision IS NOT NULL AND {not_null}"
    )
    batch_keys = fetch_arrow(con, f"SELECT DISTINCT {keys} FROM __tsc_rev_batch")
    existing = store.latest(contract, batch_keys)
    register(con, "__tsc_existing_arrow", existing)
    # dense_rank: two copies of one revision expect the same number (key.unique rejects them already)
    partition = ", ".join("b." + ident(k) for k in series_key)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {REVISION_TABLE} AS SELECT b.*, e.__max_revision, e.__latest, "
        f"coalesce(e.__max_revision, -1) + dense_rank() OVER (PARTITION BY {partition} ORDER BY b.__rev) "
        f"AS __expected FROM __tsc_rev_batch b LEFT JOIN __tsc_existing_arrow e USING ({keys})"
    )
    policy = contract.revision_policy
    rules = [
        ("revision.sequence", "__rev <> __expected AND NOT (__rev = 0 AND __max_revision IS NOT NULL)"),
        ("key.published", "__rev = 0 AND __max_revision IS NOT NULL"),
    ]
    if policy is None or not policy.allowed:
        rules.append(("revision.allowed", "__rev > 0"))
    else:
        if policy.who:
            parties = ", ".join(sql_string(w) for w in policy.who)
            rules.append(("revision.who", f"__rev > 0 AND (__who IS NULL OR __who NOT IN ({parties}))"))
        listed = ", ".join(sql_string(r) for r in policy.reasons)
        rules.append(
            (
                "revision.reason",
                f"__rev > 0 AND (__reason IS NULL{f' OR __reason NOT IN ({listed})' if listed else ''})",
            )
        )
        if policy.window is not None and policy.window.fixed:
            limit_us = int(policy.window.seconds * 1_000_000)
            rules.append(
                (
                    "revision.window",
                    f"__rev > 0 AND epoch_us(TIMESTAMPTZ '{now.isoformat()}') - epoch_us(__t) > {limit_us}",
                )
            )
        elif policy.window is not None:
            _trading_days(con, policy.window.amount, now, declared_calendars(contract, catalog))
            rules.append(
                (
                    "revision.window",
                    f"__rev > 0 AND (__sessions_since IS NULL OR __sessions_since > {int(policy.window.amount)})",
                )
            )
    selects = [
        f"SELECT __row, {sql_string(rule)} AS check_id FROM {REVISION_TABLE} WHERE {cond}" for rule, cond in rules
    ]
    con.execute(f"INSERT INTO {failures} {' UNION ALL '.join(selects)}")


def _trading_days(
    con: duckdb.DuckDBPyConnection, amount: object, now: datetime, declared: dict[str, WeeklyCalendar]
) -> None:
    """Add ``__sessions_since``: sessions of the row's calendar opened after its event time, up to now."""
    restated = con.execute(f"SELECT min(__t), list(DISTINCT __cal) FROM {REVISION_TABLE} WHERE __rev > 0").fetchall()[0]
    assert restated is not None
    first, names = restated
    names = [n for n in (names or []) if n is not None]
    if first is None or not names:
        con.execute(f"ALTER TABLE {REVISION_TABLE} ADD COLUMN __sessions_since BIGINT")
        return
    small_table(con, "__tsc_rev_sessions", calendars.COLUMNS, calendars.sessions(names, first, now, declared=declared))
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {REVISION_TABLE} AS SELECT b.*, CASE WHEN b.__cal IS NULL THEN NULL ELSE "
        f"(SELECT count(*) FROM __tsc_rev_sessions s WHERE s.calendar = b.__cal AND s.open > b.__t "
        f"AND s.open <= TIMESTAMPTZ '{now.isoformat()}') END AS __sessions_since FROM {REVISION_TABLE} b"
    )
