"""Kernel fact extraction on real snippets (quoted from the packages in ../shared/pt2 and
fixtures/), plus the value-range engine."""

from __future__ import annotations

import ast
import textwrap

import pytest

from analyzer.expr import intervals, values
from analyzer.parse import cppkernel, kernels, stores, ts

# From gather_dyn.cuda.pt2 (torch 2.11), the kernel source embedded in call_triton_poi_fused_index_mul_0.
GATHER_TRITON = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton_heuristics.pointwise(
        size_hints={'y': 4, 'x': 8}, tile_hint=TileHint.DEFAULT,
        filename=__file__,
        triton_meta={'signature': {'in_ptr0': '*i64', 'in_ptr1': '*fp32', 'out_ptr0': '*fp32', 'ks0': 'i64', 'ynumel': 'i32', 'xnumel': 'i32', 'YBLOCK': 'constexpr', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}},
        min_elem_per_thread=0
    )
    @triton.jit
    def triton_poi_fused_index_mul_0(in_ptr0, in_ptr1, out_ptr0, ks0, ynumel, xnumel, YBLOCK : tl.constexpr, XBLOCK : tl.constexpr):
        xnumel = 8
        yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
        yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
        ymask = yindex < ynumel
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
        xmask = xindex < xnumel
        y0 = yindex
        x1 = xindex
        tmp0 = tl.load(in_ptr0 + (y0), ymask, eviction_policy='evict_last')
        tmp1 = ks0
        tmp2 = tmp0 + tmp1
        tmp3 = tmp0 < 0
        tmp4 = tl.where(tmp3, tmp2, tmp0)
        tl.device_assert(((0 <= tmp4) & (tmp4 < ks0)) | ~(ymask), "index out of bounds: 0 <= tmp4 < ks0")
        tmp6 = tl.load(in_ptr1 + (x1 + 8*tmp4), xmask & ymask)
        tmp7 = tl.full([1, 1], 2.0, tl.float32)
        tmp8 = tmp6 * tmp7
        tl.store(out_ptr0 + (x1 + 8*y0), tmp8, xmask & ymask)
''')

# A positional embedding indexed by arange(seq): the one-sided form named in ../shared/pt2/README.md.
POS_TRITON = textwrap.dedent('''
    @triton.jit
    def triton_poi_fused_add_arange_embedding_0(in_ptr0, in_ptr1, out_ptr0, ks0, ynumel, xnumel, YBLOCK : tl.constexpr, XBLOCK : tl.constexpr):
        xnumel = 16
        yoffset = tl.program_id(1) * YBLOCK
        yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
        ymask = yindex < ynumel
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
        xmask = xindex < xnumel
        y0 = (yindex % ks0)
        x2 = xindex
        tl.device_assert((y0 < 512) | ~(ymask), "index out of bounds: y0 < 512")
        tmp1 = tl.load(in_ptr1 + (x2 + 16*y0), xmask & ymask)
