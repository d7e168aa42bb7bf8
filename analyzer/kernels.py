"""Facts from kernels: Triton source (parsed with `ast`, never executed) and C++ kernels
(`extern "C" void cpp_fused_<k>(...)`, parsed with tree-sitter).

Both kinds are reduced to one form, `KernelFacts`: parameter names in order, `tmpN`-style
definitions as Python `ast` expressions, assertions, divisions and reductions. One value-range
engine (`Values`) then answers: which pointer parameters flow into a variable, and what symbolic
range (over the kernel's size parameters) it takes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from . import ts
from .findings import Location

MESSAGE_RE = re.compile(
    r"index out of bounds:\s*(?:(?P<lower>-?\d+)L?\s*<=\s*)?(?P<var>\w+)\s*<\s*(?P<bound>.+?)\s*$"
)
_POINTER_PARAM = re.compile(r"^(in_out_ptr|in_ptr|out_ptr)\d+$")
_ITER_INDEX = re.compile(r"^(?P<p>[xyz]|r\d*_?)index$")
_REDUCTIONS = {
    "max2": "max", "max": "max", "min2": "min", "min": "min", "argmax": "argmax", "argmin": "argmin",
    "prod": "prod", "max_with_index": "argmax", "min_with_index": "argmin",
}


@dataclass
class RawAssertion:
    message: str
    index_var: str | None
    lower: int | None
    bound: str
    bound_py: str | None               # the bound in Python syntax over kernel params
    location: Location
    line: int                          # position key inside the kernel (for reaching definitions)


@dataclass
class RawDivision:
    divisor: str                       # the divisor variable/expression as written
    divisor_expr: str | None           # over kernel params
    location: Location
    integer: bool = False


@dataclass
class RawReduction:
    op: str
    extent_expr: str | None            # over kernel params
    location: Location


@dataclass
class KernelFacts:
    name: str
    kind: str                          # "triton" | "cpp"
    params: tuple[str, ...]
    location: Location
    param_types: dict[str, str] = field(default_factory=dict)
    defs: dict[str, list[tuple[int, ast.expr]]] = field(default_factory=dict)
    # iteration var -> [(start, end, exclusive extent)] per loop over it: C++ kernels reuse `x1`
    # for successive loops with different extents, so a use is matched to its enclosing loop
    # (start/end are byte offsets, the same keys as `defs` positions).
    extents: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)

    def extent_at(self, var: str, pos: int) -> str | None:
        best = None
        for start, end, extent in self.extents.get(var, ()):
            if start <= pos < end and (best is None or start > best[0]):
                best = (start, extent)
        return best[1] if best else None
    assertions: list[RawAssertion] = field(default_factory=list)
    divisions: list[RawDivision] = field(default_factory=list)
    reductions: list[RawReduction] = field(default_factory=list)
    # Other checks with a literal message (`throw std::runtime_error("one_hot: Class values ...")`):
    # not index bounds, but `why` can still route their failures.
    messages: list[tuple[str, Location]] = field(default_factory=list)
    problem: str | None = None


def parse_message(message: str) -> tuple[int | None, str | None, str]:
    """`index out of bounds: 0 <= tmp4 < ks0` -> (0, "tmp4", "ks0"); one-sided forms give lower None."""
    m = MESSAGE_RE.search(message)
    if not m:
        return None, None, ""
    lower = int(m.group("lower")) if m.group("lower") is not None else None
    return lower, m.group("var"), m.group("bound").strip()


def bound_to_py(bound: str) -> str | None:
    """The bound of an assertion message in the size-expression language, or None.

    `100L` -> `100`; `ks0*ks1` stays; Triton's
    `libdevice.trunc(tl.full([], 0.12, tl.float64)*ks1.to(tl.float64)).to(tl.int32)` and C++'s
    `static_cast<int64_t>(std::trunc(0.12*static_cast<double>(ks3)))` both become `trunc(0.12 * ks1)`.
    """
    text = re.sub(r"(?<=\d)[lL]+\b", "", bound)
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
        name = _call_name(node)
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


# --- the value-range engine --------------------------------------------------------------------

class Values:
    """Reaching definitions and symbolic ranges for one kernel.

    Ranges are Python-syntax expressions over the kernel's parameters (and `inf`); `None` means
    unknown (data-dependent, e.g. a loaded index value).
    """

    def __init__(self, facts: KernelFacts, max_steps: int = 20_000) -> None:
        self.facts = facts
        self.params = set(facts.params)
        self.steps = 0
        self.max_steps = max_steps

    def definition(self, name: str, line: int) -> tuple[int, ast.expr] | None:
        defs = self.facts.defs.get(name)
        if not defs:
            return None
        best = None
        for def_line, expr in defs:
            if def_line < line and (best is None or def_line >= best[0]):
                best = (def_line, expr)
        if best is None:
            return None
        return best

    def _budget(self) -> bool:
        self.steps += 1
        return self.steps <= self.max_steps

    # Which pointer parameters (loads) and size parameters flow into an expression.
    def sources(self, expr: ast.expr, line: int, depth: int = 0, seen: set | None = None) -> tuple[set[str], set[str]]:
        seen = set() if seen is None else seen
        ptrs: set[str] = set()
        sizes: set[str] = set()
        stack: list[tuple[ast.AST, int, int]] = [(expr, line, depth)]
        while stack:
            node, at, d = stack.pop()
            if not self._budget() or d > 200:
                break
            if isinstance(node, ast.Call) and _call_name(node) in ("load", "tl.load") and node.args:
                ptr_names = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and _POINTER_PARAM.match(n.id)}
                ptrs |= ptr_names
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
                elif node.id in self.params and not _POINTER_PARAM.match(node.id):
                    sizes.add(node.id)
                continue
            stack.extend((child, at, d + 1) for child in ast.iter_child_nodes(node))
        return ptrs, sizes

    def upper(self, expr: ast.expr, line: int, depth: int = 0) -> str | None:
        """Inclusive symbolic maximum of `expr`, or None when unbounded/unknown."""
        return self._range(expr, line, depth, upper=True)

    def lower(self, expr: ast.expr, line: int, depth: int = 0) -> str | None:
        return self._range(expr, line, depth, upper=False)

    def _range(self, node: ast.expr, line: int, depth: int, upper: bool) -> str | None:
        if depth > 60 or not self._budget():
            return None
        rng = self._range
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return repr(node.value)
        if isinstance(node, ast.Name):
            name = node.id
            found = self.definition(name, line)
            if found is not None:
                return rng(found[1], found[0], depth + 1, upper)
            extent = self.facts.extent_at(name, line)
            if extent is not None:
                return f"({extent}) - 1" if upper else "0"
            m = _ITER_INDEX.match(name)
            if m:
                numel = self._numel(m.group("p"), line, depth)
                if numel is None:
                    return None if upper else "0"
                return f"({numel}) - 1" if upper else "0"
            if name in self.params and not _POINTER_PARAM.match(name):
                return name
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = rng(node.operand, line, depth + 1, not upper)
            return None if inner is None else f"-({inner})"
        if isinstance(node, ast.BinOp):
            op = node.op
            if isinstance(op, ast.Add):
                a, b = rng(node.left, line, depth + 1, upper), rng(node.right, line, depth + 1, upper)
                return None if a is None or b is None else f"({a}) + ({b})"
            if isinstance(op, ast.Sub):
                a, b = rng(node.left, line, depth + 1, upper), rng(node.right, line, depth + 1, not upper)
                return None if a is None or b is None else f"({a}) - ({b})"
            if isinstance(op, ast.Mult):
                # Index arithmetic multiplies non-negative quantities (strides, sizes).
                if not (self._nonneg(node.left, line, depth) and self._nonneg(node.right, line, depth)):
                    return None
                a, b = rng(node.left, line, depth + 1, upper), rng(node.right, line, depth + 1, upper)
                return None if a is None or b is None else f"({a}) * ({b})"
            if isinstance(op, ast.Mod):
                if not upper:
                    return "0" if self._nonneg(node.left, line, depth) else None
                b = rng(node.right, line, depth + 1, True)
                return None if b is None else f"({b}) - 1"
            if isinstance(op, (ast.FloorDiv, ast.Div)):
                a = rng(node.left, line, depth + 1, upper)
                b = rng(node.right, line, depth + 1, not upper)
                if a is None or b is None:
                    return None
                return f"floordiv({a}, {b})" if isinstance(op, ast.FloorDiv) else f"({a}) / ({b})"
            return None
        if isinstance(node, ast.IfExp):
            a, b = rng(node.body, line, depth + 1, upper), rng(node.orelse, line, depth + 1, upper)
            if a is None or b is None:
                return None
            return f"{'max' if upper else 'min'}({a}, {b})"
        if isinstance(node, ast.Subscript):
            # `tl.arange(0, XBLOCK)[:, None]` style broadcasting keeps the value.
            return rng(node.value, line, depth + 1, upper)
        if isinstance(node, ast.Call):
            fname = _call_name(node)
            short = fname.split(".")[-1]
            args = node.args
            if short in ("where",) and len(args) == 3:
                a, b = rng(args[1], line, depth + 1, upper), rng(args[2], line, depth + 1, upper)
                if a is None or b is None:
                    # Negative-index wrapping `where(i < 0, i + ks, i)` of loaded data stays unknown.
                    return None
                return f"{'max' if upper else 'min'}({a}, {b})"
            if short in ("to", "broadcast_to", "copy", "cast", "reshape", "expand_dims", "convert") and args:
                if isinstance(node.func, ast.Attribute) and short == "to":
                    return rng(node.func.value, line, depth + 1, upper)
                return rng(args[0], line, depth + 1, upper)
            if short == "to" and isinstance(node.func, ast.Attribute):
                return rng(node.func.value, line, depth + 1, upper)
            if short in ("trunc", "floor", "ceil") and args:
                a = rng(args[0], line, depth + 1, upper)
                return None if a is None else f"{short}({a})"
            if short in ("floordiv",) and len(args) == 2:
                return self._range(ast.BinOp(args[0], ast.FloorDiv(), args[1]), line, depth + 1, upper)
            if short in ("minimum", "maximum", "min", "max") and len(args) == 2:
                a, b = rng(args[0], line, depth + 1, upper), rng(args[1], line, depth + 1, upper)
                if a is None or b is None:
                    if short in ("minimum", "min") and upper:
                        return a or b
                    if short in ("maximum", "max") and not upper:
                        return a or b
                    return None
                fn = "min" if short in ("minimum", "min") else "max"
                return f"{fn}({a}, {b})"
            if short == "full" and len(args) >= 2:
                return rng(args[1], line, depth + 1, upper)
            if short == "arange" and len(args) >= 2:
                return None if upper else rng(args[0], line, depth + 1, False)
            return None
        return None

    def _nonneg(self, node: ast.expr, line: int, depth: int) -> bool:
        low = self._range(node, line, depth + 1, upper=False)
        if low is None:
            return False
        try:
            from .intervals import evaluate_interval
            lo, _ = evaluate_interval(low, {}, default=(0, None))
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


def _call_name(node: ast.Call) -> str:
    func = node.func
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _expr_text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - ast.unparse of odd trees must not abort analysis
        return "?"


def _division(values: Values, node: ast.AST, line: int) -> tuple[str, str | None, bool] | None:
    """(divisor text, divisor over params, integer?) when `node` divides by a kernel size.

    Float `/` by a size is a mean-like NaN source. Integer `%` / `//` (`mod(a, b)` in C++) count
    only when the dividend is loaded data: index arithmetic like `xindex % ks0` runs only for
    lanes that exist, so a zero size never reaches it.
    """
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mod, ast.FloorDiv)):
        dividend, divisor, integer = node.left, node.right, not isinstance(node.op, ast.Div)
    elif isinstance(node, ast.Call) and _call_name(node).split(".")[-1] in ("mod", "floordiv", "fmod") \
            and len(node.args) == 2:
        dividend, divisor, integer = node.args[0], node.args[1], True
    else:
        return None
    ptrs, sizes = values.sources(divisor, line)
    if not sizes or ptrs:
        return None
    if integer and not values.sources(dividend, line)[0]:
        return None
    return _expr_text(divisor), values.upper(divisor, line), integer


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

    def where(node: ast.AST) -> Location:
        return Location(path, first_line + getattr(node, "lineno", 1) - 1, getattr(node, "col_offset", 0) + indent + 1)

    params = tuple(a.arg for a in fn.args.args)
    facts = KernelFacts(fn.name or name, "triton", params, where(fn))
    facts.param_types = _triton_signature(fn)
    # One pass over the body: definitions, assertions, and the division/reduction candidates
    # (checked once all definitions are known, since they read definitions by line).
    candidates: list[tuple[ast.AST, int]] = []
    for stmt in fn.body:
        for node, line in _walk_statements(stmt):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        facts.defs.setdefault(target.id, []).append((node.lineno, node.value))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                facts.defs.setdefault(node.target.id, []).append((node.lineno, node.value))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, _DIVISION_OPS):
                candidates.append((node, line))
            elif isinstance(node, ast.Call):
                name = _call_name(node)
                if name.endswith("device_assert") and len(node.args) >= 2:
                    msg_node = node.args[1]
                    if isinstance(msg_node, ast.Constant) and isinstance(msg_node.value, str):
                        message = msg_node.value
                        lower, var, bound = parse_message(message)
                        facts.assertions.append(RawAssertion(message, var, lower, bound,
                                                             bound_to_py(bound) if bound else None,
                                                             where(node), node.lineno))
                else:
                    candidates.append((node, line))
    values = Values(facts)
    reduction_extent: str | None | bool = False  # computed on first use
    for node, line in candidates:
        division = _division(values, node, line)
        if division is not None:
            facts.divisions.append(RawDivision(division[0], division[1], where(node), division[2]))
            continue
        if not isinstance(node, ast.Call):
            continue
        fname = _call_name(node)
        short = fname.rsplit(".", 1)[-1]
        if short in _REDUCTIONS and fname.startswith(("triton_helpers", "tl.")) and len(node.args) >= 2:
            if reduction_extent is False:
                reduction_extent = None
                for numel in ("r0_numel", "rnumel"):
                    if numel in facts.defs or numel in params:
                        reduction_extent = values.upper(ast.Name(numel), line)
                        if reduction_extent is not None:
                            break
            facts.reductions.append(RawReduction(_REDUCTIONS[short], reduction_extent, where(node)))
    return facts


_DIVISION_OPS = (ast.Div, ast.Mod, ast.FloorDiv)


def _walk_statements(stmt: ast.stmt):
    """(node, line of its statement) for every node under `stmt`; faster than ast.walk for the
    shapes Inductor emits, and iterative (no recursion on hostile nesting)."""
    stack: list[tuple[ast.AST, int]] = [(stmt, getattr(stmt, "lineno", 0))]
    while stack:
        node, line = stack.pop()
        yield node, line
        if isinstance(node, ast.stmt):
            line = node.lineno
        for field in node._fields:
            value = getattr(node, field, None)
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


# --- C++ kernels -------------------------------------------------------------------------------

_THROW = re.compile(r'throw std::runtime_error\("((?:[^"\\]|\\.){1,500})"\)')
_CPP_KERNEL = re.compile(r"^(cpp_\w+|kernel_\w+)$")
_CPU_REDUCE = re.compile(r"\b(max|min|argmax|argmin|prod)_(?:masked_reduce|propagate_nan|combine)\b|\b(argmax|argmin)_combine")


def parse_cpp(tree: ts.Tree, path: str, max_depth: int = 200) -> list[KernelFacts]:
    """Every `extern "C" void cpp_fused_<k>(...)` definition in a C++ member."""
    out = []
    for m in ts.matches("functions", tree.root_node):
        name = ts.text(m["name"]).strip()
        if not _CPP_KERNEL.match(name):
            continue
        out.append(_cpp_kernel(name, m, path, max_depth))
    return out


def _cpp_kernel(name: str, m: dict, path: str, max_depth: int) -> KernelFacts:
    params = []
    types: dict[str, str] = {}
    for p in m["params"].named_children:
        idents = [ts.text(i) for i in ts.identifiers(p)]
        decl = p.child_by_field_name("declarator")
        pname = None
        if decl is not None:
            ids = [ts.text(i) for i in ts.identifiers(decl)]
            pname = ids[0] if ids else None
        if pname is None and idents:
            pname = idents[-1]
        if pname:
            params.append(pname)
            types[pname] = " ".join(ts.text(p).replace(pname, "").split())
    line, col = ts.position(m["function"])
    facts = KernelFacts(name, "cpp", tuple(params), Location(path, line, col), param_types=types)
    body = m["body"]
    problems = 0

    def to_ast(node: ts.Node) -> ast.expr:
        nonlocal problems
        try:
            return ast.parse(ts.cpp_to_py(node, max_depth), mode="eval").body
        except (ts.ExprTooDeep, SyntaxError, RecursionError, MemoryError, ValueError):
            problems += 1
            return ast.Call(ast.Name("unknown"), [], [])

    for d in ts.matches("declarations", body):
        var = ts.text(d["name"])
        value = d["value"]
        if value.type == "argument_list":
            continue
        if d["declaration"].parent is not None and d["declaration"].parent.type == "for_statement":
            continue  # loop variables get their range from the loop (facts.extents), not the init
        facts.defs.setdefault(var, []).append((d["declaration"].start_byte, to_ast(value)))
    for lp in ts.matches("loops", body):
        var = ts.text(lp["var"])
        loop = lp["loop"]
        try:
            facts.extents.setdefault(var, []).append((loop.start_byte, loop.end_byte,
                                                      ts.cpp_to_py(lp["extent"], max_depth)))
        except ts.ExprTooDeep:
            problems += 1
    for c in ts.matches("calls", body):
        fn = ts.text(c["function"]).strip()
        if fn != "AOTI_TORCH_CHECK":
            continue
        args = [a for a in c["args"].named_children if a.type != "comment"]
        if len(args) < 2 or args[1].type not in ("string_literal", "concatenated_string"):
            continue
        message = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', ts.text(args[1])))
        lower, var, bound = parse_message(message)
        line, col = ts.position(c["statement"])
        facts.assertions.append(RawAssertion(message, var, lower, bound, bound_to_py(bound) if bound else None,
                                             Location(path, line, col), c["statement"].start_byte))
    values = Values(facts)
    for var, defs in facts.defs.items():
        for pos, expr in defs:
            for sub in ast.walk(expr):
                division = _division(values, sub, pos)
                if division is not None:
                    facts.divisions.append(RawDivision(*division[:2], _cpp_location(path, body, pos), division[2]))
    _cpp_reductions(facts, body, path, max_depth)
    text = ts.text(body)
    body_line, _ = ts.position(body)
    for tm in _THROW.finditer(text):
        line = body_line + text.count("\n", 0, tm.start())
        column = tm.start() - (text.rfind("\n", 0, tm.start()) + 1) + 1
        facts.messages.append((tm.group(1), Location(path, line, column)))
    if problems:
        facts.problem = f"{problems} expression(s) in {name} could not be analysed"
    return facts


def _cpp_location(path: str, body: ts.Node, byte: int) -> Location:
    node = body.descendant_for_byte_range(byte, byte)
    if node is None:
        return Location(path)
    line, col = ts.position(node)
    return Location(path, line, col)


def _cpp_reductions(facts: KernelFacts, body: ts.Node, path: str, max_depth: int) -> None:
    """Accumulators like `tmp_acc0_vec = max_masked_reduce(tmp_acc0_vec, tmp0, n)` inside a loop.

    The reduced extent is the product of the loops that enclose the accumulation but not the
    accumulator's declaration (those are the loops it reduces over).
    """
    seen: set[tuple[str, str]] = set()
    for m in ts.matches("assignments", body):
        left = ts.text(m["left"]).strip()
        right = ts.text(m["right"])
        if not left.startswith("tmp_acc"):
            continue
        rm = _CPU_REDUCE.search(right)
        op = None
        if rm:
            op = rm.group(1) or rm.group(2)
        elif re.search(rf"\b{re.escape(left)}\s*\*", right):
            op = "prod"
        if op is None:
            continue
        acc = left.removesuffix("_vec")
        if (acc, op) in seen:
            continue
        seen.add((acc, op))
        stmt = m["statement"]
        # The accumulator's declaration (already among the kernel's definitions, by byte offset).
        declared = [pos for pos, _ in facts.defs.get(acc, ()) if pos < stmt.start_byte]
        decl_byte = max(declared) if declared else None
        loops = []
        node = stmt.parent
        while node is not None and node != body.parent:
            if node.type == "for_statement" and (decl_byte is None or node.start_byte > decl_byte):
                init = node.child_by_field_name("initializer")
                decl = init.child_by_field_name("declarator") if init is not None else None
                var_node = decl.child_by_field_name("declarator") if decl is not None else None
                var = ts.text(var_node)
                extent = facts.extent_at(var, node.start_byte)
                # `x1_inner` loops walk the lanes of one vector, not the reduced dimension.
                if extent is not None and not var.endswith("_inner"):
                    loops.append(extent)
            node = node.parent
        extent = " * ".join(f"({e})" for e in loops) if loops else None
        line, col = ts.position(stmt)
        facts.reductions.append(RawReduction(op, extent, Location(path, line, col)))

