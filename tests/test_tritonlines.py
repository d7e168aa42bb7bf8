"""Triton kernels read line by line (analyzer/parse/tritonlines.py) give the facts of the parse of the
whole function (kernels.parse_triton), on every kernel of every fixture package, and decline
(None) every shape they do not read as Python would."""

from __future__ import annotations

import ast
import dataclasses
import pytest

from analyzer.read import archive
from analyzer.core import budget
from analyzer.parse import helpertext, kernels, triage, tritonlines, tritonsrc
from conftest import every_package


def test_the_fast_path_equals_the_whole_parse_on_every_fixture_kernel() -> None:
    """Over every kernel of every fixture package (real, stranger, large, stress): where
    triage.light_triton answers, the whole parse finds nothing the rules read; elsewhere
    triage.walk_triton (without decorators, scans' helpers read apart, line by line) gives the
    whole parse's facts."""
    answered = by_line = scans = 0
    for where, name, source, _, first_line, indent, params in _kernels(decorated=True):
        whole = kernels.parse_triton(name, source, "w.cpp", first_line, indent, params)
        if triage.light_triton(name, source, "w.cpp", first_line, indent) is not None:
            assert not (whole.assertions or whole.divisions or whole.reductions or whole.problem), where
            answered += 1
            # Linking walks such a kernel when it writes a buffer that an assertion's index reads.
            _same(triage.walk_triton(name, source, "w.cpp", first_line, indent, ()), whole, where)
            continue
        walked = triage.walk_triton(name, source, "w.cpp", first_line, indent, params)
        _same(walked, whole, where)
        by_line += walked.segments is not None
        scans += bool(whole.combines)
    assert answered >= 50 and by_line >= 70 and scans >= 2, (answered, by_line, scans)


def _kernels(decorated: bool = False):
    """(where, name, decorator-less source, signature, first line, indent, params) of every
    Triton kernel of the fixture packages that the fast path walks without its decorator."""
    for path in every_package():
        try:
            with archive.open_package(path) as pkg:
                wrappers = [(m, pkg.read_bytes(m)) for members in pkg.models for m in members.wrappers[:1]]
        except budget.ArchiveError:
            continue  # hostile fixtures: refused before any kernel is read
        for _, data in wrappers:
            for text in helpertext.split_helpers(data)[1]:
                source, first_line, indent, problem = tritonsrc.triton_comment(text.comment, text.comment_row)
                if source is None:
                    continue
                name = text.name[len("call_"):]
                if decorated:
                    yield (path.name, name), name, source, None, first_line, indent, text.params
                    continue
                short = triage.without_decorator(name, source)
                if short is not None:
                    yield (path.name, name), name, short[0], short[1], first_line, indent, text.params


def _same(a: kernels.KernelFacts, b: kernels.KernelFacts, where) -> None:
    for field in dataclasses.fields(b):
        if field.name not in ("defs", "locate", "segments"):
            assert getattr(a, field.name) == getattr(b, field.name), (where, field.name)
    assert [(k, line, ast.dump(e)) for k, v in a.defs.items() for line, e in v] == \
        [(k, line, ast.dump(e)) for k, v in b.defs.items() for line, e in v], where
    assert [a.locate(n) for n in (1, 9)] == [b.locate(n) for n in (1, 9)], where


def test_line_by_line_equals_the_whole_parse_on_every_fixture_kernel() -> None:
    read = blocks = several = 0
    for where, name, source, types, first_line, indent, params in _kernels():
        whole = kernels.parse_triton(name, source, "w.cpp", first_line, indent, params)
        whole.param_types = types
        lines = tritonlines.walk(name, source, "w.cpp", first_line, indent, types)
        assert lines is not None, where  # Inductor's kernels are all read line by line
        _same(lines, whole, where)
        read += 1
        blocks += "\n    for " in source
        several += any(line.endswith("(") for line in source.split("\n"))
    # Enough kernels of each shape: loops (`red` kernels) and statements over several lines (welford).
    assert read >= 100 and blocks >= 8 and several >= 2, (read, blocks, several)


