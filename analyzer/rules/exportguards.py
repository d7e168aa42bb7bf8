"""Guards the exported program keeps (`guards_code`) that no check of the package enforces."""

from __future__ import annotations

from typing import Iterable

from ..query import guardforms as GF
from ..query import guards as G
from ..query import padguard as PG
from ..query import witness as W
from ..core.findings import DimWitness, Finding, Severity
from ..query.severity import Consequence
from ..core.messages import listed
from ..core.model import DimRef, Model, where
from ..core.dimtext import compiled_span, declared_span
from ..query.sizes import effective_max, effective_min
from . import Case, Context, Rule, register
from . import enforcement as E
from .bounds import model_location
from .words_inputs import UncheckedExportGuardWords


def _user_text(model: Model, text: str) -> str:
    """`L['a'].size()[2]` -> `a.shape[2]` (the check the user writes), else the text as is."""
    out = text
    for inp in model.inputs:
        name = inp.user_name or inp.name
        out = out.replace(f"L['{name}'].size()", f"{name}.shape").replace(f"L['{name}'].stride()", f"{name}.stride()")
    return out


def _kind(model: Model, guard: str, ref: DimRef, size: int, held: int | None) -> str:
    """What the guard asks of the sizes, in a few words (the headline's): a comparison broken by a
    size below the one where every guard holds asks for a minimum, above it for a maximum; one that
    holds and fails by turns between the two (SEW's `2*((n - 1) // 2) < n - 1`: n even) is a relation."""
    if "%" in guard:
        return "a multiple"
    if not any(op in guard for op in (">", "<")):
        return "a relation"
    # Past both by more than their distance (a period of a floor's parity can be longer than it).
    if held is not None and G.flips(model, guard, ref, range(min(size, held), max(size, held) + 2 * abs(size - held)
                                                             + 64)) > 1:
        return "a relation"
    return "a maximum" if held is not None and size > held else "a minimum"


def _hint(kind: str, guard: str) -> str:
    return {"a multiple": "4 * Dim('k')" if "% 4" in guard else "a Dim of that form",
            "a minimum": "Dim('n', min=...)", "a maximum": "Dim('n', max=...)"}.get(kind, "a Dim of that form")


