"""Commands that check a contract or data against it: show, lint, validate, profile, init, check-store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tscontract.cli.options import (
    EXIT_OK,
    EXIT_VIOLATION,
    CatalogOption,
    EngineName,
    EngineOption,
    FormatOption,
    FromOption,
    LockTimeoutOption,
    MappingOption,
    OutputFormat,
    QuietOption,
    ReportFormat,
    ReportFormatOption,
    ToOption,
    output_file,
    parse_coverage,
    parse_now,
)
from tscontract.cli.output import emit_json, make_console, print_report, status_line, status_updater
from tscontract.errors import InputError


def show(contract: Path, fmt: FormatOption = OutputFormat.text) -> None:
    """Parse CONTRACT and print it as tscontract understands it."""
    from tscontract.contract.loader import load_contract
    from tscontract.contract.serialize import contract_to_json
    from tscontract.report.lint_text import render_contract

    parsed = load_contract(contract)
    if fmt is OutputFormat.json:
        emit_json(contract_to_json(parsed))
    else:
        render_contract(parsed, make_console())


def lint(
    contract: Path,
    catalog: CatalogOption = None,
    registry: Annotated[
        str | None, typer.Option("--registry", help="Also check this schema registry's subject (URL).")
    ] = None,
    subject: Annotated[
        str | None, typer.Option("--subject", help="Registry subject (default <contract>-value).")
    ] = None,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Check CONTRACT against the contract checklist. Exit 1 on any error finding."""
    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.lint import lint as run_lint
    from tscontract.contract.loader import load_contract
    from tscontract.errors import display_path
    from tscontract.report.lint_text import render_lint

    parsed = load_contract(contract)
    loaded = load_catalog(catalog) if catalog is not None else None
    report = run_lint(parsed, loaded, display_path(catalog) if catalog else None)
    if registry is not None:
        from tscontract.registry.lint import registry_findings

        report.findings.extend(registry_findings(registry, subject or f"{parsed.contract}-value"))
    if fmt is OutputFormat.json:
        emit_json(report.to_json())
    else:
        render_lint(report, make_console())
    raise typer.Exit(EXIT_OK if report.passed else EXIT_VIOLATION)


def validate(
    contract: Path,
    data: Annotated[
        list[str],
        typer.Argument(
            help="Parquet, CSV, JSON lines files (local or s3://bucket/prefix/*.parquet), iceberg://CATALOG/NS.TABLE, "
            "delta://PATH, db::table, or postgresql://..#table."
        ),
    ],
    catalog: CatalogOption = None,
    now: Annotated[
        str | None, typer.Option("--now", help="Instant freshness is judged at (RFC 3339, default: now).")
    ] = None,
    coverage_from: FromOption = None,
    coverage_to: ToOption = None,
    engine: EngineOption = EngineName.duckdb,
    examples: Annotated[int, typer.Option("--examples", min=0, help="Failing examples per check.")] = 5,
    bounds: Annotated[
        Path | None, typer.Option("--bounds", help="Plausibility bounds from 'tscontract profile'.")
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write a self-contained HTML report with plots.")
    ] = None,
    spark_master: Annotated[
        str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark (default local[*]).")
    ] = None,
    spark_conf: Annotated[
        list[str] | None, typer.Option("--spark-conf", help="A Spark setting key=value (repeatable).")
    ] = None,
    mapping: MappingOption = None,
    quiet: QuietOption = False,
    fmt: ReportFormatOption = ReportFormat.text,
) -> None:
    """Validate DATA against every clause of CONTRACT. Exit 1 when any check fails.

    DATA may also be spark:TABLE (a table in the Spark session's catalog) with --engine spark, or
    postgresql://user@host:port/db#schema.table: the table is validated inside PostgreSQL.
    """
    from tscontract.engines import validate as run_validate

    loaded_mapping, conf, loaded_bounds = _validate_inputs(mapping, spark_conf, html, data, bounds)
    at, coverage = parse_now(now), parse_coverage(coverage_from, coverage_to)
    with status_line("validating", fmt is ReportFormat.text) as status:
        progress = status_updater(status)
        report = run_validate(
            contract,
            data,
            catalog=catalog,
            now=at,
            engine=engine.value,
            examples=examples,
            bounds=loaded_bounds,
            progress=progress,
            spark_master=spark_master,
            spark_conf=conf,
            coverage=coverage,
            mapping=loaded_mapping,
        )
    if html is not None:
        _write_html(html, contract, data, catalog, report, loaded_mapping, loaded_bounds, at, coverage)
    print_report(report, fmt, contract, quiet)
    raise typer.Exit(EXIT_OK if report.passed else EXIT_VIOLATION)


def _validate_inputs(
    mapping: Path | None, spark_conf: list[str] | None, html: Path | None, data: list[str], bounds: Path | None
) -> tuple[Any, Any, Any]:
    """The mapping, Spark settings and bounds ``validate`` was given, loaded (None when not given); the HTML
    report's arguments checked."""
    loaded_mapping = None
    if mapping is not None:
        from tscontract.engines.inputs.mapping import load_mapping  # pydantic models and sqlglot dialects: 0.1 s

        loaded_mapping = load_mapping(mapping)
    conf = None
    if spark_conf:
        from tscontract.engines.spark import parse_conf

        conf = parse_conf(spark_conf)
    _check_html(html, data)

    loaded_bounds = None
    if bounds is not None:
        from tscontract.plan.bounds import load_bounds

        loaded_bounds = load_bounds(bounds)
    return loaded_mapping, conf, loaded_bounds


