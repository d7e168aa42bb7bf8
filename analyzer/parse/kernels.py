"""Facts from kernels: Triton source (parsed with `ast`, never executed) and C++ kernels
(`extern "C" void cpp_fused_<k>(...)`, parsed with tree-sitter).

Both kinds are reduced to one form, `KernelFacts`: parameter names in order, `tmpN`-style
definitions as Python `ast` expressions, assertions, divisions and reductions. The value-range
engine that reads them (which pointer parameters flow into a variable, and what symbolic range
over the kernel's size parameters it takes) is `analyzer.expr.values`.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from . import ts
from .stores import RawStore, call_name_of, combine_op, store_pointer
from ..expr.syntax import DIVISION_CALLS, DIVISION_OPS, call_name
from ..expr.values import Values, division
from ..core.findings import Location

# The one grammar of an index-bound message (why.parse reads failures with it too). The bound runs
# to the end and is stripped in Python: a lazy `.+?\s*$` rescans every run of spaces (quadratic on
# a hostile message).
MESSAGE_RE = re.compile(
    r"index out of bounds:\s*(?:(?P<lower>-?\d+)L?\s*<=\s*)?(?P<var>[^<]+)<\s*(?P<bound>.+)$"
)
# The index: a variable (`tmp4`) or, where Inductor checks an index it computed, an expression of
# them (`2 + x0`: BART's positions, an arange shifted by the padding offset).
_INDEX = re.compile(r"\w+|[\w+\-*%/ ()]+")
_NESTED_INDEX = re.compile(r"[\w+\-*%/ ()<=>]+")
INDEX_PREFIX = "index out of bounds:"
_TL_ABS = re.compile(r"\btl_math\.abs\(")
_BROADCAST = re.compile(r"tl\.broadcast_to\(([\w+\-*%/ ()]+),\s*\[[\w, ]*\]\)")
_REDUCTIONS = {
    "max2": "max", "max": "max", "min2": "min", "min": "min", "argmax": "argmax", "argmin": "argmin",
    "prod": "prod", "max_with_index": "argmax", "min_with_index": "argmin",
}


@dataclass(slots=True)
class RawAssertion:
    message: str
    index_var: str | None
    lower: int | None
    bound: str
    bound_py: str | None               # the bound in Python syntax over kernel params
    location: Location
    line: int                          # position key inside the kernel (for reaching definitions)
    space: str | None = None           # the check runs only when this (over kernel params) is > 0
    parallel: bool | None = None       # C++: inside an OpenMP parallel region; None: Triton


@dataclass(slots=True)
class RawDivision:
    divisor: str                       # the divisor variable/expression as written
    divisor_expr: str | None           # over kernel params
    location: Location
    integer: bool = False
    space: str | None = None           # the line runs only when this (over kernel params) is > 0
    index_math: bool = False           # C++ index arithmetic: the dividend is no loaded value


@dataclass(slots=True)
class RawReduction:
    op: str
    extent_expr: str | None            # over kernel params
    location: Location
    space: str | None = None           # the identity is used only when this (over kernel params) is > 0


@dataclass(slots=True)
class KernelFacts:
    """What one kernel holds. Its readers grow lists and store them as tuples (`packed`), and
    nothing changes them after: they are typed as read-only sequences."""

    name: str
    kind: str                          # "triton" | "cpp"
    params: tuple[str, ...]
    location: Location
    param_types: dict[str, str] = field(default_factory=dict)
    defs: dict[str, Sequence[tuple[int, ast.expr]]] = field(default_factory=dict)
    # iteration var -> [(start, end, exclusive extent)] per loop over it: C++ kernels reuse `x1`
    # for successive loops with different extents, so a use is matched to its enclosing loop
    # (start/end are byte offsets, the same keys as `defs` positions).
    extents: dict[str, Sequence[tuple[int, int, str]]] = field(default_factory=dict)

    def extent_at(self, var: str, pos: int) -> str | None:
        best = None
        for start, end, extent in self.extents.get(var, ()):
            if start <= pos < end and (best is None or start > best[0]):
                best = (start, extent)
        return best[1] if best else None
    assertions: Sequence[RawAssertion] = ()
    divisions: Sequence[RawDivision] = ()
    reductions: Sequence[RawReduction] = ()
    # Other checks with a literal message (`throw std::runtime_error("one_hot: Class values ...")`):
    # not index bounds, but `why` can still route their failures.
    messages: Sequence[tuple[str, Location]] = ()
    problem: str | None = None
    # Writes through `out_ptrN` parameters (buffers.py derives the values a buffer holds from
    # them); None when the kernel was not walked (triage's fast path).
    stores: Sequence[RawStore] | None = None
    # Triton scan combine helpers (`_triton_helper_fn_add0`) -> the operation they perform ("add").
    combines: Mapping[str, str] = field(default_factory=lambda: _NO_COMBINES)
    # A `defs` position (C++: byte offset, Triton: line) -> its Location.
    locate: Callable[[int], Location] | None = None
    # Read line by line (tritonlines.py): id of an assigned or stored value -> its text, which
    # helper_worker sends instead of cutting it from the source by the node's position.
    segments: dict[int, str] | None = None
    pool_bins: tuple[tuple[int, int], ...] = ()   # `pool_bins()` of an adaptive pooling kernel's text
    strides: Sequence = ()   # loadstrides.RawStride of a C++ kernel's text


T = TypeVar("T")


def packed(found: Mapping[str, list[T]]) -> dict[str, Sequence[T]]:
    """A reader's table of lists, as tuples (40 bytes less than a list grown by `append`): linking
    holds every kernel's facts at once, 26,000 small kernels about ten each."""
    return {name: tuple(items) for name, items in found.items()}


