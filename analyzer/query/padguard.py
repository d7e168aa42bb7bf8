"""A guard that says only that a pad is not empty: broken, the traced graph pads by nothing.

A model that pads a sequence up to a length (`if x.shape[1] < n: x = pad(x, (0, n - x.shape[1]))`,
SEW's upsampling back to the frame count) is traced on one branch, and export keeps its test as a
guard, `2*min(...) < (t // 20) - 1`. Where the exported graph's pad amount is the guard's margin,
`(t // 20 - 1) - 2*min(...)`, at every size near a size that breaks the guard, and 0 at that size,
the package runs the traced pad by 0 rows there: the same values as eager's other branch, which pads
nothing (probed: SEW at t = 60, 100, 140, 420). A margin that goes negative instead (a crop) or a pad
the graph computes otherwise is not this; nor is a guard with no pad behind it (DPT's
`128 < 32*(w//8)*(h//8)`, whose equality point returns wrong values).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import guards as G

if TYPE_CHECKING:
    from ..core.model import Model

PAD_OPS = frozenset({"aten.pad.default", "aten.constant_pad_nd.default"})
MAX_AMOUNTS = 64   # distinct symbolic pad amounts compared (a real graph has a few; a hostile one, no more cost)


def _margin(text: str) -> str | None:
    """`A < B` / `A <= B` -> `(B) - (A)`, `A > B` / `A >= B` -> `(A) - (B)`: what the guard keeps
    positive (or not negative); None for any other guard."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1):
        return None
    left, right = ast.unparse(tree.left), ast.unparse(tree.comparators[0])
    if isinstance(tree.ops[0], (ast.Lt, ast.LtE)):
        return f"({right}) - ({left})"
    if isinstance(tree.ops[0], (ast.Gt, ast.GtE)):
        return f"({left}) - ({right})"
    return None


def pad_amounts(model: "Model") -> list[str]:
    """The symbolic amounts of the exported graph's pads, as guard text over input sizes."""
    texts = dict.fromkeys(text for node in model.graph if node.op in PAD_OPS for amounts in node.sym_lists
                          for text in amounts if isinstance(text, str) and text != "?")
    return list(dict.fromkeys(_plain(text) for text in list(texts)[:MAX_AMOUNTS]))


def _plain(text: str) -> str:
    """The text with only the parentheses it needs (the graph's chain parenthesizes every operand)."""
    try:
        return ast.unparse(ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text


def zero_pad(model: "Model", guard: str, witnesses: "list[tuple[object, int]]") -> str | None:
    """The pad amount that equals `guard`'s margin at and around each witness (dim, size) and is 0
    at each, or None: there the traced graph pads by nothing, as eager's branch does."""
    margin = _margin(guard)
    amounts = pad_amounts(model) if margin is not None and witnesses else []
    if margin is None or not amounts:
        return None
    found = G.GuardSet()
    roots = [g.root if (g := found.add(text)) is not None else None for text in (margin, *amounts)]
    if roots[0] is None:
        return None
    samples = [G.shapes_around(model, {ref: size}) for ref, size in witnesses]
    if not all(samples):
        return None
    values = [[found.evaluate(shapes) for shapes in points] for points in samples]
    for amount, root in zip(amounts, roots[1:]):
        if root is None:
            continue
        if all(v[0][root] == 0 for v in values) and all(
                row[root] is not None and row[root] == row[roots[0]] for v in values for row in v):
            return amount
    return None
