"""Fields: added, removed, renamed (with or without aliases), and each kept field's unit, type and nullability."""

from __future__ import annotations

from datetime import date

from tscontract.contract.model import FieldSpec
from tscontract.contract.units import is_unitless
from tscontract.evolution.diff.clauses import ClauseDiffer


def _type_text(spec: FieldSpec) -> str:
    return spec.type.text


class FieldDiffer(ClauseDiffer):
    """Each declared field, old against new."""

    # ------------------------------------------------------------ fields
    def fields(self) -> None:
        old_fields, new_fields = self.old.declared_fields, self.new.declared_fields
        renamed_from = {
            alias: name
            for name, spec in new_fields.items()
            for alias in spec.aliases
            if alias in old_fields and alias not in new_fields
        }
        for name, spec in new_fields.items():
            if name in old_fields:
                self.field(name, old_fields[name], spec)
            elif name in renamed_from.values():
                source = next(a for a, n in renamed_from.items() if n == name)
                self.add(
                    "rename_field",
                    f"fields.{name}",
                    source,
                    name,
                    "yes",
                    "minor",
                    f"renamed with aliases: [{source}]; readers resolve the old name",
                )
                self.field(name, old_fields[source], spec, old_name=source)
            elif self.new.is_nullable(name):
                self.add(
                    "add_nullable_field",
                    f"fields.{name}",
                    None,
                    _type_text(spec),
                    "yes",
                    "minor",
                    "minor version, changelog entry",
                )
            else:
                self.add(
                    "add_required_field",
                    f"fields.{name}",
                    None,
                    _type_text(spec),
                    "no",
                    "major",
                    "major version: data written before lacks the field",
                )
        for name, spec in old_fields.items():
            if name in new_fields or name in renamed_from:
                continue
            self.removed(name, spec)

    def removed(self, name: str, spec: FieldSpec) -> None:
        guess = self.rename_guess(name, spec)
        if guess is not None:
            self.add(
                "rename_field",
                f"fields.{name}",
                name,
                guess,
                "no",
                "major",
                f"major version, or declare aliases: [{name}] on {guess} (or a dual-write period)",
            )
            return
        self.add(
            "remove_field",
            f"fields.{name}",
            _type_text(spec),
            None,
            "no",
            "major",
            "major version after the deprecation notice",
        )
        deprecation = spec.deprecated
        notice = (
            self.old.evolution.deprecation_notice.text
            if self.old.evolution and self.old.evolution.deprecation_notice
            else None
        )
        if deprecation is None:
            self.problem(
                f"fields.{name} removed without a deprecation in {self.old.version}"
                + (f" (deprecation_notice: {notice})" if notice else "")
            )
        elif (
            deprecation.removal_after
            and self.today is not None
            and self.today < date.fromisoformat(deprecation.removal_after)
        ):
            self.problem(f"fields.{name} removed before its removal_after date {deprecation.removal_after}")

    def rename_guess(self, name: str, spec: FieldSpec) -> str | None:
        """A new field of the same type and unit that replaced a removed one: a rename without aliases."""
        new_fields = self.new.declared_fields
        candidates = [
            n
            for n, s in new_fields.items()
            if n not in self.old.declared_fields and s.type == spec.type and s.unit == spec.unit and not s.aliases
        ]
        return candidates[0] if len(candidates) == 1 else None

    def field(self, name: str, old: FieldSpec, new: FieldSpec, old_name: str | None = None) -> None:
        path = f"fields.{name}"
        old_name = old_name or name
        self.field_unit(path, old, new)
        self.field_type(path, old, new)
        self.field_nullability(path, name, old_name)
        self.field_value(path, name, old_name, old, new)
        self.field_deprecation(path, old, new)

    def field_unit(self, path: str, old: FieldSpec, new: FieldSpec) -> None:
        """Unit and dimension: never changed on the same field (``unit: 1`` respelled ``dimensionless`` is the same)."""
        respelled = old.unit is not None and new.unit is not None and is_unitless(old.unit) and is_unitless(new.unit)
        if old.unit != new.unit and not respelled:
            self.add(
                "change_unit",
                f"{path}.unit",
                old.unit,
                new.unit,
                "no",
                "major",
                "never on the same field: add a new field named for its unit (pressure_kpa beside pressure_bar)",
                forbidden=True,
            )
        if old.dimension != new.dimension:
            self.add(
                "change_dimension",
                f"{path}.dimension",
                old.dimension,
                new.dimension,
                "no",
                "major",
                "a new field",
                forbidden=True,
            )

    def field_type(self, path: str, old: FieldSpec, new: FieldSpec) -> None:
        """Precision, scale, enum members, integer width, time unit or another type."""
        ot, nt = old.type, new.type
        if ot.kind == "decimal" and nt.kind == "decimal":
            if ot.scale != nt.scale:
                self.add(
                    "change_scale",
                    f"{path}.type",
                    ot.text,
                    nt.text,
                    "no",
                    "major",
                    "never on the same field: a new field",
                    forbidden=True,
                )
            elif (nt.precision or 0) < (ot.precision or 0):
                self.add("narrow_precision", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
            elif (nt.precision or 0) > (ot.precision or 0):
                self.add(
                    "widen_precision",
                    f"{path}.type",
                    ot.text,
                    nt.text,
                    "notice",
                    "minor",
                    "minor version, notice period",
                )
        elif ot.kind == "enum" and nt.kind == "enum":
            lost = [m for m in ot.members if m not in nt.members]
            gained = [m for m in nt.members if m not in ot.members]
            if lost:
                self.add("remove_enum_member", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
            if gained:
                self.add(
                    "add_enum_member",
                    f"{path}.type",
                    ot.text,
                    nt.text,
                    "notice",
                    "minor",
                    "minor version, notice period: consumers meet a new value",
                )
        elif ot.kind == "int" and nt.kind == "int" and ot.bits != nt.bits:
            wider = (nt.bits or 64) > (ot.bits or 64)
            self.add(
                "widen_type" if wider else "narrow_type",
                f"{path}.type",
                ot.text,
                nt.text,
                "notice" if wider else "no",
                "minor" if wider else "major",
                "minor version, notice period" if wider else "major version",
            )
        elif ot.kind == "timestamp" and nt.kind == "timestamp" and ot.time_unit != nt.time_unit:
            self.add("change_time_precision", f"{path}.type", ot.text, nt.text, "no", "major", "major version")
        elif ot != nt:
            self.add("change_type", f"{path}.type", ot.text, nt.text, "no", "major", "major version")

    def field_nullability(self, path: str, name: str, old_name: str) -> None:
        was, now = self.old.is_nullable(old_name), self.new.is_nullable(name)
        if was != now:
            if now:
                self.add(
                    "relax_nullability",
                    f"{path}.nullable",
                    "false",
                    "true",
                    "notice",
                    "minor",
                    "minor version, notice period",
                )
            else:
                self.add(
                    "tighten_nullability",
                    f"{path}.nullable",
                    "true",
                    "false",
                    "no",
                    "major",
                    "major version; existing data may fail",
                )

    def field_value(self, path: str, name: str, old_name: str, old: FieldSpec, new: FieldSpec) -> None:
        """The fixed value and the field's constraint clause."""
        if old.has_value != new.has_value or (old.has_value and old.value != new.value):
            self.add(
                "change_fixed_value",
                f"{path}.value",
                old.value if old.has_value else None,
                new.value if new.has_value else None,
                "no" if new.has_value else "notice",
                "major" if new.has_value else "minor",
                "major version" if new.has_value else "minor version",
            )
        oc = self.old.constraints.get(old_name)
        nc = self.new.constraints.get(name)
        if (oc.text if oc else None) != (nc.text if nc else None):
            self.clause_change(f"{path}.constraint", oc, nc)

    def field_deprecation(self, path: str, old: FieldSpec, new: FieldSpec) -> None:
        if old.deprecated is None and new.deprecated is not None:
            self.add(
                "deprecate_field",
                f"{path}.deprecated",
                None,
                new.deprecated.since,
                "yes",
                "minor",
                "minor version; the field may be removed after the notice",
            )
        elif old.deprecated is not None and new.deprecated is None:
            self.add(
                "undeprecate_field",
                f"{path}.deprecated",
                old.deprecated.since,
                None,
                "yes",
                "minor",
                "minor version: the field stays",
            )
