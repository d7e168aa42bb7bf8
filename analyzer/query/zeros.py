"""Whether a size expression of the wrapper can be 0 at sizes the package accepts.

run_impl checks some size expressions before it divides by them (`AOTI_TORCH_CHECK(div_floor_integer(
s27 + ((7 - s27 % 7) % 7), 7) != 0, "Integer floor division by zero")`): a check no size in the
compiled ranges can fail is linked and needs no finding. Interval arithmetic alone cannot see that a
window padded up to a multiple of 7 is at least 7, so the answer is exact: every integer point of
the symbols' own ranges (a superset of the values they take together) is tried where those are few;
an unbounded range is tried up to a head and its tail proved by intervals.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from ..expr import intervals

if TYPE_CHECKING:
    from ..core.model import Model

NEVER_ZERO_POINTS = 10_000   # most integer points `never_zero` tries: past it, no answer
# Points tried of an unbounded range before its tail is bounded by intervals: past a few periods of
# any `% n` or `// n` in the wrapper's size arithmetic (windows, patches, strides of 2 to 32).
HEAD = 64


class _Answers(dict):
    """`never_zero`'s answers on a model, by expression and ranges (what alone decides them, so they
    cannot go stale). Pickled empty: -j's workers send models back without them."""

    def __reduce__(self) -> tuple:
        return (_Answers, ())

    @staticmethod
    def on(model: "Model") -> "_Answers":
        kept = model.__dict__.get("_zeros_kept")
        if not isinstance(kept, _Answers):
            kept = model.__dict__["_zeros_kept"] = _Answers()
        return kept


def _ranges(model: "Model", expr: str) -> dict[str, tuple[int, float]] | None:
    """Each symbol of `expr` -> its integer range in the compiled ranges (high may be inf); None when
    one has no range (an unbacked size, a name no size gives)."""
    from .witness import dim_ranges

    roots = dim_ranges(model)
    out: dict[str, tuple[int, float]] = {}
    try:
        for name in sorted(intervals.names(expr)):
            sym = model.symbols.get(name)
            low, high = roots[name] if name in roots else intervals.evaluate_interval(sym.expr, roots) \
                if sym is not None and not sym.unbacked else (0, None)
            out[name] = (math.ceil(low), float("inf") if high is None or high == float("inf") else math.floor(high))
    except (ValueError, ZeroDivisionError, KeyError, AttributeError):
        return None
    return out


def never_zero(model: "Model", expr: str) -> bool:
    """Whether no sizes in the compiled ranges make `expr` (over size symbols) 0. BEiT's `1 - 2*s45 -
    2*s84 + 4*s45*s84` is (2*s45 - 1)*(2*s84 - 1): never 0; a window padded to a multiple of 7 with
    no max, `(s27 + ((7 - s27 % 7) % 7)) // 7` with s27 >= 2: never 0."""
    ranges = _ranges(model, expr)
    if ranges is None:
        return False
    # The pipeline asks it of every copy of a check (BEiT's 11 of one expression).
    key = (expr, tuple(ranges.items()))
    answers = _Answers.on(model)
    if key not in answers:
        answers[key] = _never_zero(expr, ranges)
    return answers[key]


def _never_zero(expr: str, ranges: dict[str, tuple[int, float]]) -> bool:
    """Every point of the heads (a bounded range whole, an unbounded one up to HEAD points) is not
    0, and neither is any box where one symbol lies past its head and the others anywhere: together
    they cover every point of the ranges."""
    heads = {name: range(low, (low + HEAD if high == float("inf") else int(high)) + 1)
             for name, (low, high) in ranges.items()}
    if math.prod(len(span) for span in heads.values()) > NEVER_ZERO_POINTS:
        return False
    try:
        for name, (_, high) in ranges.items():
            if high == float("inf"):
                box = {n: ((heads[n].stop, None) if n == name else (lo, None if hi == float("inf") else hi))
                       for n, (lo, hi) in ranges.items()}
                low_value, high_value = intervals.evaluate_interval(expr, box)
                if low_value <= 0 <= (float("inf") if high_value is None else high_value):
                    return False
        return all(intervals.evaluate(expr, dict(zip(heads, values))) != 0
                   for values in itertools.product(*heads.values()))
    except (ValueError, ZeroDivisionError, KeyError):
        return False


def zeros_above_zero(model: "Model", expr: str | None, sources, space: str | None) -> list:
    """(dim, size) for each of `sources` with a size above 0 (up to HEAD) that the package lets
    through and that makes `expr` exactly 0 while `space`, the loops around it, still run, the
    smallest such size of each, smallest first: a floor that reaches 0 before the size does (`2*(s //
    2)` at s = 1; `(1 + (h - 1) // 8) // 2` at h = 1 to 8)."""
    from . import sizes
    from .witness import empties, evaluate_at

    found: list = []
    if not expr:
        return found
    for ref in sources:
        size = next((n for n in range(1, HEAD + 1) if sizes.accepts(model.dim(ref), n)
                     and evaluate_at(model, expr, {ref: n}) == 0 and not empties(model, space, {ref: n})), None)
        if size is not None:
            found.append((ref, size))
    return sorted(found, key=lambda pair: pair[1])
