"""Iceberg tables (pyiceberg's SQL catalog on SQLite, a local warehouse) and Delta Lake tables (deltalake)
as data: snapshot / version selection, the --from/--to window pushed down to the scan, streamed into
DuckDB in bounded memory, for validate, profile, init and ingest."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import run_cli
from tests.engines.inputs.lakehouse import (
    BROKEN,
    CONTRACT,
    DAYS,
    OPTIONS,
    ROWS,
    day_table,
    delta_table,
    iceberg_catalog,
)
from tscontract import InputError
from tscontract.cli import main
from tscontract.engines.inputs.tables import TableUrl, Window, sampled, scan, table_ref

DAY_TWO = ("--from", "2026-12-01T00:00:00Z", "--to", "2026-12-02T00:00:00Z")


@pytest.fixture(scope="module")
def iceberg_env(tmp_path_factory) -> dict[str, str]:
    return iceberg_catalog(tmp_path_factory.mktemp("iceberg"))


@pytest.fixture
def lake(iceberg_env, monkeypatch):
    for name, value in iceberg_env.items():
        monkeypatch.setenv(name, value)
    return "iceberg://lake/market.bars"


@pytest.fixture(scope="module")
def delta(tmp_path_factory) -> str:
    return f"delta://{delta_table(tmp_path_factory.mktemp('delta') / 'bars')}"


def report(done) -> dict:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def failed(found: dict) -> dict[str, int]:
    return {c["id"]: c["failed_rows"] for c in found["checks"] if c["status"] != "passed"}


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_the_whole_table_is_validated_and_the_violation_found(kind, lake, delta):
    url = lake if kind == "iceberg" else delta
    found = report(run_cli("validate", CONTRACT, url, *OPTIONS))
    assert found["rows"] == 3 * ROWS and failed(found) == BROKEN
    assert found["data"][0].startswith(url + " (") and "3 of 3 data files" in found["data"][0]


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_the_window_is_pushed_down_to_one_file_of_three(kind, lake, delta):
    url = lake if kind == "iceberg" else delta
    found = report(run_cli("validate", CONTRACT, url, *OPTIONS, *DAY_TWO))
    assert found["rows"] == ROWS and "1 of 3 data files" in found["data"][0]
    assert "bar_start in [2026-12-01T00:00:00+00:00, 2026-12-02T00:00:00+00:00)" in found["data"][0]
    assert "invariants[0]" in failed(found)  # the broken bar is in that day
    last = report(run_cli("validate", CONTRACT, url, *OPTIONS, "--from", "2026-12-02T00:00:00Z"))
    assert last["rows"] == ROWS and last["passed"] is True and "1 of 3 data files" in last["data"][0]


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_a_window_cutting_a_file_keeps_only_its_rows(kind, lake, delta):
    url = lake if kind == "iceberg" else delta
    afternoon = datetime(2026, 12, 2, 15, tzinfo=UTC)
    expected = sum(1 for t in day_table(DAYS[2])["bar_start"].to_pylist() if t >= afternoon)
    found = report(run_cli("validate", CONTRACT, url, *OPTIONS, "--from", "2026-12-02T15:00:00Z"))
    assert 0 < expected < ROWS and found["rows"] == expected and "1 of 3 data files" in found["data"][0]
    if kind == "delta":  # the same through the library's scan
        ref = table_ref(TableUrl(delta, Window("bar_start", afternoon, None)))
        assert ref is not None
        rows = scan(ref).reader.read_all()
        assert rows.num_rows == expected and min(rows["bar_start"].to_pylist()) == afternoon


def test_snapshots_and_versions_are_selected(lake, delta, iceberg_env):
    from pyiceberg.catalog.sql import SqlCatalog

    first = report(run_cli("validate", CONTRACT, f"{delta}@0", *OPTIONS))
    assert first["rows"] == ROWS and "(version 0; 1 of 1 data files)" in first["data"][0]
    two = report(run_cli("validate", CONTRACT, f"{delta}@1", *OPTIONS))
    assert two["rows"] == 2 * ROWS and "invariants[0]" in failed(two)
    uri, warehouse = iceberg_env["PYICEBERG_CATALOG__LAKE__URI"], iceberg_env["PYICEBERG_CATALOG__LAKE__WAREHOUSE"]
    snapshots = SqlCatalog("lake", uri=uri, warehouse=warehouse).load_table("market.bars").snapshots()
    assert len(snapshots) == 3
    found = report(run_cli("validate", CONTRACT, f"{lake}@{snapshots[0].snapshot_id}", *OPTIONS))
    assert found["rows"] == ROWS and f"snapshot {snapshots[0].snapshot_id}" in found["data"][0]


def test_profile_init_and_ingest_read_tables(lake, delta, tmp_path):
    out = tmp_path / "bounds.yaml"
    done = run_cli("profile", CONTRACT, lake, "--catalog", CONTRACT.parent / "catalog.yaml", "--out", out)
    assert done.returncode == 0 and f"profiled {3 * ROWS} rows" in done.stdout, done.stderr
    done = run_cli("init", f"{delta}@0", "--out", tmp_path / "draft.yaml")
    assert done.returncode == 0 and "[symbol, bar_start" in done.stdout, done.stderr
    store = tmp_path / "store.duckdb"
    args = ("ingest", CONTRACT, delta, "--store", store, *OPTIONS, *DAY_TWO)
    first = json.loads(run_cli(*args).stdout)
    assert first["rows_in"] == ROWS and first["published"] + first["quarantined"] == ROWS
    assert first["row_failures"]["invariants[0]"] == 1
    assert json.loads(run_cli(*args).stdout)["status"] == "duplicate"  # the same version and window
    later = json.loads(
        run_cli("ingest", CONTRACT, delta, "--store", store, *OPTIONS, "--from", f"{DAYS[2]}T00:00:00Z").stdout
    )
    assert later["status"] != "duplicate" and later["rows_in"] == ROWS


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ("iceberg://lake/market.nothing", "cannot open iceberg://lake/market.nothing"),
        ("iceberg://nowhere/market.bars", "cannot open iceberg://nowhere/market.bars"),
        ("iceberg://lake/bars", "give iceberg://CATALOG/NAMESPACE.TABLE"),
        ("iceberg://lake/market.bars@latest", "'@' takes a snapshot id"),
        ("iceberg://lake/market.bars@12345", "no snapshot 12345"),
        ("delta://no/such/table", "cannot open delta://no/such/table"),
    ],
)
def test_a_table_that_cannot_be_read_is_one_line(lake, data, said):
    done = run_cli("validate", CONTRACT, data, *OPTIONS)
    assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_version_that_does_not_exist_and_a_table_beside_files_are_one_line(delta):
    done = run_cli("validate", CONTRACT, f"{delta}@9", *OPTIONS)
    assert done.returncode == 2 and done.stderr.startswith(f"error: cannot open {delta}@9"), done.stderr
    done = run_cli("validate", CONTRACT, delta, CONTRACT.parent / "data" / "good.csv", *OPTIONS)
    assert done.returncode == 2 and "give it alone" in done.stderr


def test_the_window_needs_a_timestamp_column(delta):
    ref = table_ref(TableUrl(delta, Window("symbol", datetime(2026, 12, 2, tzinfo=UTC), None)))
    assert ref is not None
    with pytest.raises(InputError, match="column 'symbol' is string, not a timestamp"):
        scan(ref)
    ref = table_ref(TableUrl(delta, Window("nope", datetime(2026, 12, 2, tzinfo=UTC), None)))
    assert ref is not None
    with pytest.raises(InputError, match="no column 'nope'"):
        scan(ref)


def test_a_smaller_memory_limit_gives_the_same_report(tmp_path):
    """187,440 bars streamed into DuckDB, which spills beyond its limit: the report does not change."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import write_deltalake

    days = pa.concat_tables(day_table(day) for day in DAYS)
    weeks = [
        days.set_column(1, "bar_start", pc.add(days["bar_start"], pa.scalar(timedelta(weeks=k)))) for k in range(80)
    ]
    write_deltalake(str(tmp_path / "bars"), pa.concat_tables(weeks))
    args = ("validate", CONTRACT, f"delta://{tmp_path / 'bars'}", *OPTIONS)
    roomy = report(run_cli("--memory-limit", "2GiB", *args))
    tight = report(run_cli("--memory-limit", "64MB", *args))
    for found in (roomy, tight):
        found.pop("elapsed_s")
    assert tight == roomy and roomy["rows"] == 80 * 3 * ROWS


