"""Facts about kernels' reads from constants (parameters, buffers) of static size.

A load such as BERT's `in_ptr2[x1]` (the 128-entry `position_ids` buffer, `x1` over `[0, s27)`)
has no assertion: its index comes from iteration ranges, not from data. Its largest element index,
over the root size symbols, against the constant's element count (from `constants_info_[i].shape`),
is what `read-past-constant` needs. The value-range engine (`kernels.Values`) gives the index's
inclusive maximum over the kernel's parameters; the launch arguments map those to root symbols.
"""

from __future__ import annotations

import ast
import collections
import functools
import math
import re
from typing import Callable, Iterable

from ..expr import intervals
from ..parse.kernels import KernelFacts, Values
from ..core.findings import Location
from ..core.model import Constant, ConstantRead, DimRef, Model
from .context import LinkContext

_POINTER = re.compile(r"^(in_out_ptr|in_ptr)\d+$")


@functools.lru_cache(maxsize=4096)
def _loads_of(expr: ast.expr) -> tuple[tuple[str, ast.expr], ...]:
    """`_loads(expr)`, once per expression object: the fast path shares one parsed expression
    among all kernels holding the same line (triage.expression); AST nodes hash by identity."""
    return tuple(_loads(expr))


def _loads(expr: ast.expr) -> Iterable[tuple[str, ast.expr]]:
    """(pointer parameter, element index) of each load in an expression: C++ `load(in_ptr2, x1)`
    (subscripts and `loadu(in_ptr2 + i, n)` are normalised to it) and Triton `tl.load(in_ptr2 + (x1), mask)`."""
    for node in _calls(expr):
        if not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name != "load":
            continue
        first = node.args[0]
        if isinstance(first, ast.Name) and _POINTER.match(first.id) and len(node.args) >= 2:
            yield first.id, node.args[1]
        elif isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add):
            for ptr, other in ((first.left, first.right), (first.right, first.left)):
                if isinstance(ptr, ast.Name) and _POINTER.match(ptr.id):
                    yield ptr.id, other
                    break


def _calls(expr: ast.AST) -> list[ast.Call]:
    """The calls under `expr` in `ast.walk`'s order (breadth first), without its generator per
    node and field (this walks every definition of thousands of kernels)."""
    calls = []
    todo = collections.deque([expr])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.Call):
            calls.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, ast.AST))
    return calls


def constant_reads(facts: KernelFacts, values: Values | None, model: Model, indices: list[int],
                   param_map: Callable[[KernelFacts, int], dict[str, str]],
                   sources: Callable[[str], tuple[DimRef, ...]],
                   constants: dict[str, Constant] | None = None) -> list[ConstantRead]:
    """Reads of `facts`' kernel from static-size constants whose index depends on input sizes.

    `indices`: the kernel's launches in `model.launches`; `param_map(facts, i)`: a launch's
    size-parameter map (parameter -> expression over root symbols); `sources(expr)`: the input dims an expression reads. One record per (pointer,
    index) and each (constant, maximum) its launches give it; located by `facts.locate`. `values`: the
    kernel's value ranges, made here (only for a kernel given a constant) when None."""
    locate = facts.locate or (lambda _: facts.location)
    if constants is None:
        constants = {c.name: c for c in model.constants}
    params = facts.params
    # Pointer parameters some launch passes a constant with a shape: only their loads can read
    # past one (the others' ranges are not computed; most kernels load constants and buffers).
    shaped = {slot for i in indices for slot, arg in enumerate(model.launches[i].args[:len(params)])
              if _shaped(constants, arg)}
    given = {ptr for ptr in params if _POINTER.match(ptr) and params.index(ptr) in shaped}
    if not given:
        return []
    values = values if values is not None else Values(facts)
    launches = [(model.launches[i], param_map(facts, i)) for i in indices]
    out: list[ConstantRead] = []
    seen: set[tuple[str, str]] = set()
    for defs in facts.defs.values():
        for pos, expr in defs:
            for ptr, index in _loads_of(expr):
                if ptr not in given:
                    continue
                # The same index text in another loop ranges over that loop's extent: keyed on the
                # maximum it reaches, not on its text, so a second read is kept when it reaches further.
                upper = values.upper(index, pos)
                if upper is None:
                    continue
                key = (ptr, upper)
                if key in seen:
                    continue
                seen.add(key)
                out.extend(_launch_reads(facts.name, ptr, params.index(ptr), upper, launches, constants,
                                         sources, functools.partial(locate, pos)))
    return out


