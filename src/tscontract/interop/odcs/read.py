"""ODCS v3.0.x / v3.1 documents into tscontract contracts, with every element that has no place listed.

One contract per schema object (:func:`import_document`). What maps to what:

- property ``name`` → the field name; a name that is not an identifier (``Transaction Date``) is
  lower-cased with ``_`` for every run of other characters (``transaction_date``). The column the
  data has — ``physicalName``, else the name as written — goes into a **mapping** (``columns:
  {field: {from: COLUMN}}``) whenever it differs from the field name, so ``validate --mapping``
  reads the data by it.
- types: ``physicalType`` when it is a tscontract type (a document this package wrote) or a SQL
  type it knows (``varchar(n)``, ``bigint``, ``numeric(p,s)``, ``timestamptz``, ...), else
  ``logicalType`` (``timestamp``, v3.1; ``date`` with a time format). Nothing is read as a nearby
  type: what the document leaves open (a timestamp's zone, a decimal's precision, a type it defines,
  a nested column) refuses the object in one line naming the option that states it
  (:class:`~tscontract.interop.odcs.types.Choices`: ``--timezone``, ``--decimal``, ``--type``, ``--drop``).
- ``required`` → ``nullable``; ``primaryKey``/``primaryKeyPosition`` → ``key`` (``--key`` when
  there is none); the time column is the key's instant, or the only instant (``--time-column``).
- logicalTypeOptions ``minimum``/``maximum``/``exclusive*`` → a field ``constraint`` (or an
  invariant for the second bound), ``minLength``/``maxLength`` and ``varchar(n)`` → ``length()``
  invariants, ``pattern`` → ``matches``; ``unique: true`` → the key or the field's ``unique``.
- quality rules (library, sql, dqx, Soda/GX row counts) → nullable, key, ``unique``, invariants (with severity,
  ``max_failing``, description, dimension as note), ``row_count``, ``sql_checks``; how each is read
  and when it is refused is in :mod:`tscontract.interop.odcs.rules`.
- slaProperties ``latency``/``freshness`` on an instant of the object → ``freshness``.
- elements that describe rather than check — tags, links (authoritativeDefinitions), customProperties,
  servers, team, roles, support, price, status, the other SLA properties, classification, examples,
  the table's name ... (``_KEPT``) — are kept as written, one ``PATH: VALUE`` line each (the value as
  JSON), in the note of their field (a property's) or of the contract; ``Imported.kept`` lists them.
- everything else — relationships, a rule with no exact form, an unknown key ... — is a :class:`Loss`
  with its path, text and reason, and refuses the object unless ``allow_loss`` (``--allow-loss``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tscontract.contract.model import IDENTIFIER, SEMVER
from tscontract.contract.source import load_yaml
from tscontract.errors import InputError, SourceError, TscontractError
from tscontract.interop.odcs import rules as odcs_rules
from tscontract.interop.odcs.types import Choices, Read, field_type, nested, server_type
from tscontract.interop.odcs.yaml_out import CONTRACT_ORDER, dump

_TEXT_SHOWN = 200
_MAX_RETRIES = 50
_LOSSES_NAMED = 3  # the losses a refusal names in its one line


@dataclass(frozen=True)
class Loss:
    """An element of the ODCS document the contract does not carry."""

    path: str
    text: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "text": self.text, "reason": self.reason}

    def line(self) -> str:
        return f"{self.path}: {self.reason}: {self.text}"


@dataclass
class Imported:
    """One schema object as a contract: its YAML, the mapping that renames columns, the losses."""

    object: str
    contract: str
    text: str
    mapping: str | None = None
    losses: list[Loss] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # descriptive elements kept as written in notes, by path

    def to_json(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "contract": self.contract,
            "mapping": self.mapping is not None,
            "lost": [loss.to_json() for loss in self.losses],
            "kept": list(self.kept),
        }


def shown(value: Any) -> str:
    """An element as one line of text, at most 200 characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_SHOWN else text[: _TEXT_SHOWN - 3] + "..."


