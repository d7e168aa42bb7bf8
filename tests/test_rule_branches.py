"""Branches of analyzer/rules/ that no real package takes, on small hand-built models (values as in
the real packages of tests/test_rules.py): each test names the branch it pins and what the rule does
there. Together with the rule cases and goldens they reach every branch of analyzer/rules/
(tests/test_coverage_gate.py checks that under coverage)."""

from __future__ import annotations

import math

import pytest

from analyzer.query import sizes as S, witness as W
from analyzer.core.findings import Location, Severity
from analyzer.core.model import Access, Assertion, ConstantRead, Constant, Dim, DimRef, Enforcement, Evidence, Input, Launch, Model, Relation, Symbol
from analyzer.rules import Context, Rule, register
from analyzer.rules import access as access_rules
from analyzer.rules import bounds as bounds_rules
from analyzer.rules import enforcement as E
from analyzer.rules import tableextent
from test_rules import _pos_model, _reduce_model, _run

WRAPPER = "m/w.wrapper.cpp"


def _one_dim_model(min_=2, max_=None, enforced="env", value=None) -> Model:
    """x [n, 8] with n = s77 (compiled min 2, no max, checked only with AOTI_RUNTIME_CHECK_INPUTS=1)."""
    x = Input(0, "arg0_1", [Dim(0, "s77" if value is None else None, value, min_ if value is None else None,
                                max_, enforced), Dim(1, None, 8, enforced=enforced)], dtype="float32")
    model = Model("model", device="cpu", wrapper_path=WRAPPER, inputs=[x])
    if value is None:
        model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location(WRAPPER, 10, 5))}
    return model


# -- the framework (rules/__init__.py) -------------------------------------------------------------

def test_base_rule_checks_nothing():
    rule = Rule()
    assert tuple(rule.check(_one_dim_model(), Context())) == ()
    assert tuple(rule.check_package(None, Context())) == ()  # type: ignore[arg-type]


def test_register_refuses_a_consequence_that_is_not_one():
    """A rule's severity is the policy's, from its consequence: a rule cannot set one by hand."""
    bad = type("BadConsequence", (Rule,), {"name": "bad-consequence", "code": "AOTI998", "consequence": "fails"})
    with pytest.raises(TypeError, match="consequence must be a Consequence"):
        register(bad)


def test_sections_of_a_docstring_without_headings():
    class Plain(Rule):
        """Only a summary line.

        And prose, but no `## ` heading."""

    assert Plain.summary() == "Only a summary line."
    assert Plain.sections() == {}


# -- enforcement.py helpers ------------------------------------------------------------------------

def test_max_enforcement_of_a_static_or_missing_dim_is_always():
    assert S.max_enforcement(None) is Enforcement.ALWAYS
    assert S.max_enforcement(Dim(1, None, 8)) is Enforcement.ALWAYS


def test_exceeds_on_an_expression_that_cannot_be_evaluated_is_false():
    model = _one_dim_model()
    assert E.exceeds_at_runtime(model, "1e999", 5) is False
    assert E.exceeds_declared(model, "s77 // 0", 5) is False
    assert E.exceeds_at_runtime(model, "s77", 5) is True


def test_smallest_exceeding_skips_static_and_missing_dims_and_limits_never_passed():
    model = _one_dim_model()
    n, static, missing = DimRef(0, 0), DimRef(0, 1), DimRef(3, 0)
    assert W.first_exceeding(model, "s77", [static, missing], 4) is None
    assert W.first_exceeding(model, "s77", [n], W.SEARCH_LIMIT + 1) is None  # never past the limit
    assert W.first_exceeding(model, "s77", [n], 0) == (n, 2)                # already past at the min
    assert W.first_exceeding(model, "s77", [n], 100) == (n, 101)


def test_max_text_of_a_missing_dim_and_of_an_always_checked_max():
    assert E.max_text(_one_dim_model(), DimRef(5, 0)) == "no max"
    assert E.max_text(_one_dim_model(max_=64, enforced="always"), DimRef(0, 0)) == "compiled for at most 64"


