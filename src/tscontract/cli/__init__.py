"""The ``tscontract`` command line: thin over the library, strict about exit codes.

Exit codes: 0 ok, 1 the data or contract violates a rule, 2 usage error or
unreadable input. Errors are one line on stderr (``--debug`` shows the
traceback); with ``--format json`` the same error is also written to stdout as
``{"error": {...}}``.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from tscontract import __version__
from tscontract.cli import check
from tscontract.cli.help import parameter_message
from tscontract.cli.help import tidy as tidy_help
from tscontract.cli.options import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VIOLATION,
    CatalogOption,
    FormatOption,
    FromOption,
    LockTimeoutOption,
    OutputFormat,
    QuietOption,
    StoreOption,
    ToOption,
    output_file,
    parse_coverage,
    parse_date,
    parse_now,
)
from tscontract.cli.output import emit_json, status_line, status_updater
from tscontract.errors import InputError, SourceError, TscontractError
from tscontract.report.console import make_console

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


def export_command(
    target: Annotated[
        str,
        typer.Argument(metavar="FORMAT", help="pandera, gx, dbt, soda, avro, protobuf, jsonschema, odcs or confluent."),
    ],
    contract: Path,
    catalog: CatalogOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Directory to write to (default: print a single file).")
    ] = None,
    dbt_tests: Annotated[
        str, typer.Option("--dbt-tests", help="dbt: 'builtin' macros written beside the model, or 'dbt_utils'.")
    ] = "builtin",
    previous: Annotated[
        Path | None,
        typer.Option("--from", help="confluent: the contract before a major change; adds migration rules."),
    ] = None,
    rule_mode: Annotated[
        str, typer.Option("--rule-mode", help="confluent: domain rules run on WRITE (default) or WRITEREAD.")
    ] = "WRITE",
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Export CONTRACT's clauses to FORMAT; clauses the target cannot express are listed, never dropped."""
    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.loader import load_contract
    from tscontract.errors import display_path
    from tscontract.interop.exports import export as run_export

    options: dict[str, Any] = {"dbt_tests": dbt_tests} if target == "dbt" else {}
    if target == "confluent":
        options = {"rule_mode": rule_mode, "previous": load_contract(previous) if previous else None}
    elif previous is not None:
        raise InputError("--from is an option of the confluent export")
    result = run_export(target, load_contract(contract), load_catalog(catalog) if catalog else None, **options)
    if out is not None:
        written = [display_path(p) for p in result.write(out)]
    elif len(result.artifacts) == 1:
        written = []
        if fmt is OutputFormat.text:
            sys.stdout.write(result.artifacts[0].content)
    else:
        raise InputError(f"the {target} export writes {len(result.artifacts)} files: give --out DIR")
    if fmt is OutputFormat.json:
        data = result.to_json()
        if out is None and len(result.artifacts) == 1:
            data["content"] = result.artifacts[0].content
        emit_json(data)
    elif written:
        for path in written:
            typer.echo(f"wrote {path}")
        for skipped in result.not_exported:
            typer.echo(f"not exported: {skipped.check_id} [{skipped.clause}]: {skipped.reason}")


