"""The exported program's guards over input sizes, read as data and evaluated without `eval`.

`torch.export` (2.9+) saves the guards it kept as Python text in `guards_code`:
`(L['a'].size()[2] % 4) == 0`, `min(L['a'].size()[3] // 4, L['a'].size()[2] // 4) > 4`. They are what
the traced graph assumes of its inputs beyond the range constraints: the branch a model took on the
example's sizes (`if h % 4: pad`, `if min(h, w) <= window`), the strides a view needed. The package
is compiled from that graph, so sizes that break a guard run code traced for other sizes.

Each guard is parsed with `ast` and compiled to a small expression DAG over a whitelist of node kinds
(integer constants, `+ - * // %`, unary minus, comparisons, `and`/`or`/`not`, `min`/`max`, and the
leaves `L['x'].size()[d]`, `L['x'].stride()[d]`, `L['x'].storage_offset()`); anything else makes the
guard unreadable and it is left out. Identical subexpressions are shared: the hundreds of guards of a
windowed model are one pass over a few hundred nodes per assignment of sizes. Strides are those of a
contiguous tensor (the layout the package is compiled for).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from .guardforms import Guard, Leaf, above_one, contiguity_guard, inequality_guard, layout_guard, scaled_above_one

if TYPE_CHECKING:
    from ..core.model import DimRef, Model

MAX_NODES = 100_000      # shared nodes of one program's guards
_DEPTH = 200
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_BIG = 2**63             # past int64: unknown (a guard would never compute it)


class Unreadable(ValueError):
    """A guard outside the whitelist."""


class GuardSet:
    """Guards compiled into one DAG: `nodes[i]` is (op, payload, children), children before parents."""

    def __init__(self) -> None:
        self.nodes: list[tuple[str, object, tuple[int, ...]]] = []
        self._ids: dict[tuple, int] = {}
        self.guards: list[Guard] = []
        self.unreadable: list[str] = []

    def add(self, text: str) -> Guard | None:
        """Parse and add one guard; None (and kept in `unreadable`) when it is outside the whitelist."""
        try:
            tree = ast.parse(text.strip(), mode="eval")
            leaves: set[Leaf] = set()
            root = self._node(above_one(tree.body), leaves, 0)
        except (Unreadable, SyntaxError, ValueError, RecursionError, MemoryError):
            # Nodes added before the failure stay: they are valid, and later guards may share them.
            self.unreadable.append(text)
            return None
        guard = Guard(text, root, frozenset(leaves))
        self.guards.append(guard)
        return guard

    def _intern(self, op: str, payload: object, children: tuple[int, ...]) -> int:
        key = (op, payload, children)
        found = self._ids.get(key)
        if found is None:
            if len(self.nodes) >= MAX_NODES:
                raise Unreadable("too many nodes")
            found = self._ids[key] = len(self.nodes)
            self.nodes.append(key)
        return found

    def _node(self, node: ast.AST, leaves: set[Leaf], depth: int) -> int:
        if depth > _DEPTH:
            raise Unreadable("too deep")
        d = depth + 1
        if isinstance(node, ast.Constant) and isinstance(node.value, int):   # bool is an int
            return self._intern("const", int(node.value), ())
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return self._intern(_BIN[type(node.op)], None, (self._node(node.left, leaves, d),
                                                            self._node(node.right, leaves, d)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not, ast.UAdd)):
            inner = self._node(node.operand, leaves, d)
            return inner if isinstance(node.op, ast.UAdd) else self._intern(
                "neg" if isinstance(node.op, ast.USub) else "not", None, (inner,))
        if isinstance(node, ast.Compare) and all(type(op) in _CMP for op in node.ops):
            terms = [self._node(node.left, leaves, d)] + [self._node(c, leaves, d) for c in node.comparators]
            parts = [self._intern(_CMP[type(op)], None, (terms[i], terms[i + 1])) for i, op in enumerate(node.ops)]
            return parts[0] if len(parts) == 1 else self._intern("and", None, tuple(parts))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, (ast.And, ast.Or)):
            return self._intern("and" if isinstance(node.op, ast.And) else "or", None,
                                tuple(self._node(v, leaves, d) for v in node.values))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max") \
                and node.args and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
            return self._intern(node.func.id, None, tuple(self._node(a, leaves, d) for a in node.args))
        leaf = _leaf(node)
        if leaf is not None:
            leaves.add(leaf)
            return self._intern("leaf", leaf, ())
        raise Unreadable(type(node).__name__)

    def evaluate(self, sizes: Mapping[str, Sequence[int]]) -> list[object]:
        """Every node's value with the inputs' shapes `sizes` (by input name): an int, a bool, or
        None where unknown (a leaf of an unknown input, a division by zero, a huge value)."""
        out: list[object] = []
        for op, payload, kids in self.nodes:
            out.append(_apply(op, payload, [out[k] for k in kids], sizes))
        return out


def _leaf(node: ast.AST) -> Leaf | None:
    """`L['a'].size()[2]`, `L['a'].stride()[1]`, `L['a'].storage_offset()`; `L['kwargs']['a']...` too."""
    dim = None
    if isinstance(node, ast.Subscript):
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            return None
        dim, node = index.value, node.value
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords
            and isinstance(node.func, ast.Attribute)):
        return None
    kind = {"size": "size", "stride": "stride", "storage_offset": "offset"}.get(node.func.attr)
    if kind is None or (dim is None) != (kind == "offset"):
        return None
    name = _source_name(node.func.value)
    if name is None:
        return None
    return Leaf(name, kind, -1 if dim is None else dim)


def _source_name(node: ast.AST) -> str | None:
    """The input name of `L['a']` (the last key of `L['kwargs']['a']`)."""
    name = None
    while isinstance(node, ast.Subscript):
        key = node.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        name = name or key.value
        node = node.value
    return name if isinstance(node, ast.Name) and node.id == "L" else None


def _apply(op: str, payload: object, args: list, sizes: Mapping[str, Sequence[int]]) -> object:
    if op == "const":
        return payload
    if op == "leaf":
        return _leaf_value(payload, sizes)  # type: ignore[arg-type]
    if op == "and":    # False wins over unknown: a guard that is false somewhere fails there
        return False if any(a is False for a in args) else None if any(a is None for a in args) else True
    if op == "or":
        return True if any(a is True for a in args) else None if any(a is None for a in args) else False
    if any(a is None for a in args):
        return None
    if op == "not":
        return not args[0]
    if op == "neg":
        return -args[0]
    if op in ("min", "max"):
        return (min if op == "min" else max)(args)
    a, b = args
    if op in ("//", "%") and b == 0:
        return None
    value = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
             "%": lambda: a % b, "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
             "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[op]()
    return None if not isinstance(value, bool) and abs(value) >= _BIG else value


def _leaf_value(leaf: Leaf, sizes: Mapping[str, Sequence[int]]) -> int | None:
    shape = sizes.get(leaf.input)
    if shape is None:
        return None
    if leaf.kind == "offset":
        return 0
    if not 0 <= leaf.dim < len(shape):
        return None
    if leaf.kind == "size":
        return int(shape[leaf.dim])
    stride = 1
    for size in shape[leaf.dim + 1:]:
        stride *= max(1, int(size))    # a contiguous tensor's stride (size 0 and 1 count as 1)
    return stride


def compile_guards(texts: Sequence[str]) -> GuardSet:
    found = GuardSet()
    for text in texts:
        found.add(text)
    return found


def holds(values: list[object], guard: Guard) -> bool | None:
    """The guard's value in `GuardSet.evaluate`'s output: True, False, or None (unknown)."""
    value = values[guard.root]
    return None if value is None else bool(value)


# -- what the package leaves unchecked --------------------------------------------------------------

WINDOW = 256   # sizes tried above each dim's smallest: guards of sizes (multiples, minimums) break early


@dataclass(frozen=True)
class Broken:
    """A guard that sizes the package accepts (in the compiled and declared range, every size check
    of the package passed, even those AOTI_RUNTIME_CHECK_INPUTS=1 enables) make false: each dim with
    its smallest such size, the other dims at `base` (sizes at which every guard holds)."""

    guard: str
    dims: tuple[tuple["DimRef", int], ...]
    base: tuple[tuple["DimRef", int], ...]
    also: tuple[str, ...] = ()    # other guards these sizes break, and no others


def unchecked(model: "Model") -> list[Broken]:
    """The model's guards that no check of the package enforces, simplest first: listed when it fails
    at a size where the simpler ones before it hold (a windowed model's hundreds restate a few)."""
    search = _Search.of(model)
    if search is None:
        return []
    try:
        return _search(search)
    except _Spent:   # a program of thousands of guards over dozens of dims: no answer rather than a slow one
        return []


def keeping(model: "Model", ref: "DimRef", sizes: Iterable[int]) -> tuple[int, dict] | None:
    """The first of `sizes` for `ref` at which no guard fails that does not fail already at the
    guards' base sizes (the other dims at those sizes), with that base; None without guards over the
    dim or when none keeps them: a witness of another assumption (a multiple) that shows it alone."""
    search = _Search.of(model)
    if search is None or ref not in search.facts.refs:
        return None
    try:
        base = search.base()
        known = set(search.failing(base))
        for size in sizes:
            if set(search.failing({**base, ref: size})) <= known:
                return size, base
    except _Spent:
        return None
    return None


def breaks(model: "Model", choice: Mapping) -> bool:
    """Whether sizes `choice` (the other dims at the guards' base sizes) break a guard of the exported
    program that holds at those base sizes: there the traced graph is not the program eager runs (a
    relative-position table eager would interpolate to the grid), so what eager does is not known."""
    search = _Search.of(model)
    if search is None:
        return False
    try:
        base = search.base()
        return not set(search.failing({**base, **choice})) <= set(search.failing(base))
    except _Spent:
        return False


def flips(model: "Model", guard: str, ref: "DimRef", sizes: range) -> int:
    """How often `guard` flips over `sizes` of `ref`, others at base: 1 for a bound, more for a parity."""
    search = _Search.of(model)
    index = next((k for k, g in enumerate(search.facts.guards) if g.text == guard), -1) if search else -1
    if search is None or index < 0:
        return 0
    try:
        base = search.base()  # once: each call charges what finding it cost
        states = [index in search.failing({**base, ref: n}) for n in sizes]
    except _Spent:
        return 0
    return sum(a != b for a, b in zip(states, states[1:]))


def shapes_around(model: "Model", witness: Mapping, count: int = 64) -> list[dict[str, tuple[int, ...]]]:
    """Input shapes at `witness` (dim -> size, the other dims at the guards' base sizes), then with
    each of its dims moved over the first `count` sizes of its window: where two expressions over
    sizes are compared (`padguard`). Empty without guards or past the search's budget."""
    search = _Search.of(model)
    if search is None:
        return []
    try:
        base = {**search.base(), **witness}
    except _Spent:
        return []
    points = [base] + [{**base, ref: v} for ref in witness for v in search.facts.windows.get(ref, [])[:count]]
    return [search.shapes(p) for p in points]


def base_sizes(model: "Model") -> dict:
    """Sizes at which export's guards hold (as near as `_base` finds), for the dims the guards
    read; empty without guards. Other dims' witnesses sit there, so that what a witness shows is
    its own size's doing (BEiT's patch grid holds only at h // 8 == 4 and w // 8 == 3)."""
    search = _Search.of(model)
    if search is None:
        return {}
    try:
        base = search.base()
    except _Spent:
        return {}
    return base if not search.failing(base) else {}


@dataclass
class _Facts:
    """What the search over one model's guards starts from, and what it found: each assignment's
    failing guards (by its items in order) and `_base`'s sizes (None: past BUDGET) with their cost."""

    found: GuardSet
    names: dict[str, int]
    guards: list[Guard]
    reads: list[frozenset]
    refs: list
    windows: dict
    failing: dict[tuple, list[int]] = field(default_factory=dict)
    base: tuple[dict | None, int] | None = None


@dataclass
class _Kept:
    """A model's `_Facts`, with the key they were computed from (a model changed since, as tests
    change loaded ones, is searched again); on the model, as witness.symbol_dims keeps its own.
    Pickled empty: -j's workers send models back without it."""

    key: tuple | None = None
    facts: _Facts | None = None

    def __reduce__(self) -> tuple:
        return (_Kept, ())

    @staticmethod
    def on(model: "Model") -> "_Kept":
        kept = model.__dict__.get("_guards_kept")
        if not isinstance(kept, _Kept):
            kept = model.__dict__["_guards_kept"] = _Kept()
        return kept


class _Search:
    """One question's search over the model's kept facts, on a budget of its own: a kept answer is
    charged what it cost to find, so the budget cuts off the same search however many came before."""

    def __init__(self, model: "Model", facts: _Facts) -> None:
        self.model, self.facts, self.spent = model, facts, 0

    @classmethod
    def of(cls, model: "Model") -> "_Search | None":
        if not model.guards:
            return None
        kept = _Kept.on(model)
        # What the facts and failing sets are computed from (witness.sizes keys symbols so too).
        key = (tuple(model.guards), repr(model.inputs), repr(model.relations), id(model.symbols), len(model.symbols))
        if kept.key != key:
            kept.key, kept.facts = key, _facts(model)
        return None if kept.facts is None else cls(model, kept.facts)

    def failing(self, assignment: dict) -> list[int]:
        """The guards (by index) false at `assignment`'s sizes, the other dims at witness sizes."""
        facts = self.facts
        self.spent += len(facts.found.nodes)
        if self.spent > BUDGET:
            raise _Spent
        key = tuple(assignment.items())
        if key not in facts.failing:
            values = facts.found.evaluate(self.shapes(assignment))
            facts.failing[key] = [k for k, g in enumerate(facts.guards) if holds(values, g) is False]
        return list(facts.failing[key])

    def shapes(self, assignment: dict) -> dict[str, tuple[int, ...]]:
        """The inputs' shapes (by the guards' names) at `assignment`, the other dims at witness sizes."""
        from . import witness as W
        from ..core.model import DimRef

        full = W.sizes(self.model, assignment)
        return {name: tuple(full.get(DimRef(i, d), 1) for d in range(len(self.model.inputs[i].dims)))
                for name, i in self.facts.names.items()}

    def base(self) -> dict:
        """`_base`'s sizes, found once per model (from a budget of its own); each question is
        charged what finding them cost, and is past its budget where that search was."""
        facts = self.facts
        if facts.base is None:
            fresh = _Search(self.model, facts)
            try:
                facts.base = (_base(facts.reads, facts.refs, facts.windows, fresh.failing), fresh.spent)
            except _Spent:
                facts.base = (None, fresh.spent)
        found, cost = facts.base
        self.spent += cost
        if found is None or self.spent > BUDGET:
            raise _Spent
        return dict(found)


def _facts(model: "Model") -> _Facts | None:
    """The model's guards over dims the search can move (None without one), and each dim's window."""
    from . import relations, sizes as S
    from ..core.model import DimRef, Enforcement

    found = compile_guards(model.guards)
    names = {(inp.user_name or inp.name): inp.index for inp in model.inputs}
    guards = [g for g in found.guards if g.leaves and all(leaf.input in names for leaf in g.leaves)]
    refs = sorted({DimRef(names[leaf.input], d) for g in guards for leaf in g.leaves
                   for d in _dims_of(leaf, model, names)
                   # A dim the package ties to another (`assert_size_stride`, AOTI012's) follows its twin.
                   if (dim := model.dim(DimRef(names[leaf.input], d))) is not None and dim.value is None
                   and not dim.tied_expr})
    if not guards or not refs:
        return None

    def window(ref: DimRef) -> list[int]:
        dim, rel = model.known_dim(ref), relations.relation(model, ref)
        low, high = S.effective_min(dim), S.effective_max(dim)
        top = low + WINDOW if high is None else min(high, low + WINDOW)
        # A size that breaks a multiple is never a guard's witness where the package checks it (with
        # the variable), the export declares it (`8 * Dim`: outside the user's own contract) or the
        # package assumes it (unenforced-divisibility's); a floor of the real size (a patch
        # convolution's `s0 // 4`) assumes nothing, and its guards (`s0 % 4 == 0`) are this search's.
        if rel is None or (rel.enforced == Enforcement.NONE and relations.from_own_size(model, rel)):
            return list(range(low, top + 1))
        return [v for v in range(low, top + 1) if rel.fits(v)]

    reads = [frozenset(DimRef(names[leaf.input], d) for leaf in g.leaves for d in _dims_of(leaf, model, names))
             for g in guards]
    return _Facts(found, names, guards, reads, refs, {ref: window(ref) for ref in refs})


BUDGET = 3_000_000   # node evaluations for one model (a few seconds at most)


class _Spent(Exception):
    pass


def _search(search: _Search) -> list[Broken]:
    """First sizes where every guard holds (`_base`), then each dim's sizes in its window with the
    others at that base."""
    guards, refs, windows, failing = search.facts.guards, search.facts.refs, search.facts.windows, search.failing
    base = search.base()
    broken_at_base = set(failing(base))
    fails: dict[int, list[tuple[DimRef, int]]] = {}
    for ref in refs:
        for v in windows[ref]:
            for k in failing({**base, ref: v}):
                if k not in broken_at_base:
                    fails.setdefault(k, []).append((ref, v))
    out: list[Broken] = []
    covered: set[tuple[DimRef, int]] = set()
    order = sorted((k for k in fails if not layout_guard(guards[k]) and not inequality_guard(guards[k])
                    and not contiguity_guard(guards[k]) and not scaled_above_one(guards[k])),
                   key=lambda k: (len(guards[k].text), k))
    for k in order:
        points = set(fails[k])
        if not points - covered:
            continue
        # Each dim's smallest size that breaks this guard and none listed before it: the witness
        # shows this assumption, not an earlier one again.
        first: dict[DimRef, int] = {}
        for ref, v in fails[k]:
            if (ref, v) not in covered:
                first.setdefault(ref, v)
        same = tuple(guards[j].text for j in order if j != k and set(fails[j]) == points)
        out.append(Broken(guards[k].text, tuple(sorted(first.items())), tuple(sorted(base.items())), same))
        covered |= points
    return out


def _base(reads: list[frozenset], refs: list, windows: dict, failing) -> dict:
    """Sizes where every guard holds, as near as a few rounds find: each dim whose guards fail moved
    in turn to its smallest size with the fewest guards false."""
    base: dict = {}
    for _ in range(min(len(refs), 4) + 2):
        broken = failing(base)
        if not broken:
            break
        involved = frozenset().union(*(reads[k] for k in broken))
        for ref in refs:
            if windows[ref] and ref in involved:
                base[ref] = min(windows[ref], key=lambda v: (len(failing({**base, ref: v})), v))
    return base


def _dims_of(leaf: Leaf, model: "Model", names: Mapping[str, int]) -> range:
    """The dims a leaf reads: a size its own, a stride the later ones (contiguous), an offset none."""
    rank = len(model.inputs[names[leaf.input]].dims)
    if leaf.kind == "size":
        return range(leaf.dim, leaf.dim + 1) if 0 <= leaf.dim < rank else range(0)
    if leaf.kind == "stride":
        return range(leaf.dim + 1, rank) if 0 <= leaf.dim < rank else range(0)
    return range(0)
