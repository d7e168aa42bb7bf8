"""Witnesses: concrete input shapes that make a finding happen at run time.

A witness is an *assignment* (input dim -> size) for the dims a finding is about; every other dim
takes a valid size: its static value, or `DEFAULT_SIZE` (3) clipped to the dim's compiled (and
declared) range. `witness_shapes()` turns an assignment into one shape per model input, in input
order; `format_witness()` spells them `x.shape = (0, 8), idx.shape = (3,)` with the user's names
when known (`arg0_1.shape = ...` otherwise); `parse_witness()` reads that text back (tests use it to
build the tensors and run the package).

Also here: the search for assignments that make an expression 0 (`zero_choice`,
`empty_bound_choice`, `tripped_assertion`) or exceed a bound (`smallest_exceeding`,
`first_exceeding`). Which sizes a single dim can take is `analyzer.query.sizes`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
from typing import Callable, Iterable, Mapping

from ..expr import intervals
from . import relations
from ..core.model import Assertion, Dim, DimRef, Model, shape_text, where
from .sizes import accepts, can_be_zero, effective_max, effective_min

DEFAULT_SIZE = 3
SEARCH_LIMIT = 2**40

Assignment = Mapping[DimRef, int]


# -- questions about one dim (answered in analyzer.query.sizes) ------------------------------------------

def valid_size(dim: Dim, prefer: int = DEFAULT_SIZE) -> int:
    """A size the package was compiled for: the static value, else `prefer` clipped to the range."""
    if dim.value is not None:
        return dim.value
    size, high = max(prefer, effective_min(dim)), effective_max(dim)
    return size if high is None else min(size, high)


# -- symbols <-> dims ---------------------------------------------------------------------------

def symbol_dims(model: Model) -> dict[str, DimRef]:
    """Root size symbol -> the input dim it is read from (`int64_t s77 = arg0_1_size[0];`)."""
    # Rules ask this thousands of times of a linked (no longer changing) model with thousands of
    # symbols; keep the answer on the model, keyed by what it is computed from.
    key = (id(model.symbols), len(model.symbols), id(model.inputs), len(model.inputs))
    cached = model.__dict__.get("_symbol_dims")
    if cached is not None and cached[0] == key:
        return dict(cached[1])
    out = _symbol_dims(model)
    model.__dict__["_symbol_dims"] = (key, out)
    return dict(out)


def _symbol_dims(model: Model) -> dict[str, DimRef]:
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
    memo = _MEMO.get()
    if memo is None:
        return _expr_dims(model, expr)
    key = ("dims", id(model), expr)  # replicated kernels ask of the same buffer sizes and extents
    if key not in memo:
        memo[key] = (model, _expr_dims(model, expr))
    found = memo[key][1]
    return None if found is None else list(found)


def _expr_dims(model: Model, expr: str) -> list[DimRef] | None:
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
    memo = _MEMO.get()
    if memo is None:
        return _sizes(model, assignment)
    key = ("sizes", id(model), frozenset(assignment.items()) if assignment else frozenset())
    if key not in memo:
        memo[key] = (model, _sizes(model, assignment))  # the model kept: its id stays its own
    return dict(memo[key][1])


def _sizes(model: Model, assignment: Assignment | None) -> dict[DimRef, int]:
    assignment = dict(assignment or {})
    by_symbol: dict[str, int] = {}
    roots = symbol_dims(model)
    for ref, size in assignment.items():
        symbol = symbol_of(model, ref)
        if symbol is None:
            # A dim with no size symbol of its own that the package ties to another dim's symbol
            # (`assert_size_stride(arg6_1, {s28, ...})`): the twin takes the same size.
            dim = model.dim(ref)
            tied = dim.tied_expr if dim is not None else None
            symbol = tied if tied in roots and roots[tied] not in assignment else None
        if symbol is not None:
            by_symbol.setdefault(symbol, size)
    # One `Dim` of the exported program (`8 * Dim("src")`: src and its mask) is one size, as eager needs.
    declared = {d.declared_expr: n for r, n in reversed(assignment.items()) if (d := model.dim(r)) and d.declared_expr}
    out: dict[DimRef, int] = {}
    symbol_at: dict[DimRef, str] = {}
    for name, ref in roots.items():
        symbol_at.setdefault(ref, name)
    for inp in model.inputs:
        for dim in inp.dims:
            ref = DimRef(inp.index, dim.dim)
            symbol = dim.symbol or symbol_at.get(ref)
            if ref in assignment:
                out[ref] = assignment[ref]
            elif symbol is not None and symbol in by_symbol:
                out[ref] = by_symbol[symbol]
            else:  # a dim read as n*k takes a multiple of n: a witness breaks only what it means to
                out[ref] = declared[dim.declared_expr] if dim.declared_expr in declared else \
                    relations.fitting_at_least(model, ref, valid_size(dim))
    # Dims the package ties to others (`y.shape[0] == x.shape[0] // 2 + 1`) follow them, so that a
    # witness breaks only what it means to break.
    values = {name: out[ref] for name, ref in symbol_dims(model).items() if ref in out}
    for inp in model.inputs:
        for dim in inp.dims:
            ref = DimRef(inp.index, dim.dim)
            if dim.tied_expr and ref not in assignment and dim.declared_expr not in declared:
                twin = evaluate_symbols(dim.tied_expr, values)
                if twin is not None and twin >= 0:
                    out[ref] = int(twin)
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
    memo = _MEMO.get()
    key = ("values", id(model), frozenset(assignment.items()) if assignment else frozenset()) if memo is not None else None
    if memo is not None and key is not None and key in memo:
        return dict(memo[key][1])
    all_sizes = sizes(model, assignment)
    values = {name: all_sizes[ref] for name, ref in symbol_dims(model).items() if ref in all_sizes}
    if memo is not None and key is not None:
        memo[key] = (model, values)  # the model kept: its id stays its own
    return dict(values) if key is not None else values


_MEMO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("aoti_lint_witness_memo", default=None)


@contextlib.contextmanager
def memoized():
    """While the rules read linked models (which no longer change), `symbol_values` answers each
    assignment once: the rules of a 48-layer model ask 3,600 times for 44 assignments."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


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
    """`x.shape = (0, 8), idx.shape = (3,)`: every input's shape under the assignment."""
    memo = _MEMO.get()
    if memo is None:
        return format_witness(model, witness_shapes(model, assignment))
    key = ("witness", id(model), frozenset(assignment.items()) if assignment else frozenset())
    if key not in memo:
        memo[key] = (model, format_witness(model, witness_shapes(model, assignment)))
    return memo[key][1]


