"""JSON Schema evolution: BACKWARD means every record valid under the old schema validates under the new one."""

from __future__ import annotations

import copy
import json
import re

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tests.conftest import EXAMPLES
from tscontract import load_contract
from tscontract.evolution import check
from tscontract.evolution.json_compat import check_read
from tscontract.interop.exports import export

DECIMAL_18_4 = r"^[+-]?0*[0-9]{1,14}(\.[0-9]{1,4}0*)?$"
DECIMAL_18_2 = r"^[+-]?0*[0-9]{1,16}(\.[0-9]{1,2}0*)?$"
BASE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["symbol", "volume"],
    "properties": {
        "symbol": {"type": "string", "description": "ticker"},
        "volume": {"type": "string", "pattern": DECIMAL_18_4},
        "side": {"type": ["string", "null"], "enum": ["BUY", "SELL", None]},
        "venue": {"type": "string", "const": "XNAS"},
        "bar_start": {"type": "string", "format": "date-time"},
        "trades": {"type": ["integer", "null"], "minimum": 0},
    },
}
GOOD = {
    "symbol": "AAPL",
    "volume": "12.5",
    "side": "SELL",
    "venue": "XNAS",
    "bar_start": "2024-01-02T03:04:05Z",
    "trades": 3,
}


def changed(edit) -> dict:
    schema = copy.deepcopy(BASE)
    edit(schema)
    return schema


def _set(path: list, value):
    def edit(schema):
        node = schema
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return edit


_DELETE = object()
PROPS = "properties"

# (id, new schema, reason or None, witness: valid under old, rejected by new)
CASES = [
    ("identical", BASE, None, None),
    ("description_only", changed(_set([PROPS, "symbol", "description"], "ticker symbol")), None, None),
    ("optional_property_added", changed(_set([PROPS, "note"], {"type": "string"})), None, None),
    (
        "required_property_added",
        changed(lambda s: (s[PROPS].update(note={"type": "string"}), s["required"].append("note"))),
        "/required/note: note became required",
        GOOD,
    ),
    (
        "existing_property_made_required",
        changed(lambda s: s["required"].append("side")),
        "/required/side: side became required",
        {"symbol": "A", "volume": "1"},
    ),
    ("required_dropped", changed(_set(["required"], ["symbol"])), None, None),
    (
        "property_removed_closed",
        changed(_set([PROPS, "trades"], _DELETE)),
        "/properties/trades: property removed while additionalProperties is false",
        GOOD,
    ),
    ("schema_opened", changed(_set(["additionalProperties"], True)), None, None),
    (
        "type_changed",
        changed(_set([PROPS, "trades", "type"], ["string", "null"])),
        "/properties/trades/type: type ['integer', 'null'] -> ['null', 'string']",
        GOOD,
    ),
    (
        "null_dropped",
        changed(_set([PROPS, "trades", "type"], "integer")),
        "/properties/trades/type",
        GOOD | {"trades": None},
    ),
    ("integer_to_number", changed(_set([PROPS, "trades", "type"], ["number", "null"])), None, None),
    ("enum_widened", changed(_set([PROPS, "side", "enum"], ["BUY", "SELL", "CROSS", None])), None, None),
    (
        "enum_narrowed",
        changed(_set([PROPS, "side", "enum"], ["BUY", None])),
        "/properties/side/enum: enum narrowed: ['SELL'] no longer allowed",
        GOOD,
    ),
    (
        "enum_added",
        changed(_set([PROPS, "symbol", "enum"], ["AAPL"])),
        "/properties/symbol/enum: values restricted",
        GOOD | {"symbol": "MSFT"},
    ),
    (
        "pattern_changed",
        changed(_set([PROPS, "volume", "pattern"], DECIMAL_18_2)),
        "/properties/volume/pattern: pattern changed",
        GOOD | {"volume": "1.2345"},
    ),
    ("pattern_removed", changed(_set([PROPS, "volume", "pattern"], _DELETE)), None, None),
    (
        "format_added",
        changed(_set([PROPS, "symbol", "format"], "date-time")),
        "/properties/symbol/format: format changed: 'none' -> 'date-time'",
        GOOD,
    ),
    (
        "format_changed",
        changed(_set([PROPS, "bar_start", "format"], "date")),
        "/properties/bar_start/format: format changed",
        GOOD,
    ),
    (
        "const_changed",
        changed(_set([PROPS, "venue", "const"], "XNYS")),
        "/properties/venue/const: const narrowed: ['XNAS'] no longer allowed",
        GOOD,
    ),
    ("const_dropped", changed(_set([PROPS, "venue", "const"], _DELETE)), None, None),
    (
        "minimum_raised",
        changed(_set([PROPS, "trades", "minimum"], 1)),
        "/properties/trades/minimum: minimum narrowed: 0 -> 1",
        GOOD | {"trades": 0},
    ),
    ("minimum_lowered", changed(_set([PROPS, "trades", "minimum"], -1)), None, None),
    (
        "clause_added",
        changed(_set([PROPS, "trades", "allOf"], [{"$comment": "tscontract check inv", "maximum": 2}])),
        "/properties/trades/allOf/0: new or changed clause inv",
        GOOD,
    ),
]


