"""Attacks through imported documents (issue 26): a Protobuf import of a system file, JSON Schema
``$ref`` to a file or URL, ODCS quality rules carrying SQL, ODCS names that read as paths, DDL,
dbt and ODCS documents nested or aliased into bombs. Nothing is read or fetched beyond the
document; nothing is written outside ``--out``; every refusal is one line, exit 2."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli, write
from tests.security.test_contract_attacks import BILLION_LAUGHS

SECRET = "TOP-SECRET-4711"


def _one_line(result, *needles: str) -> None:
    assert result.returncode == 2, result.stdout[-300:] + result.stderr[-300:]
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    assert all(n in result.stderr for n in needles), result.stderr


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


@pytest.fixture
def listener() -> tuple[str, list[bytes]]:
    """A loopback port that records any connection made to it: a fetched URL would show here."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                con, _ = server.accept()
            except OSError:
                continue
            seen.append(con.recv(200))
            con.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", seen
    stop.set()
    thread.join(2)
    server.close()


def test_a_protobuf_import_of_a_system_file_is_never_read(tmp_path: Path, secret: Path) -> None:
    proto = write(
        tmp_path,
        f'syntax = "proto3";\nimport "{secret.as_posix()}";\nimport "../../../{secret.name}";\n'
        "message Tick {\n  string sensor = 1;\n  int64 ts = 2;\n  double value = 3;\n}\n",
        "evil.proto",
    )
    result = run_cli("import", "protobuf", proto, "--key", "sensor", "--allow-loss")
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr and result.returncode in (0, 1, 2)


def test_json_schema_refs_to_files_and_urls_are_never_fetched(tmp_path: Path, secret: Path, listener) -> None:
    url, seen = listener
    schema = write(
        tmp_path,
        '{"title": "tick", "type": "object", "required": ["sensor"], "properties": {'
        f'"sensor": {{"$ref": "file://{secret.as_posix()}"}}, "a": {{"$ref": "{url}/x.json"}}, '
        f'"b": {{"$ref": "{secret.name}#/x"}}, "c": {{"$ref": "#/../../{secret.name}"}}}}}}',
        "evil.schema.json",
    )
    result = run_cli("import", "jsonschema", schema, "--key", "sensor", "--allow-loss")
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert seen == []


ODCS = """\
apiVersion: v3.0.2
kind: DataContract
id: ID
name: ticks
version: 1.0.0
status: active
schema:
  - name: NAME
    physicalName: ticks
    properties:
      - {name: sensor, logicalType: string, primaryKey: true, primaryKeyPosition: 1}
      - {name: value, logicalType: number}
    quality:
      - {type: sql, query: "QUERY", mustBe: 0}
"""


@pytest.mark.parametrize(
    "query",
    [
        "SELECT count(*) FROM {object}, LATERAL read_text('SECRETPATH')",
        "SELECT count(*) FROM read_csv_auto('SECRETPATH')",
        "SELECT count(*) FROM {object} WHERE getenv('HOME') IS NOT NULL",
        "SELECT count(*) FROM {object}; COPY (SELECT 1) TO 'OUT'",
    ],
)
def test_odcs_sql_rules_outside_the_allow_list_never_run_and_never_reach_the_contract(
    tmp_path: Path, secret: Path, query: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    text = ODCS.replace("ID", "ticks").replace("NAME", "ticks").replace("QUERY", query)
    text = text.replace("SECRETPATH", secret.as_posix()).replace("OUT", (tmp_path / "x.csv").as_posix())
    result = run_cli("import", "odcs", write(tmp_path, text, "evil.odcs.yaml"), "--out", out, "--allow-loss")
    assert SECRET not in result.stdout + result.stderr
    assert not (tmp_path / "x.csv").exists()
    written = "".join(p.read_text(encoding="utf-8") for p in out.iterdir())
    assert "read_text" not in written and "read_csv" not in written and "getenv" not in written


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/escaped-abs", "..", "~/escaped", "a/../../escaped"])
def test_odcs_names_that_read_as_paths_never_write_outside_out(tmp_path: Path, name: str) -> None:
    base = tmp_path / "deep" / "er"
    out = base / "out"
    out.mkdir(parents=True)
    text = ODCS.replace("ID", name).replace("NAME", name).replace("QUERY", "SELECT count(*) FROM {object}")
    text = text.replace("name: ticks\n", f"name: '{name}'\n").replace("id: ID", f"id: '{name}'")
    run_cli("import", "odcs", write(tmp_path, text, "evil.odcs.yaml"), "--out", out, "--allow-loss")
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and out not in p.parents and p.suffix == ".yaml"]
    assert [p.name for p in outside] == ["evil.odcs.yaml"]
    assert not Path("/tmp/escaped-abs.yaml").exists()


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("ddl", "CREATE TABLE t (a INT CHECK (" + "(" * 20000 + "a > 0" + ")" * 20000 + "));"),
        ("dbt", BILLION_LAUGHS),
        ("dbt", "models: " + "[" * 5000 + "]" * 5000 + "\n"),
        ("odcs", BILLION_LAUGHS),
        ("odcs", "schema: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n"),
        ("avro", '{"type": "record", "name": "r", "fields": ' + "[" * 20000 + "]" * 20000 + "}"),
        ("jsonschema", '{"type": "object", "properties": ' + '{"a": ' * 20000 + "{}" + "}" * 20000 + "}"),
        ("protobuf", 'syntax = "proto3";\n' + "message M { " * 5000 + "}" * 5000 + "\n"),
    ],
    ids=["ddl deep", "dbt laughs", "dbt deep", "odcs laughs", "odcs deep", "avro", "jsonschema", "proto"],
)
def test_bombs_in_imported_documents_are_refused_in_one_line(tmp_path: Path, fmt: str, text: str) -> None:
    _one_line(run_cli("import", fmt, write(tmp_path, text, f"evil.{fmt}")))


