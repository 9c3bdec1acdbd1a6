"""tscontract.registry."""
