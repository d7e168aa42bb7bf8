"""bench/bench.py's second floor (`--triton-floor`) parses every Triton kernel a CUDA wrapper embeds:
its pattern finds each kernel the analyzer reads, and each source it cuts out parses alone."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import zipfile

import pytest

from analyzer.app import api

from conftest import FIXTURES, REPO

_spec = importlib.util.spec_from_file_location("aoti_lint_bench", REPO / "bench" / "bench.py")
assert _spec is not None and _spec.loader is not None
bench = sys.modules["aoti_lint_bench"] = importlib.util.module_from_spec(_spec)  # its dataclasses look it up
_spec.loader.exec_module(bench)

# A third of the CUDA packages (every model family is among them), the two large ones included.
CUDA = sorted({str(p.relative_to(FIXTURES)) for p in sorted(FIXTURES.rglob("*.cuda*.pt2"))[::3]}
              | {"large/gpt2_48.cuda.stripped.pt2", "large/bert_24.cuda.stripped.pt2"})


@pytest.mark.parametrize("name", CUDA)
def test_the_triton_floor_parses_each_kernel_the_analyzer_reads(name: str) -> None:
    path = FIXTURES / name
    embedded = re.compile(bench.EMBEDDED_TRITON, re.S)
    found = []
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            if member.endswith(".cpp"):
                for m in embedded.finditer(z.read(member).decode("utf-8", "replace")):
                    lines = m.group(1).split("\n")
                    cut = len(lines[0]) - len(lines[0].lstrip(" "))
                    tree = ast.parse("\n".join(line[cut:] for line in lines))
                    found.append(next(n.name for n in reversed(tree.body) if isinstance(n, ast.FunctionDef)))
    (model,) = api.load(str(path)).models
    triton = sorted(k.name for k in model.kernels.values() if k.kind == "triton")
    assert triton and sorted(found) == triton


def test_the_triton_floor_runs() -> None:
    path = FIXTURES / "small_transformer.cuda.stripped.pt2"
    out = subprocess.run([sys.executable, "-c", bench.TRITON_FLOOR + "\nprint('parsed')\n", str(path),
                          bench.EMBEDDED_TRITON], capture_output=True, text=True, check=True)
    assert out.stdout == "parsed\n"
