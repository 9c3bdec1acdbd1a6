"""ODCS quality rules become tscontract's own clauses (matches, unique, row_count, max_failing,
sql_checks, severity), and the imported contract judges real batches with them; a rule with no exact
form is listed with its reason, never approximated."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tscontract import parse_contract
from tscontract.engines import validate
from tscontract.engines.inputs.mapping import load_mapping
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.read import Imported, import_document
from tscontract.interop.odcs.types import Choices

TRADES = """\
apiVersion: v3.1.0
kind: DataContract
id: trades-eu
name: trades
version: 2.0.0
schema:
  - name: trades
    physicalName: trades_eu
    physicalType: table
    properties:
      - name: trade_ts
        physicalType: timestamptz
        primaryKey: true
        primaryKeyPosition: 2
      - name: symbol
        physicalName: sym
        physicalType: text
        primaryKey: true
        primaryKeyPosition: 1
        logicalTypeOptions: {pattern: '^[A-Z.]{1,6}$'}
      - name: trade_id
        logicalType: string
        unique: true
      - name: venue
        logicalType: string
        quality:
          - metric: invalidValues
            arguments: {validValues: [XETR, XPAR, XAMS]}
            mustBeLessOrEqualTo: 10
            unit: percent
            severity: warn
            dimension: conformity
            description: at most one trade in ten off the three venues
      - name: price
        physicalType: numeric(12,4)
        quality:
          - metric: nullValues
            mustBeLessOrEqualTo: 20
            unit: percent
          - type: sql
            name: positive_price
            query: SELECT count(*) FROM ${object} WHERE {field} <= 0
            mustBe: 0
      - name: isin
        logicalType: string
        logicalTypeOptions: {pattern: 'DE[0-9A-Z]{10}'}
      - name: remark
        logicalType: string
        logicalTypeOptions: {pattern: '(?<=x)y'}
        quality:
          - metric: nullValues
            mustBeLessThan: 5
          - metric: duplicateValues
            mustBeLessThan: 2
            unit: percent
    quality:
      - metric: rowCount
        mustBeBetween: [3, 1000000]
        schedule: "0 20 * * *"
        scheduler: cron
      - type: sql
        query: "SELECT COUNT(*) FROM trades_eu WHERE sym = 'XXX'"
        mustBeLessOrEqualTo: 0
        severity: info
      - type: sql
        query: SELECT max(price) FROM {model}
        mustBeLessOrEqualTo: 5000
      - type: sql
        query: SELECT price FROM trades_eu
        mustBeGreaterThan: 0
      - type: sql
        query: SELECT count(*) FROM orders
        mustBe: 0
      - metric: rowCount
        mustNotBe: 0
