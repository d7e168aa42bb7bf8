"""Source attribution: the user's code behind a kernel, from the exported program's graph.

A CUDA wrapper says which graph nodes each launch computes (`// Topologically Sorted Source Nodes:
[arange, embedding, add], Original ATen: [...]`, read as `Launch.source_nodes`); C++ kernels often carry
no such comment, so their name's op list (`cpp_fused_index_mul_0` -> index, mul) is matched against
the graph's ops, in graph order. Of the candidate nodes, the one whose op can raise the finding
(an indexing op for an index assertion, a reduction, a division) is chosen; each graph node
carries its `stack_trace` (file, line, code) and `nn_module_stack` (module path and class).

Reads only the linked model (`Model.graph`, launches, records); never the archive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from ..core.findings import Finding, changed
from ..core.model import Assertion, ConstantRead, GraphNode, Launch, Model
from . import counting

# Ops whose index assertion Inductor emits (aten names without the overload).
INDEX_OPS = frozenset({
    "embedding", "embedding_bag", "_embedding_bag", "index", "index_select", "gather", "index_add",
    "index_put", "index_put_", "_unsafe_index", "_unsafe_index_put", "scatter", "scatter_add",
    "scatter_reduce", "take", "take_along_dim", "index_copy", "index_fill", "one_hot", "select",
    "searchsorted", "bucketize", "_unsafe_masked_index", "nll_loss", "nll_loss_forward", "cross_entropy_loss",
    "cross_entropy",
})
# Ops whose kernels access a buffer inside loops over another size (store-into-empty-buffer,
# read-from-empty-buffer): the index ops and the resizes Inductor lowers to `_unsafe_index`.
ACCESS_OPS = INDEX_OPS | frozenset({"upsample_bilinear2d", "upsample_nearest2d", "upsample_nearest1d",
                                    "upsample_linear1d", "upsample_bicubic2d", "upsample_trilinear3d",
                                    "upsample_nearest3d", "_upsample_bilinear2d_aa", "grid_sampler_2d"})
# Ops whose output length the input's values decide (data-dependent-size-check).
COUNT_OPS = counting.GRAPH_OPS
REDUCTION_OPS = {
    "max": frozenset({"amax", "max", "softmax", "_softmax", "log_softmax", "_log_softmax", "logsumexp",
                      "cross_entropy_loss", "cross_entropy", "scaled_dot_product_attention", "cummax"}),
    "min": frozenset({"amin", "min", "cummin"}),
    "argmax": frozenset({"argmax", "max"}),
    "argmin": frozenset({"argmin", "min"}),
}
DIVISION_OPS = frozenset({
    "mean", "div", "true_divide", "floor_divide", "remainder", "fmod", "var", "std", "var_mean", "std_mean",
    "layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "batch_norm", "instance_norm",
    "softmax", "_softmax", "log_softmax", "_log_softmax", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "cross_entropy_loss", "nll_loss",
    "nll_loss_forward", "mse_loss", "interpolate", "upsample_nearest1d", "upsample_nearest2d", "rms_norm",
    "scaled_dot_product_attention", "cumsum",
})

# Kernel names use the ops after decomposition; the exported graph has the ops before it.
DECOMPOSED = {
    "nll_loss_forward": ("cross_entropy_loss", "cross_entropy", "nll_loss"),
    "log_softmax": ("cross_entropy_loss", "cross_entropy", "log_softmax"),
    "native_layer_norm": ("layer_norm",),
    "native_group_norm": ("group_norm",),
    "unsafe_index": ("upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "interpolate",
                     "upsample_bilinear2d"),
    "addmm": ("linear",),
    "mm": ("linear", "matmul"),
    "bmm": ("matmul",),
}

_KERNEL_PREFIX = re.compile(r"^(?:cpp_fused|triton_(?:poi|per|red|tem|for)_fused|triton_fused|cpp)_")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in ([^\n]+)(?:\n[ \t]+([^\n]*))?')


@dataclass(frozen=True)
class Source:
    """Where a finding comes from in the user's code (fields of the JSON `source` object)."""

    file: str | None
    line: int | None
    code: str | None
    module: str | None          # module path, `transformer.wpe` ("" for the root module)
    module_class: str | None    # `torch.nn.modules.sparse.Embedding`
    op: str                     # `aten.embedding.default`
    node: str                   # the graph node (`embedding_1`)
    ambiguous: bool = False     # several nodes could have produced the kernel; the first is shown
    rows: int | None = None     # the indexed table's first dim, when it is a constant
    index_from: str | None = None   # the op producing the index (`arange`), when it is a node
    # The outermost frame outside torch (the user's call into the model, e.g. a wrapper's one-line
    # forward) when it is not the frame above: (file, line, code).
    called_from: tuple[str, int, str | None] | None = None

    @property
    def class_name(self) -> str | None:
        return self.module_class.rsplit(".", 1)[-1] if self.module_class else None

    def describe(self) -> str:
        """`` `pos` (Embedding, 64 rows) indexed by `arange` at generate.py:141 (aten.embedding) ``"""
        parts = []
        if self.module:
            what = f"`{self.module}`"
            extra = ", ".join(x for x in (self.class_name, f"{self.rows} rows" if self.rows is not None else None) if x)
        else:  # the root module's own forward
            what = f"`{self.class_name}.forward`" if self.class_name else "the model's forward"
            extra = f"{self.rows} rows" if self.rows is not None else ""
        parts.append(f"{what}" + (f" ({extra})" if extra else ""))
        if self.index_from:
            parts.append(f"indexed by `{self.index_from}`")
        if self.file:
            parts.append(f"at {self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}")
        parts.append(f"({short_op(self.op)}{', ambiguous' if self.ambiguous else ''})")
        return " ".join(parts)

    def to_json(self) -> dict:
        called = None
        if self.called_from is not None:
            called = {"file": self.called_from[0], "line": self.called_from[1], "code": self.called_from[2]}
        return {"file": self.file, "line": self.line, "code": self.code, "module": self.module,
                "module_class": self.module_class, "op": self.op, "node": self.node,
                "ambiguous": self.ambiguous, "called_from": called}