@pytest.mark.parametrize(("case_id", "new", "reason", "witness"), CASES, ids=[c[0] for c in CASES])
def test_backward_verdict_reason_and_witness(case_id, new, reason, witness):
    result = check("BACKWARD", json.dumps(new), [json.dumps(BASE)], "jsonschema")
    if reason is None:
        assert result.compatible, result.reasons
        assert Draft202012Validator(new, format_checker=FormatChecker()).is_valid(GOOD)
    else:
        assert not result.compatible
        assert any(r.startswith(f"olds[0] (new reads old): {reason}") for r in result.reasons), result.reasons
        # The witness proves it: valid under the old schema, rejected by the new one.
        assert Draft202012Validator(BASE, format_checker=FormatChecker()).is_valid(witness)
        assert not Draft202012Validator(new, format_checker=FormatChecker()).is_valid(witness)


def test_added_optional_property_is_not_forward_compatible_when_closed():
    new = changed(_set([PROPS, "note"], {"type": "string"}))
    result = check("FORWARD", json.dumps(new), [json.dumps(BASE)], "jsonschema")
    assert result.reasons == [
        "olds[0] (old reads new): /properties/note: property removed while additionalProperties is false"
    ]


def _exported(path) -> dict:
    return json.loads(export("jsonschema", load_contract(path)).artifacts[0].content)


def test_exported_schema_is_fully_compatible_with_itself():
    schema = json.dumps(_exported(EXAMPLES / "ohlcv_1m" / "contract.yaml"))
    assert check("FULL_TRANSITIVE", schema, [schema, schema], "jsonschema").compatible


def test_exported_schema_scale_narrowed_and_clause_changed():
    old = _exported(EXAMPLES / "ohlcv_1m" / "contract.yaml")
    new = copy.deepcopy(old)
    volume = new["properties"]["volume"]
    volume["pattern"] = volume["pattern"].replace("{1,4}", "{1,2}")
    # A changed $defs entry changes every clause that refers to it.
    new["$defs"]["volume"]["description"] = "reworded only"
    assert [str(i) for i in check_read(json.dumps(new), json.dumps(old))] == [
        f"/properties/volume/pattern: pattern changed: {old['properties']['volume']['pattern']!r} -> "
        f"{volume['pattern']!r}"
    ]
    new["$defs"]["volume"]["type"] = "number"
    reasons = [str(i) for i in check_read(json.dumps(new), json.dumps(old))]
    assert any(r.startswith("/properties/volume/allOf/0: new or changed clause invariants[2]") for r in reasons)


def test_enum_only_writer_checked_against_reader_type():
    old = json.dumps({"properties": {"side": {"enum": ["BUY", None]}}})
    typed = json.dumps({"properties": {"side": {"type": "string"}}})
    nullable = json.dumps({"properties": {"side": {"type": ["string", "null"]}}})
    assert [str(i) for i in check_read(typed, old)] == [
        "/properties/side/type: values [None] are not of type ['string']"
    ]
    assert check_read(nullable, old) == []