"""

HEADER = "trade_ts,sym,trade_id,venue,price,isin,remark"
GOOD = [
    "2026-11-30T09:00:00Z,SAP,T1,XETR,120.5000,DE0007164600,",
    "2026-11-30T09:00:00Z,BMW,T2,XETR,80.1000,DE0005190003,",
    "2026-11-30T09:01:00Z,SAP,T3,XPAR,,DE0007164600,",
    "2026-11-30T09:01:00Z,AIR.PA,T4,XPAR,101.0000,FR0000130007 DE000A1EWWW0,",
    "2026-11-30T09:02:00Z,SAP,T5,XAMS,121.0000,DE0007164600,",
]


LOSSY = Choices(allow_loss=True)  # the documents here hold rules with no exact form, each listed


@pytest.fixture(scope="module")
def imported() -> Imported:
    (result,) = import_document(TRADES, choices=LOSSY)
    return result


def lost(result: Imported) -> dict[str, str]:
    return {loss.path: loss.reason for loss in result.losses}


def test_rules_become_native_clauses(imported):
    contract = parse_contract(imported.text)
    assert contract.fields["symbol"].constraint == "matches '^[A-Z.]{1,6}$'"  # anchored: as written
    # unanchored: found anywhere in the value, as ODCS (JSON Schema) searches
    assert contract.fields["isin"].constraint == "matches '(?s:.*)DE[0-9A-Z]{10}(?s:.*)'"
    assert contract.fields["trade_id"].unique is True
    invariants = {c.text: c for c in contract.invariants}
    venue = invariants["venue in ('XETR', 'XPAR', 'XAMS')"]
    assert (venue.severity, venue.max_failing.text) == ("warning", "10%")
    written = {i["clause"]: i for i in YAML(typ="safe").load(imported.text)["invariants"] if isinstance(i, dict)}
    assert written["venue in ('XETR', 'XPAR', 'XAMS')"] == {
        "clause": "venue in ('XETR', 'XPAR', 'XAMS')",
        "severity": "warning",
        "max_failing": "10%",
        "description": "at most one trade in ten off the three venues",
        "note": "ODCS dimension: conformity",
    }
    assert invariants["price is not null"].max_failing.text == "20%"
    assert (contract.row_count.min, contract.row_count.max) == (3, 1000000)
    checks = {c.name: c for c in contract.sql_checks}
    assert checks["positive_price"].sql == "SELECT COUNT(*) FROM {object} WHERE price <= 0"
    assert checks["positive_price"].must_be == 0
    # the table's physical name and the data's column name (sym) read as {object} and the field
    unknown = checks["quality_1"]
    assert unknown.sql == "SELECT COUNT(*) FROM {object} WHERE symbol = 'XXX'"
    assert unknown.must_be_less_than == 1 and unknown.severity == "warning"  # a count <= 0 is < 1


def test_rules_without_an_exact_form_are_listed(imported):
    losses = lost(imported)
    base = "schema[trades]"
    assert losses[f"{base}.properties[remark].logicalTypeOptions.pattern"].startswith(
        "tscontract refuses the regular expression '(?<=x)y': a lookahead or lookbehind"
    )
    assert "tolerated count of failing rows (mustBeLessThan: 5)" in losses[f"{base}.properties[remark].quality[0]"]
    assert "strictly below 2%" in losses[f"{base}.properties[remark].quality[1]"]
    assert losses[f"{base}.quality[0].schedule"].startswith("scheduling")
    assert (
        losses[f"{base}.quality[1].severity"] == "severity 'info' is read as warning (tscontract has error and warning)"
    )
    assert "need not be whole" in losses[f"{base}.quality[2]"]
    assert "a value per row" in losses[f"{base}.quality[3]"]
    assert losses[f"{base}.quality[4]"] == (
        "SQL check: reads table 'orders', which is not this object (trades, trades_eu)"
    )
    assert "mustNotBe" in losses[f"{base}.quality[5]"]
    # nothing else about the rules is listed
    rules = {p for p in losses if ".quality[" in p or "pattern" in p}
    assert rules == {
        f"{base}.properties[remark].logicalTypeOptions.pattern",
        f"{base}.properties[remark].quality[0]",
        f"{base}.properties[remark].quality[1]",
        f"{base}.quality[0].schedule",
        f"{base}.quality[0].scheduler",
        f"{base}.quality[1].severity",
        f"{base}.quality[2]",
        f"{base}.quality[3]",
        f"{base}.quality[4]",
        f"{base}.quality[5]",
    }


def batch(tmp_path: Path, rows: list[str], name: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def test_the_imported_rules_judge_real_batches(imported, tmp_path):
    contract = tmp_path / "trades.yaml"
    contract.write_text(imported.text)
    assert imported.mapping is not None
    (tmp_path / "trades.mapping.yaml").write_text(imported.mapping)
    mapping = load_mapping(tmp_path / "trades.mapping.yaml")

    def run(rows: list[str], name: str) -> dict:
        report = validate(contract, batch(tmp_path, rows, name), mapping=mapping).to_json()
        return {c["id"]: c for c in report["checks"]}

    good = run(GOOD, "good.csv")
    assert all(c["status"] == "passed" for c in good.values()), [c for c in good.values() if c["status"] != "passed"]
    # one price in five is null: 20%, the share the rule tolerates; the failing row is still counted
    assert good["invariants[1]"]["clause"] == "price is not null" and good["invariants[1]"]["failed_rows"] == 1
    bad = [
        *GOOD[:3],
        "2026-11-30T09:03:00Z,sap,T1,BATS,-1.0000,US0378331005,",  # lower case, repeated id, price <= 0
        "2026-11-30T09:04:00Z,XXX,T6,XETR,,DE0007164600,",
    ]
    checks = run(bad, "bad.csv")
    failed = {i for i, c in checks.items() if c["status"] == "failed"}
    assert {
        "field.symbol.constraint",
        "field.isin.constraint",
        "field.trade_id.unique",
        "sql_checks.positive_price",
        "sql_checks.quality_1",
    } <= failed
    assert checks["sql_checks.quality_1"]["severity"] == "warning"
    # one venue in five (20%) off the list: more than the 10% tolerated, a warning
    assert (checks["invariants[0]"]["status"], checks["invariants[0]"]["severity"]) == ("failed", "warning")
    assert checks["field.trade_id.unique"]["examples"][0]["rows"] == [1, 4]
    few = run(GOOD[:2], "few.csv")
    assert few["batch.row_count"]["status"] == "failed"


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"mustBe": 0}, None),
        ({"mustBeLessThan": 1}, None),
        ({"mustBeLessOrEqualTo": 0, "unit": "percent"}, None),
        ({"mustBeLessOrEqualTo": Decimal("0.10"), "unit": "percent"}, "0.1%"),
        ({"mustBeBetween": [0, 5], "unit": "percent"}, "5%"),
        ({}, None),
    ],
)
def test_failing_row_thresholds(rule, expected):
    assert odcs_rules.failing_rows(rule) == expected


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ({"mustBeLessThan": 5, "unit": "percent"}, "strictly below 5%"),
        ({"mustBeLessOrEqualTo": 3}, "tolerated count of failing rows"),
        ({"mustBeGreaterThan": 3, "unit": "percent"}, "only an upper bound"),
        ({"mustBe": 0, "mustBeLessThan": 2}, "several thresholds"),
        ({"mustBeLessThan": 0}, "can never hold"),
    ],
)
def test_failing_row_thresholds_without_a_form(rule, reason):
    with pytest.raises(odcs_rules.Refused, match=reason):
        odcs_rules.failing_rows(rule)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"mustBeGreaterThan": 1000}, {"min": 1001}),
        ({"mustBeGreaterOrEqualTo": 1}, {"min": 1}),
        ({"mustBeLessThan": Decimal("10.5")}, {"max": 10}),
        ({"mustBeLessOrEqualTo": 10}, {"max": 10}),
        ({"mustBe": 7}, {"min": 7, "max": 7}),
        ({"mustBeBetween": [Decimal("1.5"), 9]}, {"min": 2, "max": 9}),
    ],
)
def test_row_count_bounds_are_whole_rows(rule, expected):
    assert odcs_rules.row_count(rule) == expected


@pytest.mark.parametrize(
    ("pattern", "clause"),
    [
        ("^[A-Z]{3}$", "c matches '^[A-Z]{3}$'"),
        ("^[A-Z]{3}", "c matches '^[A-Z]{3}(?s:.*)'"),
        ("[0-9]$", "c matches '(?s:.*)[0-9]$'"),
        ("^a|b$", "c matches '(?s:.*)(?:^a|b$)(?s:.*)'"),  # the anchors belong to one branch each
        ("it's", 'c matches "(?s:.*)it\'s(?s:.*)"'),
        ("^a\\$", "c matches '^a\\$(?s:.*)'"),  # an escaped $ is a dollar sign, not the end
    ],
)
def test_patterns_are_searched_like_odcs(pattern, clause):
    assert odcs_rules.matches_clause("c", pattern) == clause


def test_severities():
    assert odcs_rules.severity("Error") == ("error", None)
    assert odcs_rules.severity("warn") == ("warning", None)
    assert odcs_rules.severity(None) == ("error", None)
    assert odcs_rules.severity("info")[1] == "severity 'info' is read as warning (tscontract has error and warning)"


def test_sla_properties():
    sla = """\
