"""Derived dims: sizes the package assumes to be a multiple of a constant but does not check."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable

from .. import intervals
from .. import witness as W
from ..findings import Finding, Location, Severity
from ..model import DimRef, Model
from . import Case, Context, Rule, register
from ..messages import CHAIN, ENFORCEMENT, FIXES, MESSAGES

_QUOTIENT = re.compile(r"^trunc\((?P<c>.+?) \* (?P<x>\w+)\)$|^floordiv\((?P<x2>\w+), (?P<n>\d+)\)$")


@dataclass(frozen=True)
class Divisibility:
    """A dim read as `symbol = size // n` whose size the package takes to be `n * symbol`."""

    ref: DimRef
    n: int
    symbol: str
    enforced: str                     # "always" | "env" | "none": the size check of `n * symbol`
    location: Location | None


def divisibilities(model: Model) -> list[Divisibility]:
    """`int64_t s6 = (1.0/20.0)*arg5_1_size_1;` (a quotient of an input size) with the input's
    expected size `20L*s6` in `assert_size_stride` (gated or not)."""
    roots = W.symbol_dims(model)
    out: list[Divisibility] = []
    for sym in model.symbols.values():
        m = _QUOTIENT.match(sym.expr.replace("(", "(", 1))
        if not m:
            continue
        if m.group("x"):
            try:
                c = intervals.evaluate(m.group("c"), {})
            except ValueError:
                continue
            if not c or c <= 0:
                continue
            n = round(1 / c)
            if n < 2 or not math.isclose(n * c, 1.0, rel_tol=1e-9):
                continue
            x = m.group("x")
        else:
            n, x = int(m.group("n")), m.group("x2")
        ref = roots.get(x)
        if ref is None or n < 2:
            continue
        inp = model.inputs[ref.input]
        enforced, location = "none", None
        for check in model.size_checks:
            if check.tensor != inp.name or ref.dim >= len(check.sizes):
                continue
            size = check.sizes[ref.dim].replace(" ", "")
            if re.fullmatch(rf"\(?{n}L?\*{re.escape(sym.name)}\)?|\(?{re.escape(sym.name)}\*{n}L?\)?", size):
                enforced, location = ("env" if check.gated else "always"), check.location
                if not check.gated:
                    break
        out.append(Divisibility(ref, n, sym.name, enforced, location or sym.location))
    return out


def non_multiple(model: Model, d: Divisibility) -> int | None:
    """The smallest size in the dim's compiled/declared range that is not a multiple of n."""
    dim = model.dim(d.ref)
    if dim is None or dim.value is not None:
        return None
    low, high = W.effective_min(dim), W.effective_max(dim)
    size = max(low, 1)
    if size % d.n == 0:
        size += 1
    return size if high is None or size <= high else None


def largest_multiple_below(n: int, size: int) -> int:
    """The largest multiple of n below `size` (0 at least)."""
    return max(0, ((size - 1) // n) * n)


MESSAGES["unenforced-divisibility"] = (
    "{dim_display} ({where}) is assumed to be a multiple of {n}: the package reads {symbol} = {dim_display} "
    "// {n} and uses {n}*{symbol} as the size, but {enforcement}: a size like {size} runs as if it were "
    "{rounded} and returns wrong values without any message")
FIXES["unenforced-divisibility"] = (
    "check `{check_expr} % {n} == 0` before calling the model (pad or trim the input to a multiple of {n}), "
    "or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package's size check `{n}*{symbol}` rejects it")
CHAIN["unenforced-divisibility"] = "{symbol} = {dim_display} // {n} (read by run_impl); expected size {n}*{symbol}: {enforcement}"


@register
class UnenforcedDivisibility(Rule):
    """A dynamic dimension the package assumes to be a multiple of a constant is not checked.

    ## What it does
    Finds input dims that the package reads as a quotient (`int64_t s6 = (1.0/20.0)*arg5_1_size_1;`,
    from an export with `20 * Dim("k")`, a conv stride, a patch size or a `view(-1, 2)`) and whose
    size it then takes to be `20*s6`, when the check that the size really is `20*s6`
    (`assert_size_stride`) runs only with `AOTI_RUNTIME_CHECK_INPUTS=1` or not at all. The witness is
    the smallest size inside the compiled range that is not a multiple.

    ## Why it matters
    The compiled code computes with the rounded-down size: a length of 801 runs as 800. The result has
    the shape and values of a truncated input (or reads the input with the wrong strides), and nothing
    says so. Eager PyTorch computes the real thing or raises.

    ## Example
    ```python
    ep = torch.export.export(fe, (audio,), dynamic_shapes={"x": {1: 20 * Dim("k", min=4, max=800)}})
    pkg = torch._inductor.aoti_compile_and_package(ep)
    runner(torch.randn(2, 801))   # runs as 800 samples: wrong values, no error
    ```

    ## Fix
    Check `x.shape[1] % 20 == 0` before calling the model (pad or trim to a multiple), or run with
    `AOTI_RUNTIME_CHECK_INPUTS=1` so that the package's own size check rejects other lengths.
    """

    name = "unenforced-divisibility"
    code = "AOTI014"
    severity = Severity.ERROR
    VALID = (Case("fixtures/real/gpt2.cpu.stripped.pt2", exported="fixtures/real/gpt2.ep.pt2"),
             Case("fixtures/real/resnetish.cpu.stripped.pt2"))
    INVALID = (
        # `20 * Dim("k", min=4, max=800)` for stride-20 convolutions: 801 runs as 800.
        Case("fixtures/real/wav2vec2_fe.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0,
                                                            "dim": 1}, exported="fixtures/real/wav2vec2_fe.ep.pt2"),
        Case("fixtures/real/pairs.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0, "dim": 0}),
        Case("fixtures/real/patch_embed.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "dim": 2}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for d in divisibilities(model):
            if d.enforced == "always":
                continue
            size = non_multiple(model, d)
            if size is None:
                continue
            ref = d.ref
            fields = dict(dim_display=W.dim_display(model, ref), where=f"input {ref.input} dim {ref.dim}",
                          n=d.n, symbol=d.symbol, enforcement=ENFORCEMENT[d.enforced], size=size,
                          rounded=(size // d.n) * d.n, check_expr=W.check_expr(model, ref))
            chain = (CHAIN["unenforced-divisibility"].format(**fields),)
            yield self.finding(
                model, ctx, MESSAGES["unenforced-divisibility"].format(**fields),
                d.location or Location(model.wrapper_path or model.name),
                input=ref.input, dim=ref.dim, symbol=d.symbol, witness=W.witness(model, {ref: size}),
                fix=FIXES["unenforced-divisibility"].format(**fields), chain=chain,
                key=f"divisible:in{ref.input}.d{ref.dim}%{d.n}")
