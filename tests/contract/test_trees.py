"""A clause's tree is built only when read (contract/trees.py), and its key always names the tree it builds."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
import sqlglot.expressions as exp
from hypothesis import assume, given

from tests.contract.clause_batches import TYPES, _resolved, profile
from tests.contract.clause_strategies import clauses
from tscontract.contract.clauses import RowClause
from tscontract.contract.row_parser import parse_invariant
from tscontract.contract.trees import LazyTree, held_tree
from tscontract.engines.run import rows
from tscontract.plan.builders import equals_tree
from tscontract.plan.ir import Check
from tscontract.plan.kinds import CheckKind


def test_a_pickled_clause_keeps_its_key_and_builds_the_same_tree():
    clause = parse_invariant("low <= open <= high")
    key = held_tree(clause).key
    back = pickle.loads(pickle.dumps(clause))
    tree = held_tree(back)
    assert not tree.built and tree.key == key  # named without building
    assert back.predicate == clause.predicate and tree.built and tree.key == key
    assert back == clause and hash(back) == hash(clause)


def test_a_tree_changed_in_place_is_named_by_what_it_now_is():
    clause = pickle.loads(pickle.dumps(parse_invariant("volume >= 0")))
    before = held_tree(clause).key
    clause.predicate.set("expression", exp.Literal.number("1"))  # a caller edits the built tree
    after = held_tree(clause).key
    assert after != before and after == LazyTree.of(clause.predicate.copy()).key


def test_trees_the_plan_writes_are_named_by_their_builder_and_arguments():
    made = LazyTree.made(equals_tree, "adjusted", False)
    assert made.key == "made:tscontract.plan.builders.equals_tree('adjusted', False)" and not made.built
    assert LazyTree.made(equals_tree, "adjusted", 0).key != made.key  # False and 0 are different literals
    back = pickle.loads(pickle.dumps(made))
    assert back.key == made.key and back.value.sql() == "adjusted = FALSE"


def test_the_field_reads_as_the_tree_and_defaults_as_declared():
    tree = exp.column("x").eq(1)
    check = Check("c", CheckKind.INVARIANT, "invariants", "x = 1", "invariants[0]", "row", predicate=tree)
    assert check.predicate is tree and held_tree(check).value is tree
    assert Check("d", CheckKind.ROW_COUNT, "batch", "", "row_count", "batch").predicate is None
    with pytest.raises(TypeError):
        RowClause("x = 1", "expression")  # type: ignore[call-arg]  # a clause has a tree: no default


def test_a_cached_clause_is_unpickled_without_sqlglot(tmp_path):
    """What makes a warm run sqlglot-free: unpickling a contract's clauses imports nothing to build them."""
    blob = tmp_path / "clause.pickle"
    blob.write_bytes(pickle.dumps(parse_invariant("low <= close <= high")))
    code = (
        "import pickle, sys; from tscontract.contract.trees import held_tree; "
        f"c = pickle.loads(open({str(blob)!r}, 'rb').read()); k = held_tree(c).key; "
        "print('sqlglot' in sys.modules, k.startswith('tree:')); c.predicate; print('sqlglot' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True"]


@profile(60, 300)
@given(clauses())
def test_a_generated_clause_read_back_unbuilt_is_written_as_the_clause_itself(text: str) -> None:
    """The clause-meaning generator's clauses, pickled as the cache keeps them: the unbuilt tree's key is the
    built clause's, it is answered with the DuckDB SQL lowering the clause itself writes (engines/run/rows.py),
    and it builds the same tree."""
    clause = _resolved(text)
    assume(isinstance(clause, RowClause))
    assert isinstance(clause, RowClause)
    written = rows.duckdb_sql(LazyTree.of(clause.predicate), TYPES)  # kept by the built tree's key
    assert written == rows._lowered_sql(clause.predicate, TYPES)
    back = pickle.loads(pickle.dumps(clause))
    tree = held_tree(back)
    assert tree is not None and not tree.built and tree.key == LazyTree.of(clause.predicate).key
    # served by key (without building, where the store has room: tests/contract/test_cache.py holds that)
    assert rows.duckdb_sql(tree, TYPES) == written
    assert back.predicate == clause.predicate
