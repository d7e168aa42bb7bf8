"""The value-range engine's handlers of calls (`where`, casts, `min`/`max`, `arange`, loads, scans),
by the call's short name, and the tests of negative-index wrapping they share with `Values._ifexp`.

Each handler gets the engine (`Engine`: analyzer.expr.values.Values) and answers one end of the
call's range, or None where it cannot say.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Mapping, Protocol

from . import intervals
from .syntax import ITER_INDEX, call_name, load_pointer, scan_sum_range


class Engine(Protocol):
    """What the handlers ask of the engine (analyzer.expr.values.Values has it)."""

    facts: Any
    load_ranges: Mapping[str, tuple[str | None, str | None]]
    bounding_ops: set[str]

    def definition(self, name: str, line: int) -> tuple[int, ast.expr] | None: ...
    def _range(self, node: ast.AST, line: int, depth: int, upper: bool) -> str | None: ...
    def _numel(self, prefix: str, line: int, depth: int) -> str | None: ...
    def _nonneg(self, node: ast.expr, line: int, depth: int) -> bool: ...


def ifexp_range(v: Engine, node: ast.IfExp, line: int, depth: int, upper: bool) -> str | None:
    """C++'s `c ? a : b`: the join of both sides, but negative-index wrapping as in `where`."""
    if never_negative_test(v, node.test, line, depth):
        # `tmp18 ? tmp17 : tmp14` (tmp18 = tmp14 < 0) of an index known to be >= 0 (a clamp).
        return v._range(node.orelse, line, depth, upper)
    mod = python_mod_range(v, node.test, node.body, node.orelse, line, depth, upper)
    if mod is not None:
        return mod
    a, b = v._range(node.body, line, depth, upper), v._range(node.orelse, line, depth, upper)
    if upper and b is not None:
        a = wrapped_upper(v, node.test, node.body, line, depth) or guarded_upper(v, node.test, node.body, a, line, depth)
    if a is None or b is None:
        return None
    return f"{'max' if upper else 'min'}({a}, {b})"


def subscript_range(v: Engine, node: ast.Subscript, line: int, depth: int, upper: bool) -> str | None:
    """Element i of a scan's or a reduction's tuple result; any other subscript (`tl.arange(0,
    XBLOCK)[:, None]` style broadcasting) keeps the value."""
    value, index = node.value, node.slice
    if isinstance(value, ast.Call) and isinstance(index, ast.Constant) and type(index.value) is int:
        name = call_name(value)
        if name.endswith("associative_scan"):
            return scan_element(v, value, line, depth, upper, index.value)
        if name.endswith(("max_with_index", "min_with_index")) and index.value == 1:
            # `tmp2_val, tmp2_idx = triton_helpers.max_with_index(_tmp2, _tmp2_index, 1)`: an argmax
            # over the reduction dim's r0_numel elements (an empty dim is empty-reduction's business).
            n = v._numel("r0_", line, depth) or v._numel("r", line, depth)
            return None if n is None else f"max(({n}) - 1, 0)" if upper else "0"
    return v._range(value, line, depth, upper)


def _where(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) != 3:
        return None
    if never_negative_test(v, node.args[0], line, depth):
        # Negative-index wrapping `where(i < 0, i + 130, i)` of an index known to be >= 0.
        return v._range(node.args[2], line, depth, upper)
    mod = python_mod_range(v, node.args[0], node.args[1], node.args[2], line, depth, upper)
    if mod is not None:
        return mod
    a, b = v._range(node.args[1], line, depth, upper), v._range(node.args[2], line, depth, upper)
    if upper and b is not None:
        a = wrapped_upper(v, node.args[0], node.args[1], line, depth) or \
            guarded_upper(v, node.args[0], node.args[1], a, line, depth)
    if a is None or b is None:
        # Negative-index wrapping `where(i < 0, i + ks, i)` of loaded data stays unknown.
        return None
    return f"{'max' if upper else 'min'}({a}, {b})"


