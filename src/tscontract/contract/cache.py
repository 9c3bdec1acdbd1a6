"""Where tscontract keeps what it can rebuild: contracts and catalogs as read, parsed clauses,
pint's unit definitions, unit verdicts and exchange sessions.

``TSCONTRACT_CACHE_DIR`` chooses the directory (``off`` turns caching off); by default it is
the user's cache directory. Everything here is an optimisation: a missing, unwritable or
damaged cache costs start-up time, never a different result.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

ENV = "TSCONTRACT_CACHE_DIR"
_OFF = ("", "0", "off", "none", "false")
_T = TypeVar("_T")


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off (or the directory is not the user's own)."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in _OFF else _own(Path(chosen))
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return _own(base / "tscontract")


_REFUSED: set[Path] = set()  # said once a process


def _own(directory: Path) -> Path | None:
    """``directory`` when only this user can write it (or it is not there yet: it is made by this user).

    The cache holds pickles, which run code when read: a directory another user could write is not read
    (POSIX): one owned by someone else or world-writable, or group-writable for a group that is not the
    user's own private group (:func:`sole_member`, as Debian's OpenSSH judges ``~/.ssh``).
    """
    if not hasattr(os, "getuid"):
        return directory
    try:
        found = directory.stat()
    except OSError:
        return directory
    uid = os.getuid()
    if found.st_uid == uid and not found.st_mode & 0o002 and (not found.st_mode & 0o020 or _own_group(found.st_gid)):
        return directory
    if directory not in _REFUSED:
        _REFUSED.add(directory)
        sys.stderr.write(
            f"tscontract: cache directory {directory} can be written by other users: not used "
            f"(set {ENV} to a directory only you can write, or to off)\n"
        )
    return None


@cache
def _own_group(gid: int) -> bool:
    """Whether group ``gid`` holds this user alone (a user private group), from the system's user database."""
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        me = pwd.getpwuid(os.getuid())
    except KeyError:
        return False
    primaries = [(entry.pw_uid, entry.pw_name) for entry in pwd.getpwall() if entry.pw_gid == gid]
    return sole_member((me.pw_uid, me.pw_name), primaries, list(group.gr_mem))


def sole_member(me: tuple[int, str], primaries: list[tuple[int, str]], listed: list[str]) -> bool:
    """Whether a group is ``me``'s alone: every user whose primary group it is is ``me`` (by uid), it lists
    no member but ``me`` (by name), and it has a member at all (an empty group is a setgid program's)."""
    uid, name = me
    if any(member_uid != uid for member_uid, _ in primaries) or any(member != name for member in listed):
        return False
    return bool(primaries or listed)


def read_pickle(path: Path) -> Any:
    """The object pickled at ``path``; None when there is none or it cannot be read.

    The collector is paused while it loads (and left as the caller had it): unpickling a catalog makes
    thousands of objects, none of them garbage, and each collection it would trigger walks every object
    the process holds (a full one about 20 ms after the imports of a validation).
    """
    paused = gc.isenabled()
    try:
        with path.open("rb") as handle:
            gc.disable()
            return pickle.load(handle)
    except Exception:  # missing, truncated, from another Python: rebuild instead
        return None
    finally:
        if paused:
            gc.enable()


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


def code_digest(*extra: str) -> str:
    """A digest of tscontract's contract-reading code (``contract/*.py``, the grammar) and ``extra``.

    A cached result is keyed by it, so an edit or upgrade of that code retires the result;
    the files are read and hashed once a process (about a millisecond).
    """
    return hashlib.sha256("\n".join((*extra, _code_files_digest())).encode()).hexdigest()


