"""CUDA compute capabilities: the one parser for `--target-sm`, `target-sm` and the package's
`AOTI_COMPUTE_CAPABILITY` ("90", "90a", "sm_90", "compute_90", "8.6", 90)."""

from __future__ import annotations

import re

_SM = re.compile(r"^(?:sm_?|compute_)?(\d{1,2})(\d)([a-z]?)$")
_SM_DOTTED = re.compile(r"^(\d{1,2})\.(\d)([a-z]?)$")

Capability = tuple[int, int, str]   # (major, minor, suffix): (9, 0, "a") for sm_90a


def parse_sm(value: object) -> Capability | None:
    """(major, minor, suffix) from "90", "90a", "sm_90", "8.6", 90; None when not a compute capability."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    text = str(value).strip().lower()
    match = _SM.match(text) or _SM_DOTTED.match(text)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), match.group(3)


def sm_text(sm: Capability) -> str:
    """`90a`: the digits (and suffix) as `--target-sm` and `sm_*` spell them."""
    return f"{sm[0]}{sm[1]}{sm[2]}"


def cc_text(sm: Capability) -> str:
    """`9.0`: the dotted form."""
    return f"{sm[0]}.{sm[1]}"