slaProperties:
  - {property: retention, value: 3, unit: y, element: trades_eu.trade_ts}
  - {property: freshness, value: 1, unit: d, element: trades.isin}
  - {property: latency, value: 15, unit: m, element: trades_eu.trade_ts, driver: operational}
"""
    (result,) = import_document(TRADES + sla, choices=LOSSY)
    assert parse_contract(result.text).freshness.max_age.text == "15m"  # on the time column, trade_ts
    losses = lost(result)
    # retention promises nothing tscontract checks: carried as written in the contract's odcs section
    assert "slaProperties[0]" not in losses and "slaProperties[0]" in result.kept
    carried = parse_contract(result.text).odcs
    assert carried is not None and carried["document"]["slaProperties"][0] == {
        "property": "retention",
        "value": 3,
        "unit": "y",
        "element": "trades_eu.trade_ts",
    }
    assert losses["slaProperties[1]"] == (
        "freshness of trades.isin: not an instant column of this object (freshness reads one)"
    )
    assert not [p for p in losses if p.startswith("slaProperties[2]")]
    # a freshness that is not a whole number of a unit is a check not carried: listed, not kept
    (odd,) = import_document(TRADES + sla.replace("value: 15, unit: m", "value: 1.5, unit: h"), choices=LOSSY)
    assert lost(odd)["slaProperties[2]"] == "latency not a whole number of a time unit"
    assert "slaProperties[2]" not in odd.kept


def test_a_document_this_package_exported_gives_its_rules_back():
    """matches, unique, a tolerated share, row_count and SQL checks (names, queries as written, severity)
    written to ODCS by `export odcs` and read back: the same clauses, nothing listed."""
    from tests.engines.test_rules import TRADES as RULES
    from tscontract.interop.exports import export

    original = parse_contract(RULES)
    (result,) = import_document(export("odcs", original).artifacts[0].content)
    assert result.losses == []
    back = parse_contract(result.text)
    assert back.constraints["symbol"].text == original.constraints["symbol"].text
    assert back.fields["trade_id"].unique is True
    assert [(c.text, c.severity, c.max_failing) for c in back.invariants] == [
        (c.text, c.severity, c.max_failing) for c in original.invariants
    ]
    assert back.row_count == original.row_count
    assert back.sql_checks == original.sql_checks


SMALL = """\
apiVersion: v3.1.0
kind: DataContract
id: readings
version: 1.0.0
schema:
  - name: readings
    properties:
      - {name: ts, physicalType: timestamptz, primaryKey: true, primaryKeyPosition: 2}
      - {name: sensor, logicalType: string, primaryKey: true, primaryKeyPosition: 1}
      - {name: serial, logicalType: string}
      - name: value
        logicalType: number
        quality:
          - {metric: nullValues, mustBe: 0, severity: warning}
          - {metric: invalidValues, validValues: [1, 2], mustBeLessOrEqualTo: 1, unit: percent, id: q_value}
    quality:
      - {metric: duplicateValues, arguments: {properties: [serial]}, mustBe: 0}
      - {metric: duplicateValues, arguments: {properties: [sensor, ts]}, mustBe: 0, description: one per key}
      - {metric: duplicateValues, arguments: {properties: [sensor, serial]}, mustBe: 0}
      - {type: sql, id: self_join, query: "SELECT count(*) FROM readings a JOIN readings b ON a.serial = b.serial"
         , mustBe: 0}
