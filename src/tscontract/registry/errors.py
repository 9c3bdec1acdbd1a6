"""The registry's errors: what the REST layer returns as ``{error_code, message}`` with an HTTP status.

Every registry module raises these; none needs the store to do so (``store``, ``references`` and
``contract_fields`` imported each other for them).
"""

from __future__ import annotations


class RegistryError(Exception):
    """An error the REST layer returns as ``{error_code, message}`` with ``http_status``."""

    def __init__(self, http_status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.error_code = error_code
        self.message = message


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(subject: str, version: object) -> RegistryError:
    """Confluent's text names the version only (``latest`` as its id, -1), not the subject."""
    return RegistryError(404, 40402, f"Version {-1 if version == 'latest' else version} not found.")


def schema_not_found(detail: str = "Schema not found") -> RegistryError:
    return RegistryError(404, 40403, detail)