def test_constant_label_of_an_unknown_constant_is_its_name():
    model = _one_dim_model()
    model.constants = [Constant(0, "pe_weight", (512, 16), "pe.weight")]
    assert E.constant_label(model, "other") == "other"
    assert E.constant_label(model, "pe_weight") == "pe.weight (512x16, constant pe_weight)"


def test_unenforced_max_without_a_dim_to_blame():
    # The extent passes the bound by default, but none of the given dims can take it there.
    model = _pos_model(seq_max=512)
    a = model.assertions[0]
    rule = bounds_rules.IndexExceedsConstantBound()
    assert E.unenforced_max(rule, model, Context(), a, [], {}) is None
    assert E.unenforced_max(rule, model, Context(), a, [DimRef(0, 1)], bounds_rules.outcome_fields(model, a))


def _nonzero_model(count_min: int) -> Model:
    """tai_nonzero_mm on CPU: u0 = the number of nonzero elements of mask [n] (`aoti_torch_cpu_nonzero`),
    run_impl asserting `u0 >= count_min`; x [m, 8] is another input."""
    mask = Input(0, "arg0_1", [Dim(0, "s77", None, 2, None, "env")], dtype="bool")
    x = Input(1, "arg1_1", [Dim(0, "s95", None, 2, None, "env"), Dim(1, None, 8, enforced="env")])
    model = Model("model", device="cpu", wrapper_path=WRAPPER, inputs=[mask, x])
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location(WRAPPER, 10, 5)),
                     "s95": Symbol("s95", "s95", DimRef(1, 0), Location(WRAPPER, 11, 5)),
                     "u0": Symbol("u0", "u0", None, Location(WRAPPER, 20, 5), unbacked=True, min=count_min)}
    model.launches = [Launch("aoti_torch_cpu_nonzero", ("arg0_1", "arg1_1"), Location(WRAPPER, 19, 5), extern=True,
                             outputs=("u0",), arg_shapes=(("s77",), ("s95", "8")))]
    return model


def test_rejecting_assert_only_for_the_counted_input_and_below_its_minimum():
    model = _nonzero_model(count_min=2)
    assert E.rejecting_assert(model, DimRef(0, 0), 1) == ("u0", 2, "aoti_torch_cpu_nonzero")
    # mask of 5 elements can hold 2 nonzero ones: no input of the call rejects it.
    assert E.rejecting_assert(model, DimRef(0, 0), 5) is None
    # x is an argument of the call too, but u0 does not count its elements: skipped.
    assert E.rejecting_assert(model, DimRef(1, 0), 1) is None


def test_rejecting_assert_of_a_size_run_impl_ties_to_the_dim():
    """sage_mean: u2 = bincount(dst, minlength=n)'s size, `Expected Eq(s77, u2)` and `Expected u2 >= 2`
    at every call: n = 1 is rejected whatever the values; named by the proxy-executor call's node, by
    the shim for a shim, by run_impl where no call returns it."""
    model = _nonzero_model(count_min=0)
    model.symbols["u2"] = Symbol("u2", "buf1", None, Location(WRAPPER, 30, 5), unbacked=True, min=2, tied="s95")
    model.launches.append(Launch("aoti_torch_proxy_executor_call_function", ("buf1",), Location(WRAPPER, 29, 5),
                                 comment="Topologically Sorted Source Nodes: [select_1, bincount], Original ATen: "
                                         "[aten.select, aten.bincount]", extern=True, outputs=("buf1",)))
    assert E.rejecting_assert(model, DimRef(1, 0), 1) == ("u2", 2, "bincount")
    assert E.rejecting_assert(model, DimRef(1, 0), 2) is None and E.rejecting_assert(model, DimRef(0, 0), 1) is None
    model.launches[-1] = Launch("aoti_torch_cpu_bincount", ("buf1",), Location(WRAPPER, 29, 5), extern=True,
                                outputs=("buf1",))
    assert E.rejecting_assert(model, DimRef(1, 0), 1) == ("u2", 2, "aoti_torch_cpu_bincount")
    model.launches.pop()
    assert E.rejecting_assert(model, DimRef(1, 0), 1) == ("u2", 2, "run_impl")


