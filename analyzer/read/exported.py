"""Read a `torch.export.save` archive (an exported program) without torch and without unpickling.

Only the JSON members `<root>/models/<name>.json` are read (with bounded reads), or, as torch 2.6
and 2.7 save it, `serialized_exported_program.json` at the top (same schema, read as "model"); the
weights, constants and sample inputs (`data/`, `serialized_*.pt`) are pickles or raw tensors and
are never opened.

What we take from the JSON (schema 8.x, torch 2.11-2.13):
- `graph_module.signature.input_specs`: which graph inputs are the user's. AOTInductor's
  `inputs_info_` holds the user inputs only (parameters and buffers become constants), in the
  flattened order of `(args, kwargs)`, which is the order of the `user_input` specs. Constant user
  inputs (`constant_input`, or a plain `as_int`/`as_none`... argument) are passed as None and are
  not in `inputs_info_`, so they are left out here too.
- `graph_module.graph.tensor_values[name].sizes`: per dim either `{"as_int": 8}` or
  `{"as_expr": {"expr_str": "Symbol('s77', positive=True, integer=True)", ...}}` (torch 2.13 writes
  sympy's `srepr`; older versions wrote `str`, e.g. `"s77"`). Both are turned into plain text.
- `range_constraints`: `{"s77": {"min_val": 0, "max_val": null}}`. torch 2.13 records a named
  `Dim("n")` as min 0 and max null (int_oo); `Dim.AUTO`/`Dim.DYNAMIC` as min 2. Older versions wrote
  `sys.maxsize - 1` for "no upper bound", so huge maxima read as None.

- `guards_code` (torch 2.9+; 2.6-2.8 write none): the guards export kept, as Python text, copied to
  `Model.guards` and read by analyzer.query.guards (parsed with `ast`, never evaluated).

sympytext.py turns the `srepr` expressions into text; exported_apply.py's `apply()` copies the user's
names and the declared ranges onto the linked model's inputs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..core import budget
from ..core.model import GraphNode
from . import symints
from .sympytext import declared_range, expr_text, norm

if TYPE_CHECKING:  # for the annotations; `_read_archive` imports it when it runs
    from . import archive

MAX_JSON_BYTES = 64 * 1024 * 1024   # one exported program's JSON; real ones are kilobytes to a few MB
HUGE = 2**62                        # maxima at or above this mean "unbounded" (int_oo, sys.maxsize - 1)

# c10::ScalarType as the export schema numbers it (torch/_export/serde/schema.py ScalarType).
_SCHEMA_DTYPES = {
    1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float16", 7: "float32",
    8: "float64", 9: "complex32", 10: "complex64", 11: "complex128", 12: "bool", 13: "bfloat16",
    28: "uint16", 29: "float8_e4m3fn", 30: "float8_e5m2", 31: "float8_e4m3fnuz",
    32: "float8_e5m2fnuz", 33: "float8_e8m0fnu", 34: "uint32", 35: "uint64",
}

_KNOWN_SPECS = {"user_input", "parameter", "buffer", "tensor_constant", "custom_obj", "token",
                "constant_input"}


@dataclass(frozen=True)
class DeclaredDim:
    """One dim as `torch.export` declared it: an int (`value`) or a symbol/expression with its range.

    `symbol` is the size expression as text (`s77`, `2*s77`); min/max are None when unknown or
    unbounded. A static dim has min == max == value.
    """

    dim: int
    symbol: str | None
    value: int | None
    min: int | None
    max: int | None


@dataclass(frozen=True)
class ExportedInput:
    """One user input in AOTI's flat order (`inputs_info_` position == index in `inputs`)."""

    name: str
    dims: tuple[DeclaredDim, ...]
    kind: str = "tensor"              # "tensor" | "symint" | "symfloat" | "symbool"
    dtype: str | None = None          # "float32", "int64", ...
    device: str | None = None         # "cpu", "cuda", "cuda:0"


@dataclass(frozen=True)
class ExportedProgram:
    inputs: tuple[ExportedInput, ...]
    path: str
    name: str = "model"
    member: str = ""
    torch_version: str | None = None
    range_constraints: dict[str, tuple[int | None, int | None]] = field(default_factory=dict,
                                                                       compare=False)
    nodes: tuple[GraphNode, ...] = field(default=(), compare=False)   # the graph, for attribution
    # `guards_code` (torch 2.9+): Python text of the guards export kept, `L['x'].size()[0] % 4 == 0`;
    # read as data by analyzer.query.guards (parsed with ast, never evaluated).
    guards: tuple[str, ...] = field(default=(), compare=False)