class _Every:
    def __contains__(self, name: object) -> bool:
        return True


def test_the_calls_offered_as_candidates_lose_no_division_or_reduction(monkeypatch) -> None:
    """Only calls named as a division or a reduction are offered to `_triton_candidates` (a kernel's
    loads, wheres and fulls are most of its calls): offering every call finds the same facts on
    every fixture kernel."""
    kept = 0
    for where, name, source, _, first_line, indent, params in _kernels(decorated=True):
        found = kernels.parse_triton(name, source, "w.cpp", first_line, indent, params)
        with monkeypatch.context() as m:
            m.setattr(kernels, "_CANDIDATE_CALLS", _Every())
            every = kernels.parse_triton(name, source, "w.cpp", first_line, indent, params)
        assert (found.divisions, found.reductions) == (every.divisions, every.reductions), where
        kept += bool(found.reductions) + sum(d.integer for d in found.divisions)
    assert kept >= 20, kept  # reductions and integer (call) divisions among them


_HEAD = "\n\ndef k(in_ptr0, out_ptr0, ks0, xnumel, XBLOCK : tl.constexpr):\n"
_BODY = ("    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]\n"
         "    tmp0 = tl.load(in_ptr0 + (xindex % ks0), xmask)\n")


@pytest.mark.parametrize("body", [
    # blocks in the walk's order: divisions, stores and assertions inside loops and branches
    _BODY + "    for r0_offset in range(0, ks0, 4):\n        tmp1 = tmp0 / ks0\n        tl.store(out_ptr0 + (r0_offset), tmp1 // ks0)\n"
            "        if tmp1:\n            tmp2 = tmp0 % ks0\n        else:\n            tmp2 = tmp1 / ks0\n"
            "            tl.device_assert(tmp2 < ks0, \"index out of bounds: 0 <= tmp2 < ks0\")\n    tmp3 = tmp2 / ks0\n",
    # a statement over several lines, a comment and a blank line inside and between
    _BODY + "    tmp1, tmp2, tmp3 = triton_helpers.welford_reduce(\n        tmp0, tmp0 / ks0,  # c\n\n"
            "  tmp0 // ks0, 1\n    )\n\n  # odd comment\n    tl.store(out_ptr0 + (xindex), tmp1 / ks0, xmask)\n",
    # one-line compound statements and nested blocks
    _BODY + "    if tmp0: tmp1 = tmp0 / ks0\n    for i in range(ks0):\n        for j in range(i):\n"
            "            tmp1 = tmp1 / (ks0 + j)\n",
    # brackets inside strings: balanced counts, parsed alone
    _BODY + "    tl.device_assert(tmp0 < ks0, \"index out of bounds: 0 <= tmp0 < ks0 ()\")\n    tmp1 = tmp0 / ks0\n",
])
def test_shapes_read_line_by_line(body: str) -> None:
    source = _HEAD + body
    whole = kernels.parse_triton("k", source, "w.cpp", 10, 4)
    lines = tritonlines.walk("k", source, "w.cpp", 10, 4, whole.param_types)
    assert lines is not None
    assert lines.divisions or lines.assertions or lines.stores
    _same(lines, whole, body)


