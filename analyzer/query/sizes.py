"""The one answer to "which sizes can this input dim take?" (rules, witnesses and `why` ask here).

Two ranges matter and are kept apart:
- what the package *lets through at run time* (`accepts`, `can_be_zero`, `min_possible`): a
  static dim only its value; a dynamic dim anything >= 0 unless its range check runs at every call
  (`Enforcement.ALWAYS`), then only the checked range;
- what the package was *compiled and declared for* (`effective_min`, `effective_max`,
  `unbounded`): the intersection of the compiled range (`check_input_N`) and the exported
  program's declared range, used to pick witness sizes a caller may legitimately send.

Decided cases: a static dim of size 0 can be 0 (it always is); an always-checked dim without a
recorded minimum (`min=None`) can be 0 (the check has no lower end to reject it with).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.model import Dim, Enforcement, Model
from ..expr import intervals

if TYPE_CHECKING:
    from ..core.model import Package

# Inductor's CUDA codegen records 2**31 - 1 as the max of some dims (32-bit indexing), not a user bound.
INT32_MAX = 2**31 - 1


def min_possible(dim: Dim) -> int:
    """The smallest size that reaches the kernels at run time."""
    if dim.value is not None:
        return dim.value
    if dim.enforced == Enforcement.ALWAYS and dim.min is not None:
        return max(dim.min, 0)
    return 0


def accepts(dim: Dim | None, size: int) -> bool:
    """True when the package lets `size` through at run time for this dim (no check rejects it)."""
    if dim is None or size < 0:
        return False
    if dim.value is not None:
        return size == dim.value
    if dim.enforced != Enforcement.ALWAYS or dim.lower_unchecked and size < (dim.min or 0):
        return True
    return size >= min_possible(dim) and (dim.max is None or size <= dim.max)


def can_be_zero(dim: Dim | None) -> bool:
    """True when size 0 reaches the kernels for this dim."""
    return accepts(dim, 0)


def env_check_rejects_zero(dim: Dim | None, size: int = 0) -> bool:
    """True when setting AOTI_RUNTIME_CHECK_INPUTS=1 would make the package reject size 0 (or `size`,
    below the minimum) here."""
    return dim is not None and dim.value is None and dim.enforced == Enforcement.ENV and (dim.min or 0) > size \
        and not dim.lower_unchecked


def effective_min(dim: Dim) -> int:
    """The smallest size the compiled code and the user's declaration both allow (0 when unknown)."""
    if dim.value is not None:
        return dim.value
    lows = [v for v in (dim.min, dim.declared_min) if v is not None]
    return max(lows) if lows else 0


def effective_max(dim: Dim) -> int | None:
    """The tighter of the compiled and the declared max; None when neither bounds the dim."""
    if dim.value is not None:
        return dim.value
    highs = [v for v in (dim.max, dim.declared_max) if v is not None]
    return min(highs) if highs else None


def max_is_declared(dim: Dim) -> bool:
    """`effective_max` comes from the exported program's declaration (else from the compiled range)."""
    return dim.declared_max is not None and (dim.max is None or dim.declared_max <= dim.max)


def unbounded(dim: Dim) -> bool:
    """No real upper bound: none compiled nor declared, or only the 32-bit indexing limit."""
    high = effective_max(dim)
    return high is None or high >= INT32_MAX


def max_enforcement(dim: Dim | None) -> Enforcement:
    """Who enforces the dim's upper bound at run time: ALWAYS for a static (or unknown) dim and for a
    compiled max a check runs for at every call, ENV for a compiled max only AOTI_RUNTIME_CHECK_INPUTS=1
    checks, NONE when no compiled max exists (nothing ever checks one)."""
    if dim is None or dim.value is not None:
        return Enforcement.ALWAYS
    if dim.max is not None and dim.enforced is Enforcement.ALWAYS:
        return Enforcement.ALWAYS
    if dim.max is not None and dim.enforced is Enforcement.ENV:
        return Enforcement.ENV
    return Enforcement.NONE


def enforced_as_deployed(enforcement: Enforcement, runtime_checks: str | None) -> Enforcement:
    """Who runs a check in the deployment: with `runtime_checks == "on"` (production sets
    AOTI_RUNTIME_CHECK_INPUTS=1) the checks the variable enables run at every call; otherwise the
    package's own answer (ENV stays ENV: `off` changes severities, not what the package checks)."""
    if runtime_checks == "on" and enforcement == Enforcement.ENV:
        return Enforcement.ALWAYS
    return enforcement


def as_deployed(package: "Package", runtime_checks: str | None) -> "Package":
    """The package as the deployment runs it, for the rules: every enforcement (a dim's range, a tie,
    a derived-dim relation, an input's layout and dtype) through `enforced_as_deployed`. Unchanged
    (the same object) unless `runtime_checks == "on"`; otherwise a copy of the models' inputs and
    relations, so that every query here and in the rules sees the checks the variable enables as
    always run, and inspect/contract keep showing the package's own gates."""
    if runtime_checks != "on":
        return package
    from dataclasses import replace

    def deployed(e: Enforcement) -> Enforcement:
        return enforced_as_deployed(e, runtime_checks)

    models = []
    for model in package.models:
        inputs = [replace(inp, dims=[replace(d, enforced=deployed(d.enforced), tie_enforced=deployed(d.tie_enforced))
                                     for d in inp.dims],
                          layout_enforced=deployed(inp.layout_enforced))
                  for inp in model.inputs]
        relations = [replace(r, enforced=deployed(r.enforced)) for r in model.relations]
        models.append(replace(model, inputs=inputs, relations=relations,
                              checks_gated=False if model.checks_gated else model.checks_gated))
    return replace(package, models=models)


def bounded_extent(model: Model, extent: str) -> tuple[str, tuple[str, ...]] | None:
    """`extent` with each unbacked size replaced by the bound its op gives it (`Symbol.max_expr`: a
    repeat_interleave's length, at most its largest repeat times their count), and the symbols
    replaced; None unless it reads an unbacked size and every one it reads has such a bound. The
    extents that reach here grow with those sizes (`u0`, `min(u0, max(0, u0 - 1))`): an upper bound."""
    try:
        names = intervals.names(extent)
    except ValueError:
        return None
    unbacked = sorted(n for n in names if n in model.symbols and model.symbols[n].unbacked)
    bounds = {n: model.symbols[n].max_expr for n in unbacked}
    if not unbacked or any(b is None for b in bounds.values()):
        return None
    try:
        return intervals.simplify(intervals.substitute(extent, {n: f"({b})" for n, b in bounds.items()})), \
            tuple(unbacked)
    except ValueError:
        return None