# One empty table for the kernels without scan helpers (most): nothing writes into a kernel's
# `combines` (readers assign it whole; it is typed read-only).
_NO_COMBINES: dict[str, str] = {}


# An adaptive pooling's bin start `(a*x1) // b` (C++: `div_floor_integer(static_cast<int64_t>(16L*x1), ...(7L))`,
# vectorized `16L*x2 + 16L*x2_inner`; Triton: `(16*x3) // 7` or `triton_helpers.div_floor_integer((16*x1),  7)`):
# a map of a rows pooled into b bins.
_CPP_BINS = re.compile(r"div_floor_integer\(static_cast<int64_t>\((\d+)L\*x\w+(?: \+ \1L\*x\w+)*\), "
                       r"static_cast<int64_t>\((\d+)L\)\)")
_TRITON_BINS = re.compile(r"\((\d+)\*x\w+\) // (\d+)\b|div_floor_integer\(\((\d+)\*x\w+\),\s+(\d+)\)")
MAX_BINS = 16


def pool_bins(text: str) -> tuple[tuple[int, int], ...]:
    """The distinct `(a, b)` of an adaptive pooling kernel's bin starts `(a*x) // b` (b > 1), at most
    MAX_BINS: the map size it was lowered for and the bins it pools it into."""
    found: dict[tuple[int, int], None] = {}
    for pattern in (_CPP_BINS, _TRITON_BINS):
        for m in pattern.finditer(text):
            groups = [g for g in m.groups() if g is not None]
            pair = (int(groups[0]), int(groups[1]))
            if pair[1] > 1 and len(found) < MAX_BINS:
                found[pair] = None
    return tuple(found)


def parse_message(message: str) -> tuple[int | None, str | None, str]:
    """`index out of bounds: 0 <= tmp4 < ks0` -> (0, "tmp4", "ks0"); one-sided forms give lower None;
    `index out of bounds: 2 + x0 < 130` -> (None, "2 + x0", "130")."""
    m = MESSAGE_RE.search(message)
    var = re.sub(r"(?<=\d)[lL]+\b", "", m.group("var").strip()) if m else ""
    # A kernel tiled over two axes (YBLOCK x XBLOCK) checks `tl.broadcast_to(tmp15, [YBLOCK, XBLOCK])`:
    # the broadcast is the same index.
    wrapped = _BROADCAST.fullmatch(var)
    if wrapped is not None:
        var = wrapped.group(1).strip()
    # An index Inductor proved non-negative is checked one-sided, inline: `tl_math.abs(r0_3 + ((-1)*x0))`
    # (a relative distance into a table); `abs` is the value engine's own name for it.
    var = _TL_ABS.sub("abs(", var)
    if not m or not _INDEX.fullmatch(var) or index_node(var) is None:
        # a comparison inside the index (the first `<` cut it short): split at depth 0
        return _parse_nested(message) if m and "<" in m.group("bound") else (None, None, "")
    lower = int(m.group("lower")) if m.group("lower") is not None else None
    return lower, var, m.group("bound").strip()


