"""``--spark-master spark://...``: a real standalone Spark cluster (master + worker) on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import QUICK_JVM, ROOT, free_port
from tests.engines.conftest import VALIDATE_OHLCV_BAD

pytest.importorskip("pyspark", reason="the Spark engine is part of the dev install")


def _spark_class(*args: str, log: Path) -> subprocess.Popen[bytes]:
    import pyspark

    home = Path(pyspark.__file__).parent
    # the master's and the worker's JVMs: the quick compiler only (QUICK_JVM, tests/conftest.py: short-lived JVMs)
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM,
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(home / "bin" / "spark-class"), *args], stdout=out, stderr=subprocess.STDOUT, env=env
        )


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not in {log}:\n{log.read_text(errors='replace')[-2000:]}")


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("spark-cluster")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    master = _spark_class(
        "org.apache.spark.deploy.master.Master",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--webui-port",
        str(free_port()),
        log=logs / "master.log",
    )
    worker = None
    try:
        _wait_for(logs / "master.log", "I have been elected leader", master)
        worker = _spark_class(
            "org.apache.spark.deploy.worker.Worker",
            url,
            "--host",
            "127.0.0.1",
            "--cores",
            "1",
            "--memory",
            "1g",
            "--webui-port",
            str(free_port()),
            "--work-dir",
            str(logs / "work"),
            log=logs / "worker.log",
        )
        _wait_for(logs / "worker.log", "Successfully registered with master", worker)
        yield url
    finally:
        for process in (worker, master):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


# a bound on the cluster's run, not a timing: a driver whose executor never starts waits for it for ever
HANG_S = 900


def _cli(*args: str | Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tscontract", *map(str, args)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def _finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"no report in {HANG_S} s (no executor?): {err[-2000:]}") from None
    return process.returncode, out, err


def test_validate_on_a_standalone_cluster_matches_duckdb(spark_cluster):
    embedded = _cli(*VALIDATE_OHLCV_BAD)  # DuckDB's run meanwhile: the cluster's JVMs wait on each other
    on_cluster = _cli(
        *VALIDATE_OHLCV_BAD,
        "--engine",
        "spark",
        "--spark-master",
        spark_cluster,
        "--spark-conf",
        "spark.sql.shuffle.partitions=2",
        # the driver and the executor the worker starts: cold JVMs running a few small jobs, where the
        # optimising compiler's threads only take the cores the jobs run on
        "--spark-conf",
        f"spark.driver.extraJavaOptions={QUICK_JVM}",
        "--spark-conf",
        f"spark.executor.extraJavaOptions={QUICK_JVM}",
    )
    (cluster_code, cluster_out, cluster_err), (duck_code, duck_out, _) = map(_finished, (on_cluster, embedded))
    assert cluster_code == duck_code == 1, cluster_err
    cluster_report, duck_report = json.loads(cluster_out), json.loads(duck_out)
    assert cluster_report["engine"] == "spark"
    for report in (cluster_report, duck_report):
        report.pop("engine"), report.pop("elapsed_s")
    assert cluster_report == duck_report
    assert any(c["status"] == "failed" for c in cluster_report["checks"])
