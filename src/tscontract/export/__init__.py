"""tscontract.export."""
