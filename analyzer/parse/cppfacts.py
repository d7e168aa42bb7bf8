"""What both readers of a C++ kernel share (cppkernel.py's walk of its tree, cpplines.py's reading
of its lines): C++ expressions as Python `ast` (one conversion per distinct text across kernels),
the reduction a helper performs, the loops around a position and the divisions of the definitions."""

from __future__ import annotations

import ast
import re
import sys
from typing import Callable

from . import ts
from ..core.budget import poll
from ..core.findings import Location
from ..expr.syntax import divisor_of
from ..expr.values import Values, division
from .kernels import KernelFacts, RawAssertion, RawDivision, RawReduction, message_facts, product

# The Python text of a division (expr.syntax.divisor_of: `/`, `//`, `%`, `mod(`, `floordiv(`, `fmod(`).
_DIVIDES = re.compile(r"[/%]|\b(?:mod|floordiv|fmod)\(")
# C++ expression text -> (its Python AST, its division nodes in `ast.walk` order): generated kernels
# repeat the same loads, casts and index arithmetic (`in_ptr0[static_cast<int64_t>(x0)]`) across
# kernels, and converting and compiling each again was a third of a C++ package's check. The trees
# are shared: nothing changes a kernel's expressions after parsing (intervals rewrites fresh trees
# of its own).
Known = tuple[ast.expr, tuple[ast.AST, ...]]
_EXPRESSIONS: dict[tuple[bytes, int], Known] = {}
_EXPRESSIONS_KEPT = 50_000
_REDUCE_OPS = ("max", "min", "argmax", "argmin", "prod")
# What either reader reads of a kernel's body, as one query group (six walks cost about three
# times one); `loops` first: matches_each compiles the group of the first name.
KERNEL_QUERIES = ("loops", "declarations", "calls", "assignments", "throws", "stores")


def parameters(params: ts.Node) -> tuple[tuple[str, str], ...]:
    """(name, type) of each parameter of a kernel's head. Names and types recur in every kernel:
    one string each (a tenth of the facts at 50 MB)."""
    return tuple((sys.intern(name), sys.intern(" ".join(declaration.replace(name, "").split())))
                 for name, declaration in ts.parameters(params))


def types_of(params: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The dict of `params`' types: one for every kernel with these parameters (nothing changes it;
    per kernel it was a tenth of the facts' size)."""
    found = _TYPES.get(params)
    if found is None:
        if len(_TYPES) >= 4096:
            _TYPES.clear()
        found = _TYPES[params] = dict(params)
    return found


_TYPES: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}


def check_message(call: dict[str, ts.Node]) -> str | None:
    """The message of a `calls` match that is `AOTI_TORCH_CHECK(cond, "...")`; None for any other call."""
    if ts.text(call["function"]).strip() != "AOTI_TORCH_CHECK":
        return None
    args = ts.children(call["args"])
    return ts.string_value(args[1]) if len(args) >= 2 else None


def thrown_message(throw: dict[str, ts.Node]) -> str | None:
    """The literal message of a `throws` match, when short enough to route (500 characters)."""
    message = ts.string_value(throw["message"])
    return message if message and len(message) <= 500 else None


def problem_text(problems: int, kernel: str) -> str | None:
    return f"{problems} expression(s) in {kernel} could not be analysed" if problems else None


def python_of(node: ts.Node, max_depth: int) -> Known | None:
    """(the Python AST of a C++ expression, its divisions); None when it cannot be read."""
    source = (node.text or b"", max_depth)
    known = _EXPRESSIONS.get(source)
    if known is None:
        try:
            text = ts.cpp_to_py(node, max_depth)
            body = ast.parse(text, mode="eval").body
            # Found once per distinct text: each kernel then asks only these nodes about its sizes.
            known = (body, tuple(n for n in ast.walk(body) if divisor_of(n) is not None)
                     if _DIVIDES.search(text) else ())
        except (ts.ExprTooDeep, SyntaxError, RecursionError, MemoryError, ValueError):
            return None
        if len(_EXPRESSIONS) >= _EXPRESSIONS_KEPT:
            _EXPRESSIONS.clear()
        _EXPRESSIONS[source] = known
    return known


def unknown() -> ast.expr:
    """The expression of a text that could not be read (a fresh node each time)."""
    return ast.Call(ast.Name("unknown"), [], [])


