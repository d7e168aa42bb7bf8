"""Witnesses: concrete input shapes that make a finding happen at run time.

A witness is an *assignment* (input dim -> size) for the dims a finding is about; every other dim
takes a valid size: its static value, or `DEFAULT_SIZE` (3) clipped to the dim's compiled (and
declared) range. `witness_shapes()` turns an assignment into one shape per model input, in input
order; `format_witness()` spells them `x.shape = (0, 8), idx.shape = (3,)` with the user's names
when known (`arg0_1.shape = ...` otherwise); `parse_witness()` reads that text back (tests use it to
build the tensors and run the package).

Also here: the small questions every rule asks about a dim (can it be 0 at run time, its effective
upper bound, its range in words) and the search for the smallest size that makes an expression
exceed a bound.
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Mapping

from . import intervals
from .model import Dim, DimRef, Model, range_text  # noqa: F401 - re-exported for the rules

DEFAULT_SIZE = 3
# Inductor's CUDA codegen records 2**31 - 1 as the max of some dims (32-bit indexing), not a user bound.
INT32_MAX = 2**31 - 1
SEARCH_LIMIT = 2**40

Assignment = Mapping[DimRef, int]


# -- questions about one dim --------------------------------------------------------------------

def effective_min(dim: Dim) -> int:
    """The smallest size the compiled code and the user's declaration both allow (0 when unknown)."""
    if dim.value is not None:
        return dim.value
    lows = [v for v in (dim.min, dim.declared_min) if v is not None]
    return max(lows) if lows else 0


def effective_max(dim: Dim) -> int | None:
    """The tighter of the compiled and the declared max; None when neither bounds the dim."""
    if dim.value is not None:
        return dim.value
    highs = [v for v in (dim.max, dim.declared_max) if v is not None]
    return min(highs) if highs else None


def max_origin(dim: Dim) -> str:
    """Where `effective_max` comes from, in words."""
    if dim.declared_max is not None and (dim.max is None or dim.declared_max <= dim.max):
        return "declared"
    return "compiled" + ("" if dim.enforced == "always" else ", not enforced" if dim.enforced == "none"
                         else ", enforced only with AOTI_RUNTIME_CHECK_INPUTS=1")


def unbounded(dim: Dim) -> bool:
    """No real upper bound: none compiled nor declared, or only the 32-bit indexing limit."""
    high = effective_max(dim)
    return high is None or high >= INT32_MAX


def can_be_zero(dim: Dim | None) -> bool:
    """True when the package accepts size 0 for this dim at run time: the dim is dynamic and either
    its range check does not always run or the range it checks includes 0."""
    if dim is None or dim.value is not None:
        return False
    if dim.enforced != "always":
        return True
    return (dim.min or 0) <= 0


def env_check_rejects_zero(dim: Dim | None) -> bool:
    """True when setting AOTI_RUNTIME_CHECK_INPUTS=1 would make the package reject size 0 here."""
    return dim is not None and dim.enforced == "env" and (dim.min or 0) >= 1


def valid_size(dim: Dim, prefer: int = DEFAULT_SIZE) -> int:
    """A size the package was compiled for: the static value, else `prefer` clipped to the range."""
    if dim.value is not None:
        return dim.value
    size = max(prefer, effective_min(dim))
    high = effective_max(dim)
    if high is not None:
        size = min(size, high)
    return size


# -- symbols <-> dims ---------------------------------------------------------------------------

def symbol_dims(model: Model) -> dict[str, DimRef]:
    """Root size symbol -> the input dim it is read from (`int64_t s77 = arg0_1_size[0];`)."""
    out: dict[str, DimRef] = {}
    for sym in model.symbols.values():
        if sym.source is not None and not sym.is_stride:
            out.setdefault(sym.name, sym.source)
    for inp in model.inputs:
        for dim in inp.dims:
            if dim.symbol:
                out.setdefault(dim.symbol, DimRef(inp.index, dim.dim))
    return out


