# ruff: noqa: E501  (golden SQL is compared whole: one statement a line)
"""The engines' dialects (sql/dialects.py), golden: DuckDB statements of the kinds the validation run writes,
as each engine's SQL; then run on the real engines (PostgreSQL on loopback, chdb in-process) to answer as
DuckDB does. Spark runs its SQL in tests/engines/test_spark_parity.py (a JVM is slow to start)."""

from __future__ import annotations

import pytest

from tscontract.sql.dialects import TscClickHouse, TscPostgres, TscSpark, time_format, transpile

# the source's columns and their DuckDB types, as the engines pass them
COLUMNS = {"x": "DOUBLE", "d": "DECIMAL(18,4)", "t": "TIMESTAMPTZ", "n": "BIGINT", "s": "VARCHAR"}

# DuckDB -> Spark, PostgreSQL, ClickHouse
GOLDEN = [
    (
        "SELECT regexp_full_match(s, '^\\d+$') FROM p",
        "SELECT s RLIKE '(?ud)^(?:^[0-9]+$)\\\\z' FROM p",
        "SELECT s ~ '\\A(?:^[0-9]+$)\\Z' FROM p",
        "SELECT CAST(match(s, '(?-s)^(?:^\\\\d+$)$') AS Nullable(Bool)) FROM p",
    ),
    (
        "SELECT regexp_extract(s, '\\.(\\d+)$', 1) FROM p",
        "SELECT REGEXP_EXTRACT(s, '\\\\.(\\\\d+)$') FROM p",
        "SELECT COALESCE((REGEXP_MATCH(s, '\\.(\\d+)$'))[1], '') FROM p",
        "SELECT regexpExtract(s, '\\\\.(\\\\d+)$', 1) FROM p",
    ),
    (
        "SELECT strftime(t, '%Y-%m-%dT%H:%M:%S.%fZ') FROM p",
        "SELECT DATE_FORMAT(t, 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSSSSS\\'Z\\'') FROM p",
        'SELECT TO_CHAR(t, \'YYYY"-"MM"-"DD"T"HH24":"MI":"SS"."US"Z"\') FROM p',
        "SELECT formatDateTime(t, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') FROM p",
    ),
    (
        "SELECT time_bucket(to_microseconds(3600000000), t) FROM p",
        "SELECT TIMESTAMP_MICROS(UNIX_MICROS(t) - PMOD(UNIX_MICROS(t) - 946857600000000, 3600000000)) FROM p",
        "SELECT DATE_BIN((3600000000) * INTERVAL '1 microsecond', t, CAST('2000-01-03 00:00:00+00' AS TIMESTAMPTZ)) FROM p",
        "SELECT fromUnixTimestamp64Micro(toInt64(toUnixTimestamp64Micro(toDateTime64(t, 6, 'UTC')) - positiveModulo(toUnixTimestamp64Micro(toDateTime64(t, 6, 'UTC')) - 946857600000000, 3600000000)), 'UTC') FROM p",
    ),
    (
        "SELECT TRY_CAST(x AS DECIMAL(18, 4)), TRY_CAST(d AS DECIMAL(20, 4)), TRY_CAST(s AS BIGINT) FROM p",
        "SELECT TRY_CAST(x AS DECIMAL(18, 4)), TRY_CAST(d AS DECIMAL(20, 4)), TRY_CAST(s AS BIGINT) FROM p",
        "SELECT CASE WHEN ABS(ROUND(CAST(x AS DECIMAL), 4)) < 1e14 THEN CAST(x AS DECIMAL(18, 4)) END, CASE WHEN ABS(ROUND(CAST(d AS DECIMAL), 4)) < 1e16 THEN CAST(d AS DECIMAL(20, 4)) END, CAST(PG_TEMP.TSC_TRY_BIGINT(CAST(s AS TEXT)) AS BIGINT) FROM p",
        "SELECT CASE WHEN abs(round(accurateCastOrNull(x, 'Decimal(76, 38)'), 4)) < 100000000000000 THEN accurateCastOrNull(round(accurateCastOrNull(x, 'Decimal(76, 38)'), 4), 'Decimal(18, 4)') END, CAST(d AS Nullable(Decimal(20, 4))), accurateCastOrNull(s, 'Int64') FROM p",
    ),
    (
        "SELECT CAST(n AS HUGEINT) FROM p",
        "SELECT CAST(n AS DECIMAL(38, 0)) FROM p",
        "SELECT CAST(n AS DECIMAL(39, 0)) FROM p",
        "SELECT CAST(n AS Nullable(Int128)) FROM p",
    ),
    (
        "SELECT epoch_us(t), make_timestamptz(n) FROM p",
        "SELECT UNIX_MICROS(t), TIMESTAMP_MICROS(n) FROM p",
        "SELECT CAST(EXTRACT(EPOCH FROM t) * 1000000 AS BIGINT), CAST('1970-01-01 00:00:00+00' AS TIMESTAMPTZ) + (n) * INTERVAL '1 microsecond' FROM p",
        "SELECT toUnixTimestamp64Micro(toDateTime64(t, 6, 'UTC')), fromUnixTimestamp64Micro(toInt64(n), 'UTC') FROM p",
    ),
    (
        "SELECT t + to_microseconds(n) FROM p",
        "SELECT t + (n) * INTERVAL '1' MICROSECOND FROM p",
        "SELECT t + (n) * INTERVAL '1 microsecond' FROM p",
        "SELECT t + toIntervalMicrosecond(n) FROM p",
    ),
    (
        "SELECT unnest(generate_series(1, 3)) AS i",
        "SELECT EXPLODE(SEQUENCE(1, 3)) AS i",
        "SELECT GENERATE_SERIES(1, 3) AS i",
        "SELECT arrayJoin(range(toInt64(1), toInt64(3) + 1)) AS i",
    ),
    (
        "SELECT isnan(x), CAST(x AS DOUBLE) / CAST(n AS DOUBLE) FROM p",
        "SELECT ISNAN(x), CASE WHEN CAST(n AS DOUBLE) = 0 AND CAST(x AS DOUBLE) IS NOT NULL THEN CASE WHEN CAST(x AS DOUBLE) = 0 OR CAST(x AS DOUBLE) = CAST('NaN' AS DOUBLE) THEN CAST('NaN' AS DOUBLE) WHEN (CAST(x AS DOUBLE) > 0) = (NOT CAST(CAST(n AS DOUBLE) AS STRING) LIKE '-%') THEN CAST('Infinity' AS DOUBLE) ELSE CAST('-Infinity' AS DOUBLE) END ELSE CAST(x AS DOUBLE) / CAST(n AS DOUBLE) END FROM p",
        "SELECT (x = CAST('NaN' AS DOUBLE PRECISION)), CASE WHEN CAST(n AS DOUBLE PRECISION) = 0 AND CAST(x AS DOUBLE PRECISION) IS NOT NULL THEN CASE WHEN CAST(x AS DOUBLE PRECISION) = 0 OR CAST(x AS DOUBLE PRECISION) = CAST('NaN' AS DOUBLE PRECISION) THEN CAST('NaN' AS DOUBLE PRECISION) WHEN (CAST(x AS DOUBLE PRECISION) > 0) = (NOT CAST(CAST(n AS DOUBLE PRECISION) AS TEXT) LIKE '-%') THEN CAST('Infinity' AS DOUBLE PRECISION) ELSE CAST('-Infinity' AS DOUBLE PRECISION) END ELSE PG_TEMP.TSC_F_DIV(CAST(x AS DOUBLE PRECISION), CAST(n AS DOUBLE PRECISION)) END FROM p",
        "SELECT isNaN(x), toFloat64(CAST(x AS Nullable(Float64))) / toFloat64(CAST(n AS Nullable(Float64))) FROM p",
    ),
    (
        "SELECT quantile_disc(x, 0.5) FROM p",
        "SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY x NULLS LAST) FROM p",
        "SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY x) FROM p",
        "SELECT CASE WHEN COUNT(x) > 0 THEN arrayElement(arraySort(groupArray(x)), toUInt64(floor((COUNT(x) - 1) * 0.5)) + 1) END FROM p",
    ),
    (
        "SELECT hash(s, t) FROM p",
        "SELECT XXHASH64(s, t) FROM p",
        "SELECT HASH_RECORD_EXTENDED(ROW(s, t), 0) FROM p",
        "SELECT cityHash64((s, t)) FROM p",
    ),
    (
        "SELECT n // 2 FROM p",
        "SELECT n DIV 2 FROM p",
        "SELECT DIV(n, 2) FROM p",
        "SELECT intDiv(n, 2) FROM p",
    ),
    (
        "SELECT s, count(*) FROM (SELECT s FROM p) GROUP BY ALL",
        "SELECT s, COUNT(*) FROM (SELECT s FROM p) GROUP BY ALL",
        "SELECT s, COUNT(*) FROM (SELECT s FROM p) AS __q1 GROUP BY 1",
        "SELECT s, COUNT(*) FROM (SELECT s FROM p) GROUP BY ALL",
    ),
    (
        "SELECT count(DISTINCT (s, t)) FROM p",
        "SELECT COUNT(DISTINCT s, t) FROM p",
        "SELECT COUNT(DISTINCT (s, t)) FROM p",
        "SELECT COUNT(DISTINCT (s, t)) FROM p",
    ),
    (
        "SELECT CAST(x AS VARCHAR) FROM p",
        "SELECT CAST(x AS STRING) FROM p",
        "SELECT CASE WHEN x = TRUNC(x) AND ABS(x) < 1e15 THEN CAST(CAST(x AS DECIMAL) AS TEXT) || '.0' ELSE CAST(x AS TEXT) END FROM p",
        "SELECT CASE WHEN x = trunc(x) AND abs(x) < 1e15 THEN concat(toString(toInt64(x)), '.0') ELSE toString(x) END FROM p",
    ),
]