''')

# From empty_reduce.cuda.stripped.pt2: a max reduction and a mean (division by ks0).
REDUCE_TRITON = textwrap.dedent('''
    @triton.jit
    def triton_red_fused_add_amax_mean_0(in_out_ptr0, in_ptr0, ks0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
        xnumel = 5
        rnumel = r0_numel
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
        xmask = xindex < xnumel
        r0_base = tl.arange(0, R0_BLOCK)[None, :]
        x0 = xindex
        _tmp2 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
        _tmp4 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
        for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
            r0_index = r0_offset + r0_base
            r0_mask = r0_index < r0_numel
            r0_1 = r0_index
            tmp0 = tl.load(in_ptr0 + (x0 + 5*r0_1), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
            tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
            tmp3 = triton_helpers.maximum(_tmp2, tmp1)
            _tmp2 = tl.where(r0_mask & xmask, tmp3, _tmp2)
            tmp5 = _tmp4 + tmp1
            _tmp4 = tl.where(r0_mask & xmask, tmp5, _tmp4)
        tmp2 = triton_helpers.max2(_tmp2, 1)[:, None]
        tmp4 = tl.sum(_tmp4, 1)[:, None]
        tmp6 = ks0
        tmp7 = tmp6.to(tl.float32)
        tmp8 = (tmp4 / tmp7)
        tmp9 = tmp2 + tmp8
        tl.store(in_out_ptr0 + (x0), tmp9, xmask)
''')

# From gather_dyn.cpu.stripped.pt2's kernel.cpp (torch 2.11).
GATHER_CPP = b'''
extern "C"  void  cpp_fused_index_mul_0(const int64_t* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0,
                       const int64_t ks0,
                       const int64_t ks1)
{
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(8L); x1+=static_cast<int64_t>(16L))
            {
                {
                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(8L)))
                    {
                        auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
                        auto tmp1 = ks1;
                        auto tmp2 = c10::convert<int64_t>(tmp1);
                        auto tmp3 = int64_t(tmp0 + tmp2);
                        auto tmp4 = tmp0 < 0;
                        auto tmp5 = tmp4 ? tmp3 : tmp0;
                        auto tmp6 = tmp5;
                        auto tmp7 = c10::convert<int64_t>(tmp6);
                        AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < ks1), "index out of bounds: 0 <= tmp7 < ks1");
                        auto tmp9 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 8L*tmp5), static_cast<int64_t>(8L));
                    }
                }
            }
        }
    }
}
'''

# From a torch 2.13 CPU pos-embedding package: a one-sided check over the loop variable.
POS_CPP = b'''
extern "C"  void  cpp_fused_add_arange_embedding_0(const float* in_ptr0, const float* in_ptr1, float* out_ptr0, const int64_t ks0)
{
    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
    {
        for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(ks0); x1+=static_cast<int64_t>(1L))
        {
            auto tmp1 = x1;
            auto tmp2 = c10::convert<int64_t>(tmp1);
            AOTI_TORCH_CHECK(tmp2 < 512L, "index out of bounds: tmp2 < 512L");
        }
    }
}
'''

# From index_select_2d.cpu.stripped.pt2: the vectorized form with VecMask(...).all_masked().
VEC_CPP = b'''
extern "C"  void  cpp_fused_add_index_select_0(const int64_t* in_ptr0, const float* in_ptr1, float* out_ptr0, const int64_t ks0, const int64_t ks1, const int64_t ks2)
{
    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(ks1); x1+=static_cast<int64_t>(16L))
    {
        auto tmp0 = at::vec::VectorizedN<int64_t,2>::loadu(in_ptr0 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
        auto tmp1 = ks2;
        auto tmp2 = c10::convert<int64_t>(tmp1);
        auto tmp3 = at::vec::VectorizedN<int64_t,2>(tmp2);
        auto tmp4 = tmp0 + tmp3;
        auto tmp5 = static_cast<int64_t>(0);
        auto tmp6 = at::vec::VectorizedN<int64_t,2>(tmp5);
        auto tmp7 = at::vec::VecMask<int64_t,2>(tmp0 < tmp6);
        auto tmp8 = decltype(tmp4)::blendv(tmp0, tmp4, tmp7.template cast<int64_t,2>());
        auto tmp9 =
        [&]
        {
            __at_align__ std::array<int64_t, 16> tmpbuf;
            tmp8.store(tmpbuf.data(), static_cast<int64_t>(16));
            return tmpbuf;
        }
        ()
        ;
        auto tmp10 =
        [&]
        {
            __at_align__ std::array<int64_t, 16> tmpbuf;
            for (long x1_inner = 0; x1_inner < static_cast<int64_t>(16); x1_inner++)
            {
                tmpbuf[x1_inner] = static_cast<int64_t>(tmp9[x1_inner]);
            }
            return at::vec::VectorizedN<int64_t,2>::loadu(tmpbuf.data(), static_cast<int64_t>(16));
        }
        ()
        ;
        AOTI_TORCH_CHECK((at::vec::VecMask<int64_t,2>((at::vec::VectorizedN<int64_t,2>(0) <= tmp10) & (tmp10 < at::vec::VectorizedN<int64_t,2>(ks2)))).all_masked(), "index out of bounds: 0 <= tmp10 < ks2");
    }
}
'''


def _cpp(source: bytes):
    tree, _ = ts.parse(source)
    (facts,) = cppkernel.parse_cpp(tree, "k.kernel.cpp")
    return facts


@pytest.mark.parametrize("message,expected", [
    ("index out of bounds: 0 <= tmp4 < ks0", (0, "tmp4", "ks0")),
    ("index out of bounds: 0 <= tmp7 < 100L", (0, "tmp7", "100L")),
    ("index out of bounds: y0 < 512", (None, "y0", "512")),
    ("index out of bounds: tmp11 < 512L", (None, "tmp11", "512L")),
    ("index out of bounds: 0 <= tmp3 < ks0*ks1", (0, "tmp3", "ks0*ks1")),
    # Kernels tiled over two axes (torch 2.11 CUDA) check the index broadcast to the tile.
    ("index out of bounds: 0 <= tl.broadcast_to(tmp15, [YBLOCK, XBLOCK]) < ks1", (0, "tmp15", "ks1")),
    ("index out of bounds: tl.broadcast_to(x3, [YBLOCK, XBLOCK]) < 64", (None, "x3", "64")),
    ("index out of bounds: tl.broadcast_to(tmp1, tmp2) < 64", (None, None, "")),
    ("something else", (None, None, "")),
    # An index proved non-negative, checked one-sided and inline (torch 2.11 CUDA): Triton's abs.
    ("index out of bounds: tl_math.abs(r0_3 + ((-1)*x0)) < 64", (None, "abs(r0_3 + ((-1)*x0))", "64")),
    # A clamp printed as products with comparisons: the message's own `<` is the last at depth 0.
    ("index out of bounds: ((y0) * ((y0) <= ((-1) + ks1)) + ((-1) + ks1) * (((-1) + ks1) < (y0))) < ks1",
     (None, "((y0) * ((y0) <= ((-1) + ks1)) + ((-1) + ks1) * (((-1) + ks1) < (y0)))", "ks1")),
    ("index out of bounds: 0 <= (a < b) < ks0", (0, "(a < b)", "ks0")),
    ("index out of bounds: (a < b", (None, None, "")),
    # A C++ cast in the bound is not a comparison in the index.
    ("index out of bounds: 0 <= tmp10 < static_cast<int64_t>(ks3)", (0, "tmp10", "static_cast<int64_t>(ks3)")),
])
def test_parse_message(message, expected):
    assert kernels.parse_message(message) == expected


@pytest.mark.parametrize("index,expected", [
    ("((y0) * ((y0) <= ((-1) + ks1)) + ((-1) + ks1) * (((-1) + ks1) < (y0)))", "min(y0, -1 + ks1)"),
    ("(a * (a >= b) + b * (b > a))", "max(a, b)"),
    ("(a * (a <= b) + b * (b <= a))", "a * (a <= b) + b * (b <= a)"),   # both `<=`: not one clamp
    ("(a * (a <= b) + c * (c < a))", "a * (a <= b) + c * (c < a)"),
])
def test_clamps_written_with_comparisons(index, expected):
    import ast

    assert ast.unparse(kernels.index_node(index)) == expected


def test_bound_to_py_drops_long_suffix():
    assert kernels.bound_to_py("100L") == "100"
    assert kernels.bound_to_py("ks0*ks1") == "ks0 * ks1"
    assert kernels.bound_to_py("libdevice.trunc(tl.full([], 0.12, tl.float64)*ks1.to(tl.float64)).to(tl.int32)") == "trunc(0.12 * ks1)"
    assert kernels.bound_to_py("static_cast<int64_t>(std::trunc(0.12*static_cast<double>(ks3)))") == "trunc(0.12 * ks3)"
    assert kernels.bound_to_py("((") is None


def test_triton_gather_assertion_and_sources():
    facts = kernels.parse_triton("triton_poi_fused_index_mul_0", GATHER_TRITON, "w.wrapper.cpp", 100, 4)
    assert facts.params[:6] == ("in_ptr0", "in_ptr1", "out_ptr0", "ks0", "ynumel", "xnumel")
    assert facts.param_types["in_ptr0"] == "*i64" and facts.param_types["ks0"] == "i64"
    (a,) = facts.assertions
    assert (a.message, a.index_var, a.lower, a.bound, a.bound_py) == (
        "index out of bounds: 0 <= tmp4 < ks0", "tmp4", 0, "ks0", "ks0")
    # Position maps back into the wrapper: source line L is wrapper line first_line + L - 1.
    assert a.location.line == 100 + GATHER_TRITON.splitlines().index(
        next(l for l in GATHER_TRITON.splitlines() if "device_assert" in l))
    assert a.location.column == 4 + 4 + 1
    engine = values.Values(facts)
    ptrs, sizes = engine.sources(ast.Name("tmp4"), a.line)
    assert ptrs == {"in_ptr0"}          # the index is loaded data (input values), not a range
    assert engine.upper(ast.Name("tmp4"), a.line) is None


def test_triton_one_sided_index_ranges_over_the_sequence():
    facts = kernels.parse_triton("k", POS_TRITON, "w.wrapper.cpp", 1, 0)
    (a,) = facts.assertions
    assert (a.lower, a.index_var, a.bound_py) == (None, "y0", "512")
    upper = values.Values(facts).upper(ast.Name("y0"), a.line)
    # y0 = yindex % ks0 -> at most ks0 - 1.
    assert intervals.evaluate_interval(upper, {"ks0": (2, 513)}) == (1, 512)


def test_triton_reduction_and_division():
    facts = kernels.parse_triton("k", REDUCE_TRITON, "w.wrapper.cpp", 1, 0)
    assert [(r.op, r.extent_expr) for r in facts.reductions] == [("max", "r0_numel")]  # tl.sum is fine
    assert [(d.divisor, d.divisor_expr) for d in facts.divisions] == [("tmp7", "ks0")]


def test_triton_syntax_error_is_a_problem_not_a_crash():
    facts = kernels.parse_triton("k", "def broken(:\n", "w.wrapper.cpp", 1, 0)
    assert facts.problem and "SyntaxError" in facts.problem
    deep = "x = " + "(" * 5000 + ")" * 5000
    assert kernels.parse_triton("k", deep, "w", 1, 0).problem


def test_cpp_gather_kernel():
    facts = _cpp(GATHER_CPP)
    assert facts.name == "cpp_fused_index_mul_0"
    assert facts.params == ("in_ptr0", "in_ptr1", "out_ptr0", "ks0", "ks1")
    (a,) = facts.assertions
    assert (a.message, a.index_var, a.bound_py) == ("index out of bounds: 0 <= tmp7 < ks1", "tmp7", "ks1")
    engine = values.Values(facts)
    assert engine.sources(ast.Name("tmp7"), a.line)[0] == {"in_ptr0"}
    assert {var: [e for _, _, e in loops] for var, loops in facts.extents.items()} == {"x0": ["ks0"], "x1": ["8"]}


def test_cpp_one_sided_loop_variable():
    facts = _cpp(POS_CPP)
    (a,) = facts.assertions
    upper = values.Values(facts).upper(ast.Name(a.index_var), a.line)
    assert intervals.simplify(f"({upper}) + 1") == "ks0"


def test_cpp_vectorized_gather_follows_lambdas_and_blendv():
    facts = _cpp(VEC_CPP)
    (a,) = facts.assertions
    assert a.message == "index out of bounds: 0 <= tmp10 < ks2"
    ptrs, _ = values.Values(facts).sources(ast.Name("tmp10"), a.line)
    assert ptrs == {"in_ptr0"}


def test_cpp_to_py_rewrites():
    tree, _ = ts.parse(b"void f() { auto a = c10::div_floor_integer(static_cast<int64_t>(ks1), static_cast<int64_t>(16L)); "
                       b"auto b = tmp4 ? tmp3 : tmp0; auto c = in_ptr0[static_cast<int64_t>(x0)]; }")
    got = {ts.text(m["name"]): ts.cpp_to_py(m["value"]) for m in ts.matches("declarations", tree.root_node)}
    assert got == {"a": "floordiv(ks1, 16)", "b": "(tmp3 if tmp4 else tmp0)", "c": "load(in_ptr0, x0)"}


def test_parse_can_be_stopped_between_chunks():
    source = b"int f() { return 1; }\n" * 20_000  # ~440 KB: many progress polls
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) > 1

    tree, stopped = ts.parse(source, should_stop=should_stop)
    assert stopped and tree is None and len(calls) == 2  # the parse was cancelled at the second poll
    tree, stopped = ts.parse(source, should_stop=lambda: False)
    assert not stopped and tree.root_node.end_byte == len(source)
    assert ts.text(tree.root_node.children[-1]) == "int f() { return 1; }"  # text read back after a fed parse
    tree, stopped = ts.parse(source)
    assert not stopped and tree.root_node.end_byte == len(source)


def test_cpp_calls_named_like_python_keywords():
    # From a one_hot CPU kernel: `at::vec::VecMask<float,1>::from(0)`.
    tree, _ = ts.parse(b"void f() { auto acc = at::vec::VecMask<float,1>::from(0); }")
    (m,) = list(ts.matches("declarations", tree.root_node))
    text = ts.cpp_to_py(m["value"])
    assert text == "from_(0)"
    ast.parse(text, mode="eval")


# From a torch 2.13 CPU package (`torch.arange(cnt.item())` into a 64-row table): two successive
# loops over `x1` with different extents; the check belongs to the first one.
REUSED_LOOP_VAR_CPP = b'''
extern "C"  void  cpp_fused_add_arange_embedding_sum_0(const float* in_ptr0, float* out_ptr0, const int64_t ks0, const int64_t ks1)
{
    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(ks0); x1+=static_cast<int64_t>(1L))
    {
        auto tmp0 = x1;
        auto tmp1 = c10::convert<int64_t>(tmp0);
        AOTI_TORCH_CHECK(tmp1 < 64L, "index out of bounds: tmp1 < 64L");
    }
    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(ks1); x1+=static_cast<int64_t>(1L))
    {
        auto tmp3 = x1;
    }
}
'''


def test_reused_loop_variable_takes_its_enclosing_loop():
    facts = _cpp(REUSED_LOOP_VAR_CPP)
    (a,) = facts.assertions
    upper = values.Values(facts).upper(ast.Name(a.index_var), a.line)
    assert intervals.simplify(f"({upper}) + 1") == "ks0"


def test_index_message_grammar_is_linear_on_a_hostile_message():
    # A package is hostile input: a lazy `bound.+?\s*$` took 25 s on 32 KB of interior spaces.
    import time

    message = "index out of bounds: 0 <= tmp4 < ks0" + " " * 200_000 + "x"
    start = time.perf_counter()
    assert kernels.parse_message(message) == (0, "tmp4", "ks0" + " " * 200_000 + "x")
    assert kernels.parse_message("index out of bounds: tmp2 < 512L \n") == (None, "tmp2", "512L")
    assert time.perf_counter() - start < 5.0


# The vectorized body and scalar tail of `torch.where(ids == 0, arange(seq), 0)` (torch 2.13 CPU).
ARANGE_CPP = b"""
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  cpp_fused_arange_eq_where_0(const int64_t* in_ptr0, int64_t* out_ptr0, const int64_t ks0)
{
    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(ks0); x1+=static_cast<int64_t>(16L))
    {
        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L*(c10::div_floor_integer(static_cast<int64_t>(ks0), static_cast<int64_t>(16L))))))
        {
            auto tmp0 = at::vec::VectorizedN<int64_t,2>::loadu(in_ptr0 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
            auto tmp1 = static_cast<int64_t>(0);
            auto tmp2 = at::vec::VectorizedN<int64_t,2>(tmp1);
            auto tmp3 = at::vec::VecMask<int64_t,2>(tmp0 == tmp2);
            auto tmp4 = x1;
            auto tmp5 = c10::convert<int64_t>(tmp4);
            auto tmp6 = at::vec::VectorizedN<int64_t,2>::arange(tmp5, 1);
            auto tmp7 = decltype(tmp6)::blendv(tmp2, tmp6, tmp3.template cast<int64_t,2>());
            tmp7.store(out_ptr0 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
            auto tmp8 = at::vec::VectorizedN<int64_t,2>::arange(tmp5 * 2, 1);
            auto tmp9 = at::vec::VectorizedN<int64_t,2>::arange(tmp5, 2);
        }
    }
}
"""


def test_cpp_vectorized_arange_of_the_loop_variable_stays_inside_the_loop():
    facts = _cpp(ARANGE_CPP)
    engine = values.Values(facts)
    (store,) = facts.stores
    assert intervals.simplify(engine.upper(store.value, store.pos + 1)) == "max(ks0 - 1, 0)"
    assert intervals.simplify(engine.lower(store.value, store.pos + 1)) == "0"
    end = len(ARANGE_CPP)
    # Lanes of any other start or step are not positions of the loop: no maximum.
    assert engine.upper(ast.Name("tmp8"), end) is None
    assert engine.upper(ast.Name("tmp9"), end) is None
    # Triton's tl.arange(0, XBLOCK) starts at a constant: nothing said alone.
    assert engine.upper(ast.parse("tl.arange(0, 16)", mode="eval").body, end) is None


def test_running_max_and_min_keep_their_input_range():
    from analyzer.link.buffers import EXTERN_TRANSFERS

    cummax = EXTERN_TRANSFERS["cummax"]
    shapes = (("2", "s27"), None, None, None)
    args = ("buf0", "1", "buf2", "buf3")
    assert cummax(args, shapes, lambda i: ("0", "s27 - 1"), 2) == ("0", "s27 - 1")   # values
    assert cummax(args, shapes, lambda i: ("0", "s27 - 1"), 3) == ("0", "s27 - 1")   # indices along dim 1
    assert cummax(args, shapes, lambda i: None, 2) is None                            # input range unknown
    assert cummax(args, shapes, lambda i: ("0", "1"), 0) is None                      # not an output
    assert EXTERN_TRANSFERS["cummin"](("buf0", "-1", "buf2", "buf3"), (("4", "7"),), lambda i: None, 3) == ("0", "6")


def test_a_sort_keeps_its_input_range_and_indexes_its_dim():
    """`sort_stable(x, &stable, dim, descending, &values, &indices)` and `sort(x, dim, descending,
    &values, &indices)`: the values output is x's values (topk's indices sorted back to their order
    stay in [0, seq - 1]), the indices output [0, n - 1] along dim."""
    from analyzer.link.buffers import EXTERN_TRANSFERS

    shapes = (("2", "s27"),)
    stable, plain = EXTERN_TRANSFERS["sort_stable"], EXTERN_TRANSFERS["sort"]
    args = ("buf5", "&var_0", "1L", "0", "&buf7_handle", "&buf8_handle")
    assert stable(args, shapes, lambda i: ("0", "s27 - 1"), 4) == ("0", "s27 - 1")
    assert stable(args, shapes, lambda i: None, 4) is None
    assert stable(args, shapes, lambda i: None, 5) == ("0", "s27 - 1")
    args = ("buf5", "-1", "1", "&buf7_handle", "&buf8_handle")
    assert plain(args, shapes, lambda i: ("0", "9"), 3) == ("0", "9")
    assert plain(args, shapes, lambda i: None, 4) == ("0", "s27 - 1")
    assert plain(args, shapes, lambda i: None, 1) is None


def test_min_and_max_of_agreeing_ends_fold():
    assert intervals.simplify("s27 - min(0, 0)") == "s27"
    assert intervals.simplify("max(s27 - 1, s27 - 1)") == "s27 - 1"
    assert intervals.simplify("max(3, 5) + min(3, 5)") == "8"
    assert intervals.simplify("max(s0, 1)") == "max(s0, 1)"


# packed_pos on CUDA (torch 2.11): cummax(where(ids == 0, arange, 0)) as a Triton scan of (value,
# index) pairs whose helper selects, and the position table lookup with its negative-index wrap.
CUMMAX_TRITON = textwrap.dedent('''
    @triton.jit
    def _triton_helper_fn_gt_eq_gt_logical_and_logical_or_where_where0(arg0_0, arg0_1, arg1_0, arg1_1):
        tmp0 = arg0_0 > arg1_0
        tmp1 = arg0_0 == arg1_0
        tmp2 = arg0_1 > arg1_1
        tmp3 = tmp1 & tmp2
        tmp4 = tmp0 | tmp3
        tmp5 = tl.where(tmp4, arg0_0, arg1_0)
        tmp6 = tl.where(tmp4, arg0_1, arg1_1)
        return tmp5, tmp6

    @triton.jit
    def triton_per_fused_arange_cummax_eq_expand_where_zeros_like_0(in_ptr0, out_ptr0, ks0, xnumel, r0_numel, XBLOCK : tl.constexpr):
        xnumel = 2
        R0_BLOCK: tl.constexpr = 128
        rnumel = r0_numel
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
        xmask = xindex < xnumel
        r0_index = tl.arange(0, R0_BLOCK)[None, :]
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        x0 = xindex
        tmp0 = tl.load(in_ptr0 + (r0_1 + ks0*x0), r0_mask & xmask, other=0.0)
        tmp1 = tl.full([1, 1], 0, tl.int64)
        tmp2 = tmp0 == tmp1
        tmp3 = r0_1
        tmp4 = tl.where(tmp2, tmp3, tmp1)
        tmp5 = tmp4.to(tl.int64)
        tmp6 = tl.broadcast_to(tmp5, [XBLOCK, R0_BLOCK])
        tmp7 = tmp3.to(tl.int64)
        tmp8 = tl.broadcast_to(tmp7, [XBLOCK, R0_BLOCK])
        tmp9, tmp10, = tl.associative_scan((tmp6, tmp8,), 1, _triton_helper_fn_gt_eq_gt_logical_and_logical_or_where_where0)
        tl.store(out_ptr0 + (r0_1 + ks0*x0), tmp9, r0_mask & xmask)
