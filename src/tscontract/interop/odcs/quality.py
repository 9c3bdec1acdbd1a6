"""An ODCS object's quality rules (library, sql, dqx, row counts) as nullability, uniqueness, invariants,
row_count and sql_checks."""

from __future__ import annotations

from typing import Any

from tscontract.contract.model import IDENTIFIER
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.draft import Loss, _Clause, _plain, identifier, in_clause, shown
from tscontract.interop.odcs.fields import FieldReader
from tscontract.interop.odcs.walk import (
    _CARRIED,
    _RULE_KEYS,
    _RULE_KEYS_SQL,
    DUPLICATE_METRICS,
    NULL_METRICS,
    object_names,
)


class QualityReader(FieldReader):
    """The object's quality rules, each a clause or a loss."""

    # ------------------------------------------------------------ quality
    def quality(self, where: tuple[Any, ...], name: str | None, key: list[str]) -> None:
        element = self.at(where)
        for i, q in enumerate(element.get("quality") or []):
            path = (*where, "quality", i)
            if path in self.consumed:
                continue
            if not isinstance(q, dict):
                self.lose(path, "not a quality rule")
                continue
            self.rule(q, path, name, key)
        for path, column, spelled in self.unique:
            if path[: len(where)] == where and name == column:
                self.take(*path, spelled)
                if key != [column] and column not in self.uniques:
                    self.uniques[column] = _Clause(self.render((*path, spelled)), f"{spelled}: true", "unique: true")

    def rule(self, q: dict[str, Any], path: tuple[Any, ...], name: str | None, key: list[str]) -> None:
        kind = str(q.get("type") or ("library" if q.get("metric") or q.get("rule") else "")).lower()
        label = str(q.get("name", ""))
        if kind in ("sql", "custom") and _CARRIED.match(label):
            if label.startswith("invariants["):
                self.take(*path)
                share = q.get("unit") == "percent" and odcs_rules.failing_rows(q)  # the export's max_failing
                self.clauses.append(
                    _Clause(
                        self.render(path),
                        label,
                        str(q.get("description")),
                        severity=str(q.get("severity", "error")),
                        max_failing=share or None,
                    )
                )
                self.clauses[-1].written = "round-trip"
            else:
                self.take(*path)
            return
        if kind == "text":
            self.lose(path, "a rule in words: nothing to execute")
            return
        if kind == "custom" and str(q.get("engine", "")).lower() == "dqx":
            self.dqx_rule(q, path, name, key)
            return
        if kind == "custom":  # Soda, GX: row-count bounds are read
            try:
                severity, reason = odcs_rules.severity(q.get("severity"))
                self.add_row_count(odcs_rules.engine_row_count(q), self.origin(q, path, None, severity))
            except odcs_rules.Refused as exc:
                self.lose(path, str(exc))
                return
            for k in ("type", "engine", "implementation", "description", "dimension", "severity"):
                self.take(*path, k)
            if reason:
                self.losses.append(Loss(self.render((*path, "severity")), shown(q["severity"]), reason))
            return
        if kind not in ("sql", "library"):
            self.lose(path, f"quality rule of type {q.get('type')!r}: unknown")
            return
        metric = str(q.get("metric") or q.get("rule") or "")
        severity, severity_reason = odcs_rules.severity(q.get("severity"))
        # a rule this package's export derived from a row_count or sql_checks clause: its text is the clause's
        derived = self.own and (label == "batch.row_count" or label.startswith("sql_checks."))
        if self.own:
            self.take(*path, "id")
        origin = self.origin(q, path, name, severity)
        if derived:
            origin.description = origin.note = None
        try:
            if kind == "sql":
                self.sql_rule(q, origin, name)
            else:
                self.library_rule(q, path, metric, origin, name, key)
        except odcs_rules.Refused as exc:
            what = "SQL check" if kind == "sql" else f"library rule {metric!r}"
            self.lose(path, f"{what}: {exc}")
            return
        for k in (
            *_RULE_KEYS,
            *(_RULE_KEYS_SQL if kind == "sql" else ()),
            "validValues",
            "pattern",
            *odcs_rules.THRESHOLDS,
        ):
            if k in q:
                self.take(*path, k)
        if severity_reason:
            self.losses.append(Loss(self.render((*path, "severity")), shown(q["severity"]), severity_reason))

    def dqx_rule(self, q: dict[str, Any], path: tuple[Any, ...], name: str | None, key: list[str]) -> None:
        """A dqx check on one column (:func:`odcs_rules.dqx_check`) as the clause a library rule would give."""
        try:
            function, arguments, criticality, where = odcs_rules.dqx_check(q)
            columns = [str(c) for c in arguments.get("columns") or []]
            written = arguments.get("column") or (columns[0] if columns else None)
            column = name or (self.names.get(str(written)) if written is not None else None)
            if function == "sql_expression" and column is None:  # on the object: its first field stands in
                column = next(iter(self.fields))
            # (column as written, field) the rule reads: several together, or the one
            read = [(c, self.names.get(c, c)) for c in columns] if len(columns) > 1 else [(written, column)]
            missing = [c for c, f in read if f not in self.fields]
            if missing:
                raise odcs_rules.Refused(f"column {missing[0]!r} is not a field of this object")
            fields = [str(f) for _, f in read]
            assert column is not None
            severity, reason = odcs_rules.severity(criticality)
            origin = self.origin(q, path, column, severity)
            if where is not None or len(fields) > 1 or function not in odcs_rules.DQX_CLAUSES:  # a SQL check
                query = odcs_rules.dqx_failing_sql(function, arguments, fields, where)
                self.sql_rule({"query": query, "mustBe": 0, "name": q.get("name")}, origin, name)
                origin.note = "\n".join(
                    t for t in (origin.note, f"dqx {function}" + (f" where {where}" if where else "")) if t
                )
            elif function in ("is_valid_date", "is_valid_timestamp"):  # what the field's type already states
                kind = "date" if function == "is_valid_date" else "timestamp"
                if not str(self.fields[column]["type"]).startswith(kind):
                    raise odcs_rules.Refused(f"{function} on a {self.fields[column]['type']} column: no clause")
                self.field_notes.setdefault(column, []).append(
                    f"{self.render(path)}: dqx {function}, stated by the type {self.fields[column]['type']}"
                )
            elif function == "is_not_null":
                self.not_null(column, None, origin)
            elif function == "is_unique":
                self.unique_values([column], None, origin, key)
            elif function == "is_in_list" and arguments.get("case_sensitive", True) is not False:
                origin.clause = in_clause(column, arguments.get("allowed"))
                self.clauses.append(origin)
            elif function == "is_in_range":
                origin.clause = odcs_rules.range_clause(column, arguments.get("min_limit"), arguments.get("max_limit"))
                self.clauses.append(origin)
            elif function == "regex_match":
                origin.clause = odcs_rules.matches_clause(column, arguments.get("regex"))
                self.clauses.append(origin)
            else:
                text = str(self.fields[column]["type"]).startswith(("string", "enum"))
                said = odcs_rules.dqx_clause(function, arguments, column, text)
                if said is None:  # what the field's type already states
                    self.field_notes.setdefault(column, []).append(
                        f"{self.render(path)}: dqx {function}, stated by the type"
                    )
                else:
                    origin.clause = said
                    self.clauses.append(origin)
        except odcs_rules.Refused as exc:
            self.lose(path, f"dqx rule: {exc}")
            return
        for k in ("type", "engine", "implementation", "description", "dimension"):
            self.take(*path, k)
        if reason:
            at = (*path, "implementation", "criticality")
            self.losses.append(Loss(self.render(at), shown(criticality), reason))

    def origin(self, q: dict[str, Any], path: tuple[Any, ...], column: str | None, severity: str) -> _Clause:
        dimension = q.get("dimension")
        return _Clause(
            self.render(path),
            shown(q),
            "",
            column=column,
            severity=severity,
            description=q["description"] if isinstance(q.get("description"), str) else None,
            note=f"ODCS dimension: {dimension}" if isinstance(dimension, str) and dimension else None,
            source={"rules": [_plain(q)], **({"at": column} if len(path) > len(self.base) + 2 else {})},
        )

    def not_null(self, name: str, share: str | None, origin: _Clause) -> None:
        """None allowed at error severity: ``nullable: false``; else the invariant ``f is not null``."""
        if share is None and origin.severity == "error":
            self.fields[name]["nullable"] = False
            self.fold_text(name, origin)
            self.rules_folded.append({"clause": f"{name} is not null", "field": name, **(origin.source or {})})
            return
        origin.clause = f"{name} is not null"
        self.clauses.append(origin)

    def unique_values(self, columns: list[str], share: str | None, origin: _Clause, key: list[str]) -> None:
        """Over the key: the key itself; over one other column: its ``unique``."""
        if columns and sorted(columns) == sorted(key):
            if share is not None or origin.severity != "error":
                raise odcs_rules.Refused("the key tolerates no repeated keys (key.unique is an error, no share)")
            self.fold_text(None, origin)
            self.rules_folded.append({"clause": "key.unique", **(origin.source or {})})
            return
        if len(columns) > 1 and share is None and all(c in self.fields for c in columns):
            # several columns together: a SQL check counting the values repeated (nulls apart)
            self.sql_rule(
                {"query": odcs_rules.dqx_failing_sql("is_unique", {}, columns, None), "mustBe": 0}, origin, None
            )
            return
        if len(columns) != 1 or columns[0] not in self.fields:
            raise odcs_rules.Refused(f"unique values of {', '.join(columns) or 'no column'} off the key")
        origin.clause = "unique: true"
        self.uniques[columns[0]] = origin

    def library_rule(
        self,
        q: dict[str, Any],
        path: tuple[Any, ...],
        metric: str,
        origin: _Clause,
        name: str | None,
        key: list[str],
    ) -> None:
        """A library rule as a native clause; :class:`odcs_rules.Refused` when it has no exact one."""
        stated_arguments = q.get("arguments")
        arguments: dict[str, Any] = stated_arguments if isinstance(stated_arguments, dict) else {}
        if metric == "rowCount":
            self.add_row_count(odcs_rules.row_count(q), origin)
            return
        if metric not in (*NULL_METRICS, *DUPLICATE_METRICS, "invalidValues"):
            raise odcs_rules.Refused("no tscontract clause for it")
        share = odcs_rules.failing_rows(q)
        origin.max_failing = share
        if metric in DUPLICATE_METRICS:
            columns = [name] if name else [self.names.get(str(c), str(c)) for c in arguments.get("properties") or []]
            self.unique_values(columns, share, origin, key)
            return
        if name is None:
            raise odcs_rules.Refused(f"{metric} on the object, not on a property")
        if metric in NULL_METRICS:
            self.not_null(name, share, origin)
            return
        valid = q.get("validValues", arguments.get("validValues"))
        pattern = q.get("pattern", arguments.get("pattern"))
        if valid is not None and pattern is not None:
            raise odcs_rules.Refused("validValues and pattern in one rule")
        if isinstance(valid, list) and any(v is not None for v in valid):
            origin.clause = in_clause(name, valid)
        elif pattern is not None:
            origin.clause = odcs_rules.matches_clause(name, pattern)
        else:
            raise odcs_rules.Refused("invalidValues without validValues or a pattern")
        self.clauses.append(origin)

    def fold_text(self, name: str | None, origin: _Clause) -> None:
        """A rule folded into nullable: false or the key keeps its words in the field's (or contract's) note."""
        text = "; ".join(t for t in (origin.description, origin.note) if t)
        if text:
            self.field_notes.setdefault(name or "", []).append(f"{origin.path}: {text}")

    def add_row_count(self, bounds: dict[str, int], origin: _Clause) -> None:
        if self.row_count_origin is not None and self.row_count_origin.severity != origin.severity:
            raise odcs_rules.Refused(f"a second row count at another severity than {self.row_count_origin.path}")
        merged = dict(self.row_count)
        if "min" in bounds:
            merged["min"] = max(bounds["min"], merged.get("min", bounds["min"]))
        if "max" in bounds:
            merged["max"] = min(bounds["max"], merged.get("max", bounds["max"]))
        if merged.get("min", 0) > merged.get("max", merged.get("min", 0)):
            raise odcs_rules.Refused(
                f"contradicts the row count of {self.row_count_origin and self.row_count_origin.path}"
            )
        if self.row_count_origin is None:
            origin.clause = "row_count"
            self.row_count_origin = origin
        else:  # the rules hold together: one row_count with both bounds
            if self.row_count_origin.source is not None and origin.source is not None:
                self.row_count_origin.source["rules"] += origin.source["rules"]
            for k in ("description", "note"):
                if getattr(origin, k) and getattr(origin, k) != getattr(self.row_count_origin, k):
                    joined = "; ".join(t for t in (getattr(self.row_count_origin, k), getattr(origin, k)) if t)
                    setattr(self.row_count_origin, k, joined)
        self.row_count = merged

    def sql_rule(self, q: dict[str, Any], origin: _Clause, name: str | None) -> None:
        from tscontract.contract.types import parse_type

        physical = self.record.get("physicalName")
        tables = {str(t).lower() for t in (object_names(self.tree)[self.index], physical) if t}
        columns = {field.lower(): field for field in self.fields}
        columns.update({column.lower(): field for field, column in self.columns.items()})
        types = {n: parse_type(str(f["type"])) for n, f in self.fields.items()}
        entry = odcs_rules.sql_check(
            q, tables, columns, name, types, odcs_rules.server_dialect(self.tree.get("servers"))
        )
        if "note" in entry:  # the query as written, in the document's dialect
            origin.note = "\n".join(t for t in (origin.note, entry.pop("note")) if t)
        taken = {e["name"] for e, _ in self.sql_checks}
        written = q.get("name") or q.get("id")
        if self.own and isinstance(written, str) and written.startswith("sql_checks."):
            written = written.removeprefix("sql_checks.")
        wanted = identifier(written) if isinstance(written, str) and written else None
        index = origin.path.rsplit("[", 1)[-1].rstrip("]")
        base = wanted if wanted and IDENTIFIER.match(wanted) else f"{name + '_' if name else ''}quality_{index}"
        check_name = base
        while check_name in taken:
            check_name += "_"
        origin.clause = f"sql_checks: {check_name}"
        self.sql_checks.append(({"name": check_name, **entry}, origin))
