"""AOTI003's findings about indices the input's *values* set rather than its sizes: an extent an
unbacked symbol gives (`torch.arange(n.item())`; `bounded`: one its op bounds by input sizes, read at
that bound), a position computed from an input's values with sizes (`max(x0 + lengths[x1] - seq,
0)`: left-padded positions from per-row lengths), and a floating-point input's own value cast to an
index (row ids in a column of patches)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Iterator

from ..expr import intervals
from ..expr.values import VALUE
from ..core.findings import DimWitness, Finding
from ..core.messages import CHAIN
from ..core.model import Assertion, DimRef, Model
from ..query import valueindex as VI, witness as W
from . import Context, Rule
from . import enforcement as E


def unbacked_extent(rule: Rule, model: Model, ctx: Context, a: Assertion,
                    effect: dict) -> Finding | None:
    """An extent set by an input's values (`torch.arange(n.item())`): only a runtime assert on the
    unbacked symbol (`torch._check(n <= 64)`, always run) can bound it."""
    extent, bound_value = a.index_extent, a.bound_value
    if extent is None or bound_value is None:  # pragma: no cover - the caller's `keep` gives both
        return None
    unbacked = {n: model.symbols[n] for n in intervals.names(extent)
                if n in model.symbols and model.symbols[n].unbacked}
    ranges = dict(W.dim_ranges(model))
    for name, sym in unbacked.items():
        ranges[name] = (sym.min if sym.min is not None else 0, sym.max)
    try:
        _, high = intervals.evaluate_interval(extent, ranges)
    except ValueError:
        return None
    if high <= bound_value:
        return None
    names = ", ".join(sorted(unbacked))
    inputs = ", ".join(model.input_text(i) for i in a.index_extent_value_inputs if i < len(model.inputs))
    value = bound_value + 1
    fields = dict(assertion=a.message, kernel=a.kernel, extent=extent, symbols=names, inputs=inputs,
                  bound_value=bound_value, value=value, **effect)
    first = a.index_extent_value_inputs[0]
    witness = rule.MESSAGES["index-exceeds-constant-bound.values-witness"].format(
        shapes=W.witness(model, {}), symbols=names, value=value, inputs=inputs)
    return rule.finding(
        model, ctx, rule.MESSAGES["index-exceeds-constant-bound.values"].format(**fields), a.location, subject=a,
        eager_rejects=E.eager_rejects_table(str(fields["outcome"])), kernel=a.kernel, input=first, symbol=names,
        witness=witness, fix=rule.FIXES["index-exceeds-constant-bound.values"].format(**fields), chain=a.chain,
        key=f"extent:values:in{first}>{bound_value};kernel:{a.kernel}")


def op_values(rule: Rule, model: Model, ctx: Context, a: Assertion, effect: dict) -> Iterator[Finding]:
    """An index an op computes from an input's values (`searchsorted` into 16 boundaries: 0..16) whose
    range passes a constant table at every size: the values that take the op there, at the witness's sizes."""
    extent, bound_value = a.index_extent, a.bound_value
    try:
        top = intervals.evaluate(extent or "", {}) - 1
    except ValueError:
        return
    if bound_value is None or top < bound_value or not a.index_ops or not a.index_sources:
        return
    op, first = re.sub(r"_(Tensor|Scalar|stable)$", "", a.index_ops[0]), a.index_sources[0]
    inputs = ", ".join(model.input_text(i) for i in a.index_sources)
    fields = dict(assertion=a.message, kernel=a.kernel, op=op, inputs=inputs, top=int(top), reach=E.reach_text(a),
                  bound_value=bound_value, limit=bound_value - 1, **effect)
    witness = rule.MESSAGES["index-exceeds-constant-bound.op-values-witness"].format(
        shapes=W.witness(model, {}), reach=fields["reach"])
    yield rule.finding(
        model, ctx, rule.MESSAGES["index-exceeds-constant-bound.op-values"].format(**fields), a.location, subject=a,
        eager_rejects=E.eager_rejects_table(str(fields["outcome"])), kernel=a.kernel, input=first, witness=witness,
        fix=rule.FIXES["index-exceeds-constant-bound.op-values"].format(**fields), chain=a.chain,
        key=f"extent:op-values:in{first}:{op}>{bound_value};kernel:{a.kernel}")


def all_input_values(rule: Rule, model: Model, ctx: Context,
                     checks: Iterable[tuple[Assertion, dict]]) -> Iterator[Finding]:
    """`input_values` of each check (with its effect's fields), one finding per input, expression and
    table."""
    seen: set[str] = set()
    for a, effect in checks:
        finding = input_values(rule, model, ctx, a, effect)
        if finding is not None and finding.key not in seen:
            seen.add(finding.key)
            yield finding


