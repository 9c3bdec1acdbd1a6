"""Lint: the seed's Checklist and Common Mistakes as findings with a severity.

A finding names a stable code, the clause path and its position in the
contract file. ``error`` findings fail the lint (exit 1); ``warning`` and
``info`` are shown and do not.

Codes
-----
TS101 money or calibrated reading typed as float (error); other float measurement (warning)
TS102 numeric field without a unit
TS103 numeric field with a unit but no dimension (a pure number's ``unit: 1`` states its own)
TS104 unit does not belong to the declared dimension
TS105 unit suffix in the field name (co_mg_m3, flow_m3_h) disagrees with the declared unit
TS106 unit suffix in the field name, but no unit in the contract
TS107 nullability not declared
TS111 time precision not stated
TS112 UTC-instant rule not stated
TS113 cadence not stated
TS114 freshness not stated
TS115 completeness not stated
TS120 measurement defaults to zero: absent and zero cannot be told apart
TS130 revisions allowed without window / who / notification
TS131 no revision policy although the key carries a revision
TS132 duplicates kept by a nullable column: a copy without a value leaves its key unresolved
TS140 no provenance columns required / standard provenance column missing
TS150 registry compatibility NONE (error without a recorded reason)
TS151 a running registry's subject is in NONE (``lint --registry URL``)
TS160 catalog names another contract
TS161 catalog series lacks an attribute a clause needs
TS162 catalog series unit outside its dimension or the field's dimension
TS163 catalog-dependent clauses not checked (no catalog given)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tscontract.contract.catalog import Catalog, other_contract
from tscontract.contract.model import STANDARD_PROVENANCE, Contract, FieldSpec
from tscontract.contract.positions import Path as NodePath
from tscontract.contract.positions import format_path
from tscontract.contract.units import UnitError, check_unit, is_unitless, same_unit, unit_in_dimension

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

# name suffix -> the unit it promises (temperature_c, pressure_kpa, value_degc)
UNIT_SUFFIXES = {
    "degc": "degC",
    "c": "degC",
    "celsius": "degC",
    "degf": "degF",
    "f": "degF",
    "k": "kelvin",
    "kelvin": "kelvin",
    "pa": "Pa",
    "hpa": "hPa",
    "kpa": "kPa",
    "mpa": "MPa",
    "bar": "bar",
    "mbar": "mbar",
    "barg": "bar",
    "psi": "psi",
    "mm": "mm",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "kg": "kg",
    "g": "g",
    "ms": "ms",
    "sec": "s",
    "secs": "s",
    "seconds": "s",
    "hz": "Hz",
    "khz": "kHz",
    "w": "W",
    "kw": "kW",
    "mw": "MW",
    "kwh": "kWh",
    "mwh": "MWh",
    "v": "V",
    "kv": "kV",
    "a": "A",
    "ma": "mA",
    "rpm": "rpm",
    "m3h": "m**3/h",
    "lpm": "L/min",
    "pct": "percent",
    "percent": "percent",
    "m2": "m**2",
    "m3": "m**3",
    "mg": "mg",
    "ug": "ug",
    "ppm": "ppm",
}
# <numerator>_<denominator> suffixes: co_mg_m3 is mg/m**3, flow_m3_h is m**3/h, rain_mm_h is mm/h, ghi_w_m2 is W/m**2
PER_NUMERATORS = {
    "ng": "ng",
    "ug": "ug",
    "mg": "mg",
    "g": "g",
    "kg": "kg",
    "mol": "mol",
    "umol": "umol",
    "ml": "mL",
    "l": "L",
    "m3": "m**3",
    "mm": "mm",
    "m": "m",
    "km": "km",
    "wh": "Wh",
    "kwh": "kWh",
    "mwh": "MWh",
    "w": "W",  # irradiance: ghi_w_m2 is W/m**2
    "kw": "kW",
}
PER_DENOMINATORS = {"s": "s", "min": "min", "h": "h", "d": "d", "m2": "m**2", "m3": "m**3", "l": "L", "kg": "kg"}
# words after a unit suffix that qualify it: pressure_kpa_g (gauge), temp_c_max
UNIT_QUALIFIERS = {"g", "a", "abs", "gauge", "absolute", "avg", "mean", "min", "max", "raw"}
_MONEY_DIMENSION = "[quote_currency]"


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    section: str
    message: str
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "section": self.section,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


@dataclass
class LintReport:
    contract: str
    version: str
    file: str
    catalog: str | None
    findings: list[Finding] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def passed(self) -> bool:
        return self.count("error") == 0

    def to_json(self) -> dict[str, object]:
        return {
            "contract": self.contract,
            "version": self.version,
            "file": self.file,
            "catalog": self.catalog,
            "passed": self.passed,
            "counts": {s: self.count(s) for s in SEVERITIES},
            "findings": [f.to_json() for f in self.findings],
        }


class _Linter:
    def __init__(self, contract: Contract, catalog: Catalog | None, catalog_path: str | None) -> None:
        self.contract = contract
        self.catalog = catalog
        self.report = LintReport(contract.contract, contract.version, contract.path, catalog_path)
        self.declared = contract.unit_declarations

    def add(self, code: str, severity: Severity, path: NodePath, message: str, *, key: bool = False) -> None:
        loc = self.contract.positions.location(path, key=key) if self.contract.positions else None
        self.report.findings.append(
            Finding(
                code,
                severity,
                format_path(path),
                message,
                loc.line if loc else None,
                loc.column if loc else None,
            )
        )

    def run(self) -> LintReport:
        for name, spec in self.contract.declared_fields.items():
            self.field(name, spec)
        self.time()
        self.revisions()
        self.duplicates()
        self.provenance()
        self.evolution()
        if self.catalog is not None:
            self.catalog_checks(self.catalog)
        elif self.needs_catalog():
            self.add(
                "TS163",
                "info",
                (),
                "clauses refer to the series catalog; pass --catalog to check them against it",
            )
        order = {s: i for i, s in enumerate(SEVERITIES)}
        self.report.findings.sort(key=lambda f: (order[f.severity], f.line or 0, f.column or 0, f.code))
        return self.report

    # ----------------------------------------------------------- fields
    def is_measurement(self, spec: FieldSpec) -> bool:
        return spec.type.is_numeric and (spec.unit is not None or spec.dimension is not None)

    def field(self, name: str, spec: FieldSpec) -> None:
        base: NodePath = ("fields", name)
        if spec.nullable is None and name not in self.contract.key and name != self.contract.time.column:
            self.add(
                "TS107",
                "warning",
                base,
                f"{name}: nullability not declared; it is treated as nullable. Say nullable: true or false",
                key=True,
            )
        suffix_unit = self.suffix_unit(name)
        if spec.type.is_numeric:
            self.numeric(name, spec, base)
        if suffix_unit is not None and spec.type.is_numeric and spec.unit is None:
            self.add(
                "TS106",
                "warning",
                base,
                f"{name}: the name says {suffix_unit} but the contract names no unit; a rename would drop it",
                key=True,
            )
        if suffix_unit is not None and spec.unit is not None and not spec.unit_from_catalog:
            self.suffix_agrees(name, suffix_unit, spec.unit, (*base, "unit"))
        if spec.default is not None and self.is_measurement(spec):
            zero = not isinstance(spec.default, bool) and spec.default == 0
            self.add(
                "TS120",
                "error" if zero else "warning",
                (*base, "default"),
                f"{name}: a measurement with a default of {spec.default} reads a missing reading "
                "as a measured value; leave it nullable so absent and zero differ",
            )

    def numeric(self, name: str, spec: FieldSpec, base: NodePath) -> None:
        if spec.unit is None:
            self.add(
                "TS102",
                "warning",
                base,
                f"{name}: numeric field without a unit; if it is a count, say unit: count; "
                "a pure number (a ratio, an index, a magnitude), unit: 1",
                key=True,
            )
        elif spec.dimension is None and not spec.unit_from_catalog and not is_unitless(spec.unit):
            measured = self.dimension_words(spec.unit)
            self.add(
                "TS103",
                "warning",
                (*base, "unit"),
                f"{name}: unit {spec.unit} has no declared dimension (it measures {measured})",
            )
        if spec.unit is not None and spec.dimension is not None and not spec.unit_from_catalog:
            try:
                fits = unit_in_dimension(spec.unit, spec.dimension, self.declared)
            except UnitError as exc:
                self.add("TS104", "error", (*base, "unit"), f"{name}: {exc}")
                fits = True
            if not fits:
                self.add(
                    "TS104",
                    "error",
                    (*base, "unit"),
                    f"{name}: unit {spec.unit} is not a {spec.dimension} unit "
                    f"(it measures {self.dimension_words(spec.unit)})",
                )
        if spec.type.kind == "float":
            money = self.is_money(spec)
            calibrated = spec.unit_from_catalog or "calibration_id" in self.contract.fields
            if money or (calibrated and self.is_measurement(spec)):
                what = "money" if money else "a calibrated reading"
                self.add(
                    "TS101",
                    "error",
                    (*base, "type"),
                    f"{name}: {what} typed {spec.type.text}; use decimal(p,s) — never store it as float",
                )
            elif self.is_measurement(spec):
                self.add(
                    "TS101",
                    "warning",
                    (*base, "type"),
                    f"{name}: measurement typed {spec.type.text}; decimal(p,s) states its precision",
                )

    def is_money(self, spec: FieldSpec) -> bool:
        if spec.unit is None or spec.unit_from_catalog:
            return (spec.dimension or "").lower() in ("currency", "currency_amount", "money")
        try:
            return check_unit(spec.unit, self.declared) == _MONEY_DIMENSION
        except UnitError:
            return False

    def dimension_words(self, unit: str) -> str:
        try:
            return check_unit(unit, self.declared)
        except UnitError:
            return "an unknown dimension"

    @staticmethod
    def suffix_unit(name: str) -> str | None:
        """The unit a field name promises by its last words (``co_mg_m3`` -> ``mg/m**3``), if any."""
        parts = name.lower().split("_")[1:]  # the first word is the quantity (co, flow, pressure)
        if len(parts) >= 2 and parts[-2] in PER_NUMERATORS and parts[-1] in PER_DENOMINATORS:
            return f"{PER_NUMERATORS[parts[-2]]}/{PER_DENOMINATORS[parts[-1]]}"
        if len(parts) >= 2 and parts[-1] in UNIT_QUALIFIERS and parts[-2] in UNIT_SUFFIXES:
            return UNIT_SUFFIXES[parts[-2]]
        return UNIT_SUFFIXES.get(parts[-1]) if parts else None

    def suffix_agrees(self, name: str, suffix_unit: str, unit: str, path: NodePath, series: str = "") -> None:
        try:
            agrees = same_unit(suffix_unit, unit, self.declared)
        except UnitError:
            return
        if not agrees:
            where = f" for series {series}" if series else ""
            self.add(
                "TS105",
                "error",
                path,
                f"{name}: the name says {suffix_unit} but the unit{where} is {unit}; a unit change "
                "is a new field name, never the same one",
            )

    # ----------------------------------------------------------- time
    def time(self) -> None:
        time = self.contract.time
        if time.precision is None:
            self.add(
                "TS111",
                "warning",
                ("time",),
                "timestamp precision not stated (time.precision: ms); the column type implies "
                f"{self.contract.fields[time.column].type.time_unit}",
                key=True,
            )
        if time.timezone is None:
            self.add(
                "TS112",
                "warning",
                ("time",),
                "the UTC-instant rule is not stated (timezone: UTC instant)",
                key=True,
            )
        if time.cadence is None:
            self.add(
                "TS113",
                "warning",
                ("time",),
                "cadence not stated: gaps and duplicates in time cannot be tested",
                key=True,
            )
        if self.contract.freshness is None:
            self.add(
                "TS114",
                "warning",
                (),
                "freshness not stated: no maximum age at the consumer boundary (freshness: {max_age: 15m})",
            )
        if self.contract.completeness is None and (time.cadence is None or time.cadence.source != "irregular"):
            self.add(
                "TS115",
                "warning",
                (),
                "completeness not stated: no expected count per window (completeness: {window: 1d})",
            )

    # ----------------------------------------------------------- revisions, provenance, evolution
    def revisions(self) -> None:
        policy = self.contract.revision_policy
        if policy is None:
            if "revision" in self.contract.fields:
                self.add(
                    "TS131",
                    "warning",
                    (),
                    "no revision_policy although records carry a revision: say whether points may be restated",
                )
            return
        if not policy.allowed:
            return
        base: NodePath = ("revision_policy",)
        if policy.window is None:
            self.add(
                "TS130",
                "warning",
                base,
                "revisions allowed without a window (window: 5 trading days)",
                key=True,
            )
        if not policy.who:
            self.add(
                "TS130",
                "warning",
                base,
                "revision policy does not name who may restate (who: [...])",
                key=True,
            )
        if policy.notification is None:
            self.add(
                "TS130",
                "warning",
                base,
                "revision policy does not say how consumers are told (notification:)",
                key=True,
            )
        if not policy.reasons:
            self.add(
                "TS130",
                "warning",
                base,
                "revision policy lists no allowed reasons (reasons: [...])",
                key=True,
            )

    def duplicates(self) -> None:
        policy = self.contract.duplicates
        if policy is not None and policy.by is not None and self.contract.is_nullable(policy.by):
            self.add(
                "TS132",
                "warning",
                ("duplicates", "by"),
                f"copies are kept by {policy.by}, which may be null: a copy without it cannot be ordered and "
                f"every copy of its key is rejected (declare {policy.by} nullable: false)",
            )

    def provenance(self) -> None:
        required = self.contract.provenance_required
        if not required:
            self.add(
                "TS140",
                "error",
                (),
                "no provenance_required: records cannot be traced to source, run and transform "
                f"(expected at least {', '.join(STANDARD_PROVENANCE)})",
            )
            return
        missing = [c for c in STANDARD_PROVENANCE if c not in required]
        if missing:
            self.add(
                "TS140",
                "warning",
                ("provenance_required",),
                f"provenance_required lacks {', '.join(missing)}",
                key=True,
            )

    def evolution(self) -> None:
        evolution = self.contract.evolution
        if evolution is None or evolution.compatibility != "NONE":
            return
        reason = evolution.compatibility_reason
        self.add(
            "TS150",
            "warning" if reason else "error",
            ("evolution", "compatibility"),
            "registry compatibility NONE lets any breaking change through"
            + (
                f" (reason recorded: {reason})"
                if reason
                else "; record compatibility_reason or restore FULL_TRANSITIVE"
            ),
        )

    # ----------------------------------------------------------- catalog
    def needs_catalog(self) -> bool:
        contract = self.contract
        return bool(
            any(f.unit_from_catalog or f.dimension_from_catalog for f in contract.fields.values())
            or any(c.catalog for c in [*contract.invariants, *contract.constraints.values()])
            or (contract.time.cadence is not None and contract.time.cadence.source == "catalog")
            or self.contract_needs_calendar()
            or (contract.time.timezone is not None and contract.time.timezone.device_zone_in_catalog)
        )

    def contract_needs_calendar(self) -> bool:
        """Clauses that count sessions, with no calendar named in the contract itself."""
        contract = self.contract
        time = contract.time
        if time.calendar is not None or (time.timezone is not None and time.timezone.session_calendar):
            return False
        return (
            (time.timezone is not None and time.timezone.sessions == "venue")
            or (time.cadence is not None and time.cadence.uses_sessions)
            or (contract.freshness is not None and contract.freshness.on_session_clock)
            or (contract.completeness is not None and contract.completeness.window.on_trading_calendar)
        )

    def required_attributes(self) -> dict[str, str]:
        """Catalog attribute -> the clause that needs it."""
        contract = self.contract
        needs: dict[str, str] = {}
        for name, spec in contract.declared_fields.items():
            if spec.unit_from_catalog:
                needs["unit"] = f"fields.{name}.unit"
            if spec.dimension_from_catalog:
                needs["dimension"] = f"fields.{name}.dimension"
        for clause in [*contract.invariants, *contract.constraints.values()]:
            if clause.catalog is not None:
                needs.setdefault(clause.catalog.attribute, clause.text)
        time = contract.time
        if time.cadence is not None and time.cadence.source == "catalog":
            needs["cadence"] = "time.cadence"
        if time.timezone is not None and time.timezone.device_zone_in_catalog:
            needs["device_zone"] = "time.timezone"
        if self.contract_needs_calendar():
            needs["calendar"] = "time.timezone"
        if "calibration_id" in contract.fields:
            needs["calibrations"] = "fields.calibration_id"
        return needs

    def catalog_checks(self, catalog: Catalog) -> None:
        contract = self.contract
        wrong = other_contract(catalog, contract.contract)
        if wrong is not None:
            self.add("TS160", "error", (), wrong)
        needs = self.required_attributes()
        for series_id, entry in catalog.series.items():
            for attribute, clause in needs.items():
                if not getattr(entry, attribute):
                    self.add(
                        "TS161",
                        "error",
                        (),
                        f"catalog series {series_id} has no {attribute}, which {clause!r} needs",
                    )
            if entry.unit is not None and entry.dimension is not None:
                try:
                    fits = unit_in_dimension(entry.unit, entry.dimension, self.declared)
                except UnitError as exc:
                    self.add("TS162", "error", (), f"catalog series {series_id}: {exc}")
                    fits = True
                if not fits:
                    self.add(
                        "TS162",
                        "error",
                        (),
                        f"catalog series {series_id}: unit {entry.unit} is not a {entry.dimension} unit",
                    )
            for name, spec in contract.declared_fields.items():
                if not spec.unit_from_catalog or entry.unit is None:
                    continue
                if spec.dimension is not None and not spec.dimension_from_catalog:
                    try:
                        fits = unit_in_dimension(entry.unit, spec.dimension, self.declared)
                    except UnitError:
                        fits = True
                    if not fits:
                        self.add(
                            "TS162",
                            "error",
                            ("fields", name, "dimension"),
                            f"catalog series {series_id}: unit {entry.unit} is not a {spec.dimension} "
                            f"unit as {name} requires",
                        )
                suffix_unit = self.suffix_unit(name)
                if suffix_unit is not None:
                    self.suffix_agrees(name, suffix_unit, entry.unit, ("fields", name, "unit"), series_id)


def lint(contract: Contract, catalog: Catalog | None = None, catalog_path: str | None = None) -> LintReport:
    """Check ``contract`` (and ``catalog`` if given) against the seed's checklist."""
    return _Linter(contract, catalog, catalog_path).run()


__all__ = ["SEVERITIES", "UNIT_SUFFIXES", "Finding", "LintReport", "lint"]
