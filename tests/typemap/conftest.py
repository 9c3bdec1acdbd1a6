"""DataTypes for the round trips: every row of the table, and hypothesis' own."""

from __future__ import annotations

from hypothesis import strategies as st

from tscontract.contract.types import TIME_UNITS, DataType, parse_type

NAMED = ("string", "bool", "int8", "int16", "int32", "int64", "float32", "float64", "date", "bytes")
EXAMPLES = [
    *NAMED,
    "decimal(18,8)",
    "decimal(38,0)",
    "decimal(1,1)",
    "timestamp_s_utc",
    "timestamp_ms_utc",
    "timestamp_us_utc",
    "timestamp_ns_utc",
    "enum[good, suspect, bad]",
]


@st.composite
def _decimal(draw: st.DrawFn) -> str:
    precision = draw(st.integers(1, 38))
    return f"decimal({precision},{draw(st.integers(0, precision))})"


_MEMBER = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)

DATA_TYPES: st.SearchStrategy[DataType] = st.one_of(
    st.sampled_from(NAMED),
    _decimal(),
    st.sampled_from([f"timestamp_{u}_utc" for u in TIME_UNITS]),
    st.lists(_MEMBER, min_size=1, max_size=5, unique=True).map(lambda m: f"enum[{', '.join(m)}]"),
).map(parse_type)
