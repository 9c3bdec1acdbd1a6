"""Where gated data lands: a DuckDB file (embedded default) or PostgreSQL.

Per contract a store holds:

``<contract>__published``
    every accepted row with the bookkeeping columns ``_run_id`` and ``_ingested_at``;
    all revisions stay here.
``<contract>`` (view)
    what consumers read: the latest revision of each key, the contract's columns only
    (no bookkeeping), so it validates against its contract as it stands.
``<contract>__quarantine``
    every rejected row: the input record as JSON, the failing check ids and clause texts,
    whether the whole batch was rejected.
``tscontract_runs``
    one row per committed ingest: contract and version, input hash, attempt, counts,
    check summary, backfill flag, how repeated keys were resolved.
``tscontract_corrections``
    the correction log: every accepted restatement, who, when, why, old -> new.

A batch is written in one transaction. ``(contract, input_hash, attempt)`` is unique: a
file is gated again (the next attempt) only while no earlier attempt published a row,
and two writers racing on one attempt cannot both commit, so the same file is never
published twice.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv

from tscontract.contract.model import Contract
from tscontract.engines.inputs.sources import fetch_arrow
from tscontract.engines.relations import register
from tscontract.errors import InputError
from tscontract.shown import MESSAGE_CHARS, cut, engine_message
from tscontract.sql.columns import json_field, sql_string
from tscontract.typemap.arrow import arrow_type
from tscontract.typemap.sql import pg_type as _pg_type
from tscontract.typemap.sql import sql_type as _duck_type

# how long opening a DuckDB store waits while another process (another ingest) has it open
LOCK_TIMEOUT_S = 60.0
RUNS = "tscontract_runs"
CORRECTIONS = "tscontract_corrections"
RUN_COLUMNS = (
    "run_id",
    "contract",
    "version",
    "input_hash",
    "inputs",
    "source_id",
    "transform_version",
    "started_at",
    "finished_at",
    "rows_in",
    "published",
    "quarantined",
    "batch_rejected",
    "checks",
    "attempt",
    "retry_of",
    "backfill",
    "duplicates",
)
# run-log columns added after the first release: (name, DuckDB type, PostgreSQL type); stores
# created before them get them on the next ingest (see ``ensure_schema``)
ADDED_RUN_COLUMNS = (
    ("attempt", "BIGINT", "BIGINT"),
    ("retry_of", "VARCHAR", "TEXT"),
    ("backfill", "BOOLEAN", "BOOLEAN"),
    ("duplicates", "VARCHAR", "TEXT"),
)
BOOKKEEPING_COLUMNS = ("_run_id", "_ingested_at")
QUARANTINE_COLUMNS = ("_run_id", "_row", "_batch_level", "_checks", "_clauses", "_record")
CORRECTION_COLUMNS = (
    "run_id",
    "contract",
    "key",
    "old_revision",
    "new_revision",
    "reason",
    "who",
    "corrected_at",
    "notification",
    "old_values",
    "new_values",
)


def table_base(contract: Contract) -> str:
    """A SQL-safe table name stem for a contract (``ohlcv_1m``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", contract.contract).lower()


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class PriorRun:
    """An earlier committed run of the same input: which attempt it was and what it published."""

    run_id: str
    attempt: int
    published: int


@dataclass
class Batch:
    """Everything one ingest writes, as Arrow tables, committed together."""

    run: dict[str, Any]
    published: pa.Table
    quarantined: pa.Table
    corrections: pa.Table


class Store(ABC):
    """A place to publish gated batches atomically."""

    description: str

    @abstractmethod
    def ensure_schema(self, contract: Contract) -> None: ...

    @abstractmethod
    def require_tables(self, *tables: str) -> None:
        """Refuse (InputError) a store without these tables: a read-only command has nothing to read."""

    @abstractmethod
    def prior_runs(self, contract: Contract, input_hash: str) -> list[PriorRun]:
        """Committed runs of this input for this contract, by attempt."""

    @abstractmethod
    def latest(self, contract: Contract, keys: pa.Table) -> pa.Table:
        """For the given key columns (without revision): max revision and the latest row as JSON."""

    @abstractmethod
    def write(self, contract: Contract, batch: Batch) -> None: ...

    @abstractmethod
    def query(self, sql: str) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def read_latest(self, contract: Contract) -> pa.Table: ...

    @abstractmethod
    def close(self) -> None: ...

    def series_key(self, contract: Contract) -> list[str]:
        return [k for k in contract.key if k != "revision"]

    def view_sql(self, contract: Contract) -> str:
        """The consumer view: latest revision per key (latest ingest without revisions), contract columns."""
        base = table_base(contract)
        keys = ", ".join(_q(k) for k in self.series_key(contract))
        order = "revision DESC" if "revision" in contract.fields else "_ingested_at DESC"
        cols = ", ".join(_q(c) for c in contract.fields)
        return (
            f"SELECT {cols} FROM (SELECT *, row_number() OVER (PARTITION BY {keys} ORDER BY {order}) AS __rank "
            f"FROM {_q(base + '__published')}) ranked WHERE __rank = 1"
        )


def _prior(rows: list[tuple[Any, ...]]) -> list[PriorRun]:
    return [PriorRun(str(r[0]), int(r[1] if r[1] is not None else 1), int(r[2] or 0)) for r in rows]


_RUNS_DDL = (
    "CREATE TABLE IF NOT EXISTS {table} (run_id {text} PRIMARY KEY, contract {text}, version {text}, "
    "input_hash {text}, inputs {text}, source_id {text}, transform_version {text}, started_at TIMESTAMPTZ, "
    "finished_at TIMESTAMPTZ, rows_in BIGINT, published BIGINT, quarantined BIGINT, batch_rejected BOOLEAN, "
    "checks {text}, attempt BIGINT, retry_of {text}, backfill BOOLEAN, duplicates {text}, "
    "UNIQUE (contract, input_hash, attempt))"
)
_PRIOR_SQL = (
    f"SELECT run_id, attempt, published FROM {RUNS} WHERE contract = {{p}} AND input_hash = {{p}} "
    "ORDER BY coalesce(attempt, 1), started_at"
)


def _pg_instant_text(value: str) -> str:
    """PostgreSQL: an instant as :func:`tscontract.sql.columns.instant_json` writes it."""
    fraction = f"(extract(microseconds FROM {value})::bigint % 1000000)"
    return (
        f"(to_char({value} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN {fraction} = 0 THEN '' "
        f"WHEN {fraction} % 1000 = 0 THEN '.' || lpad(({fraction} / 1000)::text, 3, '0') "
        f"ELSE '.' || lpad({fraction}::text, 6, '0') END || 'Z')"
    )


def _lock_holder(message: str) -> str:
    """DuckDB's lock error names the process holding the lock: keep that part."""
    found = re.search(r"Conflicting lock is held in .*?\(PID \d+\)", message)
    return found.group(0) if found else message


def _require(description: str, have: set[str], tables: tuple[str, ...]) -> None:
    missing = [t for t in tables if t not in have]
    if missing:
        raise InputError(f"store {description} has no table {missing[0]}: no ingest has created it yet")


def _misfit(description: str, contract: Contract, error: str) -> InputError:
    return InputError(
        f"store {description} does not fit contract {contract.contract} {contract.version}: "
        f"{cut(next(iter(error.strip().splitlines()), error))} (ingest with this contract version first)"
    )


class DuckDBStore(Store):
    """A DuckDB database file; the published table is queryable by any DuckDB client."""

    def __init__(self, path: str | Path, *, read_only: bool = False, lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.description = str(path)
        if self.path.parent and not self.path.parent.exists():
            raise InputError(f"store directory does not exist: {self.path.parent}")
        if read_only and not self.path.is_file():
            raise InputError(f"store {path} does not exist (nothing has been ingested into it)")
        self.con = self._connect(read_only, lock_timeout)
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute("SET enable_progress_bar = false")

    def _connect(self, read_only: bool, lock_timeout: float) -> duckdb.DuckDBPyConnection:
        """Connect, waiting up to ``lock_timeout`` seconds (polling with backoff) while another process holds it."""
        deadline = time.monotonic() + max(lock_timeout, 0.0)
        delay = 0.05
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.Error as exc:
                first = engine_message(exc, MESSAGE_CHARS)  # the lock's holder (PID) after two paths
                if "Could not set lock" not in first:
                    raise InputError(f"cannot open store {self.description}: {first}") from None
                left = deadline - time.monotonic()
                if left <= 0:
                    raise InputError(
                        f"store {self.description} is still in use by another process after waiting "
                        f"{lock_timeout:g}s (--lock-timeout): {_lock_holder(first)}"
                    ) from None
                time.sleep(min(delay, left))
                delay = min(delay * 2, 1.0)

    def require_tables(self, *tables: str) -> None:
        have = {str(r[0]) for r in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        _require(self.description, have, tables)

    def ensure_schema(self, contract: Contract) -> None:
        base = table_base(contract)
        cols = ", ".join(f"{_q(n)} {_duck_type(f.type)}" for n, f in contract.fields.items())
        con = self.con
        con.execute("BEGIN")
        try:
            con.execute(_RUNS_DDL.format(table=RUNS, text="VARCHAR"))
            self._upgrade_runs()
            con.execute(
                f"CREATE TABLE IF NOT EXISTS {CORRECTIONS} (run_id VARCHAR, contract VARCHAR, key VARCHAR, "
                "old_revision BIGINT, new_revision BIGINT, reason VARCHAR, who VARCHAR, corrected_at TIMESTAMPTZ, "
                "notification VARCHAR, old_values VARCHAR, new_values VARCHAR)"
            )
            con.execute(
                f"CREATE TABLE IF NOT EXISTS {_q(base + '__published')} ({cols}, _run_id VARCHAR, "
                "_ingested_at TIMESTAMPTZ)"
            )
            have = {
                str(r[0])
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [base + "__published"]
                ).fetchall()
            }
            for name, spec in contract.fields.items():  # a field a later contract version added
                if name not in have:
                    con.execute(f"ALTER TABLE {_q(base + '__published')} ADD COLUMN {_q(name)} {_duck_type(spec.type)}")
            con.execute(
                f"CREATE TABLE IF NOT EXISTS {_q(base + '__quarantine')} (_run_id VARCHAR, _row BIGINT, "
                "_batch_level BOOLEAN, _checks VARCHAR, _clauses VARCHAR, _record VARCHAR)"
            )
            con.execute(f"CREATE OR REPLACE VIEW {_q(base)} AS {self.view_sql(contract)}")
        except duckdb.Error as exc:
            con.execute("ROLLBACK")
            raise InputError(
                f"store {self.description} does not fit contract {contract.contract} {contract.version}: "
                f"{engine_message(exc)}"
            ) from None
        con.execute("COMMIT")

    def _upgrade_runs(self) -> None:
        """Bring a run log written by an earlier tscontract to the current columns."""
        have = {
            str(r[0])
            for r in self.con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [RUNS]
            ).fetchall()
        }
        if "attempt" not in have:
            # UNIQUE (contract, input_hash) becomes UNIQUE (contract, input_hash, attempt); DuckDB cannot
            # change a constraint in place, so the log moves into a table of the current shape
            old = ", ".join(c for c in RUN_COLUMNS if c in have)
            self.con.execute(f"ALTER TABLE {RUNS} RENAME TO {RUNS}__old")
            self.con.execute(_RUNS_DDL.format(table=RUNS, text="VARCHAR"))
            self.con.execute(f"INSERT INTO {RUNS} ({old}, attempt) SELECT {old}, 1 FROM {RUNS}__old")
            self.con.execute(f"DROP TABLE {RUNS}__old")
            return
        for name, duck_type, _ in ADDED_RUN_COLUMNS:
            if name not in have:
                self.con.execute(f"ALTER TABLE {RUNS} ADD COLUMN {name} {duck_type}")

    def prior_runs(self, contract: Contract, input_hash: str) -> list[PriorRun]:
        return _prior(self.con.execute(_PRIOR_SQL.format(p="?"), [contract.contract, input_hash]).fetchall())

    def latest(self, contract: Contract, keys: pa.Table) -> pa.Table:
        base = table_base(contract)
        names = self.series_key(contract)
        register(self.con, "__tsc_keys", keys)
        on = " AND ".join(f"p.{_q(k)} = k.{_q(k)}" for k in names)
        revision = "max(p.revision)" if "revision" in contract.fields else "0"
        record = ", ".join(f"{sql_string(n)}, {json_field('p.' + _q(n), f.type)}" for n, f in contract.fields.items())
        result = fetch_arrow(
            self.con,
            f"SELECT {', '.join('k.' + _q(k) for k in names)}, {revision} AS __max_revision, "
            f"arg_max(json_object({record}), {'p.revision' if 'revision' in contract.fields else 'p._ingested_at'})"
            f"::VARCHAR AS __latest FROM (SELECT DISTINCT * FROM __tsc_keys) k "
            f"JOIN {_q(base + '__published')} p ON {on} GROUP BY ALL",
        )
        self.con.unregister("__tsc_keys")
        return result

    def write(self, contract: Contract, batch: Batch) -> None:
        base = table_base(contract)
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            for name, table, target in (
                ("__tsc_pub", batch.published, base + "__published"),
                ("__tsc_quar", batch.quarantined, base + "__quarantine"),
                ("__tsc_corr", batch.corrections, CORRECTIONS),
            ):
                if table.num_rows:
                    register(con, name, table)
                    cols = ", ".join(_q(c) for c in table.column_names)
                    con.execute(f"INSERT INTO {_q(target)} ({cols}) SELECT {cols} FROM {name}")
                    con.unregister(name)
            run = batch.run
            con.execute(
                f"INSERT INTO {RUNS} ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})",
                [run[c] for c in RUN_COLUMNS],
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        return self.con.execute(sql).fetchall()

    def read_latest(self, contract: Contract) -> pa.Table:
        cols = ", ".join(_q(c) for c in contract.fields)
        try:
            return fetch_arrow(self.con, f"SELECT {cols} FROM {_q(table_base(contract))}")
        except duckdb.Error as exc:
            raise _misfit(self.description, contract, str(exc)) from None

    def close(self) -> None:
        self.con.close()


class PostgresStore(Store):
    """PostgreSQL through psycopg; batches are streamed with COPY (CSV written by DuckDB/Arrow)."""

    def __init__(self, url: str, *, lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        try:
            import psycopg
        except ImportError:
            raise InputError("a PostgreSQL store needs psycopg: pip install 'tscontract[postgres]'") from None
        self.psycopg = psycopg
        self.description = re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)
        try:
            self.con = psycopg.connect(url, autocommit=False)
        except psycopg.Error as exc:
            raise InputError(f"cannot connect to {self.description}: {engine_message(exc)}") from None
        self.lock_timeout = lock_timeout
        with self.con.cursor() as cur:
            cur.execute("SET TIME ZONE 'UTC'")
            # a statement waiting longer than this for a lock another session holds fails (55P03)
            cur.execute(f"SET lock_timeout = {max(int(lock_timeout * 1000), 1)}")
        self.con.commit()

    def _busy(self, exc: Exception) -> InputError | None:
        """The one-line error for a lock wait that ran out of ``--lock-timeout``; None for other errors."""
        if not isinstance(exc, self.psycopg.errors.LockNotAvailable):
            return None
        return InputError(
            f"store {self.description} is still in use by another session after waiting "
            f"{self.lock_timeout:g}s (--lock-timeout): {engine_message(exc)}"
        )

    @contextmanager
    def _waiting(self) -> Iterator[None]:
        """Statements that may wait for another session's lock: running out of time is one line."""
        try:
            yield
        except Exception as exc:  # the transaction is rolled back whatever failed
            self.con.rollback()
            busy = self._busy(exc)
            if busy is not None:
                raise busy from None
            raise

    def ensure_schema(self, contract: Contract) -> None:
        base = table_base(contract)
        cols = ", ".join(f"{_q(n)} {_pg_type(f.type)}" for n, f in contract.fields.items())
        try:
            with self.con.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(7351)")  # concurrent first ingests create tables once
                cur.execute(_RUNS_DDL.format(table=RUNS, text="TEXT"))
                self._upgrade_runs(cur)
                cur.execute(
                    f"CREATE TABLE IF NOT EXISTS {CORRECTIONS} (run_id TEXT, contract TEXT, key TEXT, old_revision "
                    "BIGINT, new_revision BIGINT, reason TEXT, who TEXT, corrected_at TIMESTAMPTZ, notification TEXT, "
                    "old_values TEXT, new_values TEXT)"
                )
                cur.execute(
                    f"CREATE TABLE IF NOT EXISTS {_q(base + '__published')} ({cols}, _run_id TEXT, "
                    "_ingested_at TIMESTAMPTZ)"
                )
                have = set(self._columns(cur, base + "__published"))
                for name, spec in contract.fields.items():  # a field a later contract version added
                    if name not in have:
                        cur.execute(
                            f"ALTER TABLE {_q(base + '__published')} ADD COLUMN {_q(name)} {_pg_type(spec.type)}"
                        )
                cur.execute(
                    f"CREATE TABLE IF NOT EXISTS {_q(base + '__quarantine')} (_run_id TEXT, _row BIGINT, "
                    "_batch_level BOOLEAN, _checks TEXT, _clauses TEXT, _record TEXT)"
                )
                shown = self._columns(cur, base)
                if shown and shown != list(contract.fields):  # e.g. a view of an earlier tscontract, with bookkeeping
                    cur.execute(f"DROP VIEW {_q(base)}")
                cur.execute(f"CREATE OR REPLACE VIEW {_q(base)} AS {self.view_sql(contract)}")
            self.con.commit()
        except self.psycopg.Error as exc:
            self.con.rollback()
            raise self._busy(exc) or InputError(
                f"store {self.description} does not fit contract {contract.contract} {contract.version}: "
                f"{engine_message(exc)}"
            ) from None

    def require_tables(self, *tables: str) -> None:
        with self.con.cursor() as cur:
            cur.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                "AND table_name = ANY(%s)",
                (list(tables),),
            )
            have = {str(r[0]) for r in cur.fetchall()}
        self.con.commit()
        _require(self.description, have, tables)

    @staticmethod
    def _columns(cur: Any, table: str) -> list[str]:
        cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = %s ORDER BY ordinal_position",
            (table,),
        )
        return [str(r[0]) for r in cur.fetchall()]

    def _upgrade_runs(self, cur: Any) -> None:
        """Bring a run log written by an earlier tscontract to the current columns."""
        have = set(self._columns(cur, RUNS))
        for name, _, pg_type in ADDED_RUN_COLUMNS:
            if name not in have:
                cur.execute(f"ALTER TABLE {RUNS} ADD COLUMN {name} {pg_type}")
        if "attempt" not in have:
            cur.execute(f"UPDATE {RUNS} SET attempt = 1")
            cur.execute(f"ALTER TABLE {RUNS} DROP CONSTRAINT IF EXISTS {RUNS}_contract_input_hash_key")
            cur.execute(f"ALTER TABLE {RUNS} ADD UNIQUE (contract, input_hash, attempt)")

    def prior_runs(self, contract: Contract, input_hash: str) -> list[PriorRun]:
        with self._waiting(), self.con.cursor() as cur:
            cur.execute(_PRIOR_SQL.format(p="%s"), (contract.contract, input_hash))
            rows = cur.fetchall()
        self.con.commit()
        return _prior(rows)

    def _copy_in(self, cur: Any, table: str, data: pa.Table) -> None:
        """Stream an Arrow table into ``table`` with COPY ... CSV: no per-row Python."""
        if not data.num_rows:
            return
        with tempfile.TemporaryFile() as handle:
            pacsv.write_csv(data, handle, pacsv.WriteOptions(include_header=False, quoting_style="needed"))
            handle.seek(0)
            cols = ", ".join(_q(c) for c in data.column_names)
            with cur.copy(f"COPY {_q(table)} ({cols}) FROM STDIN WITH (FORMAT csv)") as copy:
                while chunk := handle.read(1 << 20):
                    copy.write(chunk)

    def latest(self, contract: Contract, keys: pa.Table) -> pa.Table:
        base = table_base(contract)
        names = self.series_key(contract)
        types = {n: _pg_type(contract.fields[n].type) for n in names}
        record = ", ".join(
            f"{sql_string(n)}, {_pg_instant_text('p.' + _q(n)) if f.type.kind == 'timestamp' else 'p.' + _q(n)}"
            for n, f in contract.fields.items()
        )
        with self._waiting(), self.con.cursor() as cur:
            cur.execute(
                f"CREATE TEMP TABLE __tsc_keys ({', '.join(f'{_q(n)} {t}' for n, t in types.items())}) ON COMMIT DROP"
            )
            self._copy_in(cur, "__tsc_keys", keys)
            on = " AND ".join(f"p.{_q(k)} = k.{_q(k)}" for k in names)
            revision = "p.revision" if "revision" in contract.fields else "p._ingested_at"
            cur.execute(
                f"SELECT DISTINCT ON ({', '.join('k.' + _q(k) for k in names)}) "
                f"{', '.join('k.' + _q(k) for k in names)}, "
                f"{'p.revision' if 'revision' in contract.fields else '0'}, json_build_object({record})::text "
                f"FROM (SELECT DISTINCT * FROM __tsc_keys) k JOIN {_q(base + '__published')} p ON {on} "
                f"ORDER BY {', '.join('k.' + _q(k) for k in names)}, {revision} DESC"
            )
            rows = cur.fetchall()
        self.con.commit()
        columns: list[tuple[Any, ...]] = list(zip(*rows, strict=True)) if rows else [() for _ in range(len(names) + 2)]
        data = {n: pa.array(list(columns[i]), keys.schema.field(n).type) for i, n in enumerate(names)}
        data["__max_revision"] = pa.array(list(columns[len(names)]), pa.int64())
        data["__latest"] = pa.array(list(columns[len(names) + 1]), pa.string())
        return pa.table(data)

    def write(self, contract: Contract, batch: Batch) -> None:
        base = table_base(contract)
        with self._waiting(), self.con.cursor() as cur:
            self._copy_in(cur, base + "__published", batch.published)
            self._copy_in(cur, base + "__quarantine", batch.quarantined)
            self._copy_in(cur, CORRECTIONS, batch.corrections)
            run = batch.run
            cur.execute(
                f"INSERT INTO {RUNS} ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join(['%s'] * len(RUN_COLUMNS))})",
                [run[c] for c in RUN_COLUMNS],
            )
        self.con.commit()

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with self.con.cursor() as cur:
            cur.execute(sql)
            rows = cur.fetchall()
        self.con.commit()
        return rows

    def read_latest(self, contract: Contract) -> pa.Table:
        try:
            return self._read_latest(contract)
        except self.psycopg.Error as exc:
            self.con.rollback()
            raise self._busy(exc) or _misfit(self.description, contract, str(exc)) from None

    def _read_latest(self, contract: Contract) -> pa.Table:
        cols = ", ".join(_q(c) for c in contract.fields)
        with self.con.cursor() as cur, tempfile.TemporaryFile() as handle:
            with cur.copy(
                f"COPY (SELECT {cols} FROM {_q(table_base(contract))}) TO STDOUT WITH (FORMAT csv, HEADER true)"
            ) as copy:
                for chunk in copy:
                    handle.write(chunk)
            handle.seek(0)
            types = {n: arrow_type(f.type) for n, f in contract.fields.items()}
            table = pacsv.read_csv(
                handle, convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True)
            )
        self.con.commit()
        return table

    def close(self) -> None:
        self.con.close()


def open_store(spec: str, *, read_only: bool = False, lock_timeout: float = LOCK_TIMEOUT_S) -> Store:
    """``path/to/warehouse.duckdb`` or ``postgresql://user@host:port/db``.

    ``read_only``: the store must exist (a DuckDB file is never created). ``lock_timeout``: how long to
    wait while another process has the DuckDB file open, or for a PostgreSQL lock another session holds.
    """
    if spec.startswith(("postgresql://", "postgres://")):
        return PostgresStore(spec, lock_timeout=lock_timeout)
    if not spec.endswith((".duckdb", ".db")):
        raise InputError(f"a store is a .duckdb file or a postgresql:// URL, not {spec!r}")
    return DuckDBStore(spec, read_only=read_only, lock_timeout=lock_timeout)


def dumps(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)