def identifier(name: str) -> str:
    """``Transaction Date`` → ``transaction_date``; an identifier stays as written."""
    if IDENTIFIER.match(name):
        return name
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    out = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_") or "column"
    return f"_{out}" if out[0].isdigit() else out


def load_document(text: str) -> dict[str, Any]:
    """The ODCS document as a plain tree, or a one-line :class:`InputError`."""
    try:
        tree, _ = load_yaml(text, "<odcs>")
    except TscontractError as exc:
        raise InputError(f"not an ODCS document: {exc.one_line()}") from None
    if not isinstance(tree, dict) or tree.get("kind") != "DataContract":
        raise InputError("not an ODCS document: kind is not DataContract")
    if not str(tree.get("apiVersion", "")).startswith("v3."):
        raise InputError(f"ODCS apiVersion {tree.get('apiVersion')!r} is not v3.x")
    objects = tree.get("schema")
    if not isinstance(objects, list) or not objects or not all(isinstance(o, dict) for o in objects):
        raise InputError("the ODCS document has no schema objects to import")
    return tree


def object_names(tree: dict[str, Any]) -> list[str]:
    return [str(o.get("name") or o.get("physicalName") or f"schema[{i}]") for i, o in enumerate(tree["schema"])]


def import_document(
    text: str,
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
    refused: list[tuple[str, str]] | None = None,
    choices: Choices | None = None,
) -> list[Imported]:
    """One :class:`Imported` per schema object (or the one named), each loadable by tscontract.

    With ``refused`` (a list), an object of a several-object document that cannot be imported
    is added there as (name, reason) and the others are still imported; without it, or when
    every object is refused, the first refusal is raised. ``choices`` states what the document
    leaves open (a zone for naive timestamps, decimals' precision, types it defines, columns dropped).
    """
    return import_tree(load_document(text), object_name, key, time_column, refused, choices)


def import_tree(
    tree: dict[str, Any],
    object_name: str | None = None,
    key: list[str] | None = None,
    time_column: str | None = None,
    refused: list[tuple[str, str]] | None = None,
    choices: Choices | None = None,
) -> list[Imported]:
    """:func:`import_document` of a document :func:`load_document` read (a large one is read once)."""
    names = object_names(tree)
    if object_name is not None:
        if object_name not in names:
            raise InputError(f"no schema object {object_name!r} in the document; it has: {', '.join(names)}")
        chosen = [names.index(object_name)]
    else:
        chosen = list(range(len(names)))
    single = len(names) == 1
    results: list[Imported] = []
    first: InputError | None = None
    for index in chosen:
        try:
            results.append(ObjectImport(tree, index, single, key, time_column, choices or Choices()).run())
        except InputError as exc:
            if len(names) == 1:
                raise
            error = InputError(f"schema object {names[index]!r}: {exc}")
            if refused is None or len(chosen) == 1:
                raise error from None
            refused.append((names[index], str(exc)))
            first = first or error
    if not results and first is not None:
        raise first
    return results


def refusal(losses: list[Loss]) -> str:
    """One line for an object with elements that have no exact place: the first few, the option."""
    shown = "; ".join(f"{loss.path}: {loss.reason}" for loss in losses[:_LOSSES_NAMED])
    more = f"; and {len(losses) - _LOSSES_NAMED} more" if len(losses) > _LOSSES_NAMED else ""
    return (
        f"{len(losses)} element{'s' if len(losses) > 1 else ''} with no exact place in a tscontract contract "
        f"({shown}{more}); give --allow-loss to import without {'them' if len(losses) > 1 else 'it'} (each listed)"
    )


def _spelled(prop: dict[str, Any], v3: str, v2: str) -> str | None:
    """The key a property states a flag by: ODCS v3's (``required``, ``unique``), else v2's
    (``isNullable``, ``isUnique``), which documents written for v2 still carry."""
    return v3 if v3 in prop else v2 if v2 in prop else None