def test_a_soda_rule_in_odcs_that_is_a_yaml_bomb_is_refused_plainly(tmp_path: Path) -> None:
    implementation = "checks for t:\\n  - " + "[" * 3000 + "]" * 3000
    text = (
        ODCS.replace("ID", "ticks")
        .replace("NAME", "ticks")
        .replace(
            '      - {type: sql, query: "QUERY", mustBe: 0}\n',
            f'      - {{type: custom, engine: soda, implementation: "{implementation}"}}\n',
        )
    )
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli("import", "odcs", write(tmp_path, text, "evil.odcs.yaml"), "--out", out, "--allow-loss")
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 2)


# A contract's own `odcs:` section, written by hand: what it carries is written back by `export odcs`, so it
# may carry descriptions, names and links, never what replaces the export's own statement or adds checks
# no clause makes (a SQL rule a downstream ODCS tool would run while tscontract checks something else).
HOSTILE_ODCS = {
    "schema replaced": ("document:\n    schema: [{name: other, properties: []}]", "document.schema"),
    "version replaced": ("document:\n    version: 9.9.9", "document.version"),
    "apiVersion replaced": ("document:\n    apiVersion: v9", "document.apiVersion"),
    "object quality": ("object:\n    quality: [{type: sql, query: 'SELECT 1'}]", "object.quality"),
    "property quality": ("properties:\n    open:\n      quality: [{type: sql, query: 'SELECT 1'}]", "open.quality"),
    "property required": ("properties:\n    open:\n      required: false", "properties.open.required"),
    "dropped property checks": (
        "object:\n    properties: [{name: x, quality: [{type: sql, query: 'SELECT 1'}]}]",
        "object.properties[0].quality",
    ),
    "dropped properties not a list": ("object:\n    properties: {name: x}", "object.properties"),
}


def exported_odcs(tmp_path: Path, text: str) -> str:
    """``export odcs`` of the ohlcv example with ``text`` after it (its ``odcs:`` section ...): the document."""
    contract = (EXAMPLES / "ohlcv_1m" / "contract.yaml").read_text(encoding="utf-8") + text
    out = tmp_path / "out"
    result = run_cli("export", "odcs", write(tmp_path, contract), "--out", out)
    assert result.returncode == 0, result.stderr
    return next(out.glob("*.odcs.yaml")).read_text(encoding="utf-8")


@pytest.mark.parametrize("section", list(HOSTILE_ODCS.values()), ids=list(HOSTILE_ODCS))
def test_an_odcs_section_that_would_rewrite_the_export_is_refused_at_load(tmp_path: Path, section) -> None:
    carried, named = section
    text = (EXAMPLES / "ohlcv_1m" / "contract.yaml").read_text(encoding="utf-8") + "odcs:\n  " + carried + "\n"
    out = tmp_path / "out"
    result = run_cli("export", "odcs", write(tmp_path, text), "--out", out)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert named in result.stderr and "contract.yaml:" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_a_described_odcs_section_is_written_back_beside_the_contracts_own_statement(tmp_path: Path) -> None:
    carried = (
        "document:\n    id: urn:x\n    team: [{username: md-platform}]\n    description: {usage: charts}\n"
        "  object:\n    physicalName: bars_1m\n    properties: [{name: dropped_col, logicalType: string}]\n"
        "  properties:\n    open:\n      physicalName: px_open\n      type: decimal(18,8)\n"
    )
    written = exported_odcs(tmp_path, "odcs:\n  " + carried)
    assert "id: urn:x" in written and "physicalName: bars_1m" in written and "px_open" in written
    assert "dropped_col" in written and "version: 3.1.0" in written and "apiVersion: v3" in written
    assert written.count("low <= open <= high") >= 1  # the contract's own clauses, as quality


# volume as read (its type carried), then the rules
VOLUME_TYPED = "odcs:\n  properties:\n    volume: {type: decimal(24,4)}\n  rules:\n    - "
EVIL_SQL = "SELECT count(*) FROM bars WHERE read_text('/etc/passwd') IS NULL"
SQL_CHECK = "sql_checks:\n  - {name: no_negative, sql: 'SELECT count(*) FROM {object} WHERE volume < 0', must_be: 0}\n"


