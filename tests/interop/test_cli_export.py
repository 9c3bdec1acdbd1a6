"""`tscontract export` and `tscontract import` from the command line."""

from __future__ import annotations

import json

from tests.conftest import EXAMPLES, run_cli

OHLCV = EXAMPLES / "ohlcv_1m"
SENSOR = EXAMPLES / "plant_sensor"


def test_export_single_file_to_stdout_and_json_lists_not_exported():
    text = run_cli("export", "jsonschema", OHLCV / "contract.yaml")
    assert text.returncode == 0, text.stderr
    assert json.loads(text.stdout)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    data = json.loads(run_cli("export", "avro", SENSOR / "contract.yaml", "--format", "json").stdout)
    assert data["files"] == ["plant_sensor_reading.avsc"]
    skipped = {n["check"]: n["reason"] for n in data["not_exported"]}
    assert skipped.get("key.unique")
    assert json.loads(data["content"])["type"] == "record"


def test_export_many_files_needs_out_dir(tmp_path):
    refused = run_cli("export", "dbt", OHLCV / "contract.yaml", "--catalog", OHLCV / "catalog.yaml")
    assert refused.returncode == 2 and "give --out DIR" in refused.stderr
    wrote = run_cli("export", "dbt", OHLCV / "contract.yaml", "--catalog", OHLCV / "catalog.yaml", "-o", tmp_path)
    assert wrote.returncode == 0
    assert (tmp_path / "models" / "ohlcv_1m.yml").exists() and (tmp_path / "macros").is_dir()
    assert "not exported: time.session" in wrote.stdout
    unknown = run_cli("export", "parquet", OHLCV / "contract.yaml")
    assert unknown.returncode == 2 and "unknown export format" in unknown.stderr


# the sensor contract's enum: its type is in the property's customProperties, which import odcs reads
def test_odcs_round_trip_through_the_cli(tmp_path):
    odcs = tmp_path / "c.odcs.yaml"
    odcs.write_text(run_cli("export", "odcs", SENSOR / "contract.yaml").stdout)
    back = tmp_path / "back.yaml"
    imported = run_cli("import", "odcs", odcs, "-o", back)
    assert imported.returncode == 0, imported.stderr
    original = json.loads(run_cli("show", SENSOR / "contract.yaml", "--format", "json").stdout)
    again = json.loads(run_cli("show", back, "--format", "json").stdout)
    for section in ("key", "fields", "invariants", "time", "revision_policy", "provenance_required"):
        assert again[section] == original[section], section