_MAX_NESTED = 2048  # characters of an index with comparisons in it that are read at all


def _parse_nested(message: str) -> tuple[int | None, str | None, str]:
    """`index out of bounds: ((y0) * ((y0) <= ((-1) + ks1)) + ((-1) + ks1) * (((-1) + ks1) < (y0))) < ks1`:
    Inductor prints a clamp (sympy's Min as a Piecewise) as products with comparisons, so the
    message's own `<` is the last one outside parentheses."""
    rest = message[message.find(INDEX_PREFIX) + len(INDEX_PREFIX):].strip()
    depth, cut = 0, -1
    for i, ch in enumerate(rest[:_MAX_NESTED]):
        depth += (ch == "(") - (ch == ")")
        if ch == "<" and depth == 0 and rest[i + 1:i + 2] != "=":
            cut = i
    if cut <= 0:
        return None, None, ""
    var, bound = rest[:cut].strip(), rest[cut + 1:].strip()
    lower = None
    head = re.match(r"(-?\d+)L?\s*<=\s*(?=\()", var)
    if head is not None:
        lower, var = int(head.group(1)), var[head.end():]
    var = re.sub(r"(?<=\d)[lL]+\b", "", var)
    if not _NESTED_INDEX.fullmatch(var) or index_node(var) is None:
        return None, None, ""
    return lower, var, bound


class _Clamps(ast.NodeTransformer):
    """`a * (a <= b) + b * (b < a)` -> `min(a, b)`; with `>=` / `>`, `max(a, b)`."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        sides = [_guarded(t) for t in (node.left, node.right)] if isinstance(node.op, ast.Add) else []
        if len(sides) == 2 and sides[0] and sides[1]:
            (a, op_a, b), (b2, op_b, a2) = sides[0], sides[1]
            same = ast.dump(a) == ast.dump(a2) and ast.dump(b) == ast.dump(b2)
            lows, highs = (ast.LtE, ast.Lt), (ast.GtE, ast.Gt)
            for ops, fn in ((lows, "min"), (highs, "max")):
                if same and isinstance(op_a, ops) and isinstance(op_b, ops) and type(op_a) is not type(op_b):
                    return ast.Call(ast.Name(fn, ast.Load()), [a, b], [])
        return node


def _guarded(term: ast.expr) -> tuple[ast.expr, ast.cmpop, ast.expr] | None:
    """`x * (x OP y)` -> (x, OP, y)."""
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult) and isinstance(term.right, ast.Compare):
        cmp = term.right
        if len(cmp.ops) == 1 and ast.dump(cmp.left) == ast.dump(term.left):
            return term.left, cmp.ops[0], cmp.comparators[0]
    return None


@functools.lru_cache(maxsize=1024)
def index_node(var: str) -> ast.expr | None:
    """The index of a parsed message as an expression (a Name for a variable), or None."""
    if var.isidentifier():
        return ast.Name(var, ast.Load())
    try:
        tree = ast.parse(var, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if "<" not in var and ">" not in var:
        return tree
    try:
        return _Clamps().visit(tree)
    except RecursionError:
        return None


def message_facts(message: str) -> tuple[int | None, str | None, str, str | None]:
    """`parse_message(message)` and its bound's `bound_to_py`, read once per distinct message of
    at most a line's length (kernels repeat the messages of their checks)."""
    return _message_facts(message) if len(message) <= 1024 else _message_facts.__wrapped__(message)


