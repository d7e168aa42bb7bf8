"""AOTI003's findings about an index whose extent reaches past a constant table (`bounds.py`'s
IndexExceedsConstantBound): what a check says of its extent, bound and dims is worked out once
(`table_words`), and each kernel that holds the check adds its own name, place and chain
(`table_finding`). A package may copy one check into thousands of kernels."""

from __future__ import annotations

import math
from typing import Mapping
from dataclasses import dataclass, field

from ..core.findings import DimWitness, Finding
from ..core import messages
from ..core.messages import NO_BOUND, Template, enforced
from ..core.model import Assertion, DimRef, Enforcement, Model, where
from ..expr import intervals
from ..query import guards as G, sizes, witness as W
from ..query.headline import template_values
from . import Context, Rule
from . import enforcement as E


@dataclass(frozen=True)
class TableWords:
    """What a finding of `index-exceeds-constant-bound` says of its extent, bound and dims, the same
    for every kernel that holds the check (`table_words`)."""

    ref: DimRef
    assignment: dict[DimRef, int]
    fields: dict[str, object]
    message: Template
    fix: Template
    step_fields: dict[str, object]  # the chain's step from the index to the bound, but the index's name
    is_unbounded: bool
    breaks_guard: bool          # the witness breaks an export guard: what eager does is unknown
    witnesses: tuple[str, ...]
    dims: tuple[DimWitness, ...]
    symbol: str | None
    key: str
    # The fix and the chain's step, made once for what their templates read (`_said`): the same
    # for every kernel that holds the check.
    said: dict[tuple, str] = field(default_factory=dict, compare=False)


def table_words(rule: Rule, model: Model, extent: str, bound_value: int,
                choices: list[tuple[DimRef, int]]) -> TableWords:
    """The words of a check whose extent reaches past its table: the smallest exceeding size of
    each dim in `choices` (the first is the witness)."""
    ref, size = choices[0]
    dim = model.known_dim(ref)
    assignment = {ref: size}
    value = W.evaluate_at(model, extent, assignment)
    is_unbounded = sizes.unbounded(dim)
    high_dim = sizes.effective_max(dim)
    fields: dict[str, object] = dict(
        extent=W.display_expr(model, extent), dim_display=W.dim_display(model, ref), where=where(ref), limit=size - 1,
        bound_value=bound_value, max=high_dim, max_origin=max_origin(dim), check_expr=W.check_expr(model, ref),
        no_bound=NO_BOUND["none" if high_dim is None else "int32"].format(max=high_dim))
    always = dim.enforced is Enforcement.ALWAYS and dim.max is not None and dim.max == high_dim
    return TableWords(
        ref, assignment, fields,
        rule.MESSAGES["index-exceeds-constant-bound.unbounded" if is_unbounded else "index-exceeds-constant-bound.bounded"],
        rule.FIXES["index-exceeds-constant-bound.enforced" if always else "index-exceeds-constant-bound"],
        dict(extent=fields["extent"], assignment=W.assignment_text(model, assignment),
             value=int_text(None if value is None else value - 1), bound_value=bound_value),
        is_unbounded, G.breaks(model, assignment),
        tuple(W.witness(model, {r: n}) for r, n in choices),
        tuple(DimWitness(r.input, r.dim, n, W.witness(model, {r: n})) for r, n in choices),
        W.symbol_of(model, ref), f"extent:{W.normalize_expr(model, extent)}>{bound_value}")


def table_finding(rule: Rule, model: Model, ctx: Context, a: Assertion, words: TableWords,
                  outcome: dict[str, str]) -> Finding:
    """The finding of one check whose extent reaches past its table, in the kernel that holds it
    (`outcome`: bounds.outcome_fields of the check)."""
    fields = dict(assertion=a.message, kernel=a.kernel, **words.fields, **outcome)
    step = _said(words, rule.CHAIN["index-exceeds-constant-bound.extent"],
                 dict(index_var=a.index_var or "the index", **words.step_fields))
    chain = (*a.chain, step, *E.value_reach(a))
    # An error when the compiled range reaches past the bound (the package runs those sizes into the
    # check; the declared range only: a warning). Past an export guard eager runs other code: unknown.
    reaches = words.is_unbounded or compiled_reaches(model, a)
    eager = None if words.breaks_guard else E.eager_rejects_table(str(fields["outcome"])) if reaches else \
        E.eager_rejects_past_range(model, a, str(fields["outcome"]))
    ref = words.ref
    return rule.finding(
        model, ctx, words.message.format(**fields), a.location, subject=a, outside_contract=not reaches,
        eager_rejects=eager, kernel=a.kernel, input=ref.input, dim=ref.dim, symbol=words.symbol,
        witnesses=words.witnesses, fix=_said(words, words.fix, fields), chain=chain, dims=words.dims,
        key=f"{words.key};kernel:{a.kernel}")


def _said(words: TableWords, template: Template, fields: Mapping[str, object]) -> str:
    """`template` filled with `fields`, once per check for the values of the fields it names (a
    trace of the catalog's use fills it afresh each time)."""
    if messages.TRACE:
        return template.format(**fields)
    # The fields are the words' and the check's texts and numbers: hashable.
    key = (template.table, template.key, *template_values(template, fields))
    text = words.said.get(key)
    if text is None:
        text = words.said[key] = template.format(**fields)
    return text



def exceeding_dims(model: Model, extent: str, bound_value: int, refs: list[DimRef]) -> list[tuple[DimRef, int]]:
    """Every dim whose smallest exceeding size exists, with that size (input order; unbounded
    ones first): the first leads the finding, each gets a witness of its own."""
    ordered = sorted(refs, key=lambda r: (not sizes.unbounded(model.known_dim(r)), r))
    found = [(ref, W.smallest_exceeding(model, extent, ref, bound_value)) for ref in ordered]
    return [(ref, size) for ref, size in found if size is not None]


def compiled_reaches(model: Model, a: Assertion) -> bool:
    """True when the index's extent exceeds the constant bound within the compiled ranges alone
    (`check_input_N`'s min and max, no max: unbounded), whatever the exported program declares."""
    ranges = {}
    for name, ref in W.symbol_dims(model).items():
        dim = model.dim(ref)
        if dim is not None:
            ranges[name] = (dim.value, dim.value) if dim.value is not None else (max(dim.min or 0, 0), dim.max)
    if a.index_extent is None:  # pragma: no cover - `keep` gave every assertion here an extent
        return True
    try:
        _, high = intervals.evaluate_interval(a.index_extent, ranges)
    except ValueError:
        return True
    return a.bound_value is not None and high > a.bound_value


def max_origin(dim) -> str:
    """Where `sizes.effective_max` comes from, in words."""
    return enforced("max-origin", "declared" if sizes.max_is_declared(dim) else dim.enforced)


def int_text(value: float | None) -> str:
    if value is None or isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return "?" if value is None else str(value)
    return str(int(value)) if float(value).is_integer() else str(value)
