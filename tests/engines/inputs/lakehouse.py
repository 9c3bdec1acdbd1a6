"""Three trading days of 1-minute bars (AAPL, MSFT on XNAS) where data platforms keep them: objects on
a real S3 API server on loopback (moto's server), an Iceberg table partitioned by day in a SQL catalog
on SQLite, a Delta table written one day per commit. Day two holds one bar whose high is below its low."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from tests.engines.conftest import OHLCV, OHLCV_TYPES

CONTRACT = OHLCV / "contract.yaml"
CATALOG = OHLCV / "catalog.yaml"
DAYS = ("2026-11-30", "2026-12-01", "2026-12-02")
ROWS = 781  # bars a day: 390 of AAPL, 391 of MSFT (good.csv)
BROKEN_DAY = "2026-12-01"
NOW = "2026-12-02T21:05:00Z"
BROKEN = {"invariants[0]": 1, "invariants[1]": 1}  # low <= open <= high and low <= close <= high, one bar
OPTIONS = ("--catalog", CATALOG, "--now", NOW, "--format", "json")
TYPES = {**OHLCV_TYPES, "bar_start": pa.timestamp("us", tz="UTC")}  # lakehouse tables store microseconds


def day_csv(day: str) -> str:
    """good.csv's session moved to ``day``; on BROKEN_DAY one AAPL bar's high is 1 below its low."""
    lines = (OHLCV / "data" / "good.csv").read_text(encoding="utf-8").replace("2026-11-30", day).splitlines()
    if day == BROKEN_DAY:
        fields = lines[100].split(",")
        fields[3] = f"{float(fields[4]) - 1:.2f}"  # high = low - 1
        lines[100] = ",".join(fields)
    return "\n".join(lines) + "\n"


def day_jsonl(day: str) -> str:
    """The day as JSON lines: numbers and booleans as JSON literals with the CSV's digits, the rest strings."""
    header, *rows = day_csv(day).splitlines()
    names = header.split(",")
    literal = {"open", "high", "low", "close", "volume", "trade_count", "adjusted", "revision"}
    out = []
    for row in rows:
        values = [(v or "null") if n in literal else json.dumps(v) for n, v in zip(names, row.split(","), strict=True)]
        pairs = (f"{json.dumps(n)}: {v}" for n, v in zip(names, values, strict=True))
        out.append("{" + ", ".join(pairs) + "}\n")
    return "".join(out)


def day_table(day: str) -> pa.Table:
    options = pacsv.ConvertOptions(column_types=TYPES)
    return pacsv.read_csv(io.BytesIO(day_csv(day).encode()), convert_options=options)


def parquet_bytes(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    key_id: str
    secret: str


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    """A real S3 API server (moto's) on a free loopback port that authenticates every request: an IAM user
    with an access key (its secret made by the server) is set up first, then a wrong secret is refused."""
    from moto import settings
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    iam = boto3_client("iam", endpoint, "AKIDSETUP", "setup")
    iam.create_user(UserName="loader")
    iam.put_user_policy(UserName="loader", PolicyName="all", PolicyDocument=json.dumps(ALLOW_ALL))
    key = iam.create_access_key(UserName="loader")["AccessKey"]
    before = settings.INITIAL_NO_AUTH_ACTION_COUNT
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # from now on every request is signed by a known key
    yield S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
    settings.INITIAL_NO_AUTH_ACTION_COUNT = before
    server.stop()


ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: S3Server) -> None:
    """The environment a user sets for an S3-compatible server; no credentials or profiles of the machine."""
    for name in (
        "AWS_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_ENDPOINT_URL_S3",
        "TSCONTRACT_S3_ENDPOINT",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name, raising=False)
    values = {
        "AWS_ENDPOINT_URL": server.endpoint,
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": server.key_id,
        "AWS_SECRET_ACCESS_KEY": server.secret,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def boto3_client(service: str, endpoint: str, key_id: str, secret: str) -> Any:
    import boto3

    return boto3.client(
        service, endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key_id, aws_secret_access_key=secret
    )


def iceberg_catalog(root: Path) -> dict[str, str]:
    """A SQL catalog on SQLite with a local warehouse, holding ``market.bars`` partitioned by day of
    bar_start, one append (snapshot) per day; the environment that names it ``lake``."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.transforms import DayTransform

    (root / "warehouse").mkdir(parents=True)
    properties = {"uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": (root / "warehouse").as_uri()}
    catalog = SqlCatalog("lake", **properties)
    catalog.create_namespace("market")
    table = catalog.create_table("market.bars", schema=day_table(DAYS[0]).schema)
    with table.update_spec() as spec:
        spec.add_field("bar_start", DayTransform(), "bar_day")
    for day in DAYS:
        table.append(day_table(day))
    return {
        "PYICEBERG_HOME": str(root),
        "PYICEBERG_CATALOG__LAKE__TYPE": "sql",
        "PYICEBERG_CATALOG__LAKE__URI": properties["uri"],
        "PYICEBERG_CATALOG__LAKE__WAREHOUSE": properties["warehouse"],
    }


def delta_table(path: Path) -> Path:
    """A Delta table of the three days, one commit (version 0, 1, 2) and one file per day."""
    from deltalake import write_deltalake

    for day in DAYS:
        write_deltalake(str(path), day_table(day), mode="append")
    return path
