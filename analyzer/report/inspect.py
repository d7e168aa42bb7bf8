"""`aoti-lint inspect` output: the linked model as a readable report or the `aoti-lint.inspect/1` JSON."""

from __future__ import annotations

import json

from ..query import source
from ..link.input_layout import stride_text
from ..core.model import Assertion, Dim, Input, Model, Package, Relation
from ..core.dimtext import compiled_span, declared_clause, has_declared, span
from ..core.messages import enforced
from ..core.untrusted import terminal as t, terminal_lines
from .common import location_json

SCHEMA = "aoti-lint.inspect/1"



def _dim_json(dim: Dim, rel: Relation | None = None) -> dict:
    if dim.value is not None:
        return {"dim": dim.dim, "value": dim.value}
    out: dict[str, object] = {"dim": dim.dim, "symbol": dim.symbol, "min": dim.min, "max": dim.max,
                              "enforced": dim.enforced}
    if has_declared(dim):
        out["declared_min"] = dim.declared_min
        out["declared_max"] = dim.declared_max
    if dim.lower_unchecked:
        out["lower_unchecked"] = dim.lower_unchecked
    if rel is not None:   # compiled as n*symbol + offset (analyzer.query.relations)
        out["relation"] = {"n": rel.n, "symbol": rel.symbol, "offset": rel.offset, "enforced": rel.enforced,
                           "evidence": [str(e) for e in rel.evidence]}
    return out


def _relations(model: Model) -> dict:
    return {(r.ref.input, r.ref.dim): r for r in model.relations}


def _input_json(inp: Input, relations: dict | None = None) -> dict:
    out = {"index": inp.index, "name": inp.name}
    if inp.user_name:
        out["user_name"] = inp.user_name
    out["dtype"] = inp.dtype
    out["device"] = inp.device
    out["dims"] = [_dim_json(d, (relations or {}).get((inp.index, d.dim))) for d in inp.dims]
    out["strides"] = list(inp.strides) if inp.strides is not None else None
    out["layout_enforced"] = inp.layout_enforced
    return out



def _assertion_json(a: Assertion, attributor: "source.Attributor | None" = None) -> dict:
    found = source.for_assertion(attributor, a) if attributor is not None else None
    return {
        "kernel": a.kernel,
        "message": a.message,
        "index_var": a.index_var,
        "lower": a.lower,
        "bound": a.bound,
        "bound_expr": a.bound_expr,
        "bound_value": a.bound_value,
        "bound_sources": [{"input": r.input, "dim": r.dim} for r in a.bound_sources],
        "index_sources": [{"input": i} for i in a.index_sources],
        "index_extent": a.index_extent,
        "linked": a.linked,
        "unlinked_reason": a.unlinked_reason,
        "chain": list(a.chain),
        "location": location_json(a.location),
        "source": found.to_json() if found is not None else None,
    }


def model_json(model: Model) -> dict:
    attributor = source.Attributor(model) if model.graph else None
    return {
        "name": model.name,
        "device": model.device,
        "metadata": model.metadata,
        "wrapper": model.wrapper_path,
        "cpp_only": model.cpp_only,
        "checks_gated": model.checks_gated,
        "inputs": [_input_json(i, _relations(model)) for i in model.inputs],
        "constants": [{"index": c.index, "name": c.name, "shape": list(c.shape) if c.shape else None,
                       "original_fqn": c.original_fqn} for c in model.constants],
        "symbols": [{"name": sym.name, "expr": sym.expr, "unbacked": sym.unbacked,
                     "value_inputs": list(sym.value_inputs), "min": sym.min, "max": sym.max}
                    for sym in model.symbols.values() if sym.source is None and not sym.is_stride],
        "kernels": [{"name": k.name, "kind": k.kind, "has_source": k.has_source, "location": location_json(k.location)}
                    for k in model.kernels.values()],
        "launches": [{"kernel": l.kernel, "args": list(l.args), "extern": l.extern, "comment": l.comment,
                      "location": location_json(l.location)} for l in model.launches],
        "assertions": [_assertion_json(a, attributor) for a in model.assertions],
        "problems": [{"kind": p.kind, "message": p.message, "location": location_json(p.location)}
                     for p in model.problems],
    }


def render_json(package: Package) -> str:
    doc = {
        "schema": SCHEMA,
        "package": package.path,
        "torch": package.torch,
        "torch_evidence": list(package.torch_evidence),
        "models": [model_json(m) for m in package.models],
        "problems": [{"kind": p.kind, "message": p.message, "location": location_json(p.location)}
                     for p in package.problems],
    }
    return json.dumps(doc, indent=2) + "\n"  # ensure_ascii: surrogates become escapes


def _range(dim: Dim) -> str:
    if dim.value is not None:
        return str(dim.value)
    if dim.lower_unchecked == "unrecorded":
        return f"unknown (>= {dim.min} by export's 0/1 specialization)"
    if dim.lower_unchecked == "disabled":
        return compiled_span(dim) + " (lower bound never checked: check_lowerbound=False)"
    return compiled_span(dim)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def render_text(package: Package, color: bool = False) -> str:
    out = [t(package.path)]
    made_by = f"torch {package.torch}" if package.torch else "unknown torch version"
    made_by = t(made_by)
    out.append(f"  produced by: {made_by}" + (f" ({t('; '.join(package.torch_evidence))})" if package.torch_evidence else ""))
    for problem in package.problems:
        out.append(f"  problem: {t(problem.message)}")
    if not package.models:
        out.append("  no models")
    for model in package.models:
        out.append("")
        out.extend(_model_lines(model))
    return terminal_lines("\n".join(out) + "\n")


