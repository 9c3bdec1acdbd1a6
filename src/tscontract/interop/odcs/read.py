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

from typing import Any

from tscontract.errors import InputError

# the draft-contract toolkit the other importers share, re-exported here where they import it from
from tscontract.interop.imports.result import Imported, Loss
from tscontract.interop.odcs.draft import (
    _Clause,
    contract_name,
    header_notes,
    identifier,
    in_clause,
    mapping_text,
    number_text,
    own_type,
    place_clauses,
    refusal,
    semver,
    shown,
    time_and_key,
    verified,
)
from tscontract.interop.odcs.objects import ObjectImport
from tscontract.interop.odcs.types import Choices
from tscontract.interop.odcs.walk import load_document, object_names

__all__ = [
    "Imported",
    "Loss",
    "ObjectImport",
    "_Clause",
    "contract_name",
    "header_notes",
    "identifier",
    "import_document",
    "import_tree",
    "in_clause",
    "load_document",
    "mapping_text",
    "number_text",
    "object_names",
    "own_type",
    "place_clauses",
    "refusal",
    "semver",
    "shown",
    "time_and_key",
    "verified",
    "write_imported",
]


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
