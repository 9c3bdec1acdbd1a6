"""Data files on S3-compatible object storage, read through a real S3 API server on loopback (moto's
server mode): globs, CSV / JSON lines / Parquet, validate / profile / init / ingest, credentials from the
environment and from a profile, and no credential in any message."""

from __future__ import annotations

import fnmatch
import json
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import run_cli
from tests.engines.inputs.lakehouse import (
    BROKEN,
    BROKEN_DAY,
    CATALOG,
    CONTRACT,
    DAYS,
    NOW,
    OPTIONS,
    ROWS,
    S3Server,
    aws_environment,
    boto3_client,
    day_csv,
    day_jsonl,
    day_table,
    parquet_bytes,
    s3_server,
)
from tscontract.engines.inputs.object_store import error_line, glob_regex

__all__ = ["s3_server"]  # the fixture, used by name


TOKENS = ["a", "b", "c", ".", "*", "?", "[ab]", "[!a]", "[a-b]", "[!b-c]"]


@given(st.lists(st.sampled_from(TOKENS), max_size=5).map("".join), st.text(alphabet="abc.", max_size=6))
def test_a_glob_within_one_level_matches_as_fnmatch_does(pattern, name):
    assert bool(glob_regex(pattern).fullmatch(name)) == fnmatch.fnmatchcase(name, pattern)


@given(st.lists(st.text(alphabet="ab", min_size=1, max_size=3), min_size=1, max_size=4))
def test_star_stays_in_its_level_and_double_star_crosses_levels(levels):
    key = "/".join([*levels, "part.parquet"])
    assert bool(glob_regex("*/part.parquet").fullmatch(key)) == (len(levels) == 1)
    assert glob_regex("**/*.parquet").fullmatch(key) is not None
    assert glob_regex("**/*.csv").fullmatch(key) is None


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch, tmp_path):
    """A fresh bucket holding the three days as Parquet (one object per date partition), CSV and JSON lines."""
    aws_environment(monkeypatch, tmp_path, s3_server)
    name = f"bars-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    client = boto3_client("s3", s3_server.endpoint, s3_server.key_id, s3_server.secret)
    client.create_bucket(Bucket=name)
    for day in DAYS:
        table = day_table(day)
        client.put_object(Bucket=name, Key=f"ohlcv/date={day}/part-0.parquet", Body=parquet_bytes(table))
        client.put_object(Bucket=name, Key=f"csv/{day}.csv", Body=day_csv(day).encode())
        client.put_object(Bucket=name, Key=f"jsonl/{day}.jsonl", Body=day_jsonl(day).encode())
    client.put_object(Bucket=name, Key="ohlcv/_SUCCESS", Body=b"")
    return name


def report(done) -> dict:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def failed(found: dict) -> dict[str, int]:
    return {c["id"]: c["failed_rows"] for c in found["checks"] if c["status"] != "passed"}


def test_a_glob_of_parquet_partitions_is_validated_and_the_violation_found(bucket):
    done = run_cli("validate", CONTRACT, f"s3://{bucket}/ohlcv/*/*.parquet", *OPTIONS)
    found = report(done)
    assert done.returncode == 1
    assert failed(found) == BROKEN  # on the broken day only
    assert found["rows"] == 3 * ROWS
    assert found["data"] == [f"s3://{bucket}/ohlcv/date={day}/part-0.parquet" for day in DAYS]
    example = next(c for c in found["checks"] if c["id"] == "invariants[0]")["examples"][0]
    assert example["bar_start"].startswith(BROKEN_DAY) and example["row"] == ROWS + 100


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_text_objects_are_read_as_local_text_files_are(bucket, kind):
    good = run_cli("validate", CONTRACT, f"s3://{bucket}/{kind}/{DAYS[2]}.{kind}", *OPTIONS)
    assert report(good)["passed"] is True and good.returncode == 0, good.stdout
    every = run_cli("validate", CONTRACT, f"s3://{bucket}/{kind}/*.{kind}", *OPTIONS)
    assert failed(report(every)) == BROKEN