def verified(build: Any, losses: list[Loss]) -> str:
    """Contract YAML that loads: a generated clause the loader refuses becomes a loss, then retry."""
    from tscontract.contract.loader import parse_contract

    for _ in range(_MAX_RETRIES):
        text, generated = build()
        try:
            parse_contract(text, "<imported>")
            return str(text)
        except SourceError as exc:
            refused = {}
            for error in exc.all_errors():
                origin = _origin(error, generated) if isinstance(error, SourceError) else None
                if origin is not None and id(origin) not in refused:
                    refused[id(origin)] = (origin, error)
            if not refused:
                raise InputError(f"the imported contract does not load: {exc.one_line()}") from None
            for origin, error in refused.values():
                origin.dropped = True
                losses.append(
                    Loss(origin.path, origin.written, f"tscontract refuses {origin.clause!r}: {error.message}")
                )
    raise InputError("the imported contract does not load")  # pragma: no cover - bounded retries


def _origin(error: SourceError, generated: dict[str, _Clause]) -> _Clause | None:
    """The generated clause an error is in: its section, or the longest generated section above it."""
    section = error.section or ""
    above = [k for k in generated if section == k or section.startswith((f"{k}.", f"{k}["))]
    return generated[max(above, key=len)] if above else None


def _plain(value: Any) -> Any:
    """A YAML value as JSON data: numbers as numbers, dates and times as their ISO text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and "." not in str(value) else float(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _lines(value: Any) -> Any:
    """A text of several lines as a YAML block (``|``), one line as it is."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    return LiteralScalarString(value) if isinstance(value, str) and "\n" in value else value


def semver(value: Any, losses: list[Loss]) -> str:
    text = str(value) if value is not None else ""
    if SEMVER.match(text):
        return text
    losses.append(Loss("version", shown(value), "not semantic versioning (MAJOR.MINOR.PATCH): written as 0.0.0"))
    return "0.0.0"


def own_type(value: Any) -> str | None:
    """A tscontract type kept in a property's customProperties (``type: enum[good, bad]``), if it parses."""
    from tscontract.contract.grammar import ClauseSyntaxError
    from tscontract.contract.types import parse_type

    if not isinstance(value, str):
        return None
    try:
        return parse_type(value).text
    except ClauseSyntaxError:
        return None


def in_clause(column: str, values: Any) -> str:
    """``f in ('a', 'b')`` for a list of values (nulls apart: a null passes every clause)."""
    if not isinstance(values, list) or not any(v is not None for v in values):
        raise odcs_rules.Refused(f"no values to be in: {shown(values)}")
    literals = [number_text(v) or "'" + str(v).replace("'", "''") + "'" for v in values if v is not None]
    return f"{column} in ({', '.join(literals)})"


def number_text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    return format(Decimal(value), "f")


def contract_name(written: str) -> str:
    """A contract name (a letter first, then letters, digits, ``_.-``) for a name as a document writes it."""
    name = written if re.match(r"^[A-Za-z][A-Za-z0-9_.-]*$", written) else identifier(written)
    return name if name[:1].isalpha() else f"c{name}"


def time_and_key(
    fields: dict[str, dict[str, Any]],
    key: list[str],
    time: dict[str, Any] | None,
    time_option: tuple[str, str] | None,
    no_instant: str,
    key_name: str,
) -> tuple[list[str], dict[str, Any]]:
    """The time rules (``--time-column`` as written and its field; the stated ones; the key's instant,
    else the only one) and the key, which must include the time column; else a one-line refusal naming
    the candidates (``no_instant`` when there is no instant at all)."""
    instants = [n for n, f in fields.items() if str(f["type"]).startswith("timestamp")]
    if time_option is not None:
        written, column = time_option
        if column not in instants:
            raise InputError(
                f"--time-column {written!r} is {fields[column]['type']}, not an instant"
                f"{'; instants: ' + ', '.join(instants) if instants else ''}"
            )
        time = {"column": column}
    elif time is None:
        in_key = [c for c in key if c in instants]
        chosen = in_key if len(in_key) == 1 else instants if len(instants) == 1 else []
        if not chosen:
            if not instants:
                raise InputError(no_instant)
            raise InputError(f"no time column: give --time-column C (candidates: {', '.join(instants)})")
        time = {"column": chosen[0]}
    column = time["column"]
    if not key:
        others = [n for n, f in fields.items() if n != column and not str(f["type"]).startswith(("float", "bool"))]
        raise InputError(
            f"no primary key: give --key COLUMNS (the key must include the time column {column}; "
            f"candidates: {', '.join([column, *others[:6]])})"
        )
    if column not in key:
        raise InputError(
            f"{key_name} ({', '.join(key)}) does not include the time column {column}: "
            f"give --key (e.g. --key {','.join([*key, column])}) or --time-column"
        )
    return key, time