def short_op(op: str) -> str:
    """`aten.embedding.default` -> `embedding`."""
    parts = op.split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "prims", "higher_order"):
        return parts[1]
    return parts[-1] if len(parts) == 1 else parts[-2]


def kernel_ops(kernel: str) -> list[str]:
    """`cpp_fused_index_mul_0` -> ["index", "mul"] (words; ops with underscores are re-joined by
    `_match_ops` against the graph's op names)."""
    name = _COUNTER.sub("", _KERNEL_PREFIX.sub("", kernel))
    return [w for w in name.split("_") if w]


_COUNTER = re.compile(r"_\d+$")  # the kernel's number (`..._mul_0`)


def _norm(op: str) -> str:
    """`index_put_` and `_log_softmax` match the kernel name's `index_put` and `log_softmax`."""
    return op.strip("_")


def _match_ops(words: Sequence[str], known: set[str]) -> list[str]:
    """Greedy longest match of underscore words against known op names (`native_layer_norm`)."""
    out, i = [], 0
    while i < len(words):
        for j in range(len(words), i, -1):
            candidate = "_".join(words[i:j])
            if candidate in known:
                out.append(candidate)
                i = j
                break
        else:
            i += 1
    return out


def _frames(trace: str | None) -> list[tuple[str, int, str | None]]:
    if not trace:
        return []
    return [(m.group(1), int(m.group(2)), (m.group(4) or "").strip() or None) for m in _FRAME.finditer(trace)]


def frame(trace: str | None) -> tuple[str, int, str | None] | None:
    """The user's frame of a stack trace: the innermost one outside torch itself (the line whose op
    the kernel runs)."""
    frames = _frames(trace)
    if not frames:
        return None
    user = [f for f in frames if not _is_torch(f[0])]
    return (user or frames)[-1]


