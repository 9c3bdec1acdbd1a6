"""The fixed cost of a fresh process: what ``import tscontract``, ``--help`` and ``validate`` import.

pint (with numpy), pandas, pyarrow and exchange-calendars cost about a second to import
together; a run whose answers are already in the cache (unit verdicts, catalogs, exchange
sessions) imports none of them, and the answers it reads back are the ones it computed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import EXAMPLES, ROOT

HEAVY = {"pint", "numpy", "pandas", "pyarrow", "exchange_calendars", "pyspark"}
READER = {"sqlglot", "pydantic", "lark", "duckdb", "ruamel"}  # the contract reader and the engine

# Runs ``code`` and prints, at exit, the top-level modules it imported (also after sys.exit).
PRELUDE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES " + json.dumps(sorted({m.split('.')[0] for m in sys.modules}))))
"""


def run(code: str, cache: Path | str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {**os.environ, "TSCONTRACT_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, cwd=ROOT, env=env, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    assert lines, done.stderr
    return done, set(json.loads(lines[-1].removeprefix("MODULES ")))


def cli(*args: str) -> str:
    return f"sys.argv = ['tscontract', *{list(args)!r}]\nfrom tscontract.cli import main\nmain()"


def test_import_tscontract_is_light_and_its_names_still_resolve(tmp_path):
    _, modules = run("import tscontract", tmp_path)
    assert modules.isdisjoint(HEAVY | READER), sorted(modules & (HEAVY | READER))
    done, _ = run(
        "import tscontract\n"
        "from tscontract import validate, Catalog, ContractError\n"
        "print(tscontract.load_contract.__module__, validate.__module__, Catalog.__name__, ContractError.__name__)\n"
        "print('validate' in dir(tscontract))\n"
        "try:\n    tscontract.no_such_name\nexcept AttributeError as exc:\n    print(exc)",
        tmp_path,
    )
    assert done.stdout.splitlines()[:3] == [
        "tscontract.contract.loader tscontract.engines Catalog ContractError",
        "True",
        "module 'tscontract' has no attribute 'no_such_name'",
    ]


def test_help_imports_neither_engine_nor_contract_reader(tmp_path):
    done, modules = run(cli("--help"), tmp_path)
    assert "validate" in done.stdout
    assert modules.isdisjoint(HEAVY | {"sqlglot", "duckdb", "lark"}), sorted(modules & (HEAVY | READER))


def good_example() -> list[str]:
    """``validate``'s arguments for the example's good file with its catalog, quiet."""
    ohlcv = EXAMPLES / "ohlcv_1m"
    return [str(ohlcv / "contract.yaml"), str(ohlcv / "data" / "good.csv"), "-c", str(ohlcv / "catalog.yaml"), "-q"]


def test_validate_with_a_warm_cache_imports_no_heavy_library(tmp_path):
    command = cli("validate", *good_example())
    cold, cold_modules = run(command, tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert {"pint", "exchange_calendars"} <= cold_modules  # the first run does compute the answers
    warm, warm_modules = run(command, tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert warm_modules.isdisjoint(HEAVY), sorted(warm_modules & HEAVY)
    [report] = [line for line in cold.stdout.splitlines() if line.startswith("validate ")]
    assert "781 rows from" in report and report.endswith("38 checks passed")
    assert report in warm.stdout.splitlines()


# every module a run imported (also after sys.exit)
ALL_PRELUDE = """
import atexit, json, sys
atexit.register(lambda: print("ALL " + json.dumps(sorted(sys.modules))))
"""
# only the engine that runs is imported: no other engine, nor the other engines' SQL dialects
NOT_FOR_DUCKDB = (
    "tscontract.engines.postgres",
    "tscontract.engines.spark",
    "tscontract.engines.chdb",
    "tscontract.sql.dialects",
)
# no exporter, importer, gate, registry, contract history nor HTML report for a validation
NOT_FOR_VALIDATE = (
    "tscontract.interop",
    "tscontract.gate",
    "tscontract.registry",
    "tscontract.evolution",
    "tscontract.report.html",
)
# other engines' drivers, the registry's server, Avro, the table formats: never for a DuckDB validation
NEVER_FOR_VALIDATE = {"psycopg", "pyspark", "chdb", "jinja2", "starlette", "uvicorn", "fastavro", "pyiceberg", "polars"}
# sqlglot's packages that hold one module per dialect (the dialect, its parser, generator and types)
PER_DIALECT = ("sqlglot.dialects.", "sqlglot.parsers.", "sqlglot.generators.", "sqlglot.typing.")


def all_modules(code: str, cache: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done, _ = run(ALL_PRELUDE + code, cache)
    [line] = [line for line in done.stdout.splitlines() if line.startswith("ALL ")]
    return done, set(json.loads(line.removeprefix("ALL ")))


@pytest.mark.parametrize(
    ("warm", "fmt"), [(False, "text"), (True, "text"), (True, "json")], ids=["cold cache", "warm cache", "json"]
)
def test_validate_on_duckdb_imports_only_what_it_runs(tmp_path, warm, fmt):
    ohlcv = EXAMPLES / "ohlcv_1m"
    args = [str(ohlcv / "contract.yaml"), str(ohlcv / "data" / "bad.csv"), "-c", str(ohlcv / "catalog.yaml")]
    command = cli(
        "validate", *args, "--now", "2026-11-30T21:05:00Z", "--format", fmt, *(["-q"] if fmt == "text" else [])
    )
    if warm:
        run(command, tmp_path)
    done, modules = all_modules(command, tmp_path)
    assert done.returncode == 1, done.stderr  # bad.csv fails: every check ran, failures rendered
    assert ('"passed": false' if fmt == "json" else "13 of 38 checks failed") in done.stdout
    assert "tscontract.engines.duckdb" in modules and "tscontract.engines.run.time" in modules
    loaded = sorted(m for m in modules if m.startswith(NOT_FOR_DUCKDB + NOT_FOR_VALIDATE))
    assert not loaded, loaded
    dialects = {m.split(".")[2] for m in modules if m.startswith(PER_DIALECT)} - {"dialect", "base"}
    assert dialects == (set() if warm else {"duckdb"})  # warm: each clause's DuckDB SQL comes from the cache
    # warm: the clauses' trees stay unbuilt (contract/trees.py), their SQL found by key: no sqlglot at all
    assert ("sqlglot" in modules) is not warm
    top = {m.split(".")[0] for m in modules}
    assert top.isdisjoint(NEVER_FOR_VALIDATE | (HEAVY if warm else set())), sorted(top & (NEVER_FOR_VALIDATE | HEAVY))
    assert ("rich" in top) is (fmt == "text")  # a report in JSON is written without rich
    # contract and catalog come back from the cache: no YAML reader, no clause parser
    readers = sorted(m for m in modules if m.split(".")[0] == "lark" or m.startswith("ruamel.yaml"))
    assert bool(readers) is not warm, readers


# Prints, at exit, the pydantic models of tscontract whose validator was built, and how many there are.
BUILT_PRELUDE = """
import atexit, json, sys
def built():
    from pydantic import BaseModel
    ours, todo = [], [BaseModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("tscontract."):
                ours.append(sub)
    done = sorted(c.__name__ for c in ours if c.__pydantic_complete__)
    print("BUILT " + json.dumps([done, len(ours)]))
atexit.register(built)
"""


def built_models(code: str, cache: Path) -> tuple[subprocess.CompletedProcess[str], list[str], int]:
    done, _ = run(BUILT_PRELUDE + code, cache)
    [line] = [line for line in done.stdout.splitlines() if line.startswith("BUILT ")]
    built, models = json.loads(line.removeprefix("BUILT "))
    return done, built, models


def test_a_model_builds_its_validator_when_first_used_not_at_import(tmp_path):
    """pydantic builds a model's validator at class creation unless told to defer it (``defer_build``):
    for tscontract's models that was a quarter of a validation's start-up. Importing the engine builds
    none; a validation builds those of the documents it reads (contract, fields, catalog, CSV dialect),
    and a warm one reads contract and catalog back from the cache, building only the CSV dialect's."""
    done, built, models = built_models("import tscontract.engines.duckdb\nfrom tscontract import validate", tmp_path)
    assert done.returncode == 0, done.stderr
    assert models > 20 and built == [], built
    ohlcv = EXAMPLES / "ohlcv_1m"
    args = good_example()
    done, built, _ = built_models(cli("validate", *args), tmp_path)
    assert done.returncode == 0, done.stderr
    assert built == ["Catalog", "Contract", "CsvDialect", "FieldSpec"]
    done, built, _ = built_models(cli("validate", *args), tmp_path)  # contract and catalog from the cache
    assert done.returncode == 0, done.stderr
    assert built == ["CsvDialect"]
    parquet = tmp_path / "good.parquet"
    duckdb.sql(f"COPY (FROM read_csv('{ohlcv / 'data' / 'good.csv'}')) TO '{parquet}'")
    args[1] = str(parquet)
    done, built, _ = built_models(cli("validate", *args), tmp_path)  # no CSV: no dialect either
    assert done.returncode in (0, 1) and "781 rows from" in done.stdout, done.stderr
    assert built == []


# an export loads its own exporter (and the helpers it builds on), never an engine, importer, gate or registry
NOT_FOR_EXPORT = ("tscontract.engines", "tscontract.interop.imports", "tscontract.gate", "tscontract.registry")


@pytest.mark.parametrize(("fmt", "helpers"), [("avro", set()), ("gx", set()), ("pandera", {"cel", "pandera_runtime"})])
def test_an_export_imports_its_own_exporter_only(tmp_path, fmt, helpers):
    ohlcv = EXAMPLES / "ohlcv_1m"
    args = [fmt, str(ohlcv / "contract.yaml"), "-c", str(ohlcv / "catalog.yaml"), "-o", str(tmp_path / "out")]
    run(cli("export", *args), tmp_path / "cache")  # the unit verdicts cached: pint stays out of the second run
    done, modules = all_modules(cli("export", *args), tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "out").iterdir())
    exporters = {
        m.removeprefix("tscontract.interop.exports.") for m in modules if m.startswith("tscontract.interop.exports.")
    }
    assert exporters == {fmt, "_records", *helpers}
    loaded = sorted(m for m in modules if m.startswith(NOT_FOR_EXPORT))
    assert not loaded, loaded
    assert {m.split(".")[0] for m in modules}.isdisjoint(NEVER_FOR_VALIDATE | HEAVY)


UNITS_PROBE = """
from tscontract.contract.units import UnitDefinition, UnitError, check_unit, dimensionality, exact_affine
from tscontract.contract.units import same_unit, unit_in_dimension
declared = (UnitDefinition("index_point", "index_level"),)
answers = [
    check_unit("m**3/h"),
    dimensionality("[mass] / [length] ** 3"),
    same_unit("kPa", "kilopascal"),
    same_unit("kPa", "bar"),
    unit_in_dimension("degC", "temperature"),
    [str(x) for x in exact_affine("degF", "degC")],
    check_unit("index_point", declared),
]
for bad in ("furlongz", "kPa)"):
    try:
        check_unit(bad)
    except UnitError as exc:
        answers.append([str(exc), exc.offset])
print("ANSWERS " + json.dumps(answers))
"""


def answers(done: subprocess.CompletedProcess[str]) -> list:
    [line] = [line for line in done.stdout.splitlines() if line.startswith("ANSWERS ")]
    return json.loads(line.removeprefix("ANSWERS "))


def test_unit_verdicts_come_back_from_the_cache_without_pint(tmp_path):
    first, first_modules = run(UNITS_PROBE, tmp_path)
    assert "pint" in first_modules
    expected = answers(first)
    assert expected[2:6] == [True, False, True, ["5/9", "-160/9"]]
    assert expected[7][0].startswith("unknown unit 'furlongz'")
    assert expected[8] == ["unit 'kPa)': unbalanced parentheses: ')' closes nothing", 3]
    second, second_modules = run(UNITS_PROBE, tmp_path)
    assert "pint" not in second_modules
    assert answers(second) == expected
    for path in tmp_path.glob("units-*.pickle"):
        path.write_bytes(b"damaged")
    third, third_modules = run(UNITS_PROBE, tmp_path)
    assert "pint" in third_modules and answers(third) == expected  # rebuilt, same answers


CATALOG_PROBE = """
import tscontract.contract.catalog as catalog
parsed = []
original = catalog.load_located
catalog.load_located = lambda *args: parsed.append(1) or original(*args)
try:
    found = catalog.load_catalog(sys.argv[1])
    print("CATALOG " + json.dumps([len(parsed), found.model_dump(mode="json")]))
except catalog.CatalogError as exc:
    print("CATALOG " + json.dumps([len(parsed), str(exc)]))
"""


def big_catalog(n: int, unit: str = "kPa") -> str:
    lines = ["catalog: plant_sensor", "series:"]
    for i in range(n):
        lines += [
            f"  PT-{i:04d}:",
            f"    unit: {unit}",
            "    hard_bounds: [0, 1000.5]",
            "    device_zone: Europe/Berlin",
            "    calibrations:",
            f"      - {{id: cal-{i}, valid_from: '2026-03-29T01:00:00Z'}}",
        ]
    return "\n".join(lines) + "\n"


def load(path: Path, cache: Path) -> list:
    done, _ = run(f"sys.argv = ['', {str(path)!r}]\n" + CATALOG_PROBE, cache)
    [line] = [line for line in done.stdout.splitlines() if line.startswith("CATALOG ")]
    return json.loads(line.removeprefix("CATALOG "))


def test_a_large_catalog_is_read_once_and_an_edit_is_not_served_stale(tmp_path):
    cache, path = tmp_path / "cache", tmp_path / "catalog.yaml"
    path.write_text(big_catalog(60))
    assert len(path.read_text()) > 4096
    parsed_calls, first = load(path, cache)
    assert parsed_calls == 1 and first["series"]["PT-0059"]["hard_bounds"] == ["0", "1000.5"]
    assert load(path, cache) == [0, first]  # from the cache: the YAML is not read again
    path.write_text(big_catalog(60).replace("1000.5", "999"))
    parsed_calls, edited = load(path, cache)
    assert parsed_calls == 1 and edited["series"]["PT-0059"]["hard_bounds"] == ["0", "999"]


@pytest.mark.parametrize("unit", ["kPaa", "kPa)"])
def test_a_large_catalog_with_an_error_fails_every_time(tmp_path, unit):
    cache, path = tmp_path / "cache", tmp_path / "catalog.yaml"
    path.write_text(big_catalog(60, unit=unit))
    first = load(path, cache)
    assert first[0] == 1 and "catalog.yaml" in first[1] and "series.PT-0000.unit" in first[1]
    assert load(path, cache) == first  # never cached: read and refused again, same message
    assert not list(cache.glob("catalogs/*.pickle"))


def test_a_command_freezes_what_is_alive_before_the_interpreter_tears_down(tmp_path):
    """The teardown's collections walked every object of sqlglot, pydantic and the run (60-120 ms a command):
    the command line freezes them after its own exit handlers (the caches written), so the collections skip
    them. An exit handler registered before ``main`` runs after that freeze and sees it."""
    probe = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('FROZEN', gc.get_freeze_count() > 10_000, flush=True))\n"
        + cli("validate", *good_example())
    )
    done, _ = run(probe, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "38 checks passed" in done.stdout
    assert "FROZEN True" in done.stdout.splitlines()
    library = "import atexit, gc\natexit.register(lambda: print('FROZEN', gc.get_freeze_count()))\nimport tscontract"
    done, _ = run(library, tmp_path)
    assert "FROZEN 0" in done.stdout.splitlines()  # the library never freezes its caller's objects
