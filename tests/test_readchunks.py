"""A stoppable parse keeps nothing it read (analyzer/parse/readchunks.py).

py-tree-sitter 0.26.1 keeps a reference to every bytes object a read callback returns: each
stoppable parse (the wrapper's, a large kernel's) left its text in memory, and a process checking
many packages grew without end."""

from __future__ import annotations

import ctypes
import gc
import sys
import tracemalloc
from pathlib import Path

from analyzer.parse import readchunks, ts

ROOT = Path(__file__).resolve().parent.parent

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


def _grown_after(binding) -> int:
    """Bytes still allocated after `binding` read 1 MiB through `Chunks` and they were released."""
    data = bytes(range(256)) * 4096
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        chunks = readchunks.Chunks(data, 1 << 16, keep=True)
        binding(chunks.read)
        assert len(chunks.given or []) == 16
        chunks.release(1 << 12)
        assert chunks.given is None and chunks.read(0, None) == data[:1 << 12]  # node text: not listed
        del chunks
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_release_gives_back_the_kept_references() -> None:
    grown = _grown_after(_keeping)
    assert grown < (1 << 20) // 8, grown  # kept and not given back: the whole MiB


def test_release_after_a_binding_that_borrows_frees_as_usual() -> None:
    """A piece nothing kept has its own references only: it is left alone (given back a second time,
    it would be freed while the list still holds it)."""
    grown = _grown_after(_borrowing)
    assert grown < (1 << 20) // 8, grown


def test_checking_a_package_again_keeps_nothing_of_the_first_check(monkeypatch) -> None:
    """A real package checked three more times in one process (as a `-j` worker checks one package
    after another): what each check's stoppable parses read is gone with it (kept, it would be
    more than the limit here)."""
    from analyzer.app import api

    package = str(ROOT / "fixtures" / "real" / "bert.cpu.stripped.pt2")
    api.lint([package])  # the caches that live on are filled by the first check
    read = [0]
    chunk = readchunks.Chunks.read

    def counted(self, offset, point):
        piece = chunk(self, offset, point)
        read[0] += len(piece)
        return piece

    monkeypatch.setattr(readchunks.Chunks, "read", counted)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(3):
            assert api.lint([package]).packages[0].models[0].assertions
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    limit = 64 * 1024
    assert read[0] > 3 * limit and grown < limit, (read[0], grown)
