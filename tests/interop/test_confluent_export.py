"""The Confluent data contract, proven with confluent-kafka's own serializers against tscontract's registry.

No broker: ``serializer(record, SerializationContext(topic, VALUE))`` is what a producer runs before
it sends, and the deserializer is what a consumer runs on the bytes. The CEL rule executor is the
real one (cel-python); the registry is ``tscontract registry serve`` on a loopback socket.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.common.serde import RuleConditionError
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

from tests.conftest import EXAMPLES, run_cli
from tests.registry.conftest import Registry
from tscontract.contract.loader import load_contract
from tscontract.interop.exports import export
from tscontract.interop.exports._records import python_record, read_csv_rows
from tscontract.interop.exports.confluent import type_predicate
from tscontract.plan.params import TypeParams

OHLCV = EXAMPLES / "ohlcv_1m"
TOPIC = "bars"
SUBJECT = f"{TOPIC}-value"
CTX = SerializationContext(TOPIC, MessageField.VALUE)
ONLY_LATEST = {"auto.register.schemas": False, "use.latest.version": True}


@pytest.fixture(scope="module", autouse=True)
def cel_rules() -> None:
    CelExecutor.register()


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    reg = Registry(tmp_path / "registry.sqlite")
    yield reg
    reg.close()


def payload(contract: Path, **options: Any) -> dict[str, Any]:
    result = export("confluent", load_contract(contract), **options)
    return json.loads(result.artifacts[0].content)


def register(reg: Registry, body: dict[str, Any], subject: str = SUBJECT) -> int:
    status, answer = reg.call("POST", f"/subjects/{subject}/versions", body)
    assert status == 200, answer
    return answer["id"]


def serde(reg: Registry, body: dict[str, Any], **conf: Any) -> tuple[AvroSerializer, AvroDeserializer]:
    client = SchemaRegistryClient({"url": reg.url})
    serializer = AvroSerializer(client, body["schema"], conf={**ONLY_LATEST, **conf})
    return serializer, AvroDeserializer(client, conf={"use.latest.version": True})


def rejected(serializer: AvroSerializer, record: dict[str, Any]) -> str:
    """The clause a record broke: the producer's SerializationError is caused by the rule's condition failing."""
    with pytest.raises(SerializationError) as caught:
        serializer(record, CTX)
    assert isinstance(caught.value.__cause__, RuleConditionError), repr(caught.value.__cause__)
    return str(caught.value.__cause__)


def bar(**changes: Any) -> dict[str, Any]:
    record = {
        "symbol": "AAPL",
        "bar_start": datetime(2026, 11, 30, 14, 30, tzinfo=UTC),
        "open": Decimal("230.00000000"),
        "high": Decimal("230.14000000"),
        "low": Decimal("229.52000000"),
        "close": Decimal("229.67000000"),
        "volume": Decimal("10932.0000"),
        "trade_count": 78,
        "adjusted": False,
        "source_id": "vendor-x",
        "ingest_run_id": "run-0001",
        "transform_version": "1.0.0",
        "revision": 0,
    }
    record.update(changes)
    return record


# ---------------------------------------------------------------- the payload


def test_payload_carries_the_clauses_verbatim_and_lists_the_rest() -> None:
    body = payload(OHLCV / "contract.yaml")
    assert body["schemaType"] == "AVRO"
    schema = json.loads(body["schema"])
    assert schema["name"] == "ohlcv_1m" and [f["name"] for f in schema["fields"]][:3] == ["symbol", "bar_start", "open"]
    props = body["metadata"]["properties"]
    assert props["owner"] == "market-data@example" and props["tscontract.version"] == "3.1.0"
    assert props["major_version"] == "3" and props["unit.open"] == "quote_currency"
    rules = {r["name"]: r for r in body["ruleSet"]["domainRules"]}
    assert rules["invariants_0"]["doc"] == "low <= open <= high"
    assert rules["invariants_0"]["params"] == {"tscontract.check": "invariants[0]"}
    # a Confluent rule name: no '.' (a real registry refuses `field.adjusted.value`, 42210)
    assert rules["field_adjusted_value"]["params"] == {"tscontract.check": "field.adjusted.value"}
    assert {r["kind"] for r in rules.values()} == {"CONDITION"} and {r["type"] for r in rules.values()} == {"CEL"}
    assert {r["mode"] for r in rules.values()} == {"WRITE"} and {r["onFailure"] for r in rules.values()} == {"ERROR"}
    assert rules["invariants_3"]["expr"] == (
        "!has(message.trade_count) || type(message.trade_count) == null_type || message.trade_count >= 0"
    )
    # what no record-level rule can state is listed, in the result and in the schema's doc
    result = export("confluent", load_contract(OHLCV / "contract.yaml"))
    skipped = {n.check_id for n in result.not_exported}
    assert {"key.unique", "time.cadence", "time.session"} <= skipped
    assert "invariants[0]" in result.exported and "invariants[0]" not in skipped
    assert "time.cadence [60s within session; no bars outside session]" in schema["doc"]


EXPORTED = sorted(EXAMPLES.rglob("contract*.yaml"))  # the seed contracts are examples/*/contract.yaml


@pytest.mark.parametrize("contract", EXPORTED, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_every_export_is_a_rule_set_confluent_accepts(contract: Path) -> None:
    """The seed and example contracts' exports pass the registry's own check: Confluent's rules, one definition."""
    from tscontract.contract.confluent_rules import rule_name_problem, rule_set_problem
    from tscontract.registry.rulesets import validate_rule_set

    rule_set = payload(contract)["ruleSet"]
    validate_rule_set(rule_set)  # what `registry serve` runs on a registration: raises 42210 (or 42201, 400)
    assert rule_set_problem(rule_set) is None
    rules = [r for key in ("migrationRules", "domainRules", "encodingRules") for r in rule_set[key]]
    assert len({r["name"] for r in rules}) == len(rules)
    for rule in rules:
        assert rule_name_problem(rule["name"]) is None and len(rule["name"]) <= 64 and rule["name"].isascii()
        check = rule["params"]["tscontract.check"]
        assert rule["name"] == check.replace(".", "_").replace("[", "_").replace("]", "")  # readable: the check id


