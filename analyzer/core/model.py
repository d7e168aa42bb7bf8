"""The linked model of an AOTI package: what rules, reports and `why` read.

Everything here is plain data. `analyzer.link.link.link_model()` builds it from the facts the parsers
extract: assertion -> kernel parameter (by position) -> launch argument -> size expression over
symbols -> input index and dim.

Size expressions are strings in Python expression syntax over size symbols (`s77`, `s77*s95`,
`s27 - 1`, `trunc(0.12*s27)`); `analyzer.expr.intervals` evaluates them without `eval`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .findings import Location
from .records import GraphNode, StrideRead


class TextEnum(str, Enum):
    """A state spelled as a string: compares equal to its value and prints as it (JSON, f-strings)."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class Enforcement(TextEnum):
    """Whether a size check runs at run time."""

    ALWAYS = "always"   # unconditionally, at every call
    ENV = "env"         # only with AOTI_RUNTIME_CHECK_INPUTS=1 (the default codegen of check_input_N)
    NONE = "none"       # nothing checks it


class ProblemKind(TextEnum):
    """Why a part of the package was skipped."""

    PARSE = "parse"
    NO_SOURCE = "no-source"
    LIMIT = "limit"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, order=True)
class DimRef:
    """One dimension of one model input (`input` is the position in `inputs_info_`)."""

    input: int
    dim: int


@dataclass
class Dim:
    """One input dimension as the package was compiled.

    `enforced`: ALWAYS when a check runs unconditionally, ENV when the `check_input_N` functions
    run only with AOTI_RUNTIME_CHECK_INPUTS set (the default codegen), NONE when nothing checks it.
    A plain string is accepted and converted; anything else is a ValueError.
    """

    dim: int
    symbol: str | None = None
    value: int | None = None
    min: int | None = None
    max: int | None = None
    enforced: Enforcement = Enforcement.NONE
    declared_min: int | None = None
    declared_max: int | None = None
    check_location: Location | None = None   # where check_input_N tests this dim
    # A dim the package never reads itself: it must equal this expression over root symbols
    # (`assert_size_stride(arg1_1, {1L + s69, 8L}, ...)`), checked only where `tie_enforced` says.
    tied_expr: str | None = None
    tie_enforced: Enforcement = Enforcement.NONE
    tie_location: Location | None = None
    # Why the compiled minimum (export's 0/1 specialization: 2) is never checked, whatever the
    # environment: "unrecorded" (the package records and checks no input range: torch 2.6) or
    # "disabled" (built with aot_inductor.check_lowerbound=False). None: `enforced` says it all.
    lower_unchecked: str | None = None
    # The exported program's expression for this dim (`20*s6` for `20 * Dim("k")`), over its symbols.
    declared_expr: str | None = None

    def __setattr__(self, name: str, value: object) -> None:
        # The parsers set these after construction too: every assignment is validated.
        if name in ("enforced", "tie_enforced"):
            value = Enforcement(value)
        object.__setattr__(self, name, value)

    @property
    def dynamic(self) -> bool:
        return self.value is None


def input_position(input: int, dim: int | None = None) -> str:
    """`input 0 dim 1` (`input 0` for a whole input): an input or dim by position, in every message."""
    return f"input {input}" if dim is None else f"input {input} dim {dim}"


def shape_text(name: str, dim: int) -> str:
    """`x.shape[0]`: a dim as the caller's code reads it."""
    return f"{name}.shape[{dim}]"


def where(ref: DimRef) -> str:
    """`input 0 dim 1`: `input_position` of a dim."""
    return input_position(ref.input, ref.dim)


_SOURCE_NODES = re.compile(r"Source Nodes:\s*\[([^\]]*)\]")
_SHIM_PREFIX = re.compile(r"^aoti_torch_(?:(?:cpu|cuda|xpu|mps)_)?")


