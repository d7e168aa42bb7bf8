"""What the linking passes share: the model being built, the parser facts, and the dictionaries
built once from them (symbols over root symbols, buffer producers, parameter maps per launch).

Each pass (inputs.py, symbols.py, launches.py, kernels.py, assertions.py, and the annotators
buffers.py, reads.py, storebounds.py) takes the one `LinkContext` and asks it; none rescans text.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..core.findings import Location
from ..core.messages import CHAIN, Text
from ..core.model import DimRef, Model
from ..expr import intervals
from ..expr.syntax import POINTER_PARAM
from ..parse.kernels import KernelFacts
from ..parse.wrapper import WrapperFacts


def intervals_names(expr: str) -> frozenset[str]:
    return intervals.names(expr) if expr else frozenset()


def where(location: Location) -> str:
    """`w.cpp:930`: a launch's place in a chain line (the file's name, not its folder)."""
    return f"{location.path.rsplit('/', 1)[-1]}:{location.line}"


@dataclass(eq=False)
class LinkContext:
    model: Model
    wrapper: WrapperFacts
    kfacts: dict[str, KernelFacts]
    input_by_name: dict[str, int] = field(default_factory=dict)
    constant_names: set[str] = field(default_factory=set)
    sym_expr: dict[str, str] = field(default_factory=dict)      # symbol -> expression over root symbols
    root: dict[str, DimRef] = field(default_factory=dict)       # root symbol -> input dim
    producers: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))  # canonical buffer -> launches
    launch_inputs: list[set[str]] = field(default_factory=list)  # per launch: the canonical buffers it reads
    resolved: dict[str, str] = field(default_factory=dict)
    expr_sources: dict[str, tuple[DimRef, ...]] = field(default_factory=dict)   # for `root` of size:
    sources_root: int = 0
    param_maps: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)
    # Equal parameter maps are one dict (nothing changes one): most launches pass the same sizes.
    distinct_maps: dict[tuple[tuple[str, str], ...], dict[str, str]] = field(default_factory=dict)
    chain_lines: dict[tuple, Text] = field(default_factory=dict)
    range_lines: dict[DimRef, Text] = field(default_factory=dict)   # a dim's `range` chain line

    @classmethod
    def of(cls, model: Model, wrapper: WrapperFacts, kernels: list[KernelFacts]) -> LinkContext:
        kfacts: dict[str, KernelFacts] = {}
        for k in kernels:
            kfacts.setdefault(k.name, k)
        return cls(model, wrapper, kfacts)

    def chain_line(self, key: str, **fields: object) -> Text:
        """`CHAIN[key]` filled, one object per distinct line: a check fused into thousands of kernels
        says its bound's and its dims' lines word for word (a fifth of a 50 MB package's peak memory
        when each kept its own)."""
        ident = (key, *fields.items())
        line = self.chain_lines.get(ident)
        if line is None:
            line = self.chain_lines[ident] = CHAIN[key].format(**fields)
        return line

    def resolve(self, expr: str) -> str:
        """`expr` over root symbols (unchanged where it does not substitute)."""
        cached = self.resolved.get(expr)
        if cached is None:
            try:
                cached = intervals.substitute(expr, self.sym_expr)
            except ValueError:
                cached = expr
            self.resolved[expr] = cached
        return cached

    def sources(self, expr: str | None) -> tuple[DimRef, ...]:
        """The input dims an expression over root symbols reads: one tuple per expression (the
        records of every kernel that checks or reads by it hold it)."""
        if not expr:
            return ()
        if len(self.root) != self.sources_root:  # root symbols are still being declared
            self.expr_sources.clear()
            self.sources_root = len(self.root)
        cached = self.expr_sources.get(expr)
        if cached is None:
            try:
                found = intervals_names(expr)
            except ValueError:
                found = frozenset()
            cached = self.expr_sources[expr] = tuple(sorted({self.root[n] for n in found if n in self.root}))
        return cached

    def value_inputs(self, expr: str | None) -> tuple[int, ...]:
        """The inputs whose values (through unbacked symbols) an expression reads."""
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

    def canonical(self, buf: str) -> str:
        seen = set()
        while buf in self.wrapper.aliases and buf not in seen:
            seen.add(buf)
            buf = self.wrapper.aliases[buf]
        return buf

    def param_map(self, facts: KernelFacts, launch_index: int) -> dict[str, str]:
        """Kernel parameter -> launch argument expression over root symbols (by position)."""
        key = (facts.name, launch_index)
        if key in self.param_maps:
            return self.param_maps[key]
        launch = self.model.launches[launch_index]
        # `ksM` numbering is per kernel, so launch arguments are matched to the kernel's own
        # parameters by position, never by name (call_triton_* forwards them in the same order).
        params = facts.params
        mapping = {}
        for i, param in enumerate(params):
            if i < len(launch.args) and not POINTER_PARAM.match(param):
                mapping[param] = self.resolve(launch.args[i])
        mapping = self.param_maps[key] = self.distinct_maps.setdefault(tuple(mapping.items()), mapping)
        return mapping

    def buffer_inputs(self, buf: str, before: int, depth: int = 0, seen: set | None = None) -> set[int]:
        """Model inputs whose values flow into buffer `buf` as read by launch `before`."""
        seen = set() if seen is None else seen
        buf = self.canonical(buf)
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
                out |= self.buffer_inputs(src, producer, depth + 1, seen)
        return out

    def writer(self, buf: str, before: int) -> int | None:
        """The launch that last wrote buffer `buf` before launch `before`; None for an input, a
        constant or a buffer nothing wrote."""
        canonical = self.canonical(buf)
        if canonical in self.input_by_name or canonical in self.constant_names:
            return None
        writers = [i for i in self.producers.get(canonical, []) if i < before]
        return writers[-1] if writers else None

    def via(self, buf: str, before: int) -> str | None:
        """`loaded from buf1, written by aoti_torch_cpu_cumsum at w.cpp:930` (an index via a buffer)."""
        found = self.writer(buf, before)
        if found is None:
            return None
        launch = self.model.launches[found]
        return CHAIN["via"].format(buffer=buf, kernel=launch.kernel, where=where(launch.location))
