"""Measure how often ``tscontract compat`` agrees with Confluent Schema Registry's diff examples.

Confluent's example files (``json-schema-provider/src/test/resources/diff-*.json``,
``protobuf-provider/src/test/resources/diff-schema-examples*.json``) are under the
Confluent Community License, so they are read from a checkout given on the command
line, not vendored::

    python tests/evolution/conformance/confluent_agreement.py PATH/TO/schema-registry [-v]

Each example is ``original_schema`` -> ``update_schema`` with Confluent's verdict
``compatible`` (its ``SchemaDiff.compare(original, update)`` has no incompatible
change), i.e. mode BACKWARD with ``update`` new and ``original`` old. Protobuf examples
with schema references check the file together with the imports given as
``*_dependencies`` (as the registry does); an example whose dependencies carry no text
is skipped. Prints the agreement per suite and, with ``-v``, each disagreement.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tscontract.evolution.modes import check

SUITES = {
    "jsonschema": [
        "json-schema-provider/src/test/resources/diff-schema-examples.json",
        "json-schema-provider/src/test/resources/diff-schema-examples-2020-12.json",
        "json-schema-provider/src/test/resources/diff-combined-schema-examples.json",
        "json-schema-provider/src/test/resources/diff-combined-schema-examples-2020-12.json",
    ],
    "protobuf": [
        "protobuf-provider/src/test/resources/diff-schema-examples.json",
        "protobuf-provider/src/test/resources/diff-schema-examples-with-meta.json",
    ],
}


# Confluent examples where tscontract is stricter on purpose (see test_reference_verdicts.DELIBERATE)
DELIBERATE = {
    "Detect required array to be changed": "required: bar, not declared in properties, is still required "
    "(JSON Schema Validation 6.5.3); old {'foo': 'x'} is rejected by the new schema",
}


def load_cases(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))  # the 2020-12 files have trailing commas


def with_references(case: dict, side: str) -> str | None:
    """The side's schema text, bundled with its imports when it has references (None: no text for them)."""
    schema = case[f"{side}_schema"]
    text = schema if isinstance(schema, str) else json.dumps(schema)
    if f"{side}_references" not in case:
        return text
    imports = {d["name"]: d.get("dependency") for d in case.get(f"{side}_dependencies", [])}
    if not imports or None in imports.values():
        return None
    from tscontract.evolution.proto_compat import bundle

    return bundle(text, imports)


def verdict(fmt: str, case: dict) -> tuple[bool, list[str]] | None:
    new, old = with_references(case, "update"), with_references(case, "original")
    if new is None or old is None:
        return None
    try:
        result = check("BACKWARD", new, [old], fmt)
    except Exception as error:  # a crash is a disagreement to report
        return False, [f"error: {error}"]
    return result.compatible, result.reasons


def main(argv: list[str]) -> int:
    root, verbose = Path(argv[0]), "-v" in argv
    for fmt, files in SUITES.items():
        agree = total = skipped = 0
        for name in files:
            for case in load_cases(root / name):
                found = verdict(fmt, case)
                if found is None:
                    skipped += 1
                    continue
                ours, reasons = found
                total += 1
                agree += ours == case["compatible"]
                if verbose and ours != case["compatible"]:
                    why = DELIBERATE.get(case["description"], "NOT EXPLAINED")
                    print(f"  [{fmt}] {Path(name).name}: {case['description']!r} confluent={case['compatible']}: {why}")
                    for reason in reasons[:3]:
                        print(f"      {reason}")
        print(f"{fmt}: {agree}/{total} = {100 * agree / total:.1f}%" + (f" ({skipped} skipped)" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