@pytest.mark.parametrize(("duckdb", "spark", "postgres", "clickhouse"), GOLDEN, ids=[g[0][:50] for g in GOLDEN])
def test_golden(duckdb: str, spark: str, postgres: str, clickhouse: str) -> None:
    assert transpile(duckdb, TscSpark()) == spark
    assert transpile(duckdb, TscPostgres(columns=COLUMNS)) == postgres
    assert transpile(duckdb, TscClickHouse(columns=COLUMNS)) == clickhouse


def test_a_tree_is_not_changed() -> None:
    import sqlglot

    tree = sqlglot.parse_one("SELECT epoch_us(t) FROM p", read="duckdb")
    before = tree.sql("duckdb")
    assert transpile(tree, TscPostgres()) == "SELECT CAST(EXTRACT(EPOCH FROM t) * 1000000 AS BIGINT) FROM p"
    assert tree.sql("duckdb") == before


def test_a_statements_own_conditions_are_booleans_in_clickhouse_but_a_subquerys_are_not() -> None:
    out = transpile("SELECT a < 1 AS low FROM (SELECT a, a > 2 AS high FROM p)", TscClickHouse())
    assert out == "SELECT CAST(a < 1 AS Nullable(Bool)) AS low FROM (SELECT a, a > 2 AS high FROM p)"


