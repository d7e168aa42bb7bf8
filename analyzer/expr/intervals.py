"""Integer interval arithmetic over size expressions (Python syntax, parsed with `ast`, never eval'd).

`evaluate_interval("s77*s95 - 1", {"s77": (2, inf), "s95": (2, 10)})` -> (3, inf).
Unknown constructs raise ValueError: callers treat that as "cannot say" rather than guessing. So do
numbers and depths that cannot be represented (a 400-digit lower bound, an expression nested past
Python's recursion limit): hostile text never escapes as OverflowError or RecursionError.
"""

from __future__ import annotations

import ast
import functools
import keyword
import math
from collections.abc import Callable, Mapping

INF = math.inf
Interval = tuple[float, float]


_MAX_EXPR = 20_000


@functools.lru_cache(maxsize=4096)
def _parse(expr: str) -> ast.expr:
    if len(expr) > _MAX_EXPR:
        raise ValueError("expression too long")
    try:
        return ast.parse(expr, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise ValueError(f"cannot parse expression {expr[:60]!r}") from exc


def names(expr: str) -> frozenset[str]:
    """Free names of an expression (function names excluded)."""
    if expr.isascii() and expr.isidentifier() and not keyword.iskeyword(expr) and len(expr) <= _MAX_EXPR:
        return frozenset((expr,))  # a bare name (most launch arguments): what the parse gives, sooner
    return _names(expr)


@functools.lru_cache(maxsize=8192)
def _names(expr: str) -> frozenset[str]:
    tree = _parse(expr)
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs)


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.mapping = mapping

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [self.visit(a) for a in node.args]  # function names are not free names
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.mapping:
            return _parse(self.mapping[node.id])
        return node


def substitute(expr: str, mapping: Mapping[str, str]) -> str:
    """Replace free names by (parenthesized) expressions."""
    free = names(expr)
    used = free & mapping.keys()
    if not used:
        return expr
    if len(free) == 1 and expr.strip() in mapping:
        return simplify(mapping[expr.strip()])
    # The result depends only on the mapping of the expression's own names: thousands of launches
    # share a few numel expressions (`768*s27`) and parameter maps.
    return _substitute(expr, tuple(sorted((name, mapping[name]) for name in used)))


@functools.lru_cache(maxsize=8192)
def _substitute(expr: str, pairs: tuple[tuple[str, str], ...]) -> str:
    try:
        # A fresh tree to rewrite (the cached one is shared): parsing again is far cheaper than a
        # deep copy, which dominated linking on wrappers with thousands of launches.
        tree = _Substitute(dict(pairs)).visit(_parse.__wrapped__(expr))
        return simplify(ast.unparse(tree))
    except RecursionError:  # a sum of hundreds of terms nests as deep: copy and unparse recurse
        raise ValueError(f"expression nested too deeply {expr[:60]!r}") from None


