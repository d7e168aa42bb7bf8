"""The value-range engine: reaching definitions and symbolic ranges over one kernel's parameters.

Kernels of both kinds (Triton source read with `ast`, C++ rewritten by `ts.cpp_to_py`) reach this
module as `KernelFacts`: `tmpN`-style definitions as Python `ast` expressions keyed by position,
loop extents, and parameters. `Values` answers two questions about an expression at a position:
which pointer parameters (loads) and size parameters flow into it (`sources`), and its inclusive
symbolic maximum over the size parameters (`upper`). `divisor_of` is the one syntactic detector of
a division, used for kernels (`division`) and for the wrapper's size expressions (link.py).

Ranges are dispatched by `ast` node kind (one handler each, pyflakes' getNodeHandler pattern);
calls by their short name. A kind without a handler reads as unknown (or raises in strict mode).
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Mapping, Protocol, Sequence

from . import intervals
from ..core import strict
from .syntax import ITER_INDEX, POINTER_PARAM, call_name, divisor_of, expr_text
from .valuecalls import CALL_HANDLERS, ifexp_range, subscript_range



class KernelFacts(Protocol):
    """What the engine reads of a kernel (parse/kernels.py's KernelFacts has it): the engine sits
    below the parsers, so it names the shape rather than the class."""

    @property
    def params(self) -> tuple[str, ...]: ...

    @property
    def defs(self) -> Mapping[str, Sequence[tuple[int, ast.expr]]]: ...

    @property
    def combines(self) -> Mapping[str, str]: ...

    def extent_at(self, var: str, pos: int) -> str | None: ...

_DEPTH_LIMIT = 60
# The name a loaded input value is read as where a range is asked of it (Assertion.value_upper).
VALUE = "VALUE"


def division(values: "Values", node: ast.AST, line: int, index_math: bool = False
             ) -> tuple[str, str | None, bool, bool] | None:
    """(divisor text, divisor over params, integer?, index arithmetic?) when `node` divides by a
    kernel size.

    Float `/` by a size is a mean-like NaN source. Integer `%` / `//` (`mod(a, b)` in C++) count
    only when the dividend is loaded data: Triton's index arithmetic like `xindex % ks0` runs for
    every lane, masked or not, and a zero there traps nothing. `index_math`: count it too (a C++
    loop runs it only where its loops do, whose extents the caller keeps: `x0 % (2*(ks0 // 2))` in a
    loop over `2 + 2*((ks0 - 1) // 2)` divides by 0 at ks0 = 1 and kills the process).
    """
    found = divisor_of(node)
    if found is None:
        return None
    dividend, divisor, integer = found
    ptrs, sizes = values.sources(divisor, line, until_pointer=True)
    if not sizes or ptrs:
        return None
    arithmetic = integer and not values.sources(dividend, line, until_pointer=True)[0]
    if arithmetic and not index_math:
        return None
    return expr_text(divisor), values.upper(divisor, line), integer, arithmetic


# A handler takes the node class it is registered for (dispatch by `type(node)`), hence Any.
_Handler = Callable[["Values", Any, int, int, bool], "str | None"]


class Values:
    """Reaching definitions and symbolic ranges for one kernel.

    Ranges are Python-syntax expressions over the kernel's parameters (and `inf`); `None` means
    unknown (data-dependent, e.g. a loaded index value). Work is capped by `max_steps`.
    """

    def __init__(self, facts: "KernelFacts", max_steps: int = 20_000,
                 load_ranges: Mapping[str, tuple[str | None, str | None]] | None = None) -> None:
        self.facts = facts
        self.params = set(facts.params)
        self.steps = 0
        self.max_steps = max_steps
        # Pointer parameter -> (min, max) of the values its buffer holds (buffers.py), over root
        # symbols: a load of it has that range instead of none.
        self.load_ranges: Mapping[str, tuple[str | None, str | None]] = load_ranges or {}
        # Ops whose own result range bounded the last `data_upper` (buckets by the boundaries' length).
        self.bounding_ops: set[str] = set()

    def definition(self, name: str, line: int) -> tuple[int, ast.expr] | None:
        """The last definition of `name` before position `line`."""
        best = None
        for def_line, expr in self.facts.defs.get(name, ()):
            if def_line < line and (best is None or def_line >= best[0]):
                best = (def_line, expr)
        return best

    def _budget(self) -> bool:
        self.steps += 1
        return self.steps <= self.max_steps

    def sources(self, expr: ast.expr, line: int, depth: int = 0, seen: set | None = None,
                until_pointer: bool = False) -> tuple[set[str], set[str]]:
        """(pointer parameters loaded, size parameters read) that flow into `expr` at `line`;
        `until_pointer`: only whether any pointer does (the walk stops at the first found)."""
        return _sources(self, expr, line, depth, set() if seen is None else seen, until_pointer)

    def upper(self, expr: ast.expr, line: int, depth: int = 0) -> str | None:
        """Inclusive symbolic maximum of `expr`, or None when unbounded/unknown."""
        return self._range(expr, line, depth, True)

    def data_upper(self, expr: ast.expr, line: int) -> str | None:
        """The maximum of loaded data that the kernel's own arithmetic bounds whatever was loaded:
        a constant (`clamp(values, 0, 400)` -> "400"), or a size where an op bounds the data by one
        (an in-kernel bucketize by the boundaries' length: `bounding_ops` names it); else None."""
        self.bounding_ops = set()
        found = self.upper(expr, line)
        try:
            return found if found is not None and (self.bounding_ops or not intervals.names(found)) else None
        except ValueError:
            return None

    def lower(self, expr: ast.expr, line: int) -> str | None:
        """Inclusive symbolic minimum of `expr`, or None when unknown."""
        return self._range(expr, line, 0, False)

    # -- ranges, one handler per node kind ------------------------------------------------------
    def _range(self, node: ast.AST, line: int, depth: int, upper: bool) -> str | None:
        """Inclusive maximum (`upper`) or minimum of `node`."""
        if depth > _DEPTH_LIMIT or not self._budget():
            return None
        handler = _RANGE_HANDLERS.get(type(node))
        if handler is None:
            strict.unknown("values.Values._range", type(node).__name__)
            return None
        return handler(self, node, line, depth + 1, upper)

    def _constant(self, node: ast.Constant, line: int, depth: int, upper: bool) -> str | None:
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return repr(value)
        return None

    def _name(self, node: ast.Name, line: int, depth: int, upper: bool) -> str | None:
        name = node.id
        m = ITER_INDEX.match(name)
        # Triton's `xindex = xoffset + tl.arange(0, XBLOCK)` says nothing by itself (program_id);
        # its masked range is [0, xnumel): ask the numel first, the definition only without one.
        numel = self._numel(m.group("p"), line, depth - 1) if m else None
        if numel is not None:
            return f"({numel}) - 1" if upper else "0"
        found = self.definition(name, line)
        if found is not None:
            return self._range(found[1], found[0], depth, upper)
        extent = self.facts.extent_at(name, line)
        if extent is not None:
            return f"({extent}) - 1" if upper else "0"
        if m:
            return None if upper else "0"
        if name in self.params and not POINTER_PARAM.match(name):
            return name
        return None

    def _unary(self, node: ast.UnaryOp, line: int, depth: int, upper: bool) -> str | None:
        if not isinstance(node.op, ast.USub):
            return None  # `not`, `~`: masks, not index arithmetic
        inner = self._range(node.operand, line, depth, not upper)
        return None if inner is None else f"-({inner})"

    def _binop(self, node: ast.BinOp, line: int, depth: int, upper: bool) -> str | None:
        rng, op = self._range, node.op
        if isinstance(op, ast.Add):
            a, b = rng(node.left, line, depth, upper), rng(node.right, line, depth, upper)
            return None if a is None or b is None else f"({a}) + ({b})"
        if isinstance(op, ast.Sub):
            a, b = rng(node.left, line, depth, upper), rng(node.right, line, depth, not upper)
            return None if a is None or b is None else f"({a}) - ({b})"
        if isinstance(op, ast.Mult):
            # A factor that is a non-negative constant (`(ks0 // 8) / (ks0 // 8)`: a scale of 1, as
            # Inductor writes a resize of a grid to itself) scales the other's bound the same way.
            # A negative one (`x2 + (-1L)*x3`, a difference of positions) swaps the other's ends.
            for factor, other in ((node.left, node.right), (node.right, node.left)):
                scale = _scale(self, factor, line, depth)
                if scale is not None:
                    found = rng(other, line, depth, upper if scale[1] >= 0 else not upper)
                    return None if found is None else f"({scale[0]}) * ({found})"
            # Index arithmetic multiplies non-negative quantities (strides, sizes).
            if not (self._nonneg(node.left, line, depth - 1) and self._nonneg(node.right, line, depth - 1)):
                return None
            a, b = rng(node.left, line, depth, upper), rng(node.right, line, depth, upper)
            return None if a is None or b is None else f"({a}) * ({b})"
        if isinstance(op, ast.Mod):
            if not upper:
                return "0" if self._nonneg(node.left, line, depth - 1) else None
            b = rng(node.right, line, depth, True)
            return None if b is None else f"({b}) - 1"
        if isinstance(op, ast.Div) and ast.dump(node.left) == ast.dump(node.right):
            return "1"  # `x / x`: where x is 0 the kernel's loops over it do not run
        if isinstance(op, (ast.FloorDiv, ast.Div)):
            a, b = rng(node.left, line, depth, upper), rng(node.right, line, depth, not upper)
            if a is None or b is None:
                return None
            return f"floordiv({a}, {b})" if isinstance(op, ast.FloorDiv) else f"({a}) / ({b})"
        return None  # bit operations, powers: not index arithmetic Inductor emits for bounds

    def _boolean(self, node: ast.AST, line: int, depth: int, upper: bool) -> str | None:
        """A comparison (`tmp0 != tmp1`) or `and`/`or` of them is 0 or 1."""
        if isinstance(node, ast.BoolOp) and not all(isinstance(v, (ast.Compare, ast.BoolOp)) for v in node.values):
            return None  # Python's `a or b` is an operand, not a truth value
        return "1" if upper else "0"

    def _no_range(self, node: ast.AST, line: int, depth: int, upper: bool) -> str | None:
        """Kinds that are never a size: comparisons and masks, attributes (dtypes), literals."""
        return None

    def _call(self, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
        handler = CALL_HANDLERS.get(call_name(node).split(".")[-1])
        # Any other call (`load`, math functions, `unknown()`) is data: no range.
        return None if handler is None else handler(self, node, line, depth, upper)

    # -- helpers --------------------------------------------------------------------------------
    def _nonneg(self, node: ast.expr, line: int, depth: int) -> bool:
        low = self._range(node, line, depth + 1, upper=False)
        if low is None:
            return False
        try:
            lo, _ = intervals.evaluate_interval(low, {}, default=(0, None))
        except ValueError:
            return False
        return lo >= 0

    def _numel(self, prefix: str, line: int, depth: int) -> str | None:
        for candidate in (f"{prefix}numel", f"{prefix.rstrip('_')}_numel", f"{prefix}_numel"):
            found = self.definition(candidate, line)
            if found is not None:
                return self._range(found[1], found[0], depth + 1, True)
            if candidate in self.params:
                return candidate
        return None


def _scale(v: Values, node: ast.expr, line: int, depth: int) -> tuple[str, float] | None:
    """`node`'s value where it is one number (its bounds agree), with that number, else None."""
    high = v._range(node, line, depth, True)
    if high is None or intervals.names(high) or high != v._range(node, line, depth, False):
        return None
    try:
        lo, hi = intervals.evaluate_interval(high, {})
    except ValueError:
        return None
    return (high, lo) if lo == hi else None


# -- calls, one handler per short name (module functions over the engine, pyflakes' handler
# pattern: the class keeps the walk, the table here the call kinds) --------------------------
_RANGE_HANDLERS: dict[type, _Handler] = {
    ast.Constant: Values._constant,
    ast.Name: Values._name,
    ast.UnaryOp: Values._unary,
    ast.BinOp: Values._binop,
    ast.IfExp: ifexp_range,
    ast.Subscript: subscript_range,
    ast.Call: Values._call,
    ast.Compare: Values._boolean,
    ast.BoolOp: Values._boolean,
    **{kind: Values._no_range for kind in (ast.Attribute, ast.Tuple, ast.List, ast.Slice)},
}


def _sources(values: Values, expr: ast.expr, line: int, depth: int, seen: set,
             until_pointer: bool) -> tuple[set[str], set[str]]:
    """`Values.sources`: a walk of `expr` and the definitions it reaches, one budget step a node."""
    ptrs: set[str] = set()
    sizes: set[str] = set()
    stack: list[tuple[ast.AST, int, int]] = [(expr, line, depth)]
    while stack:
        node, at, d = stack.pop()
        values.steps += 1  # values._budget(), inline: one step per node
        if values.steps > values.max_steps or d > 200:
            break
        if isinstance(node, ast.Call) and call_name(node) in ("load", "tl.load") and node.args:
            ptrs |= {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and POINTER_PARAM.match(n.id)}
            if ptrs and until_pointer:
                break
            # Offsets are index arithmetic, not the loaded value: do not follow them.
            continue
        if isinstance(node, ast.Name):
            key = (node.id, at)
            if key in seen:
                continue
            seen.add(key)
            found = values.definition(node.id, at)
            if found is not None:
                stack.append((found[1], found[0], d + 1))
            elif node.id in values.params and not POINTER_PARAM.match(node.id):
                sizes.add(node.id)
            continue
        # ast.iter_child_nodes' order, without its two generators per node (most nodes here
        # are contexts and operators, with no field at all).
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                stack.append((value, at, d + 1))
            elif isinstance(value, list):
                stack.extend([(item, at, d + 1) for item in value if isinstance(item, ast.AST)])
    return ptrs, sizes
