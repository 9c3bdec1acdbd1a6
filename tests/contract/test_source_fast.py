"""libyaml (the fast path of contract/source.py) reads every YAML text as the pure parser does, or steps aside.

The pure parser (ruamel's round-trip composer) is the definition: for each text, the fast path gives the same
tree and the same positions, or the same error, because anything it might read differently goes to the pure
parser. Texts: every YAML file in the repository (the seed's contracts among them, as examples/), and the
corners where the two parsers differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tscontract.contract import source
from tscontract.errors import SourceError

FILES = sorted(p for p in [*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("tests/**/*.yaml")] if ".venv" not in p.parts)

CORNERS = {
    "yaml 1.1 booleans are text": "a: [on, yes, no, off, y, NO]\nb: 010\nc: 0o10\nd: 1_000\n",
    "a colon in a flow scalar (libyaml refuses)": "cadence: [1:20, 2:30]\n",
    "a tab in a plain scalar (the pure parser refuses)": "invariants:\n  - volume\t>= 0\n",
    "a directive": "%YAML 1.2\n---\na: 1\n",
    "explicit tags": "a: !!str 5\nb: !!int '7'\n",
    "folded and literal": "a: >\n  one\n  two\n\n  three\nb: |\n  x\n   y\n",
    "aliases": "x: &a [1, 2]\ny: [*a, *a]\n",
    "an alias inside itself": "loop: &a [1, *a]\n",
    "a duplicate key": "a: 1\na: 2\n",
    "a merge key": "x: &a {b: 1}\ny:\n  <<: *a\n",
    "63 brackets deep": "a: " + "[" * 63 + "x" + "]" * 63 + "\n",
    "62 brackets deep": "a: " + "[" * 62 + "x" + "]" * 62 + "\n",
    "block nesting": "".join(f"{'  ' * i}k{i}:\n" for i in range(70)) + "  " * 70 + "v\n",
    "compact sequences": "a: " + "- " * 80 + "x\n",
    "empty": "",
    "a comment only": "# nothing\n",
    "a type call": "fields:\n  p: {type: decimal(18, 8), unit: bar}\n",
    "unicode": "owner: \u00e9quipe\nnote: '\u2028'\n",
    "a bad indent": "a:\n  b: 1\n c: 2\n",
    "an unclosed quote": "a: 'x\n",
}


def outcome(text: str) -> tuple[str, object]:
    try:
        tree, index = source.load_yaml(text, "c.yaml")
    except SourceError as exc:
        return "error", str(exc)
    return "tree", (tree, index.nodes)


def pure(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    with monkeypatch.context() as patched:
        patched.setattr(source, "_fast_compose", lambda text: None)
        return outcome(text)


def test_libyaml_is_installed_so_the_fast_path_runs():
    assert source._fast_compose("a: 1\n") is not None


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(p.parents[1])) for p in FILES])
def test_every_yaml_file_reads_the_same(path: Path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    assert outcome(text) == pure(text, monkeypatch)


@pytest.mark.parametrize("text", list(CORNERS.values()), ids=list(CORNERS))
def test_corners_read_the_same(text: str, monkeypatch):
    assert outcome(text) == pure(text, monkeypatch)


YAML_ATOMS = st.sampled_from(
    [
        "a",
        "b",
        ": ",
        ":",
        "- ",
        "-",
        "\n",
        "  ",
        " ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        '"',
        "#",
        "&x ",
        "*x",
        "!!str ",
        "?",
        "|",
        ">",
        "1",
        "0x1F",
        "on",
        "null",
        "~",
        "1e3",
        ".inf",
        "\\",
        "%",
        "---",
        "...",
        "\u00e9",
        "@",
        "`",
    ]
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(YAML_ATOMS, max_size=40).map("".join))
def test_generated_texts_read_the_same(text: str):
    fast = outcome(text)
    original = source._fast_compose
    try:
        source._fast_compose = lambda text: None
        slow = outcome(text)
    finally:
        source._fast_compose = original
    assert fast == slow
