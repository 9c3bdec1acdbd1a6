"""The CheckPlan on Apache Spark: the same checks, the same SQL, generated for Spark.

:class:`SparkConnection` stands where the embedded engine's DuckDB connection
stands. The validation run (engines/duckdb.py) issues its statements to it;
each is generated for Spark by sql/dialects.py (TscSpark) and run on the session.
Temporary tables become cached DataFrames behind temporary views. Results come
back through Arrow, so instants arrive as UTC and decimals exact.

Input rows are numbered as the files hold them (failing examples name the same
rows on both engines): every file is read on its own, the reads are unioned in
the order given, and a partition's first row number is its offset among the
partitions before it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import sqlglot.expressions as exp

from tscontract.engines.base import Progress, SharedRun, shown_data
from tscontract.engines.inputs.csv_dialect import CsvDialect, default_dialect
from tscontract.engines.inputs.csv_source import LINES_TABLE, CsvLayout
from tscontract.engines.inputs.sources import (
    SOURCE_VIEW,
    Source,
    duplicated_keys,
    file_kind,
    malformed_json,
    number_pattern,
    paths_of,
)
from tscontract.engines.inputs.tables import many_tables, table_ref
from tscontract.engines.run import HANDLERS
from tscontract.engines.sandbox import stopped_after_timeout
from tscontract.engines.translated import TranslatedConnection
from tscontract.errors import InputError, display_path
from tscontract.plan.checks import CheckPlan
from tscontract.shown import engine_message
from tscontract.sql.dialects import TscSpark, transpile
from tscontract.typemap.physical import SPARK_NAMES

DEFAULT_MASTER = "local[*]"
SPARK_TABLE_PREFIX = "spark:"
ADAPTIVE = "spark.sql.adaptive.enabled"
BROADCAST = "spark.sql.autoBroadcastJoinThreshold"
# classes Spark's code generation keeps compiled, by their source (Spark's default 100): a validation generates
# about 200 (a whole-stage class per stage, projections, the cache's column readers), so with 100 a second
# validation in the same session compiles every one again, and the JVM compiles them again to machine code
# (1M rows, seed contract: 197 compiled again per validation, about 7 CPU-s of 25)
CODEGEN_CACHE = ("spark.sql.codegen.cache.maxEntries", "1000")
# the JVM's own output (Spark's log, JVM warnings): kept out of the terminal, kept for a post-mortem
JVM_LOG = Path(tempfile.gettempdir()) / "tscontract-spark.log"


# ---------------------------------------------------------------------------- session
def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> Any:
    """The Spark session validations run on (``local[*]`` unless a master URL is given).

    Session time zone UTC (an instant is an instant), no UI, quiet logs, room for every class a validation
    generates (``CODEGEN_CACHE``). In one process the session is shared: later calls reuse it.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError("the Spark engine needs pyspark: pip install 'tscontract[spark]'") from None
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise InputError("the Spark engine needs Java 17 or newer (java on PATH or JAVA_HOME)")
    builder = (
        SparkSession.builder.master(master or DEFAULT_MASTER)
        .appName("tscontract")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions(master or DEFAULT_MASTER)))
        .config(*CODEGEN_CACHE)
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    # Spark's Python workers run this interpreter, not whatever python3 is first on PATH
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support")
    for name in ("py4j", "pyspark", "SQLQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        with _jvm_stderr_to(JVM_LOG):
            session = builder.getOrCreate()
    except Exception as exc:  # the JVM could not start: say why in one line
        first = engine_message(exc)
        raise InputError(f"cannot start Spark ({master or DEFAULT_MASTER}): {first} (JVM log: {JVM_LOG})") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


_LOCAL_MASTER = re.compile(r"^local(?:\[(\*|\d+)(?:,\s*\d+)?\])?$")


def shuffle_partitions(master: str) -> int:
    """Partitions of a shuffle: two per core of a local master (a job's tasks on a few cores cost more than
    the rows they move: AQE coalesces, never splits), 16 on a cluster, whose size the session cannot see."""
    found = _LOCAL_MASTER.match(master.strip())
    if found is None:
        return 16
    cores = found[1] or "1"
    return 2 * (os.cpu_count() or 1 if cores == "*" else int(cores))


@contextlib.contextmanager
def _jvm_stderr_to(path: Path) -> Iterator[None]:
    """The JVM Spark starts inherits stderr: point it at a log file, not at the report's reader."""
    sys.stderr.flush()
    saved = os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def parse_conf(items: Iterable[str]) -> dict[str, str]:
    """``key=value`` settings (``--spark-conf``) as a dict; a malformed one is an input error."""
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--spark-conf wants key=value, got {item!r}")
        conf[key.strip()] = value
    return conf


# ---------------------------------------------------------------------------- connection
class SparkConnection(TranslatedConnection):
    """The subset of a DuckDB connection the validation run uses, on a Spark session."""

    engine_name = "Spark"
    statements_dear = True  # a statement is a Spark job or more (engines/run/state.py)

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.cached: dict[str, Any] = {}
        self.views: set[str] = set()
        self.inputs: set[str] = set()  # the input as registered (view, table): every row of the batch
        self.reads: dict[str, set[str]] = {}  # a created view or table -> the names its query reads
        self.unread: set[str] = set()  # tables created from the input that no statement has read yet
        # Adaptive execution runs every shuffle stage as a job of its own (54 jobs for the seed contract, not
        # 26): the run's shuffles are partial aggregates and one window, small and known in advance, which it
        # has nothing to re-plan in. Off while the run's statements run; the session's own settings are back
        # after (close).
        self.saved = {key: spark.conf.get(key, None) for key in (ADAPTIVE, BROADCAST)}
        spark.conf.set(ADAPTIVE, "false")

    def _collect(self, df: Any) -> list[tuple[Any, ...]]:
        table = df.toArrow()
        columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
        return list(zip(*columns, strict=True)) if columns else []

    def view(self, name: str, df: Any) -> None:
        df.createOrReplaceTempView(name)
        self.views.add(name)
        self.inputs.add(name)

    def table(self, name: str, df: Any) -> None:
        """``df`` cached, as the temporary view ``name`` (a temporary table in DuckDB's terms)."""
        old = self.cached.pop(name, None)
        df = df.persist()
        df.createOrReplaceTempView(name)
        if old is not None:
            old.unpersist()
        self.cached[name] = df
        self.views.add(name)
        self.inputs.add(name)

    def create(self, kind: str, name: str, query: exp.Expression) -> None:
        sql = transpile(query, TscSpark())
        reads = {t.name for t in query.find_all(exp.Table)}
        if kind == "VIEW":
            self.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS {sql}")
            self.views.add(name)
        elif self._reads_input(reads):
            self.table(name, self.spark.sql(sql))
            # the batch's rows still (the source with its catalog joined) unless filtered, grouped or windowed
            if query.args.get("where") or query.args.get("group") or query.find(exp.Window):
                self.inputs.discard(name)
                self.unread.add(name)
        else:
            with self._joined_in_place():  # a cached table's plan is made now, not when it is read
                self.table(name, self.spark.sql(sql))
            self.inputs.discard(name)
        self.reads[name] = reads

    def _reaches(self, names: set[str]) -> set[str]:
        """``names`` and what they read in turn, through views and tables not yet computed."""
        found: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in found:
                continue
            found.add(name)
            if name not in self.cached or name in self.unread:
                todo.extend(self.reads.get(name, ()))
        return found

    def _reads_input(self, names: set[str]) -> bool:
        return bool(self._reaches(names) & self.inputs)

    def query(self, tree: exp.Expr) -> list[tuple[Any, ...]]:
        """The rows of ``tree``, joining small tables in place where it reads no row of the batch."""
        names = self._reaches({t.name for t in tree.find_all(exp.Table)})
        try:
            if names & self.inputs:
                return self._collect(self.spark.sql(transpile(tree, TscSpark())))
            with self._joined_in_place():
                return self._collect(self.spark.sql(transpile(tree, TscSpark())))
        finally:
            self.unread -= names  # computed now: a table the statement read is cached

    @contextlib.contextmanager
    def _joined_in_place(self) -> Iterator[None]:
        """No broadcast joins: a statement over the batch's rows joins small tables by broadcast, a job
        each; one over tables already computed (points, duplicates, edges: small) joins them by shuffle,
        in its own job."""
        self.spark.conf.set(BROADCAST, "-1")
        try:
            yield
        finally:
            self._restore(BROADCAST)

    def _restore(self, key: str) -> None:
        value = self.saved[key]
        if value is None:
            self.spark.conf.unset(key)
        else:
            self.spark.conf.set(key, value)

    def untrusted(self, sql: str) -> list[tuple[Any, ...]]:
        """A contract's own query, its Spark jobs cancelled after ``TSCONTRACT_SQL_TIMEOUT`` seconds (SqlTimeout)."""
        context = self.spark.sparkContext
        tag = f"tscontract-sql-check-{uuid.uuid4().hex}"
        context.addJobTag(tag)
        try:  # cancelled again until the query ends: a job submitted after the first cancel is cancelled too
            with stopped_after_timeout(lambda: context.cancelJobsWithTag(tag)):
                return super().untrusted(sql)
        finally:
            context.removeJobTag(tag)

    def register(self, name: str, table: Any) -> None:
        """An Arrow table as a temporary table (relations.small_table, for large ones)."""
        self.table(name, self.spark.createDataFrame(table))
        self.inputs.discard(name)

    def close(self) -> None:
        for df in self.cached.values():
            df.unpersist()
        for name in self.views:
            self.spark.catalog.dropTempView(name)
        self.cached.clear()
        self.views.clear()
        self.inputs.clear()
        self.reads.clear()
        self.unread.clear()
        for key in self.saved:
            self._restore(key)


# ---------------------------------------------------------------------------- sources
def _duckdb_type(dtype: Any) -> str:
    """A Spark column type named as the column checks name physical types (DuckDB's names)."""
    from pyspark.sql import types as T

    for class_name, name in SPARK_NAMES.items():
        if isinstance(dtype, getattr(T, class_name)):
            return name
    if isinstance(dtype, T.DecimalType):
        return f"DECIMAL({dtype.precision},{dtype.scale})"
    return dtype.simpleString().upper()


def _numbered(spark: Any, df: Any) -> Any:
    """``df`` with ``__row``: 1.. in partition order, which is file order for the reads here."""
    from pyspark.sql import functions as F

    df = df.withColumn("__mono", F.monotonically_increasing_id()).withColumn("__pid", F.spark_partition_id())
    stats = sorted(df.groupBy("__pid").agg(F.count("*").alias("n"), F.min("__mono").alias("lo")).collect())
    bases, offset = [], 0
    for pid, n, lo in stats:
        bases.append((pid, offset - lo + 1))
        offset += n
    table = spark.createDataFrame(bases, "__pid INT, __base BIGINT")
    return (
        df.join(F.broadcast(table), "__pid")
        .withColumn("__row", F.col("__mono") + F.col("__base"))
        .drop("__mono", "__pid", "__base")
    )


def _parquet_numbered(spark: Any, paths: list[Path]) -> Any:
    """Parquet files with ``__row`` from each row's index in its file: no extra pass over the data."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    frames, offset = [], 0
    for path in paths:
        frame = spark.read.parquet(str(path))
        frames.append(frame.withColumn("__row", F.col("_metadata.row_index") + F.lit(offset + 1)))
        offset += pq.ParquetFile(path).metadata.num_rows
    return _union(frames)


def _union(frames: list[Any]) -> Any:
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other, allowMissingColumns=True)
    return df


def _read_json(con: SparkConnection, paths: list[Path], shown: list[str]) -> Source:
    """JSON lines as text: each value's literal text and JSON type, as the embedded engine reads them."""
    spark = con.spark
    # parsed in full even where a key is given twice: that row fails source.rows and the key's value is NULL
    spark.conf.set("spark.sql.variant.allowDuplicateKeys", "true")
    lines = _numbered(spark, _union([spark.read.text(str(p)) for p in paths]))
    con.view("__tsc_json_lines", lines.selectExpr("__row", "value AS __doc", "try_parse_json(value) AS __v"))
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE __tsc_json_raw AS SELECT *, {duplicated_keys('__keys')} AS __tsc_dups "
        "FROM (SELECT *, json_keys(__doc) AS __keys FROM __tsc_json_lines) j"
    )
    bad = spark.sql(
        "SELECT count(*) FROM __tsc_json_raw WHERE __v IS NULL OR NOT startswith(schema_of_variant(__v), 'OBJECT')"
    ).collect()[0][0]
    if bad:
        raise InputError(f"{', '.join(shown)}: every JSON line must be an object (a record)")
    keys = [
        r[0]
        for r in spark.sql(
            "SELECT DISTINCT k FROM (SELECT explode(json_object_keys(__doc)) AS k FROM __tsc_json_raw) ORDER BY k"
        ).collect()
    ]
    duplicates = spark.sql("SELECT count(*) FROM __tsc_json_raw WHERE __tsc_dups IS NOT NULL").collect()[0][0]
    malformed = malformed_json("__tsc_dups", "__doc") if duplicates else []
    selects = ["__row", *(transpile(sql, TscSpark()) for sql in malformed)]
    for key in keys:
        path = "'$[\"" + key.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'") + "\"]'"
        value = f"variant_get(__v, {path})"
        kind = f"schema_of_variant({value})"
        jt = (
            f"CASE WHEN {value} IS NULL THEN NULL WHEN {kind} = 'VOID' THEN 'NULL' "
            f"WHEN {kind} IN ('BIGINT', 'INT', 'SMALLINT', 'TINYINT') OR {kind} RLIKE '^DECIMAL\\\\(\\\\d+,0\\\\)$' "
            f"THEN 'BIGINT' WHEN {kind} IN ('DOUBLE', 'FLOAT') OR startswith({kind}, 'DECIMAL') THEN 'DOUBLE' "
            f"WHEN {kind} = 'STRING' THEN 'VARCHAR' WHEN {kind} = 'BOOLEAN' THEN 'BOOLEAN' "
            f"WHEN startswith({kind}, 'OBJECT') THEN 'OBJECT' WHEN startswith({kind}, 'ARRAY') THEN 'ARRAY' "
            f"ELSE {kind} END"
        )
        pattern = number_pattern(key).replace("\\", "\\\\").replace("'", "\\'")
        text = (
            f"CASE WHEN {jt} IN ('BIGINT', 'DOUBLE') THEN regexp_extract(__doc, '{pattern}', 1) "
            f"WHEN {jt} = 'VARCHAR' THEN variant_get(__v, {path}, 'string') "
            f"WHEN {jt} = 'NULL' THEN NULL ELSE to_json({value}) END"
        )
        if duplicates:  # a malformed row has no values
            text, jt = (f"CASE WHEN __tsc_dups IS NULL THEN {sql} END" for sql in (text, jt))
        selects += [f"{text} AS `{key}`", f"{jt} AS `__jt_{key}`"]
    con.view(SOURCE_VIEW, spark.sql(f"SELECT {', '.join(selects)} FROM __tsc_json_raw"))
    return Source(
        dict.fromkeys(keys, "VARCHAR"),
        text=True,
        json_types=True,
        has_row_number=True,
        malformed=bool(duplicates),
        description=shown,
    )