def test_empty_target_skips_dims_that_cannot_be_zero_or_do_not_empty_it():
    model = _one_dim_model()
    model.inputs.append(Input(1, "arg1_1", [Dim(0, "s95", None, 2, None, "env")], dtype="int64"))
    model.symbols["s95"] = Symbol("s95", "s95", DimRef(1, 0), Location(WRAPPER, 11, 5))
    # the target (s77 + 1, 8): at s77 = 0 it still has a row.
    launch = Launch("aoti_torch_cpu_index_put_out", ("buf0", "arg1_1"), Location(WRAPPER, 30, 5), extern=True,
                    arg_shapes=(("s77 + 1", "8"), ("s95",)))
    assert E.empty_target(model, launch) is None
    # (s77, 8) against an index of s95 elements: s77 = 0 empties it ...
    launch.arg_shapes = (("s77", "8"), ("s95",))
    assert E.empty_target(model, launch) == ([DimRef(0, 0)], ("s77", "8"))
    # ... unless a check that always runs keeps s77 >= 2.
    model.inputs[0].dims[0].enforced = Enforcement.ALWAYS
    assert E.empty_target(model, launch) is None


# -- bounds.py ---------------------------------------------------------------------------------------

def test_int_text_of_unknown_and_non_finite_values():
    assert bounds_rules.int_text(None) == "?"
    assert bounds_rules.int_text(math.inf) == "inf"
    assert bounds_rules.int_text(float("nan")) == "nan"
    assert bounds_rules.int_text(511.0) == "511" and bounds_rules.int_text(2.5) == "2.5"


def test_extent_that_cannot_be_evaluated_is_skipped():
    assert _run(_pos_model(extent="s27 // 0"), "index-exceeds-constant-bound") == []


def test_compiled_reach_of_a_symbol_without_a_dim_and_of_an_extent_that_cannot_be_evaluated():
    model = _pos_model(seq_max=512)
    a = model.assertions[0]
    model.symbols["s99"] = Symbol("s99", "s99", DimRef(5, 0), Location(WRAPPER, 11, 5))  # no such input
    assert tableextent.compiled_reaches(model, a) is False  # the compiled max 512 keeps it in the table
    a.index_extent = "s27 // 0"
    assert tableextent.compiled_reaches(model, a) is True  # cannot be said: taken to reach


def test_no_dim_with_an_exceeding_size_gives_no_finding(monkeypatch):
    """The extent passes the bound in the ranges, but the search finds no size of any dim that does
    (past its limit): nothing to report, rather than a finding without a witness."""
    monkeypatch.setattr(W, "smallest_exceeding", lambda *args, **kwargs: None)
    assert _run(_pos_model(), "index-exceeds-constant-bound") == []


def _values_model(extent: str, unbacked_max: int | None) -> Model:
    """item_arange on CPU: `torch.arange(n.item())` indexes a 64-row table, u0 = n's value."""
    model = _pos_model(extent=extent, bound=64)
    model.symbols["u0"] = Symbol("u0", "u0", None, Location(WRAPPER, 20, 5), unbacked=True, value_inputs=(0,),
                                 min=0, max=unbacked_max)
    a = model.assertions[0]
    a.index_extent_sources, a.index_extent_value_inputs = (), (0,)
    return model


def test_extent_set_by_values_is_reported_unless_a_runtime_assert_keeps_it_within():
    (f,) = _run(_values_model("u0", None), "index-exceeds-constant-bound")
    assert f.message_key == "index-exceeds-constant-bound.values"
    # torch._check(n <= 64) runs at every call: the extent stays within the table.
    assert _run(_values_model("u0", 64), "index-exceeds-constant-bound") == []
    # an extent whose interval cannot be said: nothing to report.
    assert _run(_values_model("u0 // 0", None), "index-exceeds-constant-bound") == []


