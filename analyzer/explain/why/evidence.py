"""What a crash log itself says about the failing call: the shapes and values of its arguments.

A Python traceback quotes the line that called the model (`out = f(torch.randn(6, 8), torch.full((3,),
9))`), and scripts often print shapes (`x.shape = (6, 8)`, `x: torch.Size([6, 8])`). Those are facts
about the very call that failed, so `explain` uses them to rule causes in or out (an index bound of
6 was not empty; an index value of 9 is outside [0, 6)) and quotes them in the answer.

The text is hostile: a line is parsed with `ast` only (never evaluated), only when it is short and
names a tensor constructor, and every literal read is bounded (the size of a shape, the number of
values); anything not understood is simply no evidence.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from ...query import witness as W
from ...core.messages import WHY
from ...core.model import Assertion, DimRef, Model

# Lines longer than this are not parsed (a call line in a traceback is one line of source).
MAX_LINE = 2000
# Constructors whose shape (and for some, values) the call's literal arguments give.
_SHAPED = {"randn", "rand", "zeros", "ones", "empty", "randint", "full", "tensor", "as_tensor", "arange",
           "LongTensor", "IntTensor", "FloatTensor", "Tensor"}
# Methods that keep a tensor's shape and values (a device move, a cast, a copy).
_KEEPS = {"cuda", "cpu", "to", "float", "double", "half", "bfloat16", "long", "int", "contiguous", "clone",
          "detach", "requires_grad_"}
_MAX_RANK = 16
_MAX_VALUES = 100_000
_MAX_SIZE = 2**63  # a size past int64 is not a shape the log can have meant
# `x.shape = (6, 8)`, `x.shape: torch.Size([6, 8])`, `x: torch.Size([6, 8])`, `x.size() = [6, 8]`.
# Starts at a word boundary; each piece is one token class, so a mismatch never backtracks far.
_NAMED_SHAPE = re.compile(r"\b(?P<name>[A-Za-z_]\w*)(?:(?:\.shape|\.size\(\)) ?[=:] ?(?:torch\.Size\()?|"
                          r" ?[=:] ?torch\.Size\()[\[(](?P<dims>\d+(?:, ?\d+){0,15},?)?[\])]")


@dataclass(frozen=True)
class Observed:
    """One argument of the failing call as the log shows it."""

    text: str                          # as written in the log: "torch.full((3,), 9, dtype=torch.int64)"
    position: int | None = None        # positional argument index
    name: str | None = None            # keyword argument or printed name
    shape: tuple[int, ...] | None = None
    low: float | None = None           # smallest and largest value, when the log gives them
    high: float | None = None

    def values_text(self) -> str | None:
        if self.low is None or self.high is None:
            return None
        low, high = _number(self.low), _number(self.high)
        return low if low == high else f"{low}..{high}"


@dataclass(frozen=True)
class LogEvidence:
    """The arguments of the failing call the log shows (empty when it shows none)."""

    args: tuple[Observed, ...] = ()
    line: str | None = None            # the log line the call was read from

    def __bool__(self) -> bool:
        return bool(self.args)

    def for_input(self, model: Model, index: int) -> Observed | None:
        """What the log shows about input `index` of `model`: by its user or compiler name first,
        then by position in the call."""
        if not 0 <= index < len(model.inputs):
            return None
        inp = model.inputs[index]
        names = {n for n in (inp.user_name, inp.name) if n}
        for obs in self.args:
            if obs.name is not None and obs.name in names:
                return obs
        positional = [o for o in self.args if o.position is not None]
        # Positions match inputs only when the call passes no more positional arguments than the
        # model has inputs (a helper's own call would not).
        if len(positional) <= len(model.inputs):
            for obs in positional:
                if obs.position == index:
                    return obs
        return None

    def sizes(self, model: Model) -> dict[DimRef, int]:
        """Input dim -> size, for each input whose observed rank matches the package's."""
        out: dict[DimRef, int] = {}
        for inp in model.inputs:
            obs = self.for_input(model, inp.index)
            if obs is None or obs.shape is None or (inp.dims and len(obs.shape) != len(inp.dims)):
                continue
            for dim, size in enumerate(obs.shape):
                out[DimRef(inp.index, dim)] = size
        return out


def read_evidence(text: str) -> LogEvidence:
    """The last call line in `text` that passes tensor constructors, plus printed shapes."""
    call: tuple[Observed, ...] = ()
    call_line: str | None = None
    named: dict[str, Observed] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or len(line) > MAX_LINE:
            continue
        if "torch." in line and "(" in line:
            found = _call_args(line)
            if found:
                call, call_line = found, line
                continue
            for obs in _assigned(line):  # `idx = torch.full((3,), 9)` in a quoted script line
                named[obs.name or ""] = obs
        if "[" in line or "(" in line:
            for match in _NAMED_SHAPE.finditer(line):
                dims = match.group("dims")
                shape = tuple(int(d) for d in dims.replace(" ", "").strip(",").split(",")) if dims else ()
                named[match.group("name")] = Observed(text=match.group(0), name=match.group("name"), shape=shape)
    names = {o.name for o in call if o.name}
    args = call + tuple(o for n, o in named.items() if n not in names)
    return LogEvidence(args=args, line=call_line) if args else LogEvidence()


