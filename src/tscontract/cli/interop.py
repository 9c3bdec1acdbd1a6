"""Commands between a contract and other tools' formats: export, import, replay."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tscontract.cli.options import (
    EXIT_OK,
    EXIT_VIOLATION,
    CatalogOption,
    FormatOption,
    OutputFormat,
    output_file,
    parse_now,
)
from tscontract.cli.output import emit_json, make_console
from tscontract.errors import InputError


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
    from tscontract.interop.imports import FORMATS, document_label, import_file, import_options
    from tscontract.interop.odcs.read import write_imported

    if source_format not in FORMATS:
        raise InputError(f"unknown import format {source_format!r}; available: {', '.join(FORMATS)}")
    if out is not None and not out.is_dir():
        output_file(out, "--out")
    keys = [k.strip() for k in key.split(",") if k.strip()] if key else None
    refused: list[tuple[str, str]] = []  # objects of a several-object document written to a directory
    options = import_options(
        source_format, timezone=timezone, decimal=decimal, drop=drop, types=types, allow_loss=allow_loss
    )
    text = read_text(document, document_label(source_format))
    into_directory = out is not None and (out.is_dir() or not out.suffix)
    results = import_file(
        source_format,
        text,
        document.name,
        object_name,
        keys,
        time_column,
        refused=refused if into_directory else None,
        **options,
    )
    lost = _report_imported(results, write_imported(results, out), refused, out, fmt)
    if lost and not allow_loss:
        raise typer.Exit(EXIT_VIOLATION)


def _report_imported(
    results: list[Any],
    written: list[dict[str, str]],
    refused: list[tuple[str, str]],
    out: Path | None,
    fmt: OutputFormat,
) -> int:
    """What ``import`` wrote, lost and refused, as text or JSON; the number of elements lost or refused."""
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
    return lost


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
