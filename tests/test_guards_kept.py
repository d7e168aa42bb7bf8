"""The search over an exported program's guards (analyzer.query.guards) is kept on the model: the
rules' questions about one model share one compiled search and its evaluations, `never_zero` answers
an expression once, a model changed since is searched again, and the budget cuts off the same
search whether or not another question came first."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from analyzer.app import api
from analyzer.core.model import DimRef, Enforcement, Model, Relation
from analyzer.query import guards as G, zeros as Z
from conftest import FIXTURES

GUARDS = ["(L['x'].size()[0] % 2) == 1", "L['x'].size()[0] > 4", "L['idx'].size()[0] <= L['x'].size()[0]"]
X0, IDX0 = DimRef(0, 0), DimRef(1, 0)


@pytest.fixture(scope="module")
def loaded() -> Model:
    (model,) = api.load(str(FIXTURES / "gather_dyn.cpu.stripped.pt2"),
                        api.Options(exported_program=str(FIXTURES / "gather_dyn.ep.pt2"))).models
    return model


def _fresh(model: Model, guards: list[str] = GUARDS) -> Model:
    """A copy of the model that has answered nothing (nothing kept), with `guards`."""
    return dataclasses.replace(model, guards=list(guards))


def _answers(model: Model) -> tuple:
    return G.unchecked(model), G.base_sizes(model), G.keeping(model, X0, range(2, 40)), G.keeping(model, IDX0, [3, 9])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the guards are compiled into a search and how often the search evaluates them."""
    counts = {"facts": 0, "evaluate": 0}
    facts, evaluate = G._facts, G.GuardSet.evaluate

    def counting_facts(model: Model):
        counts["facts"] += 1
        return facts(model)

    def counting_evaluate(self: G.GuardSet, sizes):
        counts["evaluate"] += 1
        return evaluate(self, sizes)

    monkeypatch.setattr(G, "_facts", counting_facts)
    monkeypatch.setattr(G.GuardSet, "evaluate", counting_evaluate)
    return counts


def test_the_questions_about_one_model_share_one_search(loaded: Model, counted: dict[str, int]) -> None:
    model = _fresh(loaded)
    first = _answers(model)
    assert first[0] and first[1] == {X0: 5} and first[2] == (5, {X0: 5})  # x.shape[0] = 5 keeps every guard
    assert counted["facts"] == 1 and counted["evaluate"] > 0
    evaluated = counted["evaluate"]
    assert _answers(model) == first
    assert counted == {"facts": 1, "evaluate": evaluated}  # nothing compiled or evaluated again
    assert _answers(_fresh(loaded)) == first and counted["facts"] == 2  # another model: its own search


def test_a_model_changed_since_is_searched_again(loaded: Model) -> None:
    model = _fresh(loaded)
    model.inputs = [dataclasses.replace(i, dims=[dataclasses.replace(d) for d in i.dims]) for i in loaded.inputs]
    before = _answers(model)
    model.inputs[0].dims[0].declared_min = 6   # in place: x.shape[0] >= 6, the first odd size is 7
    changed = _answers(model)
    assert changed != before and changed[1] == {X0: 7}
    assert changed == _answers(dataclasses.replace(model))   # as a model that answered nothing before
    # x.shape[0] a multiple of 2 that the package checks: no odd size is tried.
    model.relations = [Relation(X0, 2, "s77", enforced=Enforcement.ALWAYS)]
    assert _answers(model) == _answers(dataclasses.replace(model)) != changed
    model.guards = GUARDS[:1]
    assert _answers(model) == _answers(dataclasses.replace(model)) != changed
    model.guards = []
    assert _answers(model) == ([], {}, None, None)


def test_never_zero_enumerates_an_expression_once(loaded: Model, monkeypatch: pytest.MonkeyPatch) -> None:
    evaluated = [0]
    evaluate = Z.intervals.evaluate

    def counting(expr: str, values):
        evaluated[0] += 1
        return evaluate(expr, values)

    monkeypatch.setattr(Z.intervals, "evaluate", counting)
    dims = [dataclasses.replace(d) for d in loaded.inputs[0].dims]
    model = dataclasses.replace(loaded, inputs=[dataclasses.replace(loaded.inputs[0], dims=dims), *loaded.inputs[1:]])
    dims[0].max = 10   # s77 = x.shape[0] in [2, 10]: 9 points
    assert not Z.never_zero(model, "s77 - 3") and evaluated[0] == 2   # 2, then 3 is 0
    assert Z.never_zero(model, "s77 + 1") and evaluated[0] == 11
    assert not Z.never_zero(model, "s77 - 3") and Z.never_zero(model, "s77 + 1") and evaluated[0] == 11
    # The answer is kept by the expression and the ranges its symbols take: a range changed since
    # is enumerated again.
    dims[0].min = 4
    assert Z.never_zero(model, "s77 - 3") and evaluated[0] == 18


