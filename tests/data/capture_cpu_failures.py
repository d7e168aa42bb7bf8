"""Regenerate the CPU failure logs in this folder (needs torch; the tests themselves do not).

    python tests/data/capture_cpu_failures.py [--keep-packages DIR]

Builds small AOTI CPU packages with the installed torch (about 10 s each), runs each failing case in
a subprocess and saves its stderr verbatim as `cpu-*.log`. The runs are subprocesses because an
exception escaping an OpenMP region aborts the whole interpreter.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

BUILD = r'''
import sys, torch
from torch.export import Dim
out = sys.argv[1]

class Gather(torch.nn.Module):
    def forward(self, x, idx):
        return x[idx] * 2

class Emb(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 16)
    def forward(self, idx):
        return self.emb(idx).sum(-1)

dyn = {"x": {0: Dim("n")}, "idx": {0: Dim("m")}}
ep = torch.export.export(Gather(), (torch.randn(10, 8), torch.tensor([0, 1, 2])), dynamic_shapes=dyn)
torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/gather_dyn.cpu.pt2")
torch.export.save(ep, f"{out}/gather_dyn.ep.pt2")
ep = torch.export.export(Gather(), (torch.randn(10, 8), torch.tensor([0, 1, 2, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/gather_static.cpu.pt2")
ep = torch.export.export(Emb(), (torch.tensor([1, 2, 3]),), dynamic_shapes={"idx": {0: Dim("bt")}})
torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/embedding.cpu.pt2")
# Large example inputs make Inductor emit `#pragma omp parallel`: a failing check inside the
# parallel region cannot propagate and ends in std::terminate (the abort form).
ep = torch.export.export(Gather(), (torch.randn(10000, 64), torch.zeros(100000, dtype=torch.int64)),
                         dynamic_shapes=dyn)
torch._inductor.aoti_compile_and_package(ep, package_path=f"{out}/gather_omp.cpu.pt2")
'''

RUN = r'''
import sys, torch
m = torch._inductor.aoti_load_package(sys.argv[1])
out = m(*eval(sys.argv[2], {"torch": torch}))
print("OK", tuple(out.shape))
'''

# (log name, package, inputs, extra environment)
CASES = [
    ("cpu-gather-empty.log", "gather_dyn", "(torch.randn(0, 8), torch.tensor([0, 0, 0]))", {}),
    ("cpu-gather-static-oob.log", "gather_static", "(torch.randn(10, 8), torch.tensor([12, 0, 1, 2]))", {}),
    ("cpu-embedding-oob.log", "embedding", "(torch.tensor([100, 1]),)", {}),
    ("cpu-abort-omp.log", "gather_omp", "(torch.randn(0, 64), torch.zeros(1000, dtype=torch.int64))",
     {"OMP_NUM_THREADS": "1"}),
    ("cpu-check-too-small.log", "gather_dyn", "(torch.randn(0, 8), torch.tensor([0, 0, 0]))",
     {"AOTI_RUNTIME_CHECK_INPUTS": "1"}),
    ("cpu-check-dtype.log", "gather_dyn", "(torch.randn(10, 8).double(), torch.tensor([0, 0, 0]))",
     {"AOTI_RUNTIME_CHECK_INPUTS": "1"}),
    ("cpu-check-dim.log", "gather_dyn", "(torch.randn(10, 9), torch.tensor([0, 0, 0]))",
     {"AOTI_RUNTIME_CHECK_INPUTS": "1"}),
    ("cpu-check-stride.log", "gather_dyn", "(torch.randn(8, 10).t(), torch.tensor([0, 0, 0]))",
     {"AOTI_RUNTIME_CHECK_INPUTS": "1"}),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep-packages", help="build into this folder and keep the packages")
    args = parser.parse_args()
    work = Path(args.keep_packages or tempfile.mkdtemp(prefix="aoti-lint-capture-"))
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", BUILD, str(work)], check=True)
    for log_name, package, inputs, extra in CASES:
        env = {**os.environ, **extra}
        proc = subprocess.run([sys.executable, "-c", RUN, str(work / f"{package}.cpu.pt2"), inputs],
                              env=env, capture_output=True, text=True, timeout=300)
        # Drop torch's unrelated import-time NumPy warning; keep everything else verbatim.
        lines = [line for line in proc.stderr.splitlines(keepends=True)
                 if "Failed to initialize NumPy" not in line and "_conversion_method_template" not in line]
        (HERE / log_name).write_text("".join(lines))
        print(f"{log_name}: exit {proc.returncode}")


if __name__ == "__main__":
    main()
