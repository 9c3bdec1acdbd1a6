"""Run code in an isolated tool environment, and load CSV files there as typed pandas frames.

The export proofs run the real tool (pandera, Great Expectations, ...) in the environment
``tools/venvs.sh`` builds at ``.venvs/<name>``: the tools conflict with each other and with
the core's pins, so they never enter the main environment. This module is imported on
both sides: by the tests (``run_in_venv``) and by the scripts inside a tool environment
(``load_typed_csv``), so it imports nothing beyond the standard library at module level.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENVS = ROOT / ".venvs"
PARITY_DIR = ROOT / "out" / "parity"
OHLCV = ROOT / "examples" / "ohlcv_1m"
# Freshness judged at 21:05 on the data of "fresh_data": in its bad file AAPL's newest bar is 14:45,
# 380 minutes old; every other series (and every series of its good file) has 20:59, 6 minutes
FRESHNESS = "freshness:\n  max_age: 370m\n"


def freshness_contract(tmp: Path) -> Path:
    path = tmp / "ohlcv_fresh.yaml"
    path.write_text((OHLCV / "contract.yaml").read_text() + FRESHNESS)
    return path


def freshness_data(tmp: Path) -> Path:
    """The OHLCV example whose 'bad' file is the good one with AAPL's feed stopped after 14:45Z."""
    directory = tmp / "fresh-data"
    (directory / "data").mkdir(parents=True)
    (directory / "catalog.yaml").write_text((OHLCV / "catalog.yaml").read_text())
    good = (OHLCV / "data" / "good.csv").read_text().splitlines()
    (directory / "data" / "good.csv").write_text("\n".join(good) + "\n")
    stopped = [line for line in good if not (line.startswith("AAPL,") and line.split(",")[1] > "2026-11-30T14:45")]
    (directory / "data" / "bad.csv").write_text("\n".join(stopped) + "\n")
    return directory


# Runs the script's main(args) with args from stdin; its return value is the only thing on
# stdout (JSON), everything the tool prints goes to stderr.
_WRAPPER = textwrap.dedent(
    """
    import json, runpy, sys
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    args = json.load(sys.stdin)
    namespace = runpy.run_path(sys.argv[1], run_name="tool_script")
    result = namespace["main"](args)
    real_stdout.write(json.dumps(result))
    """
)


def tool_python(name: str) -> Path:
    python = VENVS / name / "bin" / "python"
    if not python.exists():
        raise AssertionError(f"the {name} tool environment is missing ({python}): run tools/venvs.sh")
    return python