@pytest.mark.parametrize(
    "carried",
    [
        f'- {{clause: "low <= open <= high", rules: [{{type: sql, query: "{EVIL_SQL}", mustBe: 0}}]}}',
        f'- {{clause: "sql_checks: no_negative", rules: [{{type: sql, query: "{EVIL_SQL}", mustBe: 0}}]}}',
        '- {clause: "sql_checks: no_negative", rules: [{type: custom, engine: soda, implementation: "x"}]}',
    ],
    ids=["sql for an invariant", "another query for a sql check", "custom code for a sql check"],
)
def test_a_carried_rule_that_runs_other_sql_is_never_exported(tmp_path: Path, carried: str) -> None:
    """``odcs.rules`` gives the rule a clause came from, written back while the clause is unchanged: one with
    SQL or code an ODCS tool runs is written back only where the import reads it as the contract's own SQL
    check; otherwise the export writes the contract's clause in its own form."""
    written = exported_odcs(tmp_path, SQL_CHECK + "odcs:\n  rules:\n    " + carried + "\n")
    assert "passwd" not in written and "implementation: x" not in written
    assert "WHERE volume < 0" in written and "low <= open AND open <= high" in written  # the contract's own


def test_a_carried_sql_rule_the_import_reads_as_the_contracts_check_is_written_back_as_written(
    tmp_path: Path,
) -> None:
    query = "select count(*) from bars_1m where volume < 0"  # the table by its physical name, as written
    carried = (
        "  object: {physicalName: bars_1m}\n  rules:\n"
        f'    - {{clause: "sql_checks: no_negative", rules: [{{type: sql, query: "{query}", mustBe: 0}}]}}\n'
    )
    # as the import states it: rewritten to read {object}, in DuckDB's SQL
    stated = SQL_CHECK.replace("SELECT count(*) FROM {object}", "SELECT COUNT(*) FROM {object}")
    assert query in exported_odcs(tmp_path, stated + "odcs:\n" + carried)


@pytest.mark.parametrize(
    ("carried", "absent"),
    [
        ('{clause: "low <= open <= high", rules: [{metric: nullValues, mustBe: 0, name: evil}]}', "name: evil"),
        (
            '{clause: "close is not null", rules: [{metric: nullValues, mustBeLessThan: 50, unit: percent}]}',
            "mustBeLessThan: 50",
        ),
        ('{clause: "close is not null", rules: [{metric: rowCount, mustBe: 0}]}', "rowCount"),
        ('{clause: "close is not null", rules: [{type: text, description: "evil words"}]}', "evil words"),
        ('{clause: "volume >= 0", field: volume, options: {minimum: -1000}}', "minimum: -1000"),
    ],
    ids=["another metric", "another threshold", "a row count", "a text rule", "another bound"],
)
def test_a_carried_rule_that_reads_as_another_check_is_never_exported(
    tmp_path: Path, carried: str, absent: str
) -> None:
    """Read as ``import odcs`` reads it, a carried rule must be the very check it stands for (metric, column,
    tolerated share): otherwise the exported document would state a weaker or other check."""
    written = exported_odcs(tmp_path, VOLUME_TYPED + carried + "\n")
    assert absent not in written and "low <= open AND open <= high" in written


@pytest.mark.parametrize(
    ("carried", "present"),
    [
        ('{clause: "close is not null", rules: [{metric: nullValues, mustBe: 0, description: kept}]}', "kept"),
        ('{clause: "volume >= 0", field: volume, options: {minimum: 0}}', "minimum: 0"),
    ],
    ids=["a not-null rule", "a bound"],
)
def test_a_carried_rule_that_reads_as_its_check_is_written_back_as_written(tmp_path: Path, carried, present) -> None:
    assert present in exported_odcs(tmp_path, VOLUME_TYPED + carried + "\n")


@pytest.mark.parametrize(
    ("carried", "written", "absent"),
    [
        (
            '{type: decimal(24,4), logicalType: string, physicalType: "varchar(3)",'
            " logicalTypeOptions: {maxLength: 9}}",
            "DECIMAL(24,4)",
            "varchar(3)",
        ),
        (
            '{type: decimal(24,4), physicalType: "numeric(24,4)", logicalTypeOptions: {minimum: 5}}',
            "numeric(24,4)",
            "minimum: 5",
        ),
    ],
    ids=["another type", "a bound as a type option"],
)
def test_a_carried_property_type_is_written_back_only_as_the_fields_type(tmp_path: Path, carried, written, absent):
    """A property's carried physicalType, logicalType and options are written back while they read as the field's
    type, as the import reads them, with only the options a type states (format, zone, its scale's step)."""
    document = exported_odcs(tmp_path, "odcs:\n  properties:\n    volume: " + carried + "\n")
    volume = document[document.index("name: volume") :][:600]
    assert written in volume and absent not in document
