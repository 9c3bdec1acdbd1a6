"""The Open Data Contract Standard: reading, writing and its YAML form."""
