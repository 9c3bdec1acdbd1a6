"""Soundness of JSON Schema containment against a real validator: a pass must never be a break.

Random writer schemas from a small grammar, readers by mutation (fixed seed); whenever
``check_read`` finds nothing, every instance of a varied pool that the writer accepts
must be accepted by the reader (``jsonschema``'s Draft 2020-12 validator is the oracle).
"""

from __future__ import annotations

import json
import random

from jsonschema import Draft202012Validator

from tscontract.evolution.json_compat import check_read

POOL = [
    None,
    True,
    0,
    1,
    -3,
    2.5,
    10,
    30,
    "",
    "a",
    "abc",
    "abcdef",
    [],
    [1],
    [1, "a"],
    ["a", "a"],
    [1, 2, 3, 4],
    {},
    {"a": 1},
    {"a": "x"},
    {"b": 2},
    {"a": 1, "b": "y"},
    {"a": None, "c": [1]},
    {"x1": 5, "a": 2},
]


def _leaf(rng: random.Random) -> dict:
    kind = rng.choice(["integer", "number", "string", "null", "boolean", None])
    node: dict = {} if kind is None else {"type": kind}
    if kind in ("integer", "number") and rng.random() < 0.6:
        node[rng.choice(["minimum", "maximum", "exclusiveMinimum", "multipleOf"])] = rng.choice([1, 2, 5, 10])
    if kind == "string" and rng.random() < 0.6:
        node[rng.choice(["minLength", "maxLength"])] = rng.choice([1, 3])
    if kind is None and rng.random() < 0.3:
        node["enum"] = rng.sample([1, "a", None, 2.5, "abc"], 2)
    return node


def _schema(rng: random.Random, depth: int = 0) -> dict:
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        return _leaf(rng)
    if roll < 0.6:
        node = {"type": "object", "properties": {n: _schema(rng, depth + 1) for n in rng.sample("abc", 2)}}
        if rng.random() < 0.5:
            node["required"] = rng.sample(list(node["properties"]), 1)
        extra = rng.random()
        if extra < 0.3:
            node["additionalProperties"] = False
        elif extra < 0.5:
            node["additionalProperties"] = _leaf(rng)
        elif extra < 0.6:
            node["patternProperties"] = {"^x": _leaf(rng)}
        if rng.random() < 0.2:
            node[rng.choice(["minProperties", "maxProperties"])] = rng.choice([1, 2])
        return node
    if roll < 0.75:
        node = {"type": "array", "items": _schema(rng, depth + 1)}
        if rng.random() < 0.3:
            node = {"type": "array", "prefixItems": [_leaf(rng)], "items": rng.choice([False, _leaf(rng)])}
        if rng.random() < 0.3:
            node[rng.choice(["minItems", "maxItems", "uniqueItems"])] = rng.choice([1, 2, True])
        return node
    keyword = rng.choice(["anyOf", "oneOf", "allOf", "not"])
    if keyword == "not":
        return {"not": _leaf(rng)}
    return {keyword: [_schema(rng, depth + 1) for _ in range(rng.choice([1, 2, 3]))]}


def _mutate(rng: random.Random, schema: dict) -> dict:
    """A neighbour of ``schema``: one subschema replaced, a keyword dropped, or wrapped."""
    roll = rng.random()
    if roll < 0.3:
        return _schema(rng)
    if roll < 0.5 and schema:
        out = dict(schema)
        out.pop(rng.choice(list(out)))
        return out
    if roll < 0.6:
        return {"anyOf": [schema, _leaf(rng)]}
    out = json.loads(json.dumps(schema))
    if isinstance(out.get("items"), dict) and rng.random() < 0.5:
        out["items"] = _mutate(rng, out["items"])
        return out
    for key in ("properties", "anyOf", "oneOf", "allOf"):
        if key in out and isinstance(out[key], dict) and out[key]:
            name = rng.choice(list(out[key]))
            out[key][name] = _mutate(rng, out[key][name]) if isinstance(out[key][name], dict) else _leaf(rng)
            return out
        if key in out and isinstance(out[key], list) and out[key]:
            index = rng.randrange(len(out[key]))
            out[key][index] = _mutate(rng, out[key][index])
            return out
    return _leaf(rng) if rng.random() < 0.5 else schema


def test_no_pass_is_refuted_by_an_instance():
    rng = random.Random(20261203)
    passes = refuted = 0
    for _ in range(1500):
        writer = _schema(rng)
        reader = _mutate(rng, writer)
        if check_read(json.dumps(reader), json.dumps(writer)):
            continue
        passes += 1
        w_ok, r_ok = Draft202012Validator(writer), Draft202012Validator(reader)
        for value in POOL:
            if w_ok.is_valid(value) and not r_ok.is_valid(value):
                refuted += 1
                raise AssertionError(f"passed but {value!r} breaks it: writer {writer} reader {reader}")
    assert passes > 300 and refuted == 0  # enough passes to mean something