# ---------------------------------------------------------------------------------------------
# Reading the archive


_LEGACY_MEMBER = "serialized_exported_program.json"   # torch 2.6 and 2.7: one program, at the top


def _model_name(member: str) -> str | None:
    """`root/models/model.json` -> "model"; torch 2.6/2.7's `serialized_exported_program.json`
    -> "model"; None for anything else (e.g. data/**/x_metadata.json)."""
    parts = PurePosixPath(member).parts
    if parts == (_LEGACY_MEMBER,):
        return "model"
    if len(parts) in (2, 3) and parts[-2] == "models" and parts[-1].endswith(".json"):
        if len(parts) == 3 and parts[0] in ("data", "models"):
            return None
        return parts[-1][: -len(".json")] or None
    return None


def _read_archive(path: str, limits: "archive.Limits | None",
                  deadline: "budget.Deadline | None") -> dict[str, str]:
    """Exported-program JSON members of a zip or folder: {member: text}.

    Read through archive.py, the one bounded reader: the same member count, size, compression,
    overlap, link and time limits as a package, and each JSON at most MAX_JSON_BYTES."""
    from . import archive

    limits = limits or archive.Limits()
    if limits.max_member_bytes > MAX_JSON_BYTES:
        limits = dataclasses.replace(limits, max_member_bytes=MAX_JSON_BYTES)
    out: dict[str, str] = {}
    with archive.open_archive(path, limits, deadline) as reader:
        for member in reader.members:
            if _model_name(member) is not None:
                out[member] = reader.read_text(member)
    return out