def test_refs_are_followed_and_open_content_narrowing_breaks():
    """A type change inside a $ref'd definition and additionalProperties true -> schema both break (witnesses)."""
    old = {
        "type": "object",
        "properties": {"px": {"$ref": "#/definitions/price"}},
        "definitions": {"price": {"type": "string"}},
    }
    new = copy.deepcopy(old)
    new["definitions"]["price"]["type"] = "number"
    assert [str(i) for i in check_read(json.dumps(new), json.dumps(old))] == [
        "/properties/px/type: type ['string'] -> ['number']"
    ]
    witness = {"px": "1.5"}
    assert Draft202012Validator(old).is_valid(witness) and not Draft202012Validator(new).is_valid(witness)
    narrowed = {**old, "additionalProperties": {"type": "number"}}
    reasons = [str(i) for i in check_read(json.dumps(narrowed), json.dumps(old))]
    assert reasons and reasons[0].startswith("/additionalProperties: additionalProperties narrowed")
    witness = {"px": "1.5", "venue": "XNAS"}
    assert Draft202012Validator(old).is_valid(witness) and not Draft202012Validator(narrowed).is_valid(witness)


@pytest.mark.parametrize(
    ("reader", "message"),
    [
        ({"$ref": "#/definitions/missing"}, "$ref '#/definitions/missing' does not resolve"),
        ({"$ref": "other.json#/x"}, "only local references"),
        ({"properties": ["px"]}, "not a valid JSON Schema"),
    ],
)
def test_unreadable_schema_is_one_value_error(reader, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_read(json.dumps(reader), json.dumps({"type": "object"}))


def _trade_tree(id_type: str = "string") -> dict:
    """Recursive oneOf over $ref'd product types (Confluent's testRecursiveOneOfUnion shape)."""
    kinds = [f"T{i}" for i in range(6)]
    node = {
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": {"type": "string"},
            "legs": {"type": "array", "items": {"oneOf": [{"$ref": f"#/definitions/{k}"} for k in kinds]}},
        },
    }
    definitions = {k: copy.deepcopy(node) for k in kinds}
    definitions["T3"]["properties"]["id"]["type"] = id_type
    return {"definitions": definitions, "oneOf": [{"$ref": f"#/definitions/{k}"} for k in kinds]}


def test_recursive_oneOf_terminates_and_is_compatible_with_itself():
    assert check_read(json.dumps(_trade_tree()), json.dumps(_trade_tree())) == []
    assert check_read(json.dumps(_trade_tree("number")), json.dumps(_trade_tree())) != []


def test_too_many_subschema_pairs_is_refused_not_passed():
    def union(reverse: bool) -> str:
        branches = [
            {"type": "object", "required": [f"k{i}"], "properties": {f"k{i}": {"maxLength": i + 1}}} for i in range(250)
        ]
        return json.dumps({"anyOf": branches[::-1] if reverse else branches})

    with pytest.raises(ValueError, match="too large or too recursive"):
        check_read(union(True), union(False))


# -- Confluent's recursive oneOf pairs (json-schema-provider SchemaDiffTest) ------------------------

_TRADE_TYPES = ["Asset", "Basket", "Swap", "Bond", "Option", "Future"]
_TRADE_TYPES += ["Forward", "Loan", "Repo", "Equity", "Index", "CommodityLeg"]


def _confluent_trade(asset_id: str = "string") -> dict:
    """recursiveOneOfTradeSchema(): 12 types, each with two properties that are a oneOf of all 12."""

    def union() -> dict:
        return {"oneOf": [{"$ref": f"#/definitions/{t}"} for t in _TRADE_TYPES]}

    definitions = {
        t: {
            "type": "object",
            "properties": {"id": {"type": "string"}, "underlying": union(), "referenceProduct": union()},
        }
        for t in _TRADE_TYPES
    }
    definitions["Asset"]["properties"]["id"]["type"] = asset_id
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Trade",
        "type": "object",
        "additionalProperties": True,
        "definitions": definitions,
        "properties": {"tradeId": {"type": "string"}, "product": union()},
    }