def _call_args(line: str) -> tuple[Observed, ...]:
    """The arguments of the outermost call on `line` that passes at least one tensor constructor."""
    tree = _parse(line)
    if tree is None:
        return ()
    for node in ast.walk(tree):   # breadth first: outer calls before the constructors inside them
        if not isinstance(node, ast.Call) or _constructor(node) is not None:
            continue
        observed = [_observe(arg, position=i) for i, arg in enumerate(node.args)]
        observed += [_observe(kw.value, name=kw.arg) for kw in node.keywords if kw.arg]
        if any(o.shape is not None for o in observed):
            return tuple(observed)
    return ()


def _assigned(line: str) -> list[Observed]:
    """`NAME = torch.<constructor>(...)` on `line`: what NAME holds."""
    tree = _parse(line)
    out: list[Observed] = []
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            obs = _observe(node.value, name=node.targets[0].id)
            if obs.shape is not None:
                out.append(obs)
    return out


def _parse(line: str) -> ast.AST | None:
    # A traceback line may end inside an expression or carry a prompt; try it whole, then up to its
    # last closing parenthesis.
    for candidate in (line, line[:line.rfind(")") + 1]):
        try:
            return ast.parse(candidate.removeprefix(">>> "), mode="exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _constructor(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _SHAPED and isinstance(func.value, ast.Name) \
            and func.value.id == "torch":
        return func.attr
    return None


def _observe(node: ast.expr, position: int | None = None, name: str | None = None) -> Observed:
    text = ast.unparse(node) if len(ast.dump(node)) < 4 * MAX_LINE else "..."
    shape = low = high = None
    # `torch.randn(6, 8).cuda()`, `.to(device)`, `.long()`: the same shape and values.
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEEPS \
            and _constructor(node) is None:
        node = node.func.value
    if isinstance(node, ast.Call):
        kind = _constructor(node)
        if kind is not None:
            shape, low, high = _constructed(kind, node)
    return Observed(text=text, position=position, name=name, shape=shape, low=low, high=high)


def _constructed(kind: str, node: ast.Call) -> tuple[tuple[int, ...] | None, float | None, float | None]:
    args = node.args
    keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
    shape: tuple[int, ...] | None
    if kind in ("tensor", "as_tensor", "LongTensor", "IntTensor", "FloatTensor", "Tensor") and args \
            and isinstance(args[0], (ast.List, ast.Tuple)):
        found = _nested(args[0], 0)
        if found is None:
            return None, None, None
        shape, values = found[0], found[1]
        return shape, (min(values) if values else None), (max(values) if values else None)
    if kind == "arange":
        numbers = [_literal(a) for a in args[:3]]
        known = [n for n in numbers if n is not None]
        if not known or len(known) != len(numbers):
            return None, None, None
        start, stop, step = (0.0, known[0], 1.0) if len(known) == 1 else (known[0], known[1], known[2] if len(known) > 2 else 1.0)
        try:
            count = max(0, math.ceil((stop - start) / step)) if step else -1
        except (OverflowError, ValueError):  # `arange(0, 1e300, 1e-300)`: no shape worth reading
            return None, None, None
        if count < 0 or count > _MAX_SIZE:
            return None, None, None
        if count == 0:
            return (0,), None, None
        last = start + (count - 1) * step
        return (count,), min(start, last), max(start, last)
    if kind == "randint":
        # randint(high, size) or randint(low, high, size)
        size_node = keywords.get("size") or (args[-1] if len(args) >= 2 else None)
        bounds = [_literal(a) for a in args if a is not size_node]
        limits = [b for b in bounds if b is not None]
        shape = _shape_of(size_node) if size_node is not None else None
        if shape is None or len(limits) != len(bounds) or not 1 <= len(limits) <= 2:
            return shape, None, None
        low, high = (0.0, limits[0]) if len(limits) == 1 else (limits[0], limits[1])
        return shape, low, high - 1
    if kind == "full":
        size_node = args[0] if args else keywords.get("size")
        fill = _literal(args[1]) if len(args) > 1 else (_literal(keywords["fill_value"])
                                                         if "fill_value" in keywords else None)
        shape = _shape_of(size_node) if size_node is not None else None
        return shape, fill, fill
    # randn / rand / zeros / ones / empty: the size as varargs or one sequence.
    if not args and "size" in keywords:
        shape = _shape_of(keywords["size"])
    elif len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        shape = _shape_of(args[0])
    else:
        shape = _ints(args)
    if shape is None:
        return None, None, None
    empty = 0 in shape
    if kind == "zeros" and not empty:
        return shape, 0, 0
    if kind == "ones" and not empty:
        return shape, 1, 1
    return shape, None, None


def _shape_of(node: ast.expr | None) -> tuple[int, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        return _ints(node.elts)
    value = _literal(node) if node is not None else None
    return (int(value),) if isinstance(value, int) and value >= 0 else None


def _ints(nodes: list[ast.expr]) -> tuple[int, ...] | None:
    if len(nodes) > _MAX_RANK:
        return None
    out: list[int] = []
    for n in nodes:
        value = _literal(n)
        if not isinstance(value, int) or value < 0:
            return None
        out.append(value)
    return tuple(out)


def _literal(node: ast.expr) -> float | None:
    """An int or float literal (with a unary minus); None otherwise (never evaluates anything)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    return None


def _nested(node: ast.expr, depth: int) -> tuple[tuple[int, ...], list[float]] | None:
    """The shape and values of a nested list literal; None when ragged, too deep or not numbers."""
    if depth > _MAX_RANK:
        return None
    if not isinstance(node, (ast.List, ast.Tuple)):
        value = _literal(node)
        return ((), [value]) if value is not None else None
    if len(node.elts) > _MAX_VALUES:
        return None
    parts = []
    for element in node.elts:
        part = _nested(element, depth + 1)
        if part is None:
            return None
        parts.append(part)
    if len({p[0] for p in parts}) > 1:
        return None
    inner = parts[0][0] if parts else ()
    return (len(parts), *inner), [v for p in parts for v in p[1]]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


@dataclass(frozen=True)
class Seen:
    """What the log's call says about one assertion: the bound's value (None when the log does not
    give every size it is read from), whether the facts rule the assertion out, and the sentence
    quoting them (appended to the cause)."""

    bound: int | None = None
    ruled_out: bool = False
    text: str = ""
    facts: str = ""


def observe(model: Model, a: Assertion, evidence: LogEvidence, bound_text: str) -> Seen:
    """What the log's call says about the failed assertion `a` (`bound_text`: its bound as shown)."""
    if not evidence:
        return Seen()
    observed = evidence.sizes(model)
    facts: list[str] = []
    bound: int | None = a.bound_value
    refs = W.expr_dims(model, a.bound_expr) if a.bound_value is None else []
    if bound is None and refs and all(r in observed for r in refs):
        values = {name: observed[ref] for name, ref in W.symbol_dims(model).items() if ref in observed}
        result = W.evaluate_symbols(a.bound_expr or "", values)
        bound = int(result) if result is not None and float(result).is_integer() else None
    for i in sorted({r.input for r in refs or ()}):
        seen = evidence.for_input(model, i)
        if seen is not None and seen.shape is not None:
            facts.append(WHY["why.evidence.shape"].format(who=model.input_text(i), shape=shape_text(seen.shape)))
    lower = a.lower if a.lower is not None else 0
    ruled_out = False
    values_text = None
    if len(a.index_sources) == 1:
        seen = evidence.for_input(model, a.index_sources[0])
        if seen is not None and seen.values_text() is not None:
            values_text = seen.values_text()
            facts.append(WHY["why.evidence.values"].format(who=model.input_text(a.index_sources[0]),
                                                          values=values_text))
            if bound is not None and seen.low is not None and seen.high is not None:
                inside = seen.low >= lower and seen.high < bound
                ruled_out = inside and bound > lower
    if bound is not None and refs:
        facts.append(WHY["why.evidence.bound"].format(bound=bound_text, value=bound))
    extent = _extent(model, a, evidence, observed) if not a.index_sources else None
    if extent is not None and bound is not None:
        size, shown = extent
        facts.extend(shown)
        past = size > bound - lower  # the index runs over [0, size): its last value is size - 1
        facts.append(WHY["why.evidence.extent-past" if past else "why.evidence.extent-inside"].format(
            index_var=a.index_var or "the index", extent=size, value=bound))
        ruled_out = ruled_out or not past
    if values_text is not None and bound is not None:
        key = "why.evidence.inside" if ruled_out else "why.evidence.outside"
        facts.append(WHY[key].format(values=values_text, lower=lower, value=bound))
    if not facts:
        return Seen(bound=bound)
    joined = ", ".join(facts)
    text = WHY["why.evidence.ruled-out" if ruled_out else "why.evidence.shows"].format(facts=joined)
    return Seen(bound=bound, ruled_out=ruled_out, text=text, facts=joined)


def _extent(model: Model, a: Assertion, evidence: LogEvidence,
            observed: dict[DimRef, int]) -> tuple[int, list[str]] | None:
    """The iteration range of an index over sizes (`arange(seq)`) at the shapes the log shows, and
    the facts quoted for it; None unless the log gives every size it reads."""
    refs = list(a.index_extent_sources)
    if not a.index_extent or not refs or not all(r in observed for r in refs):
        return None
    values = {name: observed[ref] for name, ref in W.symbol_dims(model).items() if ref in observed}
    result = W.evaluate_symbols(a.index_extent, values)
    if result is None or not float(result).is_integer():
        return None
    shown: list[str] = []
    for i in sorted({r.input for r in refs}):
        seen = evidence.for_input(model, i)
        if seen is not None and seen.shape is not None:
            shown.append(WHY["why.evidence.shape"].format(who=model.input_text(i), shape=shape_text(seen.shape)))
    return int(result), shown
