"""The recall round (fixtures/recall): failures the exported program's guards and data-derived index
ranges explain. Each model was compiled for CPU here (torch 2.13) and probed through
`torch._inductor.aoti_load_package` against eager, with and without AOTI_RUNTIME_CHECK_INPUTS=1
(fixtures/recall/runtime.json); what aoti-lint says is pinned next to what the packages did."""

from __future__ import annotations

import json
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.read import exported
from analyzer.query import guards
from analyzer.core.findings import Severity
from analyzer.core.model import DimRef
from conftest import FIXTURES

HERE = FIXTURES / "recall"


@lru_cache(maxsize=None)
def _lint(name: str, with_ep: bool = True) -> tuple:
    options = api.Options(select=("ALL",), exported_program=str(HERE / f"{name}.ep.pt2") if with_ep else None)
    return tuple(api.lint(str(HERE / f"{name}.cpu.stripped.pt2"), options).findings)


def _probe(name: str, label: str, checks: bool) -> dict:
    [record] = [r for r in json.loads((HERE / "runtime.json").read_text())
                if r["name"] == name and r["label"] == label and r["runtime_checks"] == checks]
    return record


def _shape(witness: str) -> str:
    return witness.split("=", 1)[1].strip().split(")")[0] + ")"


# -- guards: parsing and evaluation -----------------------------------------------------------------


def test_guards_are_parsed_over_a_whitelist_and_evaluated_without_eval() -> None:
    gs = guards.compile_guards([
        "(L['a'].size()[2] % 4) == 0",
        "min(L['a'].size()[3] // 4, L['a'].size()[2] // 4) > 4",
        "2 <= L['a'].size()[2] <= 100 and not L['a'].size()[3] == 7",
        "L['a'].stride()[1] == L['a'].size()[2] * L['a'].size()[3]",
        "L['kwargs']['b'].storage_offset() == 0 or -L['b'].size()[0] < 0",
        "(L['a'].size()[2] // (L['a'].size()[3] - 8)) >= 0",
        "__import__('os').system('echo owned')",              # a call outside the whitelist
        "L['a'].size()[2] ** 99999999 > 0",                      # no power
        "(lambda: 1)() == 1", "L['a'].size()[2] if True else 0", "'a' == 'a'", "L['a'].size()[x] == 1",
        "L['a'].dim() == 4", "L.a.size()[0] == 1", "(",
    ])
    assert [g.text for g in gs.guards][:3] == ["(L['a'].size()[2] % 4) == 0",
                                               "min(L['a'].size()[3] // 4, L['a'].size()[2] // 4) > 4",
                                               "2 <= L['a'].size()[2] <= 100 and not L['a'].size()[3] == 7"]
    assert len(gs.guards) == 6 and len(gs.unreadable) == 9
    values = gs.evaluate({"a": (1, 3, 66, 8), "b": (5,)})
    assert [guards.holds(values, g) for g in gs.guards] == [False, False, True, True, True, None]  # 66 // 0
    values = gs.evaluate({"a": (1, 3, 20, 32), "b": (5,)})
    assert [guards.holds(values, g) for g in gs.guards] == [True, True, True, True, True, True]
    # An input the shapes do not name: unknown, never false.
    assert guards.holds(gs.evaluate({}), gs.guards[0]) is None
    assert guards.layout_guard(gs.guards[3]) and not guards.layout_guard(gs.guards[0])


@pytest.mark.parametrize("text", ["min(L['a'].size()[1] // 20, 3) > 1", "1 < min(L['a'].size()[1] // 20, 3)",
                                  "min(L['a'].size()[1] // 20, 3) >= 2", "2 <= min(L['a'].size()[1] // 20, 3)"])
def test_a_size_above_one_is_a_specialization_broken_at_0_only(text: str) -> None:
    """SEW's `min(...) > 1`: at 1 (t = 20..39 here) it holds as export's 0/1 specialization; at 0 it breaks."""
    gs = guards.compile_guards([text])
    [g] = gs.guards
    assert [guards.holds(gs.evaluate({"a": (2, t)}), gs.guards[0]) for t in (19, 20, 39, 40)] == [False, True, True, True]
    assert g.text == text
    above_two = guards.compile_guards(["min(L['a'].size()[1] // 20, 3) > 2"])
    assert guards.holds(above_two.evaluate({"a": (2, 40)}), above_two.guards[0]) is False


