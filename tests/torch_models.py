"""Small models compiled fresh by the torch tests (the committed fixtures come from
fixtures/generate.py; these catch codegen drift in the installed torch).

Each entry: name -> (module factory, example args, dynamic_shapes factory). Imported only when torch
is available.
"""

from __future__ import annotations

import torch
from torch.export import Dim


class Gather(torch.nn.Module):
    def forward(self, x, idx):
        return x[idx] * 2


class PosEmbedding(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pe = torch.nn.Embedding(512, 16)

    def forward(self, x):
        return x + self.pe(torch.arange(x.shape[1], device=x.device))


class EmptyReduce(torch.nn.Module):
    def forward(self, x):
        return x.amax(dim=0) + x.mean(dim=0)


class GatherSum(torch.nn.Module):
    def forward(self, x, idx):
        return x[idx] * 2 + x.sum(0)


class IndexPut(torch.nn.Module):
    def forward(self, x, idx, v):
        return x.index_put((idx,), v)


def specs():
    n, m, seq = Dim("n"), Dim("m"), Dim("seq")
    return {
        "gather_dyn": (Gather, (torch.randn(6, 8), torch.tensor([0, 2, 5])), ({0: n}, {0: m})),
        "pos_embedding": (PosEmbedding, (torch.randn(2, 10, 16),), ({1: seq},)),
        "empty_reduce": (EmptyReduce, (torch.randn(6, 5),), ({0: n},)),
        "gather_sum": (GatherSum, (torch.randn(6, 8), torch.tensor([0, 2, 5])), ({0: n}, {0: m})),
        "index_put": (IndexPut, (torch.randn(6, 8), torch.tensor([0, 2, 5]), torch.randn(3, 8)),
                      ({0: n}, {0: m}, {0: m})),
    }


def compile_package(name: str, out_dir) -> str:
    """aoti_compile_and_package one model for CPU; returns the .pt2 path."""
    factory, args, dynamic = specs()[name]
    ep = torch.export.export(factory().eval(), args, dynamic_shapes=dynamic)
    torch.export.save(ep, str(out_dir / f"{name}.ep.pt2"))  # the eager reference of `confirm`
    path = str(out_dir / f"{name}.cpu.pt2")
    torch._inductor.aoti_compile_and_package(ep, package_path=path)
    return path


# Runs in a child process: some CPU index failures abort the process (c10::Error thrown from an
# OpenMP region), so the parent only reads the exit status and output.
RUNNER = r"""
import sys, json, torch
path, spec = sys.argv[1], json.loads(sys.argv[2])
runner = torch._inductor.aoti_load_package(path)
args = []
for shape, dtype, fill in spec:
    if dtype == "int64" and fill == "arange":
        args.append(torch.arange(shape[0], dtype=torch.int64))
    elif dtype == "int64":
        args.append(torch.full(shape, fill, dtype=torch.int64))
    else:
        args.append(torch.randn(shape))
try:
    out = runner(*args)
except Exception as exc:
    print("EXCEPTION", type(exc).__name__, str(exc).replace("\n", " | "), flush=True)
    sys.exit(3)
out = out[0] if isinstance(out, (list, tuple)) else out
print("OK", json.dumps({"nan": bool(torch.isnan(out).any()), "inf": bool(torch.isinf(out).any()),
                        "shape": list(out.shape)}), flush=True)
"""


def run_package(path: str, inputs, env=None, timeout: float = 120.0):
    """Run a CPU package on inputs [(shape, dtype, fill)] in a subprocess -> CompletedProcess."""
    import json
    import os
    import subprocess
    import sys

    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", RUNNER, path, json.dumps(inputs)], capture_output=True,
                          text=True, timeout=timeout, env=full_env)