class _Fold(ast.NodeTransformer):
    """Constant folding and the identities that make "max index + 1" read as the size."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        folded = _fold_sum(node)
        if folded is not None:
            return folded
        left, right = node.left, node.right
        if isinstance(left, ast.Constant) and isinstance(right, ast.Constant):
            try:
                value = _binop(node.op, left.value, right.value)  # type: ignore[arg-type]  # non-numbers: TypeError
            except (ValueError, ZeroDivisionError, TypeError):
                return node
            if isinstance(value, float) and value.is_integer() and not isinstance(node.op, ast.Div):
                value = int(value)
            return ast.Constant(value)
        if isinstance(node.op, ast.Add) and isinstance(right, ast.Constant) and right.value == 0:
            return left
        if isinstance(node.op, ast.Add) and isinstance(left, ast.Constant) and left.value == 0:
            return right
        if isinstance(node.op, ast.Sub) and isinstance(right, ast.Constant) and right.value == 0:
            return left
        if isinstance(node.op, ast.Mult) and isinstance(right, ast.Constant) and right.value == 1:
            return left
        if isinstance(node.op, ast.Mult) and isinstance(left, ast.Constant) and left.value == 1:
            return right
        # (a - 1) + 1 -> a : the common shape of "max index + 1".
        if (isinstance(node.op, ast.Add) and isinstance(right, ast.Constant)
                and isinstance(left, ast.BinOp) and isinstance(left.op, ast.Sub)
                and isinstance(left.right, ast.Constant) and left.right.value == right.value):
            return left.left
        # (a + 1) + 1 -> a + 2 (integers only): "max index + 1" of an index that is a size + 1.
        if (isinstance(node.op, ast.Add) and isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add)
                and isinstance(right, ast.Constant) and type(right.value) is int
                and isinstance(left.right, ast.Constant) and type(left.right.value) is int):
            return ast.BinOp(left.left, ast.Add(), ast.Constant(left.right.value + right.value))
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """`floordiv(k*X - c, k)` with 0 <= c <= k integers -> `X - 1` (`X` when c == 0): the row of the
        last element of a Triton `xindex // k` over `xnumel = k*X`. Sizes are integers, so
        floor(X - c/k) is X - ceil(c/k)."""
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("min", "max") and len(node.args) == 2 \
                and not node.keywords:
            # `min(0, 0)`, `max(s27, s27)`: the two ends of a join that agree.
            a, b = node.args
            values = [_int(a), _int(b)]
            if None not in values:
                return ast.Constant((min if node.func.id == "min" else max)(values))  # type: ignore[type-var]
            return a if ast.dump(a) == ast.dump(b) else node
        if not (isinstance(node.func, ast.Name) and node.func.id == "floordiv" and len(node.args) == 2):
            return node
        num, den = node.args
        c = 0
        if isinstance(num, ast.BinOp) and isinstance(num.op, ast.Sub):
            sub = _int(num.right)
            if sub is not None:
                num, c = num.left, sub
        k = _int(den)
        if (k is None or k <= 0 or not 0 <= c <= k or not isinstance(num, ast.BinOp)
                or not isinstance(num.op, ast.Mult) or _int(num.left) != k):
            return node
        return num.right if c == 0 else ast.BinOp(num.right, ast.Sub(), ast.Constant(1))


def _int(node: ast.AST) -> int | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@functools.lru_cache(maxsize=8192)
def simplify(expr: str) -> str:
    """Fold constants and drop redundant parentheses (cosmetic; keeps reports readable)."""
    try:
        _parse(expr)  # cached: refuses what cannot be parsed
    except ValueError:
        return expr
    try:
        return ast.unparse(_Fold().visit(_parse.__wrapped__(expr)))  # a fresh tree: see substitute
    except (RecursionError, ValueError):
        return expr


def cancel(expr: str) -> str:
    """`simplify`, with terms of a sum that cancel dropped (`s27 - 1 + VALUE - s27` -> `VALUE - 1`):
    for display only, as keys and chains built from `simplify` keep their text."""
    try:
        tree = _Cancel().visit(_parse.__wrapped__(simplify(expr)))
        return ast.unparse(_Fold().visit(tree))
    except (RecursionError, ValueError, SyntaxError):
        return expr


class _Cancel(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return node
        terms: list[tuple[int, ast.expr]] = []
        stack: list[tuple[int, ast.expr]] = [(1, node)]
        while stack:
            sign, part = stack.pop()
            if isinstance(part, ast.BinOp) and isinstance(part.op, (ast.Add, ast.Sub)):
                stack += [(sign if isinstance(part.op, ast.Add) else -sign, part.right), (sign, part.left)]
            elif isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
                stack.append((-sign, part.operand))
            else:
                terms.append((sign, part))
        kept: list[tuple[int, ast.expr]] = []
        for sign, part in terms:
            twin = next((i for i, (s, t) in enumerate(kept) if s == -sign and ast.dump(t) == ast.dump(part)), None)
            if twin is None:
                kept.append((sign, part))
            else:
                del kept[twin]
        if not kept:
            return ast.Constant(0)
        # A term added first, then the rest, constants last: `VALUE - 1`, not `-1 + VALUE`.
        kept.sort(key=lambda t: (isinstance(t[1], ast.Constant), t[0] < 0))
        first_sign, out = kept[0]
        if first_sign < 0:
            out = ast.UnaryOp(ast.USub(), out)
        for sign, part in kept[1:]:
            out = ast.BinOp(out, ast.Add() if sign > 0 else ast.Sub(), part)
        return out


def _fold_sum(node: ast.BinOp) -> ast.expr | None:
    """`2 + (s27 - 1) + 1` -> `s27 + 2`: a sum holding two or more whole constants, its terms in
    order and the constants added last; None for any other node (or a first term subtracted)."""
    if not isinstance(node.op, (ast.Add, ast.Sub)):
        return None
    terms: list[tuple[int, ast.expr]] = []
    stack: list[tuple[int, ast.expr]] = [(1, node)]
    while stack:  # left to right: the right operand is pushed first
        sign, expr = stack.pop()
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            stack.append((sign if isinstance(expr.op, ast.Add) else -sign, expr.right))
            stack.append((sign, expr.left))
        else:
            terms.append((sign, expr))
    constants = [sign * value for sign, t in terms if (value := _whole_value(t)) is not None]
    others = [(sign, t) for sign, t in terms if not _whole(t)]
    if len(constants) < 2 or (others and others[0][0] < 0):
        return None
    total = sum(constants)
    if not others:
        return ast.Constant(total)
    out = others[0][1]
    for sign, t in others[1:]:
        out = ast.BinOp(out, ast.Add() if sign > 0 else ast.Sub(), t)
    if total:
        out = ast.BinOp(out, ast.Add() if total > 0 else ast.Sub(), ast.Constant(abs(total)))
    return out


def _whole(node: ast.expr) -> bool:
    """An integer constant, or a float one of integral value (C++ kernels compute sizes in float)."""
    return _whole_value(node) is not None


def _whole_value(node: ast.expr) -> int | None:
    """The value of a `_whole` constant, as an int; None for anything else."""
    value = node.value if isinstance(node, ast.Constant) else None
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return None


def _binop(op: ast.operator, a: float, b: float) -> float:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div):
        return a / b
    if isinstance(op, ast.FloorDiv):
        return a // b
    if isinstance(op, ast.Mod):
        return a % b
    raise ValueError("unsupported operator")


def _python_mod(a: Interval, b: Interval) -> Interval:
    """`mod(a, b)` (c10::div_mod, sympy's PythonMod): the remainder takes the divisor's sign, so for a
    positive constant divisor it lies in [0, b - 1] whatever a's sign, and is exact within one period."""
    if b[0] == b[1] and b[0] > 0 and not math.isinf(b[0]):
        if not math.isinf(a[0]) and not math.isinf(a[1]) and a[0] // b[0] == a[1] // b[0]:
            return a[0] % b[0], a[1] % b[0]
        return 0.0, b[0] - 1
    raise ValueError("modulo by a divisor that is not a positive constant")


def _mod(a: Interval, b: Interval) -> Interval:
    if b[0] > 0 and a[0] >= 0:
        # Within one period of a constant modulus (a point among them) the remainder is exact:
        # `evaluate` of `s27 % 7` at 9 is 2, not [0, 6].
        if b[0] == b[1] and not math.isinf(a[1]) and a[0] // b[0] == a[1] // b[0]:
            return a[0] % b[0], a[1] % b[0]
        return 0.0, min(a[1], b[1] - 1)
    raise ValueError("modulo of a possibly negative or zero interval")


def _div(a: Interval, b: Interval) -> Interval:
    """`a / b` for `b` not containing 0."""
    if b[0] <= 0 <= b[1]:
        raise ValueError("division by an interval containing 0")
    if not math.isinf(b[0]) and not math.isinf(b[1]):
        # Each quotient rounded once: a product with 1/b can fall just below an exact integer quotient
        # (2401 * (1/49) < 49), which a floor then takes one lower.
        quotients = [x / y for x in a for y in b]
        return min(quotients), max(quotients)
    inv = (1 / b[1], 1 / b[0]) if not math.isinf(b[1]) else (0.0, 1 / b[0])
    if math.isinf(b[0]):
        inv = (1 / b[1], 0.0)
    return _mul(a, inv)


def evaluate(expr: str, values: Mapping[str, float]) -> float:
    """Evaluate with concrete values for every free name."""
    lo, hi = evaluate_interval(expr, {k: (v, v) for k, v in values.items()})
    if lo != hi:
        raise ValueError("not a point")
    return lo


def evaluate_interval(expr: str, ranges: Mapping[str, tuple[float, float | None]],
                      default: tuple[float, float | None] | None = None) -> Interval:
    """Sound interval of `expr` when each name ranges over `ranges[name]` (None = +inf)."""
    tree = _parse(expr)
    try:
        lo, hi = _eval(tree, ranges, default, 0)
    except (OverflowError, RecursionError, ZeroDivisionError) as exc:  # ZeroDivision: an empty range
        raise ValueError(f"cannot evaluate {expr[:60]!r}: {type(exc).__name__}") from None
    if lo == hi and math.isinf(lo):  # `inf`, `1e999`: no size is that; "cannot say"
        raise ValueError(f"{expr[:60]!r} is not a finite number")
    return lo, hi


def _float(value: float, upper: bool) -> float:
    """A number as a float; past float's range an upper bound is +inf (sound), anything else
    "cannot say"."""
    try:
        return float(value)
    except OverflowError:
        if upper and value > 0:
            return INF
        if not upper and value < 0:
            return -INF
        raise ValueError("number too large to analyse") from None


def _mul(a: Interval, b: Interval) -> Interval:
    products = []
    for x in a:
        for y in b:
            if (x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x)):
                products.append(0.0)
            else:
                products.append(x * y)
    return min(products), max(products)