@pytest.mark.parametrize("text", ["8 < L['a'].size()[1] + (8 - L['a'].size()[1] % 8) % 8",
                                  "L['a'].size()[1] + (8 - L['a'].size()[1] % 8) % 8 > 8"])
def test_more_than_one_chunk_of_a_padded_length_is_a_specialization(text: str) -> None:
    """Mamba2's `8 < seq + pad` (seq padded to a multiple of 8, split into chunks of 8): more than one
    chunk, read as above 0 (the package runs one chunk like eager: probed at seq 1, 2, 7, 8); a bound
    that the padded length is no multiple of (`9 < ...`), or an unpadded length, stays a comparison."""
    [g] = guards.compile_guards([text]).guards
    gs = guards.compile_guards([text])
    assert [guards.holds(gs.evaluate({"a": (2, t)}), g) for t in (0, 1, 8, 9)] == [False, True, True, True]
    for other in ("9 < L['a'].size()[1] + (8 - L['a'].size()[1] % 8) % 8", "8 < L['a'].size()[1]"):
        kept = guards.compile_guards([other])
        assert guards.holds(kept.evaluate({"a": (2, 8)}), kept.guards[0]) is False, other


def test_identical_subexpressions_are_shared() -> None:
    texts = [f"((L['a'].size()[2] // 4) + ((4 + (-1)*((L['a'].size()[2] // 4) % 4)) % 4)) != {n}" for n in range(50)]
    gs = guards.compile_guards(texts)
    assert len(gs.guards) == 50 and len(gs.nodes) < 120  # 11 shared, a constant and a `!=` each (650 unshared)


@pytest.mark.parametrize("version", ["2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15"])
def test_guards_code_of_every_layout(version: str) -> None:
    """torch 2.6-2.8 save no guards_code; 2.9-2.15 save it at the top of models/model.json (read as JSON,
    the pickles beside it never opened)."""
    add = exported.read_exported_program(FIXTURES / "versions" / version / "index_add.ep.pt2")
    gather = exported.read_exported_program(FIXTURES / "versions" / version / "torch_gather.ep.pt2")
    if version in ("2.6", "2.7", "2.8"):
        assert add.guards == gather.guards == ()
    else:
        assert add.guards == ("L['src'].size()[0] == L['idx'].size()[0]",)
        assert gather.guards == ("L['idx'].size()[0] <= L['x'].size()[0]", "L['idx'].size()[0] == L['x'].size()[0]")
    # Ties the package checks with the variable (AOTI012's), never reported as unchecked guards.
    pkg = FIXTURES / "versions" / version / "torch_gather.cpu.stripped.pt2"
    found = api.lint(str(pkg), api.Options(select=("AOTI020",), exported_program=str(
        FIXTURES / "versions" / version / "torch_gather.ep.pt2"))).findings
    assert not found


def test_guards_of_odd_types_are_left_out(tmp_path: Path) -> None:
    doc = json.loads(zipfile.ZipFile(FIXTURES / "gather_dyn.ep.pt2").read("gather_dyn.ep/models/model.json"))
    doc["guards_code"] = ["L['x'].size()[0] > 2", 7, None, "x" * (exported.MAX_GUARD_CHARS + 1)]
    ep = exported.parse_exported_json(json.dumps(doc))
    assert ep.guards == ("L['x'].size()[0] > 2",)
    doc["guards_code"] = {"not": "a list"}
    assert exported.parse_exported_json(json.dumps(doc)).guards == ()


# -- swin_win: guards export kept and nothing checks --------------------------------------------------


