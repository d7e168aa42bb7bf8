"""Writes of generated kernels through their `out_ptrN` parameters (buffers.py derives from them the
values a buffer holds): Triton `tl.store(out_ptr0 + (x0), tmp4, xmask)` (read by kernels.py's walk
with the helpers here), C++ `tmp4.store(out_ptr0 + x0, 16);` and `out_ptr0[x0] = tmp3;` (the
`stores` query). A pointer also named anywhere else gets a store of unknown value, so that a write
of a form not read never passes for a known range. Also the scan combine helpers Triton kernels
define (`_triton_helper_fn_add0`)."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from typing import Callable

from . import ts
from ..expr.syntax import call_name, shape_key


@dataclass(eq=False, slots=True)
class RawStore:  # noqa: PLW1641 - compared, never hashed (its AST value is not hashable by content)
    pointer: str                       # the pointer parameter written (`out_ptr0`)
    pos: int                           # position key (C++: byte offset, Triton: line)
    value: ast.expr | None             # the stored value; None: a write of a form not read

    def __eq__(self, other: object) -> bool:
        """Equal facts from two parses of one kernel (AST nodes compare by identity)."""
        return isinstance(other, RawStore) and (self.pointer, self.pos, _dump(self.value)) == \
            (other.pointer, other.pos, _dump(other.value))


def _dump(node: ast.AST | None) -> object:
    return None if node is None else shape_key(node)


def call_name_of(node: ast.AST) -> str:
    return call_name(node) if isinstance(node, ast.Call) else ""


def store_pointer(target: ast.expr) -> str | None:
    """`out_ptr0 + (x0)` or `out_ptr0` -> "out_ptr0" (the pointer parameter a store writes)."""
    while isinstance(target, ast.BinOp) and isinstance(target.op, ast.Add):
        target = target.left if isinstance(target.left, (ast.Name, ast.BinOp)) else target.right
    return target.id if isinstance(target, ast.Name) and target.id.startswith("out_ptr") else None


def combine_op(fn: ast.FunctionDef) -> str | None:
    """"add" for a scan's combine helper that returns the sum of its two arguments
    (`tmp0 = arg0_0 + arg1_0; return tmp0`); "select" for one whose every result is one of its two
    arguments at that position (cummax's `tl.where(tmp4, arg0_0, arg1_0), tl.where(tmp4, arg0_1,
    arg1_1)`: a running max, min or their index); else None."""
    args = [a.arg for a in fn.args.args]
    if not fn.body or not isinstance(fn.body[-1], ast.Return):
        return None
    if len(args) != 2:
        return "select" if _selects(fn, args) else None
    result = fn.body[-1].value
    if isinstance(result, ast.Name) and len(fn.body) == 2 and isinstance(fn.body[0], ast.Assign) \
            and [t.id for t in fn.body[0].targets if isinstance(t, ast.Name)] == [result.id]:
        result = fn.body[0].value
    if isinstance(result, ast.BinOp) and isinstance(result.op, ast.Add) \
            and {getattr(result.left, "id", None), getattr(result.right, "id", None)} == set(args):
        return "add"
    return "select" if _selects(fn, args) else None


def _selects(fn: ast.FunctionDef, args: list[str]) -> bool:
    """Every result k of the helper (of 2n arguments `arg0_k`, `arg1_k`) is `where(c, arg0_k, arg1_k)`
    (either order), directly or through one assignment in its body."""
    if len(args) % 2 or not args:
        return False
    half = len(args) // 2
    assigned = {t.id: stmt.value for stmt in fn.body if isinstance(stmt, ast.Assign)
                for t in stmt.targets if isinstance(t, ast.Name)}
    last = fn.body[-1]
    result = last.value if isinstance(last, ast.Return) else None
    results = result.elts if isinstance(result, ast.Tuple) else [result] if result is not None else []
    if not results or len(results) != half:
        return False
    for k, item in enumerate(results):
        item = assigned.get(item.id, item) if isinstance(item, ast.Name) else item
        if not (isinstance(item, ast.Call) and len(item.args) == 3 and isinstance(item.func, (ast.Attribute, ast.Name))
                and (item.func.attr if isinstance(item.func, ast.Attribute) else item.func.id) == "where"):
            return False
        picked = {getattr(a, "id", None) for a in item.args[1:]}
        if picked != {args[k], args[half + k]}:
            return False
    return True


_OUT_POINTER = re.compile(r"\bout_ptr\d+\b")
# The same names found by their literal (`\b` first defeats the regex engine's literal search: 30 MB/s
# against 1 GB/s), the word boundaries checked at each hit.
_OUT_POINTER_TEXT = re.compile(r"out_ptr\d+")
_WORD = re.compile(r"\w")


def out_pointer_uses(text: str) -> dict[str, int]:
    """How often each `out_ptrN` occurs in `text` as a whole word (as `_OUT_POINTER.findall`)."""
    uses: dict[str, int] = {}
    for m in _OUT_POINTER_TEXT.finditer(text):
        start, end = m.span()
        if (start and _WORD.match(text, start - 1)) or _WORD.match(text, end):
            continue
        uses[m.group()] = uses.get(m.group(), 0) + 1
    return uses


def store_target(m: dict[str, ts.Node]) -> tuple[str, bool] | None:
    """(the `out_ptrN` a `stores` match writes, whether with a plain `=`: `+=` and friends are not
    read); None for a call of another method or another target."""
    if "method" in m and ts.text(m["method"]) != "store":
        return None
    pointer = next((sys.intern(ts.text(i)) for i in ts.identifiers(m["target"]) if _OUT_POINTER.fullmatch(ts.text(i))),
                   None)
    return None if pointer is None else (pointer, "operator" not in m or ts.text(m["operator"]) == "=")


def cpp_stores(params: tuple[str, ...], body: ts.Node, to_ast: Callable[[ts.Node], ast.expr],
               matched: "list[dict[str, ts.Node]] | None" = None) -> list[RawStore]:
    """`tmp4.store(out_ptr0 + x0, 16);` and `out_ptr0[x0] = tmp3;` of `out_ptrN` parameters. A
    pointer named anywhere else in the body (another write form) gets a store of unknown value.
    `matched`: the body's `stores` matches, when the caller read them with its other queries."""
    outs = [p for p in params if p.startswith("out_ptr")]
    if not outs:
        return []
    stores: list[RawStore] = []
    for m in ts.matches("stores", body) if matched is None else matched:
        if (target := store_target(m)) is None:
            continue
        pointer, plain = target
        stores.append(RawStore(pointer, ts.span(m["statement"])[0], to_ast(m["value"]) if plain else None))
    return unmatched_stores(outs, stores, ts.text(body))


def unmatched_stores(outs: list[str], stores: list[RawStore], body: str) -> list[RawStore]:
    """`stores` and a store of unknown value for each of `outs` that `body` names more often than
    they write it."""
    uses = out_pointer_uses(body)
    for pointer in outs:
        if uses.get(pointer, 0) != sum(1 for st in stores if st.pointer == pointer):
            stores.append(RawStore(pointer, 0, None))
    return stores
