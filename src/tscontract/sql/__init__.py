"""SQL shared by engines, the gate and the exports (layer 5 of DESIGN.md)."""