def test_swin_guards_reported_with_their_smallest_breaking_sizes() -> None:
    """Of 123 guards, the three the model's branches gave: `h % 4 == 0`, `w % 4 == 0` (the patch
    embedding pads otherwise) and `min(w // 4, h // 4) > 4` (the window shrinks otherwise)."""
    found = [f for f in _lint("swin_win") if f.code == "AOTI020"]
    assert sorted((f.detail.split("guard ", 1)[1].split(" (export")[0], f.dim, [_shape(w) for w in f.witnesses])
                  for f in found) == [
        ("(L['a'].size()[2] % 4) == 0", 2, ["(1, 3, 9, 32)"]),
        ("(L['a'].size()[3] % 4) == 0", 3, ["(1, 3, 20, 9)"]),
        ("min(L['a'].size()[3] // 4, L['a'].size()[2] // 4) > 4", 2, ["(1, 3, 8, 32)", "(1, 3, 20, 8)"]),
    ]
    assert all(f.severity == Severity.ERROR for f in found)
    merged = next(f for f in found if f.dims)
    assert [(d.input, d.dim, d.size) for d in merged.dims] == [(0, 2, 8), (0, 3, 8)]
    assert all("AOTI_RUNTIME_CHECK_INPUTS=1 does not check it" in (f.fix or "") for f in found)


@pytest.mark.parametrize("label", ["9x32", "20x9", "66x80", "64x82", "8x32", "20x8", "8x80"])
@pytest.mark.parametrize("checks", [False, True])
def test_swin_witnesses_fail_silently_with_and_without_the_variable(label: str, checks: bool) -> None:
    record = _probe("swin_win", label, checks)
    assert record["eager"].startswith("ok")
    assert record["package"].startswith(("wrong shape", "wrong values")), record


@pytest.mark.parametrize("label", ["64x80", "64x64", "68x80", "20x80", "16x80", "20x20"])
def test_swin_sizes_that_run_like_eager(label: str) -> None:
    """16x80 breaks `min(...) > 4` but eager's shrunk window is 4 too; 20x20 and 68x80 break only
    stride guards (`max(1, ...)` products: a window padded to a multiple), which are not reported."""
    assert _probe("swin_win", label, False)["package"] == "like eager"


def test_swin_without_the_exported_program_reports_no_floor() -> None:
    """The package floors h by 4 (`div_floor_integer(s69, 4L)`) and pads the quotient to a multiple of
    4; without the guards nothing says the floor is an assumption rather than the conv's own."""
    codes = {f.code for f in _lint("swin_win", with_ep=False)}
    assert "AOTI020" not in codes and "AOTI014" not in codes


@pytest.mark.parametrize("with_ep", [True, False])
def test_a_stride_14_patch_conv_is_not_a_divisibility(with_ep: bool) -> None:
    codes = {f.code for f in _lint("dino_patch", with_ep)}
    assert not codes & {"AOTI014", "AOTI020"}
    for label in ("57x70", "69x83", "28x28"):
        assert _probe("dino_patch", label, False)["package"] == "like eager"


# -- data-derived index ranges --------------------------------------------------------------------------


def test_bucketize_index_reaches_the_boundaries_length() -> None:
    [f] = [f for f in _lint("bucketize_table") if f.code == "AOTI015"]
    assert f.severity == Severity.INFO and f.message_key == "index-exceeds-dynamic-bound.sized"
    assert "a value above the last boundary" in (f.witness or "")
    assert any("holds values in [0, s65]" in step for step in f.chain)
    for label in ("past", "b1"):  # eager raises IndexError there too; the package a clean RuntimeError
        record = _probe("bucketize_table", label, False)
        assert record["eager"].startswith("IndexError") and "index out of bounds" in record["package"]


@pytest.mark.parametrize("name", ["topk_table", "argmax_table"])
def test_topk_and_argmax_indices_past_a_16_row_table(name: str) -> None:
    [f] = [f for f in _lint(name) if f.code == "AOTI003"]
    assert _shape(f.witness or "") == "(3, 17)" and f.dim == 1
    assert any("reaches that maximum for" in step for step in f.chain)
    assert "index out of bounds" in _probe(name, "n17", False)["package"]
    assert _probe(name, "n17_first", False)["package"] == "like eager"   # the values decide
    assert _probe(name, "n16", False)["package"] == "like eager"


