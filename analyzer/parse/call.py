"""One call statement of run_impl: a kernel launch, an extern shim call or a proxy-executor call, as
plain data (the launch reader builds them, the proxy normaliser rewrites them, the wrapper keeps them)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.findings import Location


@dataclass(slots=True)
class Call:
    function: str
    args: tuple[str, ...]          # Python-syntax expressions, one per argument
    arg_names: tuple[str | None, ...]  # buffer/tensor name when the argument is a tensor
    location: Location
    comment: str | None = None
    outputs: tuple[str, ...] = ()  # `&buf1_handle` out-arguments of shim calls -> "buf1"
    checked: bool = True           # False: a shim whose AOTITorchError is discarded
