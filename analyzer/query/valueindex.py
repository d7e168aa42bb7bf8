"""Positions computed from one input's values and sizes (`max(x0 + lengths[x1] - seq, 0)`: left-padded
rows), as the linker keeps them (`Assertion.value_upper`): the smallest value of that input that reads
a constant table past its end. A lookup of the value itself (token ids into their vocabulary) is the
caller's data and has no answer here, unless the input is floating point: a float cast to an index
(Pix2Struct's row ids in its patches' first column) is no id the caller knows to keep in range."""

from __future__ import annotations

from ..core.model import Assertion, Model
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

    if reaches(0):
        return None
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
