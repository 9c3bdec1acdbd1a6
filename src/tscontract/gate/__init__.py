"""tscontract.gate."""
