"""aoti-lint: static analysis of PyTorch AOTInductor (.pt2) packages, without running them."""

__version__ = "0.1.0"

# The one public address of the project: docs links, SARIF `informationUri`/`helpUri`, the
# README's `uses:` and `repo:` lines and pyproject's project.urls all derive from it
# (tests/test_metadata.py holds every other spelling to it).
REPOSITORY = "https://github.com/aoti-lint/aoti-lint"