def shim_op(call: str) -> str:
    """The ATen op of a shim call: `aoti_torch_cpu_cumsum` -> `cumsum` (one spelling of the prefix
    for the linker's transfer table and the headlines)."""
    return _SHIM_PREFIX.sub("", call)


@dataclass
class Input:
    index: int
    name: str
    dims: list[Dim] = field(default_factory=list)
    dtype: str | None = None
    device: str | None = None
    user_name: str | None = None
    # False where nothing checks the input's sizes (torch 2.6): the tensor may have more dims.
    rank_known: bool = True
    # The strides the code was compiled for, one per dim: an int (check_input_N's `8 != arg0_1_stride[0]`),
    # an expression over root size symbols (run_impl's `assert_size_stride(arg0_1, {s77, s27}, {s27, 1L})`,
    # torch >= 2.13) or None where the package records none; None when it records no stride at all.
    # Every kernel indexes the input with these: another layout reads the wrong elements.
    strides: tuple[int | str | None, ...] | None = None
    # Who rejects another layout (or dtype): the same gate as the size checks, ENV by default.
    layout_enforced: Enforcement = Enforcement.NONE
    layout_location: Location | None = None

    def __setattr__(self, name: str, value: object) -> None:
        if name == "layout_enforced":
            value = Enforcement(value)
        object.__setattr__(self, name, value)

    @property
    def display(self) -> str:
        return self.user_name or self.name

    def shape_expr(self, dim: int) -> str:
        """`x.shape[0]`: the dim as the caller's code reads it (the compiler's name without a user name)."""
        return shape_text(self.display, dim)

    def dim_display(self, dim: int) -> str:
        """`x.shape[0]` with a user name, `arg0_1.size(0)` otherwise."""
        if self.user_name:
            return self.shape_expr(dim)
        return f"{self.name}.size({dim})"


class ConstantKind(Enum):
    """What a constant is in the exported model (`constants_info_[i].type`)."""

    PARAMETER = "Parameter"             # a learned weight: eager reads the same rows at any size
    BUFFER = "Buffer"                   # a registered buffer, which a model's code may rebuild or slice
    TENSOR_CONSTANT = "TensorConstant"  # a tensor the traced code made


@dataclass
class Constant:
    index: int
    name: str
    shape: tuple[int, ...] | None = None
    original_fqn: str | None = None
    kind: ConstantKind | None = None


@dataclass
class Symbol:
    """A size variable bound in `run_impl`: `int64_t s77 = arg0_1_size[0];` (source), an alias
    (`int64_t s17 = s11;`) or a composite (`int64_t k_xnumel = s23*s27;`). `expr` is over root symbols."""

    name: str
    expr: str
    source: DimRef | None = None
    location: Location | None = None
    is_stride: bool = False
    unbacked: bool = False
    # Unbacked: the inputs whose *values* define it (`aoti_torch_item_int64(arg2_1, &u0_raw)`: arg2_1's).
    value_inputs: tuple[int, ...] = ()
    # Bounds that run at every call (deferred runtime asserts such as `torch._check(n <= 64)`), and the
    # root symbol it must equal there (`Expected Eq(s77, u2)`: bincount's size with minlength s77).
    min: int | None = None
    max: int | None = None
    tied: str | None = None
    max_expr: str | None = None  # over root symbols, what its op bounds it by (repeat_interleave: 8*s77)


@dataclass(slots=True)
class Launch:
    kernel: str
    args: tuple[str, ...]
    location: Location
    comment: str | None = None  # "Topologically Sorted Source Nodes: [...], Original ATen: [...]"
    extern: bool = False        # an ATen/shim call rather than a generated kernel
    outputs: tuple[str, ...] = ()
    error_checked: bool = True  # False: a shim called without AOTI_TORCH_ERROR_CODE_CHECK
    # Extern calls: each argument's sizes over root symbols (None: not a tensor, or unknown).
    arg_shapes: tuple[tuple[str, ...] | None, ...] = ()

    @property
    def source_nodes(self) -> tuple[str, ...]:
        """The exported graph's nodes the launch computes, as its comment names them (or empty)."""
        found = _SOURCE_NODES.search(self.comment or "")
        return tuple(n.strip() for n in found.group(1).split(",") if n.strip()) if found else ()


