"""A guard whose margin is a pad's amount in the exported graph (analyzer.query.padguard): read from the
graph's symbolic ints (analyzer.read.exported), matched against the guard's margin around its witness."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.app import api
from analyzer.core.model import DimRef, GraphNode, Model
from analyzer.query import padguard as PG
from analyzer.read import exported
from conftest import FIXTURES

SEW = FIXTURES / "stranger9"
GUARD = ("2*min(((-1) + (L['x'].size()[1] // 20)) // 2, 1 + (((-3) + (L['x'].size()[1] // 20)) // 2)) < "
         "(-1) + (L['x'].size()[1] // 20)")


@pytest.fixture(scope="module")
def sew() -> Model:
    (model,) = api.load(str(SEW / "sew.cpu.stripped.pt2"),
                        api.Options(exported_program=str(SEW / "sew.ep.pt2"))).models
    return model


def _node(op: str, *inputs: dict, out: dict | None = None, name: str = "n") -> dict:
    return {"name": name, "target": op, "inputs": [{"name": f"a{i}", "arg": a} for i, a in enumerate(inputs)],
            "outputs": [out] if out else []}


def test_the_graph_symbolic_ints_become_guard_text_over_input_sizes() -> None:
    nodes = [
        _node("torch.ops.aten.sym_size.int", {"as_tensor": {"name": "x"}}, {"as_int": 1},
              out={"as_sym_int": {"as_name": "s"}}),
        _node("_operator.floordiv", {"as_sym_int": {"as_name": "s"}}, {"as_int": 4}, out={"as_sym_int": {"as_name": "q"}}),
        _node("torch.sym_min", {"as_sym_int": {"as_name": "q"}}, {"as_int": 7}, out={"as_sym_int": {"as_name": "m"}}),
        _node("_operator.sub", {"as_sym_int": {"as_name": "q"}}, {"as_sym_int": {"as_name": "m"}},
              out={"as_sym_int": {"as_name": "d"}}),
        # An op outside the whitelist leaves its output unread, and whatever uses it.
        _node("_operator.pow", {"as_sym_int": {"as_name": "q"}}, {"as_int": 2}, out={"as_sym_int": {"as_name": "p"}}),
        _node("torch.ops.aten.pad.default", {"as_tensor": {"name": "x"}},
              {"as_sym_ints": [{"as_int": 0}, {"as_name": "d"}, {"as_name": "p"}, {"as_name": "nowhere"}]}),
    ]
    *_, pad = exported.graph_nodes({"nodes": nodes})
    assert pad.sym_lists == ((0, "((L['x'].size()[1]) // (4)) - (min((L['x'].size()[1]) // (4), 7))", "?", "?"),)
    model = Model(name="m", graph=[pad])
    assert PG.pad_amounts(model) == ["L['x'].size()[1] // 4 - min(L['x'].size()[1] // 4, 7)"]


def test_a_symbolic_chain_past_its_cap_is_unread() -> None:
    nodes = [_node("torch.ops.aten.sym_size.int", {"as_tensor": {"name": "x"}}, {"as_int": 0},
                   out={"as_sym_int": {"as_name": "s0"}})]
    for i in range(1, 400):
        nodes.append(_node("_operator.add", {"as_sym_int": {"as_name": f"s{i - 1}"}}, {"as_sym_int": {"as_name": f"s{i - 1}"}},
                           out={"as_sym_int": {"as_name": f"s{i}"}}))
    nodes.append(_node("torch.ops.aten.pad.default", {"as_tensor": {"name": "x"}},
                       {"as_sym_ints": [{"as_name": "s3"}, {"as_name": "s399"}]}))
    (*_, pad) = exported.graph_nodes({"nodes": nodes})
    assert pad.sym_lists[0][0].count("L['x']") == 8 and pad.sym_lists[0][1] == "?"


@pytest.mark.parametrize(("guard", "margin"), [
    ("a < b", "(b) - (a)"), ("a <= b", "(b) - (a)"), ("a > b", "(a) - (b)"), ("a >= b", "(a) - (b)"),
    ("a == b", None), ("a < b < c", None), ("a % 4", None), ("(", None)])
def test_the_margin_is_what_the_comparison_keeps_positive(guard: str, margin: str | None) -> None:
    assert PG._margin(guard) == margin


def test_sew_pads_by_its_guards_margin_and_by_nothing_where_it_breaks(sew: Model) -> None:
    t = DimRef(0, 1)
    assert PG.zero_pad(sew, GUARD, [(t, 60)]) is not None
    assert PG.zero_pad(sew, GUARD, [(t, 100), (t, 420)]) is not None
    # t = 80 keeps the guard: the pad there is by 1 frame, not 0.
    assert PG.zero_pad(sew, GUARD, [(t, 80)]) is None
    # A guard whose margin is no pad of the graph; a comparison's other order is another margin.
    assert PG.zero_pad(sew, "L['x'].size()[1] // 20 > 3", [(t, 60)]) is None
    assert PG.zero_pad(sew, GUARD.replace(" < ", " > "), [(t, 60)]) is None
    assert PG.zero_pad(sew, GUARD, []) is None


def test_without_a_symbolic_pad_or_guards_nothing_matches(sew: Model) -> None:
    t = DimRef(0, 1)
    no_pads = dataclasses.replace(sew, graph=[n for n in sew.graph if n.op not in PG.PAD_OPS])
    assert PG.zero_pad(no_pads, GUARD, [(t, 60)]) is None
    assert PG.zero_pad(dataclasses.replace(sew, guards=[]), GUARD, [(t, 60)]) is None
    unreadable = dataclasses.replace(sew, graph=[GraphNode("p", "aten.pad.default", sym_lists=(("x.foo()",),))])
    assert PG.zero_pad(unreadable, GUARD, [(t, 60)]) is None
    assert PG.zero_pad(sew, "L['x'].size()[1] < L['x'].bar()", [(t, 60)]) is None


def test_a_graph_of_many_pads_compares_a_bounded_number(sew: Model) -> None:
    pads = [GraphNode(f"p{i}", "aten.pad.default", sym_lists=((0, f"L['x'].size()[1] - {i}"),)) for i in range(500)]
    many = dataclasses.replace(sew, graph=[*pads, *sew.graph])
    assert len(PG.pad_amounts(many)) == PG.MAX_AMOUNTS
    assert PG.zero_pad(many, GUARD, [(DimRef(0, 1), 60)]) is None   # SEW's own pad is past the cap
