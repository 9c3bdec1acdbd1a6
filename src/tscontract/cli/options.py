"""What several commands share: exit codes, output formats, the options of one meaning, and
the readings of option values (instants, dates, output files) that refuse a bad one in one line."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from tscontract.errors import InputError

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="text for people, json for programs.")]


class EngineName(StrEnum):
    """The engines ``validate`` runs on (``engines.ENGINES``; a test holds the two together)."""

    duckdb = "duckdb"
    postgres = "postgres"
    chdb = "chdb"
    spark = "spark"


EngineOption = Annotated[
    EngineName,
    typer.Option(
        "--engine",
        help="Execution engine: duckdb (embedded), postgres (inside PostgreSQL), chdb (in-process ClickHouse) "
        "or spark.",
    ),
]


class ReportFormat(StrEnum):
    text = "text"
    json = "json"
    junit = "junit"
    github = "github"


ReportFormatOption = Annotated[
    ReportFormat,
    typer.Option(
        "--format",
        "-f",
        help="text for people, json for programs; junit (JUnit XML) or github (Actions annotations) for CI.",
    ),
]


QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="text: one line when every check passes, else only the failed checks.")
]


CatalogOption = Annotated[
    Path | None, typer.Option("--catalog", "-c", help="Series catalog (YAML or CSV).", show_default=False)
]


MappingOption = Annotated[
    Path | None,
    typer.Option("--mapping", help="DATA is raw: convert it with this mapping, as ingest does.", show_default=False),
]


# --from/--to of validate, ingest and check-store: one meaning (engines.validate's ``coverage``)
FromOption = Annotated[
    str | None,
    typer.Option("--from", help="Start of the period the batch covers (RFC 3339; default: sessions touched)."),
]


ToOption = Annotated[
    str | None, typer.Option("--to", help="End (exclusive) of the period the batch covers (RFC 3339).")
]


StoreOption = Annotated[
    str, typer.Option("--store", metavar="STORE", help="A .duckdb file or a postgresql:// URL.", show_default=False)
]


LockTimeoutOption = Annotated[
    float,
    typer.Option(
        "--lock-timeout",
        metavar="SECONDS",
        min=0,
        help="How long to wait while another process has the DuckDB store open.",
    ),
]


def parse_now(text: str | None, option: str = "--now") -> datetime | None:
    """``--now`` (or ``option``) as a UTC instant, or None when not given."""
    if text is None:
        return None
    from tscontract.contract.catalog import instant_option

    return instant_option(text, option)


def parse_coverage(start: str | None, end: str | None) -> tuple[datetime | None, datetime | None] | None:
    """``--from/--to``: the period a batch covers at least, or None (sessions and windows touched)."""
    if start is None and end is None:
        return None
    return parse_now(start, "--from"), parse_now(end, "--to")


def output_file(path: Path | None, option: str) -> None:
    """Refuse, before any work, an output file that cannot be written where it is asked for."""
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"{option} {path}: is a directory; give a file name")
    parent = path.parent
    if not parent.is_dir():
        reason = "is not a directory" if parent.exists() else "does not exist"
        raise InputError(f"{option} {path}: directory {parent} {reason}")


def parse_date(text: str | None) -> date | None:
    """``--today`` as a date, or None when not given."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InputError(f"--today takes YYYY-MM-DD, not {text!r}") from None
