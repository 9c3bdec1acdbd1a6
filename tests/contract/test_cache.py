"""The on-disk cache of parsed clauses: used across processes, never trusted blindly."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OHLCV_CONTRACT, ROOT

# Loads the seed contract in a fresh interpreter and says whether the clause parser had to be
# built, and what the contract compiled to (to compare a cached load with a parsed one).
PROBE = """
import json, sys
from tscontract.contract import grammar
from tscontract.contract.loader import load_contract
from tscontract.plan.checks import build_plan
contract = load_contract(sys.argv[1])
plan = build_plan(contract, None, None)
print(json.dumps({
    "built_parser": grammar._parser.cache_info().currsize == 1,
    "read_yaml": "ruamel.yaml" in sys.modules,
    "lark": "lark" in sys.modules,
    "checks": [[c.id, c.kind, c.clause, repr(c.predicate)] for c in plan.checks],
}))
"""


def probe(cache: str | None, contract: Path = OHLCV_CONTRACT, **env_vars: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TSCONTRACT_CACHE_DIR"} | env_vars
    if cache is not None:
        env["TSCONTRACT_CACHE_DIR"] = cache
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(contract)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)


def clause_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("clauses-*/*.pickle"))


def contract_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("contract-read/*.pickle"))


def test_second_process_reads_parsed_clauses_from_the_cache(tmp_path):
    first = probe(str(tmp_path))
    assert first["built_parser"]
    assert clause_files(tmp_path)
    [kept] = contract_files(tmp_path)
    kept.unlink()  # the contract read anew: its clauses come from their own cache
    second = probe(str(tmp_path))
    assert not second["built_parser"]  # every clause came from the cache
    assert second["checks"] == first["checks"]
    assert (tmp_path / "pint").is_dir()  # pint's definition cache sits beside it
    assert len(list(tmp_path.glob("lark-*.tables"))) == 1  # and the parser's tables, kept by lark


def test_damaged_cache_is_rebuilt(tmp_path):
    probe(str(tmp_path))
    parsed = probe(str(tmp_path))["checks"]
    [tables] = tmp_path.glob("lark-*.tables")
    for path in [*clause_files(tmp_path), *contract_files(tmp_path), tables]:
        path.write_bytes(b"not a pickle")
    again = probe(str(tmp_path))
    assert again["built_parser"] and again["checks"] == parsed
    assert tables.read_bytes() != b"not a pickle"  # the tables built anew and kept
    assert not probe(str(tmp_path))["built_parser"]  # written afresh on exit


def test_a_contract_read_once_is_read_back_without_yaml_or_parser(tmp_path):
    """A contract file that read without error is kept (contract.cache.read_once), keyed by its path and
    text: the next process imports neither ruamel.yaml nor lark and compiles to the same checks; an edit
    is read anew, a contract with an error is never kept, and each path has one file."""
    cache = tmp_path / "cache"
    contract = tmp_path / "contract.yaml"
    seed = OHLCV_CONTRACT.read_text()
    contract.write_text(seed)
    first = probe(str(cache), contract)
    assert first["read_yaml"] and first["lark"]
    second = probe(str(cache), contract)
    assert not second["read_yaml"] and not second["lark"] and second["checks"] == first["checks"]
    contract.write_text(seed.replace("  - volume >= 0\n", "  - volume >= 7\n"))
    edited = probe(str(cache), contract)
    assert edited["read_yaml"] and ["invariants[2]", "invariant", "volume >= 7"] in [c[:3] for c in edited["checks"]]
    assert not probe(str(cache), contract)["read_yaml"] and len(contract_files(cache)) == 1
    contract.write_text(seed.replace("  - volume >= 0\n", "  - volume >= nothing\n"))
    for _ in range(2):  # the error each time: nothing kept for it
        done = subprocess.run(
            [sys.executable, "-m", "tscontract", "lint", str(contract)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "TSCONTRACT_CACHE_DIR": str(cache)},
            check=False,
        )
        assert done.returncode == 2 and "unknown column 'nothing'" in done.stderr, done.stderr
    moved = tmp_path / "elsewhere.yaml"
    moved.write_text(seed)
    assert probe(str(cache), moved)["read_yaml"]  # another path: its positions name that file
    assert len(contract_files(cache)) <= 2


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="XDG_CACHE_HOME is the Linux and BSD default")
def test_default_directory_and_off(tmp_path):
    home = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert probe(None, **home)["built_parser"]
    assert clause_files(tmp_path / "xdg" / "tscontract")
    assert not probe(None, **home)["built_parser"]
    elsewhere = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "xdg2")}
    assert probe("off", **elsewhere)["built_parser"]
    assert probe("off", **elsewhere)["built_parser"]
    assert not (tmp_path / "home").exists() and not (tmp_path / "xdg2").exists()


def test_a_process_reads_the_files_of_its_own_clauses_and_each_file_stays_bounded(tmp_path, monkeypatch):
    """20,000 generated clauses in one file cost every later command 1.5 s to read: trees are spread over
    files by a digest of their text, a process opens only the files of the clauses it parses, and a full
    file forgets its oldest trees."""
    from tscontract.contract import grammar

    monkeypatch.setenv("TSCONTRACT_CACHE_DIR", str(tmp_path))
    writer = grammar._TreeCache()
    tree = grammar.parse("invariant", "volume >= 0")
    texts = [f"volume >= {n}" for n in range(writer.SHARDS * writer.PER_SHARD + 500)]
    for text in texts:
        writer.put("invariant", text, tree)
    writer.save()
    files = clause_files(tmp_path)
    assert len(files) == writer.SHARDS
    sizes = [len(pickle.loads(f.read_bytes())) for f in files]
    assert max(sizes) == writer.PER_SHARD and sum(sizes) <= writer.SHARDS * writer.PER_SHARD < len(texts)
    reader = grammar._TreeCache()
    assert reader.get("invariant", texts[-1]) is not None  # the newest are kept
    assert len(reader.shards) == 1  # one file read for one clause
    assert sum(reader.get("invariant", text) is not None for text in texts[:300]) < 300  # some oldest forgotten


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="ownership and modes are POSIX")
def test_a_cache_directory_others_can_write_is_not_read(tmp_path):
    """The cache holds pickles, which run code when read: a directory another user could write (a shared
    /tmp directory, a group-writable one) is not used, and the command says so once on stderr."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "contract-read").mkdir()
    planted = shared / "contract-read" / "00.pickle"
    planted.write_bytes(b"not read")
    env = {**os.environ, "TSCONTRACT_CACHE_DIR": str(shared)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(OHLCV_CONTRACT)], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["built_parser"]  # nothing from the cache
    assert done.stderr.count("can be written by other users: not used") == 1, done.stderr
    assert sorted(p.name for p in shared.rglob("*")) == ["00.pickle", "contract-read"]  # nothing written
    shared.chmod(0o700)
    assert probe(str(shared))["read_yaml"] and not probe(str(shared))["read_yaml"]  # its own: used again