def run_in_venv(name: str, script: str, args: Any = None, timeout: float = 300) -> Any:
    """Run ``script`` (Python source defining ``main(args)``) in ``.venvs/<name>``; its JSON result.

    ``args`` travels as JSON on stdin. This directory is on the script's ``sys.path``, so it
    can ``from _tools import load_typed_csv``.
    """
    python = tool_python(name)
    script_dir = ROOT / "out" / "tool-scripts"
    script_dir.mkdir(parents=True, exist_ok=True)
    script_path = script_dir / f"{name}_{os.getpid()}.py"
    script_path.write_text(textwrap.dedent(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent)
    env["GX_ANALYTICS_ENABLED"] = "false"
    completed = subprocess.run(
        [str(python), "-c", _WRAPPER, str(script_path)],
        input=json.dumps(args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
        check=False,
    )
    if completed.returncode != 0:
        raise AssertionError(
            f"script failed in .venvs/{name} (exit {completed.returncode}):\n{completed.stderr[-6000:]}"
        )
    return json.loads(completed.stdout)


def pinned_version(name: str, package: str) -> str:
    """The version ``tools/requirements/<name>.txt`` pins ``package`` to."""
    for line in (ROOT / "tools" / "requirements" / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        if line.split("==")[0].strip().lower() == package.lower() and "==" in line:
            return line.split("==")[1].split("#")[0].strip()
    raise AssertionError(f"tools/requirements/{name}.txt does not pin {package}")


def write_parity(fmt: str, verdicts: dict[str, Any]) -> Path:
    """Per-check verdicts for the parity matrix (docs/exports/index.md): ``out/parity/<format>.json``."""
    PARITY_DIR.mkdir(parents=True, exist_ok=True)
    path = PARITY_DIR / f"{fmt}.json"
    path.write_text(json.dumps(verdicts, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def add_column(source: Path, target: Path, name: str, value: str) -> Path:
    """``source`` (a CSV file) with one more column, ``name``, holding ``value`` on every row."""
    lines = source.read_text(encoding="utf-8").splitlines()
    target.write_text("\n".join([f"{lines[0]},{name}"] + [f"{line},{value}" for line in lines[1:]]) + "\n")
    return target


# ---------------------------------------------------------------- inside a tool environment

_DECIMAL = re.compile(r"^[+-]?\d+(\.\d+)?$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def load_typed_csv(path: str | Path, types: dict[str, dict[str, Any]]) -> Any:
    """A CSV file as a pandas frame with the contract's types, never guessing or losing a value.

    ``types`` maps a column to its ``DataType.to_json()``. An empty cell is null. Each value
    is parsed exactly: decimals become ``Decimal`` objects (the digits as written), RFC 3339
    instants ``pd.Timestamp`` with the offset written — a naive text stays a naive
    timestamp, never read as UTC. A column whose every value fits gets the contract's dtype
    (``str``, ``Int64``, ``boolean``, ``datetime64[<unit>, UTC]``); otherwise it is an
    object column of the values as parsed, with text that did not parse kept as text. The
    index is 0-based: ``index + 1`` is the data row number tscontract reports.
    """
    import csv

    import pandas as pd

    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = list(reader)
    columns = {}
    for i, name in enumerate(header):
        raw = [row[i] if i < len(row) and row[i] != "" else None for row in rows]
        columns[name] = _typed(raw, types.get(name))
    return pd.DataFrame(columns)


def _typed(raw: list[str | None], spec: dict[str, Any] | None) -> Any:
    from datetime import date
    from decimal import Decimal

    import pandas as pd

    kind = spec["kind"] if spec else "string"
    if kind in ("string", "enum", "bytes"):
        return pd.Series(raw, dtype="str" if kind != "bytes" else object)
    if kind == "decimal":
        return pd.Series([Decimal(v) if v is not None and _DECIMAL.match(v) else v for v in raw], dtype=object)
    if kind == "int":
        bits = spec.get("bits") or 64
        limit = 2 ** (bits - 1)

        def integer(v: str) -> int | str:
            return int(v) if _INTEGER.match(v) and -limit <= int(v) < limit else v

        return _settle([None if v is None else integer(v) for v in raw], int, f"Int{bits}")
    if kind == "float":

        def number(v: str) -> float | str:
            try:
                return float(v)
            except ValueError:
                return v

        return _settle(
            [None if v is None else number(v) for v in raw], float, "float32" if spec.get("bits") == 32 else "float64"
        )
    if kind == "bool":
        flags = {"true": True, "false": False}
        return _settle([None if v is None else flags.get(v.lower(), v) for v in raw], bool, "boolean")
    if kind == "date":

        def day(v: str) -> date | str:
            try:
                return date.fromisoformat(v)
            except ValueError:
                return v

        return pd.Series([None if v is None else day(v) for v in raw], dtype=object)
    if kind == "timestamp":
        return _instants(raw, spec.get("time_unit") or "ms")
    raise AssertionError(f"no loader for {kind}")


def _settle(values: list[Any], python_type: type, dtype: str) -> Any:
    import pandas as pd

    if all(v is None or type(v) is python_type for v in values):
        return pd.Series(pd.array(values, dtype=dtype))
    return pd.Series(values, dtype=object)


def _instants(raw: list[str | None], unit: str) -> Any:
    from datetime import timedelta

    import pandas as pd

    values: list[Any] = []
    for v in raw:
        if v is None or not _RFC3339.match(v):
            values.append(v)
            continue
        try:
            values.append(pd.Timestamp(v))
        except ValueError:
            values.append(v)
    parsed = [v for v in values if v is not None]
    if all(isinstance(v, pd.Timestamp) and v.tzinfo is not None and v.utcoffset() == timedelta(0) for v in parsed):
        column = pd.to_datetime(pd.Series(values, dtype=object), utc=True)
        digits = _FRACTION_DIGITS[unit]
        fits = digits >= 9 or all(v.nanosecond == 0 and v.microsecond % 10 ** (6 - digits) == 0 for v in parsed)
        return column.dt.as_unit(unit if fits else "ns")
    return pd.Series(values, dtype=object)


# ---------------------------------------------------------------- comparing verdicts (test side)


def compare(report: Any, failures: dict[str, dict[str, Any]], exported: list[str]) -> dict[str, dict[str, Any]]:
    """Per exported check: tscontract's verdict on a file against the tool's.

    ``failures`` maps a check id the tool failed to ``{"rows": [...], "column_level": bool}``
    (1-based data rows). They agree when both pass or both fail and, where both name rows,
    on the rows: tscontract's example rows, or its row count for checks whose examples are
    keys (``key.unique``). A tool verdict without rows (a column-level failure) agrees on
    the verdict alone.
    """
    verdicts = {}
    for check_id in exported:
        ours = report.check(check_id)
        tool = failures.get(check_id)
        agrees = ours.status in ("passed", "failed") and (ours.status == "failed") == (tool is not None)
        rows = sorted({e["row"] for e in ours.examples if e.get("row") is not None})
        if agrees and tool is not None and not tool["column_level"]:
            agrees = tool["rows"] == rows if rows else len(tool["rows"]) == ours.failed_rows
        verdicts[check_id] = {
            "tscontract": ours.status,
            "tool": "passed" if tool is None else "failed",
            "rows": rows,
            "tool_rows": None if tool is None else tool["rows"],
            "agrees": agrees,
        }
    return verdicts


def parity_matrix(per_file: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """``{file: {check: verdict}}`` -> ``{check: {file: tool verdict, ..., "agrees": all}}``."""
    matrix: dict[str, dict[str, Any]] = {}
    for label, verdicts in per_file.items():
        for check_id, verdict in verdicts.items():
            entry = matrix.setdefault(check_id, {"agrees": True})
            entry[label] = verdict["tool"]
            entry["agrees"] = entry["agrees"] and verdict["agrees"]
    return matrix


def disagreements(per_file: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    return [
        f"{label} {check_id}: tscontract {v['tscontract']} rows {v['rows']}, tool {v['tool']} rows {v['tool_rows']}"
        for label, verdicts in per_file.items()
        for check_id, v in verdicts.items()
        if not v["agrees"]
    ]