@dataclass(slots=True)
class Assertion:
    """One index-bound assertion and where its bound and index come from."""

    kernel: str
    message: str
    location: Location
    index_var: str | None = None
    lower: int | None = None          # 0 for `0 <= tmp4 < ks0`, None for one-sided `y0 < 512`
    bound: str = ""                   # the bound as written: "ks0", "100L", "512"
    bound_expr: str | None = None     # over root symbols ("s77") or a constant ("100")
    bound_value: int | None = None    # set when the bound is a constant
    bound_sources: tuple[DimRef, ...] = ()
    index_sources: tuple[int, ...] = ()
    # Upper end (exclusive) of the index's range from iteration ranges or size arithmetic (`y0 =
    # yindex`, `ymask = yindex < ynumel`), over root symbols; None for data (loaded values) or unknown.
    index_extent: str | None = None
    index_extent_sources: tuple[DimRef, ...] = ()
    # Inputs whose values (through unbacked symbols such as `u0 = x.item()`) set the extent.
    index_extent_value_inputs: tuple[int, ...] = ()
    # Shims whose output ranges bound a loaded index and its extent (`bucketize_Tensor`, `topk`, `cumsum`).
    index_ops: tuple[str, ...] = ()
    # The kernel parameters the index is loaded from (`in_ptr2`); the buffer and launch that wrote it,
    # when not an input or a constant: an extern call's output whose size the package only assumes.
    index_pointers: tuple[str, ...] = ()
    index_buffer: str | None = None
    index_writer: int | None = None
    space_expr: str | None = None     # the kernel's iteration space around it (as `Division`'s)
    # C++: True in an OpenMP region (its exception cannot leave: abort), False raises; None: Triton/unknown.
    parallel: bool | None = None
    linked: bool = True
    unlinked_reason: str | None = None
    chain: tuple[str, ...] = ()
    # An index loaded from one input's values, its maximum with that value read as `VALUE` (root
    # symbols): `max(s27 - 1 + VALUE - s27, 0)` for positions `max(x0 + lengths[x1] - seq, 0)`.
    value_upper: str | None = None

    def unlinked(self, reason: str) -> "Assertion":
        """This assertion, marked as not linked to the model's inputs, and why."""
        self.linked, self.unlinked_reason = False, reason
        return self


@dataclass(slots=True)
class Division:
    """A kernel (or wrapper) dividing by a size: a mean over a possibly-empty dim gives NaN."""

    kernel: str
    divisor: str                      # as written ("tmp7", "ks0")
    divisor_expr: str | None          # over root symbols
    sources: tuple[DimRef, ...]
    location: Location
    integer: bool = False             # integer `/` or `%` (SIGFPE) vs float (NaN)
    in_wrapper: bool = False
    # The iteration space around it (Triton `xnumel*ynumel`, C++ loops), root symbols: at 0 it never runs.
    space_expr: str | None = None
    index_math: bool = False          # C++ index arithmetic (`x0 % (2*(ks0 // 2))`): its divisor, not data


@dataclass(slots=True)
class Reduction:
    """A reduction whose identity leaks out when the reduced extent is 0 (max -> -inf, ...)."""

    kernel: str
    op: str                           # max, min, argmax, argmin, prod, sum, ...
    extent_expr: str | None
    sources: tuple[DimRef, ...]
    location: Location
    # The kernel's own iteration space (Triton `xnumel*ynumel`, C++ loops): at 0 the identity is unused.
    space_expr: str | None = None


