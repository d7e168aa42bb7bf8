"""What the severity policy's two facts add to a finding's words (analyzer.query.severity decides
the severity itself): every witness outside the exported program's declared range, or a witness
eager PyTorch rejects the same way. `Rule.finding` asks here."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..core.dimtext import declared_span
from ..core.findings import Severity
from ..core import messages
from ..core.messages import CHAIN, extended
from ..query import witness as W
from ..query.severity import lowered

if TYPE_CHECKING:
    from ..core.model import Model


T = TypeVar("T")


def worded_once(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn`, a function of a few hashable values that fills templates, cached (a check copied into
    thousands of kernels says the same words: made and held once); called afresh while
    `messages.TRACE` records which templates and fields are used, so that the record does not depend
    on what ran before, and for a text longer than a line (a worker does not keep a hostile package's
    check message past its package)."""
    cached = functools.lru_cache(maxsize=1024)(fn)

    @functools.wraps(fn)
    def call(*args: Any) -> T:
        if messages.TRACE or any(isinstance(arg, str) and len(arg) > 1024 for arg in args):
            return fn(*args)
        return cached(*args)

    call.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return call


def contract_note(model: "Model", witnesses: tuple[str, ...], message: str, severity: Severity,
              chain: tuple[str, ...]) -> tuple[str, Severity, tuple[str, ...]]:
    """Witnesses outside the exported program's declared range. When every witness
    is, the finding is said to be outside the contract and drops one severity (error -> warning,
    warning -> info): the package still does not enforce it, but the caller promised not to send it.
    When only some are, a chain line says which."""
    outside = [W.outside_declared(model, w) for w in witnesses]
    if not any(outside):
        return message, severity, chain
    if not all(outside):
        return message, severity, chain + tuple(
            CHAIN["outside-contract.witness"].format(witness=w, sizes=declared_text(model, o))
            for w, o in zip(witnesses, outside) if o)
    sizes = declared_text(model, [pair for pairs in outside for pair in pairs])
    lower = lowered(severity)
    note = CHAIN["outside-contract.message"].format(sizes=sizes)
    line = CHAIN["outside-contract" if lower != severity else "outside-contract.kept"].format(
        sizes=sizes, was=severity, now=lower)
    # The headline says it too (`outside_contract`).
    return extended(message, note, outside_contract=sizes), lower, chain + (line,)


# What `eager_rejects` says for a rule whose witnesses all break a tie eager checks (`Rule.eager_rejects`).
EAGER_REJECTS_TIE = "eager PyTorch rejects dims that must be equal but are not"


def eager_rejects_note(message: str, how: str, severity: Severity,
                   chain: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The detail and the chain say that eager rejects the witness too (`how`): the input is the
    caller's mistake, not a failure of the package (`severity`: what the policy makes of that)."""
    note, line = _eager_words(how, severity)
    return extended(message, note, eager_rejects=how), chain + (line,)


@worded_once
def _eager_words(how: str, severity: Severity) -> tuple[str, str]:
    return CHAIN["eager-rejects.message"].format(how=how), CHAIN["eager-rejects"].format(how=how, now=severity)


def declared_text(model: "Model", pairs) -> str:
    """`x.shape[0] = 1 or 0, declared [2, inf)`, once per dim."""
    by_dim: dict = {}
    for ref, size in pairs:
        by_dim.setdefault(ref, {})[size] = None
    parts = []
    for ref, sizes in by_dim.items():
        dim = model.known_dim(ref)
        parts.append(f"{model.inputs[ref.input].dim_display(ref.dim)} = {' or '.join(map(str, sizes))}, declared "
                     f"{declared_span(dim)}")
    return "; ".join(parts)
