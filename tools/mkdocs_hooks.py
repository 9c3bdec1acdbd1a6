"""MkDocs hooks for the docs site (mkdocs.yml ``hooks:``).

* ``docs/cli.md`` holds a marker that is replaced by the command-line reference, generated from the
  click commands behind the typer app (the objects ``--help`` prints), so it cannot drift from it.
* A link from a page to a repository file outside ``docs/`` (``../SECURITY.md``) works on GitHub but
  is no page of the site: the site shows its path as code instead. A link to a file that does not
  exist stops the build (the tests also check every link: tests/test_docs.py).
* In a table row GitHub needs ``\\|`` for a pipe inside a code span; Python-Markdown keeps code
  spans whole and would show the backslash, so the site gets the plain pipe.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MARKER = "<!-- cli-reference -->"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")
_FENCE = re.compile(r"^(```|~~~)")
_CODE = re.compile(r"`[^`]+`")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, cli_reference())
    return for_site(markdown, Path(page.file.abs_src_path), Path(config["docs_dir"]))


def for_site(markdown: str, page_path: Path, docs_dir: Path) -> str:
    """Outside code blocks: links to repository files outside ``docs_dir`` become their path in code;
    in table rows, ``\\|`` inside a code span becomes ``|``."""
    lines, fence = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line.lstrip()):
            fence = not fence
        if not fence:
            line = _LINK.sub(lambda m: _outside(m, page_path, docs_dir), line)
            if line.startswith("|"):
                line = _CODE.sub(lambda m: m.group(0).replace("\\|", "|"), line)
        lines.append(line)
    return "\n".join(lines)


def _outside(match: re.Match[str], page_path: Path, docs_dir: Path) -> str:
    text, target = match.group(1), match.group(2)
    if "://" in target or target.startswith(("mailto:", "/")):
        return match.group(0)
    resolved = (page_path.parent / target).resolve()
    if resolved.is_relative_to(docs_dir.resolve()):
        return match.group(0)
    if not resolved.exists():
        raise ValueError(f"{page_path.name}: link to {target}, which does not exist")
    shown = resolved.relative_to(docs_dir.resolve().parent).as_posix()
    return f"`{shown}`" if text.strip("`") == shown else f"{text} (`{shown}`)"


# ---------------------------------------------------------------- the command-line reference


def cli_reference() -> str:
    """Markdown for every command of ``tscontract``: what it does, its usage line, its parameters."""
    from typer.main import get_command

    from tscontract.cli import app
    from tscontract.cli.help import tidy

    root = get_command(app)
    tidy(root)  # the placeholders --help shows (cli/help.py)
    context = root.context_class(root, info_name="tscontract")
    parts = [_command_section(root, context, level=2)]
    parts += _subcommands(root, context, level=2)
    return "\n".join(parts)


def _subcommands(group: Any, parent: Any, level: int) -> list[str]:
    parts = []
    for name, command in getattr(group, "commands", {}).items():
        if getattr(command, "hidden", False):
            continue
        context = command.context_class(command, info_name=name, parent=parent)
        parts.append(_command_section(command, context, level))
        parts += _subcommands(command, context, level + 1)
    return parts


def _command_section(command: Any, context: Any, level: int) -> str:
    usage = " ".join([context.command_path, *command.collect_usage_pieces(context)])
    lines = ["#" * level + f" {context.command_path}", ""]
    lines += [_help_text(command.help or ""), "", "```", f"Usage: {usage}", "```", ""]
    # each parameter's help record: the two columns click's --help prints (names and placeholder; help
    # with default, range, required)
    records = [param.get_help_record(context) for param in command.params]
    rows = [f"| {_code(names)} | {_escape(text)} |" for names, text in filter(None, records)]
    if rows:
        lines += ["| argument / option | description |", "|---|---|", *rows, ""]
    if getattr(command, "commands", None):
        names = ", ".join(f"`{name}`" for name in command.commands)
        lines += [f"Commands: {names}.", ""]
    return "\n".join(lines)


def _help_text(text: str) -> str:
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.replace("\b", "")) if p.strip()]
    return "\n\n".join(_escape(p) for p in paragraphs)


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _escape(text: str) -> str:
    """Text for a markdown table cell or paragraph: pipes escaped, no markup read into it."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")
