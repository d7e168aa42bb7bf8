"""Strict mode for the node handlers (ts.cpp_to_py, values.Values, the wrapper's statements).

Every handler table reads an unknown node kind as "unknown" (`unknown()` / no range), which is the
right answer for a user: the rest of the package is still analysed. A new compiler release that
emits a construct nobody has seen, though, must not pass the tests silently: with `STRICT` set
(the `strict` test fixture, or AOTI_LINT_STRICT=1) an unknown kind raises `UnknownNodeKind`.
"""

from __future__ import annotations

import os

STRICT = os.environ.get("AOTI_LINT_STRICT", "") not in ("", "0")


class UnknownNodeKind(AssertionError):
    """A handler table met a node kind it has no entry for (raised only in strict mode)."""


def unknown(table: str, kind: str) -> None:
    """Record that `table` has no handler for `kind`: raise in strict mode, else do nothing."""
    if STRICT:
        raise UnknownNodeKind(f"{table}: no handler for node kind {kind!r}")