@functools.lru_cache(maxsize=4096)
def _message_facts(message: str) -> tuple[int | None, str | None, str, str | None]:
    lower, var, bound = parse_message(message)
    return lower, var, bound, bound_to_py(bound) if bound else None


def bound_to_py(bound: str) -> str | None:
    """The bound of an assertion message in the size-expression language, or None.

    `100L` -> `100`; `ks0*ks1` stays; Triton's
    `libdevice.trunc(tl.full([], 0.12, tl.float64)*ks1.to(tl.float64)).to(tl.int32)` and C++'s
    `static_cast<int64_t>(std::trunc(0.12*static_cast<double>(ks3)))` both become `trunc(0.12 * ks1)`.
    """
    text = re.sub(r"(?<=\d)[lL]+\b", "", bound)
    tree: ast.expr | None
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        tree = _cpp_bound(bound)
        if tree is None:
            return None
    try:
        return ast.unparse(_Normalize().visit(tree))
    except (RecursionError, ValueError):
        return None


def _cpp_bound(bound: str) -> ast.expr | None:
    tree, _ = ts.parse(f"auto __bound = {bound};".encode("utf-8", "replace"))
    assert tree is not None  # None only for a parse that was stopped
    for m in ts.matches("declarations", tree.root_node):
        try:
            return ast.parse(ts.cpp_to_py(m["value"]), mode="eval").body
        except (ts.ExprTooDeep, SyntaxError, RecursionError, MemoryError, ValueError):
            return None
    return None


class _Normalize(ast.NodeTransformer):
    """Drop dtype plumbing from Triton/C++ size expressions: `.to(...)`, `tl.full([], v, t)`,
    `libdevice.trunc` -> `trunc`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        name = call_name(node)
        short = name.split(".")[-1]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
            return self.visit(node.func.value)
        if short == "full" and len(node.args) >= 2:
            return self.visit(node.args[1])
        if short in ("trunc", "floor", "ceil", "floordiv", "max", "min", "maximum", "minimum") and node.args:
            fn = {"maximum": "max", "minimum": "min"}.get(short, short)
            return ast.Call(ast.Name(fn), [self.visit(a) for a in node.args], [])
        if short in ("static_cast", "convert", "cast") and node.args:
            return self.visit(node.args[0])
        return self.generic_visit(node)


# --- Triton ------------------------------------------------------------------------------------

def parse_triton(name: str, source: str, path: str, first_line: int, indent: int,
                 helper_params: tuple[str, ...] = ()) -> KernelFacts:
    """Facts from one Triton kernel's source as embedded in the wrapper comment."""
    loc = Location(path, first_line, 1)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return KernelFacts(name, "triton", helper_params, loc, problem=f"cannot parse Triton source: {type(exc).__name__}")
    # The kernel is a top-level def; walking the whole module would also walk the decorator's
    # large triton_meta/inductor_meta dicts.
    # Scans define helper functions first (`def _triton_helper_fn_add0(...)` for
    # tl.associative_scan): take the def named in async_compile.triton('<name>', ...), else the last.
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    fn = next((n for n in defs if n.name == name), defs[-1] if defs else None)
    if fn is None:
        return KernelFacts(name, "triton", helper_params, loc, problem="no kernel function in the Triton source")

    params = tuple(a.arg for a in fn.args.args)
    facts = KernelFacts(fn.name or name, "triton", params,
                        Location(path, first_line + fn.lineno - 1, fn.col_offset + indent + 1))
    facts.param_types = _triton_signature(fn)
    facts.combines = {d.name: op for d in defs if d is not fn and (op := combine_op(d))}
    events = ((node, line, 0, 0) for stmt in fn.body for node, line in walk_statements(stmt))
    return triton_facts(facts, events, path, first_line, indent)