"""


def test_duplicates_nulls_at_warning_and_rule_ids():
    (result,) = import_document(SMALL, choices=LOSSY)
    contract = parse_contract(result.text)
    assert contract.fields["serial"].unique is True  # duplicateValues over one column off the key
    assert contract.note == "schema[readings].quality[1]: one per key"  # over the key: the key, its words kept
    assert [(c.text, c.severity) for c in contract.invariants] == [
        ("value is not null", "warning"),  # nullable: false has no severity: an invariant
        ("value in (1, 2)", "error"),
    ]
    pair, join = contract.sql_checks  # named by its id; both sides of the self join read the batch
    assert (join.name, join.sql) == (
        "self_join",
        "SELECT COUNT(*) FROM {object} AS a JOIN {object} AS b ON a.serial = b.serial",
    )
    # duplicateValues over two columns off the key: a SQL check counting the pairs repeated
    assert pair.name == "quality_2" and 'GROUP BY "sensor", "serial" HAVING count(*) > 1' in pair.sql
    assert lost(result) == {
        "schema[readings].properties[value].quality[1].id": (
            "a rule id: tscontract names each check by its clause (check ids)"
        ),
    }


DQX = """\
apiVersion: v3.0.2
kind: DataContract
id: interactions
version: 1.0.0
schema:
  - name: interactions
    properties:
      - name: ts
        physicalType: timestamptz
        primaryKey: true
        quality:
          - {type: custom, engine: dqx, implementation: {criticality: warning, check: {function: not_in_future}}}
      - name: user_id
        logicalType: string
        quality:
          - {type: custom, engine: dqx, implementation: {criticality: error, check: {function: is_not_null}}}
          - {type: custom, engine: dqx, implementation: {criticality: error, check: {function: is_unique}}}
      - name: kind
        logicalType: string
        quality:
          - type: custom
            engine: dqx
            implementation:
              criticality: minor
              check: {function: is_in_list, arguments: {allowed: [click, view]}}
      - name: amount
        logicalType: number
        quality:
          - type: custom
            engine: dqx
            implementation:
              criticality: warn
              check: {function: is_in_range, arguments: {min_limit: 0, max_limit: 1000}}
      - name: country
        logicalType: string
        quality:
          - type: custom
            engine: dqx
            implementation: {criticality: error, check: {function: regex_match, arguments: {regex: '^[A-Z]{2}'}}}
    quality:
      - type: custom
        engine: dqx
        implementation:
          criticality: error
          filter: kind = 'view'
          check: {function: is_not_null, arguments: {column: amount}}
      - type: custom
        engine: dqx
        implementation: {criticality: error, check: {function: is_unique, arguments: {columns: [user_id, kind]}}}
