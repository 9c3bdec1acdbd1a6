"""Inputs into DuckDB: sources (files, frames, tables), CSV dialects and lines, mappings, staging, local time."""
