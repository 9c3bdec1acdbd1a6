"""Commands about a contract's versions and schemas over time: diff, history, compat."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Annotated, Any

import typer

from tscontract.cli.options import (
    EXIT_OK,
    EXIT_VIOLATION,
    FormatOption,
    OutputFormat,
    parse_date,
)
from tscontract.cli.output import emit_json, make_console
from tscontract.errors import InputError


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
