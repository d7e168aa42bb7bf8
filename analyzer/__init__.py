"""aoti-lint: static analysis of PyTorch AOTInductor (.pt2) packages, without running them."""

__version__ = "0.1.0"
