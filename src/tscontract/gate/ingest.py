"""The ingest gate: convert, validate before anyone can see the data, publish or quarantine.

One batch, one transaction: every input row ends in exactly one of published or
quarantine, the run is recorded with its input hash and attempt, and a process killed
at any moment leaves all of the batch or none of it.

Idempotency means never published twice: a file whose earlier run published rows is a
duplicate; a file whose earlier runs published nothing (rejected whole, say, before
the contract, catalog or mapping was fixed) is gated again as the next attempt, linked
to the attempt before it (``retry_of``).

Which failing clause rejects what (see :func:`disposition`):

* the whole batch: missing or unknown columns, a column of the wrong physical type
  (schema drift), a unit that differs from the catalog's for a series, freshness,
  a typical magnitude that moved against history, and any check that could not run;
* the row: type, nullability, provenance, fixed values, constraints, invariants, UTC
  rule, precision, unknown series, calibration not in force, duplicate keys, points
  outside the session, and the revision rules (:mod:`.revisions`);
* nothing (reported in the run only): cadence, completeness, warning-severity clauses
  (row plausibility, invariants written with ``severity: warning``), and freshness in a
  backfill run (``backfill=True``: old data is stale by design).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from tscontract.contract.catalog import Catalog
from tscontract.contract.model import Contract
from tscontract.engines import checked_coverage
from tscontract.engines.duckdb import Coverage, ValidationRun, connect
from tscontract.engines.inputs.mapping import Mapping
from tscontract.engines.inputs.sources import MALFORMED, RECORD, Source, fetch_arrow, paths_of
from tscontract.engines.inputs.staging import Conversion, Provenance, source_of, stage
from tscontract.engines.inputs.tables import identity_hash, is_table_url, many_tables, pinned, windowed
from tscontract.engines.relations import register
from tscontract.errors import display_path
from tscontract.gate.duplicates import CHECK_ID as DUPLICATES
from tscontract.gate.duplicates import clause as duplicates_clause
from tscontract.gate.duplicates import mark_superseded
from tscontract.gate.revisions import REVISION_TABLE, check_revisions, rule_clauses
from tscontract.gate.store import Batch, PriorRun, Store, dumps
from tscontract.plan.checks import Check, build_plan
from tscontract.plan.result import CheckResult, ValidationReport
from tscontract.sql.columns import REASON_PREFIX, ident, json_field, sql_string

Disposition = Literal["batch", "row", "report"]
CONTROL_COLUMNS = ("revision_reason",)
_REPORT_ONLY = {"cadence", "completeness", "plausibility"}
_BATCH_KINDS = {"required_columns", "unknown_columns", "freshness", "scale_shift", "row_count", "sql_check"}


def disposition(check: Check, result: CheckResult, *, backfill: bool = False) -> Disposition:
    """What a failing (or unrunnable) check rejects."""
    if check.kind in _REPORT_ONLY or result.severity != "error" or (backfill and check.kind == "freshness"):
        return "report"
    if result.status == "error" or check.kind in _BATCH_KINDS:
        return "batch"
    if check.kind == "type" and result.message:  # the physical type itself is wrong: schema drift
        return "batch"
    catalog_ref = check.params.catalog
    if catalog_ref is not None and catalog_ref.attribute == "unit":
        return "batch"
    return "row"


@dataclass
class IngestResult:
    run_id: str
    status: Literal["committed", "duplicate"]
    contract: str
    version: str
    store: str
    rows_in: int = 0
    published: int = 0
    quarantined: int = 0
    batch_rejected_by: list[str] = field(default_factory=list)
    row_failures: dict[str, int] = field(default_factory=dict)
    corrections: int = 0
    report: ValidationReport | None = None
    attempt: int = 1
    retry_of: str | None = None
    backfill: bool = False
    reported: list[str] = field(default_factory=list)
    superseded: int = 0  # rows quarantined only as superseded copies (duplicates: keep first|last)
    duplicates: str | None = None
    dropped: int = 0  # rows the mapping dropped (its filter): counted in rows_in, in neither table
    conversion: dict[str, Any] | None = None  # what the mapping did (rows read, dropped and why)

    @property
    def clean(self) -> bool:
        """Nothing rejected for breaking a clause: a duplicate, or only superseded copies quarantined."""
        return self.status == "duplicate" or self.quarantined == self.superseded

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "contract": self.contract,
            "version": self.version,
            "store": self.store,
            "rows_in": self.rows_in,
            "published": self.published,
            "quarantined": self.quarantined,
            "batch_rejected_by": self.batch_rejected_by,
            "row_failures": self.row_failures,
            "corrections": self.corrections,
            "validation": self.report.to_json() if self.report else None,
            "attempt": self.attempt,
            "retry_of": self.retry_of,
            "backfill": self.backfill,
            "reported": self.reported,
            "superseded": self.superseded,
            "duplicates": self.duplicates,
            "dropped": self.dropped,
            "conversion": self.conversion,
        }


def file_hash(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


class _Gate:
    def __init__(
        self,
        contract: Contract,
        store: Store,
        catalog: Catalog | None,
        mapping: Mapping | None,
        source_id: str | None,
        reason: str | None,
        who: str | None,
        now: datetime,
        backfill: bool = False,
        coverage: Coverage | None = None,
    ) -> None:
        self.backfill = backfill
        self.coverage = coverage
        self.contract = contract
        self.store = store
        self.catalog = catalog
        self.mapping = mapping
        self.source_id = source_id
        self.reason = reason
        self.who = who
        self.now = now
        self.run_id = f"run-{now.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
        self.con = connect()
        self.conversion: Conversion | None = None
        self.conversion_reasons: tuple[str, ...] = ()  # fields whose values the mapping may fail to convert

    # ------------------------------------------------------------ batch preparation
    def load(self, inputs: list[str]) -> Source:
        con = self.con
        staged = stage(
            con,
            list(inputs),  # a table's URL keeps its window
            self.contract,
            self.catalog,
            self.mapping,
            control=CONTROL_COLUMNS,
            provenance=Provenance(self.run_id, self.source_id),
        )
        self.conversion = staged.conversion
        self.conversion_reasons = staged.reasons
        self.has_reason_column = "revision_reason" in staged.raw_columns
        if self.has_reason_column:
            con.execute(
                "CREATE TEMP TABLE __tsc_reasons AS SELECT __row, CAST(revision_reason AS VARCHAR) AS reason "
                "FROM __tsc_raw"
            )
        return source_of(con, staged)

    # ------------------------------------------------------------ the gate
    def run(
        self, inputs: list[str], input_hash: str, prior: list[PriorRun], progress: Any, examples: int
    ) -> IngestResult:
        contract = self.contract
        base = IngestResult(
            self.run_id,
            "committed",
            contract.contract,
            contract.version,
            self.store.description,
            attempt=1 + max((r.attempt for r in prior), default=0),
            retry_of=prior[-1].run_id if prior else None,
            backfill=self.backfill,
            duplicates=contract.duplicates.as_text() if contract.duplicates else None,
        )
        started = datetime.now(UTC)
        source = self.load(inputs)
        plan = build_plan(contract, self.catalog)
        validation = ValidationRun(plan, source, self.now, examples, progress, con=self.con, coverage=self.coverage)
        report = validation.run()
        by_id = {c.id: c for c in plan.checks}
        batch_ids, row_ids = [], []
        for result in report.checks:
            if result.status == "passed":
                continue
            kind = disposition(by_id[result.id], result, backfill=self.backfill)
            if kind == "batch":
                batch_ids.append(result.id)
            elif kind == "row":
                row_ids.append(result.id)
            else:
                base.reported.append(result.id)
        validation.materialize_failures(row_ids, "__tsc_row_fail")
        mark_superseded(self.con, validation, report, "__tsc_row_fail")
        check_revisions(
            self.con,
            contract,
            self.store,
            self.catalog,
            reason_flag=self.reason,
            who=self.who,
            has_reason_column=self.has_reason_column,
            now=self.now,
            failures="__tsc_row_fail",
        )
        batch = self.assemble(plan.checks, batch_ids, input_hash, inputs, started, report, base)
        self.store.write(contract, batch)
        base.dropped = self.conversion.rows_dropped if self.conversion else 0
        base.conversion = self.conversion.to_json() if self.conversion else None
        report.conversion = base.conversion
        base.rows_in = report.rows + base.dropped
        base.published = batch.published.num_rows
        base.quarantined = batch.quarantined.num_rows
        base.batch_rejected_by = batch_ids
        base.row_failures = {
            str(k): int(v)
            for k, v in self.con.execute(
                "SELECT check_id, count(DISTINCT __row) FROM __tsc_row_fail GROUP BY 1 ORDER BY 1"
            ).fetchall()
        }
        base.corrections = batch.corrections.num_rows
        base.superseded = self.superseded_only(bool(batch_ids))
        base.report = report
        if base.published + base.quarantined + base.dropped != base.rows_in:  # the guarantee, on every run
            raise AssertionError(
                f"gate lost rows: {base.rows_in} in, {base.published} + {base.quarantined} + {base.dropped} out"
            )
        return base

    def assemble(
        self,
        checks: tuple[Check, ...],
        batch_ids: list[str],
        input_hash: str,
        inputs: list[str],
        started: datetime,
        report: ValidationReport,
        result: IngestResult,
    ) -> Batch:
        con = self.con
        clauses = {c.id: c.clause for c in checks} | rule_clauses(self.contract) | duplicates_clause(self.contract)
        register(con, "__tsc_clauses", pa.table({"check_id": list(clauses), "clause": list(clauses.values())}))
        batch_level = bool(batch_ids)
        con.execute(
            "CREATE TEMP TABLE __tsc_fail_agg AS SELECT f.__row, list(DISTINCT f.check_id ORDER BY f.check_id) AS ids "
            "FROM __tsc_row_fail f GROUP BY f.__row"
        )
        published = pa.table({}) if batch_level else self.published()
        quarantined = self.quarantined(batch_ids)
        corrections = self.corrections(batch_level)
        run = self.run_record(input_hash, inputs, started, report, result, published, quarantined, batch_level)
        return Batch(run=run, published=published, quarantined=quarantined, corrections=corrections)

    def published(self) -> pa.Table:
        """The rows no check failed, typed, with the run id and the ingestion time."""
        now = f"TIMESTAMPTZ '{self.now.isoformat()}'"
        cols = ", ".join(f"t.{ident(n)}" for n in self.contract.fields)
        return fetch_arrow(
            self.con,
            f"SELECT {cols}, {sql_string(self.run_id)} AS _run_id, {now} AS _ingested_at FROM __tsc_typed t "
            "ANTI JOIN __tsc_fail_agg f USING (__row) ORDER BY t.__row",
        )

    def quarantined(self, batch_ids: list[str]) -> pa.Table:
        """The rejected rows as written, each with its check ids and the clauses they stand for."""
        con = self.con
        batch_level = bool(batch_ids)
        batch_list = "[" + ", ".join(sql_string(i) for i in batch_ids) + "]::VARCHAR[]"
        raw_columns = [
            str(r[0])
            for r in con.execute("DESCRIBE __tsc_raw").fetchall()
            if r[0] != "__row" and not str(r[0]).startswith("__jt_")
        ]
        # a malformed input row (engines/inputs/sources.py) has no values: its record is its text as written
        # ({"_text": ...}), and its reason stands for the clause of source.rows
        malformed = MALFORMED in raw_columns
        raw_columns = [c for c in raw_columns if c not in (MALFORMED, RECORD)]
        record = "json_object(" + ", ".join(f"{sql_string(c)}, r.{ident(c)}" for c in raw_columns) + ")"
        if malformed:
            record = f"CASE WHEN r.{MALFORMED} IS NULL THEN {record} ELSE json_object('_text', r.{RECORD}) END"
        why = f"r.{MALFORMED}" if malformed else "NULL"
        ids = f"list_distinct(list_concat({batch_list}, coalesce(f.ids, []::VARCHAR[])))"
        which = "" if batch_level else "WHERE f.ids IS NOT NULL"
        # each rejected row with its check ids and, in the same order, the clauses as written
        failing = self.converted(
            f"SELECT r.__row, unnest({ids}) AS check_id, {why} AS why FROM __tsc_raw r "
            f"LEFT JOIN __tsc_fail_agg f USING (__row) {which}"
        )
        reasons = (
            f"SELECT i.__row, list(i.check_id ORDER BY i.check_id) AS ids, "
            "list(coalesce(CASE WHEN i.check_id = 'source.rows' THEN i.why END, i.converted, c.clause, i.check_id) "
            f"ORDER BY i.check_id) AS clauses FROM ({failing}) i "
            "LEFT JOIN __tsc_clauses c USING (check_id) GROUP BY i.__row"
        )
        return fetch_arrow(
            con,
            f"SELECT {sql_string(self.run_id)} AS _run_id, r.__row AS _row, "
            f"{str(batch_level).upper()} AS _batch_level, "
            f"to_json(q.ids)::VARCHAR AS _checks, to_json(q.clauses)::VARCHAR AS _clauses, "
            f"{record}::VARCHAR AS _record FROM __tsc_raw r JOIN ({reasons}) q USING (__row) ORDER BY r.__row",
        )

    def converted(self, failing: str) -> str:
        """`failing` with a `converted` column: the reason of a value the mapping could not convert, which stands
        for the clause of the field's type check."""
        whens = "".join(
            f" WHEN {sql_string(f'field.{name}.type')} THEN b.{ident(REASON_PREFIX + name)}"
            for name in self.conversion_reasons
        )
        if whens:
            return (
                f"SELECT u.*, CASE check_id{whens} END AS converted FROM ({failing}) u "
                "LEFT JOIN __tsc_batch b USING (__row)"
            )
        return f"SELECT u.*, NULL AS converted FROM ({failing}) u"

    def run_record(
        self,
        input_hash: str,
        inputs: list[str],
        started: datetime,
        report: ValidationReport,
        result: IngestResult,
        published: pa.Table,
        quarantined: pa.Table,
        batch_level: bool,
    ) -> dict[str, Any]:
        """The run's row in the store: its inputs, counts and the summary of the checks that did not pass."""
        contract = self.contract
        summary: dict[str, dict[str, object]] = {
            c.id: {"status": c.status, "failed_rows": c.failed_rows} for c in report.checks if c.status != "passed"
        }
        dropped = self.conversion.rows_dropped if self.conversion else 0
        for drop in self.conversion.dropped if self.conversion else []:  # rows the mapping dropped, recorded
            summary[drop["id"]] = {"status": "dropped", "failed_rows": drop["rows"], "clause": drop["clause"]}
        source_ids = (
            self.con.execute("SELECT string_agg(DISTINCT source_id, ',') FROM __tsc_typed").fetchall()[0]
            if "source_id" in contract.fields
            else (None,)
        )
        return {
            "run_id": self.run_id,
            "contract": contract.contract,
            "version": contract.version,
            "input_hash": input_hash,
            "inputs": dumps([display_path(p) for p in inputs]),
            "source_id": self.source_id or (source_ids[0] if source_ids else None),
            "transform_version": self.mapping.transform_version if self.mapping else None,
            "started_at": started,
            "finished_at": datetime.now(UTC),
            "rows_in": report.rows + dropped,
            "published": published.num_rows,
            "quarantined": quarantined.num_rows,
            "batch_rejected": batch_level,
            "checks": dumps(summary),
            "attempt": result.attempt,
            "retry_of": result.retry_of,
            "backfill": self.backfill,
            "duplicates": self.duplicates_record(batch_level),
        }

    def superseded_only(self, batch_level: bool) -> int:
        """Rows quarantined only as superseded copies of a repeated key (nothing else failed)."""
        if batch_level:
            return 0
        return int(
            self.con.execute(
                "SELECT count(*) FROM (SELECT __row FROM __tsc_row_fail GROUP BY __row "
                f"HAVING bool_and(check_id = {sql_string(DUPLICATES)}))"
            ).fetchall()[0][0]
        )

    def duplicates_record(self, batch_level: bool) -> str | None:
        """How repeated keys were resolved, for the run log (None: every copy rejected)."""
        policy = self.contract.duplicates
        if policy is None or not policy.keeps_one:
            return None
        superseded = self.con.execute(
            f"SELECT count(DISTINCT __row) FROM __tsc_row_fail WHERE check_id = {sql_string(DUPLICATES)}"
        ).fetchall()[0][0]
        return dumps({"keep": policy.keep, "by": policy.by, "superseded": 0 if batch_level else int(superseded)})

    def corrections(self, batch_level: bool) -> pa.Table:
        """The correction log: every restatement this batch publishes, old -> new."""
        contract = self.contract
        empty = pa.table({c: pa.array([], pa.string()) for c in ("run_id",)})
        if batch_level or "revision" not in contract.fields:
            return empty.slice(0, 0)
        series_key = [k for k in contract.key if k != "revision"]
        fields = contract.fields  # instants in the log's JSON as RFC 3339 (columns.instant_text)
        key_json = (
            "json_object("
            + ", ".join(f"{sql_string(k)}, {json_field('v.' + ident(k), fields[k].type)}" for k in series_key)
            + ")"
        )
        new_json = (
            "json_object("
            + ", ".join(f"{sql_string(n)}, {json_field('t.' + ident(n), f.type)}" for n, f in fields.items())
            + ")"
        )
        policy = contract.revision_policy
        who = sql_string(self.who) if self.who else "t.source_id" if "source_id" in contract.fields else "NULL"
        chained = (
            f"SELECT v.*, {new_json}::VARCHAR AS __new, lag({new_json}::VARCHAR) OVER "
            f"(PARTITION BY {', '.join('v.' + ident(k) for k in series_key)} ORDER BY v.__rev) AS __previous "
            f"FROM {REVISION_TABLE} v JOIN __tsc_typed t USING (__row) "
            "WHERE v.__row NOT IN (SELECT __row FROM __tsc_row_fail)"
        )
        # the old values: the store's latest row, or the previous revision published in this same batch
        return fetch_arrow(
            self.con,
            f"SELECT {sql_string(self.run_id)} AS run_id, {sql_string(contract.contract)} AS contract, "
            f"{key_json}::VARCHAR AS key, v.__rev - 1 AS old_revision, v.__rev AS new_revision, "
            f"v.__reason AS reason, CAST({who} AS VARCHAR) AS who, "
            f"TIMESTAMPTZ '{self.now.isoformat()}' AS corrected_at, "
            f"{sql_string(policy.notification) if policy and policy.notification else 'NULL'} AS notification, "
            "CASE WHEN v.__rev = v.__max_revision + 1 THEN v.__latest ELSE v.__previous END AS old_values, "
            f"v.__new AS new_values FROM ({chained}) v JOIN __tsc_typed t USING (__row) "
            "WHERE v.__rev > 0 ORDER BY v.__row",
        )


