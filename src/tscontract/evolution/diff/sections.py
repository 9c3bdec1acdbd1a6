"""Every key without its own method, compared section by section by CLASSIFICATION; the series column."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from tscontract.contract.model import SeriesIdentity
from tscontract.evolution.diff.classification import SECTION, rule_for
from tscontract.evolution.diff.recorder import Recorder
from tscontract.evolution.diff.rules import _VERDICTS, Rule, _changed


def _plain(value: Any) -> Any:
    """A value as compared: clauses by their text, lists as lists."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    text = getattr(value, "text", None)
    return text if isinstance(text, str) and not isinstance(value, str) else value


def _show(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, BaseModel):
        shown = {
            name: _show(getattr(value, name))
            for name, info in type(value).model_fields.items()
            if not info.exclude and name not in ("description", "note") and getattr(value, name) not in (None, (), [])
        }
        return "{" + ", ".join(f"{k}: {v}" for k, v in shown.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(str(_show(v)) for v in value) + "]"
    return str(_plain(value))


def _defaults(model: type[BaseModel]) -> BaseModel | None:
    """A section that states nothing, where every key has a default (``evolution``)."""
    try:
        return model()
    except ValidationError:
        return None


class SectionDiffer(Recorder):
    """Keys walked by CLASSIFICATION, and the series identity."""

    # ------------------------------------------------------------ every other key, by CLASSIFICATION
    def walk(self, old: Any, new: Any, path: tuple[str, ...], pattern: tuple[str, ...]) -> None:
        """Compare two values of the same key; sections key by key, maps name by name."""
        rule = rule_for(".".join(pattern)) if pattern else SECTION
        models = isinstance(old, BaseModel) and isinstance(new, BaseModel)
        if rule is not None and rule.handled and not models:
            return
        model = old if isinstance(old, BaseModel) else new if isinstance(new, BaseModel) else None
        if model is not None:
            if not models:
                stand_in = _defaults(type(model)) if pattern[-1] != "*" else None
                if stand_in is None:
                    self.classify(rule, path, old, new)
                    return
                old, new = (stand_in if old is None else old), (stand_in if new is None else new)
            for name, info in type(model).model_fields.items():
                if not info.exclude:
                    self.walk(getattr(old, name), getattr(new, name), (*path, name), (*pattern, name))
        elif (isinstance(old, dict) or isinstance(new, dict)) and (rule is None or rule.compare is None):
            before, after = old or {}, new or {}
            for name in [*before, *(n for n in after if n not in before)]:
                self.walk(before.get(name), after.get(name), (*path, name), (*pattern, "*"))
        elif _plain(old) != _plain(new):
            self.classify(rule, path, old, new)

    def classify(self, rule: Rule | None, path: tuple[str, ...], old: Any, new: Any) -> None:
        rule = rule or Rule(compare=_changed)  # unclassified: never ignored, counted as breaking
        if rule.compare is None:
            return
        direction = rule.compare(old, new)
        verb, compatible, required, action = _VERDICTS[direction]
        self.add(
            rule.kind or f"{verb}_{rule.topic or path[-1]}",
            ".".join(path),
            _show(old),
            _show(new),
            compatible,
            required,
            rule.action or action,
            forbidden=direction == "forbidden",
        )

    def series(self) -> None:
        """The series column as the engine groups by it; scheme and pattern by CLASSIFICATION."""
        before, after = self.old.series_column, self.new.series_column
        if before != after:
            self.add(
                "change_series_column",
                "series.column",
                before,
                after,
                "no",
                "major",
                "major version: points are grouped into series by another column",
            )
        old, new = self.old.series, self.new.series
        if (old is None) != (new is None):
            stand_in = SeriesIdentity(column="")
            self.walk(old or stand_in, new or stand_in, ("series",), ("series",))