# a line as the embedded engine reads it: without the CR of a CRLF, the first without a byte order mark
_LINE_TEXT = "CASE WHEN __row = 1 AND startswith(__t, '\ufeff') THEN substring(__t, 2) ELSE __t END AS __tsc_text"


def _read_csv(con: SparkConnection, paths: list[Path], shown: list[str], dialect: CsvDialect) -> Source:
    """CSV as the embedded engine reads it: the files' lines, then the same statements (inputs/csv_source.py)."""
    spark = con.spark
    layout = CsvLayout(dialect, paths, con, spark=True)
    frames = []
    for i, path in enumerate(paths):
        lines = _numbered(spark, spark.read.text(str(path), lineSep="\n")).selectExpr(
            "__row", "CASE WHEN endswith(value, '\\r') THEN substring(value, 1, length(value) - 1) ELSE value END __t"
        )
        frames.append(lines.selectExpr(f"{i} AS __tsc_file", "__row AS __tsc_line", _LINE_TEXT))
    con.table(LINES_TABLE, _union(frames))
    # what DuckDB's reader refuses: a CR that ends no line, bytes that are not UTF-8 (Spark keeps them as read)
    bad = spark.sql(
        f"SELECT __tsc_file, __tsc_line, contains(__tsc_text, '\\r') FROM {LINES_TABLE} "
        "WHERE contains(__tsc_text, '\\r') OR NOT is_valid_utf8(__tsc_text) ORDER BY 1, 2 LIMIT 1"
    ).collect()
    if bad:
        index, line, lone_cr = bad[0]
        why = "has a carriage return without a line feed; lines end in LF or CRLF" if lone_cr else "is not UTF-8 text"
        raise InputError(f"{shown[index]}: line {line} {why}")
    view = layout.build(con, f"SELECT * FROM {LINES_TABLE}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS {view}")
    columns = dict.fromkeys(layout.columns, "VARCHAR")
    return Source(columns, text=True, has_row_number=True, malformed=layout.malformed, description=shown)