def _launch_reads(kernel: str, ptr: str, slot: int, upper: str, launches: list, constants: dict[str, Constant],
                  sources: Callable[[str], tuple[DimRef, ...]], location: Callable[[], Location]) -> list[ConstantRead]:
    """The reads of pointer `ptr` at an index reaching `upper`: one per launch that passes it another
    constant or sizes (a kernel launched for an encoder's position table and for a decoder's)."""
    out: list[ConstantRead] = []
    read: set[tuple[str, str]] = set()
    for launch, mapping in launches:
        const = constants.get(launch.args[slot]) if slot < len(launch.args) else None
        if const is None or not const.shape:
            continue
        try:
            index_max = intervals.simplify(intervals.substitute(upper, mapping))
        except ValueError:
            continue
        refs = sources(index_max)
        if not refs:
            break  # a static index: bounded at compile time
        if (const.name, index_max) not in read:
            read.add((const.name, index_max))
            out.append(ConstantRead(kernel=kernel, pointer=ptr, constant=const.name, numel=math.prod(const.shape),
                                    shape=tuple(const.shape), fqn=const.original_fqn, index_max=index_max,
                                    sources=refs, location=location()))
    return out


def _shaped(constants: dict, arg: str) -> bool:
    const = constants.get(arg)
    return const is not None and bool(const.shape)


def annotate(ctx: LinkContext) -> None:
    """After linking: every kernel's constant reads (`model.constant_reads`), and the shapes of extern
    calls' arguments and the size checks (`shapes.annotate`), derived-dim relations (`derive.derive`)."""
    from . import derive, shapes

    model = ctx.model
    shapes.annotate(model, ctx.wrapper, ctx.canonical, ctx.resolve)
    derive.derive(model)   # reads the size checks and the exported program's expressions
    launches: dict[str, list[int]] = {}
    for i, launch in enumerate(model.launches):
        if not launch.extern:
            launches.setdefault(launch.kernel, []).append(i)
    constants = {c.name: c for c in model.constants}  # once: a 48-layer model has hundreds
    for name, facts in ctx.kfacts.items():
        if name in launches:
            model.constant_reads += constant_reads(facts, None, model, launches[name], ctx.param_map, ctx.sources,
                                                   constants)
    model.constant_reads += view_reads(model, ctx.wrapper.int_arrays, constants, ctx.resolve, ctx.sources)


# `reinterpret_tensor_wrapper(name, ndim, int_array_A, int_array_B, offset)` passed to an extern call.
_VIEW = re.compile(r"^\s*reinterpret_tensor_wrapper\(\s*(\w+)\s*,\s*\d+\s*,\s*(int_array_\d+)\s*,\s*"
                   r"(int_array_\d+)\s*,\s*(.+)\)\s*$")


def view_reads(model: Model, int_arrays: dict[str, tuple[str, ...]], constants: dict[str, Constant],
               resolve: Callable[[str], str], sources: Callable[[str], tuple[DimRef, ...]]) -> list[ConstantRead]:
    """Views of constants the wrapper passes to extern calls whose last element moves with an input
    size: Wav2Vec2-Conformer's relative positions, `reinterpret_tensor_wrapper(pe, 2, {2*(s27 // 20) - 3,
    32}, {32, 1}, 2080 - 32*(s27 // 20))` into `aoti_torch_cpu_mm_out`, reach element `offset + sum((size
    - 1) * stride)` of the 127 x 32 buffer, past its end once `s27 // 20` passes 65. ATen reads the
    view as given: no check."""
    out: list[ConstantRead] = []
    for launch in model.launches:
        if not launch.extern:
            continue
        for slot, arg in enumerate(launch.args):
            found = _VIEW.match(arg)
            const = constants.get(found.group(1)) if found else None
            if found is None or const is None or not const.shape:
                continue
            sizes, strides = int_arrays.get(found.group(2)), int_arrays.get(found.group(3))
            if sizes is None or strides is None or len(sizes) != len(strides):
                continue
            terms = [f"({found.group(4)})"] + [f"(({size}) - 1) * ({stride})" for size, stride in zip(sizes, strides)]
            try:
                last = intervals.simplify(resolve(" + ".join(terms)))
            except ValueError:
                continue
            refs = sources(last)
            if refs:
                out.append(ConstantRead(kernel=launch.kernel, pointer=f"argument {slot}", constant=const.name,
                                        numel=math.prod(const.shape), shape=tuple(const.shape), fqn=const.original_fqn,
                                        index_max=last, sources=refs, location=launch.location, view=True))
    return out
