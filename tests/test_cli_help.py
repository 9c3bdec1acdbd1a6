"""``--help`` says what every option takes, loses no words, and the documented synopses match it.

Every ``tscontract <command> ...`` written in README.md and docs/**/*.md (a line of a code block, or an
inline code span) names a command that exists, and only options that command accepts; an option
written with its choices (``--engine duckdb|postgres|chdb|spark``) names exactly the command's choices.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tscontract.cli import _command
from tscontract.cli.help import _element
from tscontract.cli.options import EngineName
from tscontract.engines import ENGINES

ROOT = Path(__file__).resolve().parent.parent
_STOP = {"|", ">", ">>", "&&", ";", "||", "2>&1", "<"}


def _help(*path: str) -> subprocess.CompletedProcess[str]:
    """``tscontract PATH --help`` in a subprocess, on a terminal wide enough that no help text wraps."""
    env = {**os.environ, "COLUMNS": "400"}
    command = [sys.executable, "-m", "tscontract", *path, "--help"]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def _synopses(text: str) -> list[str]:
    """Code-block lines and inline code spans that start with ``tscontract <command>``."""
    found: list[str] = []
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    for block in blocks:
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"^\$\s+", "", line.strip())
            if line.startswith("tscontract "):
                found.append(" ".join(line.split(" #")[0].split()))
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.split())
        if span.startswith("tscontract ") and not span.startswith("tscontract."):
            found.append(span)
    return found


def _tokens(synopsis: str) -> list[str]:
    text = synopsis.replace("[", " ").replace("]", " ")
    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    out = []
    for token in tokens:
        if token in _STOP or token.startswith((">", "2>")):
            break
        out.append(token)
    return out


def _options(command: Any) -> dict[str, Any]:
    return {opt: p for p in command.params for opt in (*p.opts, *p.secondary_opts) if opt.startswith("-")}


def _problems(synopsis: str, root: Any) -> list[str]:
    """What in ``synopsis`` the commands' ``--help`` does not have."""
    tokens = _tokens(synopsis)[1:]
    command = root
    problems: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if hasattr(command, "commands") and not token.startswith("-") and token != "...":
            sub = command.commands.get(token)
            if sub is None and token.isupper():
                break  # a placeholder for any command: COMMAND ...
            if sub is None:
                return [f"{synopsis!r}: no command {token!r}"]
            command = sub
        elif token.startswith("-") and not re.match(r"^-\d", token) and token not in ("-", "--"):
            name, _, value = token.partition("=")
            options = _options(command)
            if name not in options:
                problems.append(f"{synopsis!r}: {command.name} has no option {name}")
            else:
                problems += _choice_problems(synopsis, options[name], value or _next(tokens, i))
                takes_value = not value and not getattr(options[name], "is_flag", False)
                i += 1 if takes_value and _next(tokens, i) and not _next(tokens, i).startswith("-") else 0
        i += 1
    return problems


def _next(tokens: list[str], i: int) -> str:
    return tokens[i + 1] if i + 1 < len(tokens) else ""


def _choices(param: Any) -> list[str]:
    descriptor = getattr(param, "type_descriptor", None)
    choices = getattr(descriptor, "choices", None) or []
    return [str(getattr(c, "value", c)) for c in choices]


def _choice_problems(synopsis: str, param: Any, value: str) -> list[str]:
    choices = _choices(param)
    if not choices or "|" not in value:
        return []
    named = set(value.split("|"))
    allowed = set(choices)
    return [] if named == allowed else [f"{synopsis!r}: {param.opts[0]} takes {'|'.join(sorted(allowed))}"]


def test_every_documented_synopsis_matches_help():
    root = _command()
    seen, problems = 0, []
    for document in _documents():
        for synopsis in _synopses(document.read_text(encoding="utf-8")):
            seen += 1
            problems += _problems(synopsis, root)
    assert seen > 30  # the README documents the commands
    assert not problems, "\n".join(problems)


def test_the_synopsis_check_catches_an_unknown_command_option_and_choice():
    root = _command()
    assert _problems("tscontract validte C D", root) == ["'tscontract validte C D': no command 'validte'"]
    assert _problems("tscontract lint C [--engine duckdb]", root) == [
        "'tscontract lint C [--engine duckdb]': lint has no option --engine"
    ]
    assert _problems("tscontract validate C D [--engine duckdb|spark]", root)
    assert not _problems("tscontract validate C D [--engine duckdb|postgres|chdb|spark] -c X --now=T", root)
    assert not _problems("tscontract registry serve --db x.sqlite --port 8081", root)
    spans = _synopses("x `tscontract init DATA\n[--timezone ZONE]` y\n```sh\n$ tscontract lint C \\\n  -c K # c\n```\n")
    assert spans == ["tscontract lint C -c K", "tscontract init DATA [--timezone ZONE]"]


def test_engine_choices_are_the_engines_there_are():
    assert {e.value for e in EngineName} == set(ENGINES)
    shown = _help("validate")
    assert "duckdb|postgres|chdb|spark" in shown.stdout


def _all_commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        out += _all_commands(sub, (*path, name))
    return out


@pytest.mark.parametrize("path", [p for p, _ in _all_commands(_command())], ids=lambda p: " ".join(p) or "root")
def test_help_shows_what_each_option_takes_and_loses_no_words(path):
    command = dict(_all_commands(_command()))[path]
    shown = _help(*path)
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", shown.stdout).split())
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "is_flag", False) or param.name == "help":
            continue
        assert (param.metavar and param.metavar != "TEXT") or _free_text(param), (path, param.name, param.metavar)
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is not None and _element(descriptor.annotation) is int:
            assert param.metavar in ("INTEGER", "SECONDS"), (path, param.name)
        words = " ".join(re.sub(r"\\\[", "[", param.help or "").split())
        assert words in flat, (path, param.name, words)
    for line in (command.help or "").split("\n\n"):
        words = " ".join(re.sub(r"\\\[", "[", line).split())
        assert words in flat, (path, words)


# options whose value is free text (an id, a reason, a person, a subject, a host name, a path prefix...)
_FREE_TEXT = {"subject", "source_id", "reason", "who", "host", "db", "token", "basic", "contract", "registry"}


def _free_text(param: Any) -> bool:
    return param.name in _FREE_TEXT
