"""Which engine a ``data`` argument names by itself, decided without importing that engine."""

from __future__ import annotations

from typing import Any

URL_SCHEMES = ("postgresql://", "postgres://")


def table_url(data: Any) -> str | None:
    """``data`` as a ``postgresql://...#table`` URL (alone, or the one item of a list), else None."""
    if isinstance(data, list | tuple) and len(data) == 1:
        data = data[0]
    return data if isinstance(data, str) and data.startswith(URL_SCHEMES) else None


def is_postgres_url(data: Any) -> bool:
    return table_url(data) is not None