def ingest(
    contract: Contract,
    data: list[str | Path],
    store: Store,
    *,
    catalog: Catalog | None = None,
    mapping: Mapping | None = None,
    source_id: str | None = None,
    reason: str | None = None,
    who: str | None = None,
    now: datetime | None = None,
    progress: Any = None,
    examples: int = 5,
    backfill: bool = False,
    coverage: Coverage | None = None,
) -> IngestResult:
    """Gate the files ``data`` into ``store``; see the module docstring for the guarantees.

    ``backfill``: freshness is reported but does not reject the batch (recorded in the run).
    ``coverage``: the period the batch covers at least (``--from/--to``), as in :func:`tscontract.validate`.
    """
    checked_coverage(coverage)
    inputs, input_hash = _inputs(contract, data, coverage)
    moment = now or datetime.now(UTC)
    store.ensure_schema(contract)
    prior = store.prior_runs(contract, input_hash)
    published = [r for r in prior if r.published]
    if published:
        return _duplicate(contract, store, published[0])
    gate = _Gate(contract, store, catalog, mapping, source_id, reason, who, moment, backfill, coverage)
    try:
        return gate.run(inputs, input_hash, prior, progress, examples)
    except Exception:
        # another writer committed this attempt of the same file between our look and our commit:
        # the store's UNIQUE (contract, input_hash, attempt) refused ours, the batch is there once
        attempt = 1 + max((r.attempt for r in prior), default=0)
        after = store.prior_runs(contract, input_hash)
        winners = [r for r in after if r.published] or [r for r in after if r.attempt >= attempt]
        if not winners:
            raise
        return _duplicate(contract, store, winners[0])
    finally:
        gate.con.close()