@cache
def _code_files_digest() -> str:
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in sorted([*here.glob("*.py"), *here.glob("*.lark")]):
        with contextlib.suppress(OSError):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def library_stamp(*names: str) -> str:
    """Each named library's location, size and time (of its ``__init__``), without importing it.

    What a cached result depends on besides our code: an upgrade of the library changes its stamp.
    """
    stamps = []
    for name in names:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None and spec.origin else ""
        stamp = ""
        if origin:
            with contextlib.suppress(OSError):
                found = os.stat(origin)
                stamp = f"{found.st_size}:{found.st_mtime_ns}"
        stamps.append(f"{name}={origin}:{stamp}")
    return "\n".join(stamps)


# the libraries a contract or catalog is read with: YAML, the clause grammar, the model, the clauses' SQL, units,
# and the time zone database when it is a package (a system's /usr/share/zoneinfo is not stamped)
READERS = ("ruamel.yaml", "lark", "pydantic", "pydantic_core", "sqlglot", "pint", "tzdata")


@cache
def reader_key() -> str:
    """What reading a contract or catalog depends on: our reading code (``contract/``, ``errors.py``) and the
    libraries it reads with (:data:`READERS`)."""
    errors = Path(__file__).resolve().parents[1] / "errors.py"
    with contextlib.suppress(OSError):
        return code_digest("reader", errors.read_text(encoding="utf-8"), library_stamp(*READERS))
    return code_digest("reader", library_stamp(*READERS))


SLOTS = 256  # files per kind of document: a new one takes the slot of its name (the cache stays bounded)


def slot_of(name: str, slots: int) -> int:
    """Which of ``slots`` files holds what ``name`` names: a digest, so names spread evenly."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % slots


def read_once(kind: str, name: str, text: str, read: Callable[[], _T], accept: type[_T]) -> _T:
    """``read()``, or what a process before this one read from the same ``text`` named ``name``.

    A document read from ``text`` depends only on the text, its name (positions in it name the file)
    and :func:`reader_key`. Each name has one of :data:`SLOTS` files: a new document in the same slot
    replaces the one there. Only a document that read without error is kept; a damaged or foreign
    file is read again, never trusted (``accept``: the type the result must have).
    """
    directory = cache_dir()
    if directory is None:
        return read()
    key = hashlib.sha256("\0".join((kind, reader_key(), name, text)).encode()).hexdigest()
    where = directory / f"{kind}-read" / f"{slot_of(name, SLOTS):02x}.pickle"
    found = read_pickle(where)
    if isinstance(found, dict) and found.get("key") == key and isinstance(found.get("value"), accept):
        return found["value"]  # type: ignore[no-any-return]
    value = read()
    write_pickle(where, {"key": key, "value": value})
    return value


class PickledDict:
    """A dict kept in one pickle file of the cache: read on first use, written at exit if it grew.

    ``name`` is called on first use for the file's name (a version key in it retires old
    entries). Without a cache directory it is an ordinary dict for the process.
    """

    LIMIT = 20_000  # entries kept; past it new ones are not kept (the caller computes them again)

    def __init__(self, name: Callable[[], str]) -> None:
        self._name = name
        self.path: Path | None = None
        self._entries: dict[Any, Any] | None = None
        self._added = False

    def entries(self) -> dict[Any, Any]:
        if self._entries is None:
            self._entries = {}
            directory = cache_dir()
            if directory is not None:
                self.path = directory / f"{self._name()}.pickle"
                found = read_pickle(self.path)
                if isinstance(found, dict):
                    self._entries = found
        return self._entries

    def get(self, key: Any, default: Any = None) -> Any:
        return self.entries().get(key, default)

    def put(self, key: Any, value: Any) -> None:
        entries = self.entries()
        if key in entries or len(entries) >= self.LIMIT:
            return
        entries[key] = value
        if self.path is not None and not self._added:
            self._added = True
            atexit.register(self.save)

    def save(self) -> None:
        """Write the entries (at exit); a cache that cannot be written is skipped, never an error."""
        if self.path is not None and self._entries is not None and self._added:
            self._added = False
            write_pickle(self.path, self._entries)
