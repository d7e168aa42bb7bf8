"""Linking: parser facts -> the linked `Model`.

assertion -> kernel parameter of its bound (by position: `ksM` numbering is per kernel) -> launch
argument -> size expression over symbols -> input index and dim (or a constant). Index sources
follow `in_ptrK` to the launch argument and through intermediate buffers to the kernels or extern
calls that produced them. Everything is done with dictionaries built once; nothing rescans text.
Each launch of a kernel is linked on its own (a kernel reused for other sizes checks other dims).

Long module: the linker is one pass over the dictionaries it builds (symbols, producers, parameter maps per
launch); split, each part would take them all as arguments."""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict

from . import buffers, input_layout, reads, storebounds
from ..expr import intervals
from ..core.budget import poll
from ..core.findings import Location
from ..parse.kernels import KernelFacts, index_node
from ..core.model import Assertion, Constant, Dim, DimRef, Division, Enforcement, Input, Kernel, Launch, Model, Problem, ProblemKind, Reduction, Symbol
from ..core.dimtext import range_text
from ..core.messages import CHAIN
from ..expr.values import POINTER_PARAM, Values, divisor_texts
from ..parse.wrapper import WrapperFacts

_UNBACKED, _POINTERS = re.compile(r"^u\d+$"), ("in_ptr", "out_ptr", "in_out_ptr")


def link_model(name: str, metadata: dict, wrapper: WrapperFacts | None, kernels: list[KernelFacts], *,
               kernel_paths: tuple[str, ...] = (), binaries: tuple[str, ...] = (), cpp_only: bool = False,
               problems: list[Problem], annotate=None) -> Model:
    """`annotate(model)` runs once the inputs exist and before anything refers to them by name
    (user input names and declared ranges from an exported program)."""
    model = Model(name=name, metadata=dict(metadata), kernel_paths=kernel_paths, binaries=binaries,
                  cpp_only=cpp_only, problems=list(problems))
    model.device = (metadata.get("AOTI_DEVICE_KEY") or None) if isinstance(metadata, dict) else None
    if wrapper is None:
        return model
    model.wrapper_path = wrapper.path
    model.in_spec = wrapper.in_spec
    model.checks_gated = wrapper.checks_gated if wrapper.checks else None
    if model.device is None:
        model.device = "cuda" if wrapper.helpers else ("cpu" if kernels else None)
    if not wrapper.run_impl_found:
        model.problems.append(Problem("no run_impl function found in the wrapper: launches and size symbols "
                                      "cannot be linked", Location(wrapper.path)))
    if wrapper.errors_in_model_code:
        model.problems.append(Problem(f"{wrapper.errors_in_model_code} syntax error(s) inside run_impl; "
                                      "facts after them may be missing", wrapper.error_location))
    linker = _Linker(model, wrapper, kernels, annotate)
    linker.run()
    return model