def _members(source: Any, limits: Any = None, deadline: Any = None) -> tuple[str, dict[str, str]]:
    """(display path, {member: json text}) from a path, an archive.Package-like or a model.Package."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return path, _read_archive(path, limits, deadline)
    # archive.Package (another module): `.exported_programs` member names and bounded `.read_text`.
    members = getattr(source, "exported_programs", None)
    read_text = getattr(source, "read_text", None)
    path = str(getattr(source, "path", "<package>"))
    if members is not None and callable(read_text):
        from ..core.budget import ArchiveError, TimeLimitError

        out = {}
        for member in members:
            try:
                text = read_text(member)
            except TimeLimitError:
                raise
            except ArchiveError as exc:  # a bad member (limits, damage): one line, as ValueError
                raise ValueError(str(exc) or f"{path}: cannot read {member}") from None
            if len(text) > MAX_JSON_BYTES:
                raise ValueError(f"{path}: {member} is larger than {MAX_JSON_BYTES} bytes")
            out[member] = text
        return path, out
    if getattr(source, "path", None):
        # The linked model.Package only knows its path: read the archive ourselves.
        return _members(source.path, limits, deadline)
    raise ValueError(f"cannot read an exported program from {type(source).__name__}")


def read_exported_programs(path_or_package: Any, limits: Any = None,
                           deadline: Any = None) -> dict[str, ExportedProgram]:
    """Every exported program in the archive, by model name (`models/<name>.json`). May be empty.

    `limits` (archive.Limits) and `deadline` (budget.Deadline) bound the read of a path."""
    path, members = _members(path_or_package, limits, deadline)
    out: dict[str, ExportedProgram] = {}
    for member, text in sorted(members.items()):
        name = _model_name(member) or PurePosixPath(member).stem
        out[name] = parse_exported_json(text, path=path, member=member, name=name)
    return out


def read_exported_program(path_or_package: Any, name: str | None = None, limits: Any = None,
                          deadline: Any = None) -> ExportedProgram:
    """The exported program named `name`, else "model", else the only one.

    Raises ValueError (one line) when there is none, when it is ambiguous, or on a bad layout.
    """
    programs = read_exported_programs(path_or_package, limits, deadline)
    path = os.fspath(path_or_package) if isinstance(path_or_package, (str, os.PathLike)) \
        else str(getattr(path_or_package, "path", "<package>"))
    if not programs:
        raise ValueError(f"{path}: no exported program (models/*.json, or {_LEGACY_MEMBER}) in the archive")
    if name is not None:
        if name not in programs:
            raise ValueError(f"{path}: no exported program named {name!r} "
                             f"(has {', '.join(sorted(programs))})")
        return programs[name]
    if "model" in programs:
        return programs["model"]
    if len(programs) == 1:
        return next(iter(programs.values()))
    raise ValueError(f"{path}: several exported programs ({', '.join(sorted(programs))}); "
                     "pick one by name")


# ---------------------------------------------------------------------------------------------
# Parsing the JSON


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _union(obj: Any) -> tuple[str, Any] | None:
    """The schema writes unions as one-key objects (`{"as_tensor": {...}}`); older writers added
    `"type"`/`"value"` style keys or nulls beside it, so take the first non-null field."""
    if not isinstance(obj, dict):
        return None
    if "type" in obj and "value" in obj and isinstance(obj["type"], str):
        return obj["type"], obj["value"]
    for key, value in obj.items():
        if value is not None:
            return key, value
    return None


def _bound(value: Any, *, upper: bool) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "infinity", "-inf", "-infinity", "oo", "-oo", "int_oo", "-int_oo"):
            return None
        try:
            value = int(text)
        except ValueError:
            return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = int(value)
    if not isinstance(value, int):
        return None
    if upper and value >= HUGE:
        return None
    if not upper and value <= -HUGE:
        return None
    return value


def parse_exported_json(text: str, *, path: str = "<json>", member: str = "models/model.json",
                        name: str = "model") -> ExportedProgram:
    """Parse one `models/<name>.json`. Raises ValueError with one line on an unknown layout."""
    where = f"{path}: {member}"
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # also 4300+ digit numbers and deep nesting
        reason = "nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())[:200]
        raise ValueError(f"{where}: not valid JSON ({reason})") from None
    try:
        return _parse_doc(doc, path, member, name, where)
    except ValueError as exc:
        text = " ".join(str(exc).split())
        raise ValueError(text if text.startswith(where) else f"{where}: {text[:200]}") from None
    except (OverflowError, RecursionError) as exc:
        raise ValueError(f"{where}: cannot be analysed ({type(exc).__name__})") from None


def _parse_doc(doc: Any, path: str, member: str, name: str, where: str) -> ExportedProgram:
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: unknown exported-program layout (top level is not an object)")
    graph_module = doc.get("graph_module")
    specs = _get(graph_module, "signature", "input_specs")
    graph = _get(graph_module, "graph")
    if not isinstance(specs, list) or not isinstance(graph, dict):
        raise ValueError(f"{where}: unknown exported-program layout "
                         "(no graph_module.signature.input_specs / graph_module.graph)")
    tensor_values = graph.get("tensor_values") or {}
    sym_int_values = graph.get("sym_int_values") or {}
    if not isinstance(tensor_values, dict) or not isinstance(sym_int_values, dict):
        raise ValueError(f"{where}: unknown exported-program layout (tensor_values is not an object)")

    ranges: dict[str, tuple[int | None, int | None]] = {}
    raw_ranges = doc.get("range_constraints") or {}
    if not isinstance(raw_ranges, dict):
        raise ValueError(f"{where}: unknown exported-program layout (range_constraints)")
    for key, rng in raw_ranges.items():
        if isinstance(rng, dict):
            ranges[norm(expr_text(key))] = (_bound(rng.get("min_val"), upper=False),
                                              _bound(rng.get("max_val"), upper=True))

    inputs: list[ExportedInput] = []
    for index, spec in enumerate(specs):
        kind_value = _union(spec)
        if kind_value is None:
            raise ValueError(f"{where}: input spec {index} is not a union object")
        kind, value = kind_value
        if kind not in _KNOWN_SPECS:
            # An unknown kind might be a user input under a new name; guessing would misalign
            # every later input, so refuse.
            raise ValueError(f"{where}: unknown input spec kind {kind!r} at {index}")
        if kind != "user_input":
            continue
        arg = _union(_get(value, "arg"))
        if arg is None:
            raise ValueError(f"{where}: user input spec {index} has no argument")
        arg_kind, arg_value = arg
        if arg_kind == "as_tensor":
            tname = _get(arg_value, "name")
            meta = tensor_values.get(tname) if isinstance(tname, str) else None
            if not isinstance(meta, dict):
                raise ValueError(f"{where}: user input {tname!r} has no tensor_values entry")
            inputs.append(_tensor_input(tname, meta, ranges, where))
        elif arg_kind in ("as_sym_int", "as_sym_float", "as_sym_bool"):
            sname = _get(arg_value, "as_name") or _get(arg_value, "name") or f"input{len(inputs)}"
            inputs.append(ExportedInput(name=str(sname), dims=(),
                                        kind={"as_sym_int": "symint", "as_sym_float": "symfloat",
                                              "as_sym_bool": "symbool"}[arg_kind]))
        # Any other argument (as_none, as_int, as_string, as_custom_obj, ...) is a constant the
        # runtime passes as None: AOTI leaves it out of inputs_info_.
    return ExportedProgram(inputs=tuple(inputs), path=path, name=name, member=member,
                           torch_version=doc.get("torch_version") if isinstance(
                               doc.get("torch_version"), str) else None,
                           range_constraints=ranges, nodes=graph_nodes(graph), guards=_guards(doc))


MAX_GUARDS = 4096            # guards of one program; real ones are a few to a few hundred
MAX_GUARD_CHARS = 65536      # one guard's text


def _guards(doc: dict) -> tuple[str, ...]:
    """`guards_code` as strings (torch 2.6-2.8 write none); entries of another type or past the limits
    are left out, never an error: guards only add findings."""
    raw = doc.get("guards_code")
    if not isinstance(raw, list):
        return ()
    return tuple(g for g in raw[:MAX_GUARDS] if isinstance(g, str) and len(g) <= MAX_GUARD_CHARS)


def graph_nodes(graph: Any) -> tuple[GraphNode, ...]:
    """The call nodes of `graph_module.graph` with their stack trace and module stack (source
    attribution). Lenient: a node or field of an unknown shape is skipped, never an error."""
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    tensors = graph.get("tensor_values") if isinstance(graph, dict) else None
    if not isinstance(nodes, list):
        return ()
    tensors = tensors if isinstance(tensors, dict) else {}
    out = []
    seen: dict[str, str] = {}   # a graph repeats a few size expressions on every node
    syms: dict[str, str] = {}   # symbolic ints computed in the graph, as guard text over input sizes
    for node in nodes:
        if not isinstance(node, dict) or not isinstance(node.get("target"), str):
            continue
        outputs = node.get("outputs") or []
        first = _union(outputs[0]) if isinstance(outputs, list) and outputs else None
        name = node.get("name") or (_get(first[1], "name") or _get(first[1], "as_name") if first else None)
        if not isinstance(name, str):
            continue
        if first is not None and first[0] == "as_sym_int":
            operands = [_union(_get(e, "arg")) if isinstance(e, dict) else None for e in node.get("inputs") or []]
            symints.record(node["target"], operands, _get(first[1], "as_name"), syms)
        args, shapes, texts, ints, sym_lists, hints = [], [], [], [], [], []
        params = tuple(p for p in map(_param, node.get("inputs") or []) if p is not None)
        for entry in node.get("inputs") or []:
            arg = _union(_get(entry, "arg")) if isinstance(entry, dict) else None
            if arg is not None and arg[0] == "as_ints" and isinstance(arg[1], list):
                ints.append(tuple(v for v in arg[1] if isinstance(v, int)))
            if arg is not None and arg[0] == "as_sym_ints" and isinstance(arg[1], list):
                sym_lists.append(tuple(symints.entry(v, syms) for v in arg[1]))
            if arg is None or arg[0] not in ("as_tensor", "as_sym_int"):
                continue
            arg_name = _get(arg[1], "name") or _get(arg[1], "as_name")
            if not isinstance(arg_name, str):
                continue
            args.append(arg_name)
            meta = tensors.get(arg_name) if arg[0] == "as_tensor" else None
            sizes = meta.get("sizes") if isinstance(meta, dict) else None
            shapes.append(tuple(_static_size(s) for s in sizes) if isinstance(sizes, list) else None)
            texts.append(tuple(_size_text(s, seen) for s in sizes) if isinstance(sizes, list) else None)
            hints.append(tuple(_size_hint(s) for s in sizes) if isinstance(sizes, list) else None)
        meta = node.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        trace = meta.get("stack_trace")
        out.append(GraphNode(name=name, op=node["target"].removeprefix("torch.ops."), args=tuple(args),
                             arg_shapes=tuple(shapes), stack_trace=trace if isinstance(trace, str) else None,
                             module_stack=_module_stack(meta.get("nn_module_stack")), arg_sizes=tuple(texts),
                             int_lists=tuple(ints), sym_lists=tuple(sym_lists), params=params,
                             arg_hints=tuple(hints)))
    return tuple(out)



def _param(entry: Any) -> tuple[str, int | bool | tuple[int, ...]] | None:
    """A named int, bool or int-list argument (`("ceil_mode", True)`); None for any other."""
    arg = _union(_get(entry, "arg")) if isinstance(entry, dict) else None
    name = entry.get("name") if isinstance(entry, dict) else None
    if arg is None or not isinstance(name, str):
        return None
    kind, value = arg
    if kind == "as_bool" and isinstance(value, bool):
        return name, value
    if kind == "as_int" and isinstance(value, int) and not isinstance(value, bool):
        return name, value
    if kind == "as_ints" and isinstance(value, list) and all(type(v) is int for v in value):
        return name, tuple(value)
    return None


def _size_hint(size: Any) -> int | None:
    """A size in the traced example: a static one, or a dynamic one's `hint`."""
    static = _static_size(size)
    if static is not None:
        return static
    entry = _union(size)
    hint = _union(_get(entry[1], "hint")) if entry is not None and entry[0] == "as_expr" else None
    return hint[1] if hint is not None and hint[0] == "as_int" and type(hint[1]) is int else None


