"""tscontract.engines."""
