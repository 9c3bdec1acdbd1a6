"""The DuckDB connection every validation, profile, gate and plot runs on: UTC, quiet, bounded memory."""

from __future__ import annotations

import duckdb

from tscontract.errors import InputError
from tscontract.shown import engine_message
from tscontract.sql.columns import sql_string

# DuckDB's own default is 80% of the machine's memory: a validation would take whatever is there.
# Bounded instead, with a private spill directory: 50M bench rows peak near 1.1 GiB, not 4.4 GiB.
DEFAULT_MEMORY_LIMIT = "1GiB"
MEMORY_LIMIT_ENV = "TSCONTRACT_MEMORY_LIMIT"
_spill_dirs: list[str] = []


def memory_limit() -> str:
    """The memory DuckDB may use (``--memory-limit``, ``TSCONTRACT_MEMORY_LIMIT``, else 1 GiB)."""
    import os

    return os.environ.get(MEMORY_LIMIT_ENV, "").strip() or DEFAULT_MEMORY_LIMIT


def _spill_directory() -> str:
    """A directory of this process for DuckDB's spilled data (not ``./.tmp``), removed at exit."""
    if not _spill_dirs:
        import atexit
        import shutil
        import tempfile

        path = tempfile.mkdtemp(prefix="tscontract-spill-")
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        _spill_dirs.append(path)
    return _spill_dirs[0]


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection set up the way every check expects (UTC, quiet, bounded memory).

    Sorts, aggregates and temporary tables beyond the memory limit spill to a private
    temporary directory; an operation that cannot spill fails with a one-line
    :class:`InputError` naming the limit (see :func:`out_of_memory`).
    """
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    limit = memory_limit()
    try:
        con.execute(f"SET memory_limit = {sql_string(limit)}")
    except duckdb.Error:
        con.close()
        raise InputError(
            f"memory limit {limit!r}: give a size such as 512MB, 2GiB or 80% (--memory-limit, {MEMORY_LIMIT_ENV})"
        ) from None
    con.execute(f"SET temp_directory = {sql_string(_spill_directory())}")
    return con


def out_of_memory(exc: BaseException) -> InputError:
    """DuckDB's out-of-memory error as one line naming the limit and how to raise it."""
    first = engine_message(exc)
    return InputError(
        f"DuckDB needs more memory than the limit of {memory_limit()} ({first}); "
        f"raise it with --memory-limit or {MEMORY_LIMIT_ENV}"
    )