def _static_size(size: Any) -> int | None:
    entry = _union(size)
    if entry is not None and entry[0] == "as_int" and isinstance(entry[1], int):
        return entry[1]
    return None


def _size_text(size: Any, seen: dict[str, str]) -> int | str:
    """A size as an int, or a dynamic one as its expression text ("?" where unreadable); `seen`
    keeps the texts already rendered."""
    static = _static_size(size)
    if static is not None:
        return static
    entry = _union(size)
    text = _get(entry[1], "expr_str") if entry is not None and entry[0] == "as_expr" else None
    if not isinstance(text, str):
        return "?"
    if text not in seen:
        seen[text] = expr_text(text)
    return seen[text]


def _module_stack(text: Any) -> tuple[tuple[str, str], ...]:
    """`"L__self__,,pkg.Model;L__self__pos,pos,torch.nn.modules.sparse.Embedding"` -> (path, class)
    pairs, outermost first; the root module (empty path) is kept."""
    if not isinstance(text, str):
        return ()
    out = []
    for entry in text.split(";"):
        parts = entry.split(",")
        if len(parts) >= 3:
            out.append((parts[1], ",".join(parts[2:])))
    return tuple(out)


def _tensor_input(name: str, meta: dict, ranges: dict, where: str) -> ExportedInput:
    sizes = meta.get("sizes")
    if not isinstance(sizes, list):
        raise ValueError(f"{where}: tensor {name!r} has no sizes list")
    dims = []
    for dim, size in enumerate(sizes):
        entry = _union(size)
        if entry is None:
            raise ValueError(f"{where}: tensor {name!r} dim {dim}: unknown size entry")
        skind, svalue = entry
        if skind == "as_int" and isinstance(svalue, int):
            dims.append(DeclaredDim(dim=dim, symbol=None, value=svalue, min=svalue, max=svalue))
        elif skind == "as_expr":
            expr = svalue.get("expr_str") if isinstance(svalue, dict) else svalue
            if not isinstance(expr, str):
                raise ValueError(f"{where}: tensor {name!r} dim {dim}: no expr_str")
            text = expr_text(expr)
            lo, hi = declared_range(text, ranges)
            dims.append(DeclaredDim(dim=dim, symbol=text, value=None, min=lo, max=hi))
        else:
            raise ValueError(f"{where}: tensor {name!r} dim {dim}: unknown size kind {skind!r}")
    device = None
    dev = meta.get("device")
    if isinstance(dev, dict) and isinstance(dev.get("type"), str):
        device = dev["type"] if dev.get("index") is None else f"{dev['type']}:{dev['index']}"
    dtype_code = meta.get("dtype")
    dtype = _SCHEMA_DTYPES.get(dtype_code) if isinstance(dtype_code, int) else None
    return ExportedInput(name=name, dims=tuple(dims), kind="tensor", dtype=dtype, device=device)
