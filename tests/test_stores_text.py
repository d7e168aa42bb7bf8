"""stores.out_pointer_uses counts what the `\\bout_ptrN\\b` regular expression finds, without its
slow scan: the same counts on generated and real kernel text."""

from __future__ import annotations

import collections
import zipfile

from hypothesis import given, strategies as st

from analyzer.parse import stores
from conftest import FIXTURES

_PIECES = st.sampled_from(["out_ptr", "in_out_ptr", "0", "12", "_", "x", " ", "[", "]", "+", "é", "٣", "\n"])


@given(st.lists(_PIECES, max_size=40).map("".join))
def test_counts_as_the_regular_expression(text: str) -> None:
    assert stores.out_pointer_uses(text) == collections.Counter(stores._OUT_POINTER.findall(text))


def test_counts_as_the_regular_expression_on_a_real_kernel_member() -> None:
    with zipfile.ZipFile(FIXTURES / "stranger3" / "opt.cpu.stripped.pt2") as zf:
        text = next(zf.read(n) for n in zf.namelist() if n.endswith(".kernel.cpp")).decode()
    expected = collections.Counter(stores._OUT_POINTER.findall(text))
    assert sum(expected.values()) > 10 and stores.out_pointer_uses(text) == expected
