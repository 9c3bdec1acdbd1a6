"""A DuckDB connection locked before any SQL from a contract or mapping runs on it.

The inputs are opened and registered first (views over files read lazily, attached databases,
Arrow tables); then the connection loses access to everything else: no file, directory or URL
but the input files themselves (``allowed_paths``), no extension installed or loaded, and the
configuration locked so that no later statement can undo it. The allow-list
(contract/sql_allow.py) keeps such SQL from reaching a file in the first place; this holds even
if something slipped through it. Spilling to the temporary directory goes on (DuckDB's own).

A contract's own query (a SQL check) also runs for at most ``TSCONTRACT_SQL_TIMEOUT`` seconds
(300 by default) on every engine: DuckDB interrupts it (:func:`bounded`), PostgreSQL sets
``statement_timeout``, chdb ``max_execution_time``, Spark cancels the query's tagged jobs. A cross
join the allow-list lets through (at most ``MAX_RELATIONS`` relations) cannot run for ever.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from tscontract.errors import InputError

SQL_TIMEOUT_ENV = "TSCONTRACT_SQL_TIMEOUT"
DEFAULT_SQL_TIMEOUT_S = 300.0

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


def contract_sql_timeout_s() -> float:
    """How long one contract query may run (``TSCONTRACT_SQL_TIMEOUT`` seconds, else 300)."""
    text = os.environ.get(SQL_TIMEOUT_ENV, "").strip()
    try:
        seconds = float(text) if text else DEFAULT_SQL_TIMEOUT_S
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise InputError(f"{SQL_TIMEOUT_ENV}={text!r}: give seconds, such as 60")
    return seconds


STOP_AGAIN_S = 0.5  # once its time is up, a contract query is stopped again this often until it ends


class SqlTimeout(Exception):
    """A contract query ran longer than :func:`contract_sql_timeout_s` and was interrupted."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped after {seconds:g} s ({SQL_TIMEOUT_ENV})")


@contextlib.contextmanager
def stopped_after_timeout(stop: Callable[[], None]) -> Iterator[float]:
    """Run the block; after :func:`contract_sql_timeout_s` seconds call ``stop`` (interrupt the engine), again
    every :data:`STOP_AGAIN_S` until the block ends, and an error the block then raises is a
    :class:`SqlTimeout`. Yields the seconds.

    Once is not enough: a stop reaches only the work running at that moment, and a query still being planned
    when the time is up (a cross join under load on Spark) starts its work after, which would run for ever."""
    seconds = contract_sql_timeout_s()
    fired, ended = threading.Event(), threading.Event()

    def fire() -> None:
        fired.set()
        while True:
            stop()
            if ended.wait(STOP_AGAIN_S):
                return

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield seconds
    except Exception:
        if fired.is_set():
            raise SqlTimeout(seconds) from None
        raise
    finally:
        ended.set()
        timer.cancel()


def bounded(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    """``sql``'s rows, the query interrupted after :func:`contract_sql_timeout_s` (SqlTimeout)."""
    with stopped_after_timeout(con.interrupt):
        return con.execute(sql).fetchall()