class Expressions:
    """A kernel's C++ expressions as Python `ast`, through `python_of`; counts those that cannot be
    read and notes which may hold a division."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.problems = 0
        # id of each definition that holds a division -> those nodes: walking every node of every
        # definition for them was a tenth of a C++ package's check.
        self.dividing: dict[int, tuple[ast.AST, ...]] = {}

    def __call__(self, node: ts.Node) -> ast.expr:
        return self.add(python_of(node, self.max_depth))

    def add(self, known: Known | None) -> ast.expr:
        """The AST of an expression already converted (None: it could not be)."""
        if known is None:
            self.problems += 1
            return unknown()
        if known[1]:
            self.dividing[id(known[0])] = known[1]
        return known[0]


def reduce_op(name: str) -> str | None:
    """The reduction a C++ accumulator helper performs, from its name: `max_masked_reduce`,
    `min_propagate_nan`, `argmax_combine[_vec]` -> max, min, argmax."""
    for suffix in ("_masked_reduce", "_propagate_nan", "_combine"):
        if name.endswith(suffix) and name[:-len(suffix)] in _REDUCE_OPS:
            return name[:-len(suffix)]
    return next((op for op in ("argmax", "argmin") if name.startswith(op + "_combine")), None)


def accumulated(left: ts.Node, right: ts.Node) -> tuple[str, str] | None:
    """(accumulator, reduction) of `tmp_acc0_vec = max_masked_reduce(tmp_acc0_vec, tmp0, n)`, of
    `tmp_acc0 = tmp_acc0 * tmp0` (prod); None for any other assignment."""
    name = ts.text(left).strip()
    if not name.startswith("tmp_acc"):
        return None
    op = next(filter(None, (reduce_op(ts.text(i)) for i in ts.identifiers(right))), None)
    if op is None and any(ts.text(p["factor"]) == name for p in ts.matches("products", right)):
        op = "prod"
    return None if op is None else (name, op)


def loops_around(facts: KernelFacts, pos: int) -> list[str]:
    """Extents of the loops around byte `pos` (vector-lane `_inner` loops left out): when one is 0,
    the code at `pos` never runs."""
    return [extent for var, spans in facts.extents.items() if not var.endswith("_inner")
            for start, end, extent in spans if start <= pos < end]


def divisions(facts: KernelFacts, locate: Callable[[int], Location], dividing: dict[int, tuple[ast.AST, ...]]) -> None:
    """Divisions by a kernel size in the definitions (expr.values.division)."""
    if not dividing:
        return  # (most kernels: no definition divides)
    values = Values(facts)
    found_divisions: list[RawDivision] = []
    for defs in facts.defs.values():
        for pos, expr in defs:
            poll(f"reading kernel {facts.name}")
            for sub in dividing.get(id(expr), ()):
                found = division(values, sub, pos, index_math=True)
                if found is not None:
                    found_divisions.append(RawDivision(*found[:2], locate(pos), found[2],
                                                       product(loops_around(facts, pos)), found[3]))
    facts.divisions = (*facts.divisions, *found_divisions)


def assertion(facts: KernelFacts, message: str, location: Location, pos: int, parallel: bool) -> RawAssertion:
    """The fact of `AOTI_TORCH_CHECK(cond, message)` at byte `pos` (the loops around it already known)."""
    lower, index_var, bound, bound_py = message_facts(message)
    return RawAssertion(message, index_var, lower, bound, bound_py, location, pos,
                        product(loops_around(facts, pos)), parallel)


def reductions(facts: KernelFacts, accumulations, locate: Callable[[int], Location]) -> None:
    """Accumulators like `tmp_acc0_vec = max_masked_reduce(tmp_acc0_vec, tmp0, n)` inside a loop,
    from (accumulator, reduction, byte, [(loop variable, loop start byte), innermost first]) in
    document order, the first of each accumulator and reduction kept.

    The reduced extent is the product of the loops that enclose the accumulation but not the
    accumulator's declaration (those are the loops it reduces over)."""
    seen: set[tuple[str, str]] = set()
    found: list[RawReduction] = []
    for left, op, pos, enclosing in accumulations:
        acc = left.removesuffix("_vec")
        if (acc, op) in seen:
            continue
        seen.add((acc, op))
        # The accumulator's declaration (already among the kernel's definitions, by byte offset).
        declared = [p for p, _ in facts.defs.get(acc, ()) if p < pos]
        decl_byte = max(declared) if declared else None
        inner: list[str] = []
        outer: list[str] = []
        names = {var for var, _ in enclosing}
        for var, loop_byte in enclosing:
            extent = facts.extent_at(var, loop_byte)
            # `x1_inner` loops walk the lanes of one vector, not the reduced dimension; an `x2_tail`
            # loop inside the `x2` loop walks that dim's remainder, which `x2` already counts.
            if extent is None or var.endswith("_inner") or (var.endswith("_tail") and var[:-5] in names):
                continue
            # Loops around the declaration are the kernel's own iteration space, not the reduction.
            (outer if decl_byte is not None and loop_byte <= decl_byte else inner).append(extent)
        found.append(RawReduction(op, product(inner), locate(pos), product(outer)))
    facts.reductions = (*facts.reductions, *found)
