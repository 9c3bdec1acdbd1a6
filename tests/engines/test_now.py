"""``validate(now=...)`` from the library: RFC 3339 text as ``--now`` reads it; anything else one clear error."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tests.engines.conftest import SENSOR
from tscontract import validate
from tscontract.errors import InputError

GOOD = SENSOR / "data" / "good.csv"
TEXT_NOW = "2026-11-30T21:05:00+01:00"


def test_now_as_text_is_the_instant_it_names() -> None:
    as_text = validate(SENSOR / "contract.yaml", GOOD, catalog=SENSOR / "catalog.yaml", now=TEXT_NOW)
    as_datetime = validate(
        SENSOR / "contract.yaml", GOOD, catalog=SENSOR / "catalog.yaml", now=datetime(2026, 11, 30, 20, 5, tzinfo=UTC)
    )
    assert as_text.passed and as_text.to_json()["checks"] == as_datetime.to_json()["checks"]


@pytest.mark.parametrize(
    ("now", "message"),
    [
        ("yesterday", "now: 'yesterday' is not an RFC 3339 timestamp"),
        (datetime(2026, 11, 30, 21, 5), "now: datetime.datetime(2026, 11, 30, 21, 5) has no UTC offset"),  # which zone?
        (1764536700, "now: expected an RFC 3339 timestamp, got 1764536700"),
    ],
)
def test_a_now_that_names_no_instant_is_refused(now: object, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        validate(SENSOR / "contract.yaml", GOOD, catalog=SENSOR / "catalog.yaml", now=now)  # type: ignore[arg-type]