def wrapped_upper(v: Engine, test: ast.expr, body: ast.expr, line: int, depth: int) -> str | None:
    """`c - 1` for the wrapped side of negative-index wrapping, `where(i < 0, i + c, i)` with c a
    constant or one size: it is taken only for i <= -1, so it never exceeds c - 1 (Triton wraps an index whose
    range reaches below 0, a difference of positions, as well as above the table). None otherwise."""
    test, line_t = _through_names(v, test, line)
    body, line_b = _through_names(v, body, line)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt)
            and isinstance(test.left, ast.Name) and _is_zero(v, test.comparators[0], line_t, depth)):
        return None
    if not (isinstance(body, ast.BinOp) and isinstance(body.op, ast.Add) and isinstance(body.left, ast.Name)
            and body.left.id == test.left.id):
        return None
    high, low = v._range(body.right, line_b, depth + 1, True), v._range(body.right, line_b, depth + 1, False)
    if high is None or high != low:
        return None
    # A size wraps alike (`tmp21 < 0 ? tmp21 + ks1 : tmp21`, a column before its row's start).
    return str(int(high) - 1) if re.fullmatch(r"\d+", high) else f"({high}) - 1"


def guarded_upper(v: Engine, test: ast.expr, body: ast.expr, high: str | None, line: int, depth: int) -> str | None:
    """The taken side's maximum `high`, capped by the test that takes it: `where(x < c, x, other)` (T5's
    relative-position buckets: the distance itself only where it is below `max_exact`) gives x < c."""
    test, line_t = _through_names(v, test, line)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Lt, ast.LtE))):
        return high
    left, _ = _through_names(v, test.left, line_t)
    if ast.dump(left) != ast.dump(_through_names(v, body, line)[0]):
        return high
    cap = v._range(test.comparators[0], line_t, depth + 1, True)
    if cap is None:
        return high
    cap = f"({cap}) - 1" if isinstance(test.ops[0], ast.Lt) else cap
    return cap if high is None else f"min({high}, {cap})"


def _through_names(v: Engine, node: ast.expr, line: int) -> tuple[ast.expr, int]:
    """The expression a name holds (a few definitions deep), with the position it was defined at."""
    for _ in range(8):
        if not isinstance(node, ast.Name):
            break
        found = v.definition(node.id, line)
        if found is None:
            break
        line, node = found
    return node, line

