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
import functools
import re
from typing import Any, Callable, Mapping, Protocol

from . import intervals
from ..core import strict



class KernelFacts(Protocol):
    """What the engine reads of a kernel (parse/kernels.py's KernelFacts has it): the engine sits
    below the parsers, so it names the shape rather than the class."""

    params: tuple[str, ...]
    defs: dict[str, list[tuple[int, ast.expr]]]
    combines: dict[str, str]

    def extent_at(self, var: str, pos: int) -> str | None: ...

# Pointer parameters of a kernel (`in_ptr0`, `out_ptr1`, `in_out_ptr0`): launch arguments that are
# buffers, not sizes.
POINTER_PARAM = re.compile(r"^(in_out_ptr|in_ptr|out_ptr)\d+$")
# Triton's iteration indices (`xindex`, `r0_index`): they range over [0, <prefix>numel).
_ITER_INDEX = re.compile(r"^(?P<p>[xyz]|r\d*_?)index$")
DIVISION_OPS = (ast.Div, ast.Mod, ast.FloorDiv)
_DEPTH_LIMIT = 60


def shape_key(node: object) -> object:
    """A hashable key equal for expressions of the same shape (fields, not positions), as
    `ast.dump` compares them; without its per-call closure, a reference cycle that thousands of
    calls would leave for the cyclic collector."""
    if isinstance(node, ast.AST):
        return (type(node).__name__, *(shape_key(getattr(node, f, None)) for f in node._fields))
    if isinstance(node, list):
        return tuple(shape_key(item) for item in node)
    return type(node), node   # 1 and True, 1 and 1.0 differ, as in ast.dump


def call_name(node: ast.Call) -> str:
    """`tl.load(...)` -> "tl.load"; `f(...)` -> "f"; a call of anything else -> ""."""
    func = node.func
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def expr_text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - ast.unparse of odd trees must not abort analysis
        return "?"


def divisor_of(node: ast.AST) -> tuple[ast.expr, ast.expr, bool] | None:
    """(dividend, divisor, integer?) when `node` is a division: `a / b` (float), `a // b`, `a % b`,
    `floordiv(a, b)`, `mod(a, b)`, `fmod(a, b)` (integer)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, DIVISION_OPS):
        return node.left, node.right, not isinstance(node.op, ast.Div)
    if isinstance(node, ast.Call) and len(node.args) == 2 \
            and call_name(node).split(".")[-1] in ("mod", "floordiv", "fmod"):
        return node.args[0], node.args[1], True
    return None


@functools.lru_cache(maxsize=4096)
def divisor_texts(expr: str) -> tuple[str, ...]:
    """The divisors (as text) of every division in a size expression (`s0 // 2` -> ("2",));
    () when it does not parse. The wrapper repeats a few numel expressions thousands of times."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return ()
    return tuple(ast.unparse(found[1]) for node in ast.walk(tree) if (found := divisor_of(node)) is not None)