def input_values(rule: Rule, model: Model, ctx: Context, a: Assertion,
                 effect: dict) -> Finding | None:
    """A position computed from one input's values and sizes that reaches past its table for a
    value of that input (at the witness's sizes, whatever they are), while a lookup of the value
    itself (token ids into their vocabulary) is the caller's data and is not reported. Eager makes
    the same lookup, so eager rejects those values too: an info, whatever the check does."""
    bound_value = a.bound_value
    value = VI.smallest_value(model, a)
    if value is None or bound_value is None:
        return None
    if VI.cast(model, a):
        return _cast_value(rule, model, ctx, a, effect)
    (first,) = a.index_sources
    inputs = model.input_text(first)
    shown = VI.shown(model, a)
    fields = dict(assertion=a.message, kernel=a.kernel, inputs=inputs, upper=shown, bound_value=bound_value,
                  value=value, **effect)
    witness = rule.MESSAGES["index-exceeds-constant-bound.input-values-witness"].format(
        shapes=W.witness(model, {}), value=value, inputs=inputs)
    chain = (*a.chain, rule.CHAIN["index-exceeds-constant-bound.input-value"].format(
        index_var=a.index_var or "the index", upper=shown, inputs=inputs, value=value, bound_value=bound_value))
    # A position that grows with a size too (the running sum of a mask): the smallest size at which
    # values of 1 (a mask of ones) reach the bound, a witness of its own.
    sized = _at_ones(model, a.value_upper or "", bound_value)
    dims = () if sized is None else (DimWitness(sized[0].input, sized[0].dim, sized[1], rule.MESSAGES[
        "index-exceeds-constant-bound.input-values-witness"].format(
            shapes=W.witness(model, {sized[0]: sized[1]}), value=1, inputs=inputs)),)
    return rule.finding(
        model, ctx, rule.MESSAGES["index-exceeds-constant-bound.input-values"].format(**fields), a.location,
        subject=a, eager_rejects=E.EAGER["table"], kernel=a.kernel, input=first, witness=witness, dims=dims,
        witnesses=(witness, *(d.witness for d in dims)) if dims else (),
        fix=rule.FIXES["index-exceeds-constant-bound.input-values"].format(**fields), chain=chain,
        key=f"extent:input-values:in{first}:{W.normalize_expr(model, a.value_upper or '')}>{bound_value}")


def _cast_value(rule: Rule, model: Model, ctx: Context, a: Assertion, effect: dict) -> Finding:
    """A floating-point input's value cast to an index: no id the caller knows for one, so said (an
    info: eager's lookup raises at the same values)."""
    (first,) = a.index_sources
    inputs = model.input_text(first)
    fields = dict(assertion=a.message, kernel=a.kernel, inputs=inputs, bound_value=a.bound_value,
                  value=a.bound_value, dtype=model.inputs[first].dtype, **effect)
    witness = rule.MESSAGES["index-exceeds-constant-bound.input-values-witness"].format(
        shapes=W.witness(model, {}), value=a.bound_value, inputs=inputs)
    chain = (*a.chain, rule.CHAIN["index-exceeds-constant-bound.cast-value"].format(
        index_var=a.index_var or "the index", **fields))
    return rule.finding(
        model, ctx, rule.MESSAGES["index-exceeds-constant-bound.cast-values"].format(**fields), a.location,
        subject=a, eager_rejects=E.EAGER["table"], kernel=a.kernel, input=first, witness=witness,
        fix=rule.FIXES["index-exceeds-constant-bound.cast-values"].format(**fields), chain=chain,
        key=f"extent:cast-values:in{first}>{a.bound_value}")


def bounded(model: Model, a: Assertion, extent: str, symbols: tuple[str, ...]) -> Assertion:
    """`a` with its extent read at the bound of its unbacked sizes, the chain saying so."""
    steps = tuple(CHAIN["unbacked-bound"].format(symbol=n, bound=W.display_expr(model, model.symbols[n].max_expr or ""))
                  for n in symbols)
    return replace(a, index_extent=extent, chain=(*a.chain, *steps))


def _at_ones(model: Model, upper: str, bound_value: int) -> tuple[DimRef, int] | None:
    """The first dim (and its smallest size the package accepts) at which the position `upper`, with the
    input's values at 1, reaches the table's bound; None where it stays below at every size."""
    at_one = intervals.substitute(upper, {VALUE: "1"})  # `upper` parsed already (VI.smallest_value)
    sizes = ((ref, W.smallest_exceeding(model, at_one, ref, bound_value - 1)) for ref in W.expr_dims(model, at_one) or ())
    return next(((ref, size) for ref, size in sizes if size is not None), None)
