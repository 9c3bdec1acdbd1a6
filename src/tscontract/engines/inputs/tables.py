"""Lakehouse tables as a data argument: Apache Iceberg (pyiceberg) and Delta Lake (deltalake).

``iceberg://CATALOG/NAMESPACE.TABLE[@SNAPSHOT_ID]``
    a table of the pyiceberg catalog named CATALOG, configured as pyiceberg configures catalogs
    (``~/.pyiceberg.yaml``, ``PYICEBERG_HOME``, or ``PYICEBERG_CATALOG__<NAME>__URI`` and the like):
    credentials stay in that configuration, never in the argument. Default: the current snapshot.
``delta://PATH[@VERSION]``
    a Delta Lake table at PATH (a directory, or a URI deltalake reads: ``delta://s3://bucket/path``,
    with the S3 settings of engines/inputs/object_store.py). Default: the latest version.

The table is read as a stream of Arrow record batches into a DuckDB temporary table, which spills to
disk beyond the memory limit: nothing holds the whole table in memory. With ``--from/--to`` the batch
is the table's rows whose time column lies in ``[from, to)``: the window is pushed down to the scan
(pyiceberg's ``row_filter``, whose partition and column statistics skip files; for Delta, pyarrow's
dataset filter over the files' partition values and the log's per-file statistics), and the report's
data line says which snapshot or version was read and how many data files of how many.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tscontract.engines.inputs.object_store import ENDPOINT_ENVS, error_line
from tscontract.errors import InputError

ICEBERG_SCHEME = "iceberg://"
DELTA_SCHEME = "delta://"
TABLE_SCHEMES = (ICEBERG_SCHEME, DELTA_SCHEME)
EXTRAS = {"iceberg": "pyiceberg", "delta": "deltalake"}


@dataclass(frozen=True)
class Window:
    """The rows a batch read from a table holds: ``column`` in ``[start, end)`` (an open end: None)."""

    column: str
    start: datetime | None
    end: datetime | None

    def shown(self) -> str:
        start = self.start.isoformat() if self.start else "..."
        end = self.end.isoformat() if self.end else "..."
        return f"{self.column} in [{start}, {end})"


class TableUrl(str):
    """A table's URL as given (a ``str`` wherever data is named), the window read from it and, for a sample
    (``init``), the most rows read."""

    window: Window | None
    limit: int | None

    def __new__(cls, url: str, window: Window | None = None, limit: int | None = None) -> TableUrl:
        made = super().__new__(cls, url)
        made.window, made.limit = window, limit
        return made


@dataclass(frozen=True)
class TableRef:
    url: str
    kind: str  # iceberg | delta
    location: str  # CATALOG/NAMESPACE.TABLE or the Delta table's path
    version: int | None  # snapshot id or version; None: the latest
    window: Window | None
    limit: int | None = None  # the most rows read (a sample), None: all


def is_table_url(data: Any) -> bool:
    if isinstance(data, list | tuple) and len(data) == 1:
        data = data[0]
    return isinstance(data, str) and data.startswith(TABLE_SCHEMES)


def table_ref(data: Any) -> TableRef | None:
    """``data`` (alone, or the one item of a list) as a table reference; None where it is no table URL."""
    if isinstance(data, list | tuple) and len(data) == 1:
        data = data[0]
    if not is_table_url(data):
        return None
    url = str(data)
    kind = "iceberg" if url.startswith(ICEBERG_SCHEME) else "delta"
    body = url.split("://", 1)[1]
    head, at, tail = body.rpartition("@")
    version = None
    if at and tail.isdigit():
        body, version = head, int(tail)
    elif at and kind == "iceberg":
        raise InputError(f"{url}: '@' takes a snapshot id (digits), such as @4358109269873137077")
    if kind == "iceberg":
        catalog, _, identifier = body.partition("/")
        if not catalog or "." not in identifier.strip("."):
            raise InputError(f"{url}: give iceberg://CATALOG/NAMESPACE.TABLE[@SNAPSHOT_ID]")
    elif not body:
        raise InputError(f"{url}: give delta://PATH[@VERSION]")
    return TableRef(url, kind, body, version, getattr(data, "window", None), getattr(data, "limit", None))


def windowed(data: Any, column: str, coverage: tuple[datetime | None, datetime | None] | None) -> Any:
    """``data`` with the window ``--from/--to`` reads when it names a table; other data as it is."""
    if coverage is None or not any(coverage) or not is_table_url(data):
        return data
    url = data[0] if isinstance(data, list | tuple) else data
    return TableUrl(str(url), Window(column, *coverage))


def sampled(data: list[Any], rows: int) -> list[Any]:
    """``data`` with a table URL read for its first ``rows`` rows only (``init``'s sample); files as they are."""
    if not is_table_url(data):
        return data
    return [TableUrl(str(data[0]), getattr(data[0], "window", None), rows)]


def _head(reader: Any, rows: int | None) -> Any:
    """``reader``'s first ``rows`` rows, still a stream (all where ``rows`` is None)."""
    if rows is None:
        return reader
    import pyarrow as pa

    def batches() -> Any:
        left = rows
        for batch in reader:
            if left <= 0:
                break
            yield batch.slice(0, left)
            left -= batch.num_rows

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


def many_tables(items: list[Any]) -> None:
    """A table is a batch by itself: refuse it beside other data."""
    if len(items) > 1 and any(is_table_url(i) for i in items):
        raise InputError("a table URL (iceberg://, delta://) is the only data of a run: give it alone")


@dataclass
class TableScan:
    reader: Any  # a pyarrow RecordBatchReader over the rows read
    description: str  # the URL, the snapshot or version read, the files read of all, the window
    version: int | None  # the snapshot id or version read (None: an Iceberg table with no snapshot yet)


def _missing(kind: str) -> InputError:
    return InputError(f"{kind}:// tables need the {EXTRAS[kind]} package: install tscontract[{kind}]")


def _micros(moment: datetime) -> int:
    """``moment`` as Iceberg stores a timestamp: microseconds since the epoch, UTC."""
    return (moment.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def _described(ref: TableRef, reader: Any, at: tuple[str, int | None], files: int, total: int) -> TableScan:
    window = f"; {ref.window.shown()}" if ref.window else ""
    read = f"{files} of {total} data files" + (f", the first {ref.limit:,} rows" if ref.limit is not None else "")
    return TableScan(_head(reader, ref.limit), f"{ref.url} ({at[0]} {at[1]}; {read}{window})", at[1])


def _iceberg_filter(ref: TableRef, table: Any) -> Any:
    from pyiceberg import expressions as ex
    from pyiceberg.expressions.literals import literal
    from pyiceberg.types import TimestampType, TimestamptzType

    if ref.window is None:
        return ex.AlwaysTrue()
    column, start, end = ref.window.column, ref.window.start, ref.window.end
    try:
        found = table.schema().find_field(column)
    except ValueError:
        raise InputError(
            f"{ref.url}: no column {column!r} (the contract's time column) to read --from/--to by"
        ) from None
    if not isinstance(found.field_type, TimestampType | TimestamptzType):
        raise InputError(
            f"{ref.url}: column {column!r} is {found.field_type}, not a timestamp: --from/--to cannot select"
        )
    parts: list[Any] = []
    if start is not None:
        parts.append(ex.GreaterThanOrEqual(term=ex.Reference(column), value=literal(_micros(start))))
    if end is not None:
        parts.append(ex.LessThan(term=ex.Reference(column), value=literal(_micros(end))))
    return parts[0] if len(parts) == 1 else ex.And(*parts)


def _iceberg_scan(ref: TableRef) -> TableScan:
    try:
        from pyiceberg.catalog import load_catalog
    except ImportError:
        raise _missing("iceberg") from None
    name, _, identifier = ref.location.partition("/")
    try:
        table = load_catalog(name).load_table(identifier)
    except Exception as exc:  # pyiceberg's errors for a catalog not configured, unreachable, no such table
        raise InputError(f"cannot open {ref.url}: {error_line(exc)}") from None
    snapshot = table.snapshot_by_id(ref.version) if ref.version is not None else table.current_snapshot()
    if ref.version is not None and snapshot is None:
        known = ", ".join(str(s.snapshot_id) for s in table.snapshots()[-5:]) or "none"
        raise InputError(f"{ref.url}: no snapshot {ref.version} (latest snapshots: {known})")
    snapshot_id = snapshot.snapshot_id if snapshot is not None else None
    row_filter = _iceberg_filter(ref, table)
    scan = table.scan(row_filter=row_filter, snapshot_id=snapshot_id)
    try:
        files = len(list(scan.plan_files()))
        total = len(list(table.scan(snapshot_id=snapshot_id).plan_files()))
        reader = scan.to_arrow_batch_reader()
    except Exception as exc:
        raise InputError(f"cannot read {ref.url}: {error_line(exc)}") from None
    return _described(ref, reader, ("snapshot", snapshot_id), files, total)


def delta_storage_options() -> dict[str, str]:
    """deltalake's storage options for an S3-compatible endpoint of the environment (its own variables
    otherwise: deltalake reads ``AWS_*`` itself)."""
    import os

    for name in ENDPOINT_ENVS:
        endpoint = os.environ.get(name, "").strip()
        if endpoint:
            allow = "true" if endpoint.startswith("http://") else "false"
            return {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": allow}
    return {}


def _delta_filter(ref: TableRef, dataset: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if ref.window is None:
        return None
    column = ref.window.column
    if column not in dataset.schema.names:
        raise InputError(f"{ref.url}: no column {column!r} (the contract's time column) to read --from/--to by")
    kind = dataset.schema.field(column).type
    if not pa.types.is_timestamp(kind):
        raise InputError(f"{ref.url}: column {column!r} is {kind}, not a timestamp: --from/--to cannot select")
    parts = []
    for moment, keep in ((ref.window.start, pc.greater_equal), (ref.window.end, pc.less)):
        if moment is not None:
            value = moment.astimezone(UTC) if kind.tz else moment.astimezone(UTC).replace(tzinfo=None)
            parts.append(keep(pc.field(column), pa.scalar(value, type=kind)))
    return parts[0] if len(parts) == 1 else parts[0] & parts[1]


def _delta_location(location: str) -> str:
    return location if "://" in location else str(Path(location).resolve())


def _delta_scan(ref: TableRef) -> TableScan:
    try:
        from deltalake import DeltaTable
    except ImportError:
        raise _missing("delta") from None
    try:
        table = DeltaTable(_delta_location(ref.location), version=ref.version, storage_options=delta_storage_options())
        dataset = table.to_pyarrow_dataset()
    except Exception as exc:  # deltalake's errors for no table there, no such version, unreachable storage
        raise InputError(f"cannot open {ref.url}: {error_line(exc)}") from None
    row_filter = _delta_filter(ref, dataset)
    try:
        files = len(list(dataset.get_fragments(filter=row_filter)))
        total = len(list(dataset.get_fragments()))
        reader = dataset.scanner(filter=row_filter).to_reader()
    except Exception as exc:
        raise InputError(f"cannot read {ref.url}: {error_line(exc)}") from None
    return _described(ref, reader, ("version", table.version()), files, total)


def scan(ref: TableRef) -> TableScan:
    """The rows of ``ref`` (its window only, pushed down) as a stream of Arrow record batches."""
    return _iceberg_scan(ref) if ref.kind == "iceberg" else _delta_scan(ref)


def pinned(data: Any) -> TableUrl:
    """The table URL ``data`` with the snapshot or version it reads now (the latest where none is given):
    ingest reads, and recognises a batch by, exactly that version."""
    ref = table_ref(data)
    assert ref is not None
    version = scan(ref).version if ref.version is None else None
    return TableUrl(ref.url if version is None else f"{ref.url}@{version}", ref.window)


def identity_hash(data: TableUrl) -> str:
    """What ingest recognises a batch by: the table, the snapshot or version read, the window."""
    window = data.window.shown() if data.window else ""
    return hashlib.sha256(f"{data}\0{window}".encode()).hexdigest()
