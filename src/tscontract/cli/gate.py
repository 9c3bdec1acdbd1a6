"""Commands of the ingest gate: ingest a batch into a store, list its correction log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tscontract.cli.options import (
    EXIT_OK,
    EXIT_VIOLATION,
    CatalogOption,
    FormatOption,
    FromOption,
    LockTimeoutOption,
    OutputFormat,
    QuietOption,
    StoreOption,
    ToOption,
    parse_coverage,
    parse_now,
)
from tscontract.cli.output import emit_json, make_console, status_line, status_updater


def ingest(
    contract: Path,
    data: Annotated[
        list[str], typer.Argument(help="Batch files (Parquet, CSV, JSON lines), local or s3://bucket/prefix/*.parquet.")
    ],
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
    try:
        with status_line("ingesting", fmt is OutputFormat.text) as status:
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