def _write_html(
    html: Path,
    contract: Path,
    data: list[str],
    catalog: Path | None,
    report: Any,
    loaded_mapping: Any,
    loaded_bounds: Any,
    at: Any,
    coverage: Any,
) -> None:
    """The self-contained HTML report with plots, which draw the bounds that were applied."""
    from tscontract.engines.plot_data import series_data
    from tscontract.report.html import render_html

    source = data if len(data) > 1 else data[0]
    series = series_data(  # draws the bounds that were applied
        contract, source, catalog, report, mapping=loaded_mapping, bounds=loaded_bounds, now=at, coverage=coverage
    )
    html.write_text(render_html(report, series=series), encoding="utf-8")


def _check_html(html: Path | None, data: list[str]) -> None:
    """Refuse, before any work, an --html file that cannot be written or data it cannot plot."""
    output_file(html, "--html")
    if html is not None and any(d.startswith("spark:") for d in data):
        raise InputError("--html plots the data from files; it cannot read a spark: table")
    if html is not None and any(d.startswith(("postgresql://", "postgres://")) for d in data):
        raise InputError("--html plots the data from files; it cannot read a PostgreSQL table")


def profile(
    contract: Path,
    history: Annotated[list[str], typer.Argument(help="Historical data files (same formats as validate).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the bounds YAML.")],
    catalog: CatalogOption = None,
    fields: Annotated[
        str | None, typer.Option("--fields", help="Comma-separated fields (default: measurement fields).")
    ] = None,
    margin: Annotated[str, typer.Option("--margin", help="Widen \\[p01, p99] by this many spreads.")] = "0.5",
    scale_factor: Annotated[
        str, typer.Option("--scale-factor", help="Flag a typical magnitude moved by more than this factor.")
    ] = "10",
    mapping: MappingOption = None,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Derive per-series plausibility bounds from HISTORY for 'validate --bounds'."""
    from decimal import Decimal, InvalidOperation

    from tscontract.contract.catalog import load_catalog
    from tscontract.contract.loader import load_contract
    from tscontract.engines.inputs.mapping import load_mapping
    from tscontract.engines.profile import profile as run_profile
    from tscontract.errors import InputError, display_path
    from tscontract.plan.bounds import save_bounds

    output_file(out, "--out")
    try:
        margin_value, factor_value = Decimal(margin), Decimal(scale_factor)
    except InvalidOperation:
        raise InputError("--margin and --scale-factor take numbers") from None
    if margin_value < 0 or factor_value <= 1:
        raise InputError("--margin must be >= 0 and --scale-factor > 1")
    bounds = run_profile(
        load_contract(contract),
        history,
        catalog=load_catalog(catalog) if catalog else None,
        fields=[f.strip() for f in fields.split(",")] if fields else None,
        margin=margin_value,
        scale_factor=factor_value,
        mapping=load_mapping(mapping) if mapping is not None else None,
    )
    save_bounds(bounds, out)
    per_series = {name: len(series) for name, series in bounds.fields.items()}
    summary = {"contract": bounds.contract, "out": display_path(out), "rows": bounds.rows, "fields": per_series}
    if fmt is OutputFormat.json:
        emit_json(summary)
    else:
        per_field = ", ".join(f"{n} ({k} series)" for n, k in per_series.items())
        typer.echo(f"profiled {bounds.rows} rows of {bounds.contract}: {per_field} -> {summary['out']}")


def init_command(
    data: Annotated[list[str], typer.Argument(help="Sample data files (same formats as validate).")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where to write the draft contract (its directory is created).")
    ] = Path("contract.yaml"),
    catalog_out: Annotated[
        Path | None, typer.Option("--catalog-out", help="Where to write the draft catalog (default: beside --out).")
    ] = None,
    mapping_out: Annotated[
        Path | None,
        typer.Option("--mapping-out", help="Where to write the draft mapping (default: mapping.yaml beside --out)."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Contract name (default: the first data file's name).")
    ] = None,
    timezone: Annotated[
        str | None,
        typer.Option(
            "--timezone", metavar="ZONE", help="The zone times without an offset are written in (Europe/Berlin)."
        ),
    ] = None,
    time_column: Annotated[str | None, typer.Option("--time-column", help="The time column.")] = None,
    series_column: Annotated[str | None, typer.Option("--series-column", help="The series id column.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    fmt: FormatOption = OutputFormat.text,
) -> None:
    """Infer a draft contract (and catalog and mapping) from sample DATA; each clause notes its evidence."""
    from tscontract.interop.infer import infer

    paths = {
        "--out": out,
        "--catalog-out": catalog_out or out.with_name("catalog.yaml"),
        "--mapping-out": mapping_out or out.with_name("mapping.yaml"),
    }
    for option, path in paths.items():
        if path.is_dir():
            raise InputError(f"{option} {path}: is a directory; give a file name")
        if path.exists() and not force:
            raise InputError(f"{option} {path}: exists; --force overwrites it")
    samples: list[str | Path] = list(data)
    draft = infer(
        samples, name=name or _name_of(data[0]), time_column=time_column, series_column=series_column, timezone=timezone
    )
    texts = {
        "--out": draft.contract_yaml(),
        "--catalog-out": draft.catalog_yaml(),
        "--mapping-out": draft.mapping_yaml(),
    }
    written: dict[str, str | None] = {}
    for option, path in paths.items():
        text = texts[option]
        written[option] = None
        if text is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written[option] = _shown_path(path)
    _report_draft(draft, written, fmt)


def _name_of(data: str) -> str:
    """A contract name from a data file's name (``meter.csv``: meter)."""
    import re

    stem = Path(data.split("::")[0].split("#")[0]).name.split(".")[0]
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_.-")
    return cleaned if cleaned[:1].isalpha() else f"data_{cleaned}" if cleaned else "contract"


def _shown_path(path: Path) -> str:
    from tscontract.errors import display_path

    return display_path(path)


def _report_draft(draft: Any, written: dict[str, str | None], fmt: OutputFormat) -> None:
    """What ``init`` wrote and what the sample holds that the draft fails: repeated keys, gaps, local times."""
    summary = {
        "contract": written["--out"],
        "catalog": written["--catalog-out"],
        "mapping": written["--mapping-out"],
        "name": draft.name,
        "key": draft.key,
        "cadence": draft.cadence,
        "fields": {c.name: c.type for c in draft.columns},
        "duplicates": {"keys": draft.duplicate_keys, "first": [d.line() for d in draft.duplicates]},
        "gaps": {
            "count": draft.gap_count,
            "first": [
                {"series": g.series, "after": g.after, "before": g.before, "missing": g.missing} for g in draft.gaps
            ],
        },
        "unresolved_local_times": draft.unresolved,
    }
    if fmt is OutputFormat.json:
        emit_json(summary)
        return
    wrote = ", ".join(p for p in (written["--out"], written["--catalog-out"], written["--mapping-out"]) if p)
    typer.echo(
        f"wrote {wrote}: contract {draft.name}, {len(draft.columns)} fields, key [{', '.join(draft.key)}], "
        f"cadence {draft.cadence or 'none'}"
    )
    if draft.duplicate_keys:
        typer.echo(f"the sample repeats {draft.duplicate_keys} key(s); key.unique will fail them:")
        for duplicate in draft.duplicates:
            typer.echo(f"  {duplicate.line()}")
    if draft.gap_count:
        typer.echo(f"the sample has {draft.gap_count} gap(s); time.cadence will report them:")
        for gap in draft.gaps:
            who = "" if gap.series == "*" else f"{gap.series}: "
            typer.echo(f"  {who}{gap.missing} point(s) missing between {gap.after} and {gap.before}")
    if draft.unresolved:
        typer.echo(f"local times with no single instant (the mapping fails them): {', '.join(draft.unresolved)}")
    if draft.zone is None and any(c.written == "offset" for c in draft.columns):
        typer.echo("times carry offsets: --timezone ZONE also records the zone and drafts completeness per local day")
    hint = f" --mapping {written['--mapping-out']}" if written["--mapping-out"] else ""
    typer.echo(f"a draft: read each note, then lint it and validate the sample with it{hint}")


def check_store(
    contract: Path,
    store: Annotated[str, typer.Argument(metavar="STORE", help="A .duckdb file or a postgresql:// URL.")],
    catalog: CatalogOption = None,
    now: Annotated[str | None, typer.Option("--now", help="Instant freshness is judged at.")] = None,
    coverage_from: FromOption = None,
    coverage_to: ToOption = None,
    lock_timeout: LockTimeoutOption = 60.0,
    quiet: QuietOption = False,
    fmt: ReportFormatOption = ReportFormat.text,
) -> None:
    """Validate what consumers read (latest revision per key): freshness, completeness, every clause."""
    from tscontract.contract.loader import load_contract
    from tscontract.engines import checked_coverage
    from tscontract.engines import validate as run_validate
    from tscontract.gate.store import RUNS, open_store, table_base

    coverage = checked_coverage(parse_coverage(coverage_from, coverage_to))
    parsed = load_contract(contract)
    opened = open_store(store, read_only=True, lock_timeout=lock_timeout)
    try:
        opened.require_tables(RUNS, table_base(parsed) + "__published", table_base(parsed))
        published = opened.read_latest(parsed)
    finally:
        opened.close()
    # the store holds all the data: a catalog series that never arrived is stale
    report = run_validate(parsed, published, catalog=catalog, now=parse_now(now), all_series=True, coverage=coverage)
    report.data = [f"{store} ({parsed.contract}: latest revision per key)"]
    print_report(report, fmt, contract, quiet)
    raise typer.Exit(EXIT_OK if report.passed else EXIT_VIOLATION)
