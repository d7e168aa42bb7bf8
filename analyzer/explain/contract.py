"""The input contract a package really enforces, and a guard the user can paste.

`build(model, findings)` reads only the linked model (its inputs, compiled ranges and the records
behind the findings) and the findings, and returns a `Contract`: per input its dtype, device and
each dim's compiled range with who checks it, and the `Condition`s under which a call fails in a
way the package does not reject by default (an unenforced range, an empty index bound, a constant
table exceeded, a division or a reduction over an empty size).

`render_text` and `render_json` write it; guard.py's `render_python` writes it as a guard the
user can paste.

The failing condition behind each finding is its rule's to state (`Rule.guard_condition`, over the
record the finding is about); the contract adds the compiled ranges, ties and multiples.
"""

from __future__ import annotations

import ast
import enum
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..query import externs, sizes
from ..query import witness as W
from ..core.findings import Finding
from ..link.input_layout import stride_text
from ..core.model import Dim, DimRef, Enforcement, Evidence, Model, input_position, shape_text
from ..core.dimtext import compiled_span, declared_clause
from ..core.messages import enforced
from ..core.untrusted import terminal as _t, terminal_lines
from ..rules import Rule, all_rules
from ..rules.derived import UnenforcedDivisibility
from ..rules.ranges import UnenforcedLowerBound




class Kind(enum.Enum):
    """Why a call fails: what the guard's message says."""

    RANGE = "compiled-range"
    STATIC = "static-size"
    TIE = "dim-equality"
    EMPTY_INDEX = "empty-index-bound"
    TABLE = "constant-table"
    DIVISION = "division-by-empty-size"
    REDUCTION = "empty-reduction"
    MULTIPLE = "divisibility"


@dataclass(frozen=True)
class DimContract:
    dim: int
    display: str                      # x.shape[0]
    value: int | None = None          # a static size
    min: int | None = None
    max: int | None = None
    declared_min: int | None = None
    declared_max: int | None = None
    enforced: Enforcement = Enforcement.NONE
    tied_expr: str | None = None      # must equal this (in user names)

    @property
    def compiled(self) -> str:
        return str(self.value) if self.value is not None else compiled_span(self)


@dataclass(frozen=True)
class InputContract:
    index: int
    name: str                         # the package's name (arg0_1)
    user_name: str | None
    dtype: str | None
    device: str | None
    dtype_enforced: Enforcement
    dims: tuple[DimContract, ...]
    # The compiled strides (as model.Input's) and who rejects another layout.
    strides: tuple[int | str | None, ...] | None = None
    layout_enforced: Enforcement = Enforcement.NONE

    @property
    def display(self) -> str:
        return self.user_name or self.name


@dataclass(frozen=True)
class Condition:
    """A call fails when `expr` (over root size symbols) holds; `ref` is the dim the message names."""

    kind: Kind
    expr: str
    ref: DimRef
    reason: str                       # what happens, in words
    code: str | None = None           # the finding's code, when a finding says it


@dataclass
class Contract:
    package: str
    model: str
    device: str | None
    checks_gated: bool | None
    inputs: list[InputContract] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    # symbol -> (input, dim) for the expressions in `conditions`
    symbols: dict[str, DimRef] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)   # findings a shape guard cannot check


def build(package: str, model: Model, findings: Iterable[Finding] = ()) -> Contract:
    """The contract of one model: inputs as compiled, and the failing conditions behind `findings`."""
    contract = Contract(package=package, model=model.name, device=model.device, checks_gated=model.checks_gated,
                        symbols=W.symbol_dims(model))
    gate = Enforcement.ENV if model.checks_gated else Enforcement.ALWAYS if model.checks_gated is False else Enforcement.NONE
    for inp in model.inputs:
        dims = tuple(_dim_contract(model, inp.index, d) for d in inp.dims)
        contract.inputs.append(InputContract(inp.index, inp.name, inp.user_name, inp.dtype, inp.device,
                                             gate if (inp.dtype or inp.device) else Enforcement.NONE, dims,
                                             inp.strides, Enforcement(inp.layout_enforced)))
    rules = {r.code: r() for r in all_rules()}
    for f in findings:
        rule = rules.get(f.code)
        if f.model != model.name or rule is None or not rule.guarded or rule.range_guarded:
            continue  # a range-guarded rule's witnesses fail the compiled range, checked per dim below
        condition = _finding_condition(model, rule, f)
        if condition is None:
            contract.skipped.append(f"{f.code} at {f.location}: {f.witness or 'no witness'}")
        elif condition not in contract.conditions:
            contract.conditions.append(condition)
    for inp in model.inputs:
        for d in inp.dims:
            contract.conditions.extend(_range_conditions(model, DimRef(inp.index, d.dim), d))
    contract.conditions.extend(_relation_conditions(model))
    return contract