def test_spark_without_the_delta_jar_says_so_in_one_line(spark, delta, capsys):
    """The command line run in this process, on the shared session (a process of its own starts a JVM)."""
    with pytest.raises(SystemExit) as exit_code:
        main(["validate", str(CONTRACT), delta, *map(str, OPTIONS), "--engine", "spark"])
    stderr = capsys.readouterr().err
    assert exit_code.value.code == 2 and stderr.count("\n") == 1, stderr
    assert "no delta-spark jar" in stderr and "--engine duckdb" in stderr


def test_spark_finds_a_class_it_has_and_states_the_iceberg_jar_it_lacks(spark, lake):
    from tscontract.engines.spark import SparkConnection, open_spark_source
    from tscontract.engines.spark_tables import has_class

    assert has_class(spark, "org.apache.spark.sql.SparkSession")  # the look-up itself works
    assert not has_class(spark, "org.apache.iceberg.spark.SparkCatalog")
    with pytest.raises(InputError, match=r"^iceberg://lake/market.bars: .* no iceberg-spark-runtime jar"):
        open_spark_source(SparkConnection(spark), lake)


@pytest.mark.parametrize(("kind", "module"), [("iceberg", "pyiceberg.catalog"), ("delta", "deltalake")])
def test_a_missing_extra_is_one_line_naming_it(kind, module, delta):
    """The CLI run as a user without the extra installed runs it (the package's import fails)."""
    import subprocess
    import sys

    data = "iceberg://lake/market.bars" if kind == "iceberg" else delta
    program = (
        f"import sys; sys.modules[{module!r}] = None; from tscontract.cli import main; "
        f"sys.argv = ['tscontract', 'validate', {str(CONTRACT)!r}, {data!r}]; main()"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"install tscontract[{kind}]" in done.stderr


@pytest.mark.parametrize("rows", [1, 500, 781, 10_000])
def test_a_sample_reads_the_first_rows_only(delta, rows):
    (data,) = sampled([f"{delta}@1"], rows)
    assert sampled(["bars.csv"], rows) == ["bars.csv"]  # files are read whole
    ref = table_ref(data)
    assert ref is not None and ref.version == 1
    scanned = scan(ref)
    assert scanned.reader.read_all().num_rows == min(rows, 2 * ROWS)
    assert f"the first {rows:,} rows" in scanned.description
