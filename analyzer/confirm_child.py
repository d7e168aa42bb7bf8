"""One probe of `aoti-lint confirm`, in a process of its own: THIS LOADS AND RUNS A PACKAGE.

    python -m analyzer.confirm_child SPEC_JSON

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


def _inputs(torch: Any, spec: dict[str, Any]) -> list[Any]:
    gen = torch.Generator().manual_seed(int(spec.get("seed", 0)))
    device = spec.get("device") or "cpu"
    out = []
    for shape, dtype in zip(spec["shapes"], spec["dtypes"]):
        dt = getattr(torch, dtype or "float32", None)
        if not isinstance(dt, torch.dtype):
            dt = torch.float32
        if dt.is_floating_point:
            t = torch.randn(shape, generator=gen, dtype=torch.float32).to(dt)
        else:  # indices: 0 is valid for any non-empty table, so only the shapes are on trial
            t = torch.zeros(shape, dtype=dt)
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:500] if text else ''}"


def main(spec_text: str) -> int:
    spec = json.loads(spec_text)
    import torch

    torch.manual_seed(0)
    args = _inputs(torch, spec)
    reference = None
    if spec.get("exported_program"):
        try:
            module = torch.export.load(spec["exported_program"]).module()
            with torch.no_grad():
                reference = _flat(module(*[a.clone() for a in args]))
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