def _relation_conditions(model: Model) -> list[Condition]:
    """A dim the package takes to be `n*k + b` (analyzer.query.relations) whose check is gated or absent:
    other sizes run as the nearest smaller one, with wrong values (AOTI014)."""
    out = []
    for rel in model.relations:
        if rel.enforced == Enforcement.ALWAYS:
            continue
        shown = model.inputs[rel.ref.input].dim_display(rel.ref.dim)
        size = f"__in{rel.ref.input}_d{rel.ref.dim}"
        expr = f"({size} - {rel.offset}) % {rel.n} != 0" if rel.offset else f"{size} % {rel.n} != 0"
        read = Evidence.QUOTIENT in rel.evidence
        out.append(Condition(Kind.MULTIPLE, expr, rel.ref,
                             f"the package was compiled for {shown} == {rel.n}*{rel.symbol}"
                             + (f" + {rel.offset}" if rel.offset else "")
                             + f" ({enforced('unchecked', rel.enforced)}): other sizes "
                             + ("run as the nearest smaller one and return wrong values" if read else
                                "break what it was compiled for"), UnenforcedDivisibility.code if read else None))
    return out


def _dim_contract(model: Model, index: int, d: Dim) -> DimContract:
    return DimContract(d.dim, model.inputs[index].dim_display(d.dim), d.value, d.min, d.max, d.declared_min,
                       d.declared_max, Enforcement(d.enforced),
                       W.display_expr(model, d.tied_expr) if d.tied_expr else None)


def _range_conditions(model: Model, ref: DimRef, d: Dim) -> list[Condition]:
    """The compiled range of a dim the package does not always check: sizes outside it were never
    compiled for (AOTI002), a static size that differs, a dim that must equal another (AOTI012)."""
    if d.enforced == Enforcement.ALWAYS and (not d.tied_expr or d.tie_enforced == Enforcement.ALWAYS):
        return []
    shown = model.inputs[ref.input].dim_display(ref.dim)
    out = []
    symbol = f"__in{ref.input}_d{ref.dim}"
    if d.value is not None:
        if d.enforced != Enforcement.ALWAYS:
            out.append(Condition(Kind.STATIC, f"{symbol} != {d.value}", ref,
                                 f"the package was compiled for {shown} == {d.value} only "
                                 f"({enforced('unchecked', Enforcement(d.enforced))})"))
        return out
    if d.tied_expr and d.tie_enforced != Enforcement.ALWAYS:
        out.append(Condition(Kind.TIE, f"{symbol} != {d.tied_expr}", ref,
                             f"the package assumes {shown} == {W.display_expr(model, d.tied_expr)} and reads "
                             f"past the end of a smaller tensor"))
    if d.enforced != Enforcement.ALWAYS:
        unchecked = enforced("unchecked", Enforcement(d.enforced))
        if d.min is not None and d.min > 0:
            out.append(Condition(Kind.RANGE, f"{symbol} < {d.min}", ref,
                                 f"the package was compiled for {shown} >= {d.min} "
                                 f"({_tied_check(model, ref, d.min - 1) or unchecked})",
                                 UnenforcedLowerBound.code))
        if d.max is not None and d.max < sizes.INT32_MAX:
            out.append(Condition(Kind.RANGE, f"{symbol} > {d.max}", ref,
                                 f"the package was compiled for {shown} <= {d.max} "
                                 f"({_tied_check(model, ref, d.max + 1) or unchecked})"))
    return out


def _tied_check(model: Model, ref: DimRef, size: int) -> str | None:
    """Words for run_impl's always-on check of a size tied to the dim that rejects `size`, or None."""
    tied = externs.tied_bound(model, ref, size)
    if tied is None:
        return None
    return (f"rejected at every call by run_impl's `Expected {tied.symbol} {tied.op} {tied.bound}`: "
            f"{tied.symbol}, the size {tied.call} returns, must equal {model.inputs[ref.input].dim_display(ref.dim)}")


def _finding_condition(model: Model, rule: Rule, f: Finding) -> Condition | None:
    """The expression that makes the finding's call fail, as its rule states it over the record
    the finding is about."""
    if f.input is None or f.dim is None:
        return None
    failing = rule.guard_condition(model, f)
    if failing is None:
        return None
    return Condition(Kind(failing.kind), failing.expr, DimRef(f.input, f.dim), failing.reason, f.code)


# -- text and JSON --------------------------------------------------------------------------------

