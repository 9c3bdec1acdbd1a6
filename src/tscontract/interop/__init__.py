"""Interoperability: exports, imports, ODCS, inference from data (DESIGN.md, package layout)."""
