"""The text a stoppable parse hands tree-sitter through its read callback (ts.py), and the
references py-tree-sitter keeps to it.

py-tree-sitter 0.26.1 keeps one reference to every bytes object a read callback returns, for
ever: each parse fed through the callback (every stoppable one) left what it read in memory, so a
process checking many packages (`-j`'s workers, the distributed recipe's) grew by about 1.5 MB per
4 MB wrapper, without end. `leaks` measures that on the installed binding once (a parse of a line
read twice, `binding_keeps`); where it holds, `Chunks.release` gives back the one kept reference of each chunk
whose count says it is still held, after the parse returned (tree-sitter reads a chunk only while
parsing: its trees keep positions, not text). A binding that does not keep them is left alone."""

from __future__ import annotations

import ctypes
import sys
from typing import Callable

# What a chunk's reference count reads inside `release`'s loop when nothing else holds it: the
# list, the loop's name, `getrefcount`'s argument.
_OWN_REFS = 3
_PROBE = b"int probe_line_of_a_read_callback;\n"

try:
    _decref: Callable[[object], None] | None = ctypes.pythonapi.Py_DecRef
    _decref.argtypes = [ctypes.py_object]  # type: ignore[union-attr]
except AttributeError:  # not CPython: leave whatever the binding keeps
    _decref = None


class Chunks:
    """`read(offset, point)` for tree-sitter: `data` from `offset`, `size` bytes at a time, each
    piece a new object (never `data` itself, whose references are the caller's); while `keep`, the
    pieces are listed until `release`."""

    def __init__(self, data: bytes, size: int, keep: bool) -> None:
        self.view, self.size = memoryview(data), size
        self.given: list[bytes] | None = [] if keep else None

    def read(self, offset: int, _point: object) -> bytes:
        piece = bytes(self.view[offset:offset + self.size])
        if self.given is not None and piece:  # (the empty bytes is a shared object)
            self.given.append(piece)
        return piece

    def release(self, size: int) -> None:
        """After the parse: the binding's kept reference of each piece given, and `size` bytes at a
        time from now on (node text read back through `read`)."""
        given, self.given, self.size = self.given, None, size
        if given and _decref is not None:
            for piece in given:
                if sys.getrefcount(piece) == _OWN_REFS + 1:
                    _decref(piece)
            given.clear()


_KEEPS: list[bool] = []  # `leaks` of the binding, once measured


def binding_keeps(parse: Callable[[Callable[[int, object], bytes]], object]) -> bool:
    """`leaks(parse)`, measured once per process."""
    if not _KEEPS:
        _KEEPS.append(leaks(parse))
    return _KEEPS[0]


def leaks(parse: Callable[[Callable[[int, object], bytes]], object]) -> bool:
    """Whether `parse(read)` (a parse fed through a read callback) keeps one reference to each piece
    `read` returned, still held after a second parse."""
    first = Chunks(_PROBE, len(_PROBE), keep=True)
    parse(first.read)
    parse(Chunks(_PROBE, len(_PROBE), keep=False).read)
    given = first.given or []
    return bool(given) and all(sys.getrefcount(piece) == _OWN_REFS + 1 for piece in given)