def render_text(contracts: Sequence[Contract]) -> str:
    lines: list[str] = []
    for c in contracts:
        gate = {True: "input checks run only with AOTI_RUNTIME_CHECK_INPUTS=1",
                False: "input checks run at every call", None: "no input checks found"}[c.checks_gated]
        lines.append(f"{_t(c.package)}, model '{_t(c.model)}' ({_t(c.device or 'unknown device')}): {gate}")
        for inp in c.inputs:
            alias = f" ({_t(inp.name)})" if inp.user_name and inp.user_name != inp.name else ""
            lines.append(f"  {input_position(inp.index)} {_t(inp.display)}{alias}: dtype {_t(inp.dtype or '?')}, device "
                         f"{_t(inp.device or c.device or '?')} (checked: {enforced('who', inp.dtype_enforced)})")
            if inp.strides is not None:
                lines.append(f"    strides {_t(stride_text(_shown_strides(c, inp.strides or ())))} "
                             f"(checked: {enforced('who', inp.layout_enforced)})")
            width = max((len(_t(d.display)) for d in inp.dims), default=0)
            for d in inp.dims:
                declared = declared_clause(d)
                tied = f", must equal {_t(d.tied_expr)}" if d.tied_expr else ""
                lines.append(f"    {_t(d.display):<{width}}  {_t(d.compiled)}{declared}{tied}  "
                             f"(checked: {enforced('who', d.enforced)})")
        layouts = [inp for inp in c.inputs if inp.strides is not None and inp.layout_enforced != Enforcement.ALWAYS]
        if c.conditions or layouts:
            lines.append("  calls the package does not reject by default, or rejects with an error that names no input, and what happens:")
            for cond in c.conditions:
                code = f" [{cond.code}]" if cond.code else ""
                lines.append(f"    {_t(_condition_text(c, cond.expr))}: {_t(cond.reason)}{code}")
            for inp in layouts:
                dtype = f" or not {_t(inp.dtype)}" if inp.dtype else ""
                lines.append(f"    {_t(inp.display)} with strides other than "
                             f"{_t(stride_text(_shown_strides(c, inp.strides or ())))}"
                             f"{dtype}: the kernels index it as compiled and read the wrong elements [AOTI019]")
        for text in c.skipped:
            lines.append(f"  not checkable from shapes: {_t(text)}")
        lines.append("")
    return terminal_lines("\n".join(lines))


def _condition_text(c: Contract, expr: str) -> str:
    mapping = {}
    for inp in c.inputs:
        for d in inp.dims:
            mapping[f"__in{inp.index}_d{d.dim}"] = shape_text(inp.display, d.dim)
    for name, ref in c.symbols.items():
        if ref.input < len(c.inputs):
            mapping[name] = shape_text(c.inputs[ref.input].display, ref.dim)
    try:
        return emit(parse_expr(expr), mapping)
    except ValueError:
        return expr


def _shown_strides(c: Contract, strides: Sequence[int | str | None]) -> tuple[int | str | None, ...]:
    return tuple(s if s is None or isinstance(s, int) else _condition_text(c, s) for s in strides)


def render_json(contracts: Sequence[Contract]) -> str:
    out: dict[str, Any] = {"schema": "aoti-lint.contract/1", "models": []}
    for c in contracts:
        out["models"].append({
            "package": c.package, "model": c.model, "device": c.device,
            "inputs": [{"index": i.index, "name": i.name, "user_name": i.user_name, "dtype": i.dtype,
                        "device": i.device, "dtype_enforced": i.dtype_enforced.value,
                        "dims": [{"dim": d.dim, "value": d.value, "min": d.min, "max": d.max,
                                  "declared_min": d.declared_min, "declared_max": d.declared_max,
                                  "enforced": d.enforced.value, "tied": d.tied_expr} for d in i.dims],
                        "strides": list(_shown_strides(c, i.strides)) if i.strides is not None else None,
                        "layout_enforced": i.layout_enforced.value}
                       for i in c.inputs],
            "conditions": [{"kind": k.kind.value, "code": k.code, "input": k.ref.input, "dim": k.ref.dim,
                            "when": _condition_text(c, k.expr), "reason": k.reason} for k in c.conditions],
        })
    return json.dumps(out, indent=2) + "\n"


# -- conditions as Python, from a validated syntax tree (the text above and guard.py) --------------

_FUNCTIONS = {"max", "min", "floordiv", "trunc", "floor", "ceil"}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def parse_expr(expr: str) -> ast.expr:
    try:
        return ast.parse(expr, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        raise ValueError(f"cannot parse {expr[:60]!r}") from exc


def emit(node: ast.AST, names: dict[str, str], depth: int = 0) -> str:
    """Python source for a validated condition: only numbers, mapped names, arithmetic, comparisons,
    `and` and a few functions; anything else is a ValueError (the condition is then left out)."""
    if depth > 200:
        raise ValueError("expression nested too deeply")
    d = depth + 1
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return repr(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"unknown name {node.id!r}")
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return ("-" if isinstance(node.op, ast.USub) else "+") + f"({emit(node.operand, names, d)})"
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return f"({emit(node.left, names, d)} {_BINOPS[type(node.op)]} {emit(node.right, names, d)})"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return f"{emit(node.left, names, d)} {_COMPARE[type(node.ops[0])]} {emit(node.comparators[0], names, d)}"
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return " and ".join(f"({emit(v, names, d)})" for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS \
            and not node.keywords:
        return f"{node.func.id}({', '.join(emit(a, names, d) for a in node.args)})"
    raise ValueError(f"unsupported construct {type(node).__name__}")
