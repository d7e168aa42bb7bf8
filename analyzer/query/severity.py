"""Severity from consequence: the one place that turns what a finding can show into its severity.

A gate that fails every healthy model gets switched off, so a finding is only as severe as the
consequence the analyzer can show for it:

- **error**: a witness inside the declared contract (or with no contract at all) reaches an
  operation that crashes, asserts or returns wrong values, and the finding names that operation;
- **warning**: the same, but only outside the declared contract (a size the exported program
  excludes, a max only `AOTI_RUNTIME_CHECK_INPUTS=1` checks); or a silent misbehaviour the analyzer
  cannot tie to one operation;
- **info**: an assumption the package does not check whose breaking has no consequence the analyzer
  knows; and any finding whose witness eager PyTorch rejects the same way (an index value the witness
  makes invalid, dims that must be equal made unequal): that is the caller's input, not the package.

Rules declare the consequence and the operation they tie to (`Rule.consequence`, `Rule.op`); the
facts a finding adds (outside the contract, eager rejects it too) are weighed here, nowhere else.
"""

from __future__ import annotations

import enum

from ..core.findings import Severity


class Consequence(enum.Enum):
    """What breaking a finding's assumption does, as far as the analyzer can show."""

    FAILS = "fails"        # the witness reaches an operation that crashes, asserts or returns wrong values
    SILENT = "silent"      # a silent misbehaviour (NaN, an identity, a partial output) not tied to one op
    ASSUMED = "assumed"    # an unchecked assumption with no known consequence


def severity_of(consequence: Consequence, *, op: str | None = None, outside_contract: bool = False,
                eager_rejects: bool = False) -> Severity:
    """The severity of a finding: `op` is the operation its witness reaches (None: it names none),
    `outside_contract` whether every witness lies outside the declared contract, `eager_rejects`
    whether eager PyTorch rejects the witness in the same way (a catchable error where the package
    raises or asserts; not where the package kills the process or returns values)."""
    if consequence is Consequence.ASSUMED or eager_rejects:
        return Severity.INFO
    base = Severity.ERROR if consequence is Consequence.FAILS and op else Severity.WARNING
    return lowered(base) if outside_contract else base


def lowered(severity: Severity) -> Severity:
    """One step down (error -> warning -> info): a witness outside the declared contract."""
    return Severity(max(Severity.INFO, severity - 1))


# How a failing check ends, from analyzer.rules.bounds.outcome: whether it is no worse than eager's
# own rejection of the same input. A CPU check inside an OpenMP region aborts the process where eager
# raises a catchable error; a check that raises (CPU) or a device assert (CUDA, where eager's own
# index check of the same lookup asserts too) ends as eager does.
_LIKE_EAGER = frozenset({"cpu.raise", "cuda", "cpu", "unknown"})


def fails_like_eager(outcome: str) -> bool:
    """Whether a failed index check with this outcome ends no worse than eager's error."""
    return outcome in _LIKE_EAGER
