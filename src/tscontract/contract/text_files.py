"""Reading a text file the user named (a contract, catalog, mapping, bounds file): one-line errors."""

from __future__ import annotations

from pathlib import Path

from tscontract.errors import InputError, display_path


def read_text(path: str | Path, what: str) -> str:
    """Read a UTF-8 file or fail with a one-line :class:`InputError`."""
    file = Path(path)
    if not file.exists():
        raise InputError(f"{what} file not found: {display_path(file)}")
    if file.is_dir():
        raise InputError(f"{what} path is a directory, not a file: {display_path(file)}")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} file is not UTF-8 text: {display_path(file)} ({exc.reason})") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} file {display_path(file)}: {exc.strerror}") from None
