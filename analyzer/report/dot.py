"""`aoti-lint inspect --format dot`: the package's graph for Graphviz: inputs and their dims (with
size symbols and ranges), kernels and the launches' size arguments, and every assertion with the
dims that bound it and the inputs whose values index it."""

from __future__ import annotations

from ..core.model import Model, Package, input_position
from ..core.dimtext import range_text
from ..core.untrusted import no_v1_command, visible


def _q(text: str) -> str:
    """A DOT double-quoted string (hidden characters as visible escapes; newlines as DOT's `\\n`)."""
    return '"' + no_v1_command(visible(text, keep="\n")).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _model_lines(m: int, model: Model) -> list[str]:
    p = f"m{m}"
    title = f"model {model.name!r} ({model.device or 'unknown device'})"
    out = [f"  subgraph cluster_{p} {{", f"    label={_q(title)};"]
    symbols: dict[str, str] = {}
    declared: set[str] = set()  # edges only between nodes drawn here
    for inp in model.inputs:
        node = f"{p}_in{inp.index}"
        declared.add(node)
        out.append(f"    {node} [shape=box, style=filled, fillcolor=lightblue, "
                   f"label={_q(f'{input_position(inp.index)}: {inp.display}')}];")
        for dim in inp.dims:
            if dim.value is not None:
                continue
            dnode = f"{p}_in{inp.index}_d{dim.dim}"
            declared.add(dnode)
            label = f"dim {dim.dim}" + (f" = {dim.symbol}" if dim.symbol else "") + f"\n{range_text(dim)}"
            out.append(f"    {dnode} [shape=ellipse, label={_q(label)}];")
            out.append(f"    {node} -> {dnode};")
            if dim.symbol:
                symbols.setdefault(dim.symbol, dnode)
    kernels = {name: f"{p}_k{n}" for n, name in enumerate(model.kernels)}
    for name, node in kernels.items():
        kernel = model.kernels[name]
        style = "" if kernel.has_source else ", style=dashed"
        label = f"{kernel.kind} kernel\n{name}"
        out.append(f"    {node} [shape=component{style}, label={_q(label)}];")
    for launch in model.launches:
        target = kernels.get(launch.kernel)
        if target is None:
            continue
        for arg in dict.fromkeys(launch.args):
            if arg in symbols:
                out.append(f"    {symbols[arg]} -> {target} [label={_q(arg)}];")
    for n, a in enumerate(model.assertions):
        node = f"{p}_a{n}"
        where = f"{a.location.path.rsplit('/', 1)[-1]}:{a.location.line}"
        style = "" if a.linked else ", color=red"
        label = f"{a.message}\n{where}"
        out.append(f"    {node} [shape=note{style}, label={_q(label)}];")
        if a.kernel in kernels:
            out.append(f"    {kernels[a.kernel]} -> {node} [label=\"asserts\"];")
        for ref in a.bound_sources:
            if f"{p}_in{ref.input}_d{ref.dim}" in declared:
                out.append(f"    {p}_in{ref.input}_d{ref.dim} -> {node} [label=\"bound\", color=red];")
        for i in a.index_sources:
            if f"{p}_in{i}" in declared:
                out.append(f"    {p}_in{i} -> {node} [label=\"index values\", style=dashed];")
    out.append("  }")
    return out


def render_dot(pkg: Package) -> str:
    lines = [f"digraph {_q(pkg.path)} {{", "  rankdir=LR;", "  node [fontname=\"Helvetica\", fontsize=10];",
             "  edge [fontname=\"Helvetica\", fontsize=9];"]
    for m, model in enumerate(pkg.models):
        lines += _model_lines(m, model)
    lines.append("}")
    return "\n".join(lines) + "\n"
