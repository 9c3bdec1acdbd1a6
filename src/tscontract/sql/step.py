"""The SQL of ``fields.<name>.step``: the failing points of one step check over a typed relation.

The rule is stated on :class:`tscontract.contract.model.Step`; the validation run
(``engines/run/step.py``) and the dbt and Soda exports state it with this one SELECT. Portable SQL
only: the run's statements are translated to PostgreSQL, ClickHouse and Spark, so the medians are
computed by ranking the neighbours' values (no median window function, which PostgreSQL lacks),
exact and interpolated as ``percentile_cont(0.5)``.
"""

from __future__ import annotations

from tscontract.plan.checks import Check
from tscontract.plan.params import StepParams
from tscontract.sql.columns import ident


class StepSql:
    """The failing points of one step check as SQL over ``relation`` (typed columns and ``__row``).

    One SELECT: ``__row``, the series columns, ``__t``, ``__v``, then ``__prev, __prev_row`` (max_abs) or
    ``__med, __mad, __k`` (max_mad). DuckDB SQL; the validation run translates it per engine.
    """

    def __init__(self, check: Check, time: str, relation: str) -> None:
        self.step = check.params_of(StepParams).step
        self.field: str = check.params_of(StepParams).field
        self.series: tuple[str, ...] = check.params_of(StepParams).series
        self.revision: str | None = check.params_of(StepParams).revision
        self.time = time
        self.relation = relation

    def failing(self) -> str:
        return self.abs_failures() if self.step.max_abs is not None else self.mad_failures()

    def points(self) -> str:
        """``__row``, the series columns, ``__t``, ``__v`` and ``__n`` (position in the series), latest revision."""
        cols = ", ".join(ident(c) for c in self.series)
        part = f"PARTITION BY {cols} " if self.series else ""
        latest = ""
        if self.revision is not None:
            rev = ident(self.revision)
            by_point = f"PARTITION BY {', '.join([*map(ident, self.series), ident(self.time)])}"
            inner = f"SELECT *, max({rev}) OVER ({by_point}) AS __latest FROM {self.relation}"
            latest = f" AND {rev} IS NOT DISTINCT FROM __latest"
        else:
            inner = f"SELECT * FROM {self.relation}"
        head = f"{cols}, " if cols else ""
        kept = (
            f"SELECT __row, {head}{ident(self.time)} AS __t, {ident(self.field)} AS __v FROM ({inner}) AS __a "
            f"WHERE {ident(self.field)} IS NOT NULL AND {ident(self.time)} IS NOT NULL{latest}"
        )
        return f"SELECT *, row_number() OVER ({part}ORDER BY __t, __row) AS __n FROM ({kept}) AS __k"

    def gap_ok(self, a: str, b: str) -> str:
        gap = self.step.max_gap
        if gap is None:
            return "TRUE"
        micros = int(gap.seconds * 1_000_000)
        return f"abs(epoch_us({a}.__t) - epoch_us({b}.__t)) <= {micros}"

    def shown(self, alias: str) -> str:
        return ", ".join(
            [f"{alias}.__row", *(f"{alias}.{ident(c)}" for c in self.series), f"{alias}.__t", f"{alias}.__v"]
        )

    def same_series(self, a: str, b: str) -> str:
        return " AND ".join([f"{a}.{ident(c)} IS NOT DISTINCT FROM {b}.{ident(c)}" for c in self.series] or ["TRUE"])

    def abs_failures(self) -> str:
        """A point fails when ``|x - previous| > max_abs`` (previous non-null point within ``max_gap``)."""
        return (
            f"SELECT {self.shown('a')}, p.__v AS __prev, p.__row AS __prev_row FROM ({self.points()}) AS a "
            f"JOIN ({self.points()}) AS p ON {self.same_series('a', 'p')} AND p.__n = a.__n - 1 "
            f"AND {self.gap_ok('a', 'p')} WHERE abs(a.__v - p.__v) > {self.step.max_abs}"
        )

    def mad_failures(self) -> str:
        """A point fails when ``|x - m| > max_mad * max(MAD, min_mad, 0.01 |m|)`` over its neighbours."""
        half = self.step.half_window
        pairs = (
            f"SELECT a.__row AS __r, b.__v AS __nv FROM ({self.points()}) AS a JOIN ({self.points()}) AS b "
            f"ON {self.same_series('a', 'b')} AND b.__n BETWEEN a.__n - {half} AND a.__n + {half} "
            f"AND b.__n <> a.__n AND {self.gap_ok('a', 'b')}"
        )
        med = _median_by("__r", "__nv", f"({pairs}) AS __p")
        deviations = f"SELECT p.__r, abs(p.__nv - m.__m) AS __d FROM ({pairs}) AS p JOIN ({med}) AS m ON m.__r = p.__r"
        mad = _median_by("__r", "__d", f"({deviations}) AS __q")
        floor = self.step.min_mad if self.step.min_mad is not None else 0
        scale = f"greatest(d.__m, {floor}, 0.01 * abs(m.__m))"
        return (
            f"SELECT {self.shown('a')}, m.__m AS __med, d.__m AS __mad, m.__k AS __k FROM ({self.points()}) AS a "
            f"JOIN ({med}) AS m ON m.__r = a.__row JOIN ({mad}) AS d ON d.__r = a.__row "
            f"WHERE m.__k >= {half} AND abs(a.__v - m.__m) > {self.step.max_mad} * {scale}"
        )


def _median_by(group: str, value: str, source: str) -> str:
    """``group, __m`` (the interpolated median of ``value``), ``__k`` (how many): by ranking, on every engine."""
    ranked = (
        f"SELECT {group}, {value} AS __x, row_number() OVER (PARTITION BY {group} ORDER BY {value}) AS __i, "
        f"count(*) OVER (PARTITION BY {group}) AS __c FROM {source}"
    )
    return (
        f"SELECT {group}, avg(__x) AS __m, max(__c) AS __k FROM ({ranked}) AS __z "
        f"WHERE 2 * __i IN (__c, __c + 1, __c + 2) GROUP BY {group}"
    )
