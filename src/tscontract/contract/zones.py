"""Zones as contracts and mappings write them: an IANA name (``Europe/Rome``) or a fixed UTC offset (``+01:00``)."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_OFFSET = re.compile(r"^(?P<sign>[+-])(?P<h>\d{2}):?(?P<m>\d{2})$")


def iana_zone(value: str | None) -> str | None:
    """``value`` if it names an IANA time zone (``Europe/Berlin``)."""
    if value is not None:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. Europe/Berlin)") from None
    return value


def offset_minutes(zone: str) -> int | None:
    """Minutes east of UTC for a fixed offset (``+01:00``, ``+0100``, ``-05:00``); None for a zone name."""
    match = _OFFSET.match(zone)
    if match is None:
        return None
    minutes = int(match["h"]) * 60 + int(match["m"])
    if int(match["h"]) > 18 or int(match["m"]) > 59:
        raise ValueError(f"{zone!r} is not a UTC offset (at most +/-18:00)")
    return -minutes if match["sign"] == "-" else minutes


def zone_name(value: str, *also: str) -> str:
    """``value`` if it is a UTC offset (``+01:00``, at most +/-18:00) or an IANA zone name (``Europe/Rome``);
    else ValueError naming what is accepted (``also``: the caller's other spellings)."""
    if offset_minutes(value) is not None:
        return value
    try:
        iana_zone(value)
    except ValueError:
        accepted = ["an IANA time zone (Europe/Rome)", "a UTC offset (+01:00)", *also]
        raise ValueError(f"{value!r} is not {', '.join(accepted[:-1])} or {accepted[-1]}") from None
    return value
