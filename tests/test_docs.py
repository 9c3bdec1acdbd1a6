"""The README and the docs site stay small, linked and true.

The site itself is built with warnings as errors by ``make docs`` (part of ``make test``); these
tests hold what a reader on GitHub sees without it: the README's size and first commands, every
relative link and anchor, the example the README shows, and the generated CLI reference.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
LINK = re.compile(r"(?<!!)\[[^\]]+\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")

# The sections the README had before the docs site: each is a heading of a page, so a paragraph
# written under one of them (on another branch) has an obvious place to go.
OLD_README_SECTIONS = [
    "Set up", "What works today", "Walk-through", "Validation", "Spark engine",
    "PostgreSQL engine: validate where the data lives", "chdb engine: in-process ClickHouse",
    "Performance", "The ingest gate", "Raw vendor files", "Drafting a contract from a sample", "Exports",
    "Evolution", "Schema registry", "The contract language", "Sections", "Types",
    "Row clauses (invariants and field constraints)", "Clause semantics", "Step: jumps within a series",
    "Time clauses", "Units and dimensions", "Series catalog", "Lint findings", "Command-line conventions",
    "Library", "Layout",
]  # fmt: skip


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _prose(path: Path) -> list[str]:
    """The file's lines outside fenced code blocks."""
    lines, fence = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fence = not fence
        elif not fence:
            lines.append(line)
    return lines


def _headings(path: Path) -> list[str]:
    return [re.sub(r"^#+\s+", "", line).strip() for line in _prose(path) if re.match(r"^#{1,6}\s", line)]


def _slug(heading: str) -> str:
    """The anchor GitHub and MkDocs both give an ASCII heading."""
    text = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", ""))
    return re.sub(r"\s", "-", text.strip())


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    first_block = re.search(r"```\w*\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands[:2] == ["make demo", "make test"]


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    broken = []
    for line in _prose(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            if not resolved.exists():
                broken.append(f"{target}: no such file")
            elif anchor and resolved.suffix == ".md" and anchor not in {_slug(h) for h in _headings(resolved)}:
                broken.append(f"{target}: no heading with that anchor")
    assert broken == []


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M))
    assert {p.relative_to(DOCS).as_posix() for p in PAGES} == listed


def test_every_old_readme_section_is_a_page_heading() -> None:
    headings = {h for page in PAGES for h in _headings(page)}
    assert [s for s in OLD_README_SECTIONS if s not in headings] == []


def test_the_readme_example_is_what_tscontract_prints() -> None:
    text = README.read_text(encoding="utf-8")
    example = text[text.index("## Example") :]
    yaml_lines = re.search(r"```yaml\n(.*?)```", example, re.S).group(1).splitlines()  # type: ignore[union-attr]
    contract = (ROOT / "examples" / "ohlcv_1m" / "contract.yaml").read_text(encoding="utf-8").splitlines()
    assert [line for line in yaml_lines if line not in contract] == []
    shell = re.search(r"```sh\n\$ (.*?)```", example, re.S).group(1)  # type: ignore[union-attr]
    command, *shown = shell.replace("\\\n", " ").splitlines()
    args = command.split()
    assert args[0] == ".venv/bin/tscontract"
    run = subprocess.run([sys.executable, "-m", "tscontract", *args[1:]], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1
    printed = run.stdout.splitlines()
    assert [line for line in shown if line != "..." and line not in printed] == []


def test_the_tutorial_explains_every_command_the_demo_runs() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("\ndemo:") : makefile.index("\nlint-code:")]
    commands = set(re.findall(r"\$\(T\) ([a-z][\w-]*)", recipe))
    assert {"lint", "validate", "profile", "ingest"} <= commands
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    section = page[page.index("## What `make demo` runs") : page.index("## Walk-through")]
    assert sorted(c for c in commands if not re.search(rf"(`|\$T ){re.escape(c)}[` ]", section)) == []


def test_the_cli_reference_has_every_command_and_option() -> None:
    """Each command's section lists each of its options in its table, and its usage line."""
    from typer.main import get_command

    from tscontract.cli import app

    reference = _hooks().cli_reference()
    sections = dict(re.findall(r"^#+ (tscontract[\w -]*)\n(.*?)(?=^#+ tscontract|\Z)", reference, re.M | re.S))
    todo, missing = [("tscontract", get_command(app))], []
    while todo:
        path, command = todo.pop()
        section = sections.get(path, "")
        if f"Usage: {path} [OPTIONS]" not in section:
            missing.append(f"{path}: usage")
        for param in command.params:
            for opt in param.opts if param.param_type_name == "option" else []:
                if not re.search(rf"^\| `[^`]*(?<![\w-]){re.escape(opt)}(?![\w-])", section, re.M):
                    missing.append(f"{path} {opt}")
        todo += [(f"{path} {name}", sub) for name, sub in getattr(command, "commands", {}).items()]
    assert missing == []
    assert len(sections) >= 17  # 16 commands, the registry group and its serve command


def test_site_links_outside_docs_become_paths(tmp_path: Path) -> None:
    hooks = _hooks()
    page = DOCS / "language.md"
    text = "See [SECURITY.md](../SECURITY.md) and [the gate](ingest.md).\n| `a\\|b` | x |\n```\n[x](../nope.md)\n```"
    shown = hooks.for_site(text, page, DOCS)
    assert shown.splitlines()[0] == "See `SECURITY.md` and [the gate](ingest.md)."
    assert shown.splitlines()[1] == "| `a|b` | x |"
    assert "[x](../nope.md)" in shown  # code blocks are left alone
    with pytest.raises(ValueError, match=r"nope\.md"):
        hooks.for_site("[x](../nope.md)", page, DOCS)
