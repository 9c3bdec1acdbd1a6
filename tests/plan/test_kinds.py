"""Every check kind is built by some contract, and every engine run and export answers for each check.

A plan's checks carry a :class:`CheckKind`; a kind the enum does not name cannot be built. The
plans below (the worked examples with their catalogs and profiled bounds, the trades contract with
its unique field, row count, SQL check and series pattern, the step contract) hold every kind
between them, so a kind added to the enum without a contract that builds it fails here first. Each
check then gets a verdict from DuckDB and, from each of the nine exports, either a place in the
artifact or a named reason: never an exporter's catch-all for a kind it did not expect.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tests.engines.test_rules import trades_contract, trades_csv
from tests.engines.test_step import CONTRACT as STEP_CONTRACT
from tests.engines.test_step import readings
from tests.interop.test_rules_export import SERIES
from tscontract import load_catalog, load_contract
from tscontract.engines import validate
from tscontract.engines.duckdb import profile
from tscontract.interop.exports import FORMATS, export_plan
from tscontract.plan.checks import Check, CheckPlan, build_plan
from tscontract.plan.kinds import CheckKind

# what an exporter says of a kind it has no branch for: a new kind must get its own answer
CATCH_ALLS = (
    "no pandera translation for",
    "no expectation for",
    "no dbt test expresses a",
    "no SodaCL check expresses a",
)


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


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_places_or_names_each_check(tmp_path: Path, fmt: str) -> None:
    for plan, _ in plans(tmp_path):
        result = export_plan(fmt, plan)
        reasons = {n.check_id: n.reason for n in result.not_exported}
        for check in plan.checks:
            assert (check.id in result.exported) != (check.id in reasons), (fmt, check.id)
            reason = reasons.get(check.id, "")
            assert not any(reason.startswith(c) for c in CATCH_ALLS), (fmt, check.kind, reason)


def test_duckdb_gives_every_check_a_verdict(tmp_path: Path) -> None:
    for plan, data in plans(tmp_path):
        report = validate(plan.contract, data, catalog=plan.catalog, bounds=plan.bounds, now=NOW)
        for check in plan.checks:
            result = report.check(check.id)
            assert result.status in ("passed", "failed", "skipped"), (check.kind, result.status, result.message)
