"""The state of one validation run: its plan, typed columns, clock, results, and the views every pass reads.

The check families (rows.py, keys.py, batch.py, time.py, step.py) read the batch through the typed
view this module creates and record their verdicts with :meth:`RunState.result`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import duckdb

from tscontract.contract.model import Contract
from tscontract.engines.base import TYPED_VIEW, Coverage, Progress
from tscontract.engines.connection import connect
from tscontract.engines.inputs.sources import MALFORMED, RECORD, SOURCE_VIEW, Source, open_source
from tscontract.engines.relations import CATALOG_TABLE_SQL, small_table
from tscontract.engines.sandbox import bounded, lock
from tscontract.plan.checks import Check, CheckPlan
from tscontract.plan.result import CheckResult, Status
from tscontract.sql.columns import ColumnSQL, column_sql, ident, with_conversion_reason

CALIBRATION_TABLE = "__tsc_calibrations"

# catalog attributes clauses can name (``catalog.<name>``), joined per series as ``__cat_<name>``
_CATALOG_COLUMNS = (
    ("unit", "VARCHAR"),
    ("dimension", "VARCHAR"),
    ("hard_bounds_low", "DECIMAL(38,10)"),
    ("hard_bounds_high", "DECIMAL(38,10)"),
    ("plausibility_bounds_low", "DECIMAL(38,10)"),
    ("plausibility_bounds_high", "DECIMAL(38,10)"),
    ("device_zone", "VARCHAR"),
    ("venue", "VARCHAR"),
    ("calendar", "VARCHAR"),
    ("session", "VARCHAR"),
    ("quote_currency", "VARCHAR"),
)


class RunState:
    """State of one validation run on one connection.

    With ``con`` the run uses a caller's connection and leaves its temporary
    tables there (the ingest gate reads the typed view and the failing rows);
    ``data`` may then be a :class:`Source` already registered on it. ``con`` may also be a
    translated engine's connection (engines/translated.py), which takes the same statements.
    """

    def __init__(
        self,
        plan: CheckPlan,
        data: Any,
        now: datetime | None,
        examples: int,
        progress: Progress | None,
        con: Any = None,
        engine: str = "duckdb",
        coverage: Coverage | None = None,
    ) -> None:
        self.plan = plan
        self.coverage = coverage  # --from/--to: the period the batch covers at least
        self.contract: Contract = plan.contract
        self.now = now or datetime.now(UTC)
        self.limit = examples
        self.progress = progress or (lambda _msg: None)
        self.owns_connection = con is None
        self.con = con or connect()
        self.source: Source = data if isinstance(data, Source) else open_source(self.con, data)
        lock(self.con, self.source.paths)  # before any SQL of the contract runs (engines/sandbox.py)
        self.results: dict[str, CheckResult] = {}
        self.columns: dict[str, ColumnSQL] = {
            name: column_sql(
                name,
                spec.type,
                self.source.columns.get(name),
                text=self.source.text,
                json=self.source.json_types,
            )
            for name, spec in self.contract.fields.items()
        }
        # a batch converted by a mapping (engines/inputs/staging.py) says why a value did not convert
        for name in getattr(self.source, "conversion_reasons", ()):
            self.columns[name] = with_conversion_reason(self.columns[name])
        self.series = self.contract.series_column
        self.typed_view = TYPED_VIEW
        self.rows_view = SOURCE_VIEW  # the input's rows as read: the key passes group them
        self.rows = 0
        # the batch's first and last plausible instants, where the row pass reads them (time.py source_span)
        self.time_span: tuple[datetime | None, datetime | None] | None = None
        self.catalog_unset: dict[str, str] = {}  # catalog attributes no series has, with their SQL type
        self.engine = engine  # the name the report gives

    # ------------------------------------------------------------------ helpers
    def result(
        self,
        check: Check,
        status: Status,
        failed: int = 0,
        examples: list[dict[str, Any]] | None = None,
        message: str | None = None,
    ) -> None:
        self.results[check.id] = CheckResult(
            id=check.id,
            kind=check.kind,
            section=check.section,
            clause=check.clause,
            source=check.source,
            severity=check.severity,
            status=status,
            failed_rows=failed,
            examples=examples or [],
            message=message,
        )

    def judged(self, check: Check, failed: int, examples: list[dict[str, Any]], message: str | None = None) -> None:
        """A check ``failed`` rows fail: failed, unless its ``max_failing`` share of the batch tolerates them.

        Either way the report keeps the failing rows' count, examples and share of the batch."""
        share = check.params.max_failing
        if share is None:
            self.result(check, "failed", failed, examples, message)
            return
        ratio = Decimal(failed) / Decimal(self.rows) if self.rows else Decimal(1)
        tolerated = ratio <= share.ratio
        said = f"{failed} of {self.rows} rows ({float(ratio) * 100:.4g}%) fail; at most {share.text} may"
        status: Status = "passed" if tolerated else "failed"
        self.result(check, status, failed, examples, f"{message}; {said}" if message else said)

    @property
    def statements_dear(self) -> bool:
        """Every statement costs the engine a job or more (Spark): one more scan costs less than one
        more statement, so the run counts before it keeps, and skips no scan on a count first."""
        return bool(getattr(self.con, "statements_dear", False))

    def missing(self, check: Check) -> list[str]:
        return [c for c in check.columns if c in self.columns and not self.columns[c].present]

    def fetch(self, sql: str) -> list[tuple[Any, ...]]:
        return self.con.execute(sql).fetchall()

    def untrusted(self, sql: str) -> list[tuple[Any, ...]]:
        """A contract's own query: on DuckDB the connection is locked and the query interrupted after
        the timeout (engines/sandbox.py); another engine's connection confines it in its own way
        (PostgreSQL: read-only, with a timeout)."""
        confine = getattr(self.con, "untrusted", None)
        if confine is not None:
            return confine(sql)
        return bounded(self.con, sql) if isinstance(self.con, duckdb.DuckDBPyConnection) else self.fetch(sql)

    @property
    def catalog_joined(self) -> bool:
        series = self.series
        return self.plan.catalog is not None and series is not None and series != "" and self.columns[series].present

    def with_totals(self, totals: list[str], rows: str, order: str) -> tuple[list[int], list[tuple[Any, ...]]]:
        """The first rows of the query ``rows`` by ``order`` and, in the same statement, the aggregates
        ``totals`` over all of its rows (one statement, one Spark job: scalar subqueries would be a job
        each): no rows, every total 0.

        Each total is an aggregate expression over the columns of ``rows`` (``sum(n)``), evaluated as a
        window over all of them. ``order`` names columns of ``rows``, or gives their positions after the
        totals."""
        heads = ", ".join(f"{sql} OVER () AS __total{i}" for i, sql in enumerate(totals))
        # one row at least, whatever the examples asked: it carries the totals
        found = self.fetch(f"SELECT {heads}, * FROM ({rows}) AS __r ORDER BY {order} LIMIT {max(self.limit, 1)}")
        if not found:
            return [0] * len(totals), []
        return [int(v or 0) for v in found[0][: len(totals)]], [r[len(totals) :] for r in found[: self.limit]]

    # ------------------------------------------------------------------ setup
    def register_catalog(self) -> None:
        catalog = self.plan.catalog
        rows: list[tuple[Any, ...]] = []
        calibrations: list[tuple[Any, ...]] = []
        for sid, entry in (catalog.series if catalog is not None else {}).items():
            cadence = int(entry.cadence.seconds * 1_000_000) if entry.cadence else None
            rows.append((sid, *(entry.value_of(name) for name, _ in _CATALOG_COLUMNS), cadence))
            calibrations.extend((sid, c.id, c.valid_from, c.valid_to) for c in entry.calibrations)
        columns = [("__cat_series_id", "VARCHAR"), *((f"__cat_{n}", sql) for n, sql in _CATALOG_COLUMNS)]
        columns.append(("__cat_cadence_us", "BIGINT"))
        small_table(self.con, CATALOG_TABLE_SQL, columns, rows)
        # attributes no series has: NULL on every row of the batch (create_typed_view need not keep them)
        self.catalog_unset = {name: sql for i, (name, sql) in enumerate(columns) if all(r[i] is None for r in rows)}
        small_table(
            self.con,
            CALIBRATION_TABLE,
            [
                ("__cal_series", "VARCHAR"),
                ("__cal_id", "VARCHAR"),
                ("__cal_from", "TIMESTAMPTZ"),
                ("__cal_to", "TIMESTAMPTZ"),
            ],
            calibrations,
        )

    def register_bounds(self) -> None:
        bounds = self.plan.bounds
        if bounds is None:
            return
        names = list(bounds.fields)
        series_ids = sorted({sid for per_series in bounds.fields.values() for sid in per_series})
        rows = []
        for sid in series_ids:
            row: list[Any] = [sid]
            for name in names:
                profile = bounds.fields[name].get(sid)
                low, high = profile.limits(bounds.margin) if profile else (None, None)
                row.extend([low, high, profile.median_abs if profile else None])
            rows.append(tuple(row))
        columns = [(f"__b_{n}_{part}", "DECIMAL(38,10)") for n in names for part in ("low", "high", "mabs")]
        small_table(self.con, "__tsc_bounds", [("__b_series", "VARCHAR"), *columns], rows)

    def catalog_joins(self) -> tuple[list[tuple[str, str]], str]:
        """What the typed view joins per row: (expression, name) of each joined column, and the joins
        (the catalog's attributes, the bounds, the calibration in force), on the source ``s``."""
        if not self.series or not self.columns[self.series].present:
            return [], ""
        series_sql = self.columns[self.series].typed
        names = ["__cat_series_id", *(f"__cat_{name}" for name, _ in _CATALOG_COLUMNS), "__cat_cadence_us"]
        joined = [(f"c.{name}", name) for name in names]
        joins = f" LEFT JOIN {CATALOG_TABLE_SQL} c ON c.__cat_series_id = {series_sql}"
        if self.plan.bounds is not None:
            bounds = [f"__b_{n}_{part}" for n in self.plan.bounds.fields for part in ("low", "high", "mabs")]
            joined += [(f"b.{ident(name)}", name) for name in bounds]
            joins += f" LEFT JOIN __tsc_bounds b ON b.__b_series = {series_sql}"
        if "calibration_id" in self.columns:
            ts = self.columns[self.contract.time.column].typed
            joined.append(("k.__cal_id", "__cal_id"))
            joins += (
                f" LEFT JOIN {CALIBRATION_TABLE} k ON k.__cal_series = {series_sql} AND "
                f"k.__cal_from <= {ts} AND (k.__cal_to IS NULL OR {ts} < k.__cal_to)"
            )
        return joined, joins

    def create_typed_view(self, view: str = TYPED_VIEW, numbered: bool = False) -> None:
        """The typed view over the source; ``numbered`` numbers input rows (examples only).

        Row numbers are taken before any join reorders rows; numbering a file that has
        none costs a window over the whole input, so only the example pass asks for it.
        """
        source = SOURCE_VIEW
        if self.source.has_row_number:
            selects = ["s.__row AS __row"]
        elif numbered:
            source = f"(SELECT row_number() OVER () AS __row, * FROM {SOURCE_VIEW})"
            selects = ["s.__row AS __row"]
        else:
            selects = ["NULL::BIGINT AS __row"]
        for name, col in self.columns.items():
            selects.append(f"{col.typed} AS {ident(name)}")
            selects.append(f"CAST({col.raw} AS VARCHAR) AS {ident('__raw_' + name)}")
            selects.append(f"{col.is_null} AS {ident('__null_' + name)}")
            selects.append(f"{col.type_fail or 'FALSE'} AS {ident('__tf_' + name)}")
            selects.append(f"{col.type_reason or 'NULL'} AS {ident('__why_' + name)}")
            selects.append(f"{col.utc_fail or 'FALSE'} AS {ident('__utc_' + name)}")
            selects.append(f"{col.precision_fail or 'FALSE'} AS {ident('__prec_' + name)}")
        if self.source.malformed:  # why a row is malformed, and its text (engines/inputs/sources.py)
            selects += [f"s.{MALFORMED} AS {MALFORMED}", f"s.{RECORD} AS {RECORD}"]
        joined, joins = self.catalog_joins()
        if self.statements_dear:
            # the input read once, its catalog joined once, and kept: every pass reads this table (Spark: each
            # statement over a view would read the files again, and broadcast the catalog again, a job each).
            # A catalog attribute no series has is a typed NULL in the view, not a column kept per row (1M rows:
            # 2 CPU-s of the 6.6 the kept table costs with every attribute)
            unset = self.catalog_unset
            extra = "".join(f", {sql} AS {ident(name)}" for sql, name in joined if name not in unset)
            table = f"{view}_rows"
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT s.*{extra} FROM {source} s{joins}")
            source, joins = table, ""
            joined = [(f"CAST(NULL AS {unset[n]})" if n in unset else f"s.{ident(n)}", n) for _, n in joined]
            if view == TYPED_VIEW:
                self.rows_view = table
        selects += [f"{sql} AS {ident(name)}" for sql, name in joined]
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {', '.join(selects)} FROM {source} s{joins}")