def symbol_of(model: Model, ref: DimRef) -> str | None:
    dim = model.dim(ref)
    if dim is not None and dim.symbol:
        return dim.symbol
    for name, source in symbol_dims(model).items():
        if source == ref:
            return name
    return None


def expr_dims(model: Model, expr: str | None) -> list[DimRef] | None:
    """The input dims an expression over root symbols reads, in order; None when a name is unknown
    (an unbacked or unparsed symbol) or the expression cannot be parsed."""
    if not expr:
        return []
    try:
        names = intervals.names(expr)
    except ValueError:
        return None
    roots = symbol_dims(model)
    out = []
    for name in sorted(names):
        if name not in roots:
            return None
        out.append(roots[name])
    return sorted(set(out))


def dim_ranges(model: Model) -> dict[str, tuple[float, float | None]]:
    """Root symbol -> (effective min, effective max or None) for interval evaluation."""
    out: dict[str, tuple[float, float | None]] = {}
    for name, ref in symbol_dims(model).items():
        dim = model.dim(ref)
        if dim is None:
            continue
        out[name] = (effective_min(dim), effective_max(dim))
    return out


# -- assignments, shapes and their text ---------------------------------------------------------

def sizes(model: Model, assignment: Assignment | None = None) -> dict[DimRef, int]:
    """Every input dim's witness size: the assignment's, else the size assigned to a dim that
    shares its symbol (dims the package requires equal), else a valid size."""
    assignment = dict(assignment or {})
    by_symbol: dict[str, int] = {}
    for ref, size in assignment.items():
        symbol = symbol_of(model, ref)
        if symbol is not None:
            by_symbol.setdefault(symbol, size)
    out: dict[DimRef, int] = {}
    for inp in model.inputs:
        for dim in inp.dims:
            ref = DimRef(inp.index, dim.dim)
            if ref in assignment:
                out[ref] = assignment[ref]
            elif dim.symbol is not None and dim.symbol in by_symbol:
                out[ref] = by_symbol[dim.symbol]
            else:
                out[ref] = valid_size(dim)
    # Dims the package ties to others (`y.shape[0] == x.shape[0] // 2 + 1`) follow them, so that a
    # witness breaks only what it means to break.
    values = {name: out[ref] for name, ref in symbol_dims(model).items() if ref in out}
    for inp in model.inputs:
        for dim in inp.dims:
            ref = DimRef(inp.index, dim.dim)
            if dim.tied_expr and ref not in assignment:
                tied = evaluate_symbols(dim.tied_expr, values)
                if tied is not None and tied >= 0:
                    out[ref] = int(tied)
    return out


def evaluate_symbols(expr: str, values: Mapping[str, int]) -> float | None:
    try:
        return intervals.evaluate(expr, values)
    except ValueError:
        return None


def input_symbols(model: Model, inputs) -> set[str]:
    """The size symbols of every dim of the given inputs."""
    out = set()
    for i in inputs:
        if 0 <= i < len(model.inputs):
            out |= {d.symbol for d in model.inputs[i].dims if d.symbol}
    return out


def symbol_values(model: Model, assignment: Assignment | None = None) -> dict[str, int]:
    """Root symbol -> its value under the witness (for `intervals.evaluate`)."""
    all_sizes = sizes(model, assignment)
    return {name: all_sizes[ref] for name, ref in symbol_dims(model).items() if ref in all_sizes}


def witness_shapes(model: Model, assignment: Assignment | None = None) -> list[tuple[int, ...]]:
    """One shape per model input, in input order."""
    all_sizes = sizes(model, assignment)
    return [tuple(all_sizes[DimRef(inp.index, d.dim)] for d in inp.dims) for inp in model.inputs]


def format_witness(model: Model, shapes: Iterable[tuple[int, ...]]) -> str:
    """`x.shape = (0, 8), idx.shape = (3,)` (Input.display names, all inputs in order)."""
    parts = []
    for inp, shape in zip(model.inputs, shapes):
        parts.append(f"{inp.display}.shape = {_tuple_text(shape)}")
    return ", ".join(parts)


def witness(model: Model, assignment: Assignment | None = None) -> str:
    return format_witness(model, witness_shapes(model, assignment))


