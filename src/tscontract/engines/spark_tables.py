"""Iceberg and Delta tables on the Spark engine, read by Spark's own readers.

Spark reads Delta tables with Delta Lake's connector (the ``delta-spark`` jar) and Iceberg tables with
Iceberg's runtime (the ``iceberg-spark-runtime`` jar, and a Spark catalog named as in the URL:
``spark.sql.catalog.CATALOG``). pyspark's wheel carries neither, and nothing is downloaded at run time:
where the session's class path lacks the jar, one line says so (exit 2) and names the DuckDB engine,
which reads both tables without Spark. ``--from/--to`` become a filter Spark pushes down itself.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from tscontract.engines.inputs.tables import TableRef
from tscontract.errors import InputError

READERS = {
    "delta": ("io.delta.sql.DeltaSparkSessionExtension", "delta-spark"),
    "iceberg": ("org.apache.iceberg.spark.SparkCatalog", "iceberg-spark-runtime"),
}


def has_class(spark: Any, name: str) -> bool:
    """Whether the Spark driver's class path (with ``spark.jars``) holds the class ``name``."""
    try:
        spark._jvm.org.apache.spark.util.Utils.classForName(name, False, False)
    except Exception:  # py4j's error for a ClassNotFoundException
        return False
    return True


def spark_table(spark: Any, ref: TableRef) -> Any:
    """``ref`` as a Spark DataFrame read by Spark's own Delta or Iceberg reader (its window filtered)."""
    from pyspark.sql import functions as F

    name, jar = READERS[ref.kind]
    if not has_class(spark, name):
        raise InputError(
            f"{ref.url}: the spark engine reads {ref.kind} tables with Spark's own reader, and this Spark has no "
            f"{jar} jar (nothing is downloaded at run time): add it with --spark-conf spark.jars=PATH, "
            "or validate with --engine duckdb"
        )
    reader = spark.read
    if ref.kind == "delta":
        if ref.version is not None:
            reader = reader.option("versionAsOf", ref.version)
        frame = reader.format("delta").load(ref.location)
    else:
        if ref.version is not None:
            reader = reader.option("snapshot-id", ref.version)
        catalog, _, identifier = ref.location.partition("/")
        frame = reader.table(f"{catalog}.{identifier}")
    window = ref.window
    if window is not None:
        column = F.col(window.column)
        if window.start is not None:
            frame = frame.where(column >= F.lit(window.start.astimezone(UTC)))
        if window.end is not None:
            frame = frame.where(column < F.lit(window.end.astimezone(UTC)))
    return frame
