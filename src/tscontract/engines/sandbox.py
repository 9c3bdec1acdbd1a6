"""A DuckDB connection locked before any SQL from a contract or mapping runs on it.

The inputs are opened and registered first (views over files read lazily, attached databases,
Arrow tables); then the connection loses access to everything else: no file, directory or URL
but the input files themselves (``allowed_paths``), no extension installed or loaded, and the
configuration locked so that no later statement can undo it. The allow-list
(contract/sql_allow.py) keeps such SQL from reaching a file in the first place; this holds even
if something slipped through it. Spilling to the temporary directory goes on (DuckDB's own).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

_LOCKDOWN = (
    "SET enable_external_access = false",
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
    "SET lock_configuration = true",
)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def is_locked(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0])


def lock(con: Any, readable: Iterable[str | Path] = ()) -> None:
    """Lock ``con`` (a DuckDB connection; another engine's connection has its own defence), leaving
    only the files ``readable`` readable. A connection already locked stays as it is."""
    if not isinstance(con, duckdb.DuckDBPyConnection) or is_locked(con):
        return
    paths = sorted({str(p) for p in readable} | {str(Path(p).resolve()) for p in readable})
    if paths:
        con.execute(f"SET allowed_paths = [{', '.join(_quote(p) for p in paths)}]")
    for statement in _LOCKDOWN:
        con.execute(statement)
