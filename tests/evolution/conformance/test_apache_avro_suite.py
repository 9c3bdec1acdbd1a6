"""``tscontract compat avro`` against Apache Avro's own compatibility test pairs (vendored, see data/NOTICE).

Every (reader, writer) pair of ``lang/py/avro/test/test_compatibility.py`` with the
verdict of Avro's ``ReaderWriterCompatibilityChecker``; tscontract checks the
same pair as BACKWARD (``new`` = reader, ``old`` = writer). Differences must be
listed in ``DELIBERATE`` with the specification passage that makes tscontract
stricter; the agreement is printed.
"""

from __future__ import annotations

import json
from pathlib import Path

from tscontract.evolution import check

CASES = json.loads((Path(__file__).parent / "data" / "apache_avro_py_compatibility.json").read_text(encoding="utf-8"))

# index in CASES -> why tscontract's verdict differs on purpose
DELIBERATE: dict[int, str] = {}


def test_agreement_with_apache_avro() -> None:
    disagreements = []
    for index, case in enumerate(CASES):
        ours = check("BACKWARD", json.dumps(case["reader"]), [json.dumps(case["writer"])], "avro").compatible
        if ours != case["compatible"]:
            disagreements.append(index)
    agree = len(CASES) - len(disagreements)
    print(f"avro (Apache Avro py suite): {agree}/{len(CASES)} = {100 * agree / len(CASES):.1f}% agree")
    assert len(CASES) > 100
    unexplained = [(i, CASES[i]) for i in disagreements if i not in DELIBERATE]
    assert not unexplained, f"disagreements without a documented policy: {unexplained[:3]}"
    assert sorted(disagreements) == sorted(DELIBERATE)


RUBY = json.loads((Path(__file__).parent / "data" / "apache_avro_ruby_compatibility.json").read_text(encoding="utf-8"))


def test_agreement_with_apache_avro_ruby_pairs() -> None:
    """The pair lists of ``lang/ruby/test/test_schema_compatibility.rb`` (and its ``test_broken``).

    Eight pairs use a record with no ``fields`` (Ruby's parser accepts it; the specification
    requires the list, and Java's and Python's parsers refuse it): tscontract refuses such a
    schema as invalid, so they are counted apart; every other pair must agree.
    """
    agree, invalid, disagreements = 0, [], []
    for index, case in enumerate(RUBY):
        try:
            ours = check("BACKWARD", json.dumps(case["reader"]), [json.dumps(case["writer"])], "avro").compatible
        except ValueError as exc:
            assert "has no 'fields' list" in str(exc)
            invalid.append(index)
            continue
        if ours == case["compatible"]:
            agree += 1
        else:
            disagreements.append((index, case["names"]))
    valid = len(RUBY) - len(invalid)
    print(f"avro (Apache Avro ruby pairs): {agree}/{valid} = {100 * agree / valid:.1f}% agree; {len(invalid)} invalid")
    assert len(RUBY) == 83 and len(invalid) == 8
    assert not disagreements, disagreements