"""


def test_dqx_checks_on_one_column():
    """dqx (a custom engine in ODCS documents) checks that mean a clause on every row are read as it."""
    (result,) = import_document(DQX, choices=LOSSY)
    contract = parse_contract(result.text)
    assert contract.fields["user_id"].nullable is False and contract.fields["user_id"].unique is True
    assert [(c.text, c.severity) for c in contract.invariants] == [
        ("kind in ('click', 'view')", "warning"),  # criticality minor: read as warning, listed
        ("amount between 0 and 1000", "warning"),
    ]
    assert contract.fields["country"].constraint == "matches '^[A-Z]{2}(?s:.*)'"  # rlike finds it: a prefix
    base = "schema[interactions]"
    assert lost(result) == {
        f"{base}.properties[kind].quality[0].implementation.criticality": (
            "severity 'minor' is read as warning (tscontract has error and warning)"
        ),
    }
    # on some rows (filter), over several columns, or relative to now: SQL checks counting the failing rows
    checks = {c.name: (c.sql, c.severity) for c in contract.sql_checks}
    assert checks == {
        "quality_0": (
            """SELECT count(*) FROM {object} WHERE (kind = 'view') AND (NOT ("amount" IS NOT NULL))""",
            "error",
        ),
        "quality_1": (
            'SELECT count(*) FROM (SELECT "user_id", "kind" FROM {object} WHERE "user_id" IS NOT NULL AND "kind" IS '
            'NOT NULL GROUP BY "user_id", "kind" HAVING count(*) > 1)',
            "error",
        ),
        "ts_quality_0": (
            'SELECT count(*) FROM {object} WHERE NOT ("ts" IS NULL OR "ts" <= current_timestamp + INTERVAL 0 SECOND)',
            "warning",
        ),
    }


def test_dqx_sql_checks_judge_a_batch(tmp_path):
    """The SQL checks a filtered, several-column or time-relative dqx rule becomes fail exactly the rows dqx
    would: a view without an amount, a repeated (user_id, kind), an instant in the future."""
    (result,) = import_document(DQX, choices=LOSSY)
    contract = tmp_path / "interactions.yaml"
    contract.write_text(result.text)
    header = "ts,user_id,kind,amount,country"
    good = ["2026-11-30T09:00:00Z,u1,click,,DE", "2026-11-30T09:01:00Z,u2,view,5,FR"]
    (tmp_path / "good.csv").write_text("\n".join([header, *good]) + "\n")
    assert not [c.id for c in validate(contract, tmp_path / "good.csv").checks if c.status != "passed"]
    bad = [
        *good,
        "2026-11-30T09:02:00Z,u3,view,,DE",
        "2026-11-30T09:03:00Z,u1,click,1,DE",
        "2999-01-01T00:00:00Z,u4,click,2,DE",
    ]
    (tmp_path / "bad.csv").write_text("\n".join([header, *bad]) + "\n")
    report = validate(contract, tmp_path / "bad.csv")
    failed = {c.id: c.failed_rows for c in report.checks if c.status != "passed"}
    assert {k for k in failed if k.startswith("sql_checks.")} == {
        "sql_checks.quality_0",
        "sql_checks.quality_1",
        "sql_checks.ts_quality_0",
    }, failed


def test_the_imported_rules_run_alike_on_spark(spark, imported, tmp_path):
    """The clauses an import writes (matches, unique, shares, row_count, SQL checks) give the same report
    on Spark as on DuckDB (a mapping converts in DuckDB only: the file has the contract's column names)."""
    pytest.importorskip("pyspark", reason="the Spark engine is part of the dev install")
    contract = tmp_path / "trades.yaml"
    contract.write_text(imported.text)
    bad = [*GOOD[:3], "2026-11-30T09:03:00Z,sap,T1,BATS,-1.0000,US0378331005,"]
    data = tmp_path / "bad.csv"
    data.write_text("\n".join([HEADER.replace(",sym,", ",symbol,"), *bad]) + "\n")
    duck = validate(contract, data).to_json()
    on_spark = validate(contract, data, engine="spark", spark_master="local[1]").to_json()
    for report in (duck, on_spark):
        report.pop("elapsed_s"), report.pop("engine")
    assert duck == on_spark and not duck["passed"]
    failed = {c["id"] for c in duck["checks"] if c["status"] == "failed"}
    assert {"field.symbol.constraint", "field.trade_id.unique", "sql_checks.positive_price"} <= failed


@pytest.mark.parametrize(
    ("implementation", "engine", "expected"),
    [
        ("checks for orders:\n  - row_count > 10\n", "soda", {"min": 11}),
        ("checks for t:\n  - row_count between 5 and 9:\n      name: five to nine\n", "soda", {"min": 5, "max": 9}),
        ("checks for t:\n  - row_count <= 100\n", "soda", {"max": 100}),
        (
            {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 10}},
            "greatExpectations",
            {"min": 10},
        ),
        (
            {"type": "expect_table_row_count_to_equal", "kwargs": {"value": 7}},
            "greatExpectations",
            {"min": 7, "max": 7},
        ),
    ],
)
def test_soda_and_gx_row_counts(implementation, engine, expected):
    rule = {"type": "custom", "engine": engine, "implementation": implementation}
    assert odcs_rules.engine_row_count(rule) == expected


