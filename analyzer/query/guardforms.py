"""The forms of export's guards that say something other than a branch of the model (analyzer.query.guards
reads them): a layout export derived from strides, a slice's contiguity, a specialization that two sizes
differ, a size above 1 (alone or scaled by a factor)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..expr import intervals


@dataclass(frozen=True)
class Leaf:
    """`L['x'].size()[d]` ("size"), `.stride()[d]` ("stride"), `.storage_offset()` ("offset", d -1)."""

    input: str
    kind: str
    dim: int


@dataclass(frozen=True)
class Guard:
    text: str
    root: int                      # node index in the GuardSet
    leaves: frozenset[Leaf]


def above_one(node: ast.expr) -> ast.expr:
    """`E > 1` (`1 < E`, `E >= 2`, `2 <= E`) read as `E > 0`: export's 0/1 specialization of a size
    (SEW's squeezed length `min(...) > 1`), which a size of 1 breaks at its one point only, where the
    package computes what eager does (probed), as `inequality_guard`'s `!= 1`; at 0 it stays broken."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return node
    op, left, right = node.ops[0], node.left, node.comparators[0]

    def const(side: ast.expr, value: int) -> bool:
        return isinstance(side, ast.Constant) and type(side.value) is int and side.value == value

    if isinstance(op, ast.Gt) and const(right, 1) or isinstance(op, ast.GtE) and const(right, 2):
        return ast.Compare(left, [ast.Gt()], [ast.Constant(0)])
    if isinstance(op, ast.Lt) and const(left, 1) or isinstance(op, ast.LtE) and const(left, 2):
        return ast.Compare(ast.Constant(0), [ast.Lt()], [right])
    big = _over_multiple(op, left, right)
    return node if big is None else ast.Compare(big, [ast.Gt()], [ast.Constant(0)])


def _over_multiple(op: ast.cmpop, left: ast.expr, right: ast.expr) -> ast.expr | None:
    """Q of `c < Q` (`Q > c`) where Q takes multiples of the constant c >= 2 only (a length padded to
    a multiple of c, `s + (8 - s % 8) % 8`): `Q // c > 1`, more than one chunk, export's 0/1
    specialization of the chunk count that a reshape into chunks of c asked about (Mamba2's scan runs
    one chunk as eager does: probed at seq 1, 2, 7, 8); None for any other comparison."""
    small, big = (left, right) if isinstance(op, ast.Lt) else (right, left) if isinstance(op, ast.Gt) else (None, None)
    if not (isinstance(small, ast.Constant) and type(small.value) is int and small.value >= 2 and big is not None):
        return None
    text = ast.unparse(big)
    leaves = sorted(set(_SIZE_LEAF.findall(text)))
    if not leaves or len(leaves) > 8:
        return None
    return big if _scales(str(small.value), "1", _named(text, leaves), len(leaves)) else None


def layout_guard(guard: Guard) -> bool:
    """A guard export derived from strides: `.stride()` leaves, or the `max(1, size)` products that
    contiguous strides are. It restates a layout the compiled code computes from the sizes itself (a
    window padded to a multiple runs like eager, probed), not a branch of the model."""
    return any(leaf.kind == "stride" for leaf in guard.leaves) or "max(1," in guard.text.replace(" ", "")


def inequality_guard(guard: Guard) -> bool:
    """A guard that two size expressions differ (`(hp // 7) != 1`: more than one window; MPT's `seq
    != 32`): export's specialization of a size that a view, a slice or a broadcast asked about, not a
    branch the compiled code takes. Broken at its one point the package runs as at any other size,
    as eager does (probed: a window attention padded to one 7-row window, MPT at seq = 32). A
    remainder by a constant compared (`h % 4 != 0`: the example was not a multiple, so the model
    padded) is a branch; one by a size (`(b*nh) % (b*nh*nw // 49) != 0`) is a reshape's own check."""
    try:
        tree = ast.parse(guard.text.strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.NotEq) \
        and not any(isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mod) and isinstance(side.right, ast.Constant)
                    for side in (tree.left, *tree.comparators))


def contiguity_guard(guard: Guard) -> bool:
    """`A * F == B * F`, two products sharing a factor that reads a size: export's check that a view is
    contiguous (`is_contiguous` on `g[:, :h, :w]` of a padded map compares the slice's stride, a product
    of the padded sizes after it, with the product of its own sizes). It records the view's memory
    format, not a branch: broken, the compiled code reads the padded layout as eager does (probed: a
    grid attention padded to multiples of 4 at h = 9, 17, 257)."""
    try:
        tree = ast.parse(guard.text.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq)):
        return False
    left, right = _factors(tree.left), _factors(tree.comparators[0])
    if len(left) < 2 or len(right) < 2:
        return False
    return any(text in right and "size()" in text for text in left)