def test_argmax_range_comes_from_the_kernels_own_reduction() -> None:
    (model,) = api.load(str(HERE / "argmax_table.cpu.stripped.pt2")).models
    [a] = [a for a in model.assertions if a.index_extent]
    assert a.index_extent == "max(0, s69 - 1) + 1" and a.index_ops == ("argmax",)  # index 0 over an empty dim
    assert a.index_extent_sources == (DimRef(0, 1),)


# -- a guard's text is the exported program's: inert in every format ----------------------------------


@pytest.mark.parametrize("fmt", ["json", "text", "markdown", "github", "sarif"])
def test_a_hostile_guard_is_inert(tmp_path: Path, fmt: str) -> None:
    import test_untrusted as T
    import untrusted_corpus as corpus

    hostile = corpus.build(tmp_path)
    with zipfile.ZipFile(hostile.exported) as z:
        members = {i.filename: z.read(i.filename) for i in z.infolist()}
    [name] = [m for m in members if m.endswith("models/model.json")]
    doc = json.loads(members[name])
    doc["guards_code"] = [f"(L[{('x' + corpus.FULL)!r}].size()[0] % 2) == 0"]  # the renamed input's name
    members[name] = json.dumps(doc).encode()
    with zipfile.ZipFile(hostile.exported, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    code, out, _ = T._run(hostile, "check", "--select", "AOTI020", "--format", fmt, "--exported-program",
                          hostile.exported.name, *T._names(hostile))
    text = out.decode("utf-8")
    assert code == 1
    if fmt == "json":
        found = json.loads(text)["findings"]
        assert found and all(f["code"] == "AOTI020" for f in found)
        assert all(corpus.IMG in f["detail"] for f in found)  # data: the guard's text as it was
    elif fmt == "markdown":
        T._assert_inert_markdown(text, text.count("<summary>"))
    elif fmt == "sarif":
        json.loads(text)
    elif fmt == "github":
        import re

        lines = text.split("\n")
        assert lines[-1] == "" and len(lines) > 1
        for line in lines[:-1]:  # one annotation per line, properties as the tool meant them
            m = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", line)
            assert m and set(dict(p.split("=", 1) for p in m.group(2).split(","))) <= {"file", "line", "col", "title"}
            assert "\r" not in line and not T.HIDDEN.search(line)
    else:
        T._assert_terminal(text)


# -- compiled maxima below a declared or absent max ------------------------------------------------------


@pytest.mark.parametrize("with_ep", [True, False])
def test_a_compiled_max_below_an_unbounded_declaration(with_ep: bool) -> None:
    """resnetish's batch is compiled for [2, 15] (declared [0, inf) with the exported program, nothing
    declared without): with every rule running, unenforced-lower-bound says 0 and 1, and
    compiled-range-narrower-than-declared still says the sizes above 15 (a warning where the export
    declares them, an info where nothing is declared)."""
    ep = str(FIXTURES / "real" / "resnetish.ep.pt2") if with_ep else None
    found = api.lint(str(FIXTURES / "real" / "resnetish.cpu.stripped.pt2"),
                     api.Options(select=("ALL",), exported_program=ep)).findings
    [f] = [f for f in found if f.code == "AOTI010"]
    assert (f.input, f.dim) == (0, 0) and [_shape(w) for w in f.witnesses] == ["(16, 3, 32, 32)"]
    assert f.message_key == ("compiled-range-narrower-than-declared.above-only" if with_ep
                             else "compiled-range-narrower-than-declared.undeclared-max")
    assert f.severity == Severity.INFO  # sizes never compiled for, with no consequence the analyzer can show
    assert any(f.code == "AOTI002" for f in found)


# -- branches of the new paths, on the real packages with one fact changed --------------------------------


def _model(name: str, ep: str | None = None):
    (model,) = api.load(str(name), api.Options(exported_program=ep)).models
    return model


def test_sized_index_branches() -> None:
    from analyzer.rules import Context
    from analyzer.rules.datarange import IndexExceedsDynamicBound

    model = _model(HERE / "bucketize_table.cpu.stripped.pt2")
    rule, ctx = IndexExceedsDynamicBound(), Context()
    [a] = {(a.kernel, a.bound_expr, a.index_extent): a for a in model.assertions if a.index_ops}.values()
    for a2 in model.assertions:   # the vector loop and the tail hold the same check
        a2.bound_expr = "s77 + 3"  # x's length + 3: past the index at the witness sizes, not at 6 boundaries
    [f] = [f for f in rule.check(model, ctx) if f.message_key == "index-exceeds-dynamic-bound.sized"]
    assert "arg1_1.shape = (6,)" in (f.witness or "")  # 6 boundaries: the index reaches 6 = x.shape[0] + 3
    for a2 in model.assertions:
        a2.bound_expr = "s77 + s65 + 2"  # never reached
    assert not list(rule.check(model, ctx))
    for a2 in model.assertions:
        a2.index_extent_sources = (DimRef(0, 0),)   # a dim the extent does not grow with: no size reaches
    assert not list(rule.check(model, ctx))
    for a2 in model.assertions:
        a2.index_extent = "s65 + nothing"  # cannot be evaluated
    assert not list(rule.check(model, ctx))


def test_guards_holding_at_the_first_sizes_and_guards_restating_one_another() -> None:
    from analyzer.rules import Context
    from analyzer.rules.exportguards import UncheckedExportGuard

    model = _model(FIXTURES / "gather_dyn.cpu.stripped.pt2", str(FIXTURES / "gather_dyn.ep.pt2"))
    model.guards = ["(L['x'].size()[0] % 2) == 1", "(L['x'].size()[0] % 2) != 0", "L['nobody'].size()[0] > 1",
                    "L['x'].size()[0] ** 2 > 1"]
    [f] = list(UncheckedExportGuard().check(model, Context()))
    assert f.witnesses == ("x.shape = (2, 8), idx.shape = (3,)",)  # the smallest size in range that breaks it
    assert "the same sizes break 1 more guard of the program" in f.detail
    assert not any("every guard holds at" in step for step in f.chain)
    model.guards = []
    assert not list(UncheckedExportGuard().check(model, Context()))


def test_a_second_read_of_a_constant_in_a_longer_loop_is_kept() -> None:
    """`in_ptr0[x0]` in a loop of 4 and again in a loop of ks0: one text, two maxima; the second read
    is the one that can pass the 4-element constant (it used to be dropped as a repeat of the first)."""
    from analyzer.parse import cppkernel, ts
    from analyzer.link import reads
    from analyzer.core.model import Constant, Launch, Location, Model

    source = b"""
extern "C"  void  cpp_k(const float* in_ptr0, float* out_ptr0, const int64_t ks0)
{
    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4L); x0+=static_cast<int64_t>(1L))
    {
        auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
        out_ptr0[static_cast<int64_t>(x0)] = tmp0;
    }
    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))
    {
        auto tmp1 = in_ptr0[static_cast<int64_t>(x0)];
        out_ptr0[static_cast<int64_t>(x0 + 4L)] = tmp1;
    }
}
"""
    tree, _ = ts.parse(source)
    [facts] = cppkernel.parse_cpp(tree, "k.cpp")
    model = Model(name="model", constants=[Constant(0, "c0", (4,))],
                  launches=[Launch("cpp_k", ("c0", "buf0", "s0"), Location("w.cpp", 1))])
    found = reads.constant_reads(facts, None, model, [0], lambda f, i: {"ks0": "s0"},
                                 lambda expr: (DimRef(0, 0),) if "s0" in expr else ())
    assert [r.index_max for r in found] == ["s0 - 1"]


@pytest.mark.parametrize(("text", "left_out"), [
    ("((L['x'].size()[1] + ((7 + (-1)*(L['x'].size()[1] % 7)) % 7)) // 7) != 1", True),  # one window
    ("L['x'].size()[1] != 32", True),                                                    # MPT's seq != 32
    ("(16*L['x'].size()[2]) != (16*(L['x'].size()[2] // (L['x'].size()[2] // 7)))", True),
    ("(L['x'].size()[0] % (L['x'].size()[1] // 7)) != 0", True),   # a reshape's divisibility by a size
    ("(L['x'].size()[0] % 2) != 0", False),                        # the example was odd: a branch
    ("(L['a'].size()[2] % 4) == 0", False),
    ("min(L['a'].size()[3] // 4, L['a'].size()[2] // 4) > 4", False),
])
def test_a_guard_that_two_sizes_differ_is_a_specialization_not_a_branch(text: str, left_out: bool) -> None:
    """stranger6/win_attn's `(hp // 7) != 1` (more than one window) broken at h = 2 ran like eager
    (fixtures/stranger6/runtime.json), as MPT's `seq != 32` at 32 did: export kept such guards for
    views and slices. A remainder by a constant compared is the model's branch and stays reported."""
    from analyzer.query import guards as G

    guard = G.GuardSet().add(text)
    assert guard is not None and G.inequality_guard(guard) is left_out


@pytest.mark.parametrize(("text", "left_out"), [
    # stranger14/maxvit_grid: the crop `g[:, :h, :w]` of a map padded to multiples of 4, contiguous or not.
    ("(4*(1 + (((-1) + L['x'].size()[2]) // 8))*(64 + 64*(((-1) + L['x'].size()[3]) // 8))) == "
     "((1 + (((-1) + L['x'].size()[2]) // 2))*(64 + 64*(((-1) + L['x'].size()[3]) // 8)))", True),
    ("(L['x'].size()[1]*L['x'].size()[2]) == (64*L['x'].size()[2])", True),
    ("(4*L['x'].size()[1]) == (4*(L['x'].size()[2] // 2))", False),   # a constant factor: a relation
    ("(L['x'].size()[1]*L['x'].size()[2]) == 64", False),               # one product: a view's numel
    ("(L['x'].size()[1]*L['x'].size()[2]) != (64*L['x'].size()[2])", False),
])
def test_two_products_of_one_size_factor_are_a_contiguity_test(text: str, left_out: bool) -> None:
    """maxvit_grid's guard broken at h = 9, 17 and 257 ran like eager (fixtures/stranger14/runtime.json):
    export kept it from `is_contiguous` on a crop, the slice's stride against its own sizes, which share
    the later dims' factor; a product compared with a constant (a view's element count) is kept."""
    from analyzer.query import guardforms, guards as G

    guard = G.GuardSet().add(text)
    assert guard is not None and guardforms.contiguity_guard(guard) is left_out


_PAD_H = "((4 + (-1)*((L['x'].size()[2] // 2) % 4)) % 4) <= 0"
_PAD_W = "((4 + (-1)*((L['x'].size()[3] // 2) % 4)) % 4) <= 0"


@pytest.mark.parametrize(("text", "guards", "outer"), [
    # stranger7/swinv2: the bottom pad's guard beside the right pad's, h outer to w.
    (_PAD_H, (_PAD_H, _PAD_W), _PAD_W),
    (_PAD_W, (_PAD_H, _PAD_W), None),                                   # the inner dim's bites
    (_PAD_H, (_PAD_H,), None),                                          # a pad of one dim only
    (_PAD_H, (_PAD_H, _PAD_W.replace("% 4", "% 8")), None),             # another multiple
    (_PAD_H, (_PAD_H, _PAD_W.replace("L['x']", "L['y']")), None),       # another input
    (_PAD_H, (_PAD_H, _PAD_W.replace("// 2", "// 4")), None),           # another map
    ("(L['x'].size()[2] % 4) == 0", ("(L['x'].size()[2] % 4) == 0", "(L['x'].size()[3] % 4) == 0"), None),
    ("((4 + (-1)*((L['x'].size()[2] // L['x'].size()[3]) % 4)) % 4) <= 0", (_PAD_W,), None),  # two leaves
])
def test_the_outer_of_two_padded_dims(text: str, guards: tuple[str, ...], outer: str | None) -> None:
    """Swin V2 at h = 4, 8, 12, 20, 24, 28, 40 and Swin at h = 24, 136 broke the bottom pad's guard and
    ran like eager (runtime.json and a probe of swinv2's complete package); w = 4, 8, 12, 24 broke the
    right pad's and returned wrong values: the crop of the outer dim is a prefix of the map."""
    from analyzer.query import guardforms

    assert guardforms.outer_crop_guard(text, guards) == outer


# -- adaptive pooling lowered for the traced map ----------------------------------------------------------


def test_adaptive_max_pool_compiled_for_the_traced_map() -> None:
    """`adaptive_max_pool2d(x, (4, 4))` traced at 12 x 12: the traced size divides, and Inductor pools a
    fixed 3 x 3 window (`3L*x2`), the output `h // 3` rows. AOTI021 names both sides, witness 6 x 6 (the
    compiled minimum, no multiple of 4): a 2 x 2 output where eager's is 4 x 4, with the variable too;
    every other map probed but the traced one is wrong, and nothing else explains it."""
    [f] = [f for f in _lint("adaptive_max") if f.code == "AOTI021"]
    assert f.severity == Severity.ERROR and f.witness == "x.shape = (2, 3, 6, 6)"
    assert [(d.input, d.dim, d.size) for d in f.dims] == [(0, 2, 6), (0, 3, 6)]
    assert "a fixed window" in f.detail and (f.source.line, f.source.op) == (101, "aten.adaptive_max_pool2d.default")
    for checks in (False, True):
        assert _probe("adaptive_max", "6x6", checks)["package"] == "wrong shape (2, 3, 2, 2), eager (2, 3, 4, 4)"
        assert _probe("adaptive_max", "12x12", checks)["package"] == "like eager"
    for label in ("13x12", "16x12", "24x24"):
        assert _probe("adaptive_max", label, True)["package"].startswith(("wrong shape", "wrong values")), label
    assert not [f for f in _lint("adaptive_max", with_ep=False) if f.code == "AOTI021"]


@pytest.mark.parametrize(("text", "bins"), [
    # C++ (adaptive_head's kernel): the bin starts, scalar and vectorized; the end `(22L + 16L*x1) // 7` is no start.
    ("c10::div_floor_integer(static_cast<int64_t>(16L*x1), static_cast<int64_t>(7L)) + "
     "c10::div_floor_integer(static_cast<int64_t>(16L*x2 + 16L*x2_inner), static_cast<int64_t>(7L)) + "
     "c10::div_floor_integer(static_cast<int64_t>(22L + 16L*x1), static_cast<int64_t>(7L))", ((16, 7),)),
    # Triton prints a floor of non-negative terms as `//`, else with its helper.
    ("tmp0 = tl.load(in_ptr0 + (x0 + 8*((16*x1) // 7)), xmask)", ((16, 7),)),
    ("tmp0 = triton_helpers.div_floor_integer((12*x2),  5)", ((12, 5),)),
    # A floor by a size symbol or by 1 is no bin.
    ("c10::div_floor_integer(static_cast<int64_t>(ks1*ks2), static_cast<int64_t>(16L)) + ((3*x1) // 1)", ()),
])
def test_pool_bins_are_read_from_either_kind_of_kernel(text: str, bins: tuple) -> None:
    from analyzer.parse.kernels import MAX_BINS, pool_bins

    assert pool_bins(text) == bins
    many = " ".join(f"(({n}*x1) // 7)" for n in range(2, 200))
    assert len(pool_bins(many)) == MAX_BINS


def test_a_pooling_at_its_traced_size_only_or_through_aten_is_not_reported() -> None:
    """adaptive_head's model edited: with h and w accepted at 31 and 32 only (a 16-wide map, the traced
    one) no side has a witness; with the kernel's launch an ATen call (a fallback computes the bins at
    run time) nothing is lowered for the traced size; with no bins found the witness is a size no
    multiple of the 7 bins."""
    import copy

    from analyzer.query import traced as pooling

    folder = FIXTURES / "stranger9"
    package = api.load(str(folder / "adaptive_head.cpu.stripped.pt2"),
                       api.Options(exported_program=str(folder / "adaptive_head.ep.pt2")))
    (model,) = package.models
    avg, pool = pooling.traced_pools(model)   # both nodes, one fused kernel: one finding after merging
    assert (avg.op, pool.op, avg.kernel) == ("adaptive_avg_pool2d", "adaptive_max_pool2d", pool.kernel)
    assert [(d.side, d.traced, d.witness, d.map_size) for d in pool.dims] == [("rows", (16,), 3, 2),
                                                                                ("columns", (16,), 3, 2)]
    narrow = copy.deepcopy(model)
    for dim in narrow.inputs[0].dims[2:]:
        dim.min, dim.max = 31, 32
    assert not list(pooling.traced_pools(narrow))
    fallback = copy.deepcopy(model)
    for launch in fallback.launches:
        launch.extern = launch.extern or "adaptive" in launch.kernel
    assert not list(pooling.traced_pools(fallback))
    unbinned = copy.deepcopy(model)
    unbinned.kernels[pool.kernel].pool_bins = ()
    _, pool = pooling.traced_pools(unbinned)
    assert [(d.traced, d.witness, d.map_size) for d in pool.dims] == [((), 3, 2), ((), 3, 2)]


def test_load_strides_are_read_from_kernel_text_within_bounds() -> None:
    """loadstrides: ball query's two strides are found once per pair; a load past MAX_LOADS, an index
    longer than MAX_CHARS or one without a size parameter is not read, and the count says how many
    loads were (a member's kernels share MAX_MEMBER_LOADS)."""
    from analyzer.parse import loadstrides as L

    loop = "for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))\n{\n"
    centroid = ("auto tmp0 = in_ptr0[static_cast<int64_t>(12L*x1 + 12L*x0*(c10::div_floor_integer("
                "static_cast<int64_t>(3L + ks1), static_cast<int64_t>(4L))))];\n")
    point = "auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(3L*x2 + 3L*ks1*x0), 16);\n"
    pairs, read = L.stride_pairs(loop + centroid + point, "k.cpp", 10)
    assert read == 2 and [(p.pointer, p.var, p.first, p.second, p.extent, p.location.line) for p in pairs] == [
        ("in_ptr0", "x0", "(12) * ((3 + ks1) // 4)", "(3) * (ks1)", "ks0", 13)]
    # The same strides in two successive loops over x0: each loop's own first stride.
    assert len(L.stride_pairs(loop + centroid + "}\n" + loop + point, "k.cpp", 1)[0]) == 0
    many = loop + centroid * (L.MAX_LOADS + 5) + point
    assert L.stride_pairs(many, "k.cpp", 1) == ([], L.MAX_LOADS + 1)
    assert L.stride_pairs(loop + centroid + point, "k.cpp", 1, max_loads=1) == ([], 2)
    long = "auto t = in_ptr0[" + "(" * (L.MAX_CHARS + 1) + "];\n"
    assert L.stride_pairs(loop + long + centroid + point, "k.cpp", 1)[0]
    assert L.stride_pairs(centroid.replace("div_floor_integer", "floor"), "k.cpp", 1) == ([], 0)


def test_stride_reads_the_rule_leaves_out_or_words_otherwise() -> None:
    """ball_query's model edited: strides that differ only where one is below 1 give no finding; a
    buffer that is no input is named as the wrapper names it; strides that agree at sizes that are no
    multiples are listed, and ones that never agree up to 64 say so."""
    import copy
    from dataclasses import replace

    from analyzer.core.model import Package
    from analyzer.rules import Context, run_rules, select_rules

    folder = FIXTURES / "stranger10"
    (model,) = api.load(str(folder / "ball_query.cpu.stripped.pt2"),
                        api.Options(exported_program=str(folder / "ball_query.ep.pt2"))).models
    read = model.stride_reads[0]
    edited = copy.deepcopy(model)
    edited.stride_reads = [
        replace(read, first="s53", second="max(1, s53)"),                     # equal wherever both step
        replace(read, buffer="buf3", first="s53", second="max(s53, 10)"),     # agree from 10 on
        replace(read, buffer="buf4", first="s53", second="s53 + 100"),         # never agree
    ]
    found = [f for f in run_rules(Package("p.pt2", [edited]), select_rules(("AOTI022",), ()), Context())
             if f.code == "AOTI022"]
    assert [(f.witness, f.message_fields["buffer"], f.message_fields["agree"]) for f in found] == [
        ("xyz.shape = (3, 8, 3), feats.shape = (3, 8, 16)", "buf3", "xyz.shape[1] is one of 10, 11, 12, 13, ..."),
        ("xyz.shape = (3, 8, 3), feats.shape = (3, 8, 16)", "buf4", "xyz.shape[1] takes sizes above 64"),
    ]