def place_clauses(
    clauses: list[_Clause], fields: dict[str, dict[str, Any]], generated: dict[str, _Clause]
) -> list[Any]:
    """The clauses not dropped: each the ``constraint`` of its field when it is the field's only clause,
    at error severity with no options, and starts with the field; else an invariant (in the returned
    list). ``generated`` gets the section each is written at."""
    invariants: list[Any] = []
    live = [c for c in clauses if not c.dropped]
    per_column = Counter(c.column for c in live if c.column)
    for c in live:
        entry = fields.get(c.column or "")
        if (
            c.column
            and entry is not None
            and "constraint" not in entry
            and per_column[c.column] == 1
            and not c.options()
            and c.clause.startswith(f"{c.column} ")
            and not c.clause.endswith(" is not null")
        ):
            entry["constraint"] = c.clause[len(c.column) + 1 :]
            generated[f"fields.{c.column}.constraint"] = c
            continue
        at = f"invariants[{len(invariants)}]"
        invariants.append({"clause": c.clause, **c.options()} if c.options() else c.clause)
        if c.written != "round-trip":
            generated[at] = c
    return invariants


def header_notes(mapped: bool, losses: list[Loss]) -> str:
    """The header comment lines after the origin: a mapping beside the file, what was not carried."""
    text = "# the data's own column names are in the mapping written beside this file\n" if mapped else ""
    if losses:
        text += "# not carried over (no place in tscontract, or read as stated):\n"
        text += "".join(f"#   {loss.line()}\n" for loss in losses)
    return text


def mapping_text(
    name: str,
    version: str,
    description: str,
    columns: dict[str, str],
    drop: list[str],
    zones: dict[str, str] | None = None,
) -> str | None:
    """The mapping that reads the data's own column names into the contract's fields, if any differ,
    and local times (``zones``: field -> the zone its naive timestamps are written in) as instants."""
    zones = zones or {}
    if not columns and not drop and not zones:
        return None
    mapping: dict[str, Any] = {"mapping": name, "transform_version": version, "description": description}
    if columns or zones:
        mapping["columns"] = {
            f: {"from": columns.get(f, f), **({"zone": zones[f]} if f in zones else {})}
            for f in [*columns, *(z for z in zones if z not in columns)]
        }
    if drop:
        mapping["drop"] = list(drop)
    return dump(mapping)


# ---------------------------------------------------------------- one schema object

