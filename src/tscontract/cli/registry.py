"""The schema registry's commands: registry serve."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tscontract.errors import InputError

app = typer.Typer(help="The schema registry (Confluent REST subset).", no_args_is_help=True)


@app.command("serve")
def registry_serve(
    db: Annotated[
        str, typer.Option("--db", help="SQLite file (created if missing) or postgresql:// URL.")
    ] = "registry.sqlite",
    host: Annotated[str, typer.Option("--host", help="Address to bind; loopback by default.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to bind.")] = 8081,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Bearer token required for writes (visible in ps: prefer --token-file)."),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="File holding the bearer token (or TSCONTRACT_REGISTRY_TOKEN).")
    ] = None,
    basic: Annotated[
        list[str] | None,
        typer.Option("--basic", help="USER:PASSWORD allowed to write (repeatable; visible in ps: use --basic-file)."),
    ] = None,
    basic_file: Annotated[
        list[Path] | None,
        typer.Option("--basic-file", help="File of USER:PASSWORD lines (repeatable; or TSCONTRACT_REGISTRY_BASIC)."),
    ] = None,
    check_processes: Annotated[
        int | None,
        typer.Option(
            "--check-processes",
            min=0,
            help="Worker processes for compatibility checks (default: 0, in process, on 2 cores or fewer; else one"
            " per core, at most 4).",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Answer as Confluent even where tscontract differs to keep clients working (README)."
        ),
    ] = False,
) -> None:
    """Serve the registry until interrupted (default compatibility FULL_TRANSITIVE)."""
    from tscontract.registry.credentials import credentials
    from tscontract.registry.server import default_check_processes, run, serve

    token, basic_map, warnings = credentials(token, token_file, basic or [], basic_file or [], host)
    for warning in warnings:
        typer.echo(warning, err=True)
    try:
        processes = default_check_processes() if check_processes is None else check_processes
        server = serve(host, port, db, token=token, basic=basic_map or None, check_processes=processes, strict=strict)
    except OSError as exc:
        raise InputError(f"cannot bind {host}:{port}: {exc.strerror}") from None
    run(server, db, typer.echo)