def triton_facts(facts: KernelFacts, events: Iterable[tuple[ast.AST, int, int, int]], path: str,
                 first_line: int, indent: int) -> KernelFacts:
    """`facts` (name, parameters, signature) completed from the kernel body's nodes: `events` are
    (node, line of its statement, line shift, column shift) in `walk_statements`' order over the
    body, from the parse of the whole function or (tritonlines.py) from one shared parse per line
    text, whose nodes sit at line 1 of their own line (the shifts place them)."""
    where = functools.partial(_triton_location, path, first_line, indent)
    facts.locate = lambda line: Location(path, first_line + line - 1, indent + 1)
    # One pass over the body: definitions, assertions, and the division/reduction candidates
    # (checked once all definitions are known, since they read definitions by line).
    candidates = _triton_read(facts, events, where)
    values = Values(facts)
    for raw in facts.assertions:
        raw.space = _triton_space(values, raw.line)
    _triton_candidates(facts, candidates, values, where)
    return facts


def _triton_location(path: str, first_line: int, indent: int, node: ast.AST, dl: int, dc: int) -> Location:
    # The column shift is the indentation of a line parsed without it: line 1 of its parse.
    line = getattr(node, "lineno", 1)
    return Location(path, first_line + line + dl - 1, getattr(node, "col_offset", 0) + (dc if line == 1 else 0) + indent + 1)


def _triton_read(facts: KernelFacts, events: Iterable[tuple[ast.AST, int, int, int]],
                 where: Callable[[ast.AST, int, int], Location]) -> list[tuple[ast.AST, int, int, int]]:
    """Definitions, assertions and stores into `facts`; the division and reduction candidates returned."""
    candidates: list[tuple[ast.AST, int, int, int]] = []
    defs: dict[str, list[tuple[int, ast.expr]]] = {}
    assertions: list[RawAssertion] = []
    stores: list[RawStore] = []
    pointer_uses: dict[str, int] = {}
    for node, line, dl, dc in events:
        # The kinds read here are those tritonlines._read keeps: a new one goes in both.
        if isinstance(node, ast.Name):
            if node.id.startswith("out_ptr"):
                pointer_uses[node.id] = pointer_uses.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign):
            assign_definitions(defs, node, dl)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            defs.setdefault(node.target.id, []).append((node.lineno + dl, node.value))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, DIVISION_OPS):
            candidates.append((node, line, dl, dc))
        elif isinstance(node, ast.Call):
            name = call_name(node)
            if name.endswith("device_assert") and len(node.args) >= 2:
                msg_node = node.args[1]
                if isinstance(msg_node, ast.Constant) and isinstance(msg_node.value, str):
                    message = msg_node.value
                    lower, var, bound, bound_py = message_facts(message)
                    assertions.append(RawAssertion(message, var, lower, bound, bound_py,
                                                   where(node, dl, dc), node.lineno + dl))
            else:
                if name.endswith("store") and len(node.args) >= 2:
                    pointer = store_pointer(node.args[0])
                    if pointer is not None:
                        stores.append(RawStore(pointer, line, node.args[1]))
                if name.rsplit(".", 1)[-1] in _CANDIDATE_CALLS:
                    candidates.append((node, line, dl, dc))
    for pointer, uses in pointer_uses.items():
        if uses != sum(1 for st in stores if st.pointer == pointer):
            stores.append(RawStore(pointer, 0, None))  # also written some other way
    facts.defs, facts.assertions, facts.stores = packed(defs), tuple(assertions), tuple(stores)
    return candidates


# The calls `_triton_candidates` can keep: divisions (`divisor_of`'s) and reductions. A kernel's other
# calls (`tl.load`, `tl.where`, `tl.full`, most of them) are not offered to it.
_CANDIDATE_CALLS = frozenset({*DIVISION_CALLS, *_REDUCTIONS})


def assign_definitions(defs: dict[str, list[tuple[int, ast.expr]]], node: ast.Assign, dl: int) -> None:
    for target in node.targets:
        if isinstance(target, ast.Name):
            defs.setdefault(target.id, []).append((node.lineno + dl, node.value))
        elif isinstance(target, ast.Tuple) and call_name_of(node.value).endswith(
                ("associative_scan", "max_with_index", "min_with_index")):
            # `tmp7, = tl.associative_scan((tmp6,), 1, fn)`, `tmp2_val, tmp2_idx =
            # triton_helpers.max_with_index(...)` (an argmax): element i of the result.
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    defs.setdefault(elt.id, []).append(
                        (node.lineno + dl, ast.Subscript(node.value, ast.Constant(i), ast.Load())))