class _Linker:
    def __init__(self, model: Model, wrapper: WrapperFacts, kernels: list[KernelFacts], annotate=None) -> None:
        self.model = model
        self.annotate = annotate
        self.w = wrapper
        self.kfacts: dict[str, KernelFacts] = {}
        for k in kernels:
            self.kfacts.setdefault(k.name, k)
        self.input_by_name: dict[str, int] = {}
        self.constant_names: set[str] = set()
        self.sym_expr: dict[str, str] = {}       # symbol -> expression over root symbols
        self.root: dict[str, DimRef] = {}        # root symbol -> input dim
        self.producers: dict[str, list[int]] = defaultdict(list)  # canonical buffer -> launch indices
        self.launch_inputs: list[set[str]] = []
        self._resolved: dict[str, str] = {}
        self._param_maps: dict[tuple[str, int], dict[str, str]] = {}

    # -- inputs, constants, symbols -----------------------------------------------------------
    def run(self) -> None:
        self._inputs()
        if self.annotate is not None:
            self.annotate(self.model)
        self._symbols()  # then each input's strides, over the root symbols (input_layout)
        input_layout.annotate(self.model, self.w, self._resolve)
        self._ties()
        self._launches()
        self.buffers = buffers.BufferRanges(self.model, self.w, self.kfacts, self.producers, self._canonical,
                                            self._resolve, self._param_map)
        self._unbacked_sources()
        self._kernels()
        reads.annotate(self.model, self.w, self.kfacts, self._param_map, self._sources, self._canonical, self._resolve)
        storebounds.annotate(self.model, self.w, self.kfacts, self._param_map, self._canonical, self._resolve)
        # The ranges hold this linker's methods: a cycle that would keep every kernel's facts alive
        # until the cyclic collector runs (and make it traverse them all).
        del self.buffers

    def _inputs(self) -> None:
        w, model = self.w, self.model
        gated = w.checks_gated
        for index in sorted(w.inputs):
            name = w.inputs[index]
            self.input_by_name[name] = index
            check = w.checks.get(index)
            dims: dict[int, Dim] = {}
            if check:
                for d, dc in check.dims.items():
                    dims[d] = Dim(dim=d, value=dc.value, min=dc.min, max=dc.max, check_location=dc.location)
            for decl in w.symbols:
                if decl.buffer == name and decl.kind == "size" and decl.dim is not None:
                    dim = dims.setdefault(decl.dim, Dim(dim=decl.dim))
                    if dim.symbol is None:
                        dim.symbol = decl.name
            # A dim equal to another's has no `int64_t`: assert_size_stride(argN_1, {s17, 8L}, ...) names its symbol.
            for sa in w.size_asserts:
                if sa.tensor != name:
                    continue
                for d, size in enumerate(sa.sizes):
                    hit = dims.get(d)
                    if hit is not None and hit.symbol is None and hit.value is None and re.match(r"^[a-z]+\d+$", size):
                        hit.symbol = size
            ndims = max(dims) + 1 if dims else 0
            dim_list = [dims.get(i, Dim(dim=i)) for i in range(ndims)]
            enforced = Enforcement.NONE
            if check is not None and (not w.checks_called or index in w.checks_called):
                enforced = Enforcement.ENV if gated else Enforcement.ALWAYS
            for dim in dim_list:
                if dim.value is not None or dim.min is not None or dim.max is not None:
                    dim.enforced = enforced
            model.inputs.append(Input(index=index, name=name, dims=dim_list,
                                      dtype=check.dtype if check else None, device=check.device if check else None,
                                      rank_known=check is not None or any(sa.tensor == name for sa in w.size_asserts)))
        for index in sorted(w.constants):
            entry = w.constants[index]
            cname = entry.get("name") or f"constant{index}"
            self.constant_names.add(cname)
            model.constants.append(Constant(index=index, name=cname, shape=entry.get("shape"),
                                            original_fqn=entry.get("original_fqn")))

    def _symbols(self) -> None:
        for decl in self.w.symbols:
            if decl.kind in ("size", "stride") and decl.buffer is not None:
                index = self.input_by_name.get(decl.buffer)
                source = DimRef(index, decl.dim) if index is not None and decl.dim is not None \
                    and decl.kind == "size" else None
                self.model.symbols[decl.name] = Symbol(decl.name, decl.name, source, decl.location,
                                                       is_stride=decl.kind == "stride")
                self.sym_expr[decl.name] = decl.name
                if source is not None:
                    self.root.setdefault(decl.name, source)
                continue
            try:
                expr = intervals.substitute(decl.expr, self.sym_expr)
            except ValueError:
                expr = decl.expr
            unbacked = bool(_UNBACKED.match(decl.name)) and not (intervals_names(expr) & set(self.root))
            low, high = self.w.symbol_bounds.get(decl.name, (None, None))
            self.model.symbols[decl.name] = Symbol(decl.name, expr, None, decl.location, unbacked=unbacked,
                                                   min=low, max=high)
            self.sym_expr[decl.name] = decl.name if unbacked else expr
            self._wrapper_division(decl.name, decl.expr, decl.location)

    def _wrapper_division(self, name: str, expr: str, location: Location) -> None:
        # Integer `/` or `%` by a size symbol in the wrapper traps (SIGFPE) when that size is 0.
        for text in divisor_texts(expr):
            resolved = self._resolve(text)
            sources = self._sources(resolved)
            if sources:
                self.model.divisions.append(Division(kernel=f"run_impl ({name})", divisor=text, divisor_expr=resolved,
                                                     sources=sources, location=location, integer=True,
                                                     in_wrapper=True))

    def _resolve(self, expr: str) -> str:
        cached = self._resolved.get(expr)
        if cached is None:
            try:
                cached = intervals.substitute(expr, self.sym_expr)
            except ValueError:
                cached = expr
            self._resolved[expr] = cached
        return cached

    def _sources(self, expr: str | None) -> tuple[DimRef, ...]:
        if not expr:
            return ()
        try:
            found = intervals_names(expr)
        except ValueError:
            return ()
        return tuple(sorted({self.root[n] for n in found if n in self.root}))

    def _ties(self) -> None:
        """Dims that must equal another dim (or an expression of one) and that the package never
        reads itself: `assert_size_stride(arg6_1, {s17, 8L}, ...)` where s17 is read from arg5_1."""
        for sa in self.w.size_asserts:
            index = self.input_by_name.get(sa.tensor)
            if index is None:
                continue
            inp = self.model.inputs[index]
            for d, size in enumerate(sa.sizes):
                if d >= len(inp.dims) or inp.dims[d].value is not None or re.fullmatch(r"-?\d+", size):
                    continue
                resolved = self._resolve(size)
                try:
                    names = intervals_names(resolved)
                except ValueError:
                    continue
                own = DimRef(index, d)
                if names and all(self.root.get(n) == own for n in names):
                    continue  # the dim's own size symbol: nothing tied
                dim = inp.dims[d]
                dim.tied_expr = resolved
                dim.tie_enforced = Enforcement.ENV if sa.gated else Enforcement.ALWAYS
                dim.tie_location = sa.location

    def _unbacked_sources(self) -> None:
        """Unbacked symbols read from tensors: follow `u0 = u0_raw` to the shim that wrote `u0_raw`
        (`aoti_torch_item_int64(arg2_1, &u0_raw)`) and on to the inputs whose values it read."""
        end = len(self.model.launches)
        for sym in self.model.symbols.values():
            if not sym.unbacked:
                continue
            try:
                names = intervals_names(sym.expr) | {sym.name}
            except ValueError:
                continue
            found: set[int] = set()
            for name in names:
                found |= self._buffer_inputs(name, end)
            sym.value_inputs = tuple(sorted(found))

    def _value_inputs(self, expr: str | None) -> tuple[int, ...]:
        if not expr:
            return ()
        try:
            names = intervals_names(expr)
        except ValueError:
            return ()
        found: set[int] = set()
        for name in names:
            sym = self.model.symbols.get(name)
            if sym is not None and sym.unbacked:
                found |= set(sym.value_inputs)
        return tuple(sorted(found))

    # -- launches and buffers -----------------------------------------------------------------
    def _canonical(self, buf: str) -> str:
        seen = set()
        while buf in self.w.aliases and buf not in seen:
            seen.add(buf)
            buf = self.w.aliases[buf]
        return buf

    def _launches(self) -> None:
        helpers = self.w.helpers
        for call in self.w.calls:
            poll("linking kernel launches")
            fn = call.function
            kernel = None
            params: tuple[str, ...] = ()
            if fn in helpers:
                kernel = fn[len("call_"):]
                params = helpers[fn].params
            elif fn in self.kfacts:
                kernel = fn
                params = self.kfacts[fn].params
            elif fn.startswith(("cpp_fused_", "cpp_kernel_", "triton_")):
                kernel = fn  # a generated kernel whose source is missing: still a launch
            if kernel is not None:
                launch = Launch(kernel=kernel, args=call.args, location=call.location, comment=call.comment)
                outputs, inputs = [], set()
                for i, param in enumerate(params):  # only pointers name buffers (resolved alone)
                    arg_name = call.arg_names[i] if i < len(call.arg_names) else None
                    if not param.startswith(_POINTERS) or arg_name is None:
                        continue
                    buf = self._canonical(arg_name)
                    if param.startswith("out_ptr") or param.startswith("in_out_ptr"):
                        outputs.append(buf)
                    if param.startswith("in_ptr") or param.startswith("in_out_ptr"):
                        inputs.add(buf)
                launch.outputs = tuple(outputs)
            else:
                if "empty_strided" in fn:
                    continue
                outputs = [self._canonical(o) for o in call.outputs]
                inputs = {self._canonical(n) for n in call.arg_names if n and n not in call.outputs}
                if not outputs and call.checked:
                    continue
                launch = Launch(kernel=fn, args=call.args, location=call.location, comment=call.comment,
                                extern=True, outputs=tuple(outputs), error_checked=call.checked)
            index = len(self.model.launches)
            self.model.launches.append(launch)
            self.launch_inputs.append(inputs)
            for out in launch.outputs:
                self.producers[out].append(index)

    def _buffer_inputs(self, buf: str, before: int, depth: int = 0, seen: set | None = None) -> set[int]:
        """Model inputs whose values flow into buffer `buf` as read by launch `before`."""
        seen = set() if seen is None else seen
        buf = self._canonical(buf)
        if buf in self.input_by_name:
            return {self.input_by_name[buf]}
        if buf in self.constant_names or depth > 50 or (buf, before) in seen:
            return set()
        seen.add((buf, before))
        writers = [i for i in self.producers.get(buf, []) if i < before]
        if not writers:
            return set()
        producer = writers[-1]
        out: set[int] = set()
        for src in self.launch_inputs[producer]:
            if src != buf or writers[:-1]:
                out |= self._buffer_inputs(src, producer, depth + 1, seen)
        return out

    # -- kernels ------------------------------------------------------------------------------
    def _kernels(self) -> None:
        model = self.model
        launches_by_kernel: dict[str, list[int]] = defaultdict(list)
        for i, launch in enumerate(model.launches):
            if not launch.extern:
                launches_by_kernel[launch.kernel].append(i)
        for helper in self.w.helpers.values():
            kname = helper.name[len("call_"):]
            if helper.triton_source is None:
                model.kernels[kname] = Kernel(kname, "triton", helper.params, location=helper.location,
                                              has_source=False)
                model.problems.append(Problem(
                    f"kernel {kname} has no embedded Triton source"
                    + (f" ({helper.source_problem})" if helper.source_problem else "")
                    + ": its assertions cannot be checked", helper.location, kind=ProblemKind.NO_SOURCE))
        for kname, facts in self.kfacts.items():
            model.kernels[kname] = Kernel(kname, facts.kind, facts.params, dict(facts.param_types),
                                          facts.location, has_source=True)
            if facts.problem:
                model.problems.append(Problem(f"{kname}: {facts.problem}", facts.location, kind=ProblemKind.PARSE))
            model.kernel_messages.extend((kname, message, loc) for message, loc in facts.messages)
            indices = launches_by_kernel.get(kname, [])
            values = Values(facts)
            for raw in facts.assertions:
                poll(f"linking the assertions of {kname}")
                model.assertions.extend(self._assertions(facts, values, raw, indices))
            # Every launch that gives the divisor (the reduced extent) other sizes, once each.
            for div in facts.divisions:
                for expr, sources, space in self._over_launches(facts, div.divisor_expr, indices, div.space):
                    model.divisions.append(Division(kname, div.divisor, expr, sources, div.location,
                                                    integer=div.integer, space_expr=space))
            for red in facts.reductions:
                for expr, sources, space in self._over_launches(facts, red.extent_expr, indices, red.space):
                    model.reductions.append(Reduction(kname, red.op, expr, sources, red.location, space))
        for kname in launches_by_kernel:
            if kname not in model.kernels:
                launch = model.launches[launches_by_kernel[kname][0]]
                model.kernels[kname] = Kernel(kname, "cpp" if model.device == "cpu" else "triton",
                                              location=launch.location, has_source=False)
                model.problems.append(Problem(f"kernel {kname} is launched but its source is not in the package",
                                              launch.location, kind=ProblemKind.NO_SOURCE))

    def _param_map(self, facts: KernelFacts, launch_index: int) -> dict[str, str]:
        """Kernel parameter -> launch argument expression over root symbols (by position)."""
        key = (facts.name, launch_index)
        if key in self._param_maps:
            return self._param_maps[key]
        launch = self.model.launches[launch_index]
        # `ksM` numbering is per kernel, so launch arguments are matched to the kernel's own
        # parameters by position, never by name (call_triton_* forwards them in the same order).
        params = facts.params
        mapping = {}
        for i, param in enumerate(params):
            if i < len(launch.args) and not POINTER_PARAM.match(param):
                mapping[param] = self._resolve(launch.args[i])
        self._param_maps[key] = mapping
        return mapping

    def _over_launches(self, facts: KernelFacts, expr: str | None, indices: list[int], space: str | None = None):
        """`expr` (and `space`) at each launch whose arguments make it read input dims, once per
        distinct result."""
        seen: set[tuple] = set()
        for li in indices if expr is not None else ():
            try:  # `space` is from the same kernel's params: it substitutes when `expr` does
                resolved, space_expr = (intervals.substitute(e, self._param_map(facts, li)) if e else None
                                        for e in (expr, space))
            except ValueError:
                continue
            sources = self._sources(resolved)
            if sources and (resolved, space_expr) not in seen:
                seen.add((resolved, space_expr))
                yield resolved, sources, space_expr

    def _assertions(self, facts: KernelFacts, values: Values, raw, indices: list[int]) -> list[Assertion]:
        """The assertion as linked at each launch of its kernel: a kernel reused for other sizes (one
        position table for an encoder's and a decoder's lengths) checks other dims at each call site.
        Launches that link it alike (the same bound, index sources and extent: a layer's kernel
        reused by every layer) give one assertion, at the first of them."""
        def unlinked(reason: str) -> list[Assertion]:
            a = Assertion(kernel=facts.name, message=raw.message, location=raw.location, index_var=raw.index_var,
                          lower=raw.lower, bound=raw.bound, parallel=raw.parallel, linked=False,
                          unlinked_reason=reason)
            return [a]

        if raw.index_var is None or raw.bound_py is None:
            return unlinked("the assertion message is not of the form `index out of bounds: [L <=] var < bound`")
        if not indices:
            return unlinked(f"{facts.name} is never launched from run_impl")
        index = index_node(raw.index_var)
        if index is None:
            return unlinked(f"the index `{raw.index_var}` of the assertion message is not an expression")
        ptrs, _ = values.sources(index, raw.line)
        upper = (values.data_upper if ptrs else values.upper)(index, raw.line)
        out: list[Assertion] = []
        firsts: list[int] = []
        seen: set[tuple] = set()
        for li in indices:
            a = self._assertion_at(facts, raw, index, ptrs, upper, li, seen)
            if a is not None:
                out.append(a)
                firsts.append(li)
        if not out:
            return unlinked("the bound could not be mapped to a launch argument")
        if len(out) > 1:  # say which call site each one is linked through
            for a, li in zip(out, firsts):
                launch = self.model.launches[li]
                where = f"{launch.location.path.rsplit('/', 1)[-1]}:{launch.location.line}"
                a.chain = a.chain[:1] + (CHAIN["launch"].format(launch=where, count=len(out), kernel=facts.name),) \
                    + a.chain[1:]
        return out

    def _assertion_at(self, facts: KernelFacts, raw, index, ptrs, upper, li: int, seen: set[tuple]) -> Assertion | None:
        """The assertion linked through launch `li`; None when its bound does not map there or an
        earlier launch in `seen` linked it alike (its chain is then never built)."""
        mapping = self._param_map(facts, li)
        try:
            bound_expr = intervals.substitute(raw.bound_py, mapping)
        except ValueError:
            return None
        a = Assertion(kernel=facts.name, message=raw.message, location=raw.location, index_var=raw.index_var,
                      lower=raw.lower, bound=raw.bound, parallel=raw.parallel)
        launch = self.model.launches[li]
        index_inputs: set[int] = set()
        via: str | None = None
        for pos in (i for i, p in enumerate(facts.params) if p in ptrs):  # in parameter order, not set order
            if pos < len(launch.args):
                index_inputs |= self._buffer_inputs(launch.args[pos], li)
                if via is None:
                    via = self._via(launch.args[pos], li)
        a.bound_expr, a.bound_sources = bound_expr, self._sources(bound_expr)
        with contextlib.suppress(ValueError):  # the check's own iteration space, at the same launch
            a.space_expr = intervals.substitute(raw.space, mapping) if raw.space else None
        a.index_sources = tuple(sorted(index_inputs))
        # An index loaded from buffers of known value range (buffers.py) still has an extent.
        found = upper if not ptrs else self.buffers.index_upper(facts, index, raw.line, li) or upper
        if found is not None:
            try:
                a.index_extent = intervals.simplify(f"({intervals.substitute(found, mapping)}) + 1")
                a.index_extent_sources = self._sources(a.index_extent)
                a.index_extent_value_inputs = self._value_inputs(a.index_extent)
            except ValueError:
                a.index_extent = None
        try:
            lo, hi = intervals.evaluate_interval(a.bound_expr, {})
            if lo == hi:
                a.bound_value = int(lo)
        except ValueError:
            if not a.bound_sources:
                a.linked = False
                a.unlinked_reason = f"the bound {a.bound} resolves to {a.bound_expr}, which is not over input sizes"
        ident = (a.bound_expr, a.index_sources, a.index_extent, a.space_expr)
        if ident in seen:
            return None
        seen.add(ident)
        a.chain = self._chain(facts, raw, a, (li, mapping))
        steps = self.buffers.steps(facts, li, ptrs) if a.index_extent and ptrs else ()
        if steps:
            a.index_ops = self.buffers.ops(facts, li, ptrs)
        if steps or via:  # an index loaded from buffers of known range: what they hold, else who wrote it
            a.chain = a.chain[:1] + (steps or ((via,) if via else ())) + a.chain[1:]
        return a

    def _via(self, buf: str, before: int) -> str | None:
        """`loaded from buf1, written by aoti_torch_cpu_cumsum at w.cpp:930` (an index via a buffer)."""
        canonical = self._canonical(buf)
        if canonical in self.input_by_name or canonical in self.constant_names:
            return None
        writers = [i for i in self.producers.get(canonical, []) if i < before]
        if not writers:
            return None
        launch = self.model.launches[writers[-1]]
        where = f"{launch.location.path.rsplit('/', 1)[-1]}:{launch.location.line}"
        return CHAIN["via"].format(buffer=buf, kernel=launch.kernel, where=where)

    def _chain(self, facts: KernelFacts, raw, a: Assertion, chain_launch) -> tuple[str, ...]:
        model = self.model
        lines = []
        if a.index_sources:
            who = ", ".join(model.input_text(i) for i in a.index_sources if i < len(model.inputs))
            lines.append(CHAIN["values"].format(who=who, var=raw.index_var, kernel=facts.name))
        elif a.index_extent:
            lines.append(CHAIN["index-extent"].format(var=raw.index_var, kernel=facts.name, extent=a.index_extent))
        else:
            lines.append(CHAIN["index"].format(var=raw.index_var, kernel=facts.name))
        if chain_launch is not None:
            li, mapping = chain_launch
            launch = model.launches[li]
            params = facts.params
            used = intervals_names(raw.bound_py or "")
            # In parameter order (a set's order would change from run to run).
            bound_params = [p for p in params if p in used and p in mapping]
            for p in bound_params:
                pos = params.index(p)
                arg = launch.args[pos] if pos < len(launch.args) else "?"
                where = f"{launch.location.path.rsplit('/', 1)[-1]}:{launch.location.line}"
                lines.append(CHAIN["bound-argument"].format(bound=a.bound, param=p, position=pos, launch=where,
                                                            arg=arg))
            if not bound_params:
                lines.append(CHAIN["bound-constant"].format(bound=a.bound))
            elif a.bound_expr and a.bound_expr not in self.root and a.bound_expr != a.bound:
                lines.append(CHAIN["bound-expr"].format(bound_expr=a.bound_expr))
        for i in a.index_extent_value_inputs:
            if i < len(model.inputs):
                unbacked = sorted(n for n in intervals_names(a.index_extent or "")
                                  if n in model.symbols and model.symbols[n].unbacked)
                lines.append(CHAIN["unbacked"].format(symbols=", ".join(unbacked) or "the extent",
                                                      input=model.input_text(i)))
        for ref in a.bound_sources + tuple(r for r in a.index_extent_sources if r not in a.bound_sources):
            dim = model.dim(ref)
            symbol = dim.symbol if dim else None
            lines.append(CHAIN["range"].format(symbol=symbol or "?", dim=model.describe(ref), range=range_text(dim)))
        return tuple(lines)


def intervals_names(expr: str) -> frozenset[str]:
    return intervals.names(expr) if expr else frozenset()
