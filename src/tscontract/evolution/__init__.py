"""tscontract.evolution."""
