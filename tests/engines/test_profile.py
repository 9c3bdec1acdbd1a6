"""History-derived plausibility bounds catch scale shifts the unit column does not show."""

from __future__ import annotations

import csv
import math
from decimal import Decimal

from tests.conftest import run_cli, write
from tests.engines.conftest import NOW, OHLCV, SENSOR
from tscontract import load_contract, validate
from tscontract.engines.profile import profile
from tscontract.plan.bounds import load_bounds, save_bounds


def test_profile_writes_quantiles_per_series(tmp_path):
    bounds = profile(load_contract(OHLCV / "contract.yaml"), [OHLCV / "data" / "good.csv"])
    assert set(bounds.fields) == {"open", "high", "low", "close", "volume"}
    volume = bounds.fields["volume"]["AAPL"]
    # the nearest-rank quantiles of the file's AAPL volumes, computed here from the CSV text
    with (OHLCV / "data" / "good.csv").open(encoding="utf-8") as handle:
        values = sorted(Decimal(r["volume"]) for r in csv.DictReader(handle) if r["symbol"] == "AAPL")
    n = len(values)
    rank = [values[math.ceil(q * n) - 1] for q in (Decimal("0.01"), Decimal("0.5"), Decimal("0.99"))]
    assert (volume.count, volume.p01, volume.p50, volume.p99) == (391, *rank)
    assert (volume.p01, volume.p50, volume.p99) == (Decimal("4761"), Decimal("24825"), Decimal("44475"))
    assert volume.median_abs == volume.p50  # volumes are positive
    path = tmp_path / "bounds.yaml"
    save_bounds(bounds, path)
    assert "series_column: symbol" in path.read_text()
    assert load_bounds(path).fields["volume"]["AAPL"] == volume


def test_shares_to_lots_is_caught_only_by_history(tmp_path):
    out = tmp_path / "bounds.yaml"
    made = run_cli("profile", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "--out", out)
    assert made.returncode == 0, made.stderr
    without = validate(
        OHLCV / "contract.yaml", OHLCV / "data" / "bad_lots.csv", catalog=OHLCV / "catalog.yaml", now=NOW
    )
    assert without.passed  # every clause of the contract holds: lots are valid decimals >= 0
    report = validate(
        OHLCV / "contract.yaml",
        OHLCV / "data" / "bad_lots.csv",
        catalog=OHLCV / "catalog.yaml",
        now=NOW,
        bounds=load_bounds(out),
    )
    scale = report.check("plausibility.volume.scale")
    assert scale.status == "failed" and not report.passed
    assert {e["symbol"] for e in scale.examples} == {"AAPL", "MSFT"}
    assert all(abs(e["ratio"] - 0.01) < 0.001 for e in scale.examples)
    assert report.check("plausibility.close.scale").status == "passed"
    cli = run_cli(
        "validate",
        OHLCV / "contract.yaml",
        OHLCV / "data" / "bad_lots.csv",
        "--catalog",
        OHLCV / "catalog.yaml",
        "--bounds",
        out,
        "--now",
        "2026-11-30T21:05:00Z",
    )
    assert cli.returncode == 1 and "unit or scale change" in cli.stdout


def test_kpa_labelled_bar_is_caught_by_scale_and_plausibility(tmp_path):
    history = SENSOR / "data" / "good.csv"
    bounds = profile(load_contract(SENSOR / "contract.yaml"), [history])
    # upstream switched to kPa but kept writing 'bar' in the unit column
    text = (SENSOR / "data" / "bad_kpa.csv").read_text().replace(",kPa,", ",bar,")
    # and the catalog's hard bounds are wide enough not to notice
    catalog = (SENSOR / "catalog.yaml").read_text().replace("hard_bounds: [0, 60]", "hard_bounds: [0, 6000]")
    report = validate(
        SENSOR / "contract.yaml",
        write(tmp_path, text, "d.csv"),
        catalog=write(tmp_path, catalog, "cat.yaml"),
        now=NOW,
        bounds=bounds,
    )
    failing = {c.id for c in report.failed}
    assert failing == {"plausibility.value", "plausibility.value.scale"}
    assert report.check("plausibility.value").severity == "warning"
    scale = report.check("plausibility.value.scale")
    assert scale.examples[0]["series_id"] == "P-101.discharge_pressure" and scale.examples[0]["ratio"] > 50
    assert report.check("plausibility.value").failed_rows == 36


def test_bounds_must_fit_the_contract(tmp_path):
    bounds = profile(load_contract(SENSOR / "contract.yaml"), [SENSOR / "data" / "good.csv"], margin=Decimal(1))
    path = tmp_path / "b.yaml"
    save_bounds(bounds, path)
    result = run_cli("validate", OHLCV / "contract.yaml", OHLCV / "data" / "good.csv", "--bounds", path)
    assert result.returncode == 2 and "the bounds were profiled for plant_sensor_reading" in result.stderr
