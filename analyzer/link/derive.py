"""Derived-dim relations: input dims the package takes to be `n*k + b`.

A package exported with `20 * Dim("k")` (a stride-20 conv front end, an 8x8 patch embedding, a
`view(-1, 2)`, Swin's 2x2 patch merging) is compiled for sizes `20*k` only. `derive(model)` reads each
such relation once from the linked model (after linking, from records only) and keeps where it was
read (`model.Evidence`):

- QUOTIENT: run_impl recovers k from the input size: `int64_t s6 = (1.0/20.0)*arg5_1_size_1;`
  (`trunc(0.05 * arg5_1_size_1)`), `c10::div_floor_integer(size, 20L)` (`floordiv(size, 20)`), and for
  `2*k + 1` sizes `int64_t s6 = (-1.0/2.0) + (1.0/2.0)*arg4_1_size_2;`.
- SIZE_CHECK: `assert_size_stride(arg5_1, {s77, 20L*s6}, ...)`, the expected size of the dim: the
  only check of the relation torch emits (gated by AOTI_RUNTIME_CHECK_INPUTS in torch 2.13; absent
  in 2.11 CUDA wrappers). `check_input_N` checks only the compiled range (`size < 80`, `> 16000`) and
  static strides: torch's codegen (2.6-2.15) writes no `k*s` expectation there, so nothing in it
  rejects 801.
- STRIDE: the same assert's expected stride `20L*s6` of the dim before, when the dims after it are
  static but this one (a contiguous input's stride is the product of the later sizes).
- EXPORTED: the exported program's size expression for the dim (`20*s6`), with `s6`'s range from
  its range_constraints.

The questions about a relation are answered by query/relations.py.
"""

from __future__ import annotations

import ast
import functools
import math

from ..expr import intervals
from ..core.model import DimRef, Enforcement, Evidence, Model, Relation


# -- reading -----------------------------------------------------------------------------------------

def derive(model: Model) -> None:
    """Set `model.relations`: at most one relation per input dim, evidence merged."""
    found: dict[DimRef, Relation] = {}
    roots = _roots(model)
    for sym in model.symbols.values():
        q = _quotient(sym.expr)
        if q is not None and q[0] in roots:
            _add(found, Relation(roots[q[0]], q[1], sym.name, q[2], location=sym.location,
                                 evidence=(Evidence.QUOTIENT,)))
    for inp in model.inputs:
        for dim in inp.dims:
            form = _affine(dim.declared_expr) if dim.declared_expr and dim.value is None else None
            if form is not None and form[1] >= 2:
                name, n, b = form
                low, high = model.declared_ranges.get(name, (None, None))
                _add(found, Relation(DimRef(inp.index, dim.dim), n, name, b, evidence=(Evidence.EXPORTED,),
                                     symbol_min=low, symbol_max=high))
    by_name = {inp.name: inp.index for inp in model.inputs}
    for check in model.size_checks:
        index = by_name.get(check.tensor)
        if index is not None:
            _checked(model, found, index, check)
    model.relations = sorted(found.values(), key=lambda r: r.ref)


def _roots(model: Model) -> dict[str, DimRef]:
    """Size symbol -> the input dim it is read from (the same answer as witness.symbol_dims, which
    imports this module)."""
    out = {s.name: s.source for s in model.symbols.values() if s.source is not None and not s.is_stride}
    for inp in model.inputs:
        for dim in inp.dims:
            if dim.symbol:
                out.setdefault(dim.symbol, DimRef(inp.index, dim.dim))
    return out


def _add(found: dict[DimRef, Relation], new: Relation) -> None:
    old = found.get(new.ref)
    if old is None:
        found[new.ref] = new
        return
    if (old.n, old.offset % old.n) != (new.n, new.offset % new.n):
        if old.offset or new.offset:
            return      # two different affine relations: keep the first (the package's own)
        old.n = old.n * new.n // math.gcd(old.n, new.n)
    old.evidence = tuple(dict.fromkeys(old.evidence + new.evidence))
    if new.symbol_min is not None or new.symbol_max is not None:
        old.symbol_min, old.symbol_max = new.symbol_min, new.symbol_max


def _checked(model: Model, found: dict[DimRef, Relation], index: int, check) -> None:
    """An input's assert_size_stride: sizes `n*k + b` over a relation's symbol check it; a stride
    `n*k` of dim d-1 whose later dims are static but dim d checks dim d too."""
    enforced = Enforcement.ENV if check.gated else Enforcement.ALWAYS
    dims = model.inputs[index].dims
    for d, size in enumerate(check.sizes):
        rel = found.get(DimRef(index, d))
        form = _affine(size)
        if rel is None or form is None or form[0] != rel.symbol or (form[1], form[2]) != (rel.n, rel.offset):
            continue
        _enforce(rel, enforced, check.location, Evidence.SIZE_CHECK)
    for d, stride in enumerate(check.strides[:-1]):
        form = _affine(stride)
        later = [e for e in range(d + 1, len(dims)) if dims[e].value is None]
        if form is None or len(later) != 1 or form[2] != 0:
            continue
        static = math.prod(dims[e].value or 1 for e in range(d + 1, len(dims)) if e != later[0])
        rel = found.get(DimRef(index, later[0]))
        if rel is not None and form[0] == rel.symbol and form[1] == rel.n * static and rel.offset == 0:
            _enforce(rel, enforced, check.location, Evidence.STRIDE)


