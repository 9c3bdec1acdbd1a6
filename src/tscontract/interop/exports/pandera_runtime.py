"""The code every generated pandera module carries: SQL semantics over pandas, no dependency on tscontract.

``RUNTIME`` is the row-clause runtime and the column checks (:mod:`tscontract.interop.exports.pandera`
pastes it into each module); ``STEP_FUNCTION`` the step clause, added where a contract has one;
``POLARS_RUNTIME`` runs the same checks under pandera's polars backend. The texts are the
definition the generated module executes: tests exec them directly against the reference
evaluator (tests/interop/test_semantics_exports.py).
"""

STEP_FUNCTION = r'''
def _step_holds(df, field, time, series, revision, max_abs=None, max_mad=None, half=0, min_mad="0", max_gap_us=None):
    """tscontract's step clause: per series (time order, latest revision, nulls skipped) a point fails
    when |x - previous| > max_abs, or when |x - m| > max_mad * max(MAD, min_mad, 1% of |m|) over its
    neighbours (up to ``half`` before and after, at least ``half`` of them); a point further than
    max_gap_us in time is neither a previous point nor a neighbour."""
    import statistics

    holds = pd.Series(True, index=df.index)
    kept = df[df[field].notna() & df[time].notna()]
    if revision is not None:
        latest = kept.groupby([*series, time], dropna=False)[revision].transform("max")
        kept = kept[kept[revision] == latest]
    gap = None if max_gap_us is None else pd.Timedelta(microseconds=max_gap_us)
    groups = kept.groupby(series, dropna=False, sort=False) if series else [(None, kept)]
    for _, points in groups:
        points = points.assign(_pos=range(len(points))).sort_values([time, "_pos"], kind="stable")
        instants = list(pd.to_datetime(points[time], utc=True))
        values = list(points[field])
        number = (lambda v: Decimal(v)) if values and isinstance(values[0], Decimal) else float
        near = lambda i, j: gap is None or abs(instants[i] - instants[j]) <= gap  # noqa: E731
        for i, index in enumerate(points.index):
            x = values[i]
            if max_abs is not None:
                fails = i > 0 and near(i, i - 1) and abs(x - values[i - 1]) > number(max_abs)
            else:
                around = [values[j] for j in range(max(0, i - half), min(len(values), i + half + 1))
                          if j != i and near(i, j)]
                if len(around) < max(half, 1):
                    continue
                m = statistics.median(around)
                mad = statistics.median([abs(v - m) for v in around])
                floor = max(mad, number(min_mad), number("0.01") * abs(m))
                fails = abs(x - m) > number(max_mad) * floor
            if fails:
                holds[index] = False
    return holds
'''

