"""storebounds.py: which of a kernel's loads count as reading their buffer whenever the loops around
them run (read-from-empty-buffer); the rule's findings on real packages are in test_stranger2.py."""

from __future__ import annotations

import ast
import re
import zipfile

from analyzer.link.storebounds import _conditional
from conftest import FIXTURES, require


def _loads(package: str) -> list[str]:
    with zipfile.ZipFile(require(FIXTURES / package)) as z:
        text = "\n".join(z.read(n).decode() for n in z.namelist() if n.endswith(".wrapper.cpp"))
    return re.findall(r"tl\.load\(.*\)$", text, flags=re.M)


def test_a_load_masked_by_more_than_its_grid_may_never_run():
    """swin_merge's patch merging (a `cat` of four strided views) reads each view only where its own
    mask holds (`tmp4 & xmask`): with that view empty the load never runs, so it is not counted; a load
    masked by its grid alone (`xmask`, `r0_mask & xmask`, no mask) runs whenever the grid does."""
    loads = _loads("real/cuda/swin_merge.cuda.stripped.pt2")
    guarded = [text for text in loads if "tmp4 & xmask" in text]
    assert guarded and all(_conditional(ast.parse(text, mode="eval").body) for text in guarded)
    for text in ("tl.load(in_ptr0 + (x0), xmask, other=0.0)", "tl.load(in_ptr0 + x0, r0_mask & xmask)",
                 "tl.load(in_ptr3 + (r0_2), None, eviction_policy='evict_last')", "load(in_ptr0, x0 + 4 * tmp5)"):
        assert not _conditional(ast.parse(text, mode="eval").body), text