def _enforce(rel: Relation, enforced: Enforcement, location, evidence: Evidence) -> None:
    if rel.enforced != Enforcement.ALWAYS:
        if rel.enforced == Enforcement.NONE or enforced == Enforcement.ALWAYS:
            rel.location = location
        rel.enforced = Enforcement.ALWAYS if Enforcement.ALWAYS in (rel.enforced, enforced) else enforced
    rel.evidence = tuple(dict.fromkeys(rel.evidence + (evidence,)))


# -- expressions (Python syntax, parsed with ast, never evaluated) ---------------------------------

@functools.lru_cache(maxsize=4096)  # thousands of launch numels share a few expressions
def _quotient(expr: str) -> tuple[str, int, int] | None:
    """(size symbol, n, b) for k = (size - b) / n read from a size: `trunc(0.05 * s)`,
    `trunc((1.0 / 20.0) * s)`, `trunc(-0.5 + 0.5 * s)` (b = 1: `2*k + 1` sizes), `floordiv(s, 20)`,
    `floordiv(s - 1, 2)`, `s // 2`."""
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2 \
            and node.func.id == "floordiv" or isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        top, den = (node.args if isinstance(node, ast.Call) else (node.left, node.right))
        inner, divisor = _linear(top, 0), _constant(den)
        if inner is None or divisor is None or not float(divisor).is_integer():
            return None
        names = [k for k, v in inner.items() if k and v]
        if len(names) != 1 or inner[names[0]] != 1 or divisor < 2:
            return None
        return names[0], int(divisor), -inner.get("", 0)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 \
            and node.func.id in ("trunc", "floor", "int"):
        node = node.args[0]
    form = _scaled(node, 0)
    if form is None:
        return None
    names = [k for k, v in form.items() if k and v]
    if len(names) != 1 or form[names[0]] <= 0:
        return None
    c, a = form[names[0]], form.get("", 0.0)
    n = round(1 / c)
    b = round(-a * n) if n else 0
    if n < 2 or not math.isclose(n * c, 1.0, rel_tol=1e-9) or not math.isclose(-a * n, b, abs_tol=1e-9):
        return None
    return names[0], n, b


def _scaled(node: ast.AST, depth: int) -> dict[str, float] | None:
    """{symbol: coefficient, "": constant} of a linear expression with float coefficients
    (`-0.5 + 0.5 * s`, `(1.0 / 20.0) * s`), None otherwise."""
    if depth > 50:
        return None
    d = depth + 1
    c = _constant(node) if not any(isinstance(n, ast.Name) for n in ast.walk(node)) else None
    if c is not None:
        return {"": c}
    if isinstance(node, ast.Name):
        return {node.id: 1.0}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _scaled(node.operand, d)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _scaled(node.left, d), _scaled(node.right, d)
        if left is None or right is None:
            return None
        sign = 1 if isinstance(node.op, ast.Add) else -1
        out = dict(left)
        for k, v in right.items():
            out[k] = out.get(k, 0.0) + sign * v
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        left, right = _scaled(node.left, d), _scaled(node.right, d)
        if left is None or right is None:
            return None
        if set(right) == {""} and (isinstance(node.op, ast.Mult) or right[""]):
            f = right[""] if isinstance(node.op, ast.Mult) else 1 / right[""]
            return {k: v * f for k, v in left.items()}
        if isinstance(node.op, ast.Mult) and set(left) == {""}:
            return {k: v * left[""] for k, v in right.items()}
    return None


def _constant(node: ast.AST) -> float | None:
    """The value of a constant-only subexpression (`1.0 / 20.0`, `0.125`), else None."""
    try:
        return float(intervals.evaluate(ast.unparse(node), {}))
    except (ValueError, ArithmeticError, TypeError, RecursionError):
        return None


def _affine(expr: str | None) -> tuple[str, int, int] | None:
    """(symbol, a, b) for an expression `a*symbol + b` of one symbol with integers a > 0, b."""
    if not expr:
        return None
    try:
        node = ast.parse(expr.replace(" ", ""), mode="eval").body
        terms = _linear(node, 0)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if terms is None:
        return None
    names = [k for k, v in terms.items() if k and v]
    if len(names) != 1 or terms[names[0]] <= 0:
        return None
    return names[0], terms[names[0]], terms.get("", 0)


def _linear(node: ast.AST, depth: int) -> dict[str, int] | None:
    """{symbol: coefficient, "": constant} of an integer linear expression, None otherwise (the
    terms of `_scaled` when every one is a whole number)."""
    terms = _scaled(node, depth)
    if terms is None or not all(float(v).is_integer() for v in terms.values()):
        return None
    return {k: int(v) for k, v in terms.items()}
