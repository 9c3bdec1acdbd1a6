"""One ODCS schema object as a contract: texts, owner, freshness, and the contract and mapping written."""

from __future__ import annotations

import re
from typing import Any

from tscontract.errors import InputError
from tscontract.interop.imports.result import Imported
from tscontract.interop.odcs.draft import (
    _Clause,
    _lines,
    contract_name,
    header_notes,
    mapping_text,
    place_clauses,
    refusal,
    semver,
    verified,
)
from tscontract.interop.odcs.quality import QualityReader
from tscontract.interop.odcs.walk import _ROUND_TRIP_SECTIONS, object_names
from tscontract.interop.odcs.yaml_out import CONTRACT_ORDER, dump

# the order a field's keys are written in the imported contract
_FIELD_ORDER = (
    "type",
    "nullable",
    "unit",
    "dimension",
    "value",
    "default",
    "constraint",
    "unique",
    "flag_of",
    "aliases",
    "deprecated",
    "description",
    "note",
)


class ObjectImport(QualityReader):
    """One schema object of a parsed ODCS document as a contract."""

    # ------------------------------------------------------------ the object
    def run(self) -> Imported:
        tree, record = self.tree, self.record
        for k in ("apiVersion", "kind", "id"):
            self.take(k)
        self.take("schema")
        for i in range(len(tree["schema"])):
            if i != self.index:
                self.take("schema", i)
        self.take(*self.base, "name")
        if record.get("logicalType") == "object":
            self.take(*self.base, "logicalType")
        if str(record.get("physicalType", "")).lower() in ("table", "view", "topic", "file", "object"):
            self.take(*self.base, "physicalType")
        object_name = object_names(tree)[self.index]
        section = self.round_trip(self.base, ("key", *_ROUND_TRIP_SECTIONS))
        top = self.round_trip((), ("source", "note", "evolution", "odcsCarried"))
        self.own = "key" in section
        self.carrying = not self.own or top.get("odcsCarried") is True  # an own document carries what it was given
        if self.own:  # a document this package wrote: what it derived from the contract comes back
            self.take("status")
            self.take("slaProperties")
            for k in ("physicalName", "physicalType", "dataGranularityDescription"):
                self.take(*self.base, k)
        contract: dict[str, Any] = {"contract": self.contract_name(object_name)}
        self.take("version")
        contract["version"] = semver(tree.get("version"), self.losses)
        owner = self.owner()
        if owner:
            contract["owner"] = owner
        contract.update(self.texts())
        for k in ("source", "note", "evolution"):
            if k in top:
                contract[k] = top[k] if k != "note" or "note" not in contract else f"{top[k]}\n{contract[k]}"
        self.properties(section)
        try:
            key, time = self.key_and_time(section)
        except InputError as exc:
            raise InputError("; ".join([*self.left_open(), str(exc)])) from None
        if self.open:
            raise InputError("; ".join(self.left_open()))
        self.rules_folded.append({"clause": f"key: [{', '.join(key)}]"})  # the primaryKey flags hold for it
        provenance = section.get("provenanceRequired") or []
        self.nullability(key, time.get("column"), provenance)
        self.quality(self.base, None, key)
        for i, prop in enumerate(record.get("properties") or []):
            if isinstance(prop, dict) and self.names.get(str(prop.get("name"))) in self.fields:
                self.quality((*self.base, "properties", i), self.names[str(prop.get("name"))], key)
        freshness = section.get("freshness") or self.freshness(time.get("column"))
        self.leftovers()

        def build() -> tuple[str, dict[str, _Clause]]:
            return self.render_contract(contract, section, key, time, freshness, provenance, object_name)

        text = verified(build, self.losses)
        if self.losses and not self.choices.allow_loss:
            raise InputError(refusal(self.losses))
        mapping = self.render_mapping(contract["contract"])
        return Imported(object_name, contract["contract"], text, mapping, self.losses, self.kept)

    def contract_name(self, object_name: str) -> str:
        document_name = self.tree.get("name")
        if self.single and isinstance(document_name, str) and document_name:
            self.take("name")
            wanted = document_name
        else:
            wanted = object_name
        return contract_name(wanted)

    def owner(self) -> str | None:
        team = self.tree.get("team")
        members = team.get("members") if isinstance(team, dict) else team
        for i, member in enumerate(members if isinstance(members, list) else []):
            if isinstance(member, dict) and "owner" in str(member.get("role", "")).lower() and member.get("username"):
                where = ("team", "members", i) if isinstance(team, dict) else ("team", i)
                self.take(*where, "username")
                self.take(*where, "role")
                return str(member["username"])
        if isinstance(team, dict) and isinstance(team.get("name"), str):
            self.take("team", "name")
            return team["name"]
        return None

    def texts(self) -> dict[str, str]:
        """description: the object's, else the purpose; the other texts as the note."""
        out: dict[str, str] = {}
        notes = []
        described = self.tree.get("description")
        purpose = None
        if isinstance(described, str):
            purpose = described
            self.take("description")
        elif isinstance(described, dict):
            for k in ("purpose", "usage", "limitations"):
                if isinstance(described.get(k), str):
                    self.take("description", k)
                    if k == "purpose":
                        purpose = described[k]
                    else:
                        notes.append(f"{k}: {described[k]}")
        own = self.record.get("description")
        if isinstance(own, str) and own:
            self.take(*self.base, "description")
            out["description"] = own
            if purpose:
                notes.insert(0, f"purpose: {purpose}")
        elif purpose:
            out["description"] = purpose
        for k, label in (("businessName", "business name"), ("dataGranularityDescription", "granularity")):
            if isinstance(self.record.get(k), str) and (*self.base, k) not in self.consumed:
                self.take(*self.base, k)
                notes.append(f"{label}: {self.record[k]}")
        if notes:
            out["note"] = "\n".join(notes)
        return out

    def freshness(self, time_column: str | None) -> dict[str, Any] | None:
        units = {
            "ms": "ms",
            "s": "s",
            "sec": "s",
            "second": "s",
            "seconds": "s",
            "m": "m",
            "min": "m",
            "minute": "m",
            "minutes": "m",
            "h": "h",
            "hr": "h",
            "hour": "h",
            "hours": "h",
            "d": "d",
            "day": "d",
            "days": "d",
            "w": "w",
            "week": "w",
            "weeks": "w",
            "mo": "month",
            "month": "month",
            "months": "month",
            "y": "year",
            "yr": "year",
            "year": "year",
            "years": "year",
        }
        found = None
        for i, sla in enumerate(self.tree.get("slaProperties") or []):
            if ("slaProperties",) in self.consumed:  # a document this package wrote: its own latency
                break
            if not isinstance(sla, dict) or sla.get("property") not in ("latency", "freshness"):
                continue  # descriptive (retention, availability ...): kept in the note
            unit = units.get(str(sla.get("unit", "")).lower())
            value = sla.get("value")
            written = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]+)\s*", value) if isinstance(value, str) else None
            if written is not None and "unit" not in sla and written.group(2).lower() in units:
                value, unit = int(written.group(1)), units[written.group(2).lower()]  # "500ms": value and unit
            element = sla.get("element") or self.tree.get("slaDefaultElement")
            column = self.sla_column(str(element)) if element else time_column
            if found is not None:
                self.lose(("slaProperties", i), f"a second {sla['property']}: the contract has one freshness")
            elif not unit or not isinstance(value, int) or isinstance(value, bool):
                self.lose(("slaProperties", i), f"{sla['property']} not a whole number of a time unit")
            elif column is None:
                self.lose(
                    ("slaProperties", i),
                    f"{sla['property']} of {element}: not an instant column of this object (freshness reads one)",
                )
            else:
                for k in ("property", "value", "unit", "element", "driver"):
                    self.take("slaProperties", i, k)
                if not sla.get("element") and element:
                    self.take("slaDefaultElement")
                found = {"max_age": f"{value}{unit}", **({"column": column} if column != time_column else {})}
                self.rules_folded.append({"clause": f"freshness: {found['max_age']}", "sla": i})
        return found

    def sla_column(self, element: str) -> str | None:
        """The instant field an SLA ``element`` (``table.column`` or ``column``) names, if of this object."""
        table, _, written = element.rpartition(".")
        names = {str(n).lower() for n in (object_names(self.tree)[self.index], self.record.get("physicalName")) if n}
        if table and table.lower() not in names:
            return None
        by_column = {column.lower(): name for name, column in self.columns.items()}
        name = self.names.get(written) or by_column.get(written.lower()) or written
        return name if str(self.fields.get(name, {}).get("type", "")).startswith("timestamp") else None

    # ------------------------------------------------------------ output
    def render_contract(
        self,
        contract: dict[str, Any],
        section: dict[str, Any],
        key: list[str],
        time: dict[str, Any],
        freshness: Any,
        provenance: list[str],
        object_name: str,
    ) -> tuple[str, dict[str, _Clause]]:
        fields = {n: dict(f) for n, f in self.fields.items()}
        for name, texts in self.field_notes.items():
            if name in fields:
                fields[name]["note"] = "\n".join(
                    [*([fields[name]["note"]] if fields[name].get("note") else []), *texts]
                )
        if "" in self.field_notes:
            contract = {
                **contract,
                "note": "\n".join([*([contract["note"]] if contract.get("note") else []), *self.field_notes[""]]),
            }
        generated: dict[str, _Clause] = {}
        invariants = place_clauses(self.clauses, fields, generated)
        for name, c in self.uniques.items():
            if not c.dropped and name in fields:
                fields[name]["unique"] = c.options() or True
                generated[f"fields.{name}.unique"] = c
        row_count = None
        if self.row_count_origin is not None and not self.row_count_origin.dropped:
            row_count = {**self.row_count, **self.row_count_origin.options()}
            generated["row_count"] = self.row_count_origin
        sql_checks: list[dict[str, Any]] = []
        for entry, c in self.sql_checks:
            if not c.dropped:
                generated[f"sql_checks[{len(sql_checks)}]"] = c
                sql_checks.append({**entry, **c.options()})
        fields = {n: {k: f[k] for k in _FIELD_ORDER if k in f} for n, f in fields.items()}
        self.rules_carried = self.rules_said(sql_checks)
        body = {
            **contract,
            "series": section.get("series"),
            "key": key,
            "time": time,
            "fields": fields,
            "units": section.get("units"),
            "invariants": invariants,
            "row_count": row_count,
            "sql_checks": sql_checks,
            "revision_policy": section.get("revisionPolicy"),
            "completeness": section.get("completeness"),
            "freshness": freshness,
            "provenance_required": provenance,
            "calendars": section.get("calendars"),
            "odcs": (self.carried() or None) if self.carrying else None,
        }
        sections = list(CONTRACT_ORDER)
        for k in ("sql_checks", "row_count"):  # rule sections, after the invariants
            if k not in sections:
                sections.insert(sections.index("invariants") + 1, k)
        ordered = {k: _lines(body[k]) for k in sections if body.get(k) not in (None, [], {})}
        for entry in ordered["fields"].values():
            entry.update({k: _lines(entry[k]) for k in ("description", "note") if k in entry})
        header = f"# imported from ODCS {self.tree.get('apiVersion')} document {self.tree.get('id', '')}".rstrip()
        header += f", schema object {object_name}\n"
        if self.kept:
            header += "# the document's own elements (id, names, servers, SLA, team, roles, tags ...) are in odcs\n"
        notes = header_notes(bool(self.columns or self.drop or self.zones), self.losses)
        return header + notes + dump(ordered), generated

    def rules_said(self, sql_checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rules and options each clause written came from (export odcs writes them back while the clause
        is unchanged)."""
        rules = list(self.rules_folded)
        rules += [c.became() for c in self.clauses if not c.dropped and c.source]
        rules += [
            {**c.became(), "clause": f"unique: {name}", "field": name}
            for name, c in self.uniques.items()
            if not c.dropped and c.source and name in self.fields
        ]
        origin = self.row_count_origin
        if origin is not None and not origin.dropped and origin.source:
            rules.append({**origin.became(), "clause": "row_count"})
        live = [c for _, c in self.sql_checks if not c.dropped]
        rules += [
            {**c.became(), "clause": f"sql_checks: {entry['name']}"}
            for entry, c in zip(sql_checks, live, strict=True)
            if c.source
        ]
        return rules

    def render_mapping(self, contract: str) -> str | None:
        return mapping_text(
            f"{contract}_odcs",
            "odcs-import",
            "the data's column names (ODCS physicalName) for the contract's fields",
            self.columns,
            self.drop,
            self.zones,
        )
