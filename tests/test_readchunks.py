"""A stoppable parse keeps nothing it read (analyzer/parse/readchunks.py).

py-tree-sitter 0.26.1 keeps a reference to every bytes object a read callback returns: each
stoppable parse (the wrapper's, a large kernel's) left its text in memory, and a process checking
many packages grew without end."""

from __future__ import annotations

import ctypes
import gc
import sys
import tracemalloc

from analyzer.parse import readchunks, ts

TEXT = b"int f(int a) { return a + 1; }\n" * 40_000  # 1.2 MB: more than one chunk


def test_a_stoppable_parse_keeps_nothing_it_read() -> None:
    ts.parse(TEXT, should_stop=lambda: False)  # the probe and the parser's first allocations
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        refs = sys.getrefcount(TEXT)
        for _ in range(3):
            tree, stopped = ts.parse(TEXT, should_stop=lambda: False)
            assert tree is not None and not stopped and tree.root_node.child_count > 1
            del tree
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(TEXT) == refs and grown < len(TEXT) // 4, grown


def test_nor_does_a_stopped_one() -> None:
    calls = [0]

    def stop() -> bool:
        calls[0] += 1
        return calls[0] > 2

    ts.parse(TEXT, should_stop=lambda: False)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tree, stopped = ts.parse(TEXT, should_stop=stop)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert tree is None and stopped and grown < len(TEXT) // 4, grown


def _keeping(read) -> None:
    """A binding that keeps one reference to each piece it was given (as 0.26.1 does)."""
    offset = 0
    while piece := read(offset, None):
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(piece))
        offset += len(piece)


def _borrowing(read) -> None:
    offset = 0
    while piece := read(offset, None):
        offset += len(piece)


def test_the_probe_tells_a_binding_that_keeps_pieces_from_one_that_does_not() -> None:
    assert readchunks.leaks(_keeping) and not readchunks.leaks(_borrowing)


def test_release_gives_back_the_kept_references() -> None:
    data = bytes(range(256)) * 4096  # 1 MiB
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        chunks = readchunks.Chunks(data, 1 << 16, keep=True)
        _keeping(chunks.read)
        chunks.release(1 << 12)
        del chunks
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < len(data) // 8, grown  # kept and not given back: the whole MiB


def test_release_after_a_binding_that_borrows_frees_as_usual() -> None:
    """A piece nothing kept has its own references only: it is left alone (given back a second time,
    it would be freed while the list still holds it)."""
    data = bytes(range(256)) * 4096
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        chunks = readchunks.Chunks(data, 1 << 16, keep=True)
        _borrowing(chunks.read)
        assert len(chunks.given or []) == 16
        chunks.release(1 << 12)
        assert chunks.given is None and chunks.read(0, None) == data[:1 << 12]  # node text: not listed
        del chunks
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < len(data) // 8, grown