def _inputs(contract: Contract, data: list[str | Path], coverage: Coverage | None) -> tuple[list[str], str]:
    """What the gate reads, and the hash it recognises a batch by: the files' bytes (``s3://`` objects
    copied first), or a table's URL with the snapshot or version read now and the window."""
    if is_table_url(data):
        table = pinned(windowed(data, contract.time.column, coverage))
        return [table], identity_hash(table)
    many_tables(list(data))
    paths = paths_of(data)
    return [str(p) for p in paths], file_hash(paths)


def _duplicate(contract: Contract, store: Store, run: PriorRun) -> IngestResult:
    return IngestResult(
        run.run_id, "duplicate", contract.contract, contract.version, store.description, attempt=run.attempt
    )


def run_summary(result: IngestResult) -> str:
    if result.status == "duplicate":
        return f"already ingested as {result.run_id}: nothing to do"
    rejected = f"; batch rejected by {', '.join(result.batch_rejected_by)}" if result.batch_rejected_by else ""
    reported = f"; failed, reported only: {', '.join(result.reported)}" if result.reported else ""
    superseded = f" ({result.superseded} superseded: {result.duplicates})" if result.superseded else ""
    retry = f" (attempt {result.attempt}, after {result.retry_of})" if result.retry_of else ""
    backfill = " [backfill: freshness reported, not gating]" if result.backfill else ""
    dropped = f" ({result.dropped} dropped by the mapping)" if result.dropped else ""
    return (
        f"{result.run_id}{retry}: {result.rows_in} rows in{dropped}, {result.published} published, "
        f"{result.quarantined} quarantined{superseded}{rejected}{reported}{backfill}"
    )


__all__ = ["IngestResult", "disposition", "file_hash", "ingest", "run_summary"]
