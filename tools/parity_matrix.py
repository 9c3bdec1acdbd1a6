"""Print the clause x export-target parity matrix from the export proofs' results.

The export tests (tests/interop/test_*.py) run each generated artifact in the real tool
on the example fixtures and write, per target, out/parity/<target>.json:
{check_id: {"good": "passed"|"failed", "bad": "passed"|"failed", "agrees": bool}}.
This script joins them into the markdown table docs/exports/index.md shows:

    make test && .venv/bin/python tools/parity_matrix.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("pandera", "gx", "dbt", "soda", "avro", "protobuf", "jsonschema")


def _flatten(data: dict[str, object]) -> dict[str, dict[str, object]]:
    """Accept {check: verdict} and {contract: {check: verdict}}; a check agrees if it agrees everywhere."""
    if all(isinstance(v, dict) and "agrees" in v for v in data.values()):
        return data  # type: ignore[return-value]
    merged: dict[str, dict[str, object]] = {}
    for per_contract in data.values():
        for check, verdict in per_contract.items():  # type: ignore[union-attr]
            seen = merged.setdefault(check, {"agrees": True})
            seen["agrees"] = bool(seen["agrees"]) and bool(verdict.get("agrees"))
    return merged


def load(directory: Path) -> dict[str, dict[str, dict[str, object]]]:
    results = {}
    for target in TARGETS:
        path = directory / f"{target}.json"
        if path.exists():
            results[target] = _flatten(json.loads(path.read_text()))
    return results


def matrix(results: dict[str, dict[str, dict[str, object]]]) -> str:
    checks = sorted({check for per_target in results.values() for check in per_target})
    targets = [t for t in TARGETS if t in results]
    lines = ["| clause | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for check in checks:
        cells = []
        for target in targets:
            verdict = results[target].get(check)
            if verdict is None:
                cells.append("–")
            else:
                cells.append("✓" if verdict.get("agrees") else "✗ differs")
        lines.append(f"| `{check}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "out" / "parity"
    results = load(directory)
    if not results:
        print(f"no parity results in {directory}: run the export tests first", file=sys.stderr)
        return 2
    print(matrix(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