def _same_value(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`x.to(dtype)` and `broadcast_to(x, ...)`, `copy(x)`, `cast(x)`...: the value of x."""
    if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        return v._range(node.func.value, line, depth, upper)
    return v._range(node.args[0], line, depth, upper) if node.args else None

def _rounding(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if not node.args:
        return None
    a = v._range(node.args[0], line, depth, upper)
    return None if a is None else f"{call_name(node).split('.')[-1]}({a})"

def _truncating(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`int64_t(tmp11 + tmp12)`: C++'s cast to an integer type truncates toward zero."""
    if len(node.args) != 1:
        return None
    a = v._range(node.args[0], line, depth, upper)
    return None if a is None else f"trunc({a})"

def _floordiv(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) != 2:
        return None
    return v._range(ast.BinOp(node.args[0], ast.FloorDiv(), node.args[1]), line, depth, upper)

def _min_max(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    if len(node.args) != 2:
        return None
    is_min = call_name(node).split(".")[-1] in ("minimum", "min")
    a, b = v._range(node.args[0], line, depth, upper), v._range(node.args[1], line, depth, upper)
    if a is None or b is None:
        # min(a, unknown) <= a; max(a, unknown) >= a: one known side still bounds that end.
        return (a or b) if is_min == upper else None
    return f"{'min' if is_min else 'max'}({a}, {b})"

def _abs(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`std::abs(x2 - x3)`, `tl_math.abs(...)`: |a| for a in [lo, hi] lies in [max(lo, -hi, 0), max(hi, -lo)]
    (a distance table indexed by |i - j| reaches the longer of the two loops)."""
    if len(node.args) != 1:
        return None
    high, low = v._range(node.args[0], line, depth, True), v._range(node.args[0], line, depth, False)
    if high is None or low is None:
        return None
    return f"max({high}, -({low}))" if upper else f"max(max({low}, -({high})), 0)"

def _mod(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`mod(a, b)` (`c10::div_mod`, `remainder_integral`): a remainder with the divisor's sign, so in
    [0, b - 1] for a divisor that is never negative (a size), whatever a is (hashed ids `ids % m`)."""
    if len(node.args) != 2 or not v._nonneg(node.args[1], line, depth):
        return None
    if not upper:
        return "0"
    b = v._range(node.args[1], line, depth, True)
    return None if b is None else f"({b}) - 1"

def _full(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    return v._range(node.args[1], line, depth, upper) if len(node.args) >= 2 else None

def _arange(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
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

def _loop_variable(v: Engine, node: ast.expr, line: int) -> bool:
    """`x1`, or a name copied from it (`tmp4 = x1; tmp5 = c10::convert<int64_t>(tmp4)`): a C++ loop
    variable with a known extent at `line`."""
    for _ in range(8):
        if not isinstance(node, ast.Name):
            return False
        found = v.definition(node.id, line)
        if found is None:
            return not ITER_INDEX.match(node.id) and v.facts.extent_at(node.id, line) is not None
        line, node = found
    return False

def _load(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """A load of a pointer whose buffer's values are known (`load_ranges`); other loads are data."""
    pointer = load_pointer(node)
    found = v.load_ranges.get(pointer) if pointer is not None else None
    return None if found is None else found[1 if upper else 0]

def scan_element(v: Engine, node: ast.Call, line: int, depth: int, upper: bool, element: int = 0) -> str | None:
    """`tl.associative_scan((x,), axis, add_helper)`: a cumulative sum along the reduction dim of
    r0_numel elements lies in [min(0, n*lo), n*hi] (hi >= 0 and lo known). With a helper that
    selects (cummax's `(values, indices)` pairs), element i of the result is one of the scanned
    element i's values: its range."""
    if len(node.args) != 3 or not isinstance(node.args[0], ast.Tuple) or not node.args[0].elts:
        return None
    combine = node.args[2]
    op = v.facts.combines.get(combine.id) if isinstance(combine, ast.Name) else None
    elts = node.args[0].elts
    if op == "select" and 0 <= element < len(elts):
        return v._range(elts[element], line, depth, upper)
    if op != "add" or len(elts) != 1 or element != 0:
        return None
    n = v._numel("r0_", line, depth) or v._numel("r", line, depth)
    return None if n is None else scan_sum_range(n, v._range(node.args[0].elts[0], line, depth, False),
                                                 v._range(node.args[0].elts[0], line, depth, True), upper)

def _bucketize(v: Engine, node: ast.Call, line: int, depth: int, upper: bool) -> str | None:
    """`triton_helpers.bucketize_binary_search(values, boundaries, BOUNDARIES_SIZE, ...)`, Inductor's
    bucketize/searchsorted inside a Triton kernel: an insertion point in [0, BOUNDARIES_SIZE]
    whatever the values (older torch passes the size fifth, after the dtype and `right`)."""
    if len(node.args) < 3:
        return None
    if not upper:
        return "0"
    size = node.args[2] if not isinstance(node.args[2], ast.Attribute) else node.args[4] if len(node.args) > 4 else None
    found = v._range(size, line, depth, True) if size is not None else None
    if found is not None:
        # One helper for both ops; the kernel's name says which the user wrote.
        name = str(getattr(v.facts, "name", ""))
        v.bounding_ops.add("searchsorted_Tensor" if "searchsorted" in name and "bucketize" not in name
                           else "bucketize_Tensor")
    return found

def never_negative_test(v: Engine, test: ast.expr, line: int, depth: int) -> bool:
    """`v < 0` (directly or through a name) where v is known to be >= 0: the test never holds; nor
    does `signbit(a) != signbit(b)` of two such values, nor a conjunction with such a part: Python's
    modulo in C++, `(r != 0 & signbit(r) != signbit(b)) ? r + b : r`, of a remainder and a divisor that
    are never negative keeps r (an index `(i + lag) % t` stays below t)."""
    test, line = _through_names(v, test, line)
    if isinstance(test, ast.Name) or depth > 60:
        return False
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.BitAnd):
        return any(never_negative_test(v, part, line, depth + 1) for part in (test.left, test.right))
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if isinstance(test.ops[0], ast.NotEq):
        signs = [_sign_of(v, *_through_names(v, side, line)) for side in (test.left, test.comparators[0])]
        return all(sign is not None and v._nonneg(sign[0], sign[1], depth + 1) for sign in signs)
    if not (isinstance(test.ops[0], ast.Lt) and _is_zero(v, test.comparators[0], line, depth)):
        return False
    return v._nonneg(test.left, line, depth)


def python_mod_range(v: Engine, test: ast.expr, body: ast.expr, orelse: ast.expr, line: int, depth: int,
                     upper: bool) -> str | None:
    """Python's modulo from a truncating one: `where((r != 0) & (sign(r) != sign(b)), r + b, r)` with
    r = a % b lies in [0, b - 1] for a divisor b >= 0 (a size: at 0 the `%` fails first), whatever a's
    sign (`ids % m` of any ids)."""
    test, at = _through_names(v, test, line)
    plus, _ = _through_names(v, body, line)
    if not (isinstance(test, ast.BinOp) and isinstance(test.op, ast.BitAnd)
            and isinstance(plus, ast.BinOp) and isinstance(plus.op, ast.Add)):
        return None
    r = ast.dump(orelse)
    terms = {ast.dump(plus.left), ast.dump(plus.right)}
    remainder, _ = _through_names(v, orelse, line)
    if r not in terms or len(terms) != 2 or not _is_remainder(remainder):
        return None
    b = plus.right if ast.dump(plus.left) == r else plus.left
    parts = [_through_names(v, part, at) for part in (test.left, test.right)]
    nonzero = signs = False
    for part, where_at in parts:
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.NotEq)):
            return None
        if ast.dump(part.left) == r and _is_zero(v, part.comparators[0], where_at, depth):
            nonzero = True
            continue
        sides = [_sign_of(v, *_through_names(v, side, where_at)) for side in (part.left, part.comparators[0])]
        signs = signs or sorted(ast.dump(s[0]) for s in sides if s is not None) == sorted((r, ast.dump(b)))
    low = v._range(b, line, depth + 1, upper=False)
    if not (nonzero and signs and low is not None):
        return None
    try:
        if intervals.evaluate_interval(low, {}, default=(0, None))[0] < 0:  # (at 0 the `%` itself fails)
            return None
    except ValueError:
        return None
    if not upper:
        return "0"
    high = v._range(b, line, depth + 1, upper=True)
    return None if high is None else f"({high}) - 1"


def _is_remainder(node: ast.expr) -> bool:
    """`a % b` (Triton's, C's: truncating), or a `mod` / `fmod` call."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
        or isinstance(node, ast.Call) and call_name(node).split(".")[-1] in ("mod", "fmod")


def _sign_of(v: Engine, node: ast.expr, line: int, depth: int = 0) -> tuple[ast.expr, int] | None:
    """The value whose sign `node` tests, with the line to read it at: C++'s `signbit(x)`, Triton's
    `(libdevice.signbit(x) != 0) if (x).dtype is tl.float32 else x < 0` (either branch: the same test)."""
    if depth > 8:
        return None
    if isinstance(node, ast.IfExp):
        sides = [_sign_of(v, *_through_names(v, side, line), depth + 1) for side in (node.body, node.orelse)]
        same = sides[0] is not None and sides[1] is not None and ast.dump(sides[0][0]) == ast.dump(sides[1][0])
        return sides[1] if same else None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        if isinstance(node.ops[0], ast.NotEq) and isinstance(node.comparators[0], ast.Constant) \
                and node.comparators[0].value == 0:
            return _sign_of(v, *_through_names(v, node.left, line), depth + 1)
        if isinstance(node.ops[0], ast.Lt) and isinstance(node.comparators[0], ast.Constant) \
                and node.comparators[0].value == 0:
            return node.left, line
        return None
    if isinstance(node, ast.Call) and call_name(node).endswith("signbit") and len(node.args) == 1:
        return node.args[0], line
    return None


def _is_zero(v: Engine, node: ast.expr, line: int, depth: int) -> bool:
    """`0`, or a name that holds 0 (C++ vector code compares with `tmp6 = VectorizedN(tmp5)`,
    `tmp5 = static_cast<int64_t>(0)`)."""
    if isinstance(node, ast.Constant):
        return node.value == 0
    return isinstance(node, ast.Name) and v._range(node, line, depth + 1, upper=True) == "0" \
        and v._range(node, line, depth + 1, upper=False) == "0"


CALL_HANDLERS: dict[str, Callable[..., "str | None"]] = {
    "where": _where,
    # C++'s functional casts `float(a * b)`, `double(x)` too: exact for the integers sizes take.
    **{name: _same_value for name in ("to", "broadcast_to", "copy", "cast", "reshape", "expand_dims",
                                             "convert", "float", "double")},
    **{name: _rounding for name in ("trunc", "floor", "ceil")},
    **{name: _truncating for name in ("int64_t", "int32_t", "int", "long")},
    "floordiv": _floordiv,
    **{name: _min_max for name in ("minimum", "maximum", "min", "max")},
    "abs": _abs,
    "mod": _mod,
    "full": _full,
    "arange": _arange,
    "load": _load,
    "associative_scan": scan_element,
    "bucketize_binary_search": _bucketize,
}