def called_from(trace: str | None) -> tuple[str, int, str | None] | None:
    """The outermost frame outside torch (where the user's code called into the model), when it is
    not the innermost one `frame` gives; None for a single frame."""
    user = [f for f in _frames(trace) if not _is_torch(f[0])]
    return user[0] if len(user) > 1 and user[0] != user[-1] else None


def _is_torch(path: str) -> bool:
    path = path.replace("\\", "/")
    return path.startswith("torch/") or "/torch/" in path or "/site-packages/torch/" in path


def _module(node: GraphNode) -> tuple[str | None, str | None]:
    stack = [(p, c) for p, c in node.module_stack if "_empty_nn_module_stack" not in c]
    return stack[-1] if stack else (None, None)


class Attributor:
    """Kernel -> candidate graph nodes for one model, computed once."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.by_name = {n.name: n for n in model.graph}
        self.producer = {n.name: n for n in model.graph}   # node outputs are named like the node
        self.position = {n.name: i for i, n in enumerate(model.graph)}
        self._candidates: dict[tuple[str, str | None], tuple[list[GraphNode], bool]] = {}
        self._launches: dict[str, list[Launch]] = {}
        for launch in model.launches:
            self._launches.setdefault(launch.kernel, []).append(launch)

    def candidates(self, kernel: str, passing: str | None = None) -> tuple[list[GraphNode], bool]:
        """(nodes, from_comment): the nodes a kernel computes, from its launch comment when there is
        one, else from its name's op list. `passing`: first from the comment of a launch that passes
        that argument (layers that share one kernel each pass their own table)."""
        key = (kernel, passing)
        if key not in self._candidates:
            self._candidates[key] = self._find(kernel, passing)
        return self._candidates[key]

    def _find(self, kernel: str, passing: str | None) -> tuple[list[GraphNode], bool]:
        commented = [launch for launch in self._launches.get(kernel, ()) if launch.source_nodes]
        for launch in [launch for launch in commented if passing in launch.args] + commented:
            nodes = [self.by_name[n] for n in launch.source_nodes if n in self.by_name]
            if nodes:
                return nodes, True
        by_key: dict[str, set[str]] = {}
        for n in self.model.graph:
            op = short_op(n.op)
            for key in {_norm(op), *(_norm(k) for k, targets in DECOMPOSED.items() if op in targets)}:
                by_key.setdefault(key, set()).add(op)
        ops = set().union(*(by_key[k] for k in _match_ops(kernel_ops(kernel), set(by_key))))
        return [n for n in self.model.graph if short_op(n.op) in ops], False

    def attribute(self, kernel: str | None, wanted: frozenset[str] | None,
                  prefer=None, passing: str | None = None) -> Source | None:
        if not kernel or not self.model.graph:
            return None
        nodes, _ = self.candidates(kernel, passing)
        if not nodes:
            return None
        relevant = [n for n in nodes if wanted is None or short_op(n.op) in wanted] or nodes
        if prefer is not None and len(relevant) > 1:
            preferred = [n for n in relevant if prefer(n)]
            if preferred:
                relevant = preferred
        if len(relevant) > 1 and wanted is not None:
            relevant = self._by_order(kernel, relevant)
        node = relevant[0]
        return self._source(node, ambiguous=len(relevant) > 1)

    def _by_order(self, kernel: str, nodes: list[GraphNode]) -> list[GraphNode]:
        """Kernels are numbered in graph order (`_0`, `_1`, ...): among same-op nodes, the n-th kernel
        of that op takes the n-th node when the counts agree."""
        ops = {short_op(n.op) for n in nodes}
        if len(ops) != 1:
            return nodes
        op = ops.pop()
        same = sorted({k for k in self.model.kernels if op in kernel_ops(k) or op in _match_ops(
            kernel_ops(k), {op})}, key=_kernel_number)
        all_nodes = [n for n in self.model.graph if short_op(n.op) == op]
        if kernel in same and len(same) == len(all_nodes) and set(nodes) <= set(all_nodes):
            return [all_nodes[same.index(kernel)]]
        return nodes

    def source_of(self, node: GraphNode) -> Source:
        """The user's code behind one node of the graph (a finding about that node, not a kernel)."""
        return self._source(node)

    def _source(self, node: GraphNode, ambiguous: bool = False) -> Source:
        found = frame(node.stack_trace)
        module, cls = _module(node)
        rows = None
        index_from = None
        op = short_op(node.op)
        if op in INDEX_OPS and node.arg_shapes:
            first = node.arg_shapes[0]
            if first and first[0] is not None and node.args and node.args[0] not in _user_inputs(self.model):
                rows = first[0]
            for arg in node.args[1:]:
                producer = self.producer.get(arg)
                if producer is not None and short_op(producer.op) in ("arange", "add", "slice", "expand", "unsqueeze",
                                                                       "view", "clamp", "sub"):
                    index_from = _index_text(producer, self.producer)
                    break
        return Source(file=found[0] if found else None, line=found[1] if found else None,
                      code=found[2] if found else None, module=module, module_class=cls, op=node.op,
                      node=node.name, ambiguous=ambiguous, rows=rows, index_from=index_from,
                      called_from=called_from(node.stack_trace))


