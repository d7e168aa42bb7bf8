"""Size expressions: interval arithmetic and the value-range engine over kernel expressions."""