@dataclass(slots=True)
class ConstantRead:
    """A kernel's load from a constant of static size at an index over input sizes (`in_ptr2[x1]`, `x1`
    in `[0, s27)`), or a `view` of it passed to an extern call (`reinterpret_tensor_wrapper(pe, ...)`):
    `index_max` is the largest element index read, over root symbols; `numel` its element count."""

    kernel: str
    pointer: str                      # the kernel parameter (`in_ptr2`), or `argument 1` of a view
    constant: str                     # the wrapper's constant name
    numel: int
    index_max: str
    sources: tuple[DimRef, ...]
    location: Location
    shape: tuple[int, ...] | None = None
    fqn: str | None = None            # constants_info_[i].original_fqn (`embeddings.position_ids`)
    view: bool = False


@dataclass(slots=True)
class Access:
    """A kernel's write into a buffer (`out_ptr0[tmp1] = v`) or read from one (`in_ptr0[...]`) at one
    launch (analyzer/link/storebounds.py): the buffer's element count and the loops around the access,
    over root symbols. When a size empties the buffer but not the loops, every access lands outside it."""

    kernel: str
    pointer: str                      # the kernel parameter (`out_ptr0`, `in_ptr0`)
    buffer: str                       # the launch argument (`buf0`, `arg0_1`)
    numel: str                        # the buffer's element count
    space_expr: str                   # the product of the loops' extents around the access ("1": none)
    location: Location
    launch: Location
    write: bool = True


@dataclass
class SizeCheck:
    """`assert_size_stride(arg5_1, {s77, 20L*s6}, ...)` in run_impl: the sizes the package expects of a
    tensor (as written, `L` suffixes dropped); `gated`: only with AOTI_RUNTIME_CHECK_INPUTS=1."""

    tensor: str
    sizes: tuple[str, ...]
    location: Location
    gated: bool = False
    strides: tuple[str, ...] = ()     # as written too (`20*s6`); empty when not read


class Evidence(TextEnum):
    """Where a derived-dim relation (`size == n*k + b`) was read (analyzer.query.relations)."""

    QUOTIENT = "quotient"       # run_impl reads k = size // n (`int64_t s6 = (1.0/20.0)*arg5_1_size_1;`)
    SIZE_CHECK = "size-check"   # assert_size_stride expects the size `20L*s6`
    STRIDE = "stride"           # assert_size_stride expects a stride `20L*s6` that is this dim's size
    EXPORTED = "exported"       # the exported program declares the dim `20*s6`


@dataclass
class Relation:
    """An input dim the package takes to be `n*symbol + offset`: other sizes break it.

    `enforced` says who rejects a size that breaks it (ALWAYS, ENV: the gated assert_size_stride,
    NONE); `location` is that check, else where the relation was read; `symbol_min`/`symbol_max`
    the range of `symbol` where known (range_constraints)."""

    ref: DimRef
    n: int
    symbol: str
    offset: int = 0
    enforced: Enforcement = Enforcement.NONE
    location: Location | None = None
    evidence: tuple[Evidence, ...] = ()
    symbol_min: int | None = None
    symbol_max: int | None = None

    def fits(self, size: int) -> bool:
        return (size - self.offset) % self.n == 0


@dataclass(slots=True)
class Kernel:
    name: str
    kind: str                          # "triton" | "cpp"
    params: tuple[str, ...] = ()
    param_types: dict[str, str] = field(default_factory=dict)
    location: Location | None = None
    has_source: bool = True
    # `(a*x1) // b` in an adaptive pooling's index (its bins): (a, b), a the map size it was lowered for.
    pool_bins: tuple[tuple[int, int], ...] = ()


@dataclass
class Problem:
    """A part of the package that could not be read or parsed; rules turn these into findings."""

    message: str
    location: Location | None = None
    kind: ProblemKind = ProblemKind.PARSE

    def __post_init__(self) -> None:
        self.kind = ProblemKind(self.kind)


