"""The message catalog lives in `analyzer/messages.py` (the linker renders chain steps from it too,
and parsers never import `analyzer.rules`); this module re-exports it for the rule families."""

from __future__ import annotations

from ..messages import *  # noqa: F403
from ..messages import Catalog, Template, Text, catalogs  # noqa: F401