def assignment_text(model: Model, assignment: Assignment) -> str:
    """`arg0_1.size(0) = 0` (or `x.shape[0] = 0`) for the dims a witness sets."""
    parts = []
    for ref in sorted(assignment):
        if 0 <= ref.input < len(model.inputs):
            parts.append(f"{model.inputs[ref.input].dim_display(ref.dim)} = {assignment[ref]}")
        else:
            parts.append(f"{where(ref)} = {assignment[ref]}")
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


def outside_declared(model: Model, witness: str) -> list[tuple[DimRef, int]]:
    """The dims a witness sets outside the exported program's declared range (`Dim("n", min=2)` and
    n = 0): sizes the caller promised never to send. Empty without a declared range."""
    memo = _MEMO.get()
    if memo is None:
        return _outside_declared(model, witness)
    key = ("outside", id(model), witness)  # every finding asks of each of its witnesses
    if key not in memo:
        memo[key] = (model, _outside_declared(model, witness))
    return list(memo[key][1])


def _outside_declared(model: Model, witness: str) -> list[tuple[DimRef, int]]:
    out = []
    for inp, (_, shape) in zip(model.inputs, parse_witness(witness)):
        for d in inp.dims:
            if d.value is not None or d.dim >= len(shape):
                continue
            size = shape[d.dim]
            if (d.declared_min is not None and size < d.declared_min) or \
                    (d.declared_max is not None and size > d.declared_max):
                out.append((DimRef(inp.index, d.dim), size))
    return out


# -- searching sizes ----------------------------------------------------------------------------

def zero_choice(model: Model, sources: Iterable[DimRef], works, skip: Iterable[DimRef] = ()) -> dict[DimRef, int] | None:
    """Dims set to 0 for which `works(choice)` holds: one zero-able dim if one suffices (the first
    in input order), else all zero-able dims together; None when neither does. Only dims the package
    lets through as 0 (`sizes.can_be_zero`) and not in `skip` are tried."""
    skipped = set(skip)
    zeroable = [r for r in sources if r not in skipped and can_be_zero(model.dim(r))]
    for ref in zeroable:
        if works({ref: 0}):
            return {ref: 0}
    if len(zeroable) > 1:
        choice = {r: 0 for r in zeroable}
        if works(choice):
            return choice
    return None


def zero_assignment(model: Model, expr: str | None, sources: Iterable[DimRef],
                    space: str | None = None, accept=None) -> dict[DimRef, int] | None:
    """A `zero_choice` that makes `expr` exactly 0 (a divisor, a reduced extent) while `space` (the
    kernel's own iteration space around that line, when known) stays non-zero: a choice that
    empties the space too never reaches the line. `accept(choice)`, when given, must hold too."""
    if not expr:
        return None
    return zero_choice(model, sources, lambda choice: evaluate_at(model, expr, choice) == 0
                       and not empties(model, space, choice) and (accept is None or accept(choice)))


def empties(model: Model, space: str | None, choice: Assignment) -> bool:
    """True when the iteration space `space` is 0 under `choice` (no work: nothing runs). A symbol
    no input dim gives (an unbacked size: the number of boxes nms keeps) may be any size, so the
    space is empty when it is 0 whatever that size is: `u0 * s68` at s68 = 0."""
    if not space:
        return False
    points = {name: (value, value) for name, value in symbol_values(model, choice).items()}
    try:
        return intervals.evaluate_interval(space, points, default=(0, None))[1] == 0
    except ValueError:
        return False