''')

WRAP_TRITON = textwrap.dedent('''
    @triton.jit
    def triton_poi_fused_add_arange_embedding_expand_sub_1(in_ptr2, ks0, ynumel, YBLOCK : tl.constexpr):
        yoffset = tl.program_id(1) * YBLOCK
        yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
        ymask = yindex < ynumel
        y3 = yindex
        y0 = (yindex % ks0)
        tmp7 = tl.load(in_ptr2 + (y3), ymask, eviction_policy='evict_last')
        tmp8 = y0
        tmp9 = tmp8 - tmp7
        tmp10 = tl.full([1, 1], 64, tl.int32)
        tmp11 = tmp9 + tmp10
        tmp12 = tmp9 < 0
        tmp13 = tl.where(tmp12, tmp11, tmp9)
        tl.device_assert(((0 <= tmp13) & (tmp13 < 64)) | ~(ymask), "index out of bounds: 0 <= tmp13 < 64")
        tmp14 = tl.where(tmp12, tmp9 + ks0, tmp9)
''')


def test_triton_cummax_scan_keeps_the_scanned_range():
    facts = kernels.parse_triton("triton_per_fused_arange_cummax_eq_expand_where_zeros_like_0", CUMMAX_TRITON,
                                 "w.wrapper.cpp", 1, 0)
    assert set(facts.combines.values()) == {"select"}
    engine = values.Values(facts)
    (store,) = facts.stores
    assert intervals.simplify(engine.upper(store.value, store.pos + 1)) == "max(r0_numel - 1, 0)"
    assert intervals.simplify(engine.lower(store.value, store.pos + 1)) == "0"
    end = len(CUMMAX_TRITON.splitlines()) + 1
    assert intervals.simplify(engine.upper(ast.Name("tmp10"), end)) == "r0_numel - 1"   # the running index


def test_combine_helpers_that_add_select_or_neither():
    def op(source: str):
        return stores.combine_op(ast.parse(textwrap.dedent(source)).body[0])

    assert op("def f(arg0_0, arg1_0):\n    tmp0 = arg0_0 + arg1_0\n    return tmp0\n") == "add"
    assert op("def f(arg0_0, arg1_0):\n    return tl.where(arg0_0 > arg1_0, arg0_0, arg1_0)\n") == "select"
    # a result that mixes positions, or computes, is neither
    assert op("def f(arg0_0, arg0_1, arg1_0, arg1_1):\n    return tl.where(c, arg0_0, arg1_1), tl.where(c, arg0_1, arg1_0)\n") is None
    assert op("def f(arg0_0, arg1_0):\n    return tl.where(c, arg0_0 + 1, arg1_0)\n") is None
    assert op("def f(arg0_0, arg0_1, arg1_0):\n    return arg0_0\n") is None
    assert op("def f(arg0_0, arg1_0):\n    return tl.maximum(arg0_0, arg1_0), arg1_0\n") is None


def test_triton_negative_index_wrap_reaches_no_further_than_its_table():
    """`where(i < 0, i + 64, i)`: the wrapped side runs only for i <= -1, so it stays below 64; a
    difference of positions (y0 - a position loaded from a ranged buffer) wraps that way on CUDA."""
    facts = kernels.parse_triton("triton_poi_fused_add_arange_embedding_expand_sub_1", WRAP_TRITON,
                                 "w.wrapper.cpp", 1, 0)
    (a,) = facts.assertions
    engine = values.Values(facts, load_ranges={"in_ptr2": ("0", "ks0 - 1")})
    assert intervals.simplify(engine.upper(ast.Name("tmp13"), a.line)) == "max(63, ks0 - 1)"
    end = len(WRAP_TRITON.splitlines()) + 1
    # wrapped by a size: the wrapped side runs for i <= -1 too, so it stays below that size
    assert intervals.simplify(engine.upper(ast.Name("tmp14"), end)) == "ks0 - 1"


BUCKETIZE_TRITON = textwrap.dedent('''
    @triton.jit
    def triton_poi_fused_bucketize_index_mul_0(in_ptr0, in_ptr1, in_ptr2, out_ptr1, ks0, xnumel, XBLOCK : tl.constexpr):
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[:]
        xmask = xindex < xnumel
        x0 = xindex
        tmp0 = tl.load(in_ptr0 + (x0), xmask)
        tmp1 = triton_helpers.bucketize_binary_search(tmp0, in_ptr1, ks0, ks0, 1, 0, tl.int64, False, None, None, None, )
        tmp2 = ks0
        tmp3 = tmp1 + tmp2
        tmp4 = tmp1 < 0
        tmp5 = tl.where(tmp4, tmp3, tmp1)
        tl.device_assert(((0 <= tmp5) & (tmp5 < ks0)) | ~(xmask), "index out of bounds: 0 <= tmp5 < ks0")
        tmp6 = triton_helpers.bucketize_binary_search(tmp0, in_ptr1, tl.int64, False, ks0, [XBLOCK])
        tmp7 = triton_helpers.bucketize_binary_search(tmp0, in_ptr1)