def test_migration_and_domain_rules_are_valid_together(tmp_path: Path) -> None:
    from tscontract.registry.rulesets import validate_rule_set

    (tmp_path / "v1.yaml").write_text(LINE_V1)
    (tmp_path / "v2.yaml").write_text(LINE_V2)
    rule_set = payload(tmp_path / "v2.yaml", previous=load_contract(tmp_path / "v1.yaml"))["ruleSet"]
    assert [r["name"] for r in rule_set["migrationRules"]] == ["upgrade", "downgrade"]
    assert rule_set["domainRules"]
    validate_rule_set(rule_set)


def test_catalog_lookups_are_listed_not_dropped() -> None:
    result = export("confluent", load_contract(EXAMPLES / "plant_sensor" / "contract.yaml"))
    reasons = {n.check_id: n.reason for n in result.not_exported}
    assert "catalog hard_bounds for series_id" in reasons["invariants[1]"]
    body = json.loads(result.artifacts[0].content)
    rule = next(r for r in body["ruleSet"]["domainRules"] if r["doc"] == "value is null only when quality = bad")
    assert rule["expr"] == (
        "(has(message.value) && type(message.value) != null_type) || "
        '(has(message.quality) && type(message.quality) != null_type && message.quality == "bad")'
    )


def test_cli_writes_the_payload_and_lists_what_it_did_not_carry(tmp_path: Path) -> None:
    result = run_cli("export", "confluent", str(OHLCV / "contract.yaml"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "not exported: key.unique" in result.stdout
    written = json.loads((tmp_path / "ohlcv_1m.confluent.json").read_text())
    assert written["ruleSet"]["domainRules"][1]["name"] == "invariants_0"
    bad = run_cli("export", "confluent", str(OHLCV / "contract.yaml"), "--rule-mode", "READ")
    assert bad.returncode == 2 and "WRITE, WRITEREAD" in bad.stderr
    misplaced = run_cli("export", "avro", str(OHLCV / "contract.yaml"), "--from", str(OHLCV / "contract.yaml"))
    assert misplaced.returncode == 2 and "--from is an option of the confluent export" in misplaced.stderr


# ---------------------------------------------------------------- the real serializers


def test_serializer_rejects_a_bar_outside_its_range_and_round_trips_valid_bars(registry: Registry) -> None:
    body = payload(OHLCV / "contract.yaml")
    register(registry, body)
    serializer, deserializer = serde(registry, body)
    contract = load_contract(OHLCV / "contract.yaml")
    good = [python_record(contract, row) for row in read_csv_rows(OHLCV / "data" / "good.csv")]
    assert len(good) > 10
    for record in good:
        assert deserializer(serializer(record, CTX), CTX) == record
    assert rejected(serializer, bar(open=Decimal("229.50000000"))) == "low <= open <= high"  # open below low
    assert rejected(serializer, bar(close=Decimal("230.15000000"))) == "low <= close <= high"
    assert rejected(serializer, bar(volume=Decimal("-1.0000"))) == "volume >= 0"
    assert rejected(serializer, bar(trade_count=-1)) == "trade_count is null or trade_count >= 0"
    assert rejected(serializer, bar(adjusted=True)) == "value: false"
    # a null (or absent) nullable field passes its clause, as NULL passes a SQL CHECK
    assert deserializer(serializer(bar(trade_count=None, adjusted=None), CTX), CTX) == bar(
        trade_count=None, adjusted=None
    )
    absent = bar()
    del absent["trade_count"]
    assert deserializer(serializer(absent, CTX), CTX)["trade_count"] is None
    # decimals are compared exactly, not as doubles: equal to the last digit passes
    edge = bar(open=Decimal("229.52000000"), low=Decimal("229.52000000"), close=Decimal("229.52000001"))
    assert deserializer(serializer(edge, CTX), CTX) == edge


def test_serializer_agrees_with_validate_row_by_row(registry: Registry, tmp_path: Path) -> None:
    """Every row of the vendor's bad file: rejected by the producer exactly when validate fails it on a rule."""
    body = payload(OHLCV / "contract.yaml")
    register(registry, body)
    serializer, _ = serde(registry, body)
    ruled = {r["params"]["tscontract.check"] for r in body["ruleSet"]["domainRules"]}
    report = run_cli("validate", str(OHLCV / "contract.yaml"), str(OHLCV / "data" / "bad.csv"), "--format", "json")
    checks = json.loads(report.stdout)["checks"]
    flagged: dict[int, set[str]] = {}
    for check in checks:
        for example in check["examples"]:
            if "row" in example:
                flagged.setdefault(example["row"], set()).add(check["id"])
    contract = load_contract(OHLCV / "contract.yaml")
    compared = 0
    for number, row in enumerate(read_csv_rows(OHLCV / "data" / "bad.csv"), start=1):
        failed = flagged.get(number, set())
        if failed - ruled:  # a type, null or timezone failure: not a record the schema can carry
            continue
        compared += 1
        record = python_record(contract, row)
        if failed:
            assert rejected(serializer, record) in {r["doc"] for r in body["ruleSet"]["domainRules"]}
        else:
            serializer(record, CTX)
    assert compared >= 10 and any(flagged.get(n, set()) & ruled for n in flagged)


# ---------------------------------------------------------------- migration rules

LINE_V1 = """\
contract: line_pressure
version: 1.4.0
owner: plant-telemetry@example
key: [series_id, event_ts]
time: {column: event_ts, precision: ms, timezone: UTC instant, cadence: irregular}
fields:
  series_id: {type: string}
  event_ts: {type: timestamp_ms_utc}
  device: {type: string, nullable: true}
  pressure_bar: {type: decimal(10,4), unit: bar, nullable: false}
invariants:
  - pressure_bar >= 0
"""
# the kPa incident, done right: a new field named for its unit, the device column renamed
LINE_V2 = """\
contract: line_pressure
version: 2.0.0
owner: plant-telemetry@example
key: [series_id, event_ts]
time: {column: event_ts, precision: ms, timezone: UTC instant, cadence: irregular}
fields:
  series_id: {type: string}
  event_ts: {type: timestamp_ms_utc}
  device_id: {type: string, nullable: true, aliases: [device]}
  pressure_kpa: {type: decimal(12,2), unit: kPa, nullable: false}
invariants:
  - pressure_kpa >= 0
"""


def test_a_new_consumer_reads_old_records_through_the_upgrade_rule(registry: Registry, tmp_path: Path) -> None:
    old_path, new_path = tmp_path / "v1.yaml", tmp_path / "v2.yaml"
    old_path.write_text(LINE_V1)
    new_path.write_text(LINE_V2)
    v1 = payload(old_path)
    assert v1["ruleSet"]["migrationRules"] == []
    register(registry, v1, "line-value")
    ctx = SerializationContext("line", MessageField.VALUE)
    old_producer, _ = serde(registry, v1)
    at = datetime(2026, 3, 29, 0, 59, 59, 999000, tzinfo=UTC)  # the last millisecond before the EU DST change
    old_records = [
        {"series_id": "P-101", "event_ts": at, "device": "pump-7", "pressure_bar": Decimal("1.5025")},
        {"series_id": "P-102", "event_ts": at, "device": None, "pressure_bar": Decimal("0.0000")},
    ]
    written = [old_producer(r, ctx) for r in old_records]
    with pytest.raises(SerializationError):
        old_producer({**old_records[0], "pressure_bar": Decimal("-0.0001")}, ctx)

    # the major change: registered beside the old version, checked only within its major version
    v2 = payload(new_path, previous=load_contract(old_path))
    migrations = {r["mode"]: r for r in v2["ruleSet"]["migrationRules"]}
    assert set(migrations) == {"UPGRADE", "DOWNGRADE"}
    assert {r["type"] for r in migrations.values()} == {"CEL"} and {r["kind"] for r in migrations.values()} == {
        "TRANSFORM"
    }
    assert (
        '"pressure_kpa": decimals.round(decimals.mul(decimal(message.pressure_bar), decimal("100")), 2)'
        in (migrations["UPGRADE"]["expr"])
    )
    refused = registry.call("POST", "/subjects/line-value/versions", v2)
    assert refused[0] == 409  # FULL_TRANSITIVE across major versions: the unit change is a break
    assert registry.call("PUT", "/config/line-value", {"compatibilityGroup": "major_version"})[0] == 200
    register(registry, v2, "line-value")

    new_producer, new_consumer = serde(registry, v2)
    upgraded = [new_consumer(data, ctx) for data in written]
    assert upgraded == [
        {"series_id": "P-101", "event_ts": at, "device_id": "pump-7", "pressure_kpa": Decimal("150.25")},
        {"series_id": "P-102", "event_ts": at, "device_id": None, "pressure_kpa": Decimal("0.00")},
    ]
    fresh = {"series_id": "P-101", "event_ts": at, "device_id": "pump-7", "pressure_kpa": Decimal("151.30")}
    assert new_consumer(new_producer(fresh, ctx), ctx) == fresh
    # a 1.x consumer still reads bar: the registry answers its major version, the downgrade rule converts
    old_reader = AvroDeserializer(
        SchemaRegistryClient({"url": registry.url}),
        conf={"use.latest.with.metadata": {"major_version": v1["metadata"]["properties"]["major_version"]}},
    )
    assert old_reader(new_producer(fresh, ctx), ctx) == {
        "series_id": "P-101",
        "event_ts": at,
        "device": "pump-7",
        "pressure_bar": Decimal("1.5130"),
    }
    with pytest.raises(SerializationError):
        new_producer({**fresh, "pressure_kpa": Decimal("-1.00")}, ctx)


def test_the_downgrade_rule_is_the_inverse_in_confluents_cel_environment(tmp_path: Path) -> None:
    """The v2 -> v1 transform, evaluated by cel-python with confluent-kafka's CEL functions.

    A v1 consumer picks it up with use.latest.with.metadata={"major_version": "1"} (GET
    /subjects/<subject>/metadata): proven end to end in the test above; here the expression alone.
    """
    import celpy
    from confluent_kafka.schema_registry.rules.cel.cel_executor import msg_to_cel
    from confluent_kafka.schema_registry.rules.cel.cel_field_presence import InterpretedRunner
    from confluent_kafka.schema_registry.rules.cel.extra_func import EXTRA_FUNCS

    (tmp_path / "v1.yaml").write_text(LINE_V1)
    (tmp_path / "v2.yaml").write_text(LINE_V2)
    v2 = payload(tmp_path / "v2.yaml", previous=load_contract(tmp_path / "v1.yaml"))
    downgrade = next(r for r in v2["ruleSet"]["migrationRules"] if r["mode"] == "DOWNGRADE")
    env = celpy.Environment(runner_class=InterpretedRunner)
    program = env.program(env.compile(downgrade["expr"]), functions=EXTRA_FUNCS)
    at = datetime(2026, 10, 25, 1, 0, tzinfo=UTC)
    record = {"series_id": "P-101", "event_ts": at, "device_id": None, "pressure_kpa": Decimal("150.25")}
    assert dict(program.evaluate({"message": msg_to_cel(record)})) == {
        "series_id": "P-101",
        "event_ts": at,
        "device": None,
        "pressure_bar": Decimal("1.5025"),
    }


def test_no_migration_rule_where_a_field_has_no_mechanical_source(tmp_path: Path) -> None:
    (tmp_path / "v1.yaml").write_text(LINE_V1)
    unmapped = LINE_V2.replace(
        "pressure_kpa: {type: decimal(12,2), unit: kPa", "flow_m3h: {type: decimal(12,2), unit: m**3/h"
    )
    (tmp_path / "v2.yaml").write_text(unmapped.replace("pressure_kpa >= 0", "flow_m3h >= 0"))
    v2 = payload(tmp_path / "v2.yaml", previous=load_contract(tmp_path / "v1.yaml"))
    assert v2["ruleSet"]["migrationRules"] == []


# ---------------------------------------------------------------- CEL agrees with the SQL engine

SHAPES = """\
contract: trade_prints
version: 1.0.0
key: [venue, ts]
time: {column: ts, precision: ms, timezone: UTC instant, cadence: irregular}
fields:
  venue: {type: string}
  ts: {type: timestamp_ms_utc}
  price: {type: decimal(12,4), nullable: true}
  qty: {type: int64, nullable: true}
  lots: {type: int16, nullable: true, constraint: "> -5"}
  ratio: {type: float64, nullable: true}
  side: {type: enum[buy, sell], nullable: true}
  code: {type: string, nullable: true}
  flag: {type: bool, nullable: true}
  tif: {type: "enum[day, 'good-till-cancel']", nullable: true}
  trade_date: {type: date, nullable: true}
invariants:
  - price between 0 and 1000
  - qty in (1, 10, 100) or qty is null
  - not (side = sell and qty > 50)
  - code matches '[A-Z]{2}[0-9]{1,3}'
  - price * qty <= 50000
  - abs(price - 10.5) < 100 or flag = true
  - round(price, 1) >= 0.5
  - length(code) <= 4
  - coalesce(qty, 0) >= 0
  - price / 4 < 100
  - price / qty < 100
  - ts >= '2026-03-29T01:00:00Z'
  - qty - 1 >= -1
  - ratio > 0.25
  - side in (buy, sell)
  - -price <= 0
  - qty + lots * 2 <= 120
  - trade_date >= '2026-03-02'
"""


def test_every_cel_rule_agrees_with_duckdb_on_every_record(tmp_path: Path) -> None:
    """Each rule in cel-python with confluent-kafka's CEL functions against its clause's SQL in DuckDB, row by row."""
    import celpy
    import duckdb
    from confluent_kafka.schema_registry.rules.cel.cel_executor import msg_to_cel
    from confluent_kafka.schema_registry.rules.cel.cel_field_presence import InterpretedRunner
    from confluent_kafka.schema_registry.rules.cel.extra_func import EXTRA_FUNCS

    (tmp_path / "c.yaml").write_text(SHAPES)
    body = payload(tmp_path / "c.yaml")
    contract = load_contract(tmp_path / "c.yaml")
    from tscontract.plan.checks import build_plan

    checks = {c.id: c for c in build_plan(contract).checks}
    rules = body["ruleSet"]["domainRules"]
    exported = {r["params"]["tscontract.check"] for r in rules}
    assert exported >= {f"invariants[{i}]" for i in range(18) if i not in (9, 10, 13)} | {
        "field.lots.type",
        "field.tif.type",
    }
    reasons = {n.check_id: n.reason for n in export("confluent", contract).not_exported}
    # '/' divides in binary64; CEL's decimals.div divides decimals: refused, by a literal or a field
    assert "'/' divides in binary64" in reasons["invariants[9]"]
    assert "'/' divides in binary64" in reasons["invariants[10]"]
    assert "a float may be NaN" in reasons["invariants[13]"]  # ratio > 0.25
    before, after = datetime(2026, 3, 29, 0, 59, 59, tzinfo=UTC), datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    base = {"venue": "XNAS", "ts": after, "price": Decimal("10.5000"), "qty": 10, "lots": 3, "ratio": 0.5}
    base |= {"side": "buy", "code": "AB12", "flag": False, "tif": "good-till-cancel"}
    base["trade_date"] = date(2026, 3, 29)
    records = [
        base,
        {**base, **dict.fromkeys(("price", "qty", "lots", "ratio", "side", "code", "flag", "tif", "trade_date"))},
        {**base, "price": Decimal("1000.0001"), "qty": 100},  # above the range; price * qty above 50000
        {**base, "price": Decimal("0.4499")},  # rounds to 0.4
        {**base, "price": Decimal("0.4500")},  # rounds half up to 0.5
        {**base, "qty": 0},  # not listed
        {**base, "qty": 55, "side": "sell"},
        {**base, "qty": 55, "side": None},  # unknown side: not (null and true) is unknown
        {**base, "code": "ab12"},
        {**base, "code": "AB1234"},
        {**base, "ts": before},
        {**base, "ratio": 0.25},
        {**base, "side": "hold"},
        {**base, "lots": -5},
        {**base, "lots": 56},  # 10 + 112 > 120
        {**base, "price": Decimal("-120.0000"), "flag": True},
        {**base, "price": Decimal("0.0000"), "flag": None},
        {**base, "tif": "gtc"},
        {**base, "trade_date": date(2026, 3, 1)},
    ]
    columns = (
        "venue VARCHAR, ts TIMESTAMPTZ, price DECIMAL(12,4), qty BIGINT, lots SMALLINT, ratio DOUBLE, "
        "side VARCHAR, code VARCHAR, flag BOOLEAN, tif VARCHAR, trade_date DATE, n INTEGER"
    )
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE TABLE t ({columns})")
    names = list(base)
    con.executemany(
        f"INSERT INTO t VALUES ({', '.join('?' * (len(names) + 1))})",
        [[r[k] for k in names] + [i] for i, r in enumerate(records)],
    )
    env = celpy.Environment(runner_class=InterpretedRunner)
    disagreements = []
    failures = 0
    for rule in rules:
        check = checks[rule["params"]["tscontract.check"]]
        predicate = check.predicate or type_predicate(check.columns[0], check.params_of(TypeParams).dtype)
        sql = predicate.sql(dialect="duckdb")
        expected = [row[0] for row in con.execute(f"SELECT COALESCE(({sql}), TRUE) FROM t ORDER BY n").fetchall()]
        program = env.program(env.compile(rule["expr"]), functions=EXTRA_FUNCS)
        for record, want in zip(records, expected, strict=True):
            absent = {k: v for k, v in record.items() if v is not None}  # a producer may leave nulls out
            for message in (record, absent):
                got = bool(program.evaluate({"message": msg_to_cel(message)}))
                if got != want:
                    disagreements.append((rule["doc"], record, got, want))
            failures += not want
    assert disagreements == []
    assert failures >= 15  # every clause is broken by some record


def test_from_refuses_another_contract_and_adds_nothing_when_the_fields_are_the_same(tmp_path: Path) -> None:
    (tmp_path / "v1.yaml").write_text(LINE_V1)
    (tmp_path / "v1b.yaml").write_text(LINE_V1.replace("version: 1.4.0", "version: 1.5.0"))
    same = payload(tmp_path / "v1b.yaml", previous=load_contract(tmp_path / "v1.yaml"))
    assert same["ruleSet"]["migrationRules"] == []
    result = run_cli("export", "confluent", str(OHLCV / "contract.yaml"), "--from", str(tmp_path / "v1.yaml"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--from is contract 'line_pressure', not 'ohlcv_1m'" in result.stderr
    missing = run_cli("export", "confluent", str(OHLCV / "contract.yaml"), "--from", str(tmp_path / "none.yaml"))
    assert missing.returncode == 2 and "none.yaml" in missing.stderr and "Traceback" not in missing.stderr


def test_writeread_rules_also_stop_a_consumer(registry: Registry) -> None:
    body = payload(OHLCV / "contract.yaml", rule_mode="WRITEREAD")
    assert {r["mode"] for r in body["ruleSet"]["domainRules"]} == {"WRITEREAD"}
    register(registry, body)
    client = SchemaRegistryClient({"url": registry.url})
    # a producer that does not run rules (no use.latest.version): the bytes reach the topic
    unruled = AvroSerializer(client, body["schema"], conf={"auto.register.schemas": False})
    data = unruled(bar(open=Decimal("229.50000000")), CTX)
    _, consumer = serde(registry, body)
    with pytest.raises(SerializationError) as caught:
        consumer(data, CTX)
    assert str(caught.value.__cause__) == "low <= open <= high"
    assert consumer(unruled(bar(), CTX), CTX) == bar()