def _index_dims(model: Model, a: Assertion, refs: Iterable[DimRef]) -> list[DimRef]:
    """Of `refs`, the dims that an empty index would share: dims of the index inputs and dims read
    through the same size symbol. Setting them to 0 removes the index too, so nothing fails; unless
    the check's own iteration space stays a known size above 0 (CLIP's pooled gather: its index is
    the argmax of each row of the input made empty, one index per row whatever the length)."""
    index_symbols = input_symbols(model, a.index_sources)
    return [r for r in refs if (r.input in a.index_sources or symbol_of(model, r) in index_symbols)
            and not _runs_at_zero(model, a, r)]


def _runs_at_zero(model: Model, a: Assertion, ref: DimRef) -> bool:
    """The check's iteration space has a known size above 0 with `ref` at 0 (no size the data
    decides in it): the kernel runs, and its index exists, however empty the index's input is."""
    if not a.space_expr:
        return False
    value = evaluate_at(model, a.space_expr, {ref: 0})
    return value is not None and value > 0


def _bound_fails(model: Model, a: Assertion, choice: Assignment) -> bool:
    """Under `choice` the assertion's bound is <= 0 while an index still exists (and the check
    runs: the kernel's own iteration space around it is not empty)."""
    value = evaluate_at(model, a.bound_expr, choice) if a.bound_expr else None
    if value is None or value > 0 or empties(model, a.space_expr, choice):
        return False
    if a.index_extent:
        extent = evaluate_at(model, a.index_extent, choice)
        return extent is not None and extent > 0
    return True


def empty_bound_choice(model: Model, a: Assertion,
                       accept: Callable[[Assignment], bool] | None = None) -> dict[DimRef, int] | None:
    """Dims set to 0 that make an index assertion's dynamic bound <= 0 while an index still exists
    (the index inputs stay non-empty; an index that ranges over sizes keeps a non-empty range), and
    that `accept` accepts; None when no size the package accepts does."""
    if not a.linked or a.bound_value is not None or not a.bound_expr:
        return None
    works = lambda choice: _bound_fails(model, a, choice) and (accept is None or accept(choice))
    choice = zero_choice(model, a.bound_sources, works, skip=_index_dims(model, a, a.bound_sources))
    if choice is None or len(choice) != 1 or (evaluate_at(model, a.bound_expr, choice) or 0) >= 0:
        return choice
    # A bound below 0 at 0 (`nb - 1`): the size where it is 0, which ops taking it as a size accept.
    ref = min(choice)
    return next(({ref: v} for v in range(1, 9) if accepts(model.dim(ref), v) and
                 evaluate_at(model, a.bound_expr, {ref: v}) == 0 and works({ref: v})), choice)


def tripped_assertion(model: Model, choice: Assignment) -> Assertion | None:
    """An index assertion whose dynamic bound is <= 0 under `choice` while an index still exists:
    with these sizes the call fails there (see `empty-index-bound`), whatever else it computes."""
    for a in model.assertions:
        if not a.linked or a.bound_value is not None or not a.bound_expr:
            continue
        if _index_dims(model, a, [r for r, size in choice.items() if size == 0]):
            continue
        if _bound_fails(model, a, choice):
            return a
    return None


def evaluate_at(model: Model, expr: str, assignment: Assignment | None = None) -> float | None:
    """The value of an expression over root symbols under the witness; None when it cannot say."""
    memo = _MEMO.get()
    key = ("at", id(model), expr, frozenset(assignment.items()) if assignment else frozenset()) \
        if memo is not None else None
    if memo is not None and key in memo:
        return memo[key][1]
    try:
        value: float | None = intervals.evaluate(expr, symbol_values(model, assignment))
    except (ValueError, ZeroDivisionError, OverflowError):
        value = None
    if memo is not None:
        memo[key] = (model, value)
    return value


def smallest_exceeding(model: Model, expr: str, ref: DimRef, bound: float,
                       assignment: Assignment | None = None, beyond_max: bool = False,
                       start: int | None = None) -> int | None:
    """The smallest size of `ref` (within its effective range, or above its min with `beyond_max`;
    from `start` instead of the min when given) for which `expr` > `bound`, the other dims at their
    witness sizes; None when no size in range does. Binary search (size expressions are monotone in
    each size), then checked."""
    dim = model.dim(ref)
    if dim is None or dim.value is not None:
        return None
    base = dict(assignment or {})
    lo = effective_min(dim) if start is None else start
    hi = None if beyond_max else effective_max(dim)
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


def first_exceeding(model: Model, expr: str, refs: Iterable[DimRef], bound: float) -> tuple[DimRef, int] | None:
    """The first dim of `refs` and its `smallest_exceeding` size above its min (no upper bound but the
    search limit) for which `expr` > `bound`, the other dims at their witness sizes."""
    for ref in refs:
        size = smallest_exceeding(model, expr, ref, bound, beyond_max=True)
        if size is not None:
            return ref, size
    return None


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
        return model.inputs[ref.input].shape_expr(ref.dim)
    return shape_text(f"inputs[{ref.input}]", ref.dim)


def dim_display(model: Model, ref: DimRef) -> str:
    if 0 <= ref.input < len(model.inputs):
        return model.inputs[ref.input].dim_display(ref.dim)
    return where(ref)