@pytest.mark.parametrize("body", [
    _BODY + "    tmp1 = 1; tmp2 = 2\n",                                   # two statements on a line
    _BODY + "    tmp1 = tmp0 + \\\n        ks0\n",                       # a backslash continuation
    _BODY + "    tmp1 = '''(\n    tmp2 = ks0\n    '''\n",                # a string over lines
    _BODY + "    if tmp0:\n        tmp1 = 1\n    elif ks0:\n        tmp1 = 2\n",
    _BODY + "    while tmp0:\n        tmp1 = 1\n",
    _BODY + "    for i in range(3):\n        tmp1 = 1\n    else:\n        tmp1 = 2\n",
    _BODY + "    def inner():\n        return 1\n",
    _BODY + "\ttmp1 = 1\n",                                                # a tab
    _BODY + "      tmp1 = 1\n",                                           # an unexpected indent
    _BODY + "    if tmp0:\n        tmp1 = 1\n      tmp2 = 1\n",           # a dedent to no level
    _BODY + "    if tmp0:\n    tmp1 = 1\n",                               # a block without a body
    _BODY + "x = 1\n",                                                    # module code after the def
    _BODY + "    tmp1 = (tmp0 +\n",                                       # unbalanced to the end
    _BODY + "    tmp1 = tmp0\r    tmp2 = 1\n",                            # a carriage return
    _BODY + "    tmp1 = tmp0\x0c\n",                                      # a form feed
    _BODY + "    tmp1 = tmp0 + )\n",                                      # not Python
    _BODY + "    tmp1 = '(' + tmp0\n    tmp2 = 1\n",                     # a bracket in a string
    _BODY + "".join(f"{'    ' * (i + 1)}if tmp0:\n" for i in range(60)) + "    " * 61 + "tmp1 = 1\n",
    _BODY + "    tmp1 = (tmp0 +\n" + "        1 +\n" * 60 + "        2)\n",    # too long to join
])
def test_other_shapes_are_parsed_whole(body: str) -> None:
    source = _HEAD + body
    assert tritonlines.walk("k", source, "w.cpp", 10, 4, {}) is None
    # and the fast path's walk then equals the whole parse
    walked = triage.walk_triton("k", "@triton.jit" + source, "w.cpp", 10, 4, ())
    assert walked.segments is None


def test_segments_are_the_values_text() -> None:
    source = _HEAD + _BODY + "    tmp1 = triton_helpers.maximum(\n        tmp0, ks0)\n    tl.store(out_ptr0 + (xindex), tmp1 / 2, xmask)\n"
    facts = tritonlines.walk("k", source, "w.cpp", 10, 4, {})
    texts = {facts.segments[id(e)] for v in facts.defs.values() for _, e in v}
    assert "tl.load(in_ptr0 + (xindex % ks0), xmask)" in texts
    assert "(triton_helpers.maximum(\n        tmp0, ks0))" in texts
    assert [facts.segments[id(s.value)] for s in facts.stores] == ["tmp1 / 2"]


def test_a_comments_indent_is_counted_as_line_by_line() -> None:
    import random

    rng = random.Random(1)
    alphabet = [" ", " ", " ", "\t", "a", "\n", "\r", "\x1c", "\u2028", "\xa0"]
    for _ in range(20_000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        quoted = "/*\n" + body + "\n*/"
        got = tritonsrc.triton_comment(quoted, 0)
        expected_indent = min((len(line) - len(line.lstrip(" ")) for line in ("  " + quoted[2:-2]).split("\n")
                               if line.strip()), default=0)
        assert got[2] == expected_indent, repr(body)
    plain = "    async_compile.triton('k', '''\n    def k():\n        pass\n    ''', device_str='cuda')\n"
    assert tritonsrc.triton_comment("/*\n" + plain + "*/", 10)[:3] == ("\ndef k():\n    pass\n", 12, 4)


def test_a_comment_is_dedented_as_by_the_regular_expression() -> None:
    import random
    import re

    from analyzer.parse.tritonsrc import _dedented, _indent

    def expected(body: str) -> tuple[int, str]:
        indent = _indent(body)
        return indent, re.sub(r"^(?:[^\n]{%d}| *)" % indent, "", body, flags=re.M) if indent else body

    rng = random.Random(2)
    alphabet = [" ", " ", " ", " ", "    ", "\t", "a", "\n", "\n", "\r", "\xa0"]
    fast = 0
    for _ in range(20_000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert _dedented(body) == expected(body), repr(body)
        lines = body.split("\n")
        first = next((line for line in lines if line.strip(" \t\r\xa0")), "")
        pad = " " * (len(first) - len(first.lstrip(" ")))
        fast += bool(pad) and all(line.startswith(pad) or not line.strip(" ") for line in lines)
    assert fast > 500  # the line-by-line branch ran