def import_command(
    source_format: Annotated[
        str, typer.Argument(metavar="FORMAT", help="odcs, avro, protobuf, jsonschema, dbt or ddl")
    ],
    document: Path,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Contract file, or a directory: one contract per schema object."),
    ] = None,
    object_name: Annotated[
        str | None, typer.Option("--object", help="The schema object to import (default: every one).")
    ] = None,
    key: Annotated[str | None, typer.Option("--key", help="Key columns, comma-separated, when none is marked.")] = None,
    time_column: Annotated[
        str | None, typer.Option("--time-column", help="The time column, when the key has no single instant.")
    ] = None,
    timezone: Annotated[
        str | None,
        typer.Option("--timezone", help="ODCS: the zone timestamps without one are written in (UTC, Europe/Rome)."),
    ] = None,
    decimal: Annotated[
        str | None, typer.Option("--decimal", help="ODCS: P,S for decimals written without precision and scale.")
    ] = None,
    drop: Annotated[
        list[str] | None,
        typer.Option(
            "--drop", help="ODCS: properties the contract leaves out (comma-separated; the mapping drops them)."
        ),
    ] = None,
    types: Annotated[
        list[str] | None,
        typer.Option("--type", help="ODCS: PHYSICAL=TYPE, the tscontract type of a type the document does not define."),
    ] = None,
    allow_loss: Annotated[
        bool,
        typer.Option(
            "--allow-loss", help="Import although elements have no exact place (each is listed); else refused."
        ),
    ] = False,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Turn an ODCS v3 document, an Avro/Protobuf/JSON Schema, a dbt model YAML or SQL DDL into draft
    contracts; list what has no place."""
    from tscontract.contract.text_files import read_text
    from tscontract.interop.imports import FORMATS, import_file
    from tscontract.interop.odcs.read import import_document, write_imported

    if source_format != "odcs" and source_format not in FORMATS:
        raise InputError(f"unknown import format {source_format!r}; available: odcs, {', '.join(FORMATS)}")
    if out is not None and not out.is_dir():
        output_file(out, "--out")
    keys = [k.strip() for k in key.split(",") if k.strip()] if key else None
    refused: list[tuple[str, str]] = []  # objects of a several-object document written to a directory
    if source_format == "odcs":
        from tscontract.interop.odcs.types import make_choices

        choices = make_choices(timezone, decimal, drop, types, allow_loss)
        text = read_text(document, "ODCS document")
        into_directory = out is not None and (out.is_dir() or not out.suffix)
        results = import_document(text, object_name, keys, time_column, refused if into_directory else None, choices)
    else:
        if timezone or decimal or drop or types:
            raise InputError("--timezone, --decimal, --drop and --type apply to import odcs")
        text = read_text(document, f"{source_format} document")
        results = import_file(source_format, text, document.name, object_name, keys, time_column)
    written = write_imported(results, out)
    lost = sum(len(r.losses) for r in results) + len(refused)
    if fmt is OutputFormat.json:
        entries = [{**r.to_json(), **w} for r, w in zip(results, written, strict=True)]
        if out is None:
            entries[0]["content"] = results[0].text
        refusals = [{"object": name, "reason": why} for name, why in refused]
        emit_json({"contracts": entries, "refused": refusals, "lost": lost})
    else:
        if out is None:
            sys.stdout.write(results[0].text)
        for result, files in zip(results, written, strict=True):
            for path in files.values():
                typer.echo(f"wrote {path}", err=out is None)
            for loss in result.losses:
                typer.echo(f"lost: {result.contract}: {loss.line()}", err=out is None)
        for name, why in refused:
            typer.echo(f"refused: {name}: {why}")
    if lost and not allow_loss:
        raise typer.Exit(EXIT_VIOLATION)


def diff_command(
    old: Path,
    new: Path,
    today: Annotated[
        str | None, typer.Option("--today", help="Date deprecation notices are judged at (YYYY-MM-DD).")
    ] = None,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Classify every change from OLD to NEW; exit 1 when the version bump is not enough."""
    from tscontract.contract.loader import load_contract
    from tscontract.evolution.diff import diff as run_diff

    report = run_diff(load_contract(old), load_contract(new), today=parse_date(today))
    _print_diffs([report], fmt)
    raise typer.Exit(EXIT_OK if report.ok else EXIT_VIOLATION)