@register
class UncheckedExportGuard(UncheckedExportGuardWords, Rule):
    """A guard of the exported program over input sizes that no check of the package enforces.

    ## What it does
    Reads the exported program's `guards_code` (torch 2.9 and later save it in `models/<name>.json`;
    2.6-2.8 save none), the conditions the traced graph assumes of its inputs beyond the range
    constraints: `(L['a'].size()[2] % 4) == 0` from `if h % 4: pad` on an example whose height was a
    multiple of 4, `min(L['a'].size()[3] // 4, L['a'].size()[2] // 4) > 4` from Swin's
    `if min(h, w) <= window`. Each guard is parsed with Python's `ast` over a whitelist of nodes (never
    evaluated as code) and evaluated over the sizes the package accepts: the compiled range that
    `check_input_N` checks with `AOTI_RUNTIME_CHECK_INPUTS=1`, the declared range, the multiples its
    `assert_size_stride` checks, dims tied equal. A guard that such sizes make false is one that
    nothing checks, not even with the variable; the witness is each dim's smallest such size, the
    other dims at sizes where every guard holds. Of the hundreds of guards a windowed model keeps,
    the simplest that breaks at a size no simpler one does is reported (the others restate it).
    Left out are the guards export derives from strides (`max(1, ...)` products), a view's contiguity
    test (two products sharing a size factor: a crop of a padded map), a size above 1 scaled by a
    factor (`4 W' < W' H'`: more than one row of windows) and those that two size
    expressions differ (`(hp // 7) != 1`, `seq != 32`), kept for views and slices: broken, the
    package ran like eager in every probe (a window attention padded to one window, MPT at 32, a
    grid attention's crop at h = 9); a
    size above 1 (`min(...) > 1`, export's 0/1 specialization) is read as above 0 for that reason. A
    remainder by a constant compared (`h % 4 != 0`) is the model's branch and is reported. A map's
    padding being 0 (`((4 + (-1)*((h // 2) % 4)) % 4) <= 0`) on the outer of two padded dims (the
    same guard on a later dim of the input) is an info: eager crops the padded rows off, a prefix of
    the map that the package reads alike (Swin and Swin V2 ran like eager at every height probed,
    and returned wrong values at widths that break the twin guard, which stays an error). So is a
    comparison whose margin is the amount of a pad in the exported graph (`if t < n: pad(x, (0, n -
    t))`) where that amount is 0 at the witness: the traced branch pads by nothing there, as eager's
    other branch does (SEW at t = 60, 100, 140, 420 ran like eager).

    ## Why it matters
    The package is compiled from the graph export traced under those guards. An input that breaks one
    runs code traced for another branch: a height of 66 skips the padding eager does (a wrong output
    shape), a 16-pixel-high image keeps the window of 4 that eager shrinks (wrong values), all without
    an error. The package's own checks (`check_input_N`, `assert_size_stride`) see only ranges and
    strides.

    ## Example
    ```python
    def forward(self, a):               # a: [b, 3, h, w], Dim.AUTO for h and w
        if a.shape[2] % 4: a = F.pad(a, (0, 0, 0, 4 - a.shape[2] % 4))
        ...
    ep = torch.export.export(m, (torch.randn(1, 3, 64, 80),), dynamic_shapes={"a": {2: Dim.AUTO, 3: Dim.AUTO}})
    # guards_code: "(L['a'].size()[2] % 4) == 0"; the package accepts h = 66 and returns 16 rows, eager 17
    ```

    ## Fix
    Check the guard before calling the model (`a.shape[2] % 4 == 0`), or export with Dims that state it
    (`4 * Dim("k")`, `Dim("h", min=20)`) so that the package is compiled and checked for exactly those
    sizes, or export from an example that takes the general branch.

    """

    # A size that breaks the guard runs code traced for sizes that keep it: wrong values or a wrong
    # output shape from the package's size arithmetic, with and without AOTI_RUNTIME_CHECK_INPUTS=1.
    consequence = Consequence.FAILS
    op = "the package's size arithmetic (traced for sizes that keep the guard)"

    name = "unchecked-export-guard"
    code = "AOTI020"

    VALID = (
        # No exported program: the package's floors are the ops' own.
        Case("fixtures/recall/swin_win.cpu.stripped.pt2"),
        # A stride-14 patch convolution: no guard, `div_floor_integer(h, 14L)` is the conv's output size.
        Case("fixtures/recall/dino_patch.cpu.stripped.pt2", exported="fixtures/recall/dino_patch.ep.pt2"),
        # `idx.shape[0] == x.shape[0]`: the package ties the dims (unenforced-dim-equality's).
        Case("fixtures/versions/2.13/index_add.cpu.stripped.pt2", exported="fixtures/versions/2.13/index_add.ep.pt2"),
        # `y.shape[0] == 1 + x.shape[0]` (torch._check): a tie, checked with the variable (AOTI012's).
        Case("fixtures/stranger2/tai_shifted.cpu.stripped.pt2", exported="fixtures/stranger2/tai_shifted.ep.pt2"),
        # `feats.shape[1] == xyz.shape[1]` (one Dim): the torch 2.11 CUDA package never reads feats' n and
        # checks the equality nowhere: a tie (AOTI012's), whose breaking inputs eager rejects too.
        Case("fixtures/stranger10/cuda/ball_query.cuda.stripped.pt2", exported="fixtures/stranger10/ball_query.ep.pt2"),
        # `4 W' < W' H'`: more than one row of windows, scaled by the row's width (CPU runs h = 1, 7 like
        # eager); the crop's contiguity test (two products sharing a factor).
        Case("fixtures/stranger14/cuda/maxvit_grid.cuda.stripped.pt2", exported="fixtures/stranger14/maxvit_grid.ep.pt2"),
        Case("fixtures/stranger14/maxvit_grid.cpu.stripped.pt2", exported="fixtures/stranger14/maxvit_grid.ep.pt2"),
    )
    INVALID = (
        # transformers' Swin as a toy: `if h % 4: pad` and `if min(h, w) <= window` under Dim.AUTO.
        Case("fixtures/recall/swin_win.cpu.stripped.pt2", {"message_key": "unchecked-export-guard", "input": 0,
                                                           "dim": 2, "severity": Severity.ERROR},
             exported="fixtures/recall/swin_win.ep.pt2"),
        # transformers' Swin V2: the bottom pad's guard (the rows are outer to the padded columns) is
        # an info; the right pad's, on the width, an error.
        Case("fixtures/stranger7/swinv2.cpu.stripped.pt2", {"input": 0, "dim": 2, "severity": Severity.INFO,
                                                            "witness": "x.shape = (2, 3, 4, 32)"},
             exported="fixtures/stranger7/swinv2.ep.pt2"),
        Case("fixtures/stranger7/swinv2.cpu.stripped.pt2", {"input": 0, "dim": 3, "severity": Severity.ERROR,
                                                            "witness": "x.shape = (2, 3, 32, 4)"},
             exported="fixtures/stranger7/swinv2.ep.pt2"),
        # SEW's `if upsampled < frames: pad`: the graph's pad amount is the guard's margin, 0 at t = 60
        # (the traced pad is by nothing there, eager's branch): an info.
        Case("fixtures/stranger9/sew.cpu.stripped.pt2", {"input": 0, "dim": 1, "severity": Severity.INFO,
                                                         "witness": "x.shape = (2, 60)"},
             exported="fixtures/stranger9/sew.ep.pt2"),
        # `h >= 10` checked by nothing on CUDA; at 8 a valid convolution raises in eager and the package alike.
        Case("fixtures/stranger11/cuda/unet_crop.cuda.stripped.pt2", {"input": 0, "dim": 2, "severity": Severity.INFO},
             exported="fixtures/stranger11/unet_crop.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for broken in G.unchecked(model):
            base = dict(broken.base)
            dims = [(ref, size, W.witness(model, {**base, ref: size})) for ref, size in broken.dims]
            ref, size, _ = dims[0]
            sizes_text = listed([f"{W.dim_display(model, r)} = {s}" for r, s, _ in dims], " or ")
            kind = _kind(model, broken.guard, ref, size, G.base_sizes(model).get(ref))
            fields = dict(guard=broken.guard, kind=kind, breaks=sizes_text,
                          is_are="is" if len(dims) == 1 else "are", breaks_verb="breaks" if len(dims) == 1 else "break",
                          also=self.MESSAGES["unchecked-export-guard.also"].format(
                              count=len(broken.also), s="" if len(broken.also) == 1 else "s") if broken.also else "",
                          size=size, guard_user=_user_text(model, broken.guard), hint=_hint(kind, broken.guard),
                          where=where(ref))
            chain = [self.CHAIN["unchecked-export-guard"].format(
                guard=broken.guard, assignment=W.assignment_text(model, {**base, r: s})) for r, s, _ in dims]
            for r, _, _ in dims:
                dim = model.known_dim(r)
                chain.append(self.CHAIN["unchecked-export-guard.range"].format(
                    dim_display=W.dim_display(model, r), compiled=compiled_span(dim),
                    declared=declared_span(dim),
                    enforcement=f"sizes {effective_min(dim)}..{effective_max(dim) or 'inf'} pass every check "
                                "of the package that concerns it"))
            if base:
                chain.append(self.CHAIN["unchecked-export-guard.base"].format(assignment=W.assignment_text(model, base)))
            # The outer of two padded dims: its breaking sizes ran like eager wherever probed.
            outer = GF.outer_crop_guard(broken.guard, model.guards)
            if outer is not None:
                chain.append(self.CHAIN["unchecked-export-guard.outer-crop"].format(
                    dim_display=W.dim_display(model, ref), other=_user_text(model, outer)))
            # A pad to a length whose test the guard is: broken, the traced pad is by 0, eager's branch.
            amount = PG.zero_pad(model, broken.guard, [(r, s) for r, s, _ in dims]) if outer is None else None
            if amount is not None:
                chain.append(self.CHAIN["unchecked-export-guard.zero-pad"].format(
                    breaks=sizes_text, amount=_user_text(model, amount)))
            # Where a convolution raises at every witness (its input smaller than its kernel), eager
            # raises the same error: the caller's input, not the package's failure.
            rejected = [E.convolution_rejects(model, {**base, r: s}) for r, s, _ in dims]
            yield self.finding(
                model, ctx, self.MESSAGES["unchecked-export-guard"].format(**fields), model_location(model), subject=broken,
                consequence=Consequence.ASSUMED if outer is not None or amount is not None else None,
                eager_rejects=rejected[0] if all(rejected) else None, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witnesses=tuple(w for _, _, w in dims), fix=self.FIXES["unchecked-export-guard"].format(**fields),
                chain=tuple(chain),
                dims=tuple(DimWitness(r.input, r.dim, s, w) for r, s, w in dims) if len(dims) > 1 else (),
                key=f"guard:{broken.guard}")
