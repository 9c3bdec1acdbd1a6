"""tscontract.evolution: schema compatibility of Avro, Protobuf and JSON Schema over a version history."""

from tscontract.evolution.modes import CompatResult, Issue, Mode, check

__all__ = ["CompatResult", "Issue", "Mode", "check"]
