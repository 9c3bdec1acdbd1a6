"""The engine's DuckDB SQL generated for Spark (sql/dialects.py TscSpark): each rewrite sqlglot does not do itself."""

from __future__ import annotations

import pytest

from tscontract.sql.dialects import TIME_BUCKET_ORIGIN_US, TscSpark, time_format, transpile


def to_spark(sql: str) -> str:
    return transpile(sql, TscSpark())


@pytest.mark.parametrize(
    ("duckdb", "spark"),
    [
        ("SELECT epoch_us(t) FROM p", "SELECT UNIX_MICROS(t) FROM p"),
        (
            "SELECT make_timestamptz(TRY_CAST(x AS BIGINT)) FROM p",
            "SELECT TIMESTAMP_MICROS(TRY_CAST(x AS BIGINT)) FROM p",
        ),
        ("SELECT TRY_CAST(x AS HUGEINT) FROM p", "SELECT TRY_CAST(x AS DECIMAL(38, 0)) FROM p"),
        ("SELECT regexp_full_match(x, '^\\d+$') FROM p", "SELECT x RLIKE '(?ud)^(?:^[0-9]+$)\\\\z' FROM p"),
        ("SELECT regexp_full_match(x, 'a|b') FROM p", "SELECT x RLIKE '(?ud)^(?:a|b)\\\\z' FROM p"),
        ("SELECT count(DISTINCT (s, t)) FROM p", "SELECT COUNT(DISTINCT s, t) FROM p"),
        ("SELECT hash(s, t, r) FROM p", "SELECT XXHASH64(s, t, r) FROM p"),
        ("SELECT t + to_microseconds(i) FROM p", "SELECT t + (i) * INTERVAL '1' MICROSECOND FROM p"),
        (
            "SELECT quantile_disc(abs(x), 0.5) FROM p",
            "SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY ABS(x) NULLS LAST) FROM p",
        ),
        (
            "SELECT strftime(t, '%Y-%m-%dT%H:%M:%S.%fZ') FROM p",
            "SELECT DATE_FORMAT(t, 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSS\\'Z\\'') FROM p",
        ),
    ],
)
def test_rewrites(duckdb, spark):
    assert to_spark(duckdb) == spark


def test_time_bucket_keeps_duckdbs_origin():
    out = to_spark("SELECT time_bucket(to_microseconds(3600000000), t) FROM p")
    assert out == (
        f"SELECT TIMESTAMP_MICROS(UNIX_MICROS(t) - PMOD(UNIX_MICROS(t) - {TIME_BUCKET_ORIGIN_US}, 3600000000)) FROM p"
    )


def test_nested_rewrites_are_rewritten_too():
    # the epoch conversion holds a HUGEINT cast: both are rewritten, inner and outer
    out = to_spark("SELECT make_timestamptz(TRY_CAST(TRY_CAST(x AS HUGEINT) * 1000 AS BIGINT)) FROM p")
    assert out == "SELECT TIMESTAMP_MICROS(TRY_CAST(TRY_CAST(x AS DECIMAL(38, 0)) * 1000 AS BIGINT)) FROM p"


def test_types_and_formats():
    # the casts relations.small_table writes for catalogs, bounds and sessions
    out = to_spark("SELECT CAST(c AS TIMESTAMPTZ), CAST(c AS DECIMAL(38,10)), CAST(c AS VARCHAR) FROM t")
    assert out == "SELECT CAST(c AS TIMESTAMP), CAST(c AS DECIMAL(38, 10)), CAST(c AS STRING) FROM t"
    assert time_format("%Y-%m-%d %H:%M", TscSpark) == "yyyy-MM-dd HH:mm"
    with pytest.raises(ValueError, match="no Spark pattern"):
        time_format("%j", TscSpark)