def assignment_text(model: Model, assignment: Assignment) -> str:
    """`arg0_1.size(0) = 0` (or `x.shape[0] = 0`) for the dims a witness sets."""
    parts = []
    for ref in sorted(assignment):
        if 0 <= ref.input < len(model.inputs):
            parts.append(f"{model.inputs[ref.input].dim_display(ref.dim)} = {assignment[ref]}")
        else:
            parts.append(f"input {ref.input} dim {ref.dim} = {assignment[ref]}")
    return ", ".join(parts)


def _tuple_text(shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"


_WITNESS_PART = re.compile(r"([A-Za-z_][\w.\[\]'\"]*)\.shape = \(([^)]*)\)")


def parse_witness(text: str) -> list[tuple[str, tuple[int, ...]]]:
    """`[("arg0_1", (0, 8)), ("arg1_1", (3,))]` from a witness string."""
    out = []
    for match in _WITNESS_PART.finditer(text):
        dims = tuple(int(s) for s in match.group(2).replace(" ", "").split(",") if s)
        out.append((match.group(1), dims))
    return out


# -- searching sizes ----------------------------------------------------------------------------

def evaluate_at(model: Model, expr: str, assignment: Assignment | None = None) -> float | None:
    """The value of an expression over root symbols under the witness; None when it cannot say."""
    try:
        return intervals.evaluate(expr, symbol_values(model, assignment))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def smallest_exceeding(model: Model, expr: str, ref: DimRef, bound: float,
                       assignment: Assignment | None = None) -> int | None:
    """The smallest size of `ref` (within its effective range) for which `expr` > `bound`, the other
    dims at their witness sizes; None when no size in range does. Binary search (size expressions
    are monotone in each size), then checked."""
    dim = model.dim(ref)
    if dim is None or dim.value is not None:
        return None
    base = dict(assignment or {})
    lo = effective_min(dim)
    hi = effective_max(dim)
    hi = SEARCH_LIMIT if hi is None else hi

    def exceeds(n: int) -> bool:
        value = evaluate_at(model, expr, {**base, ref: n})
        return value is not None and not math.isnan(value) and value > bound

    if lo > hi or not exceeds(hi):
        return None
    if exceeds(lo):
        return lo
    while hi - lo > 1:  # invariant: not exceeds(lo), exceeds(hi)
        mid = (lo + hi) // 2
        if exceeds(mid):
            hi = mid
        else:
            lo = mid
    return hi


# -- expressions in words and in keys -----------------------------------------------------------

def normalize_expr(model: Model, expr: str | None) -> str:
    """An expression with root symbols replaced by `in0.d0` refs: stable across builds (the hashed
    symbol names `s77` are not). Used in finding keys."""
    if not expr:
        return ""
    mapping = {name: f"in{ref.input}.d{ref.dim}" for name, ref in symbol_dims(model).items()}
    try:
        return intervals.substitute(expr, mapping).replace(" ", "")
    except ValueError:
        return expr.replace(" ", "")


def display_expr(model: Model, expr: str | None) -> str:
    """An expression with root symbols spelled as the user sees them (`x.shape[1]`, `arg0_1.size(1)`)."""
    if not expr:
        return ""
    mapping = {}
    for name, ref in symbol_dims(model).items():
        if 0 <= ref.input < len(model.inputs):
            mapping[name] = model.inputs[ref.input].dim_display(ref.dim)
    try:
        return intervals.substitute(expr, mapping)
    except ValueError:
        return expr


def check_expr(model: Model, ref: DimRef) -> str:
    """What the user writes to test the dim before calling the model: `x.shape[0]`."""
    if 0 <= ref.input < len(model.inputs):
        return f"{model.inputs[ref.input].display}.shape[{ref.dim}]"
    return f"inputs[{ref.input}].shape[{ref.dim}]"


def dim_display(model: Model, ref: DimRef) -> str:
    if 0 <= ref.input < len(model.inputs):
        return model.inputs[ref.input].dim_display(ref.dim)
    return f"input {ref.input} dim {ref.dim}"
