"""Key checks: the natural key (with revisions) and ``unique`` fields, each in a grouped pass.

Grouping one 64-bit hash per row first, then the exact values of the rows whose hash repeats, costs
much less than grouping the key's columns; examples name the input rows of each repeated value.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from tscontract.engines.run.state import RunState
from tscontract.plan.checks import Check
from tscontract.plan.params import KeyParams
from tscontract.sql.columns import ident, json_value, sql_string
from tscontract.typemap.sql import sql_type

KEY_ROWS = "__tsc_key_rows"  # the rows whose key hash repeats (KeyChecks.key_rows)


class KeyChecks(RunState):
    """Key uniqueness and unique fields of a validation run."""

    def key_check(self, check: Check) -> None:
        missing = self.missing(check)
        if missing:
            self.result(check, "error", message=f"key column(s) {', '.join(missing)} missing")
            return
        typed = [self.columns[k].typed for k in self.contract.key]
        typed_keys = ", ".join(f"{sql} AS {ident(k)}" for sql, k in zip(typed, self.contract.key, strict=True))
        key_hash = f"hash({', '.join(typed)})"
        self.progress("key uniqueness")
        # duplicates: keep first|last by <column>: copies it orders (none null, no tie) resolve, one is kept
        policy = check.params_of(KeyParams).duplicates
        by = self.columns[policy.by] if policy is not None and policy.by is not None else None
        numbered = (
            self.rows_view
            if self.source.has_row_number
            else f"(SELECT row_number() OVER () AS __row, * FROM {self.rows_view})"
        )
        by_sql = by.typed if by is not None and by.present else None
        # grouped from ``rows``, examples listed from ``listed``
        if self.statements_dear:  # Spark: the exact keys grouped at once (the hashes would be a job more)
            rows, listed, grouped = self.rows_view, numbered, typed_keys
        else:
            self.key_rows(key_hash, typed_keys, numbered, by_sql)
            rows, listed, grouped = KEY_ROWS, KEY_ROWS, ", ".join(ident(k) for k in self.contract.key)
            by_sql = None if by_sql is None else "__by"
        # a row with a null key part fails its nullability (or type) check; it duplicates nothing
        complete = " AND ".join(f"{ident(k)} IS NOT NULL" for k in self.contract.key)
        unresolved = f" AND count(DISTINCT {by_sql}) < count(*)" if by_sql is not None else ""
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_dups AS SELECT * FROM (SELECT {grouped}, count(*) AS n "
            f"FROM {rows} GROUP BY ALL HAVING count(*) > 1{unresolved}) WHERE {complete}"
        )
        self.judge_keys(check, f"SELECT __row, {grouped} FROM {listed}")

    def key_rows(self, key_hash: str, typed_keys: str, numbered: str, by: str | None) -> None:
        """``__tsc_key_rows`` (KEY_ROWS): the rows whose key hash repeats (duplicates and the rare collisions),
        with their number, typed key and ``keep ... by`` column (``__by``) -- what the exact grouping, the
        examples and the gate's resolution of copies (gate/duplicates.py) read, so the input is scanned twice
        (hashes, then these rows), not four times. Empty when no hash repeats.

        One 64-bit hash per row costs much less than the key's columns; sorted, a repeated hash is its
        neighbour's (0.9 s at 10M rows on 2 cores, where grouping the hashes took 1.2 s: a hash table of
        as many groups as rows)."""
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_dup_hashes AS SELECT DISTINCT h FROM (SELECT h, lag(h) OVER "
            f"(ORDER BY h) AS __p FROM (SELECT {key_hash} AS h FROM {self.rows_view}) AS __h) AS __s WHERE h = __p"
        )
        repeated = self.fetch("SELECT count(*) FROM __tsc_dup_hashes")[0][0]
        where = f"{key_hash} IN (SELECT h FROM __tsc_dup_hashes)" if repeated else "FALSE"
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {KEY_ROWS} AS SELECT __row, {typed_keys}"
            f"{f', {by} AS __by' if by else ''} FROM {numbered} WHERE {where}"
        )

    def key_check_in_points(self, check: Check, points: str, columns: list[str]) -> None:
        """The key check from the time pass's points (engines/run/time.py), which flags every row whose key
        another row holds (``__dup``); ``columns`` name each key column in ``points`` (DuckDB, Spark)."""
        typed_keys = ", ".join(f"{c} AS {ident(k)}" for c, k in zip(columns, self.contract.key, strict=True))
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE __tsc_dups AS SELECT {typed_keys}, count(*) AS n FROM {points} "
            "WHERE __dup GROUP BY ALL"
        )
        # the key's columns by name in an outer query (Spark's WHERE sees no alias of its SELECT)
        self.judge_keys(
            check, f"SELECT * FROM (SELECT __row, {typed_keys} FROM {points} WHERE __dup) AS __c", named=True
        )

    def judge_keys(self, check: Check, candidates: str, where: str = "TRUE", named: bool = False) -> None:
        """The verdict from ``__tsc_dups`` (each repeated key and its count ``n``); examples name the first
        rows of each shown key among the rows of ``candidates`` (a SELECT of ``__row`` and the key's columns,
        without a WHERE) that meet ``where``. ``named``: ``candidates`` holds the typed key's columns by name
        (else the input's columns, typed as the key check reads them)."""
        keys = ", ".join(ident(k) for k in self.contract.key)
        rows, total, repeated = self.shown_with_totals("__tsc_dups", keys)
        if not total:
            self.result(check, "passed")
            return
        names = [*self.contract.key, "count"]
        if self.statements_dear:  # the keys shown, as literals: joining them from a table would be a job more
            where += " AND (" + (" OR ".join(self.key_literals(r[:-1], named) for r in rows) or "FALSE") + ")"
        found = self.duplicate_rows(f"{candidates} WHERE {where}", keys)
        examples = [
            {"rows": found.get(tuple(r[:-1]), [])} | {n: json_value(v) for n, v in zip(names, r, strict=True)}
            for r in rows
        ]
        self.result(check, "failed", total, examples, f"{repeated} key(s) appear more than once")

    def key_literals(self, values: tuple[Any, ...], named: bool = False) -> str:
        """The condition that a source row has the key ``values`` (typed, as the key check reads them);
        ``named``: of a row whose typed key columns are named as the key's."""
        parts = []
        for name, value in zip(self.contract.key, values, strict=True):
            if isinstance(value, date):
                text = value.isoformat()
            elif isinstance(value, Decimal):
                text = format(value, "f")
            else:
                text = str(value).lower() if isinstance(value, bool) else str(value)
            literal = f"CAST({sql_string(text)} AS {sql_type(self.columns[name].dtype)})"
            parts.append(f"{ident(name) if named else self.columns[name].typed} = {literal}")
        return "(" + " AND ".join(parts) + ")"

    def shown_with_totals(self, table: str, order: str) -> tuple[list[tuple[Any, ...]], int, int]:
        """The first rows of ``table`` (repeated values with their count ``n``) by ``order``, the rows
        they account for (``sum(n)``) and how many there are."""
        (total, repeated), rows = self.with_totals(
            ["sum(n)", "count(*)"],
            f"SELECT * FROM {table}",
            order,
        )
        return rows, total, repeated

    def duplicate_rows(self, candidates: str, keys: str) -> dict[tuple[Any, ...], list[int]]:
        """The input rows (first few, by row number) of each repeated key shown as an example, among
        ``candidates`` (``__row`` and the key's columns)."""
        per_key = 5
        # the keys shown: joined from the table, or named in ``candidates`` already (statements_dear)
        shown = f" JOIN (SELECT * FROM __tsc_dups ORDER BY {keys} LIMIT {self.limit}) d USING ({keys})"
        if self.statements_dear:
            shown = ""
        found: dict[tuple[Any, ...], list[int]] = {}
        for r in self.fetch(
            f"SELECT * FROM (SELECT {keys}, __row, row_number() OVER (PARTITION BY {keys} ORDER BY __row) AS __k "
            f"FROM ({candidates}) s{shown}) WHERE __k <= {per_key} ORDER BY {keys}, __row "
            f"LIMIT {self.limit * per_key}"  # drops nothing; spares a distributed sort its sampling job
        ):
            found.setdefault(tuple(r[:-2]), []).append(int(r[-2]))
        return found

    def unique_table(self, check: Check) -> str:
        return f"__tsc_uniq_{list(self.contract.fields).index(check.columns[0])}"

    def unique_check(self, check: Check) -> None:
        """``unique: true`` on a column: no value (nulls aside) on two rows; examples name the rows."""
        name = check.columns[0]
        if self.missing(check):
            self.result(check, "error", message=f"column {name} missing; see schema.columns")
            return
        self.progress(f"unique values of {name}")
        table = self.unique_table(check)
        value = self.columns[name].typed
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT __u, count(*) AS n FROM "
            f"(SELECT {value} AS __u FROM {self.rows_view}) s WHERE __u IS NOT NULL GROUP BY __u HAVING count(*) > 1"
        )
        shown, total, repeated = self.shown_with_totals(table, "__u")
        if not total:
            self.result(check, "passed")
            return
        numbered = (
            self.rows_view
            if self.source.has_row_number
            else f"(SELECT row_number() OVER () AS __row, * FROM {self.rows_view})"
        )
        rows: dict[Any, list[int]] = {}
        for r in self.fetch(
            f"SELECT __u, __row FROM (SELECT s.__u, s.__row, row_number() OVER (PARTITION BY s.__u ORDER BY s.__row) "
            f"AS __k FROM (SELECT __row, {value} AS __u FROM {numbered}) s JOIN "
            f"(SELECT __u FROM {table} ORDER BY __u LIMIT {self.limit}) d ON d.__u = s.__u) WHERE __k <= 5 "
            f"ORDER BY __u, __row LIMIT {self.limit * 5}"
        ):
            rows.setdefault(r[0], []).append(int(r[1]))
        examples = [{"rows": rows.get(v, []), name: json_value(v), "count": int(n)} for v, n in shown]
        self.judged(check, total, examples, f"{repeated} value(s) of {name} appear more than once")