def _memo_masking(t0_id: str, t1_id: str) -> dict:
    """memoMaskingSchema(): T0 -> T2 -> T0 is a cycle; the root is oneOf[T0, T1]."""

    def node(id_type: str, target: str) -> dict:
        ref = {"oneOf": [{"$ref": f"#/definitions/{target}"}]}
        return {"type": "object", "additionalProperties": True, "properties": {"id": {"type": id_type}, "ref": ref}}

    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": True,
        "definitions": {"T0": node(t0_id, "T2"), "T1": node(t1_id, "T2"), "T2": node("integer", "T0")},
        "properties": {"root": {"oneOf": [{"$ref": "#/definitions/T0"}, {"$ref": "#/definitions/T1"}]}},
    }


def test_confluents_recursive_oneOf_union_is_decided():
    # testRecursiveOneOfUnionTerminates / ...DetectsIncompatibleChange: once "not a valid JSON Schema
    # (RecursionError ...)"; now decided, both ways, in one pass of the shared budget
    old, new = json.dumps(_confluent_trade()), json.dumps(_confluent_trade("number"))
    assert check_read(old, old) == []
    assert check_read(new, old) != []
    assert check_read(old, new) != []
    result = check("FULL_TRANSITIVE", new, [old], "jsonschema")
    assert not result.compatible and all("/properties/product/oneOf" in r for r in result.reasons)
    assert check("FULL", old, [old], "jsonschema").compatible


def test_a_cached_recursive_pair_does_not_mask_an_incompatibility():
    # testRecursiveOneOfMemoizationDoesNotMaskIncompatibility
    original, update = json.dumps(_memo_masking("integer", "boolean")), json.dumps(_memo_masking("boolean", "number"))
    assert check_read(update, original) != []
    assert check_read(original, update) != []


def _chain(length: int, last_type: str) -> str:
    """D0 -> D1 -> ... -> D{length}: every link a new pair, nested one in another."""
    definitions = {
        f"D{i}": {"type": "object", "properties": {"next": {"$ref": f"#/definitions/D{i + 1}"}}} for i in range(length)
    }
    definitions[f"D{length}"] = {"type": last_type}
    return json.dumps({"definitions": definitions, "$ref": "#/definitions/D0"})


def test_over_the_nesting_budget_is_refused_with_a_budget_message(tmp_path):
    from tests.conftest import run_cli
    from tscontract.evolution.issues import CheckBudgetExceeded

    assert check_read(_chain(300, "integer"), _chain(300, "string")) != []  # deep, within the budget
    with pytest.raises(CheckBudgetExceeded, match=r"budget .*nested subschema comparisons"):
        check_read(_chain(600, "integer"), _chain(600, "string"))
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    new.write_text(_chain(600, "integer"))
    old.write_text(_chain(600, "string"))
    result = run_cli("compat", "jsonschema", new, old)
    assert result.returncode == 2, result.stdout
    assert "budget" in result.stderr and "not a valid JSON Schema" not in result.stderr
    trade = tmp_path / "trade.json"
    trade.write_text(json.dumps(_confluent_trade()))
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(_confluent_trade("number")))
    result = run_cli("compat", "jsonschema", changed, trade, "--format", "json")
    assert result.returncode == 1 and json.loads(result.stdout)["compatible"] is False


def test_a_recursion_error_is_a_budget_never_an_invalid_schema(monkeypatch):
    from tscontract.evolution import json_compat
    from tscontract.evolution.issues import CheckBudgetExceeded

    def deep(*args: object) -> list:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(json_compat._Checker, "compare", deep)
    with pytest.raises(CheckBudgetExceeded, match="recursion limit") as caught:
        check_read('{"type": "string"}', '{"type": "string"}')
    assert "not a valid JSON Schema" not in str(caught.value)
