"""Opening a registry store from a path or URL, and showing that URL without its password."""

from __future__ import annotations

from pathlib import Path

from tscontract.errors import InputError
from tscontract.registry.store.postgres import PostgresRegistryStore
from tscontract.registry.store.writes import RegistryStore


def open_registry_store(spec: str | Path) -> RegistryStore:
    """A SQLite file, or ``postgresql://`` for a PostgreSQL database; InputError when it cannot be opened."""
    text = str(spec)
    try:
        if text.startswith(("postgresql://", "postgres://")):
            try:
                import psycopg  # noqa: F401
            except ImportError:
                raise InputError(
                    "a PostgreSQL registry store needs psycopg: pip install 'tscontract[postgres]'"
                ) from None
            return PostgresRegistryStore(text)
        return RegistryStore(text)
    except InputError:
        raise
    except Exception as exc:  # sqlite3.Error, psycopg.Error, OSError: a store that cannot be opened is bad input
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"cannot open the registry store {redact(text)}: {reason}") from None


def redact(spec: str) -> str:
    """A store URL without its password (for banners and errors)."""
    if "://" not in spec or "@" not in spec:
        return spec
    scheme, rest = spec.split("://", 1)
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}{':***' if ':' in credentials else ''}@{host}"