def _op_model(extent: str, ops: tuple[str, ...] = ("searchsorted_Tensor",), sources: tuple[int, ...] = (0,)) -> Model:
    """tisasrec on CPU: a constant extent, `searchsorted`'s 0..16 from the input's values, read against 16 rows."""
    model = _pos_model(extent=extent, bound=16)
    a = model.assertions[0]
    a.index_extent_sources, a.index_ops, a.index_sources = (), ops, sources
    return model


def test_a_constant_extent_is_reported_only_where_an_op_of_the_inputs_values_passes_the_table():
    model = _op_model("17")
    (f,) = _run(model, "index-exceeds-constant-bound")
    assert f.message_key == "index-exceeds-constant-bound.op-values" and f.severity == Severity.ERROR
    # values, not sizes, reach it: no guard on the sizes rejects them
    assert bounds_rules.IndexExceedsConstantBound().guard_condition(model, f) is None
    assert "`searchsorted` result reaching 16" in f.message
    assert _run(_op_model("16"), "index-exceeds-constant-bound") == []             # 0..15: within the table
    assert _run(_op_model("17", ops=()), "index-exceeds-constant-bound") == []     # no op to name
    assert _run(_op_model("17", sources=()), "index-exceeds-constant-bound") == []  # no input's values
    assert _run(_op_model("17 // 0"), "index-exceeds-constant-bound") == []        # cannot be evaluated


# -- access.py ---------------------------------------------------------------------------------------

def test_space_that_does_not_parse_is_unknown():
    assert access_rules._space_at(_one_dim_model(), "s77 +", {}, {"u0": "1"}) is None


def _scatter_model(count_min: int | None) -> Model:
    """tai_scatter-like on CPU: a kernel stores into buf0 (x's n*8 elements) in a loop of 4 (the
    index's 1x4), after nonzero(mask) with u0 = its count asserted `u0 >= count_min` by run_impl;
    mask is x itself (n = s77)."""
    model = _nonzero_model(count_min or 0)
    model.symbols["u0"].min = count_min
    model.inputs[0].dims.append(Dim(1, None, 8, enforced="env"))
    model.launches[0].arg_shapes = (("s77", "8"),)
    model.launches[0].error_checked = False  # nothing raises when it gets the empty mask
    model.launches.append(Launch("cpp_fused_scatter_0", ("buf0", "arg0_1"), Location(WRAPPER, 40, 5)))
    model.accesses = [Access("cpp_fused_scatter_0", "out_ptr0", "buf0", "8*s77", "4",
                             Location("m/k.kernel.cpp", 30, 25), Location(WRAPPER, 40, 5))]
    return model


def test_store_into_empty_buffer_unless_an_always_run_assert_rejects_the_empty_input():
    (f,) = _run(_scatter_model(None), "store-into-empty-buffer")
    assert (f.input, f.dim) == (0, 0) and f.witness == "arg0_1.shape = (0, 8), arg1_1.shape = (3, 8)"
    # `Expected u0 >= 2` runs at every call: an empty mask has no 2 nonzero elements, the call fails first.
    assert _run(_scatter_model(2), "store-into-empty-buffer") == []


# -- reads.py ----------------------------------------------------------------------------------------

def _position_ids_model() -> Model:
    """bert on CPU: `in_ptr2[x1]` reads the 128 position_ids with x1 over [0, seq), seq = s27 compiled
    and declared for [2, 128] but that max checked only with AOTI_RUNTIME_CHECK_INPUTS=1."""
    x = Input(0, "arg0_1", [Dim(0, "s77", None, 1, None, "env"), Dim(1, "s27", None, 2, 128, "env",
                                                                      declared_max=128)], dtype="int64")
    model = Model("model", device="cpu", wrapper_path=WRAPPER, inputs=[x])
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location(WRAPPER, 10, 5)),
                     "s27": Symbol("s27", "s27", DimRef(0, 1), Location(WRAPPER, 11, 5))}
    model.constants = [Constant(0, "position_ids", (1, 128), "embeddings.position_ids")]
    model.constant_reads = [ConstantRead("cpp_fused_embedding_0", "in_ptr2", "position_ids", 128, "s27 - 1",
                                         (DimRef(0, 1),), Location("m/k.kernel.cpp", 50, 30), (1, 128))]
    return model


