"""The syntax the value-range engine and the parsers share: which names are pointer parameters and
iteration indices, what a call is called, what divides, and the range of a cumulative sum."""

from __future__ import annotations

import ast
import functools
import re

from . import intervals

# Pointer parameters of a kernel (`in_ptr0`, `out_ptr1`, `in_out_ptr0`): launch arguments that are
# buffers, not sizes.
POINTER_PARAM = re.compile(r"^(in_out_ptr|in_ptr|out_ptr)\d+$")
# Triton's iteration indices (`xindex`, `r0_index`): they range over [0, <prefix>numel).
ITER_INDEX = re.compile(r"^(?P<p>[xyz]|r\d*_?)index$")
DIVISION_OPS = (ast.Div, ast.Mod, ast.FloorDiv)
DIVISION_CALLS = ("mod", "floordiv", "fmod")  # the integer divisions written as calls

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
            and call_name(node).split(".")[-1] in DIVISION_CALLS:
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


# C++ calls that keep their first argument's value, and those with a Python name (parse/ts.py's
# rewriting of kernels' C++).
CPP_PASS_THROUGH_CALLS = {
    "static_cast", "reinterpret_cast", "c10::convert", "convert", "int64_t", "int32_t",
    "VecMask", "Vectorized", "VectorizedN", "std::move", "move", "c10::load", "wrap_with_raii_handle_if_needed",
}
# `c10::div_mod` is sympy's PythonMod: a remainder with the divisor's sign, as kernels' own `mod` computes it.
CPP_RENAMED_CALLS = {
    "c10::div_floor_integer": "floordiv", "div_floor_integer": "floordiv", "c10::div_mod": "mod", "div_mod": "mod",
    "remainder_integral": "mod",   # vectorized `ids % m` (ATen's remainder: the divisor's sign too)
    "c10::div_floor_floating": "floordiv", "std::max": "max", "std::min": "min",
    "max_propagate_nan": "max", "min_propagate_nan": "min",
}