def _eval(node: ast.AST, ranges, default, depth: int) -> Interval:
    if depth > 200:
        raise ValueError("expression nested too deeply")
    d = depth + 1
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        value = _float(node.value, upper=False)
        return value, value
    if isinstance(node, ast.Name):
        if node.id == "inf":
            return INF, INF
        rng = ranges.get(node.id, default)
        if rng is None:
            raise ValueError(f"unknown name {node.id}")
        lo, hi = rng
        return _float(lo, upper=False), (INF if hi is None else _float(hi, upper=True))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        lo, hi = _eval(node.operand, ranges, default, d)
        return -hi, -lo
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _eval(node.operand, ranges, default, d)
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, ranges, default, d)
        b = _eval(node.right, ranges, default, d)
        op = node.op
        if isinstance(op, ast.Add):
            return a[0] + b[0], a[1] + b[1]
        if isinstance(op, ast.Sub):
            return a[0] - b[1], a[1] - b[0]
        if isinstance(op, ast.Mult):
            return _mul(a, b)
        if isinstance(op, (ast.Div, ast.FloorDiv)):
            lo, hi = _div(a, b)
            if isinstance(op, ast.FloorDiv):
                return float(math.floor(lo)) if not math.isinf(lo) else lo, float(math.floor(hi)) if not math.isinf(hi) else hi
            return lo, hi
        if isinstance(op, ast.Mod):
            return _mod(a, b)
        raise ValueError("unsupported operator")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fn = node.func.id
        args = [_eval(a, ranges, default, d) for a in node.args]
        if fn == "max" and args:
            return max(a[0] for a in args), max(a[1] for a in args)
        if fn == "min" and args:
            return min(a[0] for a in args), min(a[1] for a in args)
        if fn == "floordiv" and len(args) == 2:
            return _eval(ast.BinOp(node.args[0], ast.FloorDiv(), node.args[1]), ranges, default, d)
        if fn == "mod" and len(args) == 2:
            return _python_mod(args[0], args[1])
        if fn in ("trunc", "floor", "ceil") and len(args) == 1:
            rounders: dict[str, Callable[[float], int]] = {"trunc": math.trunc, "floor": math.floor, "ceil": math.ceil}
            f = rounders[fn]
            lo, hi = args[0]
            return (lo if math.isinf(lo) else float(f(lo))), (hi if math.isinf(hi) else float(f(hi)))
    raise ValueError(f"unsupported expression {ast.dump(node)[:60]}")
