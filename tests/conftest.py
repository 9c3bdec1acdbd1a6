"""Shared fixtures: the seed contracts beside the checkout, the examples, the CLI."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import run_forked, run_fresh

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# The two worked contracts as the repository holds them: byte-for-byte copies of the seed's
# (tests/contract/test_seed.py checks that against ../shared/seed), so every test that needs a real
# contract runs on a bare clone. Only a test taking the `seed_dir` fixture reads ../shared.
OHLCV_CONTRACT = EXAMPLES / "ohlcv_1m" / "contract.yaml"
SENSOR_CONTRACT = EXAMPLES / "plant_sensor" / "contract.yaml"

# The seed contracts, verbatim: ../shared/seed beside the checkout (.ci/run lays it there and refuses
# to run without it). A bare clone skips the tests that need it with SEED_MISSING as the reason;
# TSCONTRACT_REQUIRE_SEED=1 (set by .ci/run) turns that skip into a failure, so CI never skips them.
_SEED = ROOT.parent / "shared" / "seed"
REQUIRE_SEED = "TSCONTRACT_REQUIRE_SEED"
SEED_MISSING = (
    "../shared/seed not found beside the checkout: the seed contracts come from the project's shared "
    "directory, which CI lays beside the clone (examples/*/contract.yaml are copies)"
)


def require_seed() -> Path:
    """The seed directory; skip the calling test without it (fail instead under TSCONTRACT_REQUIRE_SEED=1)."""
    if _SEED.is_dir():
        return _SEED
    if os.environ.get(REQUIRE_SEED) == "1":
        pytest.fail(f"{SEED_MISSING}; {REQUIRE_SEED}=1 forbids skipping", pytrace=False)
    pytest.skip(SEED_MISSING)


def pytest_sessionstart(session: pytest.Session) -> None:
    # Many tests run `python -m tscontract` in a fresh process (run_cli). Where PYTHONDONTWRITEBYTECODE is
    # set, none of those keeps the bytecode it compiles, and each compiles the ~80 modules it imports again
    # (0.15 s of CPU a run): the package's bytecode is written once here instead (up-to-date files are skipped).
    import compileall

    import tscontract

    compileall.compile_dir(Path(tscontract.__file__).parent, quiet=2)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"needs_seed: reads the seed contracts from ../shared/seed; skipped without it ({REQUIRE_SEED})"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # a test taking `seed_dir` needs the seed: mark it, so `-m needs_seed` (or `-m 'not needs_seed'`) selects it
    for item in items:
        if "seed_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.needs_seed)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_seed") is not None:
        require_seed()


@pytest.fixture(scope="session")
def seed_dir() -> Path:
    """../shared/seed: the only way a test reaches the seed (marks the test `needs_seed`)."""
    return require_seed()


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real console entry point (`python -m tscontract ARGS`) in a child process: a fork of a
    server that has imported the command line (tests/cli_runner.py), or a fresh interpreter where
    TSCONTRACT_TEST_FRESH_CLI=1."""
    if os.environ.get("TSCONTRACT_TEST_FRESH_CLI") == "1":
        return run_fresh(*args, cwd=cwd)
    return run_forked(*args, cwd=cwd)


def write(tmp_path: Path, text: str, name: str = "contract.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    return None


def stop(proc: subprocess.Popen[Any], timeout: float = 15) -> None:
    """Stop a server a test started: SIGTERM, and SIGKILL if it has not exited within ``timeout``
    (a hung shutdown must fail no test by leaving a process behind, nor hang the suite)."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 (installed by .ci/run from Debian): its URL."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    assert initdb and pg_ctl, "PostgreSQL server binaries not found; .ci/run installs the postgresql package"
    # not under pytest's tmp dir: that one is private to root and the cluster runs as 'postgres'
    root = Path(tempfile.mkdtemp(prefix="tscontract-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    as_root = os.geteuid() == 0
    if as_root:  # initdb refuses to run as root: run the cluster as the postgres user
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
        os.chmod(root, 0o755)
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "tsc", "--no-sync"], check=True, capture_output=True
    )
    port = free_port()
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    url = f"postgresql://tsc@127.0.0.1:{port}/postgres"
    try:
        yield url
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster for the session (bench/postgres.py starts one the same way)."""
    with postgres_cluster() as url:
        yield url


@pytest.fixture
def postgres_db(postgres_url: str) -> str:
    """A fresh database per test."""
    import psycopg

    name = f"t{time.time_ns()}"
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}")
    return postgres_url.rsplit("/", 1)[0] + f"/{name}"


# the JVM's full JIT (C2), not the quick compiler only (-XX:TieredStopAtLevel=1, the setting until #29): a test
# process runs a hundred Spark validations or more, and C2 pays off after the first few. Measured (#29): 12
# validations of the examples' files in one JVM each, four JVMs side by side on 2 loaded cores (load 9-12):
# C1 809 s (197 s of JVM CPU), C2 with the parallel collector 509 s (187 s; 50 s of CPU cold, 7-11 s a validation
# from the 8th on, C1 still 13-17 s). spark.sql.codegen.wholeStage=false gained nothing there (C1 816 s, C2 556 s):
# the tests keep Spark's default, the path users run.
TEST_JVM = "-XX:+UseParallelGC"
# the quick compiler only, for JVMs that run a validation or two (the standalone cluster's master, worker,
# driver and executor): they end before C2 would pay off, and C2's compiler threads take the cores
QUICK_JVM = "-XX:TieredStopAtLevel=1"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One Spark session (local[2]) for every Spark test of the process: one JVM to start and warm."""
    from tscontract.engines.spark import spark_session

    warehouse = tmp_path_factory.mktemp("spark-warehouse")  # saveAsTable writes here, not into the checkout
    # 2 GiB, not 1: after some thousand queries in one JVM a wide one-pass aggregate ran out of memory
    # (AGGREGATE_OUT_OF_MEMORY) on 2 cores, twice in 40 minutes of CI
    conf = {
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.driver.extraJavaOptions": TEST_JVM,
        "spark.driver.memory": "2g",
    }
    session = spark_session("local[2]", conf)
    yield session
    session.conf.unset("spark.sql.files.maxPartitionBytes")
