"""The rich console every text renderer writes to."""

from __future__ import annotations

import os

from rich.console import Console

# Piped output (CI logs, files) gets a width wide enough for clause text instead of 80.
PIPE_WIDTH = 140


def make_console(*, stderr: bool = False) -> Console:
    console = Console(stderr=stderr)
    if not console.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        width = max(PIPE_WIDTH, int(columns) if columns.isdigit() else 0)
        console = Console(stderr=stderr, width=width)
    return console
