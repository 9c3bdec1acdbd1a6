"""Lint against a running registry: a subject left in NONE compatibility is a common mistake."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from tscontract.contract.lint import Finding
from tscontract.errors import InputError


def _get(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise InputError(f"registry answered {exc.code} for {url}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise InputError(f"cannot reach the registry at {url}: {getattr(exc, 'reason', exc)}") from None


def registry_findings(base_url: str, subject: str) -> list[Finding]:
    """TS151 when ``subject`` (or the global default it falls back to) is NONE, with who, when and why."""
    base = base_url.rstrip("/")
    quoted = urllib.parse.quote(subject, safe="")
    level = _get(f"{base}/config/{quoted}?defaultToGlobal=true").get("compatibilityLevel")
    if level != "NONE":
        return []
    log = _get(f"{base}/config/log?subject={quoted}") or _get(f"{base}/config/log")
    last = next((entry for entry in reversed(log) if entry.get("new") == "NONE"), None)
    detail = f" since {last.get('changed_at')} by {last.get('who')}: {last.get('reason')}" if last else ""
    return [
        Finding(
            "TS151",
            "warning",
            "evolution.compatibility",
            f"registry subject {subject} is in NONE compatibility{detail}; any breaking change "
            "passes until it is set back (FULL_TRANSITIVE)",
        )
    ]