def test_read_past_constant_once_per_read_and_only_with_a_dim_to_blame():
    (f,) = _run(_position_ids_model(), "read-past-constant")
    assert (f.input, f.dim, f.severity) == (0, 1, Severity.WARNING)
    assert f.witness == "arg0_1.shape = (3, 129)"
    model = _position_ids_model()
    model.constant_reads.append(model.constant_reads[0])  # the same read in the vectorized loop and the tail
    assert len(_run(model, "read-past-constant")) == 1
    model = _position_ids_model()
    model.constant_reads[0].sources = ()  # an index whose dims the parser did not resolve: no witness
    assert _run(model, "read-past-constant") == []


# -- empty.py ----------------------------------------------------------------------------------------

def test_one_division_copied_twice_is_reported_once():
    model = _reduce_model()
    model.divisions.append(model.divisions[0])
    assert len(_run(model, "division-by-dynamic-size")) == 1


# -- ranges.py ---------------------------------------------------------------------------------------

def test_wrapper_divisions_are_not_kernel_users_of_a_symbol():
    # unenforced-lower-bound names the kernels that read a size; a division in the wrapper is none.
    (f,) = _run(_reduce_model(integer=True, in_wrapper=True), "unenforced-lower-bound")
    assert "triton_red_fused_add_amax_mean_0" in f.detail  # its reduction still reads s77
    model = _reduce_model(integer=True, in_wrapper=True)
    model.reductions = []
    found = _run(model, "unenforced-lower-bound")
    assert all("triton_red_fused_add_amax_mean_0" not in f.detail for f in found)


def test_dim_equality_of_a_dim_whose_witness_size_is_zero():
    # y [s77 - 3] (e.g. an unfold's window count): 0 at the witness's s77 = 3, no smaller size to try.
    model = _one_dim_model()
    model.inputs.append(Input(1, "arg1_1", [Dim(0, None, None, 0, tied_expr="s77 - 3", tie_enforced=Enforcement.ENV)]))
    assert W.witness_shapes(model, {})[1] == (0,)
    assert _run(model, "unenforced-dim-equality") == []
    model.inputs[1].dims[0].tied_expr = "s77 - 1"
    (f,) = _run(model, "unenforced-dim-equality")
    assert f.witness == "arg0_1.shape = (3, 8), arg1_1.shape = (1,)"


# -- derived.py --------------------------------------------------------------------------------------

def _derived_model(**rel) -> Model:
    """swin_merge on CPU: x [b, 2*h, ...] read as `s6 = (1.0/2.0)*arg0_1_size_1` (a quotient: the graph
    holds no symbol of the size itself)."""
    model = _one_dim_model()
    model.inputs[0].dims[0].symbol, model.symbols = None, {}
    fields = dict(ref=DimRef(0, 0), n=2, symbol="s6", enforced=Enforcement.ENV, location=Location(WRAPPER, 12, 5),
                  evidence=(Evidence.QUOTIENT,))
    fields.update(rel)
    model.relations = [Relation(**fields)]
    return model


def test_divisibility_only_where_the_package_reads_a_quotient_and_does_not_check_it():
    (f,) = _run(_derived_model(), "unenforced-divisibility")
    assert (f.input, f.dim) == (0, 0) and f.witness == "arg0_1.shape = (3, 8)"
    assert _run(_derived_model(enforced=Enforcement.ALWAYS), "unenforced-divisibility") == []
    assert _run(_derived_model(evidence=(Evidence.EXPORTED,)), "unenforced-divisibility") == []
    # compiled for exactly 2: every size in range is a multiple of 2.
    model = _derived_model()
    model.inputs[0].dims[0].max = 2
    assert _run(model, "unenforced-divisibility") == []
    # The graph reads the size itself (s77) and derives the quotient from it (`ps0 = s77 // 2`, a
    # strided slice's length or a convolution's output size): eager floors alike, nothing is assumed.
    model = _derived_model(symbol="ps0")
    model.inputs[0].dims[0].symbol = "s77"
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location(WRAPPER, 10, 5))}
    assert _run(model, "unenforced-divisibility") == []


