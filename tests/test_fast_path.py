"""The fast path (analyzer/parse/triage.py) gives the same facts as the full walk, on every fixture
package: Triton kernels with nothing to walk, and call_triton_* helpers read from the text.
The end-to-end identity (findings and linked models) is tests/test_many.py's
test_jobs_and_fast_path_give_identical_results_on_every_package."""

from __future__ import annotations

import ast
import dataclasses

import pytest

from analyzer.read import archive
from analyzer.parse import helpertext, kernels, triage, tritonsrc, ts, wrapper
from analyzer.core.findings import Location
from conftest import all_packages, every_package


def _wrappers():
    for path in all_packages():
        with archive.open_package(path) as pkg:
            for members in pkg.models:
                for member in members.wrappers[:1]:
                    yield path, member, pkg.read_bytes(member)


def test_fast_path_facts_equal_the_walk_on_every_kernel() -> None:
    """Kernel by kernel: where the scan answers, the walk finds nothing to check and the same
    name, parameters, signature and location; the scan answers for most kernels of a model."""
    light = total = given = undecorated = 0
    # Every committed package, so that the counts below hold on a bare clone (without ../shared).
    for path in every_package():
        with archive.open_package(path) as pkg:
            for members in pkg.models:
                for member in members.wrappers[:1]:
                    tree, _ = ts.parse(pkg.read_bytes(member))
                    for helper in wrapper.parse(tree, member, 500).helpers.values():
                        if helper.triton_source is None:
                            continue
                        name = helper.name[len("call_"):]
                        args = (name, helper.triton_source, member, helper.source_first_line, helper.source_indent)
                        walked = kernels.parse_triton(*args, helper.params)
                        scanned = triage.light_triton(*args)
                        total += 1
                        if scanned is None:
                            # Walked: without its decorator, it gives the same facts.
                            short = triage.without_decorator(name, helper.triton_source)
                            if short is not None:
                                shorter = kernels.parse_triton(name, short[0], *args[2:], helper.params)
                                shorter.param_types = short[1]
                                _assert_same_facts(shorter, walked, (path, name))
                                undecorated += 1
                            continue
                        light += 1
                        assert not (walked.assertions or walked.divisions or walked.reductions
                                    or walked.messages or walked.problem), (path, name)
                        for key in ("name", "kind", "params", "param_types", "location"):
                            assert getattr(scanned, key) == getattr(walked, key), (path, name, key)
                        # Given a constant, the kernel gets the walk's definitions (read-past-constant).
                        _assert_same_definitions(walked, args, (path, name))
                        given += 1
    assert total > 50 and light >= 5 and given >= 5 and undecorated >= 20


def _assert_same_facts(a: kernels.KernelFacts, b: kernels.KernelFacts, where) -> None:
    for field in dataclasses.fields(a):
        if field.name not in ("defs", "locate"):
            assert getattr(a, field.name) == getattr(b, field.name), (where, field.name)
    assert _definitions(a) == _definitions(b), where


def _definitions(facts: kernels.KernelFacts) -> list[tuple[str, int, str, Location]]:
    return [(name, line, ast.dump(expr), facts.locate(line))
            for name, found in facts.defs.items() for line, expr in found]


def _assert_same_definitions(walked: kernels.KernelFacts, args: tuple, where) -> None:
    """triage.with_definitions, line by line and by the parse of the whole function, equals the walk."""
    for line_by_line in (True, False):
        light = triage.light_triton(*args)
        saved = triage._line_definitions
        if not line_by_line:
            triage._line_definitions = lambda *_: None
        try:
            full = triage.with_definitions(light, args[0], args[1], args[3], args[4])
        finally:
            triage._line_definitions = saved
        assert full is not None, where
        assert _definitions(full) == _definitions(walked), (where, line_by_line)
        assert list(full.defs) == list(walked.defs), where
        assert dict(full.combines) == dict(walked.combines), where  # a scan's values read them


