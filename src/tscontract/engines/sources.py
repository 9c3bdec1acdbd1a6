"""Bring a batch into DuckDB without changing a single value on the way.

Text formats (CSV, JSON lines) arrive as text: every column is read as VARCHAR,
JSON numbers keep their literal digits (DuckDB's JSON reader would turn them
into doubles), and the engine parses each value against its declared type, so
a price with nine decimals or a naive timestamp is a failure, not a rounding.
Typed formats (Parquet, Arrow, pandas, polars, a DuckDB table) keep their
physical types, which the engine checks against the contract.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from tscontract.errors import InputError, display_path

SOURCE_VIEW = "__tsc_source"
_TEXT_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".jsonl": "json", ".ndjson": "json", ".json": "json"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}
_DUCKDB_TABLE = re.compile(r"^(?P<db>.+\.(duckdb|db))(::|#)(?P<table>[A-Za-z_][\w.]*)$")


@dataclass
class Source:
    """A registered view ``__tsc_source`` and what is known about its columns."""

    columns: dict[str, str]  # name -> DuckDB type
    text: bool  # every column is text to be parsed (CSV / JSON lines)
    json_types: bool = False  # a ``__jt_<name>`` column gives each value's JSON type
    has_row_number: bool = False  # a ``__row`` column numbers input rows from 1
    description: list[str] = field(default_factory=list)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def paths_of(data: Sequence[str | Path]) -> list[Path]:
    paths = [Path(p) for p in data]
    for path in paths:
        if not path.exists():
            raise InputError(f"data file not found: {display_path(path)}")
        if path.is_dir():
            raise InputError(f"data path is a directory: {display_path(path)}")
    return paths


def fetch_arrow(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> Any:
    """The result of ``sql`` as a pyarrow Table, across DuckDB releases (the method was renamed)."""
    relation = con.sql(sql, params=params) if params is not None else con.sql(sql)
    for name in ("to_arrow_table", "fetch_arrow_table", "arrow"):
        method = getattr(relation, name, None)
        if method is not None:
            table = method()
            return table.read_all() if hasattr(table, "read_all") else table
    raise RuntimeError("this DuckDB release cannot return Arrow tables")  # pragma: no cover


def _describe(con: duckdb.DuckDBPyConnection, view: str) -> dict[str, str]:
    rows = con.execute(f"DESCRIBE {view}").fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def file_kind(paths: list[Path]) -> str:
    """``parquet``, ``csv`` or ``json``: the one format of ``paths``, told by their suffixes."""
    kinds = set()
    for path in paths:
        suffix = path.suffix.lower()
        if suffix in _PARQUET_SUFFIXES:
            kinds.add("parquet")
        elif suffix in _TEXT_SUFFIXES:
            kinds.add(_TEXT_SUFFIXES[suffix])
        else:
            raise InputError(
                f"cannot tell the format of {display_path(path)}: use .parquet, .csv, .tsv, .jsonl or .json"
            )
    if len(kinds) > 1:
        raise InputError(f"one validation reads one format; got {', '.join(sorted(kinds))}")
    return kinds.pop()


def _register_files(con: duckdb.DuckDBPyConnection, paths: list[Path]) -> Source:
    kind = file_kind(paths)
    listed = "[" + ", ".join(_quote(str(p)) for p in paths) + "]"
    shown = [display_path(p) for p in paths]
    try:
        if kind == "parquet":
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * EXCLUDE (file_row_number, __tsc_file), "
                f"file_row_number + 1{_file_offsets(con, paths, listed)} AS __row FROM read_parquet({listed}, "
                "union_by_name = true, file_row_number = true, filename = '__tsc_file')"
            )
            columns = _describe(con, SOURCE_VIEW)
            columns.pop("__row", None)
            return Source(columns, text=False, has_row_number=True, description=shown)
        if kind == "csv":
            delim = "\\t" if all(p.suffix.lower() == ".tsv" for p in paths) else ","
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM read_csv({listed}, "
                f"all_varchar = true, header = true, delim = '{delim}', union_by_name = true, "
                "null_padding = false, strict_mode = true)"
            )
            return Source(_describe(con, SOURCE_VIEW), text=True, description=shown)
        return _register_json(con, listed, shown)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        raise InputError(f"cannot read {', '.join(shown)}: {first}") from None


def _file_offsets(con: duckdb.DuckDBPyConnection, paths: list[Path], listed: str) -> str:
    """SQL adding, to a row's number in its file, the rows of the files before it (none for one file).

    Taken from the Parquet footers, so numbering many files costs no pass over the data; rows
    are numbered as if the files were one, in the order given (as the Spark engine does).
    """
    if len(paths) == 1:
        return ""
    repeated = sorted(display_path(p) for p, n in Counter(paths).items() if n > 1)
    if repeated:
        raise InputError(f"the same file is given more than once: {', '.join(repeated)}")
    rows = dict(con.execute(f"SELECT file_name, num_rows FROM parquet_file_metadata({listed})").fetchall())
    whens, offset = [], 0
    for path in paths:
        whens.append(f"WHEN {_quote(str(path))} THEN {offset}")
        offset += int(rows[str(path)])
    return f" + CASE __tsc_file {' '.join(whens)} END"


def _register_json(con: duckdb.DuckDBPyConnection, listed: str, shown: list[str]) -> Source:
    raw = "__tsc_json_raw"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT json AS __doc, "
        f"row_number() OVER () AS __row FROM read_json_objects({listed}, format = 'newline_delimited')"
    )
    not_objects = con.execute(f"SELECT count(*) FROM {raw} WHERE json_type(__doc) <> 'OBJECT'").fetchall()[0]
    if not_objects and not_objects[0]:
        raise InputError(f"{', '.join(shown)}: every JSON line must be an object (a record)")
    keys = [
        str(r[0])
        for r in con.execute(
            f"SELECT DISTINCT k FROM (SELECT unnest(json_keys(__doc)) AS k FROM {raw}) ORDER BY k"
        ).fetchall()
    ]
    selects = ["__row"]
    for key in keys:
        path = _quote("$." + '"' + key.replace('"', '\\"') + '"')
        # the literal number text, read from the raw document: JSON numbers never pass through double
        number = f"regexp_extract(__doc::VARCHAR, {_quote(number_pattern(key))}, 1)"
        selects.append(
            f"CASE WHEN json_type(__doc, {path}) IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT') "
            f"THEN {number} WHEN json_type(__doc, {path}) = 'BOOLEAN' THEN json_extract(__doc, {path})::VARCHAR "
            f"WHEN json_type(__doc, {path}) IN ('OBJECT', 'ARRAY') THEN json_extract(__doc, {path})::VARCHAR "
            f"ELSE json_extract_string(__doc, {path}) END AS {_ident(key)}"
        )
        selects.append(f"json_type(__doc, {path}) AS {_ident('__jt_' + key)}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT {', '.join(selects)} FROM {raw}")
    columns = {k: "VARCHAR" for k in keys}
    return Source(columns, text=True, json_types=True, has_row_number=True, description=shown)


def number_pattern(key: str) -> str:
    escaped = re.escape(key).replace("'", "''")
    return r'(?:^|[{,])\s*"' + escaped + r'"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)'


def _register_duckdb_table(con: duckdb.DuckDBPyConnection, db: str, table: str) -> Source:
    if not Path(db).exists():
        raise InputError(f"DuckDB database not found: {display_path(db)}")
    con.execute(f"ATTACH {_quote(db)} AS __tsc_input (READ_ONLY)")
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM __tsc_input.{table}")
    except duckdb.Error as exc:
        raise InputError(f"cannot read table {table} in {display_path(db)}: {str(exc).splitlines()[0]}") from None
    return Source(_describe(con, SOURCE_VIEW), text=False, description=[f"{display_path(db)}::{table}"])


def _to_arrow(data: Any) -> Any:
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        import pyarrow as pa

        # through Arrow, so Decimal objects become decimal128 and tz-aware stays tz-aware
        return pa.Table.from_pandas(data, preserve_index=False)
    if module == "polars":
        return data.to_arrow()
    if module == "pyarrow":
        return data
    return None


def open_table(con: duckdb.DuckDBPyConnection, table: str, *, text: bool, description: list[str]) -> Source:
    """Use a table already on ``con`` (with a ``__row`` column numbering rows) as the source."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM {table}")
    columns = _describe(con, SOURCE_VIEW)
    columns.pop("__row", None)
    return Source(columns, text=text, has_row_number=True, description=description)


def open_source(con: duckdb.DuckDBPyConnection, data: Any) -> Source:
    """Register ``data`` as the view ``__tsc_source``.

    ``data`` is a path or list of paths (Parquet, CSV/TSV, JSON lines), a
    ``db.duckdb::table`` reference, or an in-memory pandas / polars DataFrame or
    Arrow table.
    """
    arrow = _to_arrow(data)
    if arrow is not None:
        con.register("__tsc_arrow", arrow)
        con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS SELECT * FROM __tsc_arrow")
        return Source(_describe(con, SOURCE_VIEW), text=False, description=[f"<{type(data).__name__}>"])
    items = [data] if isinstance(data, str | Path) else list(data)
    if not items:
        raise InputError("no data given")
    if len(items) == 1 and (match := _DUCKDB_TABLE.match(str(items[0]))):
        return _register_duckdb_table(con, match["db"], match["table"])
    return _register_files(con, paths_of(items))
