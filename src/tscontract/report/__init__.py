"""tscontract.report."""