@pytest.mark.parametrize("body, line_by_line", [
    ("    xoffset = tl.program_id(0) * XBLOCK\n    x0 = (xindex % 16)  # c\n\n# odd comment\n"
     "    tmp0 = tl.load(in_ptr0 + (x0), xmask)\n    tmp0 = tmp0 + 1\n    tl.store(out_ptr0 + (x0), tmp0)\n", True),
    ("    x0 = xindex\n    for r0_offset in range(0, r0_numel, RBLOCK):\n        tmp0 = tl.load(in_ptr0 + (x0))\n"
     "        if x0:\n            tmp1 = tmp0\n    tmp2 = x0\n", False),
    ("    x0: tl.int32 = xindex\n    tmp0 = tl.load(in_ptr0 + (x0))\n", True),
    ("    R0_BLOCK: tl.constexpr = 128\n    x0: int = xindex\n    tmp0 = tl.load(in_ptr0 + (x0))\n", True),
    ("    x0: tl.int32\n    tmp0 = tl.load(in_ptr0 + (x0))\n", False),
    ("    x0: list[int] = xindex\n    tmp0 = tl.load(in_ptr0 + (x0))\n", False),
    ("    x0 = x1 = xindex\n    tmp0 = tl.load(in_ptr0 + (x0))\n", False),
    ("    x0 = xindex\n    x1 += 1\n", False),
    ("    x0 = xindex\n    pass\n", False),
    ("    x0 = xindex\n    x1 = (x0 := 3)\n", True),
])
def test_definitions_of_a_kernel_given_a_constant_equal_the_walk(body: str, line_by_line: bool) -> None:
    source = "@triton.jit\ndef k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n" + body
    args = ("k", source, "w.cpp", 10, 4)
    assert triage.light_triton(*args) is not None
    assert (triage._line_definitions(source[source.index("def "):], 1) is not None) == line_by_line
    _assert_same_definitions(kernels.parse_triton(*args), args, body)


@pytest.mark.parametrize("source, walked", [
    ("def k(in_ptr0, ks0, xnumel, XBLOCK : tl.constexpr):\n    x0 = xindex % 16\n", False),
    # Integer division of index arithmetic by a size: never for a lane that does not exist.
    ("def k(in_ptr0, ks0, xnumel, XBLOCK : tl.constexpr):\n    x0 = xindex % ks0\n", False),
    ("def k(in_ptr0, ks0, ks1):\n    x1 = ((xindex // 32) % ks0)\n    x3 = xindex // ks1\n"
     "    tmp0 = tl.load(in_ptr0 + (x1 + ks0*x3))\n", False),
    # ... of loaded data (directly, through names, on the same line) by a size: walked.
    ("def k(in_ptr0, ks0):\n    tmp0 = tl.load(in_ptr0 + x)\n    tmp1 = tmp0 + 1\n    tmp2 = tmp1 // ks0\n", True),
    ("def k(in_ptr0, ks0):\n    tmp2 = tl.load(in_ptr0 + x) % ks0\n", True),
    ("def k(in_ptr0, ks0):\n    a = ks0 + 1\n    tmp0 = tl.load(in_ptr0 + x)\n    tmp2 = tmp0 % a\n", True),
    ("def k(in_ptr0, ks0):\n    tmp0 = x.load(in_ptr0 + x)\n    tmp2 = tmp0 // ks0\n", True),
    ("def k(in_ptr0, ks0):\n    tmp2 = (xindex // 32) / ks0\n", True),
    ("def k(in_ptr0, ks0):\n    a = ks0 + 1\n    b = a * 2\n    c = tl.load(in_ptr0) / b\n", True),
    ("def k(in_ptr0, ks0):\n    a = tl.load(in_ptr0 + ks0)\n    c = 1.0 / a\n", False),
    ("def k(in_ptr0, ks0):\n    a = x.load(in_ptr0 + ks0)\n    c = 1.0 / a\n", True),
    ("def k(in_ptr0, ks0):\n    c = 1.0 / (2 +\n        ks0)\n", True),
    ("def k(in_ptr0, ks0):\n    c = 1.0 / tmp.to(tl.float32) ** ks0\n", True),
    ("def k(in_ptr0, ks0):\n    tl.device_assert(x < 3)\n", True),
    ("def k(in_ptr0, ks0):\n    r = triton_helpers.max2(x, 1)\n", True),
    ("def k(in_ptr0, ks0=3):\n    pass\n", True),
    # A scan: its combine helpers above the kernel are read by the walk for their operation only.
    ("def _triton_helper_fn_add0(a, b):\n    return a + b\n\n@triton.jit\ndef k(in_ptr0, out_ptr0, ks0):\n"
     "    tmp1, = tl.associative_scan((tmp0,), 1, _triton_helper_fn_add0)\n", False),
    ("\ndef _triton_helper_fn_add0(a, b):\n    return a + b\n\ndef k(in_ptr0, ks0):\n    x0 = xindex % ks0\n", False),
    ("def _triton_helper_fn_add0(a, b):\n    return a + b\n\ndef k(in_ptr0, ks0):\n    tl.device_assert(x < 3)\n", True),
    ("def _triton_helper_fn_add0(a, b):\n    return a / b\n\ndef k(in_ptr0, ks0):\n    c = 1.0 / ks0\n", True),
    ("def helper(a, b):\n    return a + b\n\ndef k(in_ptr0, ks0):\n    pass\n", True),
    ("def k(in_ptr0, ks0):\n    pass\n\ndef _triton_helper_fn_add0(a, b):\n    return a + b\n", True),
    ("def _triton_helper_fn_add0(a, b):\n    return a + b\n\ndef k(in_ptr0, ks0):\n    pass\n"
     "def _triton_helper_fn_add1(a, b):\n    return a + b\n", True),
])
def test_fast_path_scan_is_conservative(source: str, walked: bool) -> None:
    from analyzer.parse import triage

    assert (triage.light_triton("k", source, "w.cpp", 1, 4) is None) == walked


