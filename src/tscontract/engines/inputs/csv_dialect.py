"""How a CSV file is read: an explicit dialect, RFC 4180 by default, never sniffed.

:class:`CsvDialect` says it all: the delimiter (``,``; tab for ``.tsv``), the quote
(``"``), how a quote is written inside a quoted value (doubled, ``""``), whether the
first line is the header, a comment character (none) and the texts read as null (the
empty value). Nothing else is guessed: ``#AAPL`` is a symbol, ``'AAPL'`` keeps its
single quotes, the header is the first line, LF and CRLF may be mixed.

:class:`CsvGrammar` compiles a dialect into the SQL that splits a line into fields and
tells a well-formed line from a malformed one. The SQL is written once, in DuckDB's
dialect, and runs on both engines (Spark gets it through sql/dialects.py); its
regular expressions use only what RE2 and Java agree on, and every match is non-empty.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

_REGEX_SPECIAL = set("\\^$.|?*+()[]{}-/#&~")
_FORBIDDEN = {"\n", "\r"}


def _sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _re(char: str) -> str:
    """``char`` as a literal in a regular expression (RE2 and Java), in or out of brackets."""
    return "\\" + char if char in _REGEX_SPECIAL else char


class CsvDialect(BaseModel):
    """An explicit CSV dialect; the defaults are RFC 4180.

    ``delimiter`` None means by suffix: ``,`` for ``.csv``, tab for ``.tsv``. ``escape``
    is the character before a quote inside a quoted value: the quote itself (``""``, the
    default) or another one (``\\"``, the escape then also escapes itself); None: a quoted
    value cannot contain the quote. ``comment``: lines starting with it are skipped (none
    by default). ``null_values``: field texts read as null, as written in the file (the
    empty value by default; ``""`` is the empty value too).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    delimiter: str | None = None
    quote: str | None = '"'
    escape: str | None = '"'
    header: bool = True
    comment: str | None = None
    null_values: tuple[str, ...] = ("",)

    @field_validator("delimiter", "quote", "escape", "comment")
    @classmethod
    def _one_character(cls, value: str | None) -> str | None:
        if value is not None and (len(value) != 1 or value in _FORBIDDEN):
            raise ValueError(f"must be one character other than a line break, got {value!r}")
        return value

    @model_validator(mode="after")
    def _distinct(self) -> CsvDialect:
        for name, char in (("quote", self.quote), ("comment", self.comment)):
            if self.delimiter is None and char in (",", "\t"):
                raise ValueError(f"{name} {char!r} would be the delimiter of .csv or .tsv files; set the delimiter")
        roles = {"delimiter": self.delimiter, "quote": self.quote, "comment": self.comment}
        chosen = [(k, v) for k, v in roles.items() if v is not None]
        for i, (name, char) in enumerate(chosen):
            for other, other_char in chosen[i + 1 :]:
                if char == other_char:
                    raise ValueError(f"{name} and {other} are both {char!r}")
        if self.escape is not None and self.quote is None:
            raise ValueError("an escape needs a quote")
        if self.escape is not None and self.escape in (self.delimiter, self.comment):
            raise ValueError(f"escape {self.escape!r} is also the delimiter or the comment")
        return self

    def delimiter_for(self, paths: list[Path]) -> str:
        """The delimiter: as set, else tab when every file is ``.tsv``, else ``,``."""
        if self.delimiter is not None:
            return self.delimiter
        return "\t" if paths and all(p.suffix.lower() == ".tsv" for p in paths) else ","


@cache
def default_dialect() -> CsvDialect:
    """The dialect of a CSV file read without one (made on first use: the model's schema is built then)."""
    return CsvDialect()


class CsvGrammar:
    """SQL expressions over one line (or record) of text, for one dialect and delimiter.

    Every expression takes the text and whether it holds a quote (``__tsc_q``), so lines
    without a quote -- most lines of most files -- are split with ``string_split`` and no
    regular expression runs on them.
    """

    def __init__(self, dialect: CsvDialect, delimiter: str) -> None:
        if delimiter in _FORBIDDEN or len(delimiter) != 1:
            raise ValueError(f"bad delimiter {delimiter!r}")
        self.dialect = dialect
        self.delimiter = delimiter
        d = _re(delimiter)
        q = dialect.quote
        if q is None:
            self.quoted_field = None
            self.field = f"[^{d}]*"
            return
        rq = _re(q)
        e = dialect.escape
        if e is None:
            body = f"[^{rq}]*"
        elif e == q:
            body = f"[^{rq}]*(?:{rq}{rq}[^{rq}]*)*"
        else:
            re_ = _re(e)
            body = f"[^{rq}{re_}]*(?:{re_}[\\s\\S][^{rq}{re_}]*)*"
        self.body = body  # the inside of a quoted value, up to (not including) its closing quote
        self.quoted_field = f"{rq}{body}{rq}"
        # a quoted value, else an unquoted one (it may hold a quote, just not start with one), else empty
        self.field = f"(?:{self.quoted_field}|[^{d}{rq}][^{d}]*)?"
        self.rq = rq
        self.d = d

    # ------------------------------------------------------------------ per line
    def has_quote(self, text: str) -> str:
        return "FALSE" if self.dialect.quote is None else f"contains({text}, {_sql(self.dialect.quote)})"

    def fields(self, text: str, quoted: str) -> str:
        """The fields of ``text`` as written (quotes included), a list."""
        split = f"string_split({text}, {_sql(self.delimiter)})"
        if self.quoted_field is None:
            return split
        # each match is one field and the delimiter after it (one is appended): never an empty match
        pattern = f"({self.quoted_field}|[^{self.d}{self.rq}][^{self.d}]*|){self.d}"
        extract = f"regexp_extract_all({text} || {_sql(self.delimiter)}, {_sql(pattern)}, 1)"
        return f"CASE WHEN {quoted} THEN {extract} ELSE {split} END"

    def well_formed(self, text: str, quoted: str) -> str:
        """True where every field of ``text`` is complete: quoted values closed, nothing after a closing quote."""
        if self.quoted_field is None:
            return "TRUE"
        return self._quoted_match(text, quoted, f"^{self.field}(?:{self.d}{self.field})*\\z", unquoted="TRUE")

    def opens(self, text: str, quoted: str) -> str:
        """True where ``text``, read from its start, ends inside a quoted value (it goes on on the next line)."""
        if self.quoted_field is None:
            return "FALSE"
        pattern = f"^(?:{self.field}{self.d})*{self.rq}{self.body}\\z"
        return self._quoted_match(text, quoted, pattern, unquoted="FALSE")

    def stays_open(self, text: str, quoted: str) -> str:
        """True where ``text``, read from inside a quoted value, ends inside one (the same or a new one)."""
        if self.quoted_field is None:
            return "FALSE"
        pattern = f"^{self.body}(?:{self.rq}(?:{self.d}{self.field})*{self.d}{self.rq}{self.body})?\\z"
        return self._quoted_match(text, quoted, pattern, unquoted="TRUE")

    @staticmethod
    def _quoted_match(text: str, quoted: str, pattern: str, unquoted: str) -> str:
        """``pattern`` decides a line with a quote in it; a line without one is ``unquoted``."""
        return f"CASE WHEN {quoted} THEN regexp_matches({text}, {_sql(pattern)}) ELSE {unquoted} END"

    def value(self, raw: str, quoted: str) -> str:
        """The value of one field written as ``raw``: unquoted and unescaped; NULL for a null text."""
        nulls = list(self.dialect.null_values)
        q = self.dialect.quote
        if q is not None and "" in nulls:
            nulls.append(q + q)  # "" is the empty value
        when_null = f"WHEN {raw} IN ({', '.join(_sql(n) for n in nulls)}) THEN NULL " if nulls else ""
        if q is None:
            return f"CASE {when_null}ELSE {raw} END" if nulls else raw
        inner = f"substring({raw}, 2, length({raw}) - 2)"
        e = self.dialect.escape
        if e == q:
            inner = f"replace({inner}, {_sql(q + q)}, {_sql(q)})"
        elif e is not None:
            # an escaped escape first (kept aside as NUL, which no text holds), then an escaped quote
            inner = f"replace({inner}, {_sql(e + e)}, chr(0))"
            inner = f"replace(replace({inner}, {_sql(e + q)}, {_sql(q)}), chr(0), {_sql(e)})"
        return f"CASE {when_null}WHEN {quoted} AND starts_with({raw}, {_sql(q)}) THEN {inner} ELSE {raw} END"
