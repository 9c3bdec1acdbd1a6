"""tscontract.registry: a Confluent Schema Registry REST subset backed by SQLite or PostgreSQL.

``serve(host, port, db_path, token=None, basic=None, compat=default_compat)`` binds the server
(Starlette on uvicorn, the ``tscontract[registry]`` extra); ``main(argv)`` is
``tscontract registry serve``. Compatibility is one injectable callable,
``compat(mode, schema_type, new_schema_text, older_schema_texts_newest_first) -> (ok, messages)``.
"""

from tscontract.registry.errors import RegistryError
from tscontract.registry.schemas import default_compat, parse_schema
from tscontract.registry.server import RegistryServer, main, serve, serve_in_thread
from tscontract.registry.store import COMPATIBILITY_LEVELS, DEFAULT_COMPATIBILITY, RegistryStore

__all__ = [
    "COMPATIBILITY_LEVELS",
    "DEFAULT_COMPATIBILITY",
    "RegistryError",
    "RegistryServer",
    "RegistryStore",
    "default_compat",
    "main",
    "parse_schema",
    "serve",
    "serve_in_thread",
]