def test_helpers_read_from_the_text_equal_the_tree_on_every_package() -> None:
    """Every helper of every fixture is recognised; its name, parameters, location and Triton
    source equal the tree's; the rest of the wrapper gives the same facts from the reduced copy."""
    helpers = 0
    for path, member, data in _wrappers():
        full = wrapper.parse(ts.parse(data)[0], member, 500)
        reduced, texts = helpertext.split_helpers(data)
        assert reduced.count(b"\n") == data.count(b"\n")
        assert [t.name for t in texts] == list(full.helpers), path
        for text in texts:
            source = tritonsrc.triton_comment(text.comment, text.comment_row)
            assert wrapper.Helper(text.name, text.params, Location(member, text.line, 1), *source) \
                == full.helpers[text.name], (path, text.name)
        rest = wrapper.parse(ts.parse(reduced)[0], member, 500)
        assert not rest.helpers
        for field in dataclasses.fields(full):
            if field.name != "helpers":
                assert getattr(rest, field.name) == getattr(full, field.name), (path, field.name)
        helpers += len(texts)
    assert helpers > 40


HELPER = b"""template <typename in_ptr0_type_, typename kernels_type_>
static inline void call_triton_k_0(
    const in_ptr0_type_& in_ptr0,
    int64_t ks0,
    const std::optional<std::string>& cubin_dir_ = std::nullopt
){
    /*
    async_compile.triton('triton_k_0', '''
    def triton_k_0(in_ptr0, ks0):
        pass
    ''', device_str='cuda')
    */
    if (x == nullptr) {
        x = 1;
    }
BODY}
"""


@pytest.mark.parametrize("body, read", [
    (b"", True),
    (b"    // a comment\n", False),
    (b'    auto s = "{";\n', False),
    (b"    }\n    {\n", False),
    (b"#define X 1\n", False),
])
def test_helper_shapes_read_from_the_text(body: bytes, read: bool) -> None:
    data = b"int a;\n" + HELPER.replace(b"BODY", body) + b"int b;\n"
    reduced, texts = helpertext.split_helpers(data)
    assert bool(texts) == read
    if read:
        (text,) = texts
        assert text.name == "call_triton_k_0" and text.params == ("in_ptr0", "ks0", "cubin_dir_")
        assert text.line == 3 and text.comment_row == 7  # 1-based line 8
        assert reduced.startswith(b"int a;\n\n") and reduced.endswith(b"\nint b;\n")
    else:
        assert reduced == data