def _model_lines(model: Model) -> list[str]:
    """One model's block: what it is, its inputs, sizes, assertions and problems."""
    out = []
    device = t(model.device or "unknown device")
    cc = model.metadata.get("AOTI_COMPUTE_CAPABILITY")
    extra = f", sm_{t(cc)}" if cc else ""
    extra += ", package_cpp_only" if model.cpp_only else ""
    out.append(f"model {t(repr(model.name))} ({device}{extra})")
    if model.wrapper_path:
        out.append(f"  wrapper: {t(model.wrapper_path)}")
    if model.metadata:
        meta = ", ".join(f"{k}={v}" for k, v in sorted(model.metadata.items()) if v not in ("", None))
        out.append(f"  metadata: {t(meta)}")
    if model.checks_gated:
        out.append("  input checks: run only when AOTI_RUNTIME_CHECK_INPUTS=1 is set")
    elif model.checks_gated is False:
        out.append("  input checks: run at every call")
    out.append(f"  inputs ({len(model.inputs)}):")
    out.extend("    " + line for line in _table(_input_rows(model)))
    out.extend(_size_lines(model))
    out.append(f"  kernels: {len(model.kernels)}, launches: {len(model.launches)}")
    out.append(f"  assertions ({len(model.assertions)}):")
    out.extend(_assertion_lines(model))
    for problem in model.problems:
        where = f" ({t(problem.location)})" if problem.location else ""
        out.append(f"  problem: {t(problem.message)}{where}")
    return out


def _input_rows(model: Model) -> list[list[str]]:
    """The inputs table: one row per dim, the input's own cells on its first."""
    rows = [["#", "name", "dtype", "dim", "symbol", "compiled", "enforced"]]
    relations = _relations(model)
    for inp in model.inputs:
        name = t(inp.name + (f" ({inp.user_name})" if inp.user_name else ""))
        if not inp.dims:
            rows.append([str(inp.index), name, t(inp.dtype or "?"), "-", "-", "-", "-"])
        for dim in inp.dims:
            first = dim.dim == 0
            declared = declared_clause(dim)
            rel = relations.get((inp.index, dim.dim))
            if rel is not None:
                declared += f", multiple of {rel.n} ({rel.n}*{rel.symbol}" + \
                    (f"{rel.offset:+d}" if rel.offset else "") + \
                    (f", checked: {enforced('cell', rel.enforced)})" if rel.enforced != dim.enforced else ")")
            rows.append([str(inp.index) if first else "", name if first else "", t(inp.dtype or "?") if first else "",
                         str(dim.dim), t(dim.symbol or "-"), t(_range(dim) + declared),
                         enforced("cell", dim.enforced)])
    return rows


def _size_lines(model: Model) -> list[str]:
    """Layouts, constants, and the sizes the package derives or reads from data."""
    out = []
    laid = [inp for inp in model.inputs if inp.strides is not None]
    if laid:
        out.append("  layout: " + ", ".join(
            f"{t(inp.display)} {t(inp.dtype or '?')} strides {t(stride_text(inp.strides))} "
            f"({enforced('cell', inp.layout_enforced)})" for inp in laid))
    if model.constants:
        out.append(f"  constants ({len(model.constants)}): "
                   + t(", ".join(f"{c.name}{list(c.shape) if c.shape else ''}" for c in model.constants)))
    derived = [s for s in model.symbols.values() if s.source is None and not s.is_stride and not s.unbacked]
    if derived:
        out.append("  derived sizes: " + t(", ".join(f"{s.name} = {s.expr}" for s in derived)))
    unbacked = [s for s in model.symbols.values() if s.unbacked]
    if unbacked:
        out.append("  data-dependent sizes: " + t(", ".join(
            f"{s.name} (from the values of "
            + (", ".join(model.input_text(i) for i in s.value_inputs if i < len(model.inputs)) or "an intermediate tensor")
            + (f"; checked {span(s.min, s.max)}" if s.min is not None or s.max is not None else "") + ")"
            for s in unbacked)))
    return out


def _assertion_lines(model: Model) -> list[str]:
    """Each assertion, where it is, the user's code behind it and its chain to the input."""
    out = []
    attributor = source.Attributor(model) if model.graph else None
    for a in model.assertions:
        out.append(f"    {t(a.location)}")
        out.append(f"      {t(a.kernel)}: \"{t(a.message)}\"")
        found = source.for_assertion(attributor, a) if attributor is not None else None
        if found is not None:
            out.append(f"      source: {t(found.describe())}" + (f": {t(found.code)}" if found.code else ""))
        if not a.linked:
            out.append(f"      not linked: {t(a.unlinked_reason)}")
        for line in a.chain:
            out.append(f"      -> {t(line)}")
    return out
