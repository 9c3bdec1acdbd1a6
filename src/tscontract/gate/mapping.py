"""Convert at ingest: source columns -> contract fields, source units -> contract units.

A mapping file::

    mapping: vendor_x_ohlcv
    transform_version: 1.2.0        # recorded on every published row
    units: {lot: {definition: 100 * base_units_per_venue_contract}}   # the source's own units
    drop: [vendor_flags]            # source columns deliberately not carried
    columns:
      symbol:    {from: ticker}
      bar_start: {from: ts, parse: epoch_ms}          # epoch_s|epoch_ms|epoch_us|epoch_ns|rfc3339
      volume:    {from: vol, unit: lots}              # converted to the contract unit (pint)
      value:     {from: reading, unit_column: raw_unit}   # per row, to the series' catalog unit
      unit:      {target_unit_of: value}              # the unit 'value' was converted to
      local_ts:  {from: t, parse: rfc3339, zone: Europe/Berlin}   # naive local time, zone stated
      source_id: {value: vendor-x}                    # a constant
      price:     {from: px, unit: degF, round: half_even}   # round to the field's scale, explicitly

The converted batch is text, validated by the same engine as any CSV: a
conversion that yields more decimals than the field's scale fails the type
check unless the mapping says ``round: half_even``. Every conversion is one SQL
expression over the whole column (affine factors from pint, exact in Decimal).
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Literal

import duckdb
from pydantic import Field, field_validator, model_validator

from tscontract.contract.catalog import Catalog, iana_zone
from tscontract.contract.loader import read_text
from tscontract.contract.located import load_located, validate_located
from tscontract.contract.model import Contract, UnitDeclaration, _Section
from tscontract.contract.units import UnitDefinition, UnitError, exact_affine
from tscontract.engines.columns import ident, sql_string
from tscontract.errors import ContractError, InputError, display_path

Parse = Literal["epoch_s", "epoch_ms", "epoch_us", "epoch_ns", "rfc3339"]
_EPOCH_US = {"epoch_s": "* 1000000", "epoch_ms": "* 1000", "epoch_us": "", "epoch_ns": "// 1000"}
_RFC3339_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"


class ColumnMap(_Section):
    from_: str | None = None
    value: str | int | Decimal | bool | None = None
    parse: Parse | None = None
    zone: str | None = None
    unit: str | None = None
    unit_column: str | None = None
    target_unit_of: str | None = None
    round: Literal["half_even"] | None = None
    note: str | None = None

    model_config = _Section.model_config | {"populate_by_name": True}

    @model_validator(mode="before")
    @classmethod
    def _rename_from(cls, data: object) -> object:
        if isinstance(data, dict) and "from" in data:
            data = {**data, "from_": data["from"]}
            del data["from"]
        return data

    @model_validator(mode="after")
    def _one_source(self) -> ColumnMap:
        sources = [x for x in (self.from_, self.value, self.target_unit_of) if x is not None]
        if len(sources) != 1:
            raise ValueError("a column takes exactly one of 'from', 'value', 'target_unit_of'")
        if self.unit and self.unit_column:
            raise ValueError("give 'unit' or 'unit_column', not both")
        return self

    _zone = field_validator("zone")(classmethod(lambda cls, value: iana_zone(value)))


class Mapping(_Section):
    mapping: str
    transform_version: str
    units: dict[str, UnitDeclaration] = Field(default_factory=dict)  # the source's own units (lot = 100 shares)
    columns: dict[str, ColumnMap] = Field(default_factory=dict)
    drop: list[str] = Field(default_factory=list)
    description: str | None = None
    note: str | None = None


def load_mapping(path: str | Path) -> Mapping:
    tree, errors = load_located(read_text(path, "mapping"), display_path(path), ContractError, "a mapping")
    return validate_located(Mapping, tree, errors)


def _trim_zeros(text: str) -> str:
    """Decimal text without trailing fraction zeros (``850.000`` -> ``850``; ``100`` stays ``100``)."""
    return f"CASE WHEN strpos({text}, '.') > 0 THEN rtrim(rtrim({text}, '0'), '.') ELSE {text} END"


class _Converter:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        raw: str,
        mapping: Mapping,
        contract: Contract,
        catalog: Catalog | None,
        source_columns: dict[str, str],
    ) -> None:
        self.con = con
        self.raw = raw
        self.mapping = mapping
        self.contract = contract
        self.catalog = catalog
        self.source_columns = source_columns
        self.declared = contract.unit_declarations + tuple(
            UnitDefinition(name, decl.dimension, decl.definition) for name, decl in mapping.units.items()
        )
        self.joins: list[str] = []
        self.converted_unit: dict[str, str] = {}

    def source(self, name: str) -> str:
        if name not in self.source_columns:
            raise InputError(
                f"mapping {self.mapping.mapping}: source column {name!r} is not in the input "
                f"(it has {', '.join(self.source_columns)})"
            )
        return f"r.{ident(name)}"

    def target_unit(self, field: str) -> str | None:
        spec = self.contract.fields[field]
        return None if spec.unit_from_catalog else spec.unit

    def decimal_text(self, expr: str, field: str, rule: ColumnMap) -> str:
        dtype = self.contract.fields[field].type
        number = f"TRY_CAST({expr} AS DECIMAL(38,18))"
        if rule.round == "half_even" and dtype.kind == "decimal":
            return f"CAST(round_even({number}, {dtype.scale}) AS VARCHAR)"
        trimmed = _trim_zeros(f"CAST({number} AS VARCHAR)")
        return f"CASE WHEN {number} IS NULL THEN CAST({expr} AS VARCHAR) ELSE {trimmed} END"

    def exact_conversion(self, expr: str, field: str, rule: ColumnMap, factors: tuple[str, str, str]) -> str:
        """``(x * P + A) / L`` with integers P, A, L: exact in DECIMAL when L = 1; otherwise the
        quotient is rounded to the field's scale and kept only if multiplying back gives ``x * P + A``
        exactly; a value that does not fit the scale keeps its digits and fails the type check."""
        multiplier, addend, divisor = factors
        scale = self.contract.fields[field].type.scale or 0
        numerator = f"(TRY_CAST({expr} AS DECIMAL(38,18)) * {multiplier} + {addend})"
        if rule.round == "half_even":
            return f"CAST(round_even({numerator} / {divisor}, {scale}) AS VARCHAR)"
        fitted = f"CAST(round({numerator} / {divisor}, {scale}) AS DECIMAL(38,{scale}))"
        exact = _trim_zeros(f"CAST({fitted} AS VARCHAR)")
        return (
            f"CASE WHEN {numerator} IS NULL THEN CAST({expr} AS VARCHAR) "
            f"WHEN {fitted} * {divisor} = {numerator} THEN {exact} "
            f"ELSE CAST({numerator} / {divisor} AS VARCHAR) END"
        )

    def factors(self, source_unit: str, target_unit: str) -> tuple[str, str, str]:
        """Integers (P, A, L) with ``to = (from * P + A) / L``, exact."""
        factor, offset = exact_affine(source_unit, target_unit, declared=self.declared)
        common = math.lcm(factor.denominator, offset.denominator)
        multiplier = factor.numerator * (common // factor.denominator)
        addend = offset.numerator * (common // offset.denominator)
        return str(multiplier), str(addend), str(common)

    def convert_fixed(self, expr: str, field: str, rule: ColumnMap) -> str:
        target = self.target_unit(field)
        if target is None:
            raise InputError(f"mapping column {field}: the field's unit comes from the catalog; use unit_column")
        try:
            factors = self.factors(rule.unit or "", target)
        except UnitError as exc:
            raise InputError(f"mapping column {field}: {exc}") from None
        return self.exact_conversion(expr, field, rule, factors)

    def convert_per_row(self, expr: str, field: str, rule: ColumnMap, series: str) -> str:
        """Per-row source units to the catalog unit of each row's series, through a factor table."""
        if self.catalog is None:
            raise InputError(f"mapping column {field}: converting to the catalog unit needs --catalog")
        unit_col = self.source(rule.unit_column or "")
        series_col = self.series_expr(series)
        pairs = self.con.execute(
            f"SELECT DISTINCT CAST({unit_col} AS VARCHAR), CAST({series_col} AS VARCHAR) FROM {self.raw} r"
        ).fetchall()
        rows = []
        for source_unit, sid in pairs:
            entry = self.catalog.series.get(sid) if sid is not None else None
            if source_unit is None or entry is None or entry.unit is None:
                continue
            try:
                multiplier, addend, divisor = self.factors(source_unit, entry.unit)
            except UnitError:
                continue  # left unconverted: the unit clause rejects it loudly
            rows.append((source_unit, sid, entry.unit, multiplier, addend, divisor))
        table = f"__tsc_factors_{field}"
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} (u VARCHAR, s VARCHAR, target VARCHAR, "
            "multiplier HUGEINT, addend HUGEINT, divisor HUGEINT)"
        )
        if rows:
            self.con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)", rows)
        alias = f"f_{field}"
        self.joins.append(
            f"LEFT JOIN {table} {alias} ON {alias}.u = CAST({unit_col} AS VARCHAR) "
            f"AND {alias}.s = CAST({series_col} AS VARCHAR)"
        )
        self.converted_unit[field] = f"coalesce({alias}.target, CAST({unit_col} AS VARCHAR))"
        factors = (f"{alias}.multiplier", f"{alias}.addend", f"{alias}.divisor")
        converted = self.exact_conversion(expr, field, rule, factors)
        return f"CASE WHEN {alias}.divisor IS NULL THEN CAST({expr} AS VARCHAR) ELSE {converted} END"

    def series_expr(self, series: str) -> str:
        rule = self.mapping.columns.get(series)
        if rule is not None and rule.from_:
            return self.source(rule.from_)
        return self.source(series)

    def timestamp_text(self, expr: str, rule: ColumnMap) -> str:
        if rule.parse in _EPOCH_US:
            instant = f"make_timestamptz(TRY_CAST(TRY_CAST({expr} AS HUGEINT) {_EPOCH_US[rule.parse]} AS BIGINT))"
            return f"strftime({instant}, '{_RFC3339_UTC}')"
        text = f"CAST({expr} AS VARCHAR)"
        if rule.zone is not None:
            local = f"TRY_CAST({text} AS TIMESTAMP)"
            return f"strftime(timezone({sql_string(rule.zone)}, {local}), '{_RFC3339_UTC}')"
        # an instant with an offset becomes UTC; a naive text stays as it is and fails the UTC rule
        has_offset = f"regexp_matches({text}, '([Zz]|[+-]\\d{{2}}:\\d{{2}})$')"
        utc = f"strftime(TRY_CAST({text} AS TIMESTAMPTZ), '{_RFC3339_UTC}')"
        return f"CASE WHEN {has_offset} AND {utc} IS NOT NULL THEN {utc} ELSE {text} END"

    def column(self, field: str, rule: ColumnMap) -> str:
        spec = self.contract.fields[field]
        if rule.value is not None:
            value = str(rule.value).lower() if isinstance(rule.value, bool) else str(rule.value)
            return sql_string(value)
        if rule.target_unit_of is not None:
            return "NULL"  # filled once the other column's conversion is known
        expr = self.source(rule.from_ or "")
        if rule.parse is not None or rule.zone is not None:
            return self.timestamp_text(expr, rule)
        if rule.unit is not None:
            return self.convert_fixed(expr, field, rule)
        if rule.unit_column is not None:
            series = self.contract.series_column
            if series is None:
                raise InputError("per-row unit conversion needs the contract's series column")
            return self.convert_per_row(expr, field, rule, series)
        if spec.type.kind == "decimal" and self.source_columns.get(rule.from_ or "", "VARCHAR") != "VARCHAR":
            return self.decimal_text(expr, field, rule)
        return f"CAST({expr} AS VARCHAR)"

    def build(self, out: str) -> None:
        for name in self.mapping.columns:
            if name not in self.contract.fields:
                raise InputError(f"mapping {self.mapping.mapping}: {name!r} is not a field of {self.contract.contract}")
        mapped_sources = {r.from_ for r in self.mapping.columns.values() if r.from_}
        mapped_sources |= {r.unit_column for r in self.mapping.columns.values() if r.unit_column}
        selects = ["r.__row AS __row"]
        exprs: dict[str, str] = {}
        for field, rule in self.mapping.columns.items():
            exprs[field] = self.column(field, rule)
        for field, rule in self.mapping.columns.items():
            if rule.target_unit_of is not None:
                source_field = rule.target_unit_of
                if source_field in self.converted_unit:
                    exprs[field] = self.converted_unit[source_field]
                else:
                    source_rule = self.mapping.columns.get(source_field)
                    target = self.target_unit(source_field)
                    if source_rule is None or source_rule.unit is None or target is None:
                        raise InputError(f"mapping column {field}: {source_field!r} is not converted")
                    exprs[field] = sql_string(target)
        for name, expr in exprs.items():
            selects.append(f"{expr} AS {ident(name)}")
        # unmapped source columns pass through (as text), unless dropped or consumed by the mapping
        for name in self.source_columns:
            if name in exprs or name in mapped_sources or name in self.mapping.drop or name == "__row":
                continue
            selects.append(f"{self._passthrough(name)} AS {ident(name)}")
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {out} AS SELECT {', '.join(selects)} FROM {self.raw} r "
            f"{' '.join(self.joins)}"
        )

    def _passthrough(self, name: str) -> str:
        physical = self.source_columns[name]
        if physical.startswith("TIMESTAMP WITH TIME ZONE"):
            return f"strftime(r.{ident(name)}, '{_RFC3339_UTC}')"
        if physical.startswith("DECIMAL"):
            return _trim_zeros(f"CAST(r.{ident(name)} AS VARCHAR)")
        return f"CAST(r.{ident(name)} AS VARCHAR)"


def apply_mapping(
    con: duckdb.DuckDBPyConnection, raw: str, out: str, mapping: Mapping, contract: Contract, catalog: Catalog | None
) -> None:
    """Create ``out`` (all text, ``__row`` kept) from ``raw`` as ``mapping`` says."""
    columns = {str(r[0]): str(r[1]) for r in con.execute(f"DESCRIBE {raw}").fetchall()}
    _Converter(con, raw, mapping, contract, catalog, columns).build(out)