def _register(con: SparkConnection, df: Any, *, text: bool, description: list[str]) -> Source:
    """``df`` as the source view; numbered here unless it brings its own ``__row``."""
    columns = {f.name: _duckdb_type(f.dataType) for f in df.schema.fields if f.name != "__row"}
    # kept once the catalog is joined to it (engines/run/state.py create_typed_view): read once
    con.view(SOURCE_VIEW, df if "__row" in df.columns else _numbered(con.spark, df))
    return Source(columns, text=text, has_row_number=True, description=description)


def open_spark_source(con: SparkConnection, data: Any, *, csv: CsvDialect | None = None) -> Source:
    """Register ``data`` as the Spark view ``__tsc_source``.

    ``data`` is a path or list of paths (Parquet, CSV/TSV, JSON lines), ``spark:TABLE``
    (a table in the session's catalog) or a pyspark DataFrame; ``csv`` the CSV dialect
    (default RFC 4180, as on the embedded engine).
    """
    spark = con.spark
    if type(data).__module__.startswith("pyspark"):
        return _register(con, data, text=False, description=["<DataFrame>"])
    items = [data] if isinstance(data, str | Path) else list(data)
    if not items:
        raise InputError("no data given")
    if len(items) == 1 and str(items[0]).startswith(SPARK_TABLE_PREFIX):
        table = str(items[0])[len(SPARK_TABLE_PREFIX) :]
        if not spark.catalog.tableExists(table):
            raise InputError(f"no table {table!r} in the Spark catalog")
        return _register(con, spark.table(table), text=False, description=[str(items[0])])
    many_tables(items)
    if (ref := table_ref(items)) is not None:
        from tscontract.engines.spark_tables import spark_table  # Spark's Delta / Iceberg readers

        return _register(con, spark_table(spark, ref), text=False, description=[ref.url])
    paths = paths_of(items)  # s3:// objects copied first (engines/inputs/object_store.py)
    kind = file_kind(paths)
    shown = [display_path(p) for p in paths]
    try:
        if kind == "json":
            return _read_json(con, paths, shown)
        if kind == "parquet":
            return _register(con, _parquet_numbered(spark, paths), text=False, description=shown)
        return _read_csv(con, paths, shown, csv or default_dialect())
    except InputError:
        raise
    except Exception as exc:
        first = engine_message(exc)
        raise InputError(f"cannot read {', '.join(shown)}: {first}") from None


# ---------------------------------------------------------------------------- engine
class SparkEngine(SharedRun):
    """Executes a :class:`CheckPlan` on Spark through the embedded engine's validation run.

    ``master`` (default ``local[*]``) and ``conf`` (settings for the session) are its options.
    """

    name = "spark"
    HANDLERS = HANDLERS  # the validation run judges every kind (engines/run/)
    OPTIONS = ("master", "conf")

    def __init__(self, master: str | None = None, conf: dict[str, str] | None = None) -> None:
        self.master = master
        self.conf = conf

    def connect(self, data: Any, progress: Progress) -> SparkConnection:
        progress("starting Spark")
        return SparkConnection(spark_session(self.master, self.conf))

    def open(self, con: SparkConnection, data: Any, plan: CheckPlan) -> Source:
        return open_spark_source(con, data)

    def refused(self, exc: Exception, data: Any) -> InputError | None:
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            return None
        # a Spark job failed on the data (a malformed CSV line, an unreadable file): one line, exit 2
        return InputError(f"Spark could not validate {shown_data(data)}: {engine_message(exc).strip()}")
