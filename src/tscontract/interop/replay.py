"""Replay: read historical Avro files through today's reader and validate them against today's contract.

A compatibility mode is tested, not assumed: every file written with an older schema is
read with fastavro's schema resolution using the new reader schema (the contract's Avro
export, or a given ``.avsc``), then the records are validated by the engine against the
new contract. A file the reader cannot resolve is reported with the resolution error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from tscontract.contract.catalog import Catalog
from tscontract.contract.model import Contract
from tscontract.engines import validate
from tscontract.errors import InputError, display_path
from tscontract.interop.exports import export
from tscontract.plan.result import ValidationReport
from tscontract.typemap.arrow import arrow_type


@dataclass
class ReplayedFile:
    path: str
    rows: int = 0
    error: str | None = None
    report: ValidationReport | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.report is not None and self.report.passed

    def to_json(self) -> dict[str, Any]:
        failed = (
            []
            if self.report is None
            else [
                {"id": c.id, "clause": c.clause, "status": c.status, "failed_rows": c.failed_rows}
                for c in self.report.checks
                if c.status != "passed"
            ]
        )
        return {"file": self.path, "ok": self.ok, "rows": self.rows, "error": self.error, "failed_checks": failed}


@dataclass
class ReplayResult:
    contract: str
    version: str
    reader: str
    files: list[ReplayedFile] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "version": self.version,
            "reader": self.reader,
            "ok": self.ok,
            "files": [f.to_json() for f in self.files],
        }


def _fastavro() -> Any:
    try:
        import fastavro
    except ImportError:
        raise InputError("replay reads Avro with fastavro: pip install 'tscontract[avro]'") from None
    return fastavro


def reader_schema(contract: Contract, avsc: str | Path | None = None) -> dict[str, Any]:
    """The new reader schema: a given ``.avsc``, else the contract's own Avro export."""
    if avsc is not None:
        try:
            return json.loads(Path(avsc).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read reader schema {display_path(avsc)}: {exc}") from None
    return json.loads(export("avro", contract).artifacts[0].content)


def replay(
    contract: Contract,
    files: list[str | Path],
    *,
    catalog: Catalog | None = None,
    avsc: str | Path | None = None,
    now: datetime | None = None,
) -> ReplayResult:
    fastavro = _fastavro()
    schema = reader_schema(contract, avsc)
    try:
        parsed = fastavro.parse_schema(schema)
    except Exception as exc:  # fastavro raises several types for invalid schemas
        raise InputError(f"the reader schema is not valid Avro: {exc}") from None
    arrow_schema = pa.schema([(name, arrow_type(spec.type)) for name, spec in contract.fields.items()])
    result = ReplayResult(contract.contract, contract.version, display_path(avsc) if avsc else "contract's Avro export")
    for file in files:
        path = Path(file)
        replayed = ReplayedFile(display_path(path))
        result.files.append(replayed)
        try:
            with path.open("rb") as handle:
                records = list(fastavro.reader(handle, reader_schema=parsed))
        except FileNotFoundError:
            replayed.error = "file not found"
            continue
        except Exception as exc:  # a schema-resolution failure is the finding, not a crash
            replayed.error = f"cannot be read with the new reader: {type(exc).__name__}: {exc}"
            continue
        replayed.rows = len(records)
        table = pa.Table.from_pylist(records, schema=arrow_schema)
        replayed.report = validate(contract, table, catalog=catalog, now=now)
    return result
