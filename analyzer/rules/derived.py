"""Derived dims: sizes the package assumes to be a multiple of a constant but does not check."""

from __future__ import annotations

from typing import Iterable

from ..query import guards as G, relations as R, sizes, witness as W
from ..core.findings import Finding, Location
from ..core.model import Enforcement, Evidence, Model, Relation, where
from ..core.dimtext import span
from ..query.severity import Consequence
from . import Case, Context, Rule, register
from .words_inputs import UnenforcedDivisibilityWords
from ..core.messages import enforced


def _relation_text(rel: Relation) -> str:
    text = f"{rel.n}*{rel.symbol}"
    return text + (f" + {rel.offset}" if rel.offset > 0 else f" - {-rel.offset}" if rel.offset < 0 else "")


@register
class UnenforcedDivisibility(UnenforcedDivisibilityWords, Rule):
    """A dynamic dimension the package assumes to be a multiple of a constant is not checked.

    ## What it does
    Finds input dims the package was compiled to take as `n*k` (an export with `20 * Dim("k")`, a conv
    stride, a patch size, Swin's 2x2 patch merging, a `view(-1, 2)`) when nothing rejects other sizes
    by default. The relation is read by `analyzer.query.relations` from the package (run_impl's quotient
    `int64_t s6 = (1.0/20.0)*arg5_1_size_1;` or `c10::div_floor_integer`, and the expected size
    `20L*s6` or stride of `assert_size_stride`) and from the exported program (the dim's expression
    `20*s6`, `s6`'s range constraint). The only check is that `assert_size_stride`: it runs only with
    `AOTI_RUNTIME_CHECK_INPUTS=1` (torch 2.13) or is absent (torch 2.11 CUDA wrappers);
    `check_input_N` checks the range (80..16000), not the multiple. The witness is the smallest size
    inside the compiled (and declared) range that breaks the relation. Severity: error (the package
    computes with the rounded size: silent wrong values, confirmed at run time on every real fixture).
    A relation only the exported program declares (run_impl reads no quotient) is not reported: it
    shapes witnesses and the contract's guard only; nor is a quotient that is a patch convolution's
    own output size or a strided slice's length (`ps0 = s0 // 8`, `(s0 + 3) // 4` of a size the graph
    holds as `s0`: the package computes them from the real size, as eager does).

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
    Check `x.shape[1] % 20 == 0` before calling the model (pad or trim to a multiple): the guard
    `aoti-lint contract PKG --emit python` writes checks it. Or run with `AOTI_RUNTIME_CHECK_INPUTS=1`
    so that the package's own size check rejects other lengths, where the package has that check
    (torch 2.13 CPU and CUDA builds; torch 2.11 CUDA wrappers have none).
    """

    name = "unenforced-divisibility"
    code = "AOTI014"
    consequence = Consequence.FAILS
    op = "the kernel's size arithmetic"
    VALID = (Case("fixtures/real/gpt2.cpu.stripped.pt2", exported="fixtures/real/gpt2.ep.pt2"),
             Case("fixtures/real/resnetish.cpu.stripped.pt2"),
             # ViT's 32x32 images are static: patch 8 divides them at compile time.
             Case("fixtures/real/vit.cpu.stripped.pt2", exported="fixtures/real/vit.ep.pt2"),
             # YOLOS on CUDA: `ps0 = s0 // 8` is its k8 s8 patch convolution's own output size.
             Case("fixtures/stranger7/cuda/yolos.cuda.stripped.pt2"),
             # `ps2 = (s53 + 3) // 4`, the length of `xyz[:, ::4]`, computed from the size s53 itself.
             Case("fixtures/stranger10/cuda/ball_query.cuda.stripped.pt2"))
    INVALID = (
        # `20 * Dim("k", min=4, max=800)` for stride-20 convolutions: 801 runs as 800.
        Case("fixtures/real/wav2vec2_fe.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0,
                                                            "dim": 1}, exported="fixtures/real/wav2vec2_fe.ep.pt2"),
        Case("fixtures/real/pairs.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0, "dim": 0}),
        Case("fixtures/real/patch_embed.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "dim": 2}),
        # transformers' SwinPatchMerging over a [batch, 2*h, 2*w, 16] map: eager pads odd sizes, the package floors.
        Case("fixtures/real/swin_merge.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0,
                                                          "dim": 1}, exported="fixtures/real/swin_merge.ep.pt2"),
        # `2*k + 1` (a U-Net skip): `s6 = (-1.0/2.0) + (1.0/2.0)*size`; an even length runs as the odd one below.
        Case("fixtures/real/unet_skip.cpu.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0,
                                                         "dim": 2}, exported="fixtures/real/unet_skip.ep.pt2"),
        # torch 2.11 CUDA: no assert_size_stride at all, so AOTI_RUNTIME_CHECK_INPUTS=1 does not help.
        Case("fixtures/real/cuda/wav2vec2_fe.cuda.stripped.pt2", {"message_key": "unenforced-divisibility", "input": 0,
                                                                  "dim": 1, "fix_key": "unenforced-divisibility.none"},
             exported="fixtures/real/wav2vec2_fe.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for rel in model.relations:
            if rel.enforced == Enforcement.ALWAYS:
                continue
            size = R.breaking_size(model, rel.ref)
            if size is None:
                continue
            ref = rel.ref
            if Evidence.QUOTIENT not in rel.evidence:
                continue     # declared only: nothing says how the package reads the dim
            if R.from_own_size(model, rel):
                continue
            # A size that breaks none of export's own guards too (BEiT's patch grid): what happens
            # there is this assumption's doing alone.
            size, base = _keeping_guards(model, rel, size)
            display = W.dim_display(model, ref)
            fields = dict(dim_display=display, where=where(ref), n=rel.n,
                          symbol=rel.symbol, relation=_relation_text(rel), assumed=R.multiple_text(rel), quotient=_quotient_text(rel, display),
                          enforcement=enforced("sentence", rel.enforced), size=size, remainder=rel.offset % rel.n,
                          rounded=(size - rel.offset) // rel.n * rel.n + rel.offset,
                          check_expr=W.check_expr(model, ref), symbol_range=_symbol_range(rel))
            chain = [self.CHAIN["unenforced-divisibility"].format(**fields)]
            if Evidence.EXPORTED in rel.evidence:
                chain.append(self.CHAIN["unenforced-divisibility.declared"].format(**fields))
            message = self.MESSAGES["unenforced-divisibility"]
            fix = self.FIXES["unenforced-divisibility" if rel.enforced == Enforcement.ENV else "unenforced-divisibility.none"]
            yield self.finding(
                model, ctx, message.format(**fields), rel.location or Location(model.wrapper_path or model.name),
                subject=rel, input=ref.input, dim=ref.dim, symbol=rel.symbol, witness=W.witness(model, {**base, ref: size}),
                fix=fix.format(**fields), chain=tuple(chain), key=f"divisible:in{ref.input}.d{ref.dim}%{rel.n}")


def _keeping_guards(model: Model, rel: Relation, size: int) -> tuple[int, dict]:
    """The smallest size from `size` on that breaks the relation and no guard of the exported program
    (with the other dims where the guards hold), else `size` itself."""
    dim = model.known_dim(rel.ref)
    high = sizes.effective_max(dim)
    top = size + G.WINDOW if high is None else min(high, size + G.WINDOW)
    found = G.keeping(model, rel.ref, (v for v in range(size, top + 1) if not rel.fits(v)))
    return found if found is not None else (size, {})


def _quotient_text(rel: Relation, display: str) -> str:
    inner = f"({display} - {rel.offset})" if rel.offset > 0 else f"({display} + {-rel.offset})" \
        if rel.offset < 0 else display
    return f"{inner} // {rel.n}"


def _symbol_range(rel: Relation) -> str:
    if rel.symbol_min is None and rel.symbol_max is None:
        return ""
    return f" with {rel.symbol} in {span(rel.symbol_min, rel.symbol_max)}"