def _kernel_number(kernel: str) -> int:
    m = re.search(r"_(\d+)$", kernel)
    return int(m.group(1)) if m else -1


def _user_inputs(model: Model) -> set[str]:
    return {i.user_name for i in model.inputs if i.user_name}


def _index_text(node: GraphNode, producers: dict[str, GraphNode], depth: int = 0) -> str | None:
    """`arange(seq)`-like text for a position index: the arange behind a few shape ops."""
    op = short_op(node.op)
    if op == "arange":
        return "arange"
    if depth < 4:
        for arg in node.args:
            producer = producers.get(arg)
            if producer is not None:
                found = _index_text(producer, producers, depth + 1)
                if found:
                    return found
    return None


# -- findings and assertions ----------------------------------------------------------------------

def table_read(model: Model, a: Assertion) -> ConstantRead | None:
    """The read of the constant table a constant-bound check guards: a read in the check's kernel
    from a constant of that many rows, the one whose index reads the check's own dims where the
    kernel reads several (a kernel launched for an encoder's table and for a decoder's)."""
    if a.bound_value is None:
        return None
    reads = [r for r in _reads_by_kernel(model).get(a.kernel, ()) if r.shape and r.shape[0] == a.bound_value]
    same = [r for r in reads if set(r.sources) & set(a.index_extent_sources)]
    return (same or reads)[0] if reads else None


def _reads_by_kernel(model: Model) -> dict[str, list[ConstantRead]]:
    """The model's constant reads by kernel, kept on the linked model (a check repeated in thousands of
    kernels asks for its table once per finding), keyed by what it is computed from."""
    key = (id(model.constant_reads), len(model.constant_reads))
    kept = model.__dict__.get("_reads_by_kernel")
    if kept is None or kept[0] != key:
        by_kernel: dict[str, list[ConstantRead]] = {}
        for read in model.constant_reads:
            by_kernel.setdefault(read.kernel, []).append(read)
        kept = model.__dict__["_reads_by_kernel"] = (key, by_kernel)
    return kept[1]


def for_assertion(attributor: Attributor, a: Assertion) -> Source | None:
    """The index op behind an assertion: a constant bound the node reading its table (else one
    indexing a table of that many rows), a dynamic bound the node indexing the input whose dim is the
    bound."""
    model = attributor.model
    table = table_read(model, a)
    placeholders = _placeholders(table.fqn) if table is not None and table.fqn else set()
    nodes = attributor.candidates(a.kernel)[0] if a.kernel else []
    if not any(short_op(n.op) in INDEX_OPS and placeholders.intersection(n.args) for n in nodes):
        placeholders = set()   # no index node reads it by name (a slice of it, a traced constant)
    names = {user for r in a.bound_sources
             if 0 <= r.input < len(model.inputs) and (user := model.inputs[r.input].user_name)}

    def prefer(node: GraphNode) -> bool:
        if placeholders:
            return bool(placeholders.intersection(node.args))
        if a.bound_value is not None:
            shape = node.arg_shapes[0] if node.arg_shapes else None
            return shape is not None and len(shape) > 0 and shape[0] == a.bound_value
        return bool(node.args) and _derives_from(node.args[0], names, attributor.producer)

    # An index loaded from a buffer is a tensor's (a gather's, a scatter's), never a select's int.
    tensor_ops = INDEX_OPS - {"select"}
    loaded = bool(a.index_ops or a.index_sources or a.index_buffer)
    wanted = tensor_ops if loaded and any(short_op(n.op) in tensor_ops for n in nodes) else INDEX_OPS
    return attributor.attribute(a.kernel, wanted, prefer)