def history(
    versions: Annotated[
        list[str], typer.Argument(help="Contract files, directories of them, or git REV:PATH, oldest first.")
    ],
    today: Annotated[str | None, typer.Option("--today", help="Date deprecation notices are judged at.")] = None,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Run diff over a sequence of contract versions (a directory is ordered by version)."""
    from tscontract.evolution.diff import diff as run_diff
    from tscontract.evolution.history import load_versions

    contracts = load_versions(versions)
    reports = [run_diff(a, b, today=parse_date(today)) for a, b in itertools.pairwise(contracts)]
    _print_diffs(reports, fmt)
    raise typer.Exit(EXIT_OK if all(r.ok for r in reports) else EXIT_VIOLATION)


def replay(
    files: Annotated[list[Path], typer.Argument(help="Historical Avro files, written with older schemas.")],
    reader: Annotated[Path, typer.Option("--reader", help="The new contract (its Avro export is the reader).")],
    avsc: Annotated[Path | None, typer.Option("--avsc", help="Read with this .avsc instead.")] = None,
    catalog: CatalogOption = None,
    now: Annotated[str | None, typer.Option("--now", help="Instant freshness is judged at.")] = None,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Read FILES through the new reader schema and validate them against the new contract."""
    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.loader import load_contract
    from tscontract.interop.replay import replay as run_replay
    from tscontract.shown import shown_message

    result = run_replay(
        load_contract(reader),
        list(files),
        catalog=load_catalog(catalog) if catalog else None,
        avsc=avsc,
        now=parse_now(now),
    )
    if fmt is OutputFormat.json:
        emit_json(result.to_json())
    else:
        console = make_console()
        for item in result.files:
            if item.error:
                console.print(shown_message(f"{item.path}: {item.error}"), markup=False, soft_wrap=True)
                continue
            failed = [c for c in item.report.checks if c.status != "passed"] if item.report else []
            summary = "ok" if item.ok else ", ".join(f"{c.id} [{c.clause}] {c.failed_rows}" for c in failed)
            console.print(f"{item.path}: {item.rows} records read — {summary}", markup=False, soft_wrap=True)
        console.print(f"replay through {result.contract} {result.version}: {'ok' if result.ok else 'FAILED'}")
    raise typer.Exit(EXIT_OK if result.ok else EXIT_VIOLATION)


def compat(
    schema_format: Annotated[str, typer.Argument(metavar="FORMAT", help="avro, protobuf or jsonschema")],
    new: Path,
    olds: Annotated[list[Path], typer.Argument(metavar="OLD [OLDER...]", help="Earlier versions, newest first.")],
    mode: Annotated[str, typer.Option("--mode", help="BACKWARD, FORWARD, FULL, their _TRANSITIVE forms, NONE.")] = (
        "FULL_TRANSITIVE"
    ),
    proto_path: Annotated[
        list[Path] | None,
        typer.Option("--proto-path", "-I", help="protobuf: a directory the files' imports are found in (repeatable)."),
    ] = None,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Check NEW against its history the way a schema registry does; exit 1 when incompatible."""
    from tscontract.contract.text_files import read_text
    from tscontract.evolution import check
    from tscontract.evolution.modes import Mode

    if mode.upper() not in Mode.__members__:
        raise InputError(f"--mode {mode!r} is not one of: {', '.join(Mode)}")
    from tscontract.evolution.modes import FORMATS, text_problem

    if schema_format not in FORMATS:
        raise InputError(f"unknown schema format {schema_format!r}; one of: {', '.join(FORMATS)}")
    texts = [read_text(path, "schema") for path in (new, *olds)]
    if proto_path:
        from tscontract.evolution.proto_compat import bundle, import_files

        if schema_format != "protobuf":
            raise InputError("--proto-path is for protobuf schemas")
        imports = import_files(proto_path)
        texts = [bundle(text, imports) for text in texts]
    for path, text in zip((new, *olds), texts, strict=True):
        problem = text_problem(schema_format, text)
        if problem:
            raise InputError(f"{path}: not a valid {schema_format} schema: {problem}")
    try:
        result = check(mode, texts[0], texts[1:], schema_format)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if fmt is OutputFormat.json:
        emit_json(
            {
                "format": schema_format,
                "mode": mode.upper(),
                "compatible": result.compatible,
                "reasons": result.reasons,
                "warnings": result.warnings,
            }
        )
    else:
        for reason in result.reasons:
            typer.echo(f"incompatible: {reason}")
        for warning in result.warnings:
            typer.echo(f"warning: {warning}")
        typer.echo(f"{schema_format} {mode.upper()}: {'compatible' if result.compatible else 'NOT compatible'}")
    raise typer.Exit(EXIT_OK if result.compatible else EXIT_VIOLATION)


registry_app = typer.Typer(help="The schema registry (Confluent REST subset).", no_args_is_help=True)
app.add_typer(registry_app, name="registry")


@registry_app.command("serve")
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
            metavar="N",
            min=0,
            help="Worker processes for compatibility checks (default: 0, in process, on 2 cores or fewer; else one"
            " per core, at most 4).",
        ),
    ] = None,
) -> None:
    """Serve the registry until interrupted (default compatibility FULL_TRANSITIVE)."""
    from tscontract.registry.credentials import credentials
    from tscontract.registry.server import default_check_processes, run, serve

    token, basic_map, warnings = credentials(token, token_file, basic or [], basic_file or [], host)
    for warning in warnings:
        typer.echo(warning, err=True)
    try:
        processes = default_check_processes() if check_processes is None else check_processes
        server = serve(host, port, db, token=token, basic=basic_map or None, check_processes=processes)
    except OSError as exc:
        raise InputError(f"cannot bind {host}:{port}: {exc.strerror}") from None
    run(server, db, typer.echo)


def _print_diffs(reports: list[Any], fmt: OutputFormat) -> None:
    if fmt is OutputFormat.json:
        emit_json(reports[0].to_json() if len(reports) == 1 else {"diffs": [r.to_json() for r in reports]})
        return
    from tscontract.shown import shown_message

    console = make_console()
    for report in reports:
        verdict = "ok" if report.ok else "NOT OK"
        lines = [
            f"{report.contract} {report.old_version} -> {report.new_version}: declared {report.declared_label}, "
            f"required {report.required} — {verdict}"
        ]
        lines += [f"  {c.required:<11} {c.kind:<22} {c.path}: {c.old} -> {c.new} ({c.action})" for c in report.changes]
        lines += [f"  problem: {problem}" for problem in report.problems]
        for line in lines:  # contract text: one line each, cut, controls shown (SECURITY.md "Output")
            console.print(shown_message(line), markup=False, soft_wrap=True)


def ingest(
    contract: Path,
    data: Annotated[list[Path], typer.Argument(help="Batch files (Parquet, CSV, JSON lines).")],
    store: StoreOption,
    catalog: CatalogOption = None,
    mapping: Annotated[Path | None, typer.Option("--mapping", help="Source-to-contract mapping YAML.")] = None,
    source_id: Annotated[str | None, typer.Option("--source-id", help="Recorded as source_id.")] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Reason for restatements without a revision_reason column.")
    ] = None,
    who: Annotated[str | None, typer.Option("--who", help="Who restates (default: the row's source_id).")] = None,
    now: Annotated[str | None, typer.Option("--now", help="The ingest instant (RFC 3339, default: now).")] = None,
    coverage_from: FromOption = None,
    coverage_to: ToOption = None,
    backfill: Annotated[
        bool, typer.Option("--backfill", help="Historical data: freshness is reported, not gating (recorded).")
    ] = False,
    lock_timeout: LockTimeoutOption = 60.0,
    quiet: QuietOption = False,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Gate DATA into STORE: valid rows are published, the rest quarantined with reasons."""
    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.loader import load_contract
    from tscontract.engines import checked_coverage
    from tscontract.engines.inputs.mapping import load_mapping
    from tscontract.gate.ingest import ingest as run_ingest
    from tscontract.gate.ingest import run_summary
    from tscontract.gate.store import open_store
    from tscontract.report.text import render_summary, render_validation

    coverage = checked_coverage(parse_coverage(coverage_from, coverage_to))
    parsed = load_contract(contract)
    loaded_catalog = load_catalog(catalog) if catalog else None
    loaded_mapping = load_mapping(mapping) if mapping else None
    opened = open_store(store, lock_timeout=lock_timeout)
    status_console = make_console(stderr=True)
    show_progress = fmt is OutputFormat.text and status_console.is_terminal
    try:
        with status_line(status_console, "ingesting", show_progress) as status:
            result = run_ingest(
                parsed,
                list(data),
                opened,
                catalog=loaded_catalog,
                mapping=loaded_mapping,
                source_id=source_id,
                reason=reason,
                who=who,
                now=parse_now(now),
                progress=status_updater(status),
                backfill=backfill,
                coverage=coverage,
            )
    finally:
        opened.close()
    if fmt is OutputFormat.json:
        emit_json(result.to_json())
    else:
        console = make_console()
        if result.report is not None and result.report.failed:  # every failed check, gating or not
            (render_summary if quiet else render_validation)(result.report, console)
        if result.row_failures:
            console.print(
                "quarantined rows per check: " + ", ".join(f"{k}={v}" for k, v in result.row_failures.items()),
                markup=False,
            )
        console.print(run_summary(result), markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_OK if result.clean else EXIT_VIOLATION)


def corrections(
    store: Annotated[str, typer.Argument(metavar="STORE", help="A .duckdb file or a postgresql:// URL.")],
    contract_name: Annotated[str | None, typer.Option("--contract", metavar="NAME", help="Only this contract.")] = None,
    lock_timeout: LockTimeoutOption = 60.0,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """List the correction log: every accepted restatement, who, when, why, old -> new."""
    from tscontract.gate.store import CORRECTION_COLUMNS, CORRECTIONS, RUNS, open_store

    opened = open_store(store, read_only=True, lock_timeout=lock_timeout)
    try:
        opened.require_tables(RUNS, CORRECTIONS)
        where = f" WHERE contract = '{contract_name.replace(chr(39), chr(39) * 2)}'" if contract_name else ""
        rows = opened.query(
            f"SELECT {', '.join(CORRECTION_COLUMNS)} FROM {CORRECTIONS}{where} ORDER BY corrected_at, run_id"
        )
    finally:
        opened.close()
    from tscontract.shown import shown_message
    from tscontract.sql.columns import json_value

    entries = [{c: json_value(v) for c, v in zip(CORRECTION_COLUMNS, r, strict=True)} for r in rows]
    if fmt is OutputFormat.json:
        emit_json({"store": store, "corrections": entries})
        return
    console = make_console()
    for e in entries:
        line = (
            f"{e['corrected_at']} {e['contract']} {e['key']} rev {e['old_revision']} -> {e['new_revision']} "
            f"by {e['who']} ({e['reason']}): {e['old_values']} -> {e['new_values']}"
        )
        console.print(shown_message(line), soft_wrap=True, markup=False)  # values from the data: bounded
    console.print(f"{len(entries)} correction(s)")


# every command, in the order --help lists them (a command group's module defines its commands)
app.command()(version)
app.command()(check.show)
app.command()(check.lint)
app.command()(check.validate)
app.command()(check.profile)
app.command("init")(check.init_command)
app.command("export")(export_command)
app.command("import")(import_command)
app.command("diff")(diff_command)
app.command()(history)
app.command()(replay)
app.command()(compat)
app.command()(ingest)
app.command()(corrections)
app.command("check-store")(check.check_store)


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


if __name__ == "__main__":  # pragma: no cover
    main()
