"""AOTI023 ceil-mode-pool-traced-rounding: the size arithmetic of a ceil-mode pooling as PyTorch defines
it and as Inductor's `pooling_size` compiles it for one traced size (analyzer.query.traced.Rounding), and
the rule on round 19's HRNet fusion (fixtures/stranger19: w = 11 and 12 returned wrong values there, with
and without AOTI_RUNTIME_CHECK_INPUTS=1) and on a copy of its graph edited to take the other branch."""

from __future__ import annotations

import dataclasses

from conftest import FIXTURES
from analyzer.app import api
from analyzer.core.model import Model
from analyzer.query import traced as T
from test_rules import _run

HRNET = FIXTURES / "stranger19" / "hrnet_fuse"


def _hrnet() -> Model:
    (model,) = api.load(f"{HRNET}.cpu.stripped.pt2", api.Options(exported_program=f"{HRNET}.ep.pt2")).models
    return model


def ceil_branch_model() -> Model:
    """hrnet_fuse with its pool made `max_pool2d(2, 3, ceil_mode=True)` traced on a 7 x 7 map: ceil and floor
    differ there (3 and 2 windows) and no last window starts past the map, so Inductor compiles ceil's
    count without that correction, which eager applies at a map of 6 (2 windows, the package 3)."""
    model = _hrnet()
    pool = next(n for n in model.graph if n.op == "aten.max_pool2d.default")
    params = dict(pool.params, kernel_size=(2, 2), stride=(3, 3))
    edited = dataclasses.replace(pool, params=tuple(params.items()), arg_hints=((2, 16, 7, 7),))
    model.graph = [edited if n is pool else n for n in model.graph]
    return model


def test_pytorch_ceil_mode_and_inductor_rounding():
    r = T.Rounding(kernel=3, stride=2, padding=0, dilation=1)
    # A map of 6: windows at 0, 2 and a last one from 4 (ceil), 2 by floor.
    assert (r.floor(6), r.ceil(6, True)) == (2, 3)
    # Traced at 5 (odd) both give 2: floor is compiled, for every size.
    assert r.compiled(6, traced=5) == (2, True)
    # Traced at 6 ceil is compiled, and it is right at every size.
    assert all(r.compiled(x, traced=6) == (r.ceil(x, True), False) for x in range(3, 200))
    # kernel 2, stride 3: at a map of 3 ceil mode's last window would start at 3, past the map: eager drops it.
    k = T.Rounding(kernel=2, stride=3, padding=0, dilation=1)
    assert (k.ceil(3, False), k.ceil(3, True)) == (2, 1)
    assert k.compiled(3, traced=7) == (2, False)   # traced where no window is dropped: none ever is
    assert k.compiled(3, traced=3) == (1, True)    # traced where it is: the count equals floor's, so floor


def test_hrnet_ceil_pool_is_compiled_as_floor():
    """The width's map `(w - 1)//2 + 1` was 5 columns in the traced example (w = 9): the package pools
    `(m - 3)//2 + 1`; at w = 11 (6 columns) that is 2 where eager pools 3. The height's map (6 rows traced)
    was compiled with ceil mode's count: no finding on h."""
    (f,) = _run(_hrnet(), "ceil-mode-pool-traced-rounding")
    assert (f.code, f.message_key, f.input, f.dim, f.witness) == (
        "AOTI023", "ceil-mode-pool-traced-rounding", 0, 3, "x.shape = (3, 8, 7, 11)")
    assert "traced example's 5 columns: ceil and floor agree there" in f.detail
    assert "`(m - 3) // 2 + 1` windows" in f.detail
    assert f.chain == ("x.shape[3] = 11: a map of 6 columns, pooled into 3 by eager and 2 by the package",)
    assert f.kernel == "cpp_fused_convolution_max_pool2d_with_indices_relu_1"


def test_traced_correction_branch_and_both_sides():
    (f,) = _run(ceil_branch_model(), "ceil-mode-pool-traced-rounding")
    assert "it decided there whether the last window starts past the map" in f.detail
    # Both sides break: each with its own smallest size.
    assert [(d.input, d.dim) for d in f.dims] == [(0, 2), (0, 3)]
    assert len(f.chain) == 2 and all("pooled into 2 by eager and 3 by the package" in c for c in f.chain)


def test_nothing_without_hints_or_ceil_mode_or_kernel():
    model = _hrnet()
    pool = next(n for n in model.graph if n.op == "aten.max_pool2d.default")
    for edit in (dict(arg_hints=((2, 16, None, None),)), dict(arg_hints=()),
                 dict(params=tuple(dict(pool.params, ceil_mode=False).items())),
                 dict(params=tuple(dict(pool.params, kernel_size=(6, 6)).items()))):   # ATen's fallback
        model.graph = [dataclasses.replace(pool, **edit) if n.op == pool.op else n for n in model.graph]
        assert not list(T.rounded_pools(model)), edit
    model.graph = [pool if n.op == pool.op else n for n in model.graph]
    model.kernels = {k: v for k, v in model.kernels.items() if "max_pool2d" not in k}
    assert not list(T.rounded_pools(model))


def test_a_graph_of_many_poolings_is_searched_within_a_cap():
    """Poolings over one map share one search; past MAX_SEARCHES distinct maps (a hostile or generated graph)
    the rest are not searched, so the rule's cost is bounded whatever the graph holds."""
    model = _hrnet()
    pool = next(n for n in model.graph if n.op == "aten.max_pool2d.default")
    same = [dataclasses.replace(pool, name=f"p{i}") for i in range(500)]
    model.graph = same
    assert len(list(T.rounded_pools(model))) == 500     # one search, one finding per node
    model.graph = [dataclasses.replace(pool, name=f"p{i}", arg_sizes=(("s77", 16, "(s53 - 1)//2 + 1",
                                                                       f"(s0 - 1)//2 + {i + 1}"),))
                   for i in range(500)]
    found = list(T.rounded_pools(model))
    assert len({p.dims[0].expr for p in found}) <= T.MAX_SEARCHES < 500