# -- datarange.py ------------------------------------------------------------------------------------

def _clamp_model(bound_expr="s77", extent="401", sources: tuple[DimRef, ...] | None = None) -> Model:
    """tai_repeat_index on CPU: `0 <= tmp21 < ks2` with ks2 = s77 = embeddings.shape[0] (compiled for
    [2, 2048]) and the index clamped to [0, 400] by the kernel (an extent of 401, no input dims)."""
    e = Input(0, "arg0_1", [Dim(0, "s77", None, 2, 2048, "env"), Dim(1, None, 8, enforced="env")])
    model = Model("model", device="cpu", wrapper_path=WRAPPER, inputs=[e])
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location(WRAPPER, 10, 5))}
    model.assertions = [Assertion("cpp_fused_clamp_index_select_0", "index out of bounds: 0 <= tmp21 < ks2",
                                  Location("m/k.kernel.cpp", 40, 25), index_var="tmp21", lower=0, bound="ks2",
                                  bound_expr=bound_expr, bound_sources=sources or (DimRef(0, 0),),
                                  index_extent=extent)]
    return model


def test_dynamic_bound_against_a_clamped_index():
    (f,) = _run(_clamp_model(), "index-exceeds-dynamic-bound")
    assert (f.input, f.dim) == (0, 0) and f.witness.startswith("arg0_1.shape = (400, 8)")
    # an extent that is empty (or not a number): no index at all.
    assert _run(_clamp_model(extent="0"), "index-exceeds-dynamic-bound") == []
    # a bound read from a dim the package fixed: no size of it to choose.
    assert _run(_clamp_model(sources=(DimRef(0, 1),)), "index-exceeds-dynamic-bound") == []
    # a bound that is below 1 at every size it can take within the compiled max (s77 - 2048 <= 0):
    # the bound at 0 is empty-index-bound's finding, not this one's.
    assert _run(_clamp_model(bound_expr="s77 - 2048"), "index-exceeds-dynamic-bound") == []


def _count_model(count_min=None, count_max=None, enforced="env", cap=("s77",)) -> Model:
    """tai_nonzero_mm on CPU: u0 = the nonzero count of mask [n], n = s77 compiled for [2, 1024],
    checked by run_impl against [count_min, count_max]."""
    model = _nonzero_model(0)
    model.inputs[0].dims[0].max, model.inputs[0].dims[0].enforced = 1024, Enforcement(enforced)
    model.symbols["u0"] = Symbol("u0", "u0", None, Location(WRAPPER, 20, 5), unbacked=True,
                                 min=count_min, max=count_max)
    model.launches[0].arg_shapes = (cap,)
    return model


def test_count_check_reported_only_where_the_values_can_leave_it():
    (f,) = _run(_count_model(count_min=2), "data-dependent-size-check")
    assert f.message_key == "data-dependent-size-check.min"
    # u0 >= 10 against a mask of 3 elements (the witness): no input of that shape gives 9 nonzeros.
    assert _run(_count_model(count_min=10), "data-dependent-size-check") == []
    (f,) = _run(_count_model(count_max=1000), "data-dependent-size-check")
    assert f.message_key == "data-dependent-size-check.max" and f.witness.startswith("arg0_1.shape = (1001,)")
    # ... unless the mask's max 1024 is checked at every call and keeps the count within.
    assert _run(_count_model(count_max=2000, enforced="always"), "data-dependent-size-check") == []