def test_what_is_kept_is_not_pickled(loaded: Model, counted: dict[str, int]) -> None:
    """-j's workers send the models back: the search stays behind, and the copy searches again."""
    model = _fresh(loaded)
    answers = _answers(model)
    assert b"GuardSet" not in pickle.dumps(model)
    copy = pickle.loads(pickle.dumps(model))
    assert _answers(copy) == answers and counted["facts"] == 2


def test_the_budget_cuts_off_the_same_search_whatever_was_asked_before(
        loaded: Model, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each question is charged what it would cost asked first (a kept answer what it cost to
    find): with too small a budget it answers nothing, asked first or after the others."""
    questions = [G.base_sizes, G.unchecked, lambda m: G.keeping(m, X0, range(2, 40)), G.unchecked, G.base_sizes]
    cut, budgets = 0, range(0, 7_500, 500)   # asked first, unchecked costs 6,966 node evaluations here
    for budget in budgets:
        monkeypatch.setattr(G, "BUDGET", budget)
        asked_first = [question(_fresh(loaded)) for question in questions]
        model = _fresh(loaded)
        assert [question(model) for question in questions] == asked_first, budget
        cut += not asked_first[1]
    assert 0 < cut < len(budgets)   # some budgets stop the search for unchecked guards, others let it finish


def test_a_kept_answer_is_charged_what_it_cost_to_find(loaded: Model, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fresh(loaded)
    first = G._Search.of(model)
    assert first is not None
    base, cost, nodes = first.base(), first.spent, len(first.facts.found.nodes)
    assert base == {X0: 5} and cost > 0 and cost % nodes == 0   # one charge per assignment tried
    again = G._Search.of(model)
    assert again is not None and again.facts is first.facts
    assert again.base() == base and again.spent == cost
    again.failing(base)   # kept too, and charged as if evaluated
    assert again.spent == cost + nodes
    # Past the budget, the base is not searched for again: every question would be past it too.
    searched = [0]
    search = G._base

    def counting(*args):
        searched[0] += 1
        return search(*args)

    monkeypatch.setattr(G, "_base", counting)
    monkeypatch.setattr(G, "BUDGET", cost - 1)
    model = _fresh(loaded)
    assert G.base_sizes(model) == {} and G.unchecked(model) == [] and G.base_sizes(model) == {}
    assert searched[0] == 1


def test_never_zero_proves_an_unbounded_tail_by_intervals(loaded: Model) -> None:
    """A window padded up to a multiple of 7 (fixtures/stranger6/win_attn's run_impl checks it before
    dividing) is never 0 for sizes >= 1 however large: the first HEAD + 1 sizes are tried, the rest
    bounded by intervals ([(2 + 64 + 1) // 7, inf) > 0). A check that is 0 only far past the head is
    not proved, nor one whose tail intervals cannot bound away from 0."""
    dims = [dataclasses.replace(d) for d in loaded.inputs[0].dims]
    model = dataclasses.replace(loaded, inputs=[dataclasses.replace(loaded.inputs[0], dims=dims), *loaded.inputs[1:]])
    dims[0].max = None  # s77 = x.shape[0] in [2, inf)
    padded = "floordiv(s77 + (7 + (-1) * (s77 % 7)) % 7, 7)"
    assert Z.never_zero(model, padded)
    assert not Z.never_zero(model, "s77 - 1000")            # 0 at 1000: the tail's interval holds 0
    assert not Z.never_zero(model, "floordiv(s77, 7)")      # 0 at 2..6, inside the head
    assert not Z.never_zero(model, "(s77 % 5) + (s77 % 3)")  # 0 at 15; the tail cannot tell
    dims[0].min = 1
    assert Z.never_zero(model, padded) and not Z.never_zero(model, "floordiv(s77 + 5, 7)")