''')


def test_triton_bucketize_lies_in_the_boundaries_length():
    facts = kernels.parse_triton("triton_poi_fused_bucketize_index_mul_0", BUCKETIZE_TRITON, "w.wrapper.cpp", 1, 0)
    (a,) = facts.assertions
    engine = values.Values(facts)
    # loaded data, but bounded by the size whatever the values: data_upper says so and names the op
    assert engine.data_upper(ast.Name("tmp5"), a.line) == "ks0" and engine.bounding_ops == {"bucketize_Tensor"}
    assert engine.lower(ast.Name("tmp1"), a.line) == "0"
    end = len(BUCKETIZE_TRITON.splitlines()) + 1
    assert engine.upper(ast.Name("tmp6"), end) == "ks0"        # older torch: the size after dtype and `right`
    assert engine.upper(ast.Name("tmp7"), end) is None
    assert engine.data_upper(ast.Name("tmp0"), a.line) is None and engine.bounding_ops == set()


ARGMAX_TRITON = textwrap.dedent('''
    @triton.jit
    def triton_red_fused_argmax_0(in_ptr0, out_ptr0, ks0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
        rnumel = r0_numel
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
        xmask = xindex < xnumel
        r0_base = tl.arange(0, R0_BLOCK)[None, :]
        x0 = xindex
        _tmp2 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
        _tmp2_index = tl.full([XBLOCK, R0_BLOCK], 2147483647, tl.int32)
        for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
            r0_index = r0_offset + r0_base
            r0_mask = r0_index < r0_numel
            rindex = r0_index
            r0_1 = r0_index
            tmp0 = tl.load(in_ptr0 + (r0_1 + ks0*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
            tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
            _tmp2_next, _tmp2_index_next = triton_helpers.maximum_with_index(_tmp2, _tmp2_index, tmp1, rindex)
            _tmp2 = tl.where(r0_mask & xmask, _tmp2_next, _tmp2)
            _tmp2_index = tl.where(r0_mask & xmask, _tmp2_index_next, _tmp2_index)
        tmp2_val, tmp2_idx = triton_helpers.max_with_index(_tmp2, _tmp2_index, 1)
        tmp2 = tmp2_idx[:, None]
        tl.store(out_ptr0 + (x0), tmp2, xmask)
''')


def test_triton_argmax_index_lies_in_the_reduced_dim():
    facts = kernels.parse_triton("triton_red_fused_argmax_0", ARGMAX_TRITON, "w.wrapper.cpp", 1, 0)
    engine = values.Values(facts)
    (store,) = facts.stores
    assert intervals.simplify(engine.upper(store.value, store.pos + 1)) == "max(r0_numel - 1, 0)"
    assert engine.lower(store.value, store.pos + 1) == "0"
    assert engine.upper(ast.Name("tmp2_val"), store.pos + 1) is None     # the maximum's value: data


def test_a_masked_vector_load_is_its_pointer_under_its_mask():
    """From stranger15/rnnt_joint's pad kernel (torch 2.13 CPU): `mask.template loadu<T,N>(ptr + offset)` is a
    masked load of the pointer; the offset runs only where a lane is masked in, so it is left out."""
    tree, _ = ts.parse(b"void f() { auto tmp13 = tmp12.template cast<float,1>().template loadu<int64_t,2>("
                       b"in_ptr0 + static_cast<int64_t>((-2L) + x2 + ks1*x0)); auto tmp15 = tmp1.template "
                       b"loadu<float,1>(in_ptr1); auto tmp16 = tmp4.template cast<float,1>(); }")
    got = {ts.text(m["name"]): ts.cpp_to_py(m["value"]) for m in ts.matches("declarations", tree.root_node)}
    assert got == {"tmp13": "masked_load(in_ptr0, tmp12)", "tmp15": "masked_load(in_ptr1, tmp1)", "tmp16": "tmp4"}


@pytest.mark.parametrize(("defs", "read"), [
    # A left pad: lanes x2 - 2 + i >= 0, constants only: the lanes past a tail's count read too.
    ({"tmp12": "tmp10 & tmp5", "tmp10": "VecMask(arange(-2 + x2, 1) >= tmp4)", "tmp5": "VecMask(arange(-1 + x2, 1) >= 0)",
      "tmp4": "0"}, True),
    # A right pad: `x2 < ks1` keeps every lane inside the buffer.
    ({"tmp12": "tmp10 & tmp5", "tmp10": "VecMask(arange(x2, 1) < ks1)", "tmp5": "VecMask(arange(x2, 1) >= 0)"}, False),
    ({"tmp12": "unknown()"}, False),                                   # a mask not read
    ({f"tmp{i}": f"tmp{i + 1} & tmp{i + 1}" for i in range(12, 400)}, False),   # past the walk's limit
])
def test_a_masked_load_reads_its_buffer_where_its_mask_holds_past_the_tail(defs: dict, read: bool) -> None:
    from analyzer.link import storebounds
    from analyzer.core.findings import Location
    from analyzer.parse.kernels import KernelFacts

    facts = KernelFacts("cpp_fused_constant_pad_nd_embedding_1", "cpp", ("in_ptr0", "out_ptr0", "ks0", "ks1"),
                        Location("k.cpp", 1, 1))
    facts.defs = {name: [(10, ast.parse(text, mode="eval").body)] for name, text in defs.items()}
    node = ast.parse("masked_load(in_ptr0, tmp12)", mode="eval").body
    assert storebounds._masked_read(facts, node) == ("in_ptr0" if read else None)
    assert storebounds._masked_read(facts, ast.parse("load(in_ptr0, x0)", mode="eval").body) is None


# From stranger16/clamp_relpos (torch 2.13 CPU): a 64-row table indexed by |i - j| over two loops of ks1.
ABS_DISTANCE_CPP = b'''
extern "C" void cpp_fused_abs_embedding_1(const float* in_ptr2, float* out_ptr0, const int64_t ks1)
{
    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(ks1); x2+=static_cast<int64_t>(1L))
    {
        for(int64_t x3=static_cast<int64_t>(0L); x3<static_cast<int64_t>(ks1); x3+=static_cast<int64_t>(1L))
        {
            auto tmp0 = x3 + ((-1L)*x2);
            auto tmp5 = std::abs(x2 + ((-1L)*x3));
            auto tmp6 = c10::convert<int64_t>(tmp5);
            AOTI_TORCH_CHECK(tmp6 < 64L, "index out of bounds: tmp6 < 64L");
            auto tmp7 = tmp6 < 8L;
            auto tmp8 = tmp7 ? tmp6 : 12L;
            auto tmp9 = tmp7 ? tmp0 : 12L;
            out_ptr0[static_cast<int64_t>(x3 + ks1*x2)] = in_ptr2[static_cast<int64_t>(tmp6)] + tmp8 + tmp9;
        }
    }
}
'''


def test_a_distance_of_positions_and_its_absolute_value():
    """x3 - x2 over [0, ks1) lies in [-(ks1 - 1), ks1 - 1] (a negative constant factor swaps its operand's
    ends), |x2 - x3| in [0, ks1 - 1]: the 64-row table is past its end from ks1 = 65. The taken side of a
    `c ? x : y` whose test is `x < 8` stays below 8 (T5's exact buckets)."""
    facts = _cpp(ABS_DISTANCE_CPP)
    engine, end = values.Values(facts), 10**6   # every definition read after the kernel's last line
    ranges = {"ks1": (65, 65)}
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp6"), end), ranges) == (64, 64)
    assert intervals.evaluate_interval(engine.lower(ast.Name("tmp6"), end), ranges) == (0, 0)
    assert intervals.evaluate_interval(engine.lower(ast.Name("tmp0"), end), ranges) == (-64, -64)
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp8"), end), ranges) == (12, 12)   # max(7, 12)
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp9"), end), ranges) == (64, 64)   # not x < 8's x


def test_a_remainder_by_a_size_is_below_it_whatever_the_dividend():
    """stranger17/hash_slice: `remainder_integral(ids, m)` (ATen's remainder, the divisor's sign) of loaded ids
    lies in [0, m - 1]; `c10::div_mod` is the same. A divisor that may be negative says nothing."""
    facts = _cpp(b'''
extern "C" void cpp_fused_remainder_0(const int64_t* in_ptr0, float* out_ptr0, const int64_t ks0, const int64_t ks1)
{
    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))
    {
        auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
        auto tmp4 = remainder_integral(tmp0, ks1);
        auto tmp5 = c10::div_mod(tmp0, 7L);
        auto tmp6 = c10::div_mod(tmp0, tmp0);
        out_ptr0[static_cast<int64_t>(x0)] = tmp4 + tmp5 + tmp6;
    }
}
''')
    engine, end = values.Values(facts), 10**6
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp4"), end), {"ks1": (65, 65)}) == (64, 64)
    assert engine.lower(ast.Name("tmp4"), end) == "0" and engine.upper(ast.Name("tmp5"), end) == "(7) - 1"
    assert engine.upper(ast.Name("tmp6"), end) is None


def test_python_modulo_of_values_never_negative_keeps_the_remainder():
    """stranger18/autocorr: `(x1 + lag) % t` as Inductor's C++ writes Python's modulo, `r = mod(a, b)` then
    `(r != 0 & signbit(r) != signbit(b)) ? r + b : r`: with r and b never negative the signs never differ,
    so the index stays below t (not `r + b`'s 2t - 2). A dividend that may be negative keeps both sides."""
    facts = _cpp(b'''
