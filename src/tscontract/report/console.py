"""The rich console every text renderer writes to."""

from __future__ import annotations

import os

from rich.console import Console

# Piped output (CI logs, files) gets a width wide enough for clause text instead of 80.
PIPE_WIDTH = 140


def make_console(*, stderr: bool = False) -> Console:
    """A console that shows data as written: no emoji shortcodes (``:smile:``), no highlighting.

    rich's highlighter runs regular expressions whose time grows with the square of a line's
    length (a 64 KB value took 50 s); values are cut (shown.py) and highlighting is off.
    Markup stays on for our own styles: renderers pass data as ``Text`` or ``rich.markup.escape``-d.
    """
    console = Console(stderr=stderr, emoji=False, highlight=False)
    if not console.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        width = max(PIPE_WIDTH, int(columns) if columns.isdigit() else 0)
        console = Console(stderr=stderr, width=width, emoji=False, highlight=False)
    return console