RUNTIME = r'''
# ---------------------------------------------------------------- SQL semantics over pandas


def _elementwise(function):
    """``function`` over object arrays; a type clash or an arithmetic error is an unknown result."""

    def safe(*values):
        try:
            with localcontext() as context:
                context.prec = 200  # decimals are exact: never rounded to 28 digits
                return function(*values)
        except (TypeError, ValueError, ArithmeticError):
            return None

    return np.frompyfunc(safe, 2, 1)


def _arithmetic(op):
    # exact on integers and decimals (never rounded); binary64 where one operand is a float
    def apply(a, b):
        if isinstance(a, float) or isinstance(b, float):
            return op(float(a), float(b))
        return op(a, b)

    return apply


def _divide(a, b):
    # '/' divides in binary64: x / 0 is +inf or -inf (the signs of x and of the zero), 0 / 0 and NaN / 0 are NaN
    a, b = float(a), float(b)
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _is_nan(value):
    return isinstance(value, float) and value != value


def _time_text(text, other):
    """A time literal beside an instant (text without an offset is UTC, a date is its UTC midnight) or a date."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return text
    if len(text) == len("2026-01-01"):
        found = found.date()
        if isinstance(other, datetime):
            return datetime(found.year, found.month, found.day, tzinfo=timezone.utc)
        return found
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)


def _compare(op):
    # a NaN operand makes a comparison false (a null beside it: unknown, decided before this runs);
    # a float beside an exact number compares in binary64; a time literal reads as the time it names
    def apply(a, b):
        if _is_nan(a) or _is_nan(b):
            return False
        if isinstance(a, date) and isinstance(b, str):
            b = _time_text(b, a)
        elif isinstance(b, date) and isinstance(a, str):
            a = _time_text(a, b)
        numbers = not isinstance(a, str | bool | date) and not isinstance(b, str | bool | date)
        if numbers and isinstance(a, float) != isinstance(b, float):
            return op(float(a), float(b))
        return op(a, b)

    return apply


def _extreme(pick):
    # least / greatest: NaN where an argument is NaN, binary64 where one is a float (nulls decided before)
    def apply(a, b):
        if _is_nan(a) or _is_nan(b):
            return math.nan
        if isinstance(a, float) or isinstance(b, float):
            return pick(float(a), float(b))
        return pick(a, b)

    return apply


_SHARP_S_UPPER = "\u1e9e"


def _case(text, upper):
    """Each character to its one-character case partner (upper ß is ẞ); others stay as they are."""
    out = []
    for char in text:
        mapped = _SHARP_S_UPPER if upper and char == "ß" else char.upper() if upper else char.lower()
        out.append(mapped if len(mapped) == 1 else char)
    return "".join(out)


_IS_VALUE = np.frompyfunc(lambda value: value is not None, 1, 1)


def _python(value):
    return value.to_pydatetime() if isinstance(value, pd.Timestamp) else value


def _round(value, digits):
    digits = int(digits)
    if isinstance(value, int):
        return value if digits >= 0 else int(Decimal(value).quantize(Decimal(10) ** -digits, ROUND_HALF_UP))
    exact = value if isinstance(value, Decimal) else Decimal(repr(value))
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return rounded if isinstance(value, Decimal) else float(rounded)


class _Sql:
    """One expression's value per row; ``known`` is False where SQL would have NULL."""

    __slots__ = ("known", "values")
    __hash__ = None  # == builds a condition

    def __init__(self, values, known):
        self.values = values
        self.known = known

    def _binary(self, other, function):
        other = _Rows.wrap(other, len(self.known))
        known = self.known & other.known
        values = np.full(len(known), None, dtype=object)
        if known.any():
            values[known] = _elementwise(function)(self.values[known], other.values[known])
        return _Sql(values, known & _IS_VALUE(values).astype(bool))

    def _truth(self):
        true = np.zeros(len(self.known), dtype=bool)
        true[self.known] = self.values[self.known].astype(bool)
        return true, self.known & ~true

    @staticmethod
    def _logic(true, false):
        return _Sql(true.astype(object), true | false)

    def __and__(self, other):
        true, false = self._truth()
        other_true, other_false = _Rows.wrap(other, len(self.known))._truth()
        return _Sql._logic(true & other_true, false | other_false)

    def __or__(self, other):
        true, false = self._truth()
        other_true, other_false = _Rows.wrap(other, len(self.known))._truth()
        return _Sql._logic(true | other_true, false & other_false)

    __rand__ = __and__
    __ror__ = __or__

    def __invert__(self):
        true, false = self._truth()
        return _Sql._logic(false, true)

    def __neg__(self):
        return self._binary(0, lambda a, _: -a)

    def __eq__(self, other):
        return self._binary(other, _compare(operator.eq))

    def __ne__(self, other):
        return self._binary(other, _compare(operator.ne))

    def __lt__(self, other):
        return self._binary(other, _compare(operator.lt))

    def __le__(self, other):
        return self._binary(other, _compare(operator.le))

    def __gt__(self, other):
        return self._binary(other, _compare(operator.gt))

    def __ge__(self, other):
        return self._binary(other, _compare(operator.ge))

    def __add__(self, other):
        return self._binary(other, _arithmetic(operator.add))

    def __sub__(self, other):
        return self._binary(other, _arithmetic(operator.sub))

    def __mul__(self, other):
        return self._binary(other, _arithmetic(operator.mul))

    def __truediv__(self, other):
        return self._binary(other, _divide)

    # a literal on the left: 1 - x, 2 / x
    def _reflected(self, other, function):
        return _Rows.wrap(other, len(self.known))._binary(self, function)

    def __radd__(self, other):
        return self._reflected(other, _arithmetic(operator.add))

    def __rsub__(self, other):
        return self._reflected(other, _arithmetic(operator.sub))

    def __rmul__(self, other):
        return self._reflected(other, _arithmetic(operator.mul))

    def __rtruediv__(self, other):
        return self._reflected(other, _divide)


def _missing(column):
    """The null rows of ``column``. NaN is a value, not a null, where the backing tells them apart (Arrow,
    masked Float64, object columns of Python values); a numpy float column writes its nulls as NaN, as
    pandas does."""
    missing = column.isna().to_numpy(dtype=bool, copy=True)
    if column.dtype == object:
        missing &= ~np.array([_is_nan(v) for v in column.to_numpy(dtype=object)], dtype=bool)
    return missing


class _Rows:
    """The frame's columns as ``_Sql`` values, and the clause functions."""

    def __init__(self, df):
        self.df = df
        self.n = len(df)

    @staticmethod
    def wrap(value, n):
        if isinstance(value, _Sql):
            return value
        values = np.full(n, value, dtype=object)
        return _Sql(values, np.full(n, value is not None))

    def __getitem__(self, name):
        column = self.df[name]
        raw = column.to_numpy(dtype=object)
        missing = _missing(column)
        values = np.empty(self.n, dtype=object)
        values[:] = [_python(v) for v in raw]
        values[missing] = None
        return _Sql(values, ~missing)

    def constant(self, value):
        return self.wrap(value, self.n)

    def catalog(self, attribute, key):
        """The catalog's ``attribute`` of each row's series (unknown series: NULL)."""
        values = self.df[key].map(CATALOG[attribute])
        return _Sql(values.to_numpy(dtype=object), values.notna().to_numpy(dtype=bool))

    def is_null(self, value):
        value = self.wrap(value, self.n)
        return _Sql((~value.known).astype(object), np.ones(self.n, dtype=bool))

    def coalesce(self, *values):
        values = [self.wrap(v, self.n) for v in values]
        out = np.full(self.n, None, dtype=object)
        known = np.zeros(self.n, dtype=bool)
        for value in values:
            take = value.known & ~known
            out[take] = value.values[take]
            known |= take
        return _Sql(out, known)

    def _unary(self, value, function):
        return self.wrap(value, self.n)._binary(0, lambda a, _: function(a))

    def abs(self, value):
        return self._unary(value, abs)

    def length(self, value):
        return self._unary(value, lambda a: len(str(a)))

    def lower(self, value):
        return self._unary(value, lambda a: _case(a, upper=False))

    def matches(self, value, pattern):
        # the whole value; the exporter wrote \d, \w, \s as the ASCII classes DuckDB's RE2 and Spark's Java read
        compiled = re.compile(pattern)
        return self._unary(value, lambda a: compiled.fullmatch(a) is not None)

    def upper(self, value):
        return self._unary(value, lambda a: _case(a, upper=True))

    def round(self, value, digits):
        return self.wrap(value, self.n)._binary(digits, _round)

    def _extreme(self, values, pick):
        # NULL when any argument is NULL: the engine's SQL for least / greatest
        values = [self.wrap(v, self.n) for v in values]
        out = values[0]
        for value in values[1:]:
            out = out._binary(value, pick)
        return out

    def least(self, *values):
        return self._extreme(values, _extreme(min))

    def greatest(self, *values):
        return self._extreme(values, _extreme(max))

    def holds(self, result):
        """The clause holds unless it is known to be false: an unknown clause passes."""
        _, false = self.wrap(result, self.n)._truth()
        return pd.Series(~false, index=self.df.index)


# ---------------------------------------------------------------- column checks

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_UTC_SUFFIX = re.compile(r"([Zz]|[+-]00:00)$")
_FRACTION = re.compile(r"\.(\d+)")
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _is_null(value):
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)


def _each(series, judge):
    """``judge`` per non-null value (a column whose dtype does not settle it); nulls pass."""
    return pd.Series([_is_null(v) or bool(judge(v)) for v in series.to_numpy(dtype=object)], index=series.index)


def _decimal_digits(value):
    """(integer digits, fraction digits) of a Decimal, trailing fraction zeros not counted."""
    _, digits, exponent = value.as_tuple()
    digits = list(digits)
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    while len(digits) > 1 and digits[0] == 0:
        digits.pop(0)
    if digits == [0]:
        return 0, 0
    return max(0, len(digits) + exponent), max(0, -exponent)


def _decimal_fits(precision, scale):
    integer_digits = precision - scale

    def fits(value):
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return abs(value) < 10**integer_digits
        if not isinstance(value, Decimal) or not value.is_finite():
            return False
        whole, fraction = _decimal_digits(value)
        return whole <= integer_digits and fraction <= scale

    def check(series):
        arrow = getattr(series.dtype, "pyarrow_dtype", None)
        if arrow is not None and hasattr(arrow, "scale"):
            if arrow.scale <= scale and arrow.precision - arrow.scale <= integer_digits:
                return pd.Series(True, index=series.index)
            return _each(series, fits)  # a wider decimal type: value by value
        if pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
            return series.isna() | (series.abs() < 10**integer_digits)
        if series.dtype == object:
            return _each(series, fits)
        return series.isna()  # floats (or anything else) are not decimals

    return check


def _instant_dtype(dtype):
    """(unit, zone) of a datetime column backed by numpy or Arrow (zone None: naive); None otherwise."""
    arrow = getattr(dtype, "pyarrow_dtype", None)
    if arrow is not None:
        unit = getattr(arrow, "unit", None)
        return (unit, arrow.tz) if hasattr(arrow, "tz") and unit in _FRACTION_DIGITS else None
    if isinstance(dtype, pd.DatetimeTZDtype):
        return dtype.unit, str(dtype.tz)
    if pd.api.types.is_datetime64_dtype(dtype):
        return np.datetime_data(dtype)[0], None
    return None


_ARROW_TEXT = ("string", "large_string", "string_view")
_ARROW_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 9, "uint16": 17, "uint32": 33}
_ARROW_NUMBERS = ("halffloat", "float", "double", "uint64")


def _logical(kind, bits=64):
    """The column holds ``kind`` values, however it is backed: numpy, pandas' masked arrays or Arrow.

    A column of another type fails every value (as the engine fails a Parquet column of the wrong
    physical type); an object column is judged value by value. Integers of a wider type than the
    declared one are judged by their values' range.
    """
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def value_fits(value):
        if kind == "string":
            return isinstance(value, str)
        if kind == "bool":
            return isinstance(value, bool | np.bool_)
        if isinstance(value, bool | np.bool_):
            return False
        if kind == "int":
            return isinstance(value, int | np.integer) and low <= value <= high
        return isinstance(value, int | float | Decimal | np.integer | np.floating)  # float: any number

    def check(series):
        dtype = series.dtype
        if dtype == object:
            return _each(series, value_fits)
        arrow = str(getattr(dtype, "pyarrow_dtype", ""))
        numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        if kind == "string":
            fits = isinstance(dtype, pd.StringDtype) or arrow in _ARROW_TEXT
        elif kind == "bool":
            fits = pd.api.types.is_bool_dtype(dtype)
        elif kind == "int":
            fits = numeric and pd.api.types.is_integer_dtype(dtype)
            width = _ARROW_BITS.get(arrow) if arrow else 8 * dtype.itemsize + (dtype.kind == "u")
            if fits and (width is None or width > bits):
                return series.isna() | series.between(low, high)
        else:  # float: any number
            fits = numeric or arrow in _ARROW_NUMBERS or arrow.startswith("decimal")
        return pd.Series(True, index=series.index) if fits else series.isna()

    return check


def _is_instant(series):
    if _instant_dtype(series.dtype) is not None:
        return pd.Series(True, index=series.index)
    return _each(series, lambda v: isinstance(v, datetime))


def _is_utc(value):
    return isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() == timedelta(0)


def _utc_instant():
    """Instants written at UTC: a tz-aware column is; a naive one is not; values judged one by one."""

    def check(series):
        typed = _instant_dtype(series.dtype)
        if typed is not None:  # a zone-aware column holds instants; a naive one does not
            return pd.Series(True, index=series.index) if typed[1] is not None else series.isna()

        def utc(value):
            if isinstance(value, datetime):
                return _is_utc(value)
            if isinstance(value, str) and _RFC3339.match(value):
                return bool(_UTC_SUFFIX.search(value))
            return True  # not an instant at all: the type check reports it

        return _each(series, utc)

    return check


def _within_precision(unit):
    digits = _FRACTION_DIGITS[unit]

    def fraction_digits(value):
        if isinstance(value, pd.Timestamp):
            text = f"{value.microsecond:06d}{value.nanosecond:03d}"
        elif isinstance(value, datetime):
            text = f"{value.microsecond:06d}"
        elif isinstance(value, str) and (match := _FRACTION.search(value)):
            text = match.group(1)
        else:
            return 0
        return len(text.rstrip("0"))

    def check(series):
        typed = _instant_dtype(series.dtype)
        if typed is not None and _FRACTION_DIGITS[typed[0]] <= digits:
            return pd.Series(True, index=series.index)
        return _each(series, lambda v: fraction_digits(v) <= digits)

    return check


def _is_date(series):
    return _each(series, lambda v: isinstance(v, date) and not isinstance(v, datetime))


def _is_bytes(series):
    return _each(series, lambda v: isinstance(v, bytes | bytearray))


def _unique_values(series):
    """No value on two rows; every row of a repeated value fails, nulls never repeat."""
    return ~series.duplicated(keep=False) | series.isna()


def _calibration_in_force(series_column, calibration_column, instant_column):
    """The calibration id is the record of the row's series in force at its instant."""

    def check(df):
        series = df[series_column]
        calibration = df[calibration_column]
        instants = pd.to_datetime(df[instant_column].map(lambda v: v if _is_utc(v) else None), utc=True)
        in_force = pd.Series(None, index=df.index, dtype=object)
        for series_id, calibration_id, valid_from, valid_to in CALIBRATIONS:
            hit = (series == series_id) & (instants >= valid_from)
            if valid_to is not None:
                hit &= instants < valid_to
            in_force[hit.fillna(False).to_numpy(dtype=bool)] = calibration_id
        # rows without a calibration id, of an unknown series or without a UTC instant are other checks' business
        judged = calibration.notna() & series.isin(CATALOG_SERIES) & instants.notna()
        return ~judged | (calibration == in_force).fillna(False).astype(bool)

    return check
'''

# pasted after RUNTIME where the module has a polars schema; the imports are optional in the module
POLARS_RUNTIME = r'''
# ---------------------------------------------------------------- the same checks under pandera's polars backend


def _on_polars(check, column=False, reads=None):
    """``check`` (one of this module's pandas checks) on a polars frame. The columns it reads become
    Arrow-backed pandas, where a null and NaN stay apart as polars keeps them (categorical and enum
    text read as text); pandera's polars backend gets one boolean per row."""

    def run(data):
        frame = data.lazyframe
        if column:
            frame = frame.select(data.key)
        elif reads:
            present = frame.collect_schema().names()
            frame = frame.select([name for name in reads if name in present])
        frame = frame.collect()
        frame = frame.with_columns((cs.categorical() | cs.enum()).cast(pl.String))
        pandas = frame.to_pandas(use_pyarrow_extension_array=True)
        held = check(pandas[data.key] if column else pandas)
        return pl.LazyFrame({"holds": np.asarray(held, dtype=bool)})

    return run


def _present(series):
    """Not null, as the clauses read a null; NaN is a value (pandera's own nullable=False on polars also
    fails NaN)."""
    return ~_missing(series)
'''