def test_profile_init_and_ingest_read_objects_too(bucket, tmp_path):
    data = f"s3://{bucket}/ohlcv/**/*.parquet"
    out = tmp_path / "bounds.yaml"
    done = run_cli("profile", CONTRACT, data, "--catalog", CONTRACT.parent / "catalog.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    assert f"profiled {3 * ROWS} rows" in done.stdout and out.exists()
    draft = tmp_path / "draft.yaml"
    done = run_cli("init", f"s3://{bucket}/csv/{DAYS[0]}.csv", "--out", draft)
    assert done.returncode == 0, done.stderr
    assert "bar_start" in draft.read_text() and "[symbol, bar_start" in done.stdout
    store = tmp_path / "store.duckdb"
    args = ("ingest", CONTRACT, data, "--store", store, *OPTIONS)
    first = json.loads(run_cli(*args).stdout)
    for day in DAYS:  # the same bytes as local files: the same gate
        (tmp_path / f"{day}.parquet").write_bytes(parquet_bytes(day_table(day)))
    local = [tmp_path / f"{day}.parquet" for day in DAYS]
    alike = json.loads(run_cli("ingest", CONTRACT, *local, "--store", tmp_path / "local.duckdb", *OPTIONS).stdout)
    assert first["rows_in"] == 3 * ROWS and first["row_failures"] == alike["row_failures"]
    assert (first["published"], first["quarantined"]) == (alike["published"], alike["quarantined"])
    assert first["row_failures"]["invariants[0]"] == 1
    again = json.loads(run_cli(*args).stdout)
    assert again["status"] == "duplicate"  # the same objects' bytes: the batch is there once


def test_a_glob_matching_nothing_and_a_missing_object_are_one_line(bucket):
    for data, said in (
        (f"s3://{bucket}/ohlcv/*/*.csv", "no object matches"),
        (f"s3://{bucket}/ohlcv/date=2026-11-30/none.parquet", "no such object"),
        (f"s3://{bucket}/ohlcv", "a prefix: add /*.parquet"),
        (f"s3://{bucket}", "give s3://bucket/key"),
    ):
        done = run_cli("validate", CONTRACT, data, *OPTIONS)
        assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_credentials_from_a_profile_are_used(bucket, s3_server, monkeypatch, tmp_path):
    credentials = tmp_path / "credentials"
    lines = f"aws_access_key_id = {s3_server.key_id}\naws_secret_access_key = {s3_server.secret}\n"
    credentials.write_text(f"[default]\naws_access_key_id = AKIDNOBODY\naws_secret_access_key = no\n[market]\n{lines}")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_PROFILE", "market")
    done = run_cli("validate", CONTRACT, f"s3://{bucket}/ohlcv/date={DAYS[2]}/*.parquet", *OPTIONS)
    assert done.returncode == 0, done.stderr + done.stdout


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_wrong_secret_is_one_line_without_any_secret(bucket, s3_server, monkeypatch):
    wrong = "Wr0ng-" + s3_server.secret[6:]
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    done = run_cli("validate", CONTRACT, f"s3://{bucket}/ohlcv/*/*.parquet", *OPTIONS)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot read s3://{bucket}/ohlcv/*/*.parquet")
    for secret in (wrong, s3_server.secret):
        assert secret not in done.stderr + done.stdout
    profiled = run_cli("profile", CONTRACT, f"s3://{bucket}/csv/*.csv", "--out", "nowhere.yaml")
    assert profiled.returncode == 2 and wrong not in profiled.stderr and "Traceback" not in profiled.stderr


def test_a_wrong_endpoint_is_one_line_without_the_secret(bucket, s3_server, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed_port()}")
    done = run_cli("validate", CONTRACT, f"s3://{bucket}/ohlcv/*/*.parquet", *OPTIONS)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot read s3://{bucket}/ohlcv/*/*.parquet")
    assert s3_server.secret not in done.stderr + done.stdout and "Traceback" not in done.stderr
    monkeypatch.setenv("AWS_ENDPOINT_URL", "localhost:9000")
    done = run_cli("validate", CONTRACT, f"s3://{bucket}/ohlcv/*/*.parquet", *OPTIONS)
    assert done.returncode == 2 and "AWS_ENDPOINT_URL='localhost:9000': give the server's URL" in done.stderr


def test_a_delta_table_on_object_storage_is_read_with_the_same_settings(bucket, s3_server, monkeypatch):
    from deltalake import write_deltalake

    options = {
        "AWS_ENDPOINT_URL": s3_server.endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": s3_server.key_id,
        "AWS_SECRET_ACCESS_KEY": s3_server.secret,
        "AWS_REGION": "us-east-1",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }
    for day in DAYS:
        write_deltalake(f"s3://{bucket}/delta/bars", day_table(day), mode="append", storage_options=options)
    url = f"delta://s3://{bucket}/delta/bars"
    window = ("--from", f"{BROKEN_DAY}T00:00:00Z", "--to", f"{DAYS[2]}T00:00:00Z")
    found = report(run_cli("validate", CONTRACT, url, *OPTIONS, *window))
    assert found["rows"] == ROWS and failed(found) == BROKEN
    assert found["data"][0].startswith(f"{url} (version 2; 1 of 3 data files;")
    wrong = "Wr0ng-" + s3_server.secret[6:]
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    done = run_cli("validate", CONTRACT, url, *OPTIONS)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: cannot open {url}")
    assert wrong not in done.stderr and s3_server.secret not in done.stderr, done.stderr


@given(st.text(max_size=300), st.text(max_size=300))
def test_no_error_line_shows_a_credential_of_the_environment(before, after):
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        shown = error_line(OSError(before + secret + after))
    assert secret not in shown and "\n" not in shown  # masked before the line is cut


def test_spark_validates_the_objects_from_their_local_copies(bucket, spark):
    from datetime import datetime

    from tscontract import validate

    data = f"s3://{bucket}/ohlcv/*/*.parquet"
    found = validate(CONTRACT, data, catalog=CATALOG, now=datetime.fromisoformat(NOW), engine="spark").to_json()
    assert found["engine"] == "spark" and found["rows"] == 3 * ROWS
    assert failed(found) == BROKEN
    assert found["data"] == [f"s3://{bucket}/ohlcv/date={day}/part-0.parquet" for day in DAYS]