@pytest.mark.parametrize(
    ("implementation", "engine", "reason"),
    [
        ("checks for t:\n  - missing_count(a) = 0\n", "soda", "only row_count bounds"),
        ("checks for t:\n  - row_count > 1\n  - row_count < 9\n", "soda", "not one Soda row_count check"),
        (
            {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "a"}},
            "greatExpectations",
            "only row-count",
        ),
        ("SELECT 1", "montecarlo", "tscontract does not run it"),
        # the ODCS standard's own example: Soda's contract form, as text and as a mapping
        (
            "type: duplicate_percent\ncolumns: [carrier, shipment_numer]\nmust_be_less_than: 1.0\n",
            "soda",
            "Soda check type 'duplicate_percent'",
        ),
        ({"type": "duplicate_percent", "must_be_less_than": 1.0}, "soda", "Soda check type 'duplicate_percent'"),
        ("must_be_less_than: 1.0\n", "soda", "not one Soda row_count check"),
        ("checks for t: 3\n", "soda", "not one Soda row_count check"),
        ("checks for t:\n  - {}\n", "soda", "not one Soda row_count check"),
        ("- row_count > 1\n", "soda", "not one Soda row_count check"),
    ],
)
def test_other_custom_rules_are_refused(implementation, engine, reason):
    with pytest.raises(odcs_rules.Refused, match=reason):
        odcs_rules.engine_row_count({"type": "custom", "engine": engine, "implementation": implementation})


def test_a_sql_rule_is_bound_before_it_is_judged_per_row():
    """DuckDB binds the query first: an aggregate sqlglot does not know (product) is one value, a
    function DuckDB lacks (Impala's ndv) is named as such, a plain column is a value per row."""
    from tscontract.contract.types import parse_type

    types = {"price": parse_type("float64")}

    def check(query: str) -> dict[str, object]:
        rule = {"type": "sql", "query": query, "mustBeGreaterThan": 0}
        return odcs_rules.sql_check(rule, {"orders"}, {"price": "price"}, None, types)

    assert check("SELECT product(price) FROM orders") == {
        "sql": "SELECT PRODUCT(price) FROM {object}",  # rewritten by sqlglot: the table is {object}
        "must_be_greater_than": 0,
    }
    with pytest.raises(odcs_rules.Refused, match=r"calls ndv\(\), which is not on the allow-list"):
        check("SELECT ndv(price) FROM orders")
    with pytest.raises(odcs_rules.Refused, match="a value per row"):
        check("SELECT price FROM orders")


