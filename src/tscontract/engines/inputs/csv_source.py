"""CSV text as the engine's source: one row per record, malformed records kept and flagged.

Both engines hand over the same thing, the files' lines (``__tsc_file``, ``__tsc_line``
from 1, ``__tsc_text`` without its line break), and from there one set of statements,
run on DuckDB or generated for Spark, does the rest:

1. the header is the first line, split by the dialect's grammar; a column it leaves
   unnamed is named by its position (``column16``), a repeated name is an input error;
2. each line is split into fields (``string_split`` where it holds no quote); a line
   that leaves a quoted value open is continued by the next (records are assembled only
   when a file has such a line);
3. a record with the wrong number of fields, text after a closing quote or a quote never
   closed is a row all the same, with the reason in ``__tsc_malformed`` and its text in
   ``__tsc_record``: it fails ``source.rows``, it is never dropped;
4. rows are numbered 1.. in file order across the files; blank lines and comment lines
   are no rows;
5. where one pass finds every line well formed (nearly always), nothing is stored: the
   source view reads the files at each scan, with the engine's own CSV reader where it
   reads them to the same values (:meth:`CsvLayout.build`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tscontract.engines.inputs.csv_dialect import CsvDialect, CsvGrammar
from tscontract.errors import InputError, display_path
from tscontract.shown import cut

LINES_TABLE = "__tsc_csv_lines"
ROWS_TABLE = "__tsc_csv_rows"
MALFORMED = "__tsc_malformed"  # why a row is malformed; NULL where it is well formed
RECORD = "__tsc_record"  # a malformed row's text as written
BUFFER_LINE_BYTES = 16 << 20  # DuckDB's line buffer at first; files with longer lines are read with a larger one
MAX_LINE_BYTES = 64 << 20  # a longer line is refused (naming it): no buffer for it within the memory bound
MAX_HEADER_BYTES = 1 << 20  # a header line longer than this is refused before any reader sees it
MAX_COLUMNS = 2_000  # a first line with more fields is refused: 2,000 columns read in ~5 s and ~330 MB
_BOM = "\ufeff"
_RESERVED = ("__row", "__tsc_", "__jt_")


def _sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def first_line(path: Path, limit: int | None = None) -> str | None:
    """The first line of ``path`` without its line break and byte order mark; None for an empty file.

    ``limit``: the most bytes a header may have; a longer first line is an input error (read no further).
    Without one the line is read however long (a header-less file's first line is data)."""
    shown = display_path(path)
    with path.open("rb") as handle:
        raw = handle.readline() if limit is None else handle.readline(limit + 3)  # its BOM, CR, LF
    if not raw:
        return None
    if limit is not None and len(raw.removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n")) > limit:
        raise InputError(f"{shown}: the header (line 1) is longer than {limit >> 20} MiB; no CSV header is")
    raw = raw.removesuffix(b"\n").removesuffix(b"\r")
    if b"\r" in raw:  # a file whose lines end in a lone CR reads as one line: say so, not a repeated column
        raise InputError(f"{shown}: line 1 has a carriage return without a line feed; lines end in LF or CRLF")
    try:
        return raw.decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError:
        raise InputError(f"{display_path(path)}: line 1 is not UTF-8 text") from None


@dataclass
class CsvFile:
    """One input file: how messages name it, and its column names in file order."""

    label: str
    names: list[str]


class CsvLayout:
    """The files of one input under one dialect: the SQL that turns their lines into rows."""

    def __init__(self, dialect: CsvDialect, paths: list[Path], con: Any, *, spark: bool = False) -> None:
        self.dialect = dialect
        self.spark = spark
        self.delimiter = dialect.delimiter_for(paths)
        self.grammar = CsvGrammar(dialect, self.delimiter)
        self.files = [CsvFile(display_path(p), self._names(con, p)) for p in paths]
        self.columns = list(dict.fromkeys(n for f in self.files for n in f.names))
        self.same_header = all(f.names == self.files[0].names for f in self.files)
        self.malformed = False  # some row is malformed: the view has the flags (known once built)
        self.numbered = False  # the view numbers rows (``__row``; known once built)

    # ------------------------------------------------------------------ header
    def _names(self, con: Any, path: Path) -> list[str]:
        shown = display_path(path)
        line = first_line(path, MAX_HEADER_BYTES if self.dialect.header else None)
        if line is None:
            raise InputError(f"{shown}: empty file")
        if line == "":
            raise InputError(f"{shown}: line 1{' (the header)' if self.dialect.header else ''} is blank")
        grammar = self.grammar
        raw = f"list_transform({grammar.fields('t', 'q')}, lambda x: {grammar.value('x', 'q')})"
        names, ok, opens = con.execute(
            f"SELECT {raw}, {grammar.well_formed('t', 'q')}, {grammar.opens('t', 'q')} "
            f"FROM (SELECT t, {grammar.has_quote('t')} AS q FROM (SELECT {_sql(line)} AS t) s) s"
        ).fetchall()[0]
        what = "the header" if self.dialect.header else "line 1"
        if len(names) > MAX_COLUMNS:
            raise InputError(f"{shown}: {what} has {len(names)} fields; at most {MAX_COLUMNS:,} columns are read")
        if opens:
            raise InputError(f"{shown}: {what} opens a quoted value it does not close")
        if not ok:
            raise InputError(f"{shown}: {what} is not valid CSV: text follows the closing quote of a value")
        if not self.dialect.header:
            return [f"column{i}" for i in range(1, len(names) + 1)]
        # a column the header leaves unnamed (a vendor's trailing ';;') is named by its position, as
        # in a file without a header: never silently dropped, and unknown to a contract unless mapped
        names = [name if name else f"column{i}" for i, name in enumerate(names, 1)]
        seen: dict[str, int] = {}
        for i, name in enumerate(names, 1):
            if name in seen:
                twice = f"appears twice in the header (columns {seen[name]} and {i})"
                raise InputError(f"{shown}: column {cut(name)!r} {twice}")
            if name.startswith(_RESERVED):
                raise InputError(
                    f"{shown}: column {cut(name)!r}: names starting with __row, __tsc_ or __jt_ are reserved"
                )
            seen[name] = i
        return list(names)

    # ------------------------------------------------------------------ per file
    def _per_file(self, values: list[str], default: str = "NULL") -> str:
        if len(set(values)) == 1:
            return values[0]
        whens = " ".join(f"WHEN {i} THEN {v}" for i, v in enumerate(values))
        return f"CASE __tsc_file {whens} ELSE {default} END"

    def _item(self, pos: int) -> str:
        """Field ``pos`` (from 1) of the line; NULL past its end (Spark's ANSI ``p[i]`` would raise there)."""
        return f"try_element_at(__tsc_p, {pos})" if self.spark else f"__tsc_p[{pos}]"

    def _column(self, name: str) -> str:
        values = []
        for f in self.files:
            if name not in f.names:
                values.append("NULL")
                continue
            pos = f.names.index(name) + 1
            values.append(self.grammar.value(self._item(pos), "__tsc_q"))
        return self._per_file(values)

    def _reason(self) -> str:
        expected = self._per_file([str(len(f.names)) for f in self.files])
        prefix = "" if len(self.files) == 1 else self._per_file([_sql(f.label + ": ") for f in self.files], "''")
        line = f"{prefix + ' || ' if prefix else ''}'line ' || CAST(__tsc_line AS VARCHAR)"
        against = "the header has " if self.dialect.header else "line 1 has "
        fields = "CASE WHEN __tsc_n = 1 THEN ' field, ' ELSE ' fields, ' END"
        return (
            f"CASE WHEN __tsc_unclosed THEN {line} || ': a quoted value is never closed' "
            f"WHEN NOT __tsc_ok THEN {line} || ': text follows the closing quote of a value' "
            f"WHEN __tsc_n <> {expected} THEN {line} || ' has ' || CAST(__tsc_n AS VARCHAR) || {fields} || "
            f"'{against}' || CAST({expected} AS VARCHAR) END"
        )

    # ------------------------------------------------------------------ statements
    def rows_sql(self, records: str, numbered: bool = True) -> str:
        """Rows from ``records`` (``__tsc_file``, ``__tsc_line``, ``__tsc_text``, ``__tsc_unclosed``).

        A malformed row (``__tsc_bad``) keeps its reason and text, and no values: what its
        fields mean is unknown, so it fails ``source.rows`` and nothing else. ``__tsc_open``
        marks a line that leaves a quoted value open: where there is one, the records must be
        assembled from the lines first (:meth:`records_sql`). Not ``numbered``: ``records``
        has no line numbers (``__tsc_file``, ``__tsc_text``, the header already skipped), and
        the rows no reasons.
        """
        g = self.grammar
        skip = ["__tsc_text <> ''"]
        if self.dialect.header and numbered:
            skip.append("__tsc_line > 1")
        if self.dialect.comment is not None:
            skip.append(f"NOT starts_with(__tsc_text, {_sql(self.dialect.comment)})")
        columns = ", ".join(f"CASE WHEN NOT __tsc_bad THEN {self._column(c)} END AS {_ident(c)}" for c in self.columns)
        expected = self._per_file([str(len(f.names)) for f in self.files])
        if numbered:
            out = (
                f"__tsc_file, __tsc_line, {columns}, {self._reason()} AS {MALFORMED}, "
                f"CASE WHEN __tsc_bad THEN __tsc_text END AS {RECORD}"
            )
        else:
            out = f"{columns}, length(__tsc_text) AS __tsc_len"
        unclosed = "__tsc_unclosed" if numbered else "FALSE"
        return (
            f"SELECT {out}, __tsc_q, __tsc_bad, __tsc_open FROM ("
            f"SELECT *, {unclosed} OR NOT __tsc_ok OR __tsc_n <> {expected} AS __tsc_bad FROM ("
            f"SELECT *, array_length(__tsc_p) AS __tsc_n, {g.well_formed('__tsc_text', '__tsc_q')} AS __tsc_ok, "
            f"{g.opens('__tsc_text', '__tsc_q')} AS __tsc_open FROM ("
            f"SELECT *, {g.fields('__tsc_text', '__tsc_q')} AS __tsc_p FROM ("
            f"SELECT *, {g.has_quote('__tsc_text')} AS __tsc_q FROM ({records}) r "
            f"WHERE {' AND '.join(skip)}) r) r) r) r"
        )

    def lines_as_records(self, lines: str) -> str:
        return f"SELECT __tsc_file, __tsc_line, __tsc_text, FALSE AS __tsc_unclosed FROM ({lines}) l"

    def records_sql(self, lines: str) -> str:
        """Records assembled from ``lines`` where a quoted value spans lines.

        Each line has two outcomes: read from outside a quoted value, does it end inside one
        (``a``); read from inside, does it (``b``)? Where ``a = b`` the line decides the state
        whatever came before; elsewhere it keeps it (``a`` false, ``b`` true) or flips it.
        So the state after a line is the last deciding line's ``a`` flipped once per flipping
        line since: window sums, no loop. A record starts after a line that ends outside.
        """
        g = self.grammar
        text, quoted = "__tsc_text", "__tsc_q"
        a = g.opens(text, quoted)
        if self.dialect.comment is not None:
            a = f"CASE WHEN starts_with({text}, {_sql(self.dialect.comment)}) THEN FALSE ELSE {a} END"
        w = "PARTITION BY __tsc_file ORDER BY __tsc_line"
        run = f"{w} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        group = "PARTITION BY __tsc_file, __tsc_g ORDER BY __tsc_line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        decided = f"CASE WHEN __tsc_g = 0 THEN FALSE ELSE first_value(__tsc_a) OVER ({group}) END"
        flips = f"sum(CASE WHEN __tsc_a AND NOT __tsc_b THEN 1 ELSE 0 END) OVER ({group}) % 2 = 1"
        return (
            "SELECT __tsc_file, min(__tsc_line) AS __tsc_line, "
            "string_agg(__tsc_text, chr(10) ORDER BY __tsc_line) AS __tsc_text, "
            "max_by(__tsc_inside, __tsc_line) AS __tsc_unclosed FROM ("
            f"SELECT *, sum(CASE WHEN __tsc_starts THEN 1 ELSE 0 END) OVER ({run}) AS __tsc_rec FROM ("
            f"SELECT *, NOT coalesce(lag(__tsc_inside) OVER ({w}), FALSE) AS __tsc_starts FROM ("
            f"SELECT *, ({decided}) <> ({flips}) AS __tsc_inside FROM ("
            f"SELECT *, count(CASE WHEN __tsc_a = __tsc_b THEN 1 END) OVER ({run}) AS __tsc_g FROM ("
            f"SELECT __tsc_file, __tsc_line, __tsc_text, {a} AS __tsc_a, {g.stays_open(text, quoted)} AS __tsc_b "
            f"FROM (SELECT *, {g.has_quote(text)} AS {quoted} FROM ({lines}) l) l) l) l) l) l) l "
            "GROUP BY __tsc_file, __tsc_rec"
        )

    def build(
        self,
        con: Any,
        lines: str,
        plain: str | None = None,
        native: Callable[[bool, int], str | None] | None = None,
    ) -> str:
        """The source view's query: its columns and, where rows are numbered, ``__row`` and, where a
        row is malformed, ``__tsc_malformed`` and ``__tsc_record``.

        ``lines``: the files' lines, numbered. ``plain``: the same lines without numbers or
        headers, cheaper to read (no window): where one pass over them finds neither a
        malformed row nor a quote left open -- nearly always -- the view reads the files at
        each scan and stores nothing (rows are numbered in order where examples need it),
        with the engine's own CSV reader where ``native(quoted, longest)`` gives one that reads
        such files to the same values (``quoted``: some line holds a quote; ``longest``: the
        characters of the longest line), else with these
        statements. Otherwise the rows are numbered and stored: from their line where no
        blank or comment line comes before a row, else by a window in file order; where a
        quote is left open, the records are assembled from the lines first.
        """
        names = ", ".join(_ident(c) for c in self.columns)
        if plain is not None:
            rows = self.rows_sql(plain, numbered=False)
            bad, opened, quoted, longest = con.execute(
                "SELECT count(*) FILTER (WHERE __tsc_bad), count(*) FILTER (WHERE __tsc_open), "
                f"count(*) FILTER (WHERE __tsc_q), max(__tsc_len) FROM ({rows}) r"
            ).fetchall()[0]
            if not bad and not opened:
                self.numbered = False
                reader = native(bool(quoted), int(longest or 0)) if native is not None else None
                return reader or f"SELECT {names} FROM ({rows}) r"
        rows = self.rows_sql(self.lines_as_records(lines))
        stats = self._stats(con, rows)
        if any(opened for *_, opened in stats.values()):
            rows = self.rows_sql(self.records_sql(lines))
            stats = self._stats(con, rows)
        header = 1 if self.dialect.header else 0
        self.malformed = any(bad for _, _, bad, _ in stats.values())
        if all(last - header == n for n, last, _, _ in stats.values()):
            offsets, total = [], 0
            for i in range(len(self.files)):
                offsets.append(str(total - header))
                total += stats.get(i, (0, 0, 0, 0))[0]
            number = f"__tsc_line + {self._per_file(offsets, '0')}"
        else:
            number = "row_number() OVER (ORDER BY __tsc_file, __tsc_line)"
        cols = ", ".join([names, *([MALFORMED, RECORD] if self.malformed else [])])
        con.execute(f"CREATE OR REPLACE TEMP TABLE {ROWS_TABLE} AS SELECT {number} AS __row, {cols} FROM ({rows}) r")
        self.numbered = True
        return f"SELECT __row, {cols} FROM {ROWS_TABLE}"

    def _stats(self, con: Any, rows: str) -> dict[int, tuple[int, int, int, int]]:
        """Per file: rows, last row's line, malformed rows, lines that leave a quoted value open."""
        return {
            int(f): (int(n), int(last or 0), int(bad), int(opened))
            for f, n, last, bad, opened in con.execute(
                f"SELECT __tsc_file, count(*), max(__tsc_line), count({MALFORMED}), "
                f"sum(CASE WHEN __tsc_open THEN 1 ELSE 0 END) FROM ({rows}) r GROUP BY __tsc_file"
            ).fetchall()
        }