def test_count_over_a_symbol_read_from_a_fixed_dim():
    # A size symbol whose dim the package fixed (x's 8 columns read as s5): no size of it to choose.
    model = _count_model(count_max=4, cap=("s5",))
    model.symbols["s5"] = Symbol("s5", "s5", DimRef(1, 1), Location(WRAPPER, 12, 5))
    assert _run(model, "data-dependent-size-check") == []


def test_run_impl_order_is_by_line_then_column_within_one_member_only():
    """What raises first at size 0 (a convolution or run_impl's `!= 0` check) is the one earlier in
    run_impl: the same line compares by column, another member or a missing place is never earlier."""
    at = Location(WRAPPER, 20, 5)
    assert E._before(Location(WRAPPER, 19, 9), at) and not E._before(at, Location(WRAPPER, 19, 9))
    assert E._before(Location(WRAPPER, 20, 4), at) and not E._before(at, at)
    assert not E._before(Location("m/other.cpp", 1, 1), at) and not E._before(None, at) and not E._before(at, None)


# -- unchecked-extern-call (rules/package.py): an index checked later, a sort's own indices ------------

def _unchecked_scatter_model(target=("256",), dim="0", space="s64 * 8", bound=256, index_shape=("s64",)) -> Model:
    """`scatter_reduce_two_out(buf5, buf5, dim, buf4, buf6)` unchecked, then a kernel that loads buf4 and
    checks `0 <= tmp7 < bound` over `space` (hist_bins' shape)."""
    model = _one_dim_model()
    model.symbols["s64"] = model.symbols.pop("s77")
    call = Launch("aoti_torch_cpu_scatter_reduce_two_out", ("buf5", "buf5", dim, "buf4", "buf6"),
                  Location(WRAPPER, 20, 5), extern=True, error_checked=False,
                  arg_shapes=(target, target, None, index_shape, index_shape))
    model.launches = [call, Launch("cpp_fused_gather_1", ("buf4", "buf7"), Location(WRAPPER, 30, 5))]
    model.assertions = [Assertion("cpp_fused_gather_1", f"index out of bounds: 0 <= tmp7 < {bound}L",
                                  Location(WRAPPER, 40, 5), bound_value=bound, index_buffer="buf4",
                                  space_expr=space)]
    return model


@pytest.mark.parametrize(("kwargs", "later"), [
    ({}, True),
    ({"target": None}, False),                # the target's sizes unknown
    ({"dim": "x"}, False),                    # a dim that is no constant
    ({"bound": 128}, False),                  # checked against another size than the target's
    ({"space": "s64 + 1"}, False),            # the kernel reads no whole multiple of the index
    ({"space": None}, False),
    ({"index_shape": ("0",)}, False),         # an empty index: nothing to read
    ({"space": "s64 // (s64 - s64)"}, False),  # a space that cannot be evaluated
])
def test_an_index_checked_later_in_full(kwargs: dict, later: bool) -> None:
    """hist_bins: the bins an unchecked scatter reads are loaded whole by a later kernel and checked
    against the target's rows: an info. Anything short of that keeps the plain warning."""
    model = _unchecked_scatter_model(**kwargs)
    (f,) = _run(model, "unchecked-extern-call")
    assert (f.message_key == "unchecked-extern-call.checked-later") is later
    assert f.severity == (Severity.INFO if later else Severity.WARNING)


def test_a_non_scatter_unchecked_call_is_not_read_for_indices() -> None:
    model = _unchecked_scatter_model()
    model.launches[0] = Launch("aoti_torch_cpu_index_put_", ("buf5", "buf4", "buf6"), Location(WRAPPER, 20, 5),
                               extern=True, error_checked=False, arg_shapes=(("256",), ("s64",), ("s64",)))
    (f,) = _run(model, "unchecked-extern-call")
    assert f.message_key == "unchecked-extern-call" and f.severity == Severity.WARNING


