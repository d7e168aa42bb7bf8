"""C++ loads read by analyzer/parse/loadstrides.py: the word-start search of `_loads` against the
`\\b` pattern it replaced, and the strides of a repeated index read once."""

from __future__ import annotations

import random
import re

from analyzer.parse import loadstrides as L

# The pattern before `_loads`: a load starts a word.
_WORD_START = re.compile(r"\b(in_ptr\d+|in_out_ptr\d+)(\[|\s\+\s)")


def test_loads_start_words_as_the_word_boundary_pattern_does() -> None:
    pieces = ["in_ptr0[", "in_out_ptr1 + ", "xin_ptr2[", "_in_ptr3[", "9in_ptr4[", "éin_ptr5[", " in_ptr6 + ",
              "(in_ptr7[", "in_ptr", "in_out_ptr", "12[", " + ", "in_in_ptr8[", "ptr9[", "\n", "in_ptr10 +"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert [m.span() for m in L._loads(text)] == [m.span() for m in _WORD_START.finditer(text)], text


def test_a_repeated_index_is_parsed_once_with_the_same_strides() -> None:
    L._index_strides.cache_clear()
    index = "static_cast<int64_t>(12L*x1 + 12L*x0*(c10::div_floor_integer(static_cast<int64_t>(3L + ks1), 4L)))"
    first = L._index_strides(index)
    assert first == (("x1", "(12)"), ("x0", "(12) * ((3 + ks1) // 4)"))
    assert L._index_strides(index) == first and L._index_strides.cache_info().hits == 1
    assert L._index_strides("in_ptr0[") == ()  # not an expression: no strides
