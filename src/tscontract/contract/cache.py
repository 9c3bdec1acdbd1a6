"""Where tscontract keeps what it can rebuild: parsed clauses and pint's unit definitions.

``TSCONTRACT_CACHE_DIR`` chooses the directory (``off`` turns caching off); by default it is
the user's cache directory. Everything here is an optimisation: a missing, unwritable or
damaged cache costs start-up time, never a different result.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

ENV = "TSCONTRACT_CACHE_DIR"
_OFF = ("", "0", "off", "none", "false")


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in _OFF else Path(chosen)
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "tscontract"


def read_pickle(path: Path) -> Any:
    """The object pickled at ``path``; None when there is none or it cannot be read."""
    try:
        with path.open("rb") as handle:
            return pickle.load(handle)
    except Exception:  # missing, truncated, from another Python: rebuild instead
        return None


def write_pickle(path: Path, value: Any) -> None:
    """Pickle ``value`` to ``path`` atomically (a reader sees the old file or the new one); errors ignored.

    Any error: an unwritable directory, a full disk, an object too deep or unfit to pickle
    (RecursionError, TypeError). It runs at exit, where an error would print a traceback
    after the command's own output.
    """
    with contextlib.suppress(Exception):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(name, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