def division(values: "Values", node: ast.AST, line: int) -> tuple[str, str | None, bool] | None:
    """(divisor text, divisor over params, integer?) when `node` divides by a kernel size.

    Float `/` by a size is a mean-like NaN source. Integer `%` / `//` (`mod(a, b)` in C++) count
    only when the dividend is loaded data: index arithmetic like `xindex % ks0` runs only for
    lanes that exist, so a zero size never reaches it.
    """
    found = divisor_of(node)
    if found is None:
        return None
    dividend, divisor, integer = found
    ptrs, sizes = values.sources(divisor, line, until_pointer=True)
    if not sizes or ptrs:
        return None
    if integer and not values.sources(dividend, line, until_pointer=True)[0]:
        return None
    return expr_text(divisor), values.upper(divisor, line), integer


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
        seen = set() if seen is None else seen
        ptrs: set[str] = set()
        sizes: set[str] = set()
        stack: list[tuple[ast.AST, int, int]] = [(expr, line, depth)]
        while stack:
            node, at, d = stack.pop()
            if not self._budget() or d > 200:
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
                found = self.definition(node.id, at)
                if found is not None:
                    stack.append((found[1], found[0], d + 1))
                elif node.id in self.params and not POINTER_PARAM.match(node.id):
                    sizes.add(node.id)
                continue
            stack.extend((child, at, d + 1) for child in ast.iter_child_nodes(node))
        return ptrs, sizes

    def upper(self, expr: ast.expr, line: int, depth: int = 0) -> str | None:
        """Inclusive symbolic maximum of `expr`, or None when unbounded/unknown."""
        return self._range(expr, line, depth, True)

    def data_upper(self, expr: ast.expr, line: int) -> str | None:
        """The constant maximum of loaded data (`clamp(values, 0, 400)` -> "400"): what the kernel's own
        arithmetic bounds whatever was loaded; None when it depends on a size or nothing bounds it."""
        found = self.upper(expr, line)
        try:
            return found if found is not None and not intervals.names(found) else None
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
        m = _ITER_INDEX.match(name)
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
        if isinstance(op, (ast.FloorDiv, ast.Div)):
            a, b = rng(node.left, line, depth, upper), rng(node.right, line, depth, not upper)
            if a is None or b is None:
                return None
            return f"floordiv({a}, {b})" if isinstance(op, ast.FloorDiv) else f"({a}) / ({b})"
        return None  # bit operations, powers: not index arithmetic Inductor emits for bounds

    def _ifexp(self, node: ast.IfExp, line: int, depth: int, upper: bool) -> str | None:
        if _never_negative_test(self, node.test, line, depth):
            # C++'s negative-index wrapping `tmp18 ? tmp17 : tmp14` (tmp18 = tmp14 < 0) of an index
            # known to be >= 0 (a clamp): as `where` in Triton.
            return self._range(node.orelse, line, depth, upper)
        a, b = self._range(node.body, line, depth, upper), self._range(node.orelse, line, depth, upper)
        if a is None or b is None:
            return None
        return f"{'max' if upper else 'min'}({a}, {b})"

    def _subscript(self, node: ast.Subscript, line: int, depth: int, upper: bool) -> str | None:
        # `tl.arange(0, XBLOCK)[:, None]` style broadcasting keeps the value.
        return self._range(node.value, line, depth, upper)

    def _boolean(self, node: ast.AST, line: int, depth: int, upper: bool) -> str | None:
        """A comparison (`tmp0 != tmp1`) or `and`/`or` of them is 0 or 1."""
        if isinstance(node, ast.BoolOp) and not all(isinstance(v, (ast.Compare, ast.BoolOp)) for v in node.values):
            return None  # Python's `a or b` is an operand, not a truth value
        return "1" if upper else "0"

    def _no_range(self, node: ast.AST, line: int, depth: int, upper: bool) -> str | None:
        """Kinds that are never a size: comparisons and masks, attributes (dtypes), literals."""
        return None

    def _call(self, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
        handler = _CALL_HANDLERS.get(call_name(node).split(".")[-1])
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


# -- calls, one handler per short name (module functions over the engine, pyflakes' handler
# pattern: the class keeps the walk, the table here the call kinds) --------------------------
def _where(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) != 3:
        return None
    if _never_negative_test(v, node.args[0], line, depth):
        # Negative-index wrapping `where(i < 0, i + 130, i)` of an index known to be >= 0.
        return v._range(node.args[2], line, depth, upper)
    a, b = v._range(node.args[1], line, depth, upper), v._range(node.args[2], line, depth, upper)
    if a is None or b is None:
        # Negative-index wrapping `where(i < 0, i + ks, i)` of loaded data stays unknown.
        return None
    return f"{'max' if upper else 'min'}({a}, {b})"

def _same_value(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`x.to(dtype)` and `broadcast_to(x, ...)`, `copy(x)`, `cast(x)`...: the value of x."""
    if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        return v._range(node.func.value, line, depth, upper)
    return v._range(node.args[0], line, depth, upper) if node.args else None

def _rounding(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if not node.args:
        return None
    a = v._range(node.args[0], line, depth, upper)
    return None if a is None else f"{call_name(node).split('.')[-1]}({a})"

def _truncating(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`int64_t(tmp11 + tmp12)`: C++'s cast to an integer type truncates toward zero."""
    if len(node.args) != 1:
        return None
    a = v._range(node.args[0], line, depth, upper)
    return None if a is None else f"trunc({a})"

def _floordiv(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) != 2:
        return None
    return v._range(ast.BinOp(node.args[0], ast.FloorDiv(), node.args[1]), line, depth, upper)

def _min_max(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) != 2:
        return None
    is_min = call_name(node).split(".")[-1] in ("minimum", "min")
    a, b = v._range(node.args[0], line, depth, upper), v._range(node.args[1], line, depth, upper)
    if a is None or b is None:
        # min(a, unknown) <= a; max(a, unknown) >= a: one known side still bounds that end.
        return (a or b) if is_min == upper else None
    return f"{'min' if is_min else 'max'}({a}, {b})"

def _full(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    return v._range(node.args[1], line, depth, upper) if len(node.args) >= 2 else None

def _arange(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) < 2:
        return None
    if not upper:
        return v._range(node.args[0], line, depth, False)
    # C++ `VectorizedN<int64_t, 2>::arange(x1, 1)` in a loop over x1 by whole vectors: lane i holds
    # x1 + i, the position it stands for, and the vector body runs for positions inside x1's loop
    # only (the tail loop does the rest): its maximum is the loop's own. Triton's `tl.arange(0, N)`
    # starts at a constant and says nothing alone (`_name` reads `xindex` through its numel).
    step = node.args[1]
    if isinstance(step, ast.Constant) and step.value == 1 and _loop_variable(v, node.args[0], line):
        return v._range(node.args[0], line, depth, True)
    return None

def _loop_variable(v: Values, node: ast.expr, line: int) -> bool:
    """`x1`, or a name copied from it (`tmp4 = x1; tmp5 = c10::convert<int64_t>(tmp4)`): a C++ loop
    variable with a known extent at `line`."""
    for _ in range(8):
        if not isinstance(node, ast.Name):
            return False
        found = v.definition(node.id, line)
        if found is None:
            return not _ITER_INDEX.match(node.id) and v.facts.extent_at(node.id, line) is not None
        line, node = found
    return False

def _load(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """A load of a pointer whose buffer's values are known (`load_ranges`); other loads are data."""
    pointer = load_pointer(node)
    found = v.load_ranges.get(pointer) if pointer is not None else None
    return None if found is None else found[1 if upper else 0]

def _scan(v: Values, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`tl.associative_scan((x,), axis, add_helper)`: a cumulative sum along the reduction dim of
    r0_numel elements lies in [min(0, n*lo), n*hi] (hi >= 0 and lo known)."""
    if len(node.args) != 3 or not isinstance(node.args[0], ast.Tuple) or len(node.args[0].elts) != 1:
        return None
    combine = node.args[2]
    if not isinstance(combine, ast.Name) or v.facts.combines.get(combine.id) != "add":
        return None
    n = v._numel("r0_", line, depth) or v._numel("r", line, depth)
    return None if n is None else scan_sum_range(n, v._range(node.args[0].elts[0], line, depth, False),
                                                 v._range(node.args[0].elts[0], line, depth, True), upper)

def _never_negative_test(v: Values, test: ast.expr, line: int, depth: int) -> bool:
    """`v < 0` (directly or through a name) where v is known to be >= 0: the test never holds."""
    for _ in range(8):
        if not isinstance(test, ast.Name):
            break
        found = v.definition(test.id, line)
        if found is None:
            return False
        line, test = found
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt)
            and _is_zero(v, test.comparators[0], line, depth)):
        return False
    return v._nonneg(test.left, line, depth)

def _is_zero(v: Values, node: ast.expr, line: int, depth: int) -> bool:
    """`0`, or a name that holds 0 (C++ vector code compares with `tmp6 = VectorizedN(tmp5)`,
    `tmp5 = static_cast<int64_t>(0)`)."""
    if isinstance(node, ast.Constant):
        return node.value == 0
    return isinstance(node, ast.Name) and v._range(node, line, depth + 1, upper=True) == "0" \
        and v._range(node, line, depth + 1, upper=False) == "0"


_RANGE_HANDLERS: dict[type, _Handler] = {
    ast.Constant: Values._constant,
    ast.Name: Values._name,
    ast.UnaryOp: Values._unary,
    ast.BinOp: Values._binop,
    ast.IfExp: Values._ifexp,
    ast.Subscript: Values._subscript,
    ast.Call: Values._call,
    ast.Compare: Values._boolean,
    ast.BoolOp: Values._boolean,
    **{kind: Values._no_range for kind in (ast.Attribute, ast.Tuple, ast.List, ast.Slice)},
}
_CALL_HANDLERS: dict[str, _Handler] = {
    "where": _where,
    # C++'s functional casts `float(a * b)`, `double(x)` too: exact for the integers sizes take.
    **{name: _same_value for name in ("to", "broadcast_to", "copy", "cast", "reshape", "expand_dims",
                                             "convert", "float", "double")},
    **{name: _rounding for name in ("trunc", "floor", "ceil")},
    **{name: _truncating for name in ("int64_t", "int32_t", "int", "long")},
    "floordiv": _floordiv,
    **{name: _min_max for name in ("minimum", "maximum", "min", "max")},
    "full": _full,
    "arange": _arange,
    "load": _load,
    "associative_scan": _scan,
}


def load_pointer(node: ast.Call) -> str | None:
    """The pointer parameter a load reads: C++ `load(in_ptr2, x1)`, Triton `tl.load(in_ptr2 + (x1), mask)`."""
    if call_name(node).split(".")[-1] != "load" or not node.args:
        return None
    first = node.args[0]
    while isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add):
        first = first.left if isinstance(first.left, (ast.Name, ast.BinOp)) else first.right
    return first.id if isinstance(first, ast.Name) and POINTER_PARAM.match(first.id) else None


def scan_sum_range(n: str, lo: str | None, hi: str | None, upper: bool) -> str | None:
    """One end of the range of a cumulative sum of n values in [lo, hi]: [min(0, n*lo), n*hi],
    known only where the sign of that end is (hi >= 0; lo >= 0 gives 0, lo <= 0 gives n*lo)."""
    end = hi if upper else lo
    if end is None:
        return None
    try:
        low, high = intervals.evaluate_interval(end, {}, default=(0, None))
    except ValueError:
        return None
    if upper:
        return f"({n}) * ({end})" if low >= 0 else None
    return "0" if low >= 0 else f"({n}) * ({end})" if high <= 0 else None
