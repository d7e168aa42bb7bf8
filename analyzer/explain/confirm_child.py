"""One probe of `aoti-lint confirm`, in a process of its own: THIS LOADS AND RUNS A PACKAGE.

    python -m analyzer.explain.confirm_child SPEC_JSON

The spec names the package, the optional exported program (the eager reference, same weights), the
input shapes and dtypes and a seed. The eager reference runs first and its summary is printed (so
that it survives the package killing the process); then the package runs and its comparison with
the reference is printed. Each line is `AOTI-LINT-PROBE <json>`; everything else on stdout/stderr
is torch's. Only `aoti-lint confirm` starts this, never `check`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MARK = "AOTI-LINT-PROBE "


def _say(kind: str, **data: Any) -> None:
    print(MARK + json.dumps({"kind": kind, **data}), flush=True)


def _dtype(torch: Any, name: str | None) -> Any:
    dt = getattr(torch, name or "float32", None)
    return dt if isinstance(dt, torch.dtype) else torch.float32


def _tensor(torch: Any, gen: Any, shape: list[int], dt: Any) -> Any:
    if dt.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float32).to(dt)
    return torch.zeros(shape, dtype=dt)  # indices: 0 is valid for any non-empty table


def _laid_out(torch: Any, gen: Any, shape: list[int], dt: Any, kind: str) -> Any:
    """A tensor of `shape` whose strides are not the contiguous ones (the layouts users pass)."""
    if kind == "transpose" and len(shape) >= 2:
        return _tensor(torch, gen, [*shape[:-2], shape[-1], shape[-2]], dt).transpose(-1, -2)
    if kind == "pad-last" and shape:
        return _tensor(torch, gen, [*shape[:-1], 2 * shape[-1]], dt)[..., :shape[-1]]
    if kind == "step" and shape:
        return _tensor(torch, gen, [2 * shape[0], *shape[1:]], dt)[::2]
    if kind == "channels_last" and len(shape) == 4:
        return _tensor(torch, gen, shape, dt).contiguous(memory_format=torch.channels_last)
    return _tensor(torch, gen, shape, dt)


def _inputs(torch: Any, spec: dict[str, Any]) -> list[Any]:
    gen = torch.Generator().manual_seed(int(spec.get("seed", 0)))
    device = spec.get("device") or "cpu"
    layouts = {int(i): (str(kind), dtype) for i, kind, dtype in spec.get("layouts") or []}
    out = []
    for index, (shape, dtype) in enumerate(zip(spec["shapes"], spec["dtypes"])):
        kind, other = layouts.get(index, ("", None))
        t = _laid_out(torch, gen, shape, _dtype(torch, other or dtype), kind)
        out.append(t.to(device))
    return out


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat(v)]
    return [value]


def _summary(torch: Any, outputs: list[Any]) -> dict[str, Any]:
    tensors = [t for t in outputs if isinstance(t, torch.Tensor)]
    floats = [t for t in tensors if t.is_floating_point() and t.numel()]
    return {"shapes": [list(t.shape) for t in tensors], "numel": int(sum(t.numel() for t in tensors)),
            "nan": int(sum(int(torch.isnan(t).sum()) for t in floats)),
            "inf": int(sum(int(torch.isinf(t).sum()) for t in floats))}


def _unguarded(ep: Any) -> Any:
    """The exported program as eager code: without the guards of its declared ranges, which would
    reject exactly the sizes the probes try (torch >= 2.9 takes check_guards)."""
    import inspect

    if "check_guards" in inspect.signature(ep.module).parameters:
        return ep.module(check_guards=False)
    module = ep.module()
    module._forward_pre_hooks.clear()  # older releases check the inputs in a pre-hook
    return module


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:500] if text else ''}"


def main(spec_text: str) -> int:
    spec = json.loads(spec_text)
    if spec.get("max_memory"):  # before torch loads (the parent cannot set it safely from a thread)
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (spec["max_memory"], spec["max_memory"]))
    import torch

    torch.manual_seed(0)
    args = _inputs(torch, spec)
    reference = None
    if spec.get("exported_program"):
        try:
            module = _unguarded(torch.export.load(spec["exported_program"]))
            with torch.no_grad():
                # The reference sees the same values, contiguous and in the compiled dtype: what the
                # caller meant, whatever layout the package is handed.
                wanted = [_dtype(torch, d) for d in spec["dtypes"]]
                reference = _flat(module(*[a.contiguous().to(w) for a, w in zip(args, wanted)]))
            _say("eager", ok=True, **_summary(torch, reference))
        except Exception as exc:  # noqa: BLE001 - eager rejecting the input is an answer
            _say("eager", ok=False, error=_first_line(exc))
    runner = torch._inductor.aoti_load_package(spec["package"])
    try:
        with torch.no_grad():
            outputs = _flat(runner(*args))
    except Exception as exc:  # noqa: BLE001
        _say("package", ok=False, error=_first_line(exc))
        return 0
    if spec.get("device") == "cuda":
        torch.cuda.synchronize()  # a device assert surfaces here, not at the launch
    result: dict[str, Any] = {"ok": True, **_summary(torch, outputs)}
    if reference is not None:
        pairs = [(a, b) for a, b in zip(outputs, reference)
                 if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)]
        result["shape_mismatch"] = len(outputs) != len(reference) or any(a.shape != b.shape for a, b in pairs)
        diffs = [float((a.double().cpu() - b.double().cpu()).abs().nan_to_num(0.0).max())
                 for a, b in pairs if a.shape == b.shape and a.numel() and a.is_floating_point()]
        result["max_abs_diff"] = max(diffs, default=0.0)
        result["close"] = not result["shape_mismatch"] and all(
            torch.allclose(a.cpu(), b.cpu(), rtol=1e-3, atol=1e-3, equal_nan=True)
            for a, b in pairs if a.shape == b.shape)
    _say("package", **result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