@pytest.mark.parametrize(("source", "reported"), [(("256",), False), (("128",), True), (None, True)])
def test_a_scatter_by_a_sorts_own_indices(source, reported: bool) -> None:
    """nucleus (CUDA): the index is the last output of a sort along the same dim of a tensor of the target's
    sizes: never out of range, not reported; another size (or an unknown one) is."""
    model = _unchecked_scatter_model()
    sort = Launch("aoti_torch_cpu_sort_stable", ("buf0", "var_0", "0", "1", "buf2", "buf4"), Location(WRAPPER, 15, 5),
                  extern=True, arg_shapes=(source, None, None, None, None, None) if source else ())
    model.launches.insert(0, sort)
    assert bool(_run(model, "unchecked-extern-call")) is reported


@pytest.mark.parametrize(("producer", "searched", "target", "dim", "reported"), [
    ("aoti_torch_cpu_bucketize_Tensor", ("s64",), ("1 + s64",), "0", False),      # m + 1 cells for 0..m
    ("aoti_torch_cpu_searchsorted_Tensor", ("s64",), ("1 + s64",), "0", False),
    ("aoti_torch_cpu_bucketize_Tensor", ("s64",), ("s64",), "0", True),           # m cells: m is past the end
    ("aoti_torch_cpu_bucketize_Tensor", (), ("1 + s64",), "0", True),             # the boundaries' sizes unknown
    ("aoti_torch_cpu_bucketize_Tensor", ("s64",), ("1 + s64",), "x", True),       # a dim that is no constant
    ("aoti_torch_cpu_bucketize_Tensor", ("s64",), ("1 + s64",), "1", True),       # past the target's rank
    ("aoti_torch_cpu_bucketize_Tensor", ("s64",), ("s64 // (s64 - s64)",), "0", True),  # cannot be evaluated
    ("aoti_torch_cpu_cumsum", ("s64",), ("1 + s64",), "0", True),                 # no insertion point
])
def test_a_scatter_by_a_bucketize_s_insertion_points(producer: str, searched, target, dim: str,
                                                     reported: bool) -> None:
    """stranger15/bucketize: counts per bucket, `scatter_add` by bucketize's insertion points (0..m, m the
    boundaries' length) into m + 1 cells: never out of range, not reported; a shorter target, unknown
    sizes or another producer keep the warning."""
    model = _unchecked_scatter_model(target=target, dim=dim)
    model.assertions = []
    values, bounds = ("s64",), searched
    shapes = (values, bounds) if producer.endswith("bucketize_Tensor") else (bounds, values)
    model.launches.insert(0, Launch(producer, ("arg0_1", "arg1_1", "0", "0", "buf4"), Location(WRAPPER, 15, 5),
                                    extern=True, arg_shapes=(*shapes, None, None, None)))
    assert bool(_run(model, "unchecked-extern-call")) is reported


@pytest.mark.parametrize(("ops", "extent", "size", "rejected"), [
    (("argmax",), "max(0, s77 - 1) + 1", 0, True),          # C++: an argmax over the emptied dim
    (("argmin",), "max((s77) - 1, 0) + 1", 0, True),        # Triton's form of the same
    (("argmax",), "max(0, s77 - 1) + 1", 3, False),         # the dim not empty
    (("argmax",), "max(0, 8 - 1) + 1", 0, False),           # an argmax over another, constant dim
    (("bucketize_Tensor",), "s77 + 1", 0, False),           # no reduction
    (("argmax",), "s77", 0, False),                         # an extent of no argmax's form
    (("argmax",), None, 0, False),
])
def test_an_index_that_is_an_argmax_over_the_emptied_dim(ops, extent, size: int, rejected: bool) -> None:
    """stranger15/ptr_net: the index is an argmax over the points, the dim the witness empties: eager's
    argmax raises first, so the package's check failing there is eager's rejection (at most info)."""
    model = _one_dim_model()
    a = Assertion("cpp_fused_argmax_gather_0", "index out of bounds: 0 <= tmp2 < ks0", Location(WRAPPER, 40, 5),
                  index_ops=ops, index_extent=extent)
    found = E.empty_argmax(model, a, {DimRef(0, 0): size})
    assert (found is not None) is rejected
    assert found is None or f"`{ops[0]}` over the emptied dim" in found