def test_a_sql_rule_in_the_servers_dialect_is_translated_to_duckdb():
    """servers[].type names the dialect the queries are written in: sqlglot translates them to DuckDB's
    (the note keeps the query as written); what it cannot translate exactly is refused."""
    from tscontract.contract.types import parse_type

    assert odcs_rules.server_dialect([{"type": "sqlserver"}, {"type": "SQLServer"}]) == "tsql"
    assert odcs_rules.server_dialect([{"type": "local"}]) is None  # files: DuckDB reads them
    assert odcs_rules.server_dialect([{"type": "postgres"}, {"type": "snowflake"}]) is None  # which one?
    types = {"order_ts": parse_type("timestamp_us_utc"), "total": parse_type("float64")}

    def check(query: str, dialect: str) -> dict[str, object]:
        rule = {"type": "sql", "query": query, "mustBeGreaterThan": 0}
        return odcs_rules.sql_check(rule, {"orders"}, {"order_ts": "order_ts", "total": "total"}, None, types, dialect)

    tsql = check("SELECT TOP 1 count(*) FROM ${model} WHERE order_ts > DATEADD(day, -1, GETDATE())", "tsql")
    assert (
        tsql["sql"] == "SELECT COUNT(*) FROM {object} WHERE order_ts > (CURRENT_TIMESTAMP + INTERVAL (-1) DAY) LIMIT 1"
    )
    assert tsql["note"] == (
        "the ODCS query, in tsql SQL: SELECT TOP 1 count(*) FROM ${model} WHERE order_ts > DATEADD(day, -1, GETDATE())"
    )
    bigquery = check("SELECT countif(total < 0) FROM `${project}.${dataset}.${model}`", "bigquery")
    assert bigquery["sql"] == "SELECT COUNT_IF(total < 0) FROM {object}"
    with pytest.raises(odcs_rules.Refused, match="no exact DuckDB form of the snowflake query: Sampling method"):
        check("SELECT count(*) FROM ${model} SAMPLE (10 ROWS)", "snowflake")
    with pytest.raises(odcs_rules.Refused, match=r"calls dateadd\(\), which is not on the allow-list"):
        check("SELECT count(*) FROM ${model} WHERE order_ts > DATEADD(day, -1, GETDATE())", None)


APOSTROPHES = """\
apiVersion: v3.1.0
kind: DataContract
id: exports-by-country
version: 1.0.0
schema:
  - name: exports
    properties:
      - {name: ts, physicalType: timestamptz, primaryKey: true, primaryKeyPosition: 2}
      - name: country
        physicalType: text
        primaryKey: true
        primaryKeyPosition: 1
        quality:
          - {metric: invalidValues, arguments: {validValues: ["Côte d'Ivoire", "O'Higgins", France]}, mustBe: 0}
"""


def test_a_valid_value_with_an_apostrophe_is_a_clause_that_judges_it(tmp_path: Path):
    """`'Côte d''Ivoire'`: the clause grammar reads a doubled quote as one, as SQL does."""
    (result,) = import_document(APOSTROPHES)
    contract = parse_contract(result.text)
    constraint = contract.fields["country"].constraint
    assert "'Côte d''Ivoire'" in constraint and "'O''Higgins'" in constraint
    header = "ts,country"
    rows = ["2026-11-30T09:00:00Z,Côte d'Ivoire", "2026-11-30T09:00:00Z,O'Higgins", "2026-11-30T09:00:00Z,France"]
    (tmp_path / "good.csv").write_text("\n".join([header, *rows]) + "\n")
    assert not [c.id for c in validate(contract, tmp_path / "good.csv").checks if c.status != "passed"]
    (tmp_path / "bad.csv").write_text("\n".join([header, *rows, "2026-11-30T09:00:00Z,Cote d''Ivoire"]) + "\n")
    failed = {c.id: c.failed_rows for c in validate(contract, tmp_path / "bad.csv").checks if c.status != "passed"}
    assert list(failed.values()) == [1], failed