@dataclass
class Model:
    name: str
    device: str | None = None
    metadata: dict = field(default_factory=dict)
    metadata_path: str | None = None
    wrapper_path: str | None = None
    kernel_paths: tuple[str, ...] = ()
    binaries: tuple[str, ...] = ()
    cpp_only: bool = False
    inputs: list[Input] = field(default_factory=list)
    constants: list[Constant] = field(default_factory=list)
    in_spec: str | None = None
    symbols: dict[str, Symbol] = field(default_factory=dict)
    kernels: dict[str, Kernel] = field(default_factory=dict)
    launches: list[Launch] = field(default_factory=list)
    assertions: list[Assertion] = field(default_factory=list)
    divisions: list[Division] = field(default_factory=list)
    reductions: list[Reduction] = field(default_factory=list)
    constant_reads: list[ConstantRead] = field(default_factory=list)
    size_checks: list[SizeCheck] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    stride_reads: list[StrideRead] = field(default_factory=list)
    # Derived-dim relations (analyzer.query.relations), one per input dim at most.
    relations: list[Relation] = field(default_factory=list)
    # The exported program's range_constraints: symbol or expression -> (min, max), None unbounded.
    declared_ranges: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    # The exported program's guards (`guards_code`, Python text), empty without one (analyzer.query.guards).
    guards: list[str] = field(default_factory=list)
    # (kernel, message, location) of kernels' other literal checks (not index bounds).
    kernel_messages: list[tuple[str, str, Location]] = field(default_factory=list)
    # (symbol, message, location) of run_impl's always-on checks that a size is not 0 before it divides
    # by it (`AOTI_TORCH_CHECK(s27 != 0, "Integer floor division by zero");`): that RuntimeError at 0.
    zero_checks: list[tuple[str, str, Location]] = field(default_factory=list)
    checks_gated: bool | None = None   # True: check_input_N run only with AOTI_RUNTIME_CHECK_INPUTS
    problems: list[Problem] = field(default_factory=list)
    graph: list[GraphNode] = field(default_factory=list)   # the exported program's, in order (or empty)
    # member path -> {line: text} for the lines that locations point at (report snippets).
    source_lines: dict[str, dict[int, str]] = field(default_factory=dict)

    @property
    def device_key(self) -> Any:
        """The metadata's `AOTI_DEVICE_KEY` (cpu, cuda) as written; None without one (see `device`)."""
        return self.metadata.get("AOTI_DEVICE_KEY")

    @property
    def compute_capability(self) -> Any:
        """The metadata's `AOTI_COMPUTE_CAPABILITY` as written ("90", "sm_90a", 86); None without one."""
        return self.metadata.get("AOTI_COMPUTE_CAPABILITY")

    def line_text(self, location: Location | None) -> str | None:
        return None if location is None else self.source_lines.get(location.path, {}).get(location.line)

    def dim(self, ref: DimRef) -> Dim | None:
        if 0 <= ref.input < len(self.inputs):
            dims = self.inputs[ref.input].dims
            if 0 <= ref.dim < len(dims):
                return dims[ref.dim]
        return None

    def known_dim(self, ref: DimRef) -> Dim:
        """The dim of a ref the model itself gave (an expression's or a symbol's sources): always there."""
        dim = self.dim(ref)
        if dim is None:
            raise LookupError(f"{self.name}: no {where(ref)}")
        return dim

    def input_text(self, index: int) -> str:
        """`input 1 (idx)`: an input by position, with the user's name where known."""
        return f"{input_position(index)} ({self.inputs[index].display})" if 0 <= index < len(self.inputs) \
            else input_position(index)

    def describe(self, ref: DimRef) -> str:
        """`input 0 dim 0 (arg0_1.size(0))`, with the user's name where known."""
        if 0 <= ref.input < len(self.inputs):
            return f"{where(ref)} ({self.inputs[ref.input].dim_display(ref.dim)})"
        return where(ref)


@dataclass
class Package:
    path: str
    models: list[Model] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # The torch release(s) whose layout and codegen the package shows ("2.6", ">=2.10"); None: unknown.
    torch: str | None = None
    torch_evidence: list[str] = field(default_factory=list)

