"""Convert a raw file: source columns -> contract fields, source units -> contract units.

A mapping file (every key is in docs/raw-vendor-files.md)::

    mapping: vendor_x_ohlcv
    transform_version: 1.2.0        # recorded on every published row
    units: {lot: {definition: 100 * base_units_per_venue_contract}}   # the source's own units
    drop: [vendor_flags]            # source columns deliberately not carried
    csv: {delimiter: ';'}           # the CSV dialect (RFC 4180 unless said)
    null_values: ['-200']           # texts that mean "no value", in every column
    decimal_separator: ','          # numbers written 2,6
    filter: "Date IS NOT NULL"      # rows kept; the others are dropped and counted
    columns:
      symbol:    {file_name: '^(?P<symbol>[A-Z.]+)_'}             # from each file's base name
      bar_start: {from: ts, parse: epoch_ms}                      # epoch_s|epoch_ms|epoch_us|epoch_ns|rfc3339
      ts:        {from: [Date, Time], format: '%d/%m/%Y %H.%M.%S', zone: Europe/Rome}
      local_ts:  {from: t, parse: rfc3339, zone: catalog device_zone, ambiguous: earlier}
      volume:    {from: vol, unit: lots}                          # converted to the contract unit (pint)
      value:     {from: reading, unit_column: raw_unit}           # per row, to the series' catalog unit
      unit:      {target_unit_of: value}                          # the unit 'value' was converted to
      source_id: {value: vendor-x}                                # a constant
      price:     {from: px, round: half_even, null_values: []}    # round to the field's scale, explicitly

The converted batch is text, validated by the same engine as any CSV: a
conversion that yields more decimals than the field's scale fails the type
check unless the mapping says ``round: half_even``. Every conversion is one SQL
expression over the whole column (affine factors from pint, exact in Decimal). A
value that cannot be converted keeps its original text and a reason (a column
``__mr_<field>`` of the converted table), which the engine reports as the field's
type failure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Literal

import duckdb
import sqlglot.expressions as exp
from pydantic import Field, PrivateAttr, field_validator, model_validator

from tscontract.contract.catalog import Catalog
from tscontract.contract.grammar import ClauseSyntaxError
from tscontract.contract.located import LocatedErrors, load_located, validate_located
from tscontract.contract.model import Contract, UnitDeclaration, _Section
from tscontract.contract.positions import format_path
from tscontract.contract.regex import check_backtracking
from tscontract.contract.sql_allow import CONDITION, parse_contract_sql
from tscontract.contract.text_files import read_text
from tscontract.contract.units import UnitDefinition, UnitError, exact_affine
from tscontract.contract.zones import offset_minutes, zone_name
from tscontract.engines.inputs.csv_dialect import CsvDialect
from tscontract.engines.inputs.local_time import CATALOG_ZONE, Ambiguous, Nonexistent, resolve_local
from tscontract.engines.inputs.sentinels import (
    Sentinels,
    check_against_contract,
    check_source_type,
    flag_sql,
    matched_sql,
    near_miss_sql,
)
from tscontract.engines.relations import small_table
from tscontract.errors import ContractError, InputError, TscontractError, display_path
from tscontract.sql.columns import (
    EPOCH_PLAUSIBLE,
    REASON_PREFIX,
    ident,
    instant_text_of,
    is_instant_type,
    sql_string,
)

Parse = Literal["epoch_s", "epoch_ms", "epoch_us", "epoch_ns", "rfc3339"]
_EPOCH_US = {"epoch_s": "* 1000000", "epoch_ms": "* 1000", "epoch_us": "", "epoch_ns": "// 1000"}
_RFC3339_UTC = "%Y-%m-%dT%H:%M:%S.%fZ"


def _utc_text(instant: str) -> str:
    """An instant as RFC 3339 UTC text: seconds, and the microseconds only when there are any."""
    return (
        f"CASE WHEN microsecond({instant}) % 1000000 = 0 THEN strftime({instant}, '%Y-%m-%dT%H:%M:%SZ') "
        f"ELSE strftime({instant}, '{_RFC3339_UTC}') END"
    )


_LOCAL_ISO = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$"
_ROUNDABLE = r"^[+-]?\d{1,20}(\.\d{1,18})?$"  # fits DECIMAL(38,18) exactly, so rounding is the only step
FILES_TABLE = "__tsc_files"
ZONES_TABLE = "__tsc_zones"


def _texts(value: list[object] | None) -> list[str] | None:
    """Sentinels as the text they are written as (``-200`` in YAML is a number; in the file, text)."""
    if value is None:
        return None
    for item in value:
        if isinstance(item, bool) or not isinstance(item, str | int | Decimal):
            raise ValueError(f"null_values are texts or numbers, got {item!r}")
    return [str(item) for item in value]


def _zone(value: str | None) -> str | None:
    if value is None or value == CATALOG_ZONE:
        return value
    return zone_name(value, repr(CATALOG_ZONE))


class ColumnMap(_Section):
    from_: str | list[str] | None = None
    value: str | int | Decimal | bool | None = None
    file_name: str | None = None
    target_unit_of: str | None = None
    parse: Parse | None = None
    format: str | None = None
    zone: str | None = None
    nonexistent: Nonexistent = "fail"
    ambiguous: Ambiguous = "fail"
    null_values: list[str | int | Decimal] | None = None
    decimal_separator: Literal[".", ","] | None = None
    unit: str | None = None
    unit_column: str | None = None
    round: Literal["half_even"] | None = None
    sentinels: Sentinels | None = None  # source values meaning "no reading": NULL here, a member in a flag
    note: str | None = None

    model_config = _Section.model_config | {"populate_by_name": True}

    @model_validator(mode="before")
    @classmethod
    def _rename_from(cls, data: object) -> object:
        if isinstance(data, dict) and "from" in data:
            data = {**data, "from_": data["from"]}
            del data["from"]
        return data

    _check_zone = field_validator("zone")(classmethod(lambda cls, value: _zone(value)))
    _check_nulls = field_validator("null_values")(classmethod(lambda cls, value: _texts(value)))

    @field_validator("file_name")
    @classmethod
    def _one_group(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            pattern = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        try:
            check_backtracking(value)  # matched against file names by Python's re, which backtracks
        except ClauseSyntaxError as exc:
            raise ValueError(exc.message) from None
        if len(pattern.groupindex) != 1:
            raise ValueError("give the part of the file name to take as one named group, e.g. (?P<symbol>[A-Z]+)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ColumnMap:
        sources = [x for x in (self.from_, self.value, self.target_unit_of, self.file_name) if x is not None]
        if len(sources) != 1:
            raise ValueError("a column takes exactly one of 'from', 'value', 'file_name', 'target_unit_of'")
        if self.unit and self.unit_column:
            raise ValueError("give 'unit' or 'unit_column', not both")
        if self.parse is not None and self.format is not None:
            raise ValueError("give 'parse' or 'format', not both")
        if isinstance(self.from_, list) and (len(self.from_) < 2 or (self.format is None and self.parse != "rfc3339")):
            raise ValueError("'from' with a list joins date and time columns (with a space): give 'format'")
        offset_in_text = self.format is not None and "%z" in self.format
        if offset_in_text and self.zone is not None:
            raise ValueError("the format reads the UTC offset (%z): no 'zone'")
        if self.format is not None and not offset_in_text and self.zone is None:
            raise ValueError(
                "a format without %z reads a local time: give 'zone' (IANA zone, UTC offset or 'catalog device_zone')"
            )
        if self.sentinels is not None and (not isinstance(self.from_, str) or self.is_time):
            raise ValueError("sentinels apply to a value read 'from' one source column (not a time)")
        if self.parse in _EPOCH_US and self.zone is not None:
            raise ValueError("an epoch is an instant: no 'zone'")
        has_rules = self.nonexistent != "fail" or self.ambiguous != "fail"
        if has_rules and (self.zone is None or offset_minutes(self.zone) is not None):
            raise ValueError("'nonexistent' and 'ambiguous' apply to a zone with DST changes")
        return self

    @property
    def is_time(self) -> bool:
        return self.parse is not None or self.format is not None or self.zone is not None

    @property
    def sources(self) -> list[str]:
        return self.from_ if isinstance(self.from_, list) else [self.from_] if self.from_ else []


class Mapping(_Section):
    mapping: str
    transform_version: str
    units: dict[str, UnitDeclaration] = Field(default_factory=dict)  # the source's own units (lot = 100 shares)
    columns: dict[str, ColumnMap] = Field(default_factory=dict)
    drop: list[str] = Field(default_factory=list)
    null_values: list[str | int | Decimal] = Field(default_factory=list)
    decimal_separator: Literal[".", ","] = "."
    filter: str | None = None
    # ``drop``: rows whose instant stands outside the series' exchange session (pre- and post-market
    # bars of a regular-hours contract) are dropped at conversion, counted, recorded in the run
    outside_session: Literal["keep", "drop"] = "keep"
    csv: CsvDialect | None = None  # how the raw CSV files are read (RFC 4180 unless said)
    description: str | None = None
    note: str | None = None
    _located: LocatedErrors | None = PrivateAttr(default=None)  # the file's positions, for errors at a clause

    _check_nulls = field_validator("null_values")(classmethod(lambda cls, value: _texts(value)))

    @field_validator("filter")
    @classmethod
    def _filter(cls, value: str | None) -> str | None:
        if value is not None:
            _parse_filter(value)
        return value

    @property
    def needs_file_names(self) -> bool:
        return any(rule.file_name for rule in self.columns.values())

    def error_at(self, path: tuple[str | int, ...], message: str) -> TscontractError:
        """An error at a clause of the mapping: file, line and column when it was read from a file."""
        if self._located is not None:
            return self._located.at(path, message)
        return InputError(f"mapping {self.mapping}: {format_path(path)}: {message}")


def _parse_filter(text: str) -> exp.Expr:
    """A row filter: one SQL expression over the source's columns, built only from what
    contract/sql_allow.py allows (no queries, aggregates, table functions or statements)."""
    tree = parse_contract_sql(text, "a row filter", kind=CONDITION)
    for node in tree.find_all(exp.Column):
        if node.table:
            raise ValueError(f"name source columns without a table: {node.sql('duckdb')!r}")
    return tree


def filter_sql(mapping: Mapping, source_columns: list[str], alias: str = "r") -> str:
    """The mapping's filter as DuckDB SQL over ``alias``'s columns; unknown columns are an input error."""
    tree = _parse_filter(mapping.filter or "TRUE")
    for column in list(tree.find_all(exp.Column)):
        if column.name not in source_columns:
            raise InputError(
                f"mapping {mapping.mapping}: filter {mapping.filter!r} names {column.name!r}, "
                f"which is not a column of the input (it has {', '.join(source_columns)})"
            )
        column.replace(exp.column(column.name, table=alias, quoted=True))
    return f"COALESCE(({tree.sql(dialect='duckdb')}), FALSE)"


def load_mapping(path: str | Path) -> Mapping:
    tree, errors = load_located(read_text(path, "mapping"), display_path(path), ContractError, "a mapping")
    mapping = validate_located(Mapping, tree, errors)
    mapping._located = errors
    return mapping


def _trim_zeros(text: str) -> str:
    """Decimal text without trailing fraction zeros (``850.000`` -> ``850``; ``100`` stays ``100``)."""
    return f"CASE WHEN strpos({text}, '.') > 0 THEN rtrim(rtrim({text}, '0'), '.') ELSE {text} END"


def _quoted(text: str) -> str:
    """SQL text giving ``'<value of text>'`` (a value shown quoted in a reason)."""
    return f"'''' || {text} || ''''"


class _Converter:
    """Builds the converted table in one statement: layers of helper columns, then the fields.

    Layer 0 joins each row's file (values taken from file names), layer 1 reads local times
    and looks up the catalog zone, layer 2 ranks repeated local times (``file_order``), layer
    3 resolves local times to instants; the last SELECT gives each field's text and, where a
    value can fail to convert, its reason.
    """

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
        self.layer0: list[str] = []  # helper columns of each layer
        self.layer1: list[str] = []
        self.layer2: list[str] = []
        self.layer3: list[str] = []
        self.zone_join = False
        self.flags: dict[str, str] = {}  # flag field -> its SQL (set by a value's sentinels)

    # ------------------------------------------------------------ source values
    def source(self, name: str) -> str:
        if name not in self.source_columns:
            raise InputError(
                f"mapping {self.mapping.mapping}: source column {name!r} is not in the input "
                f"(it has {', '.join(c for c in self.source_columns if not c.startswith(('__tsc_', '__jt_')))})"
            )
        return f"r.{ident(name)}"

    def nulls(self, rule: ColumnMap) -> list[str]:
        return rule.null_values if rule.null_values is not None else self.mapping.null_values  # type: ignore[return-value]

    def value_of(self, name: str, rule: ColumnMap) -> str:
        """A source column with the mapping's sentinels as NULL (its physical type kept)."""
        expr = self.source(name)
        nulls = self.nulls(rule)
        if not nulls:
            return expr
        listed = ", ".join(sql_string(n) for n in nulls)
        return f"CASE WHEN CAST({expr} AS VARCHAR) IN ({listed}) THEN NULL ELSE {expr} END"

    def text_of(self, rule: ColumnMap) -> str:
        """The text a rule reads: one column, or several joined with a space (NULL if any is)."""
        return " || ' ' || ".join(self._text(name, rule) for name in rule.sources)

    def _text(self, name: str, rule: ColumnMap) -> str:
        # an instant column (a zone in the file, any unit) reads as RFC 3339 UTC, every digit it holds
        physical = self.source_columns.get(name, "VARCHAR")
        if is_instant_type(physical):
            return instant_text_of(self.value_of(name, rule), physical)
        return f"CAST({self.value_of(name, rule)} AS VARCHAR)"

    def file_value(self, field: str, rule: ColumnMap) -> str:
        self.layer0.append(f"f.{ident(field)} AS {ident('__tsc_file_' + field)}")
        return f"r.{ident('__tsc_file_' + field)}"

    # ------------------------------------------------------------ numbers and units
    def target_unit(self, field: str) -> str | None:
        spec = self.contract.fields[field]
        return None if spec.unit_from_catalog else spec.unit

    def decimal_text(self, expr: str, field: str, rule: ColumnMap, text: bool) -> str:
        dtype = self.contract.fields[field].type
        number = f"TRY_CAST({expr} AS DECIMAL(38,18))"
        if rule.round == "half_even":
            rounded = f"CAST(round_even({number}, {dtype.scale}) AS VARCHAR)"
            if text:  # only plain decimals that DECIMAL(38,18) holds exactly; anything else fails as written
                return f"CASE WHEN regexp_full_match({expr}, '{_ROUNDABLE}') THEN {rounded} ELSE {expr} END"
            return f"coalesce({rounded}, CAST({expr} AS VARCHAR))"
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
            rounded = f"CAST(round_even({numerator} / {divisor}, {scale}) AS VARCHAR)"
            return f"coalesce({rounded}, CAST({expr} AS VARCHAR))"
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
            f"SELECT DISTINCT CAST({unit_col} AS VARCHAR), CAST({series_col} AS VARCHAR) FROM {self.layered(0)} r"
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
        table = f"__tsc_factors_{len(self.joins)}"
        columns = [("u", "VARCHAR"), ("s", "VARCHAR"), ("target", "VARCHAR")]
        small_table(
            self.con, table, [*columns, ("multiplier", "HUGEINT"), ("addend", "HUGEINT"), ("divisor", "HUGEINT")], rows
        )
        alias = f"f_{len(self.joins)}"
        self.joins.append(
            f"LEFT JOIN {table} {alias} ON {alias}.u = CAST({unit_col} AS VARCHAR) "
            f"AND {alias}.s = CAST({series_col} AS VARCHAR)"
        )
        self.converted_unit[field] = f"coalesce({alias}.target, CAST({unit_col} AS VARCHAR))"
        factors = (f"{alias}.multiplier", f"{alias}.addend", f"{alias}.divisor")
        converted = self.exact_conversion(expr, field, rule, factors)
        return f"CASE WHEN {alias}.divisor IS NULL THEN CAST({expr} AS VARCHAR) ELSE {converted} END"

    def series_expr(self, series: str) -> str:
        """The row's series id as the mapping gives it (over layer 0 and later)."""
        rule = self.mapping.columns.get(series)
        if rule is not None and rule.file_name:
            return f"r.{ident('__tsc_file_' + series)}"
        if rule is not None and rule.value is not None:
            return sql_string(str(rule.value))
        if rule is not None and isinstance(rule.from_, str):
            return self.source(rule.from_)
        return self.source(series)

    def number(self, field: str, rule: ColumnMap) -> tuple[str, str | None]:
        """A numeric field: sentinels, the decimal separator, units and rounding."""
        name = rule.from_
        assert isinstance(name, str)
        kind = self.contract.fields[field].type.kind
        physical = self.source_columns.get(name, "VARCHAR")
        text = physical == "VARCHAR"
        expr = self.value_of(name, rule)
        reason = None
        separator = rule.decimal_separator or self.mapping.decimal_separator
        if text and separator == "," and kind in ("decimal", "float"):
            reason = (
                f"CASE WHEN strpos({expr}, '.') > 0 THEN {_quoted(expr)} || "
                "' has ''.'' where the mapping''s decimal separator is '',''' END"
            )
            expr = f"replace({expr}, ',', '.')"
        if rule.unit is not None:
            return self.convert_fixed(expr, field, rule), reason
        if rule.unit_column is not None:
            series = self.contract.series_column
            if series is None:
                raise InputError("per-row unit conversion needs the contract's series column")
            return self.convert_per_row(expr, field, rule, series), reason
        if kind == "decimal" and (rule.round is not None or not text):
            return self.decimal_text(expr, field, rule, text), reason
        return f"CAST({expr} AS VARCHAR)", reason

    # ------------------------------------------------------------ time
    def zone_sql(self, rule: ColumnMap) -> tuple[str, bool]:
        """The zone as SQL (the catalog's per series) or as a name; whether it is SQL."""
        if rule.zone != CATALOG_ZONE:
            return rule.zone or "UTC", False
        if self.catalog is None:
            raise InputError(f"mapping {self.mapping.mapping}: 'zone: {CATALOG_ZONE}' needs --catalog")
        series = self.contract.series_column
        if series is None:
            raise InputError(f"mapping {self.mapping.mapping}: 'zone: {CATALOG_ZONE}' needs the contract's series")
        if not self.zone_join:
            rows = [(sid, entry.device_zone) for sid, entry in self.catalog.series.items()]
            small_table(self.con, ZONES_TABLE, [("s", "VARCHAR"), ("zone", "VARCHAR")], rows)
            self.layer1.append(
                f"(SELECT zone FROM {ZONES_TABLE} z WHERE z.s = CAST({self.series_expr(series)} AS VARCHAR)) "
                "AS __tsc_zone"
            )
            self.layer1.append(f"CAST({self.series_expr(series)} AS VARCHAR) AS __tsc_zone_series")
            self.zone_join = True
        return "r.__tsc_zone", True

    def timestamp(self, field: str, rule: ColumnMap) -> tuple[str, str | None]:
        """A time field: the instant as RFC 3339 UTC text, or the text as written and why not."""
        text = self.text_of(rule)
        if rule.parse in _EPOCH_US:
            instant = f"make_timestamptz(TRY_CAST(TRY_CAST({text} AS HUGEINT) {_EPOCH_US[rule.parse]} AS BIGINT))"
            low, high = EPOCH_PLAUSIBLE
            reason = (
                f"CASE WHEN {text} IS NULL THEN NULL WHEN {instant} IS NULL THEN "
                f"{_quoted(text)} || ' is not an {rule.parse} integer' "
                f"WHEN {instant} NOT BETWEEN TIMESTAMPTZ '{low}' AND TIMESTAMPTZ '{high}' THEN "
                f"{_quoted(text)} || ' as {rule.parse} is outside {low}..{high}: wrong epoch unit?' END"
            )
            return f"coalesce({_utc_text(instant)}, {text})", reason
        if rule.zone is None and rule.format is None:  # rfc3339 as written: an offset becomes UTC
            has_offset = f"regexp_matches({text}, '([Zz]|[+-]\\d{{2}}:\\d{{2}})$')"
            utc = _utc_text(f"TRY_CAST({text} AS TIMESTAMPTZ)")
            return f"CASE WHEN {has_offset} AND {utc} IS NOT NULL THEN {utc} ELSE {text} END", None
        h = len(self.layer1)
        txt, parsed = f"r.__tsc_txt_{h}", f"r.__tsc_parsed_{h}"
        if rule.format is not None:
            parse = f"try_strptime({text}, {sql_string(rule.format)})"
            unparsed = f"{_quoted(txt)} || ' does not match ' || {sql_string(repr(rule.format))}"
        else:
            parse = f"CASE WHEN regexp_full_match({text}, '{_LOCAL_ISO}') THEN TRY_CAST({text} AS TIMESTAMP) END"
            unparsed = f"{_quoted(txt)} || ' is not a local date and time (YYYY-MM-DD hh:mm:ss)'"
        self.layer1.append(f"{text} AS __tsc_txt_{h}")
        self.layer1.append(f"{parse} AS __tsc_parsed_{h}")
        reasons = [f"WHEN {txt} IS NULL THEN NULL", f"WHEN {parsed} IS NULL THEN {unparsed}"]
        if rule.zone is None:  # the format read the offset (%z): already an instant
            instant = parsed
        else:
            zone, per_row = self.zone_sql(rule)
            if per_row:
                reasons.append(
                    "WHEN r.__tsc_zone IS NULL THEN 'no device_zone in the catalog for series ' || "
                    "coalesce(" + _quoted("r.__tsc_zone_series") + ", 'NULL')"
                )
            occurrence = None
            if rule.ambiguous == "file_order":
                series = self.contract.series_column
                by = f"CAST({self.series_expr(series)} AS VARCHAR), " if series else ""
                window = f"OVER (PARTITION BY {by}{parsed} ORDER BY r.__row)"
                self.layer2.append(f"row_number() {window} AS __tsc_rank_{h}")
                self.layer2.append(f"count(*) {window.replace(' ORDER BY r.__row', '')} AS __tsc_count_{h}")
                occurrence = (f"r.__tsc_rank_{h}", f"r.__tsc_count_{h}")
            resolved = resolve_local(
                parsed,
                zone,
                zone_is_sql=per_row,
                nonexistent=rule.nonexistent,
                ambiguous=rule.ambiguous,
                occurrence=occurrence,
            )
            self.layer3.append(f"{resolved.instant} AS __tsc_instant_{h}")
            self.layer3.append(f"{resolved.reason} AS __tsc_dst_{h}")
            instant = f"r.__tsc_instant_{h}"
            reasons.append(f"ELSE r.__tsc_dst_{h}")
        reason = f"CASE {' '.join(reasons)} END"
        return f"coalesce({_utc_text(instant)}, {txt})", reason

    # ------------------------------------------------------------ sentinels
    def sentinel_error(self, field: str) -> Callable[[tuple[str, ...], str], TscontractError]:
        return lambda path, message: self.mapping.error_at(("columns", field, "sentinels", *path), message)

    def with_sentinels(self, field: str, rule: ColumnMap, converted: tuple[str, str | None]) -> tuple[str, str | None]:
        """A sentinel cell: the value NULL (no reason), its flag set (:mod:`.sentinels`)."""
        sentinels, name = rule.sentinels, rule.from_
        assert sentinels is not None and isinstance(name, str)
        raw, physical = self.source(name), self.source_columns[name]
        check_source_type(sentinels, name, physical, self.sentinel_error(field))
        matched = matched_sql(sentinels, raw, physical)
        self.flags[sentinels.flag] = flag_sql(sentinels, raw, physical)
        expr, reason = converted
        near = near_miss_sql(sentinels, raw, physical)
        reasons = [r for r in (near, reason) if r is not None]
        why = f"CASE WHEN {matched} THEN NULL ELSE coalesce({', '.join(reasons)}) END" if reasons else None
        return f"CASE WHEN {matched} THEN NULL ELSE {expr} END", why

    # ------------------------------------------------------------ the table
    def column(self, field: str, rule: ColumnMap) -> tuple[str, str | None]:
        converted = self.converted(field, rule)
        return converted if rule.sentinels is None else self.with_sentinels(field, rule, converted)

    def converted(self, field: str, rule: ColumnMap) -> tuple[str, str | None]:
        if rule.value is not None:
            value = str(rule.value).lower() if isinstance(rule.value, bool) else str(rule.value)
            return sql_string(value), None
        if rule.target_unit_of is not None:
            return "NULL", None  # filled once the other column's conversion is known
        if rule.file_name is not None:
            return self.file_value(field, rule), None
        if rule.is_time:
            return self.timestamp(field, rule)
        kind = self.contract.fields[field].type.kind
        if kind in ("decimal", "float", "int") or rule.unit or rule.unit_column or rule.round:
            return self.number(field, rule)
        return self._text(rule.sources[0], rule), None

    def layered(self, upto: int) -> str:
        """The raw rows with the helper columns of layers 0..``upto``, as a relation aliased ``r``."""
        relation = f"(SELECT r.*{''.join(', ' + c for c in self.layer0)} FROM {self.raw} r"
        if self.mapping.needs_file_names:
            relation += f" LEFT JOIN {FILES_TABLE} f ON r.__row BETWEEN f.__first AND f.__last"
        relation += ")"
        for layer in (self.layer1, self.layer2, self.layer3)[:upto]:
            if layer:
                relation = f"(SELECT r.*, {', '.join(layer)} FROM {relation} r)"
        return relation

    def rules(self) -> dict[str, ColumnMap]:
        """The mapping's columns, and contract fields the text source has under their own name."""
        for name in self.mapping.columns:
            if name not in self.contract.fields:
                raise InputError(f"mapping {self.mapping.mapping}: {name!r} is not a field of {self.contract.contract}")
        rules = dict(self.mapping.columns)
        flags = {}
        for name, rule in rules.items():
            if rule.sentinels is not None:
                check_against_contract(name, rule.sentinels, self.contract, self.sentinel_error(name))
                flag = rule.sentinels.flag
                if flag in rules or flag in flags:
                    why = f"{flag!r} is set by the sentinels: give it no other rule"
                    raise self.sentinel_error(name)(("flag",), why)
                flags[flag] = name
        for name in self.contract.fields:
            if name in flags:
                continue
            if name not in rules and self.source_columns.get(name) == "VARCHAR" and name not in self.mapping.drop:
                rules[name] = ColumnMap(from_=name)  # passes through, with the mapping's sentinels and separator
        return rules

    def build(self, out: str) -> list[str]:
        """Create ``out``; the fields that have a reason column (``__mr_<field>``)."""
        rules = self.rules()
        mapped_sources = {s for r in rules.values() for s in r.sources}
        mapped_sources |= {r.unit_column for r in rules.values() if r.unit_column}
        exprs: dict[str, tuple[str, str | None]] = {}
        # file-name columns first: a series taken from the file name is a column of layer 0
        for field, rule in sorted(rules.items(), key=lambda item: item[1].file_name is None):
            exprs[field] = self.column(field, rule)
        exprs = {field: exprs[field] for field in rules}
        exprs |= {flag: (sql, None) for flag, sql in self.flags.items()}
        for field, rule in rules.items():
            if rule.target_unit_of is not None:
                source_field = rule.target_unit_of
                if source_field in self.converted_unit:
                    exprs[field] = (self.converted_unit[source_field], None)
                else:
                    source_rule = self.mapping.columns.get(source_field)
                    target = self.target_unit(source_field)
                    if source_rule is None or source_rule.unit is None or target is None:
                        raise InputError(f"mapping column {field}: {source_field!r} is not converted")
                    exprs[field] = (sql_string(target), None)
        selects = ["r.__row AS __row"]
        with_reason = []
        for name, (expr, reason) in exprs.items():
            if reason is None:
                selects.append(f"{expr} AS {ident(name)}")
                continue
            original = self.text_of(rules[name])
            selects.append(f"CASE WHEN ({reason}) IS NULL THEN {expr} ELSE {original} END AS {ident(name)}")
            selects.append(f"{reason} AS {ident(REASON_PREFIX + name)}")
            with_reason.append(name)
        # unmapped source columns pass through (as text), unless dropped or consumed by the mapping
        for name in self.source_columns:
            if name in exprs or name in mapped_sources or name in self.mapping.drop or name == "__row":
                continue
            selects.append(f"{self._passthrough(name)} AS {ident(name)}")
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {out} AS SELECT {', '.join(selects)} FROM {self.layered(3)} r "
            f"{' '.join(self.joins)}"
        )
        return with_reason

    def _passthrough(self, name: str) -> str:
        physical = self.source_columns[name]
        if is_instant_type(physical):
            return instant_text_of(f"r.{ident(name)}", physical)
        if physical.startswith("DECIMAL"):
            return _trim_zeros(f"CAST(r.{ident(name)} AS VARCHAR)")
        return f"CAST(r.{ident(name)} AS VARCHAR)"


def apply_mapping(
    con: duckdb.DuckDBPyConnection, raw: str, out: str, mapping: Mapping, contract: Contract, catalog: Catalog | None
) -> list[str]:
    """Create ``out`` (all text, ``__row`` kept) from ``raw`` as ``mapping`` says.

    Returns the fields with a reason column ``__mr_<field>`` (NULL where the value converted).
    With file-name columns, ``__tsc_files`` (``__first``, ``__last`` row and a column per
    such field) must be on ``con`` (:func:`tscontract.engines.inputs.staging.stage` makes it).
    """
    columns = {str(r[0]): str(r[1]) for r in con.execute(f"DESCRIBE {raw}").fetchall()}
    return _Converter(con, raw, mapping, contract, catalog, columns).build(out)
