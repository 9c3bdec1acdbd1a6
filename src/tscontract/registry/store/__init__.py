"""The registry's state: schemas, subject versions, compatibility config and its log (SQLite or PostgreSQL).

Connections are pooled (one per concurrent request at most). Every read is one indexed query:
reading a version never loads the subject's other versions. A registration checks compatibility
*outside* the write lock (optimistic): it notes the subject's state (last version number, live
versions, mode), runs the check, then in a short write transaction re-reads that state and inserts
only when it is unchanged; when another writer got in between, it checks again. After a few lost
races it checks inside the lock, so a hot subject still makes progress. Writes take the database's
write lock up front (SQLite ``BEGIN IMMEDIATE`` in WAL mode with a busy timeout, a PostgreSQL
advisory lock), so versions are consecutive and schema ids unique and increasing in commit order.
"""

# the store's API, one job per module: records (what it holds), subjects (names), pool (connections),
# reads, config (levels, groups, modes), writes (RegistryStore), postgres, opening
from tscontract.registry.store.opening import open_registry_store, redact
from tscontract.registry.store.postgres import PostgresRegistryStore, _PostgresConnection
from tscontract.registry.store.records import (
    COMPATIBILITY_LEVELS,
    DEFAULT_COMPATIBILITY,
    DEFAULT_MODE,
    MAX_ID,
    MODES,
    CompatFn,
    Identity,
    RegisteredVersion,
    StoredSchema,
    olds_for_mode,
)
from tscontract.registry.store.subjects import MAX_SUBJECT_CHARS, check_subject, subject_problem
from tscontract.registry.store.writes import RegistryStore

__all__ = [
    "COMPATIBILITY_LEVELS",
    "DEFAULT_COMPATIBILITY",
    "DEFAULT_MODE",
    "MAX_ID",
    "MAX_SUBJECT_CHARS",
    "MODES",
    "CompatFn",
    "Identity",
    "PostgresRegistryStore",
    "RegisteredVersion",
    "RegistryStore",
    "StoredSchema",
    "_PostgresConnection",
    "check_subject",
    "olds_for_mode",
    "open_registry_store",
    "redact",
    "subject_problem",
]