def _factors(node: ast.expr) -> list[str]:
    """The factors of a product (`a * b * c`), each as its source text; one factor for anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [ast.unparse(node)]


_SIZE_LEAF = re.compile(r"L\[[^\]]*\](?:\[[^\]]*\])*\.size\(\)\[\d+\]")
_SAMPLES = (9, 23, 40, 64, 101, 257)


def scaled_above_one(guard: Guard) -> bool:
    """`c*F < F*Q` (or `Q*F > c*F`): `Q > c` scaled by a positive factor F, where Q takes multiples of c
    only (`Q = 4 + 4*((h - 1)//8)`, c = 4). It is `above_one`'s `Q // c > 1`, export's 0/1
    specialization, written over a view's element count; broken where `Q // c` is 1 (MaxViT's single
    row of windows, where the package computes what eager does: probed on CPU at h = 1 and 7)."""
    try:
        tree = ast.parse(guard.text.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], (ast.Lt, ast.Gt))):
        return False
    small, big = (tree.left, tree.comparators[0]) if isinstance(tree.ops[0], ast.Lt) else (tree.comparators[0], tree.left)
    factors = _factors(big)
    leaves = sorted(set(_SIZE_LEAF.findall(guard.text)))
    if len(factors) < 2 or not leaves or len(leaves) > 8:
        return False

    small_text = _named(ast.unparse(small), leaves)
    for i, factor in enumerate(factors):
        rest = "*".join(f"({_named(f, leaves)})" for j, f in enumerate(factors) if j != i) or "1"
        if _scales(small_text, _named(factor, leaves), rest, len(leaves)):
            return True
    return False


def _named(text: str, leaves: list[str]) -> str:
    """`text` with each size leaf written `v<i>`, i its place in `leaves` (what `_scales` samples)."""
    return _SIZE_LEAF.sub(lambda m: f"v{leaves.index(m.group(0))}", text)


def _scales(small: str, factor: str, rest: str, count: int) -> bool:
    """Whether `small` is one constant c >= 1 times `factor` (> 0) and `rest` a multiple of c, at every
    sample of the sizes."""
    ratio = None
    for k in range(len(_SAMPLES)):
        values = {f"v{i}": float(_SAMPLES[(k + i) % len(_SAMPLES)]) for i in range(count)}
        try:
            s, f, r = (intervals.evaluate(e, values) for e in (small, factor, rest))
        except (ValueError, ZeroDivisionError, OverflowError):
            return False
        if f <= 0 or s % f or (ratio is not None and s // f != ratio):
            return False
        ratio = s // f
        if ratio < 1 or r % ratio:
            return False
    return True


def _pad_amount(text: str) -> tuple[int, str, str] | None:
    """`((k + (-1)*(E % k)) % k) <= 0` (the padding of E to a multiple of k is 0) -> (k, the text of E
    with its one size leaf as `{}`, that leaf); None for any other guard or an E over several leaves."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.LtE)
            and ast.unparse(tree.comparators[0]) == "0"):
        return None
    found = re.fullmatch(r"\((\d+) \+ -1 \* \((.+) % \1\)\) % \1", ast.unparse(tree.left))
    if found is None:
        return None
    leaves = set(_SIZE_LEAF.findall(found.group(2)))
    if len(leaves) != 1:
        return None
    leaf = leaves.pop()
    return int(found.group(1)), found.group(2).replace(leaf, "{}"), leaf


def outer_crop_guard(text: str, guards: "list[str] | tuple[str, ...]") -> str | None:
    """The guard on a later dim of the same input that makes `text` the outer of two pads, or None.

    `((4 + (-1)*((h // 2) % 4)) % 4) <= 0` says that a map padded to multiples of 4 gets no bottom
    rows (Swin's `if pad_bottom > 0 or pad_right > 0: crop`). Where the same padding of a later dim
    (the width) is guarded too, the map's rows are outer to its columns: eager's crop of the padded
    rows keeps a prefix of the map, which the package's indexing reads alike (probed: Swin and Swin V2
    at eleven heights, every one eager's values; the twin guard on the width returns wrong ones)."""
    own = _pad_amount(text)
    if own is None:
        return None
    k, shape, leaf = own
    head, dim = leaf.rsplit("[", 1)
    for other in guards:
        theirs = _pad_amount(other) if other != text else None
        if theirs is None or theirs[:2] != (k, shape):
            continue
        other_head, other_dim = theirs[2].rsplit("[", 1)
        if other_head == head and int(other_dim.rstrip("]")) > int(dim.rstrip("]")):
            return other
    return None