_ROUND_TRIP_SECTIONS = {
    "series": "series",
    "time": "time",
    "units": "units",
    "revisionPolicy": "revision_policy",
    "completeness": "completeness",
    "freshness": "freshness",
    "provenanceRequired": "provenance_required",
    "calendars": "calendars",
}
_ROUND_TRIP_FIELD = ("unit", "dimension", "nullable", "value", "default", "aliases", "deprecated", "note")
# quality entries the export writes, each derived from a contract clause that the import restores
_CARRIED = re.compile(
    r"^(invariants\[\d+\]|key\.unique|source\.rows|time\.\w+|completeness|freshness|catalog\.\w+"
    r"|field\.\w+\.(value|constraint)|plausibility\..+|series\.pattern)$"
)
# reasons for what has no place and is not kept (_KEPT): a rule's own keys, relationships
_NO_PLACE = {
    "tags": "tags of a rule: no place in a tscontract clause",
    "authoritativeDefinitions": "links of a rule: no place in a tscontract clause",
    "customProperties": "custom properties of a rule: no place in a tscontract clause",
    "relationships": "relationships (foreign keys): no tscontract clause",
    "schedule": "scheduling: tscontract checks each batch it is given",
    "scheduler": "scheduling: tscontract checks each batch it is given",
    "businessImpact": "business impact: no place in a tscontract contract",
    "method": "no place in a tscontract contract",
    "id": "a rule id: tscontract names each check by its clause (check ids)",
}
# flags whose false (the default) states nothing a contract would carry
_FALSE_SAYS_NOTHING = ("partitioned", "criticalDataElement", "unique", "primaryKey")
# elements that describe rather than check, kept as written in the note of their field (a property's)
# or of the contract (the document's, the object's): ``<path>: <value as JSON>``, one line each
_KEPT = frozenset(
    (
        "name", "description", "status", "tenant", "domain", "dataProduct", "contractCreatedTs", "tags",
        "authoritativeDefinitions", "customProperties", "servers", "team", "roles", "support", "price",
        "slaDefaultElement", "slaProperties", "physicalName", "physicalType", "logicalType", "businessName",
        "dataGranularityDescription", "classification", "examples", "criticalDataElement", "encryptedName",
        "partitioned", "partitionKeyPosition", "transformSourceObjects", "transformLogic", "transformDescription",
    )
)  # fmt: skip
_NULL_METRICS = ("nullValues", "nullCheck")
_DUPLICATE_METRICS = ("duplicateValues", "duplicateCount", "uniqueCheck", "unique")
# the keys of a quality rule a native clause carries; the others (schedule, businessImpact ...) are listed
_RULE_KEYS = ("type", "metric", "rule", "arguments", "unit", "severity", "dimension", "description", "name")
_RULE_KEYS_SQL = ("query", "id")  # a sql rule's id names the check when it has no name


