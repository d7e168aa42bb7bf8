"""The input layout contract: the strides and dtype every kernel assumes of an input, which the
package checks only with AOTI_RUNTIME_CHECK_INPUTS=1."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..query import witness as W
from ..core.findings import Finding, Severity
from ..core.model import Enforcement, Input, Model, input_position
from ..query.severity import Consequence
from . import Case, Context, Rule, register
from .bounds import model_location
from .words_inputs import UncheckedInputLayoutWords

_FLOATS = ("float32", "float16", "bfloat16")
_OTHER_DTYPE = {"float32": "float64", "float16": "float32", "bfloat16": "float32", "float64": "float32",
                "int64": "int32", "int32": "int64"}


def laid_out(model: Model) -> list[Input]:
    """Inputs whose layout the kernels assume and only the variable (or nothing) checks."""
    return [inp for inp in model.inputs if inp.strides and inp.layout_enforced != Enforcement.ALWAYS
            and any(isinstance(s, int) or s for s in inp.strides)]


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= max(size, 1)
    return tuple(reversed(out))


def _differs(shape: tuple[int, ...], got: tuple[int, ...], want: tuple[float | int | None, ...]) -> bool:
    """A layout reads other elements when a dim of more than one element has another stride."""
    return 0 not in shape and any(w is not None and n > 1 and g != w for n, g, w in zip(shape, got, want))


def _tuple(values) -> str:
    values = list(values)
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def layout_witnesses(model: Model, inp: Input, shape: tuple[int, ...]) -> list[tuple[str, str]]:
    """(short, full) witnesses a user recognises, each a tensor of the right shape whose layout or dtype
    differs from the compiled one: `x.t()` of a transposed tensor, a row slice of a padded batch,
    channels_last, another dtype; only those that the compiled strides really do not match. `short`
    names the input only by its user name (`x.t()`), else says what it is (`a transposed view`)."""
    want = tuple(W.evaluate_at(model, s) if isinstance(s, str) else s for s in inp.strides or ())
    want = tuple(int(w) if isinstance(w, (int, float)) and not math.isnan(w) else None for w in want)
    name, dtype = inp.display, inp.dtype or "float32"
    user = inp.user_name
    make = "torch.randn" if dtype in _FLOATS else "torch.zeros"
    out: list[tuple[str, str]] = []

    def call(sizes: tuple[int, ...], of: str) -> str:
        kind = "" if of == "float32" and make == "torch.randn" else f", dtype=torch.{of}"
        return f"{make}({', '.join(map(str, sizes))}{kind})"

    def add(short: str, expr: str, strides: tuple[int, ...], other: str | None = None) -> None:
        if other is None and not _differs(shape, strides, want):
            return
        full = UncheckedInputLayout.MESSAGES["unchecked-input-layout.witness"].format(
            name=name, expr=f"`{expr}`", shape=_tuple(shape), strides=_tuple(strides),
            dtype=f", {other} where {dtype} is compiled" if other else "")
        out.append((short, full))

    if len(shape) == 4:
        _, c, h, w = shape
        add(f"{user}.to(memory_format=torch.channels_last)" if user else "channels_last",
            f"{call(shape, dtype)}.to(memory_format=torch.channels_last)", (h * w * c, 1, w * c, c))
    if len(shape) >= 2:
        swapped = (*shape[:-2], shape[-1], shape[-2])
        base = _contiguous(swapped)
        strides = (*base[:-2], base[-1], base[-2])
        method = "t()" if len(shape) == 2 else "transpose(-1, -2)"
        add(f"{user}.{method}" if user else "a transposed view", f"{call(swapped, dtype)}.{method}", strides)
        padded = (*shape[:-1], 2 * shape[-1])
        index = ", ".join([":"] * (len(shape) - 1) + [f":{shape[-1]}"])
        add(f"{user}[..., :{shape[-1]}] of a padded batch" if user else "a slice of a padded batch",
            f"{call(padded, dtype)}[{index}]", _contiguous(padded))
    if len(shape) == 1:
        add(f"{user}[::2]" if user else "a strided view", f"{call((2 * shape[0],), dtype)}[::2]", (2,))
    other = _OTHER_DTYPE.get(dtype)
    if other is not None:
        add(f"{user}.to(torch.{other})" if user else other, call(shape, other), _contiguous(shape), other)
    return out


@register
class UncheckedInputLayout(UncheckedInputLayoutWords, Rule):
    """Inputs must have the layout and dtype the package was compiled for, and nothing checks it by default.

    ## What it does
    Reads each input's compiled strides and dtype from the package: the stride checks of
    `check_input_N` (`if (8 != arg0_1_stride[0])`), run_impl's `assert_size_stride` for strides in size
    symbols (`{s27, 1L}`, torch >= 2.13) and the dtype check. Inductor generates those checks, but
    they run only with `AOTI_RUNTIME_CHECK_INPUTS=1`. One finding per model lists the inputs whose
    layout only that variable checks, with tensors of the right shape that break it: a transposed
    view (`x.t()`), a row slice of a padded batch (`torch.randn(6, 16)[:, :8]`), `channels_last` for a
    4-d input, another dtype (float64 for float32).

    Every package built with the default configuration has this property, so the finding is `info`
    unless the deployment is declared not to set the variable (`--runtime-checks off`: `warning`,
    the model returns wrong values silently); with `--runtime-checks on` it is not reported.

    ## Why it matters
    Every kernel indexes the input with the compiled strides (`in_ptr0[x0 + 8*x1]`) and reads its
    bytes as the compiled dtype. A tensor of the right shape in another layout is read element by
    element at the wrong places, and a float64 tensor is read as float32 pairs of bytes: the call
    returns a result of the right shape with wrong values, and no error. Eager PyTorch, and the same
    package with `AOTI_RUNTIME_CHECK_INPUTS=1`, give the right values or a clear error. Views are
    common in serving code: a transposed projection, a slice of a padded batch buffer, an image
    pipeline that converts to channels_last.

    ## Example
    ```python
    class M(torch.nn.Module):
        def forward(self, x, idx):          # x: [n, 8] float32, compiled strides (8, 1)
            return x[idx] * 2 + x.sum(0)
    idx = torch.tensor([0, 2, 5])
    f(torch.randn(8, 6).t(), idx)           # strides (1, 6): max abs difference from eager 9.2
    f(torch.randn(6, 16)[:, :8], idx)       # strides (16, 1): max abs difference 8.8
    f(torch.randn(6, 8, dtype=torch.float64), idx)   # float32 garbage (difference 2.4e25)
    # with AOTI_RUNTIME_CHECK_INPUTS=1 each call raises instead:
    #   input_handles[0]: unmatched stride value at 0, expected: 8, but got: 1
    #   input_handles[0]: unmatched dtype, expected: 6(at::kFloat), but got: 7
    ```
    (CPU package of torch 2.13, `torch.manual_seed(0)`, measured by tests/test_layout_runtime.py.)

    ## Fix
    Pass contiguous tensors of the compiled dtype (`x.contiguous()`, `x.to(torch.float32)`), or run
    with `AOTI_RUNTIME_CHECK_INPUTS=1` so that the package rejects other layouts. The guard that
    `aoti-lint contract PKG --emit python` writes checks `.stride()` (computed from the shape for
    strides in size symbols) and `.dtype` of every input that has them.
    """

    name = "unchecked-input-layout"
    code = "AOTI019"
    consequence = Consequence.ASSUMED

    VALID = (
        # torch 2.6 records no input checks: no layout to compare with.
        Case("fixtures/versions/2.6/gather_dyn.cpu.stripped.pt2"),
        # The deployment sets AOTI_RUNTIME_CHECK_INPUTS=1: the package rejects other layouts itself.
        Case("fixtures/gather_dyn.cpu.stripped.pt2", runtime_checks="on"),
        # The same package built to run its input checks at every call (the gate removed): enforced.
        Case("fixtures/gather_dyn.cpu.stripped.pt2",
             edit=(".wrapper.cpp", rb"if \(!_check_aoti_runtime_check_inputs_env\(\)\)\{", rb"if (false){")),
    )
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2",
             {"message_key": "unchecked-input-layout", "input": 0, "severity": Severity.INFO},
             exported="fixtures/gather_dyn.ep.pt2"),
        Case("fixtures/real/bert.cpu.stripped.pt2",   # strides (seq, 1) from assert_size_stride
             {"message_key": "unchecked-input-layout", "input": 0}),
        # A deployment declared not to set the variable: the wrong values are the consequence.
        Case("fixtures/real/resnetish.cpu.stripped.pt2",
             {"message_key": "unchecked-input-layout", "input": 0, "severity": Severity.WARNING},
             exported="fixtures/real/resnetish.ep.pt2", runtime_checks="off"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        inputs = laid_out(model)
        if not inputs:
            return
        shapes = W.witness_shapes(model)
        witnesses: list[str] = []
        shorts: list[str] = []
        for n, inp in enumerate(inputs):
            # Every witness of the first input; one of each other input (a report stays readable).
            for short, full in layout_witnesses(model, inp, shapes[inp.index])[:None if n == 0 else 1]:
                shorts.append(f"`{short}`" if inp.user_name else short)
                witnesses.append(full)
        listed = ", ".join(f"{inp.display} ({inp.dtype or '?'}, strides {_stride_text(model, inp)})" for inp in inputs)
        env = all(inp.layout_enforced == Enforcement.ENV for inp in inputs)
        enforcement = ("only AOTI_RUNTIME_CHECK_INPUTS=1 checks them" if env else
                       "nothing checks them")
        off = ctx.runtime_checks == "off"
        names = ", ".join(f"`{inp.user_name}`" if inp.user_name else input_position(inp.index) for inp in inputs[:3])
        if len(inputs) > 3:
            names += f" and {len(inputs) - 3} more"
        fields = dict(inputs=listed, enforcement=enforcement, names=names,
                      example=shorts[0] if shorts else "a transposed view",
                      deployment=self.MESSAGES["unchecked-input-layout.off"] if off else "",
                      calls=", ".join(f"`{inp.display}.contiguous()`" for inp in inputs[:3]))
        location = inputs[0].layout_location or model_location(model)
        yield self.finding(
            model, ctx, self.MESSAGES["unchecked-input-layout"].format(**fields), location, subject=inputs[0],
            # Production declared not to set the variable: wrong values, silently, not tied to one op.
            consequence=Consequence.SILENT if off else None, contract=False,
            input=inputs[0].index, witnesses=tuple(witnesses),
            fix=self.FIXES["unchecked-input-layout"].format(**fields),
            key="layout:" + ",".join(f"in{inp.index}" for inp in inputs))


def _stride_text(model: Model, inp: Input) -> str:
    return _tuple("?" if s is None else W.display_expr(model, s) if isinstance(s, str) else s
                  for s in inp.strides or ())