@pytest.mark.parametrize(
    ("dialect", "pattern"),
    [(TscSpark, "yyyy-MM-dd'T'HH:mm"), (TscPostgres, 'YYYY"-"MM"-"DD"T"HH24":"MI'), (TscClickHouse, "%Y-%m-%dT%H:%i")],
)
def test_time_formats_read_the_dialects_time_mapping(dialect: type, pattern: str) -> None:
    assert time_format("%Y-%m-%dT%H:%M", dialect) == pattern
    with pytest.raises(ValueError, match=f"no {dialect.NAME} pattern for %j"):
        time_format("%j", dialect)


# statements on literal data: each engine answers as DuckDB does
SAME_ANSWER = [
    "SELECT regexp_full_match('123', '^\\d+$'), regexp_full_match('12a', '\\d+'), regexp_full_match('1\n', '\\d+')",
    "SELECT regexp_extract('12.3400', '\\.(\\d+)$', 1), regexp_extract('12', '\\.(\\d+)$', 1)",
    "SELECT strftime(TIMESTAMPTZ '2026-11-30 04:05:06.789+00', '%Y-%m-%dT%H:%M:%S.%fZ')",
    "SELECT time_bucket(to_microseconds(3600000000), TIMESTAMPTZ '2026-11-30 14:37:12+00')",
    "SELECT TRY_CAST(12.34567 AS DECIMAL(18, 4)), TRY_CAST(123456.7 AS DECIMAL(5, 2)), TRY_CAST('x' AS BIGINT)",
    "SELECT epoch_us(TIMESTAMPTZ '2026-11-30 00:00:00.5+00'), make_timestamptz(1764460800000000)",
    "SELECT TIMESTAMPTZ '2026-11-30 00:00:00+00' + to_microseconds(1500000)",
    "SELECT x FROM (SELECT unnest(generate_series(1, 3)) AS x) q ORDER BY 1",
    "SELECT isnan(CAST('NaN' AS DOUBLE)), isnan(CAST(1.5 AS DOUBLE))",
    "SELECT quantile_disc(x, 0.25) FROM (SELECT unnest(generate_series(1, 10)) AS x) q",
    "SELECT 7 // 2, -7 // 2",
    "SELECT s, count(*) AS n FROM (SELECT s FROM (VALUES ('a'), ('b'), ('a')) AS v(s)) GROUP BY ALL ORDER BY 1",
]


def _same_answers(con: object) -> None:
    from tscontract.engines.duckdb import connect

    duck = connect()
    try:
        for sql in SAME_ANSWER:
            assert con.execute(sql).fetchall() == duck.execute(sql).fetchall(), sql  # type: ignore[attr-defined]
    finally:
        duck.close()


def test_postgres_answers_as_duckdb(postgres_db: str) -> None:
    pytest.importorskip("psycopg")
    from tscontract.engines.postgres import PostgresConnection

    con = PostgresConnection(postgres_db)
    try:
        _same_answers(con)
    finally:
        con.close()


def test_chdb_answers_as_duckdb() -> None:
    pytest.importorskip("chdb")
    from tscontract.engines.chdb import ChdbConnection

    con = ChdbConnection()
    try:
        _same_answers(con)
    finally:
        con.close()
