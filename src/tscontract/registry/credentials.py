"""Where ``registry serve`` takes its credentials from, and the warnings about how it is exposed.

The token comes from ``--token-file FILE``, else ``TSCONTRACT_REGISTRY_TOKEN``, else ``--token``;
basic credentials from every ``--basic-file FILE`` (one ``USER:PASSWORD`` a line),
``TSCONTRACT_REGISTRY_BASIC`` (``USER:PASSWORD`` lines) and ``--basic``. The command-line forms
keep working but are visible to every local user in ``ps``: using them prints a warning.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path

from tscontract.errors import InputError

TOKEN_ENV = "TSCONTRACT_REGISTRY_TOKEN"
BASIC_ENV = "TSCONTRACT_REGISTRY_BASIC"
PS_WARNING = "warning: {flag} on the command line is visible to every local user (ps); use {instead}"
EXPOSED_WARNING = (
    "warning: listening on {host} (not loopback) without credentials: anyone who reaches the port can"
    " register, delete and change compatibility; set --token-file or --basic-file"
)


def parse_basic(pairs: list[str], origin: str = "--basic") -> dict[str, str]:
    """``USER:PASSWORD`` pairs as a user -> password map; ValueError naming ``origin`` for a pair without ':'."""
    credentials = {}
    for pair in pairs:
        user, sep, password = pair.partition(":")
        if not sep or not user:
            if origin == "--basic":
                raise ValueError(f"--basic expects USER:PASSWORD, got {pair!r}")
            raise ValueError(f"{origin}: every line must be USER:PASSWORD")  # never echo a secret
        credentials[user] = password
    return credentials


def _read_secret(path: Path, flag: str) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{flag} {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    return text


def resolve_token(
    token: str | None, token_file: Path | None, environ: Mapping[str, str], warn: list[str]
) -> str | None:
    sources = (("--token", token), ("--token-file", token_file), (TOKEN_ENV, environ.get(TOKEN_ENV)))
    given = [name for name, value in sources if value]
    if len(given) > 1:
        raise InputError(f"the token is given {len(given)} ways ({', '.join(given)}): give it one way")
    if token_file is not None:
        secret = _read_secret(token_file, "--token-file").strip()
        if not secret:
            raise InputError(f"--token-file {token_file}: the file is empty")
        return secret
    if environ.get(TOKEN_ENV):
        return environ[TOKEN_ENV].strip()
    if token is not None:
        warn.append(PS_WARNING.format(flag="--token", instead=f"--token-file or {TOKEN_ENV}"))
    return token


def resolve_basic(
    pairs: list[str], basic_files: list[Path], environ: Mapping[str, str], warn: list[str]
) -> dict[str, str]:
    credentials: dict[str, str] = {}
    try:
        for path in basic_files:
            lines = [line for line in _read_secret(path, "--basic-file").splitlines() if line.strip()]
            credentials.update(parse_basic(lines, f"--basic-file {path}"))
        env_lines = [line for line in environ.get(BASIC_ENV, "").splitlines() if line.strip()]
        credentials.update(parse_basic(env_lines, BASIC_ENV))
        credentials.update(parse_basic(pairs))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if pairs:
        warn.append(PS_WARNING.format(flag="--basic", instead=f"--basic-file or {BASIC_ENV}"))
    return credentials


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def exposure_warnings(host: str, token: str | None, basic: Mapping[str, str]) -> list[str]:
    """One line when the server listens beyond loopback with no credentials, else nothing."""
    if token is None and not basic and not is_loopback(host):
        return [EXPOSED_WARNING.format(host=host)]
    return []


def credentials(
    token: str | None,
    token_file: Path | None,
    basic: list[str],
    basic_files: list[Path],
    host: str,
    environ: Mapping[str, str] | None = None,
) -> tuple[str | None, dict[str, str], list[str]]:
    """(token, basic map, warnings to print on stderr) from the options and the environment."""
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    resolved_token = resolve_token(token, token_file, env, warnings)
    resolved_basic = resolve_basic(basic, basic_files, env, warnings)
    return resolved_token, resolved_basic, warnings + exposure_warnings(host, resolved_token, resolved_basic)
