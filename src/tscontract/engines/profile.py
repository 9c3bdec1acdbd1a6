"""``tscontract profile``: per series robust quantiles and typical magnitude of each measurement field.

The bounds it writes feed ``--bounds``: plausibility per row and the scale check per batch.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tscontract.contract.model import Contract
from tscontract.engines.base import TYPED_VIEW
from tscontract.engines.connection import connect
from tscontract.engines.inputs.sources import reading_errors
from tscontract.engines.run import ValidationRun
from tscontract.errors import InputError
from tscontract.plan.bounds import DEFAULT_MARGIN, DEFAULT_SCALE_FACTOR, Bounds, SeriesProfile
from tscontract.plan.checks import build_plan
from tscontract.sql.columns import ident


def measurement_fields(contract: Contract) -> list[str]:
    """Numeric fields that measure something: declared, not key or provenance."""
    skip = {*contract.key, *contract.provenance_required}
    numeric = [n for n, f in contract.declared_fields.items() if f.type.is_numeric and n not in skip]
    measured = [n for n in numeric if contract.fields[n].unit or contract.fields[n].dimension]
    return measured or numeric


def profile(
    contract: Contract,
    data: Any,
    *,
    catalog: Any = None,
    fields: list[str] | None = None,
    margin: Decimal = DEFAULT_MARGIN,
    scale_factor: Decimal = DEFAULT_SCALE_FACTOR,
    mapping: Any = None,
) -> Bounds:
    """Per series robust quantiles and typical magnitude of each measurement field of ``data``.

    ``mapping`` (a :class:`tscontract.engines.inputs.mapping.Mapping`): ``data`` is raw, converted as ingest does.
    """
    series = contract.series_column
    if series is None:
        raise InputError("profiling needs a series column (series.column in the contract)")
    chosen = fields or measurement_fields(contract)
    for name in chosen:
        if name not in contract.fields or not contract.fields[name].type.is_numeric:
            raise InputError(f"cannot profile {name!r}: not a numeric field of {contract.contract}")
    con = connect()
    try:
        if mapping is not None:
            from tscontract.engines.inputs.staging import stage_source

            data, _ = stage_source(con, data, contract, catalog, mapping)
        run = ValidationRun(build_plan(contract, catalog), data, None, 0, None, con=con)
        with reading_errors(data):  # a corrupt page met by the profile's queries: an input error
            run.register_catalog()
            run.create_typed_view()
            for name in (*chosen, series):
                if not run.columns[name].present:
                    raise InputError(f"the history has no column {name!r}")
            profiles: dict[str, dict[str, SeriesProfile]] = {}
            for name in chosen:
                f = ident(name)
                rows = run.fetch(
                    f"SELECT {ident(series)}, count({f}), quantile_disc({f}, 0.01), quantile_disc({f}, 0.5), "
                    f"quantile_disc({f}, 0.99), quantile_disc(abs({f}), 0.5) FROM {TYPED_VIEW} "
                    f"WHERE NOT {ident('__tf_' + name)} AND {f} IS NOT NULL AND {ident(series)} IS NOT NULL "
                    "GROUP BY 1 ORDER BY 1"
                )
                profiles[name] = {str(r[0]): SeriesProfile(int(r[1]), *(Decimal(str(v)) for v in r[2:])) for r in rows}
            total = run.fetch(f"SELECT count(*) FROM {TYPED_VIEW}")[0][0]
    finally:
        con.close()
    return Bounds(
        contract=contract.contract,
        version=contract.version,
        series_column=series,
        fields=profiles,
        margin=margin,
        scale_factor=scale_factor,
        sources=run.source.description,
        rows=int(total),
    )