def _triton_candidates(facts: KernelFacts, candidates: list[tuple[ast.AST, int, int, int]], values: Values,
                       where: Callable[[ast.AST, int, int], Location]) -> None:
    """The candidates that divide by a kernel size, and the reductions (with the reduced extent)."""
    reduction_extent: str | None | bool = False  # computed on first use
    divisions: list[RawDivision] = []
    reductions: list[RawReduction] = []
    for node, line, dl, dc in candidates:
        found = division(values, node, line)
        if found is not None:
            divisions.append(RawDivision(found[0], found[1], where(node, dl, dc), found[2],
                                         _triton_space(values, line)))
            continue
        if not isinstance(node, ast.Call):
            continue
        fname = call_name(node)
        short = fname.rsplit(".", 1)[-1]
        if short in _REDUCTIONS and fname.startswith(("triton_helpers", "tl.")) and len(node.args) >= 2:
            if reduction_extent is False:
                reduction_extent = None
                for numel in ("r0_numel", "rnumel"):
                    if numel in facts.defs or numel in facts.params:
                        reduction_extent = values.upper(ast.Name(numel), line)
                        if reduction_extent is not None:
                            break
            extent = reduction_extent if isinstance(reduction_extent, str) else None
            reductions.append(RawReduction(_REDUCTIONS[short], extent, where(node, dl, dc),
                                           _triton_space(values, line)))
    facts.divisions, facts.reductions = tuple(divisions), tuple(reductions)


# Fields walked per node class: not the expression contexts and operators (`Load()`, `Add()`), leaf
# nodes that are none of what the caller looks for (a third of a kernel's nodes).
_WALKED_FIELDS: dict[type, tuple[str, ...]] = {}


def walk_statements(stmt: ast.AST):
    """(node, line of its statement) for every node under `stmt`; faster than ast.walk for the
    shapes Inductor emits, and iterative (no recursion on hostile nesting)."""
    stack: list[tuple[ast.AST, int]] = [(stmt, getattr(stmt, "lineno", 0))]
    while stack:
        node, line = stack.pop()
        yield node, line
        if isinstance(node, ast.stmt):
            line = node.lineno
        fields = _WALKED_FIELDS.get(type(node))
        if fields is None:
            fields = _WALKED_FIELDS[type(node)] = tuple(f for f in node._fields if f not in ("ctx", "op", "ops"))
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append((value, line))
            elif isinstance(value, list):
                stack.extend((v, line) for v in value if isinstance(v, ast.AST))


def _triton_signature(fn: ast.FunctionDef) -> dict[str, str]:
    """`triton_meta={'signature': {'in_ptr0': '*i64', ...}}` from the heuristics decorator."""
    for deco in fn.decorator_list:
        if not isinstance(deco, ast.Call):
            continue
        for kw in deco.keywords:
            if kw.arg != "triton_meta" or not isinstance(kw.value, ast.Dict):
                continue
            for key, value in zip(kw.value.keys, kw.value.values):
                if isinstance(key, ast.Constant) and key.value == "signature" and isinstance(value, ast.Dict):
                    out = {}
                    for k, v in zip(value.keys, value.values):
                        if isinstance(k, ast.Constant) and isinstance(v, ast.Constant):
                            out[str(k.value)] = str(v.value)
                    return out
    return {}


def product(extents: list[str]) -> str | None:
    """`(a) * (b)`: the iteration space of loops (or grid dims) with these extents; None for none."""
    return " * ".join(f"({e})" for e in extents) if extents else None


def _triton_space(values: Values, line: int) -> str | None:
    """`xnumel * ynumel` of a Triton kernel (over its params): with either 0 the grid is empty and
    no line of the kernel runs."""
    return product([e for e in (values.upper(ast.Name(n), line) for n in ("xnumel", "ynumel")
                                 if n in values.facts.defs or n in values.params) if e is not None])

