"""The parsers: tree-sitter (ts.py only), the wrapper's facts, kernels, Triton text."""