def _derives_from(name: str, inputs: set[str], producers: dict[str, GraphNode], depth: int = 0) -> bool:
    """True when the tensor `name` is one of `inputs` or computed from one (a few ops back)."""
    if name in inputs:
        return True
    producer = producers.get(name)
    if producer is None or depth > 8:
        return False
    return any(_derives_from(arg, inputs, producers, depth + 1) for arg in producer.args)


def for_finding(attributor: Attributor, f: Finding) -> Source | None:
    """The user's code behind a finding about a kernel; None for findings about the package or an
    input as a whole, or without an exported program. The finding's subject says where to look:
    an index assertion's bound and table, a constant read's parameter; else any node behind the
    kernel whose op is one of the finding's user ops."""
    if not f.kernel or not attributor.model.graph:
        return None
    if isinstance(f.subject, Assertion):
        return for_assertion(attributor, f.subject)
    if isinstance(f.subject, ConstantRead) and f.subject.fqn:
        return for_constant(attributor, f.kernel, f.subject.fqn, f.subject.constant)
    # A finding about one node of the graph (a pooling Inductor fused with others): that node's code.
    node = getattr(f.subject, "node", None)
    if isinstance(node, GraphNode):
        return attributor.source_of(node)
    return attributor.attribute(f.kernel, f.user_ops)


def for_constant(attributor: Attributor, kernel: str, fqn: str, constant: str | None = None) -> Source | None:
    """The node of `kernel` that reads the parameter or buffer `fqn` (`self.pos[:, :n]` -> slice of `p_pos`),
    among the nodes of the launch that passes `constant` (the wrapper's name for it)."""
    names = _placeholders(fqn)
    return attributor.attribute(kernel, None, lambda node: bool(names.intersection(node.args)), constant)


def _placeholders(fqn: str) -> set[str]:
    """Export's names for the placeholder of parameter or buffer `fqn`: `p_`/`b_`/`c_` + the path with
    dots as underscores."""
    flat = fqn.replace(".", "_")
    return {prefix + flat for prefix in ("p_", "b_", "c_")}


def attribute(models: Iterable[Model], findings: Iterable[Finding]) -> Iterator[Finding]:
    """Findings with `source` filled in where the model has an exported program's graph, one at a
    time."""
    attributors = {m.name: Attributor(m) for m in models if m.graph}
    for f in findings:
        attributor = attributors.get(f.model)
        if attributor is not None and f.source is None:
            source = for_finding(attributor, f)
            if source is not None:
                f = changed(f, source=source)
        yield f


class _Kept:
    """A model's Attributor, kept on the model for the rules' questions; pickled empty (-j's workers
    send models back without it)."""

    def __init__(self) -> None:
        self.attributor: Attributor | None = None

    def __reduce__(self) -> tuple:
        return (_Kept, ())


def lookup_class(model: Model, a: Assertion) -> str | None:
    """The class of the module whose lookup a check guards (`torch.nn.modules.sparse.Embedding`), from
    the exported program's graph; None without one."""
    if not model.graph or not a.kernel:
        return None
    kept = model.__dict__.get("_source_kept")
    if not isinstance(kept, _Kept):
        kept = model.__dict__["_source_kept"] = _Kept()
    if kept.attributor is None or kept.attributor.model is not model:
        kept.attributor = Attributor(model)
    found = for_assertion(kept.attributor, a)
    return found.module_class if found is not None else None
