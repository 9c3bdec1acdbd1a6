"""The ``tscontract`` command line: thin over the library, strict about exit codes.

Exit codes: 0 ok, 1 the data or contract violates a rule, 2 usage error or
unreadable input. Errors are one line on stderr (``--debug`` shows the
traceback); with ``--format json`` the same error is also written to stdout as
``{"error": {...}}``.

This module holds the app, the table of commands and the entry point; each command group is a
module (check, gate, interop, evolution, registry) over the shared options.py, output.py and
help.py. Commands import the library inside the function: ``--help`` stays fast.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import Annotated, Any, NoReturn

import typer

from tscontract import __version__
from tscontract.cli import check, evolution, gate, interop, registry
from tscontract.cli.help import parameter_message
from tscontract.cli.help import tidy as tidy_help
from tscontract.cli.options import (
    EXIT_OK,
    EXIT_USAGE,
    FormatOption,
    OutputFormat,
)
from tscontract.cli.output import emit_json
from tscontract.errors import SourceError, TscontractError

app = typer.Typer(
    name="tscontract",
    help="Executable data contracts for time series.",
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit",
            metavar="SIZE",
            help="Memory DuckDB may use before it spills to disk (512MB, 4GiB, 80%); default 1GiB "
            "or TSCONTRACT_MEMORY_LIMIT.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Executable data contracts for time series: lint, validate, gate, export, evolve."""
    if debug:
        os.environ["TSCONTRACT_DEBUG"] = "1"
    if memory_limit is not None:
        os.environ["TSCONTRACT_MEMORY_LIMIT"] = memory_limit  # engines.duckdb.connect reads it


def version(fmt: FormatOption = OutputFormat.text) -> None:
    """Print the tscontract version."""
    if fmt is OutputFormat.json:
        emit_json({"tscontract": __version__})
    else:
        typer.echo(f"tscontract {__version__}")


# every command, in the order --help lists them (a command group's module defines its commands)
app.command()(version)
app.command()(check.show)
app.command()(check.lint)
app.command()(check.validate)
app.command()(check.profile)
app.command("init")(check.init_command)
app.command("export")(interop.export_command)
app.command("import")(interop.import_command)
app.command("diff")(evolution.diff_command)
app.command()(evolution.history)
app.command()(interop.replay)
app.command()(evolution.compat)
app.command()(gate.ingest)
app.command()(gate.corrections)
app.command("check-store")(check.check_store)
app.add_typer(registry.app, name="registry")


def _wants_json(argv: list[str]) -> bool:
    for i, arg in enumerate(argv):
        if arg in ("--format", "-f") and i + 1 < len(argv) and argv[i + 1] == "json":
            return True
        if arg == "--format=json":
            return True
    return False


def _fail(
    message: str, argv: list[str], detail: dict[str, Any] | None = None, more: list[str] | None = None
) -> NoReturn:
    """One line per error on stderr (``more``: the lines of further errors); the same as JSON on stdout.

    Each line is cut to ``shown.MESSAGE_CHARS`` with its control characters visible: an error may
    quote an engine's text or a value (a file's line, a string DuckDB could not convert).
    """
    from tscontract.shown import MESSAGE_CHARS, shown_message, shown_value

    sys.stderr.write("".join(f"error: {shown_message(line)}\n" for line in [message, *(more or [])]))
    if _wants_json(argv):
        emit_json({"error": shown_value({"message": message, **(detail or {})}, MESSAGE_CHARS)})
    raise SystemExit(EXIT_USAGE)


def _error_detail(exc: TscontractError) -> dict[str, Any]:
    if not isinstance(exc, SourceError):
        return {}
    loc = exc.location
    return {
        "file": loc.path if loc else None,
        "line": loc.line if loc else None,
        "column": loc.column if loc else None,
        "section": exc.section,
        "clause": exc.clause,
        "reason": exc.message,
    }


def _is_click(exc: BaseException, name: str) -> bool:
    # typer vendors click in newer releases and depends on it in older ones;
    # match the exception class by name so both work.
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def _command() -> Any:
    """The click command behind ``app``, its help placeholders made plain (cli/help.py)."""
    command = typer.main.get_command(app)
    tidy_help(command)
    return command


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: run the app and map every outcome to an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    # pydantic reads the entry points of every installed distribution for plugins when it builds its
    # first model (70 ms a run); the command line uses none. A PYDANTIC_DISABLE_PLUGINS the user set wins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # The last thing before the interpreter's own teardown (exit handlers run last-registered first, so after
    # the caches are written): the objects still alive are frozen, and the teardown's collections skip them.
    # Collecting the 50,000-odd objects of sqlglot, pydantic and the run took 60-120 ms of every command's
    # exit; the command's files are closed by then and the memory goes back with the process.
    atexit.register(gc.freeze)
    debug = "--debug" in args or os.environ.get("TSCONTRACT_DEBUG") == "1"
    try:
        result = _command().main(args=args, prog_name="tscontract", standalone_mode=False)
    except TscontractError as exc:
        if debug:
            raise
        errors = exc.all_errors()  # a contract with several errors: all of them, each on its line
        detail = _error_detail(errors[0])
        if isinstance(exc, SourceError):
            detail["errors"] = [{"message": e.one_line(), **_error_detail(e)} for e in errors]
        _fail(errors[0].one_line(), args, detail, [e.one_line() for e in errors[1:]])
    except (KeyboardInterrupt, BrokenPipeError):
        raise SystemExit(130) from None
    except OSError as exc:  # a file the command writes (or reads) that the system refuses
        if debug or exc.filename is None:
            raise
        _fail(f"{exc.filename}: {exc.strerror}", args)
    except Exception as exc:
        if _is_click(exc, "NoArgsIsHelpError") and getattr(exc, "ctx", None) is not None:
            sys.stderr.write(exc.ctx.get_help() + "\n")  # type: ignore[attr-defined]
            raise SystemExit(EXIT_USAGE) from None
        if _is_click(exc, "ClickException"):
            ctx = getattr(exc, "ctx", None)
            hint = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
            _fail(f"{parameter_message(exc)}{hint}", args)
        if _is_click(exc, "Abort"):
            _fail("aborted", args)
        if debug:
            raise
        if type(exc).__name__ == "OutOfMemoryException" and type(exc).__module__.startswith("duckdb"):
            from tscontract.engines.duckdb import out_of_memory  # the ingest gate, profile, ...

            _fail(str(out_of_memory(exc)), args)
        _fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", args)
    raise SystemExit(result if isinstance(result, int) else EXIT_OK)
