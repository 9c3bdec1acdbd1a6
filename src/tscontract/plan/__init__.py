"""tscontract.plan."""
