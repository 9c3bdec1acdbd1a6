"""Every check kind is built by some contract, and every engine run and export answers for each check.

A plan's checks carry a :class:`CheckKind`; a kind the enum does not name cannot be built. The
plans below (the worked examples with their catalogs and profiled bounds, the trades contract with
its unique field, row count, SQL check and series pattern, the step contract) hold every kind
between them, so a kind added to the enum without a contract that builds it fails here first. Each
check then gets a verdict from DuckDB and, from each of the nine exports, either a place in the
artifact or a named reason.

Each engine and each export declares, per kind, that it handles it (``HANDLERS``) or why it cannot
(``UNSUPPORTED``); together they name every kind, and what they declare is what they do: a kind
added to the enum fails here, naming each engine and export that has not said what it does with it.
Each check's parameters are the one class ``PARAMS`` names for its kind (plan/params.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tests.engines.test_rules import trades_contract, trades_csv
from tests.engines.test_step import CONTRACT as STEP_CONTRACT
from tests.engines.test_step import readings
from tests.interop.test_rules_export import SERIES
from tscontract import load_catalog, load_contract
from tscontract.engines import ENGINES, engine_class, validate
from tscontract.engines.profile import profile
from tscontract.interop.exports import EXPORTERS, FORMATS, export_plan
from tscontract.plan.checks import Check, CheckPlan, build_plan
from tscontract.plan.kinds import CheckKind
from tscontract.plan.params import PARAMS, ClauseParams, PatternParams, StepParams, TypeParams


def declared(name: str) -> Any:
    """The module of an export or the class of an engine: what holds its HANDLERS and UNSUPPORTED."""
    return import_module(EXPORTERS[name]) if name in EXPORTERS else engine_class(name)


def plans(tmp_path: Path) -> list[tuple[CheckPlan, Path]]:
    """(plan, a data file it validates) for every contract of the module docstring."""
    out = []
    windows = "completeness: {window: 1m, expected_count: per cadence}\nfreshness: {max_age: 15m}\n"
    sensor = write(tmp_path, (SENSOR / "contract.yaml").read_text() + windows, "sensor.yaml")
    for dataset, path in ((OHLCV, OHLCV / "contract.yaml"), (SENSOR, sensor)):
        contract, catalog = load_contract(path), load_catalog(dataset / "catalog.yaml")
        data = dataset / "data" / "good.csv"
        bounds = profile(contract, data, catalog=catalog)
        out.append((build_plan(contract, catalog, bounds), data))
    out.append((build_plan(load_contract(trades_contract(tmp_path, SERIES))), trades_csv(tmp_path, [])))
    step = write(tmp_path, STEP_CONTRACT.replace("STEP", "{max_abs: 10}"), "step.yaml")
    out.append((build_plan(load_contract(step)), readings(tmp_path)))
    return out


def test_the_plans_hold_every_kind(tmp_path: Path) -> None:
    found = {check.kind for plan, _ in plans(tmp_path) for check in plan.checks}
    assert found == set(CheckKind), set(CheckKind) - found


def test_a_kind_the_enum_does_not_name_cannot_be_built() -> None:
    with pytest.raises(ValueError, match="'invarient' is not a valid CheckKind"):
        Check("x", "invarient", "invariants", "a < b", "invariants[0]", "row")  # type: ignore[arg-type]
    assert Check("x", "invariant", "invariants", "a < b", "invariants[0]", "row").kind is CheckKind.INVARIANT


def test_each_check_carries_the_parameters_of_its_kind(tmp_path: Path) -> None:
    assert set(PARAMS) == set(CheckKind)
    for plan, _ in plans(tmp_path):
        for check in plan.checks:
            assert type(check.params) is PARAMS[check.kind], check.id


def test_parameters_of_another_kind_cannot_be_built() -> None:
    with pytest.raises(TypeError, match="a type check takes TypeParams, not Params"):
        Check("x", "type", "fields", "int64", "fields.x.type", "row", ("x",))
    with pytest.raises(TypeError, match="a invariant check takes ClauseParams, not PatternParams"):
        Check("x", "invariant", "invariants", "a < b", "invariants[0]", "row", params=PatternParams("^a$"))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'dtype'"):
        TypeParams()  # type: ignore[call-arg]
    # a kind whose parameters all have defaults gets them without saying so
    check = Check("x", "invariant", "invariants", "a < b", "invariants[0]", "row")
    assert check.params == ClauseParams() and not check.params.needs_catalog and check.params.max_failing is None
    with pytest.raises(TypeError, match=r"check x \(invariant\) has ClauseParams, not StepParams"):
        check.params_of(StepParams)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_places_or_names_each_check(tmp_path: Path, fmt: str) -> None:
    for plan, _ in plans(tmp_path):
        result = export_plan(fmt, plan)
        reasons = {n.check_id: n.reason for n in result.not_exported}
        for check in plan.checks:
            assert (check.id in result.exported) != (check.id in reasons), (fmt, check.id)


@pytest.mark.parametrize("name", [*FORMATS, *ENGINES])
def test_each_export_and_engine_declares_every_kind(name: str) -> None:
    owner = declared(name)
    handled, unsupported = set(owner.HANDLERS), set(owner.UNSUPPORTED)
    assert not handled & unsupported, (name, handled & unsupported)
    assert handled | unsupported == set(CheckKind), (name, "says nothing of", set(CheckKind) - handled - unsupported)
    assert all(isinstance(k, CheckKind) for k in handled | unsupported), name
    assert all(reason.strip() for reason in owner.UNSUPPORTED.values()), name


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_does_what_it_declares(tmp_path: Path, fmt: str) -> None:
    """A handled kind is exported for some check of the plans; an unsupported one never is, and its
    declared reason is what the export says (a check may also be refused for a reason of its own)."""
    owner = declared(fmt)
    exported: Counter[CheckKind] = Counter()
    said: defaultdict[CheckKind, set[str]] = defaultdict(set)
    for plan, _ in plans(tmp_path):
        result = export_plan(fmt, plan)
        reasons = {n.check_id: n.reason for n in result.not_exported}
        for check in plan.checks:
            if check.id in result.exported:
                exported[check.kind] += 1
            else:
                said[check.kind].add(reasons[check.id])
    for kind in owner.HANDLERS:
        assert exported[kind], (fmt, kind, "declared handled but never exported", said[kind])
    for kind, reason in owner.UNSUPPORTED.items():
        assert not exported[kind], (fmt, kind, "declared unsupported but exported")
        assert reason in said[kind], (fmt, kind, said[kind])


def test_duckdb_gives_every_check_a_verdict(tmp_path: Path) -> None:
    assert not engine_class("duckdb").UNSUPPORTED
    for plan, data in plans(tmp_path):
        report = validate(plan.contract, data, catalog=plan.catalog, bounds=plan.bounds, now=NOW)
        for check in plan.checks:
            result = report.check(check.id)
            assert result.status in ("passed", "failed", "skipped"), (check.kind, result.status, result.message)