# Each row clause of the seed contract as DuckDB SQL, and whether it was written (lowered) in this process.
SQL_PROBE = """
import json, sys
from tscontract.contract.loader import load_contract
from tscontract.contract.trees import held_tree
from tscontract.engines.run import rows
written = []
lowered = rows._lowered_sql
rows._lowered_sql = lambda *a: written.append(1) or lowered(*a)
contract = load_contract(sys.argv[1])
types = {name: spec.type for name, spec in contract.fields.items()}
sql = [rows.duckdb_sql(held_tree(clause), types) for clause in contract.invariants]
loaded = {"dialect": "sqlglot.dialects.duckdb" in sys.modules, "sqlglot": "sqlglot" in sys.modules}
print(json.dumps({"sql": sql, "written": len(written), **loaded}))
"""


def test_each_clause_sql_is_written_once_and_read_back_as_written(tmp_path):
    """A clause's DuckDB SQL (lowered, sql/semantics.py) is kept by its tree's key (contract/trees.py) and the
    contract's types: the next process reads it back, the same text, building no tree and loading no sqlglot."""

    def run() -> dict:
        env = {**os.environ, "TSCONTRACT_CACHE_DIR": str(tmp_path)}
        done = subprocess.run(
            [sys.executable, "-c", SQL_PROBE, str(OHLCV_CONTRACT)], capture_output=True, text=True, env=env, cwd=ROOT
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first, second = run(), run()
    assert first["written"] == len(first["sql"]) == 4 and first["dialect"]
    assert second["written"] == 0 and not second["dialect"] and second["sql"] == first["sql"]
    assert first["sqlglot"] and not second["sqlglot"]  # the cached contract's trees stayed unbuilt
    for path in tmp_path.glob("duckdb-sql-*/*.pickle"):
        path.write_bytes(b"damaged")
    assert run() == first  # written again, the same


def test_a_group_may_write_the_cache_only_when_it_is_the_users_own():
    """Where every user has a private group (Debian, Ubuntu: umask 002), directories are group-writable and
    still private: the cache is used. A group with another member, as a primary or a listed one, makes a
    group-writable directory another user's to write; an empty group is a setgid program's."""
    from tscontract.contract.cache import sole_member

    me = (1000, "ana")
    assert sole_member(me, primaries=[(1000, "ana")], listed=[])  # a user private group
    assert sole_member(me, primaries=[], listed=["ana"])
    assert not sole_member(me, primaries=[(1000, "ana"), (1001, "bob")], listed=[])  # 'users' as primary group
    assert not sole_member(me, primaries=[(1000, "ana")], listed=["bob"])
    assert not sole_member(me, primaries=[], listed=[])


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="ownership and modes are POSIX")
def test_a_group_writable_cache_directory_is_read_as_the_system_says_its_group_is_held(tmp_path):
    import grp
    import pwd

    from tscontract.contract.cache import sole_member

    me = pwd.getpwuid(os.getuid())
    primaries = [(p.pw_uid, p.pw_name) for p in pwd.getpwall() if p.pw_gid == os.getgid()]
    private = sole_member((me.pw_uid, me.pw_name), primaries, list(grp.getgrgid(os.getgid()).gr_mem))
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o770)
    os.chown(cache, os.getuid(), os.getgid())
    probe(str(cache))
    assert probe(str(cache))["read_yaml"] is not private  # read back from the cache only where private


@pytest.mark.parametrize("enabled", [True, False], ids=["collector on", "collector off"])
def test_reading_a_cached_file_leaves_the_callers_collector_as_it_was(tmp_path, enabled):
    """The collector is paused while a pickle loads (a catalog is thousands of objects), then put back."""
    import gc

    from tscontract.contract.cache import read_pickle, write_pickle

    write_pickle(tmp_path / "x.pickle", {"series": [{"id": i} for i in range(1000)]})
    (tmp_path / "bad.pickle").write_bytes(b"damaged")
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert len(read_pickle(tmp_path / "x.pickle")["series"]) == 1000 and gc.isenabled() is enabled
        assert read_pickle(tmp_path / "bad.pickle") is None and gc.isenabled() is enabled
        assert read_pickle(tmp_path / "none.pickle") is None and gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
