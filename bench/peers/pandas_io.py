"""Reading the Parquet file into pandas for the pandera and Great Expectations peers.

Two ways, chosen with ``bench/run.py --pandas-dtypes``:

``arrow`` (default)
    ``pd.read_parquet(path, dtype_backend="pyarrow")``: every column keeps its Parquet type
    as a ``pd.ArrowDtype`` -- ``decimal128(18, 8)``, ``decimal128(24, 4)``, nullable
    ``int64``, ``timestamp[ms, tz=UTC]``. Comparisons run in Arrow compute kernels. This is
    the fastest reading and the only one in which every contract type survives as written.

``numpy``
    ``pd.read_parquet(path, dtype_backend="numpy_nullable")``: the classic pandas dtypes.
    Decimals become ``object`` columns of Python ``decimal.Decimal`` (one object per
    value), ``trade_count`` becomes ``Int64``, strings ``string``, ``bar_start``
    ``datetime64[ms, UTC]``. Plain ``pd.read_parquet(path)`` would be worse still: a
    nullable int64 column with nulls comes back as ``float64``.
"""

from __future__ import annotations

import pandas as pd

PANDAS_DTYPES = ("arrow", "numpy")
_BACKEND = {"arrow": "pyarrow", "numpy": "numpy_nullable"}


def read(parquet_path: str, pandas_dtypes: str = "arrow") -> pd.DataFrame:
    if pandas_dtypes not in _BACKEND:
        raise ValueError(f"pandas_dtypes must be one of {PANDAS_DTYPES}, not {pandas_dtypes!r}")
    return pd.read_parquet(parquet_path, dtype_backend=_BACKEND[pandas_dtypes])
