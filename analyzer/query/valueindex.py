"""Positions computed from one input's values and sizes (`max(x0 + lengths[x1] - seq, 0)`: left-padded
rows), as the linker keeps them (`Assertion.value_upper`): the smallest value of that input that reads
a constant table past its end. A lookup of the value itself (token ids into their vocabulary) is the
caller's data and has no answer here, unless the input is floating point: a float cast to an index
(Pix2Struct's row ids in its patches' first column) is no id the caller knows to keep in range.
Against a size instead of a table (`sized_position`), the first sizes and smallest value that reach it."""

from __future__ import annotations

from typing import Callable

from ..core.model import Assertion, DimRef, Model
from ..expr import intervals
from ..expr.values import VALUE
from . import witness as W

# Past this, a value is no input anyone sends: the search gives up (int64's range).
_VALUE_LIMIT = 2 ** 62


def derived(a: Assertion) -> bool:
    """Whether the check's index is a position computed from one input's values (not the value)."""
    return bool(a.value_upper) and a.value_upper != VALUE and a.bound_value is not None \
        and len(a.index_sources) == 1


def cast(model: Model, a: Assertion) -> bool:
    """Whether the check's index is one floating-point input's own value, cast to an integer."""
    # Loaded from the input itself: a buffer another kernel wrote holds what its op made of the value
    # (an argmax over the classes, not the logits).
    if a.value_upper != VALUE or a.bound_value is None or len(a.index_sources) != 1 or a.index_buffer:
        return False
    dtype = model.inputs[a.index_sources[0]].dtype or ""
    return dtype.startswith(_FLOATING)


_FLOATING = ("float", "bfloat", "half", "double")


def shown(model: Model, a: Assertion) -> str:
    """The index's maximum as the user reads it, the value as `v`: `max(v - 1, 0)`."""
    return W.display_expr(model, intervals.cancel(a.value_upper or "")).replace(VALUE, "v")


def smallest_value(model: Model, a: Assertion) -> int | None:
    """The smallest non-negative value of the input that takes the position to the table's bound or
    past it at the witness's sizes; None where 0 already does (a size's finding) or no value does."""
    upper, bound_value = a.value_upper, a.bound_value
    if cast(model, a):
        return bound_value
    if not derived(a) or upper is None or bound_value is None:
        return None

    def reaches(value: int) -> bool:
        try:
            at = W.evaluate_at(model, intervals.substitute(upper, {VALUE: str(value)}), {})
        except ValueError:
            return False
        return at is not None and at >= bound_value

    return None if reaches(0) else _smallest(reaches)


def _smallest(reaches: Callable[[int], bool]) -> int | None:
    """The smallest value from 1 up at which a position that grows with the value `reaches` its bound
    (doubling, then bisection); None past int64's range."""
    high = 1
    while not reaches(high):
        high *= 2
        if high > _VALUE_LIMIT:
            return None
    low = high // 2  # reaches(low) is False, reaches(high) True: the smallest lies in (low, high]
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high


def sized_position(model: Model, a: Assertion) -> bool:
    """Whether the check's index is a position computed from one integer input's values and sizes (a
    jagged row's column `x0 - offsets[row]`, a running sum of counts) checked against a size: not the
    value itself give or take a constant (`max(v + n, v)`, negative-index wrapping of a lookup: the
    caller's data), nor a float input's coordinates (an affine grid's: grid sampling masks them)."""
    upper = a.value_upper or ""
    if not (a.linked and a.bound_value is None and a.bound_expr and a.bound_sources and not a.index_extent
            and len(a.index_sources) == 1 and upper and VALUE in intervals.names(upper)):
        return False
    if not (model.inputs[a.index_sources[0]].dtype or "").startswith(("int", "uint")):
        return False
    apart = {W.evaluate_at(model, f"({intervals.substitute(upper, {VALUE: str(v)})}) - {v}") for v in (0, 1, 2)}
    return len(apart) > 1


def position_witness(model: Model, upper: str, bound: str) -> tuple[dict[DimRef, int], int] | None:
    """(sizes, value) for a `sized_position`'s maximum `upper` against `bound`: the smallest value that
    takes it there at the witness sizes (one that grows with the value), else value 0 at the smallest
    size of a dim of `upper` alone that does (one that falls with it: `x0 - v`). None where neither does."""
    def gap(value: int, assignment: dict[DimRef, int]) -> float | None:
        return W.evaluate_at(model, f"({intervals.substitute(upper, {VALUE: str(value)})}) - ({bound})", assignment)

    def reaches(value: int) -> bool:
        at = gap(value, {})
        return at is not None and at >= 0

    value = 0 if reaches(0) else _smallest(reaches) if reaches(_VALUE_LIMIT) else None
    if value is not None:
        return {}, value
    at_zero = intervals.substitute(upper, {VALUE: "0"})
    for ref in W.expr_dims(model, at_zero) or ():
        if ref in (W.expr_dims(model, bound) or ()):
            continue
        over = W.smallest_exceeding(model, f"({at_zero}) - ({bound})", ref, -1)
        if over is not None:
            return {ref: over}, 0
    return None
