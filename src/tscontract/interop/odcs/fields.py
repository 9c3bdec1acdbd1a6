"""An ODCS object's properties as fields: types, options left open, bounds, the key and the time column, nullability."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from tscontract.errors import InputError
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.draft import _Clause, identifier, number_text, own_type, shown, time_and_key
from tscontract.interop.odcs.types import Read, field_type, nested
from tscontract.interop.odcs.walk import _ROUND_TRIP_FIELD, ObjectWalk


def _spelled(prop: dict[str, Any], v3: str, v2: str) -> str | None:
    """The key a property states a flag by: ODCS v3's (``required``, ``unique``), else v2's
    (``isNullable``, ``isUnique``), which documents written for v2 still carry."""
    return v3 if v3 in prop else v2 if v2 in prop else None


# text forms with one exact reading (RFC 4122 UUIDs in either case, dotted-quad IPv4), as patterns
FORMAT_PATTERNS = {
    "uuid": "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
    "ipv4": r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$",
}
# the digits of a date or time format (Java's DateTimeFormatter letters, as ODCS examples write them)
_FORM_FIELDS = {
    "yyyy": "[0-9]{4}",
    "MM": "[0-9]{2}",
    "dd": "[0-9]{2}",
    "HH": "[0-9]{2}",
    "mm": "[0-9]{2}",
    "ss": "[0-9]{2}",
}
_FORM_TOKEN = re.compile(r"yyyy|MM|dd|HH|mm|ss|S+|'[^']*'|[-:./ T]")


def written_form(fmt: str) -> str | None:
    """A date or time format of digits and separators (``yyyy-MM-dd HH:mm:ss.SSS``) as the pattern of its
    text; None for one with names, zones or optional parts (``MMM``, ``XXX``, ``a``), which no pattern states."""
    tokens = _FORM_TOKEN.findall(fmt)
    if "".join(tokens) != fmt or not any(t in _FORM_FIELDS for t in tokens):
        return None
    parts = []
    for token in tokens:
        if token in _FORM_FIELDS:
            parts.append(_FORM_FIELDS[token])
        elif token.startswith("S"):
            parts.append(f"[0-9]{{{len(token)}}}")
        else:
            parts.append(re.escape(token.strip("'") if token.startswith("'") else token))
    return "^" + "".join(parts) + "$"


_OPTION_LOST = {
    "exclusiveMinimum": "an exclusive bound without its bound",
    "exclusiveMaximum": "an exclusive bound without its bound",
    "defaultTimezone": "a default time zone on a type that is not a timestamp without one",
    "timezone": "a time zone flag on a type that is not a timestamp",
}


class FieldReader(ObjectWalk):
    """The object's properties, its key and time column."""

    # ------------------------------------------------------------ fields
    def properties(self, section: dict[str, Any]) -> None:
        props = self.record.get("properties")
        if not isinstance(props, list) or not props:
            raise InputError("the schema object has no properties: a contract declares at least one field")
        # not taken whole: what no field takes below it is listed (leftovers)
        used: set[str] = set()
        for i, prop in enumerate(props):
            path = (*self.base, "properties", i)
            if not isinstance(prop, dict) or not isinstance(prop.get("name") or prop.get("physicalName"), str):
                self.lose(path, "a property without a name")
                continue
            written = str(prop.get("name") or prop.get("physicalName"))
            self.take(*path, "name")
            column = str(prop.get("physicalName") or written)
            custom = self.round_trip(path, ("impliedBy", "type", *_ROUND_TRIP_FIELD))
            if custom.get("impliedBy") == "provenance_required":
                self.take(*path)
                continue
            if written in self.choices.drop or column in self.choices.drop:
                self.take(*path)
                self.dropped.append(path)
                self.drop.append(column)
                self.field_notes.setdefault("", []).append(
                    f"{self.render(path)}: left out (--drop), the mapping drops column {column}"
                )
                continue
            left_open = nested(prop, self.choices)
            if left_open is not None:
                self.take(*path)
                self.open.setdefault(left_open, []).append(written)
                continue
            name = identifier(written)
            while name in used:
                name += "_"
            used.add(name)
            self.names[written] = name
            if "physicalName" in prop:
                self.take(*path, "physicalName")
            if column != name:
                self.columns[name] = column
            self.fields[name] = self.field(prop, path, name, custom)

    def field(self, prop: dict[str, Any], path: tuple[Any, ...], name: str, custom: dict[str, Any]) -> dict[str, Any]:
        read = field_type(prop, self.choices, self.server)
        dtype, length = read.type, read.length
        written_type = own_type(custom.get("type"))
        if written_type is not None:  # the tscontract type this package's export kept (an enum)
            dtype, length, read = written_type, None, Read(written_type)
        self.take(*path, "physicalType")
        self.take(*path, "logicalType")
        typed = self.render((*path, "physicalType" if "physicalType" in prop else "logicalType"))
        if read.open is not None:
            self.open.setdefault(read.open, []).append(str(prop.get("name") or prop.get("physicalName")))
        if read.note is not None:
            self.field_notes.setdefault(name, []).append(f"{typed}: {read.note}")
        if read.naive:
            self.naive(prop, path, name, typed)
        entry: dict[str, Any] = {"type": dtype}
        for k in _ROUND_TRIP_FIELD:
            if k in custom:
                entry[k] = custom[k]
        if isinstance(prop.get("description"), str):
            self.take(*path, "description")
            entry["description"] = prop["description"]
        if isinstance(prop.get("businessName"), str) and "note" not in entry:
            self.take(*path, "businessName")
            entry["note"] = f"business name: {prop['businessName']}"
        if length is not None:
            self.clauses.append(
                _Clause(
                    self.render((*path, "physicalType")),
                    str(prop.get("physicalType")),
                    f"length({name}) <= {length}",
                    source={"field": name, "stated": "physicalType"},
                )
            )
        for i, quality in enumerate(prop.get("quality") or []):
            if isinstance(quality, dict) and str(quality.get("name", "")) == f"field.{name}.constraint":
                entry["constraint"] = quality.get("description")
                self.take(*path, "quality", i)
            elif written_type and isinstance(quality, dict) and quality.get("name") == f"field.{name}.type":
                self.take(*path, "quality", i)  # the enum's members as invalidValues: the type itself
        self.type_options(prop, path, name, dtype)
        unique = _spelled(prop, "unique", "isUnique")
        if unique is not None and prop[unique] is True:
            self.unique.append((path, name, unique))
        elif unique is not None and prop[unique] is False:
            self.take(*path, unique)
        return entry

    def left_open(self) -> list[str]:
        """What the document leaves open, one phrase per option to give, naming its columns."""
        phrases = []
        for text, columns in self.open.items():
            names = ",".join(columns)
            phrases.append(
                text.format(columns=names) if "{columns}" in text else text.replace(": give", f" ({names}): give", 1)
            )
        return phrases

    def naive(self, prop: dict[str, Any], path: tuple[Any, ...], name: str, typed: str) -> None:
        """A timestamp without time zone: read as local time in the zone stated (mapping ``zone``)."""
        stated_options = prop.get("logicalTypeOptions")
        options: dict[str, Any] = stated_options if isinstance(stated_options, dict) else {}
        stated = options.get("defaultTimezone")
        zone = self.choices.timezone
        how = "--timezone"
        if isinstance(stated, str) and stated.strip():
            zone, how = stated.strip(), "its defaultTimezone"
            self.take(*path, "logicalTypeOptions", "defaultTimezone")
            self.stated.add((*path, "logicalTypeOptions", "defaultTimezone"))
        if zone is None:
            self.open.setdefault(
                "timestamps without time zone: give --timezone ZONE, the zone their values are written in "
                "(e.g. --timezone UTC)",
                [],
            ).append(str(prop.get("name") or prop.get("physicalName")))
            return
        self.zones[name] = zone
        self.field_notes.setdefault(name, []).append(
            f"{typed}: no time zone: values are local times in {zone} ({how}), made instants by the mapping"
        )

    def type_options(self, prop: dict[str, Any], path: tuple[Any, ...], name: str, dtype: str) -> None:
        """logicalTypeOptions: each key a clause, stated by the type, or left for :meth:`leftovers` to list."""
        options = prop.get("logicalTypeOptions")
        if not isinstance(options, dict):
            return
        where = (*path, "logicalTypeOptions")
        self.take(*where)
        if self.own and dtype == str(prop.get("physicalType", "")).strip():  # the export restates the type
            for k in ("minimum", "maximum", "multipleOf", "pattern"):
                self.take(*where, k)
        self.format_option(options, where, name, dtype)
        if (options.get("timezone") is not None and dtype.startswith("timestamp")) or options.get("timezone") is False:
            self.take(*where, "timezone")
            self.stated.add((*where, "timezone"))
        if str(options.get("defaultTimezone", "")).upper() in ("UTC", "Z", "ETC/UTC"):
            self.take(*where, "defaultTimezone")
            self.stated.add((*where, "defaultTimezone"))
        if self.own:
            self.stated |= {(*where, k) for k in options if (*where, k) in self.consumed}
        self.bounds(options, where, name)
        if (*where, "multipleOf") not in self.consumed and "multipleOf" in options:
            self.multiple_of(options["multipleOf"], (*where, "multipleOf"), name, dtype)
        for k, op in (("minLength", ">="), ("maxLength", "<=")):
            n = options.get(k)
            if (*where, k) not in self.consumed and isinstance(n, int) and not isinstance(n, bool):
                self.take(*where, k)
                self.clauses.append(
                    _Clause(
                        self.render((*where, k)),
                        f"{k}: {n}",
                        length_clause(name, op, n),
                        source={"field": name, "options": {k: n}},
                    )
                )
        if (*where, "pattern") not in self.consumed and "pattern" in options:
            self.pattern((*where, "pattern"), options["pattern"], name)
        for k in options:  # the keys nothing above took: listed (leftovers), never taken with the object
            if (*where, k) not in self.consumed:
                self.lose((*where, k), _OPTION_LOST.get(k, "a logicalTypeOptions key with no tscontract clause"))

    def pattern(self, where: tuple[Any, ...], regex: Any, name: str, written: str | None = None) -> None:
        try:
            clause = odcs_rules.matches_clause(name, regex)
        except odcs_rules.Refused as exc:
            self.lose(where, str(exc))
        else:
            self.take(*where)
            said = _Clause(self.render(where), written or f"pattern: {regex}", clause, column=name)
            said.source = {"options": {str(where[-1]): self.at(where)}}
            self.clauses.append(said)

    def format_option(self, options: dict[str, Any], where: tuple[Any, ...], name: str, dtype: str) -> None:
        """``format``: a width or a text form the type states, a well-defined text form as a pattern, else lost."""
        fmt = options.get("format")
        if fmt is None:
            return
        text = str(fmt)
        if (
            (text in ("i8", "i16", "i32", "i64", "f32", "f64") and dtype.startswith(("int", "float", "decimal")))
            or (dtype.startswith("timestamp") and ("HH" in text or text == "date-time"))
            or (dtype.startswith("timestamp") and dtype.endswith("_utc") and text.endswith("'Z'"))
            or (dtype == "date" and text in ("date", "yyyy-MM-dd"))
            or (dtype == "bytes" and text in ("binary", "byte"))
        ):
            self.take(*where, "format")
            self.stated.add((*where, "format"))
        elif dtype == "string" and (regex := format_regex(text)) is not None:
            self.pattern((*where, "format"), regex, name, f"format: {text}")
        elif dtype == "string":
            self.lose(
                (*where, "format"),
                f"format {text!r} on a string: no well-defined pattern states it (uuid, ipv4 and the "
                "type-changing date-time and date are read)",
            )
        else:
            self.lose((*where, "format"), f"format {text!r} on {dtype}: not a form the type states")

    def multiple_of(self, value: Any, where: tuple[Any, ...], name: str, dtype: str) -> None:
        """multipleOf on an integer: ``round(f / m) * m = f`` (exact while |f| < 2**53, division being IEEE);
        on a decimal whose scale it divides, stated by the type; on anything else listed."""
        literal = number_text(value)
        step = Decimal(literal) if literal is not None else None
        decimal = step is not None and step > 0 and dtype.startswith(("decimal", "numeric"))
        if decimal and step is not None and stated_by_scale(step, int(dtype.rstrip(")").split(",")[1])):
            self.take(*where)  # every value of the type is a multiple of its last digit
            self.stated.add(where)
            return
        if step is None or step <= 0 or not dtype.startswith("int") or step != step.to_integral_value():
            self.lose(
                where,
                f"multipleOf {literal or shown(value)} on {dtype}: tscontract states it for a whole step on an "
                "integer only (floating-point division makes other steps inexact)",
            )
            return
        self.take(*where)
        if step == 1:
            self.stated.add(where)
        else:
            assert literal is not None  # a whole step was read from it
            clause = multiple_of_clause(name, literal)
            said = _Clause(self.render(where), f"multipleOf: {literal}", clause, column=name)
            said.source = {"options": {"multipleOf": value}}
            self.clauses.append(said)

    def bounds(self, options: dict[str, Any], where: tuple[Any, ...], name: str) -> None:
        """minimum/maximum (exclusive as a flag, v3.0, or as the bound itself, v3.1) → comparisons."""
        found: list[tuple[str, str, str]] = []  # (key, operator, literal)
        for key, flag, inclusive, strict in (
            ("minimum", "exclusiveMinimum", ">=", ">"),
            ("maximum", "exclusiveMaximum", "<=", "<"),
        ):
            for k, op in ((key, inclusive), (flag, strict)):
                if (*where, k) in self.consumed or k not in options:
                    continue
                value = options[k]
                if isinstance(value, bool):
                    if k == flag and isinstance(options.get(key), int | Decimal | str):
                        self.take(*where, k)  # read with its bound
                    elif value is False:
                        self.take(*where, k)
                    continue
                literal = bound_literal(value)
                if literal is None:
                    continue
                exclusive = k == flag or options.get(flag) is True
                found.append((k, strict if exclusive else op, literal))
        for k, op, literal in found:
            self.take(*where, k)
            written = f"{k}: {options[k]}" + (f", {k.replace('imum', '')} exclusive" if op in ("<", ">") else "")
            said = _Clause(self.render((*where, k)), written, f"{name} {op} {literal}", column=name)
            flag = f"exclusive{k[0].upper()}{k[1:]}"
            said.source = {"options": {k: options[k], **({flag: options[flag]} if flag in options else {})}}
            self.clauses.append(said)

    # ------------------------------------------------------------ key and time
    def resolve(self, written: str, option: str) -> str:
        if written in self.fields:
            return written
        if written in self.names:
            return self.names[written]
        raise InputError(f"{option} {written!r} is not a property of the object; its fields: {', '.join(self.fields)}")

    def key_and_time(self, section: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
        props = [p for p in self.record.get("properties") or [] if isinstance(p, dict)]
        if self.key_option:
            key = [self.resolve(k, "--key") for k in self.key_option]
        elif section.get("key"):
            key = list(section["key"])
        else:
            ranked = sorted(
                (p for p in props if p.get("primaryKey") is True and str(p.get("name")) in self.names),
                key=lambda p: (
                    p["primaryKeyPosition"]
                    if isinstance(p.get("primaryKeyPosition"), int) and p["primaryKeyPosition"] > 0
                    else 10**6
                ),
            )
            key = [self.names[str(p["name"])] for p in ranked]
        for i, prop in enumerate(self.record.get("properties") or []):
            if isinstance(prop, dict) and str(prop.get("name")) in self.names:  # the key, or --key instead
                self.take(*self.base, "properties", i, "primaryKey")
                self.take(*self.base, "properties", i, "primaryKeyPosition")
        dates = [n for n, f in self.fields.items() if f["type"] == "date"]
        hint = f" (date columns, not instants: {', '.join(dates)})" if dates else ""
        return time_and_key(
            self.fields,
            key,
            section["time"] if isinstance(section.get("time"), dict) else None,
            (self.time_option, self.resolve(self.time_option, "--time-column")) if self.time_option else None,
            "no time column: a tscontract contract describes a time series and the object has no "
            f"timestamp property{hint}; give --time-column C with --type PHYSICAL=timestamp_us_utc for a column "
            "whose type holds instants (e.g. --type string=timestamp_us_utc)",
            "the primary key",
        )

    def nullability(self, key: list[str], time_column: str | None, provenance: list[str]) -> None:
        for i, prop in enumerate(self.record.get("properties") or []):
            name = self.names.get(str(prop.get("name"))) if isinstance(prop, dict) else None
            spelled = _spelled(prop, "required", "isNullable") if isinstance(prop, dict) else None
            if name not in self.fields or spelled is None:
                continue
            self.take(*self.base, "properties", i, spelled)
            entry = self.fields[name]
            if "nullable" in entry:
                continue
            required = bool(prop[spelled]) if spelled == "required" else not prop[spelled]
            never_null = name in key or name == time_column or name in provenance
            if required != never_null:
                if never_null and prop.get("primaryKey") is True:
                    continue  # a primary key column is never null (SQL's PRIMARY KEY): required: false adds nothing
                if never_null:  # the key or time column chosen (--key, --time-column): never null
                    role = "key" if name in key else "time" if name == time_column else "provenance"
                    self.field_notes.setdefault(name, []).append(
                        f"{self.render((*self.base, 'properties', i, spelled))}: "
                        f"{str(prop[spelled]).lower()} in the document; "
                        f"as a {role} column it is never null"
                    )
                else:
                    entry["nullable"] = not required


# the clauses logicalTypeOptions read as: written here once, for the import and for the export's check that a
# carried option still reads as its clause (interop/odcs/reread.py)


def length_clause(name: str, op: str, n: int) -> str:
    """``minLength``/``maxLength``: ``length(f) >= n``."""
    return f"length({name}) {op} {n}"


def multiple_of_clause(name: str, literal: str) -> str:
    """``multipleOf`` on an integer: ``round(f / m) * m = f``."""
    return f"round({name} / {literal}) * {literal} = {name}"


def bound_literal(value: Any) -> str | None:
    """A ``minimum``/``maximum`` as a clause's literal: a number, or a quoted text (a date, an instant)."""
    literal = number_text(value)
    if literal is None and isinstance(value, str):
        literal = "'" + value.replace("'", "''") + "'"
    return literal


def stated_by_scale(step: Decimal, scale: int) -> bool:
    """Whether every value of a decimal of ``scale`` is a multiple of ``step`` (its last digit's multiple)."""
    return (Decimal(1).scaleb(-scale) / step) % 1 == 0


def format_regex(text: str) -> str | None:
    """The pattern a text ``format`` states (uuid, ipv4, a written form), if any."""
    return FORMAT_PATTERNS.get(text.lower()) or written_form(text)
