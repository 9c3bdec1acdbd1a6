"""YAML as people write it: type calls in flow mappings, positions as written."""

from __future__ import annotations

import pytest

from tscontract.contract.source import load_yaml, protect_type_calls
from tscontract.errors import SourceError


def test_plain_yaml_would_split_decimal_but_we_do_not():
    from ruamel.yaml import YAML

    naive = YAML().load("open: {type: decimal(18,8), unit: quote_currency}\n")
    assert "8)" in naive["open"]  # the silent corruption a plain loader produces
    tree, _ = load_yaml("open: {type: decimal(18,8), unit: quote_currency}\n", "f")
    assert tree == {"open": {"type": "decimal(18,8)", "unit": "quote_currency"}}


def test_enum_in_flow_mapping_and_positions_map_back_to_the_text_as_written():
    text = "q: {type: enum[good, suspect, bad], nullable: false}\n"
    tree, index = load_yaml(text, "f.yaml")
    assert tree["q"]["type"] == "enum[good, suspect, bad]"
    assert tree["q"]["nullable"] is False
    loc = index.location(("q", "nullable"), key=True)
    assert (loc.line, loc.column) == (1, text.index("nullable") + 1)
    assert index.location(("q", "type"), offset=4).column == text.index("[good") + 1


def test_only_flow_context_is_rewritten():
    text = (
        "a: decimal(18,8)\n"
        "b: |\n  {type: decimal(1,2)}\n"
        "c: 'x{y(1,2)}'\n"
        'd: {t: "decimal(1,2)", u: f(1), v: [enum[a, b]]}  # note: g(1,2)\n'
    )
    rewritten, _ = protect_type_calls(text)
    tree, _ = load_yaml(text, "f")
    assert tree["a"] == "decimal(18,8)"
    assert tree["b"] == "{type: decimal(1,2)}\n"
    assert tree["c"] == "x{y(1,2)}"
    assert tree["d"] == {"t": "decimal(1,2)", "u": "f(1)", "v": ["enum[a, b]"]}
    assert "# note: g(1,2)" in rewritten


def test_scalars_keep_decimal_precision_and_timestamps_as_text():
    tree, _ = load_yaml("x: 0.1000\nn: 7\nb: true\nz: ~\nt: 2026-01-01T00:00:00Z\n", "f")
    assert str(tree["x"]) == "0.1000" and tree["n"] == 7 and tree["b"] is True and tree["z"] is None
    assert tree["t"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("a: 1\na: 2\n", "duplicate key 'a' (first defined at line 1)", 2, 1),
        ("m:\n  k: 1\n  k: 2\n", "duplicate key 'k'", 3, 3),
        ("a: [1, 2\nb: 3\n", "not valid YAML", 2, 2),
        ("a: {t: enum[x,}\n", "not valid YAML", 1, 12),
        ("<<: {a: 1}\n", "merge keys", 1, 1),
        ("", "empty", 1, 1),
    ],
)
def test_yaml_errors_are_positioned(text, message, line, column):
    with pytest.raises(SourceError) as info:
        load_yaml(text, "f.yaml")
    assert message in info.value.message
    assert (info.value.location.line, info.value.location.column) == (line, column)