@dataclass
class _Clause:
    """A clause the import writes, and the ODCS element it comes from."""

    path: str
    written: str
    clause: str
    column: str | None = None  # a field constraint (else an invariant)
    severity: str = "error"
    dropped: bool = False
    max_failing: str | None = None
    description: str | None = None
    note: str | None = None  # the rule's dimension

    def options(self) -> dict[str, Any]:
        """severity, max_failing, description, note: the keys a clause section writes beside its rule."""
        out: dict[str, Any] = {"severity": self.severity} if self.severity != "error" else {}
        for k in ("max_failing", "description", "note"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        return out


class ObjectImport:
    """One schema object of a parsed ODCS document as a contract."""

    def __init__(
        self,
        tree: dict[str, Any],
        index: int,
        single: bool,
        key: list[str] | None,
        time_column: str | None,
        choices: Choices,
    ) -> None:
        self.tree = tree
        self.choices = choices
        self.server = server_type(tree.get("servers"))
        self.open: dict[str, list[str]] = {}  # what the document leaves open (ending in its option) -> columns
        self.zones: dict[str, str] = {}  # field -> the zone its naive timestamps are read in
        self.index = index
        self.record: dict[str, Any] = tree["schema"][index]
        self.single = single
        self.key_option = key
        self.time_option = time_column
        self.losses: list[Loss] = []
        self.consumed: set[tuple[Any, ...]] = set()
        self.clauses: list[_Clause] = []
        self.fields: dict[str, dict[str, Any]] = {}
        self.columns: dict[str, str] = {}  # field -> data column, where they differ
        self.drop: list[str] = []
        self.names: dict[str, str] = {}  # ODCS property name -> field name
        self.base: tuple[Any, ...] = ("schema", index)
        # (property path, field, key) with unique: true (isUnique: true, ODCS v2's spelling)
        self.unique: list[tuple[tuple[Any, ...], str, str]] = []
        self.uniques: dict[str, _Clause] = {}  # field -> its unique clause (unique: true, duplicateValues)
        self.row_count: dict[str, int] = {}
        self.row_count_origin: _Clause | None = None
        self.sql_checks: list[tuple[dict[str, Any], _Clause]] = []
        self.field_notes: dict[str, list[str]] = {}  # rules folded into nullable: false, their texts
        self.own = False  # a document this package's export wrote
        self.kept: list[str] = []  # paths of the descriptive elements kept in notes

    # ------------------------------------------------------------ bookkeeping
    def take(self, *path: Any) -> None:
        self.consumed.add(path)

    def lose(self, path: tuple[Any, ...], reason: str, value: Any = None) -> None:
        self.consumed.add(path)
        self.losses.append(Loss(self.render(path), shown(self.at(path) if value is None else value), reason))

    def at(self, path: tuple[Any, ...]) -> Any:
        node: Any = self.tree
        for part in path:
            node = node[part]
        return node

    def render(self, path: tuple[Any, ...]) -> str:
        text, node, parent = "", self.tree, None
        for part in path:
            if isinstance(part, int):
                item = node[part]
                name = item.get("name") if isinstance(item, dict) and parent in ("schema", "properties") else None
                text += f"[{name}]" if isinstance(name, str) else f"[{part}]"
            else:
                text += part if not text else f".{part}"
            parent, node = part, node[part]
        return text

    def leftovers(self) -> None:
        """Every element nothing took, listed at the highest level where nothing below it was taken."""
        touched = {path[:i] for path in self.consumed for i in range(len(path) + 1)}

        def walk(node: Any, path: tuple[Any, ...]) -> None:
            if path in self.consumed:
                return
            if path in touched and isinstance(node, dict | list):
                items = node.items() if isinstance(node, dict) else enumerate(node)
                for k, v in items:
                    walk(v, (*path, k))
                return
            last = next((p for p in reversed(path) if isinstance(p, str)), "")
            if node in (None, [], {}, "") or (node is False and last in _FALSE_SAYS_NOTHING):
                return
            if self.owner_key(path) in _KEPT:
                self.keep(path, node)
                return
            self.losses.append(
                Loss(self.render(path), shown(node), _NO_PLACE.get(last, "no place in a tscontract contract"))
            )

        for k, v in self.tree.items():
            if k != "schema":
                walk(v, (k,))
        walk(self.record, self.base)

    def owner_key(self, path: tuple[Any, ...]) -> Any:
        """The key an element has in the document, its object or its property (``tags`` of ``...tags[0]``)."""
        if path[0] != "schema":
            return path[0]
        rest = path[len(self.base) :]
        return rest[2] if len(rest) > 2 and rest[0] == "properties" else rest[0] if rest else None

    def keep(self, path: tuple[Any, ...], node: Any) -> None:
        """A descriptive element as written, in its field's note (a property's) or the contract's."""
        rest = path[len(self.base) :] if path[0] == "schema" else ()
        prop = self.record["properties"][rest[1]] if len(rest) > 2 and rest[0] == "properties" else None
        name = self.names.get(str(prop.get("name") or prop.get("physicalName"))) if prop is not None else None
        text = node if isinstance(node, str) else json.dumps(_plain(node), ensure_ascii=False)
        self.field_notes.setdefault(name if name in self.fields else "", []).append(f"{self.render(path)}: {text}")
        self.kept.append(self.render(path))

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
        top = self.round_trip((), ("source", "note", "evolution"))
        self.own = "key" in section
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

    def round_trip(self, base: tuple[Any, ...], names: tuple[str, ...]) -> dict[str, Any]:
        """customProperties this package's export writes, taken back."""
        found = {}
        element = self.at(base) if base else self.tree
        for i, item in enumerate(element.get("customProperties") or []):
            if isinstance(item, dict) and item.get("property") in names:
                found[item["property"]] = item.get("value")
                self.take(*base, "customProperties", i)
        return found

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
                self.drop.append(column)
                self.field_notes.setdefault("", []).append(
                    f"{self.render(path)}: not carried (--drop), the mapping drops column {column}"
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
                    self.render((*path, "physicalType")), str(prop.get("physicalType")), f"length({name}) <= {length}"
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
        options = prop.get("logicalTypeOptions") if isinstance(prop.get("logicalTypeOptions"), dict) else {}
        stated = options.get("defaultTimezone")
        zone = self.choices.timezone
        how = "--timezone"
        if isinstance(stated, str) and stated.strip():
            zone, how = stated.strip(), "its defaultTimezone"
            self.take(*path, "logicalTypeOptions", "defaultTimezone")
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
        options = prop.get("logicalTypeOptions")
        if not isinstance(options, dict):
            return
        where = (*path, "logicalTypeOptions")
        self.take(*where)
        if self.own and dtype == str(prop.get("physicalType", "")).strip():  # the export restates the type
            for k in ("minimum", "maximum", "multipleOf", "pattern"):
                self.take(*where, k)
        fmt = options.get("format")
        if fmt is not None and (
            fmt in ("i8", "i16", "i32", "i64", "f32", "f64", "yyyy-MM-dd")
            or (dtype.startswith("timestamp") and "HH" in str(fmt))
            or (dtype.startswith("timestamp") and dtype.endswith("_utc") and str(fmt).endswith("'Z'"))
        ):
            self.take(*where, "format")
        if options.get("timezone") is not None and dtype.startswith("timestamp"):
            self.take(*where, "timezone")
        if str(options.get("defaultTimezone", "")).upper() in ("UTC", "Z", "ETC/UTC"):
            self.take(*where, "defaultTimezone")
        self.bounds(options, where, name)
        for k, op in (("minLength", ">="), ("maxLength", "<=")):
            n = options.get(k)
            if (*where, k) not in self.consumed and isinstance(n, int) and not isinstance(n, bool):
                self.take(*where, k)
                self.clauses.append(_Clause(self.render((*where, k)), f"{k}: {n}", f"length({name}) {op} {n}"))
        if (*where, "pattern") not in self.consumed and "pattern" in options:
            try:
                clause = odcs_rules.matches_clause(name, options["pattern"])
            except odcs_rules.Refused as exc:
                self.lose((*where, "pattern"), str(exc))
            else:
                self.take(*where, "pattern")
                written = f"pattern: {options['pattern']}"
                self.clauses.append(_Clause(self.render((*where, "pattern")), written, clause, column=name))

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
                literal = number_text(value)
                if literal is None and isinstance(value, str):
                    literal = "'" + value.replace("'", "''") + "'"
                if literal is None:
                    continue
                exclusive = k == flag or options.get(flag) is True
                found.append((k, strict if exclusive else op, literal))
        for k, op, literal in found:
            self.take(*where, k)
            written = f"{k}: {options[k]}" + (f", {k.replace('imum', '')} exclusive" if op in ("<", ">") else "")
            self.clauses.append(_Clause(self.render((*where, k)), written, f"{name} {op} {literal}", column=name))

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
            f"timestamp property{hint}; give --time-column C",
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
            elif function == "is_in_list":
                origin.clause = in_clause(column, arguments.get("allowed"))
                self.clauses.append(origin)
            elif function == "is_in_range":
                origin.clause = odcs_rules.range_clause(column, arguments.get("min_limit"), arguments.get("max_limit"))
                self.clauses.append(origin)
            else:
                origin.clause = odcs_rules.matches_clause(column, arguments.get("regex"))
                self.clauses.append(origin)
        except odcs_rules.Refused as exc:
            self.lose(path, f"dqx rule: {exc}")
            return
        for k in ("type", "engine", "implementation", "description", "dimension"):
            self.take(*path, k)
        if reason:
            where = (*path, "implementation", "criticality")
            self.losses.append(Loss(self.render(where), shown(criticality), reason))

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
        )

    def not_null(self, name: str, share: str | None, origin: _Clause) -> None:
        """None allowed at error severity: ``nullable: false``; else the invariant ``f is not null``."""
        if share is None and origin.severity == "error":
            self.fields[name]["nullable"] = False
            self.fold_text(name, origin)
            return
        origin.clause = f"{name} is not null"
        self.clauses.append(origin)

    def unique_values(self, columns: list[str], share: str | None, origin: _Clause, key: list[str]) -> None:
        """Over the key: the key itself; over one other column: its ``unique``."""
        if columns and sorted(columns) == sorted(key):
            if share is not None or origin.severity != "error":
                raise odcs_rules.Refused("the key tolerates no repeated keys (key.unique is an error, no share)")
            self.fold_text(None, origin)
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
        arguments = q.get("arguments") if isinstance(q.get("arguments"), dict) else {}
        if metric == "rowCount":
            self.add_row_count(odcs_rules.row_count(q), origin)
            return
        if metric not in (*_NULL_METRICS, *_DUPLICATE_METRICS, "invalidValues"):
            raise odcs_rules.Refused("no tscontract clause for it")
        share = odcs_rules.failing_rows(q)
        origin.max_failing = share
        if metric in _DUPLICATE_METRICS:
            columns = [name] if name else [self.names.get(str(c), str(c)) for c in arguments.get("properties") or []]
            self.unique_values(columns, share, origin, key)
            return
        if name is None:
            raise odcs_rules.Refused(f"{metric} on the object, not on a property")
        if metric in _NULL_METRICS:
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
        sql_checks = []
        for entry, c in self.sql_checks:
            if not c.dropped:
                generated[f"sql_checks[{len(sql_checks)}]"] = c
                sql_checks.append({**entry, **c.options()})
        order = (
            "type",
            "nullable",
            "unit",
            "dimension",
            "value",
            "default",
            "constraint",
            "unique",
            "aliases",
            "deprecated",
        )
        fields = {n: {k: f[k] for k in (*order, "description", "note") if k in f} for n, f in fields.items()}
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
            header += "# descriptive elements (tags, links, servers, team ...) are in the notes: PATH: VALUE\n"
        notes = header_notes(bool(self.columns or self.drop or self.zones), self.losses)
        return header + notes + dump(ordered), generated

    def render_mapping(self, contract: str) -> str | None:
        return mapping_text(
            f"{contract}_odcs",
            "odcs-import",
            "the data's column names (ODCS physicalName) for the contract's fields",
            self.columns,
            self.drop,
            self.zones,
        )


def write_imported(results: list[Imported], out: Any) -> list[dict[str, str]]:
    """Write each contract (and its mapping); without ``out`` nothing is written (one contract, on stdout).

    ``out`` is a directory when there are several contracts or it is one already; else the contract
    file, its mapping beside it as ``<stem>.mapping.yaml``.
    """
    from pathlib import Path

    from tscontract.errors import display_path

    if out is None:
        if len(results) > 1:
            names = ", ".join(r.object for r in results)
            raise InputError(f"the document has {len(results)} schema objects ({names}): give --object NAME or -o DIR")
        (result,) = results
        if result.mapping is not None:
            result.losses.append(
                Loss("schema", "mapping", "the data's column names are kept in a mapping file: give -o to write it")
            )
        return [{}]
    out = Path(out)
    directory = len(results) > 1 or out.is_dir()
    target_dir = out if directory else out.parent
    if not target_dir.parent.is_dir() if directory else not target_dir.is_dir():
        raise InputError(f"--out {display_path(out)}: directory {display_path(target_dir)} does not exist")
    if directory:
        if out.exists() and not out.is_dir():
            raise InputError(f"--out {display_path(out)}: the document has several schema objects; give a directory")
        out.mkdir(exist_ok=True)
    written = []
    for result in results:
        contract_file = out / f"{result.contract}.yaml" if directory else out
        files = {"contract_file": contract_file}
        if result.mapping is not None:
            files["mapping_file"] = contract_file.with_name(f"{contract_file.stem}.mapping.yaml")
        for kind, path in files.items():
            try:
                path.write_text(result.text if kind == "contract_file" else str(result.mapping), encoding="utf-8")
            except OSError as exc:
                raise InputError(f"cannot write {display_path(path)}: {exc.strerror}") from None
        written.append({k: display_path(v) for k, v in files.items()})
    return written