extern "C" void cpp_fused_gather_0(const int64_t* in_ptr0, float* out_ptr0, const int64_t ks0, const int64_t ks1)
{
    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(ks0); x1+=static_cast<int64_t>(1L))
    {
        auto tmp1 = x1;
        auto tmp5 = c10::convert<int64_t>(ks1);
        auto tmp6 = mod(tmp1, tmp5);
        auto tmp7 = static_cast<int32_t>(0);
        auto tmp8 = tmp6 != tmp7;
        auto tmp9 = std::signbit(tmp6);
        auto tmp10 = std::signbit(tmp5);
        auto tmp11 = tmp9 != tmp10;
        auto tmp12 = tmp8 & tmp11;
        auto tmp13 = int64_t(tmp6 + tmp5);
        auto tmp14 = tmp12 ? tmp13 : tmp6;
        auto tmp20 = int64_t(tmp1 - 5L);
        auto tmp21 = std::signbit(tmp20);
        auto tmp22 = tmp21 != tmp10;
        auto tmp23 = tmp22 ? tmp13 : tmp6;
        out_ptr0[static_cast<int64_t>(x1)] = tmp14 + tmp23;
    }
}
''')
    engine, end = values.Values(facts), 10**6
    ranges = {"ks1": (40, 40)}
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp14"), end), ranges) == (39, 39)
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp23"), end), ranges) == (79, 79)


PYMOD_TRITON = '''
@triton.jit
def triton_poi_fused_embedding_remainder_0(in_ptr0, in_ptr1, out_ptr0, ks0, xnumel, XBLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = ks0
    tmp2 = (tmp0 % tmp1)
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tmp2 != tmp3
    tmp5 = (libdevice.signbit(tmp2) != 0) if (tmp2).dtype is tl.float32 else tmp2 < 0
    tmp6 = (libdevice.signbit(tmp1) != 0) if (tmp1).dtype is tl.float32 else tmp1 < 0
    tmp7 = tmp5 != tmp6
    tmp8 = tmp4 & tmp7
    tmp9 = tmp2 + tmp1
    tmp10 = tl.where(tmp8, tmp9, tmp2)
    tmp11 = tmp0 + tmp1
    tmp12 = tl.where(tmp8, tmp9, tmp11)
    tl.store(out_ptr0 + (x0), tmp10 + tmp12, xmask)
'''


def test_pythons_modulo_in_triton_stays_below_the_divisor():
    """hash_slice on CUDA: `ids % m` of ids of any sign, as Inductor's Triton writes Python's modulo
    (`where((r != 0) & (sign(r) != sign(b)), r + b, r)`, the sign test in its float/int form): [0, m - 1],
    not `r + b`'s 2m - 1. The same correction of something that is not the remainder keeps both sides."""
    facts = kernels.parse_triton("triton_poi_fused_embedding_remainder_0", PYMOD_TRITON, "w.wrapper.cpp", 1, 0)
    engine, end = values.Values(facts), 10**6
    ranges = {"ks0": (96, 96)}
    assert intervals.evaluate_interval(engine.upper(ast.Name("tmp10"), end), ranges) == (95, 95)
    assert engine.lower(ast.Name("tmp10"), end) == "0"
    assert engine.upper(ast.Name("tmp12"), end) is None   # tmp11 is no remainder: the loaded value's sum
